"""The blitz invariants a prefix of the run can break are checked after every operation (issue 16).

Before, every blitz invariant ran once when the run was over: a failing seed ran to its end and
was reported there, with no operation. Now a ``prefix`` invariant (``CHECKED_WHEN``) is reported
by ``after_operation``, right after the operation that broke it, and the explorer stops there.
"""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.explore.blitz import BLITZ_INVARIANTS, PLUGIN
from pi_continuity_harness.explore.blitz.invariants import CHECKED_WHEN, END, PREFIX, BlitzChecker
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.simulator.simulation import Simulation

#: ``blitz_finish_accepts_foreign_id`` (H29a) on this seed (40 steps, 42 operations): the Finish
#: accepted with a foreign ID comes at operation 13; before, the run went on to its 42nd.
SEED, STEPS, BROKEN_AT = 3, 40, 13
MUTANT = "blitz_finish_accepts_foreign_id"
INVARIANT = "finish_only_with_returned_id"


def test_every_invariant_says_when_it_can_be_judged_and_why() -> None:
    names = [invariant.__name__ for invariant, _rules in BLITZ_INVARIANTS]
    assert sorted(CHECKED_WHEN) == sorted(names)
    for name, (when, why) in CHECKED_WHEN.items():
        assert when in (PREFIX, END) and why.strip(), name
    assert CHECKED_WHEN[INVARIANT][0] == PREFIX
    assert CHECKED_WHEN["captured_prompts_kept_in_order"][0] == END


def test_a_prefix_invariant_is_reported_after_the_operation_that_broke_it(tmp_path: Path) -> None:
    case = PLUGIN.case(SEED, STEPS)
    simulation = Simulation(
        case.scenario(operations=case.operations),
        workdir=tmp_path / "m",
        implementation=BLITZ_MUTANTS[MUTANT].spec,
    )
    checker = BlitzChecker(simulation)
    try:
        simulation.start()
        checker.after_operation()
        for index, op in enumerate(case.operations, start=1):
            checker.before_operation(op)
            simulation.perform(op)
            checker.after_operation()
            if index < BROKEN_AT:
                assert checker.ok, (index, checker.violations)
            if not checker.ok:
                break
        # Seen before finish(), with the operation that broke it.
        assert index == BROKEN_AT
        assert [(v.invariant, v.operation) for v in checker.violations] == [(INVARIANT, BROKEN_AT)]
        checker.finish()  # the run checker of a replay goes on to the end: nothing reported twice
        assert [v.invariant for v in checker.violations].count(INVARIANT) == 1
    finally:
        simulation.finish(requests=False, trace=False)


def test_the_explorer_stops_at_that_operation(tmp_path: Path) -> None:
    case = PLUGIN.case(SEED, STEPS)
    result = run_case(
        PLUGIN, case, implementation=BLITZ_MUTANTS[MUTANT].spec, workdir=tmp_path / "m", requests=False
    )
    assert result.first is not None and result.first.invariant == INVARIANT
    assert result.first.operation == result.operations_run == BROKEN_AT < len(case.operations)
