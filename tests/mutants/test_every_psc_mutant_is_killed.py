"""Every mutant of the Pi Session Continuity reference is killed by the scenarios of its rules.

The blitz mutants are judged this way in every run of the test command
(``tests/blitz/test_blitz_exploration_and_mutants.py``); the PSC mutants were judged only by
``pi-continuity-harness mutants`` (CI runs a sample of 29). ``reread_trusts_memory`` (P3d)
survived the suite unnoticed until an audit ran them all (4 December 2026). Here each of the 267
runs, as the kill matrix runs it (``mutants.matrix.suite_tags``: the scenarios of its rules), in
batches of 48 to a pytest session (``features.suite.run_batch``).

A PSC mutant changes reference modules at every load and :func:`~pi_continuity_harness.mutants.
pristine.from_pristine` puts them back before the next load, so mutants sharing a session are
judged apart. After each batch the reference is reset to what it was and checked
(``pristine.changed_since``): the tests after these see the reference as shipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import SuiteRun, SuiteUsageError, run_batch
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.matrix import SAMPLE_RULES
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference

NAMES = sorted(name for name, mutant in MUTANTS.items() if mutant.reference == "reference")
#: Mutants judged in one pytest session (see the blitz kill test's ``BATCH``).
BATCH = 48
#: As the blitz kill test: only failed scenarios' records, and a budget that stops a runaway
#: mutant in seconds (the whole PSC suite passes for the reference at 10,000 host operations).
MUTANT_RUN_ARGS = ["--observation-records", "failed", "--budget-ops", "10000"]
KILL_TEST = "test_the_scenarios_of_its_rules_kill_the_psc_mutant"


def _rule_tags(name: str) -> list[str]:
    mutant = MUTANTS[name]
    rules = dict.fromkeys([*mutant.rules, *SAMPLE_RULES.get(mutant.reference, ())])
    return [f"rule-{rule}" for rule in rules]


class _Kills:
    """Each mutant's run of the scenarios of its rules, made a batch at a time on first need."""

    def __init__(self, session: pytest.Session, work: Path) -> None:
        self.order = [
            str(item.callspec.params["name"])
            for item in session.items
            if isinstance(item, pytest.Function) and item.originalname == KILL_TEST
        ]
        self.work = work
        self.runs: dict[str, SuiteRun | SuiteUsageError] = {}

    def __getitem__(self, name: str) -> SuiteRun | SuiteUsageError:
        if name not in self.runs:
            start = self.order.index(name) if name in self.order else len(self.order)
            batch = [name, *[n for n in self.order[start + 1 :] if n not in self.runs][: BATCH - 1]]
            runs = {n: (MUTANTS[n].spec, _rule_tags(n)) for n in batch}
            before = reference_snapshot()
            try:
                self.runs.update(
                    run_batch(runs, workdir=self.work / f"batch-{len(self.runs)}", extra_args=MUTANT_RUN_ARGS)
                )
            finally:
                reset_reference()
            leaked = changed_since(before)
            assert not leaked, f"the reference is not as shipped after the batch {batch}: {leaked}"
        return self.runs[name]


@pytest.fixture(scope="module")
def kills(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> _Kills:
    return _Kills(request.session, tmp_path_factory.mktemp("psc-kills"))


def test_every_psc_mutant_is_judged_here() -> None:
    """The blitz kill test judges the blitz mutants; these are all the others, each with rules."""
    assert NAMES and len(NAMES) + len(BLITZ_MUTANTS) == len(MUTANTS)
    assert all(MUTANTS[name].rules for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_scenarios_of_its_rules_kill_the_psc_mutant(kills: _Kills, name: str) -> None:
    mutant = MUTANTS[name]
    run = kills[name]
    if isinstance(run, SuiteUsageError):
        pytest.fail(f"{name}: {run}")
    assert run.results, f"{name}: no scenario proves {mutant.rules}"
    failed = [r for r in run.results if r.status in ("failed", "error")]
    assert failed, f"{name} ({mutant.rule}) survived the scenarios of its rules"
