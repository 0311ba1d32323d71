"""The blitz invariants real Pi lets be observed (``explore --target pi``) on observed runs.

``blitz.observed`` runs ``finish_only_with_returned_id``, ``settings_file_valid`` and
``dossier_retained_when_deletion_off`` on what a real Pi process shows (the session files, the
live session's entries, the files under the handoff directory) through ``_Observed``, a
:class:`~pi_continuity_harness.explore.blitz.invariants.RunReading` as the simulator's ``_Run`` is
one. Here the observations are made of simulated runs (the host's directories and live session,
what the real-Pi target's ``observe()`` reads of Pi), checked after every operation as
``run_checked`` does, and compared with the simulator's checker on the same run. Before the
reading became one protocol, ``dossier_retained_when_deletion_off`` raised ``AttributeError``
('_Observed' object has no attribute 'once') on every observed run whose config turns
``deleteHandoffAfterReading`` off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_continuity_harness.explore.blitz import OBSERVED_INVARIANTS, PLUGIN, observed_checker
from pi_continuity_harness.explore.blitz.generate import GET
from pi_continuity_harness.explore.blitz.invariants import (
    BLITZ_INVARIANTS,
    BlitzChecker,
    _Run,
    _settings,
    _submitted_dossiers,
    dossier_named_after_source_session,
)
from pi_continuity_harness.explore.blitz.observed import _Observed
from pi_continuity_harness.explore.observed import ObservedRun
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.targets.target import Observation

STEPS = 40
OBSERVED = [invariant.name for invariant in OBSERVED_INVARIANTS]

#: Seed 7 (40 steps) writes a config with ``deleteHandoffAfterReading`` false and submits a
#: dossier with the reference implementation: the path of ``dossier_retained_when_deletion_off``
#: that crashed on an observed run.
RETAINED_SEED = 7


def _observation(simulation: Simulation) -> Observation:
    """What the real-Pi target observes of a run, made of the simulated run's host: its
    directories, the live session's file and entries (Pi's ``get_entries``)."""
    host = simulation.host
    live = host.runtime.session_manager if host.runtime is not None else None
    session_file = live.get_session_file() if live is not None else None
    return Observation(
        target="sim",
        project_dir=Path(host.paths.project_dir),
        agent_dir=Path(host.paths.agent_dir),
        session_dir=Path(host.paths.session_dir),
        session_file=Path(session_file) if session_file else None,
        entries=list(live.get_entries()) if live is not None else [],
    )


@contextlib.contextmanager
def _ran(seed: int, tmp_path: Path) -> Iterator[Simulation]:
    """The reference's explored run of ``seed`` (40 steps), every operation performed, open until
    the block ends."""
    case = PLUGIN.case(seed, STEPS)
    simulation = Simulation(
        case.scenario(operations=case.operations), workdir=tmp_path / "run", implementation="blitz"
    )
    try:
        simulation.start()
        for op in case.operations:
            simulation.perform(op)
        yield simulation
    finally:
        simulation.finish(requests=False, trace=False)


class _Both:
    """One explored run, checked both ways: the simulator's checker after every operation, and
    the observed invariants on the observations after every operation (``run_checked``); at the
    end, each observed invariant on the last observation, and the trace invariant of the same
    name on the simulator's reading of the run (``_Run``); with ``submitted``, the dossiers the
    observed reading finds submitted."""

    def __init__(self, tmp_path: Path, seed: int, implementation: str, *, submitted: bool = False) -> None:
        case = PLUGIN.case(seed, STEPS)
        scenario = case.scenario(operations=case.operations)
        simulation = Simulation(scenario, workdir=tmp_path / "run", implementation=implementation)
        checker = BlitzChecker(simulation)
        observed = observed_checker(simulation.result.scenario)
        self.observed_found: list[tuple[str, str]] = []
        try:
            simulation.start()
            self.observed_found += observed.after_operation(_observation(simulation))
            for op in case.operations:
                checker.before_operation(op)
                simulation.perform(op)
                checker.after_operation()
                self.observed_found += observed.after_operation(_observation(simulation), op)
            checker.finish()
            self.settings = checker.settings
            run = ObservedRun(simulation.result.scenario, _observation(simulation))
            self.observed = {i.name: list(i.check(run)) for i in OBSERVED_INVARIANTS}
            functions = {f.__name__: f for f, _rules in BLITZ_INVARIANTS}
            reading = _Run(simulation, checker.settings)
            self.simulated = {name: list(functions[name](reading, [])) for name in OBSERVED}
            self.submitted = _submitted_dossiers(_Observed(run)) if submitted else set()
        finally:
            simulation.finish(requests=False, trace=False)
        assert checker.harness_errors == []
        self.checker_found = {v.invariant for v in checker.violations}


def test_dossier_retained_when_deletion_off_reads_an_observed_run_with_deletion_off(tmp_path: Path) -> None:
    """H40b on an observed run whose config keeps dossiers: the check reads the submitted
    dossiers (``_submitted_dossiers``, made ``once`` per check) instead of raising, and finds
    what the simulator's checker finds (nothing, with the reference)."""
    both = _Both(tmp_path, RETAINED_SEED, "blitz", submitted=True)
    assert both.settings.get("deleteHandoffAfterReading") is False
    assert both.submitted, "no dossier submitted: the path under test is not taken"
    assert both.observed == both.simulated == {name: [] for name in OBSERVED}
    assert both.observed_found == []
    assert both.checker_found == set()


#: (rule, mutant, a seed (40 steps) where the simulator's checker reports the invariant on it, the
#: observed invariant that must report it too): a planted fault per observed invariant.
PLANTED = [
    ("H29a", "blitz_finish_accepts_foreign_id", 3, "finish_only_with_returned_id"),
    ("H89", "blitz_invalid_setting_saved", 0, "settings_file_valid"),
    ("H40b", "blitz_deletion_setting_ignored", RETAINED_SEED, "dossier_retained_when_deletion_off"),
    ("H46a", "blitz_session_component_keeps_underscore", 3, "recovery_files_named_as_specified"),
    ("H112", "blitz_dossier_named_normalised", 3, "dossier_named_after_source_session"),
]


def test_every_observed_invariant_has_a_planted_fault() -> None:
    assert sorted(invariant for *_rest, invariant in PLANTED) == sorted(OBSERVED)


@pytest.mark.parametrize(("rule", "name", "seed", "invariant"), PLANTED, ids=[p[0] for p in PLANTED])
def test_the_observed_invariant_of_the_rule_fails_on_its_mutant_as_the_simulator_does(
    tmp_path: Path, rule: str, name: str, seed: int, invariant: str
) -> None:
    mutant = BLITZ_MUTANTS[name]
    assert rule in mutant.rules and mutant.invariant == invariant
    assert rule in next(i.rules for i in OBSERVED_INVARIANTS if i.name == invariant)
    both = _Both(tmp_path / "mutant", seed, mutant.spec)
    assert invariant in both.checker_found
    assert both.observed[invariant], f"the observed {invariant} missed {name}"
    assert both.observed == both.simulated
    assert invariant in {found for found, _problem in both.observed_found}
    assert {found for found, _problem in both.observed_found} == both.checker_found & set(OBSERVED)


@pytest.mark.parametrize(("rule", "seed"), [(p[0], p[2]) for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_the_observed_invariants_pass_the_reference_as_the_simulator_does(
    tmp_path: Path, rule: str, seed: int
) -> None:
    """The seeds of :data:`PLANTED` with the reference: nothing found either way."""
    both = _Both(tmp_path, seed, "blitz")
    assert both.observed == both.simulated == {name: [] for name in OBSERVED}
    assert both.observed_found == []
    assert both.checker_found == set()


def test_an_observed_session_file_with_a_line_that_is_no_json_holds_no_entries(tmp_path: Path) -> None:
    """A session file cut in the middle of a line (Pi stopped mid-write) is read as the
    simulator's run reads one (``invariants._lines``): no entries, no harness error. The live
    session's entries come from Pi (``get_entries``), not from its file."""
    with _ran(RETAINED_SEED, tmp_path) as simulation:
        observation = _observation(simulation)
        others = [p for p in sorted(observation.session_dir.glob("*.jsonl")) if p != observation.session_file]
        assert others, "the seed leaves a session besides the live one"
        whole = _Observed(ObservedRun(simulation.result.scenario, observation)).session_entries()
        assert whole[0], "the first other session has entries"
        others[0].write_text(others[0].read_text(encoding="utf-8") + '{"type": "mess', encoding="utf-8")
        cut = _Observed(ObservedRun(simulation.result.scenario, observation)).session_entries()
        assert cut[0] == [] and cut[1:] == whole[1:]


#: Seed 14 (40 steps, the reference) forks a session after a template response: the fork's file
#: starts with a copy of that response, its entry id kept (``createBranchedSession``,
#: session-manager.js:1226-1330), naming the parent's dossier.
FORK_SEED = 14


def test_a_forks_copy_of_a_template_response_may_name_the_parents_dossier(tmp_path: Path) -> None:
    """``dossier_named_after_source_session`` judges a template response once, by its entry id,
    against every session holding it. Judged per session file, the fork's copy was taken for a
    response of the fork, and the reference failed at this seed; both readings now find nothing."""
    with _ran(FORK_SEED, tmp_path) as simulation:
        run = ObservedRun(simulation.result.scenario, _observation(simulation))
        reading = _Observed(run)
        holders: dict[str, set[str | None]] = {}
        for session_id, entries in zip(reading.session_ids(), reading.session_entries(), strict=True):
            for entry in entries:
                message = entry.get("message") or {}
                if message.get("role") == "toolResult" and message.get("toolName") == GET:
                    holders.setdefault(str(entry.get("id")), set()).add(session_id)
        assert any(len(ids) > 1 for ids in holders.values()), "no template response is held by two sessions"
        observed = next(i for i in OBSERVED_INVARIANTS if i.name == "dossier_named_after_source_session")
        assert list(observed.check(run)) == []
        assert list(dossier_named_after_source_session(_Run(simulation, _settings(run.scenario)), [])) == []
