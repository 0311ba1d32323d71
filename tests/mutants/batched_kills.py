"""Mutants judged a batch at a time (``features.suite.run_batch``), for the kill tests of both
references (``tests/blitz/test_blitz_exploration_and_mutants.py``,
``tests/mutants/test_every_psc_mutant_is_killed.py``).

Every pytest session collects the whole suite and reads the step library again: three quarters
of a mutant's CPU time when each had its own session. A batch is the mutants this process runs
next, so a test selected alone (``-k``) runs alone, and a pytest-xdist worker that gets only some
of the tests runs no others.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import SuiteRun, SuiteUsageError, run_batch
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference

#: Mutants judged in one pytest session.
BATCH = 48
#: Only failed scenarios' records, and a budget that stops a runaway mutant in seconds: a mutant
#: that loops (blitz_reminder_repeats: a reminder at every turn end, each answered by the model)
#: ran to the default 50,000 host operations, quadratic in its growing history, 218 s of the test
#: command. Both suites pass for their references at 10,000 (blitz's longest, a chain of 25
#: sessions, fails at 5,000).
MUTANT_RUN_ARGS = ["--observation-records", "failed", "--budget-ops", "10000"]


class BatchedKills:
    """Each mutant's run of the scenarios of its rules (``runs_of(name)``: its implementation spec
    and tags), made a batch at a time on first need, for the parametrized test ``kill_test``.

    ``reset``: put the reference back after each batch (a PSC mutant changes reference modules at
    every load and ``pristine.from_pristine`` puts them back only before the next load); without
    it the batch must leave the reference as it found it (a blitz mutant restores what it
    patched). Either way the reference is then checked (``pristine.changed_since``): a verdict
    counts only if no mutant left it changed for the runs after it.
    """

    def __init__(
        self,
        session: pytest.Session,
        work: Path,
        kill_test: str,
        runs_of: Callable[[str], tuple[str, list[str]]],
        *,
        reset: bool,
    ) -> None:
        # The mutants of this test in the order this process runs them (its items after
        # selection; a pytest-xdist worker runs a subset of its items, in this order).
        self.order = [
            str(item.callspec.params["name"])
            for item in session.items
            if isinstance(item, pytest.Function) and item.originalname == kill_test
        ]
        self.work = work
        self.runs_of = runs_of
        self.reset = reset
        self.runs: dict[str, SuiteRun | SuiteUsageError] = {}

    def __getitem__(self, name: str) -> SuiteRun | SuiteUsageError:
        if name not in self.runs:
            start = self.order.index(name) if name in self.order else len(self.order)
            batch = [name, *[n for n in self.order[start + 1 :] if n not in self.runs][: BATCH - 1]]
            runs = {n: self.runs_of(n) for n in batch}
            before = reference_snapshot()
            try:
                self.runs.update(
                    run_batch(
                        runs,
                        workdir=self.work / f"batch-{len(self.runs)}",
                        extra_args=MUTANT_RUN_ARGS,
                        first_failure=True,
                    )
                )
            finally:
                if self.reset:
                    reset_reference()
            leaked = changed_since(before)
            assert not leaked, f"a mutant of the batch {batch} left the reference changed: {leaked}"
        return self.runs[name]


def assert_killed(kills: BatchedKills, name: str, rules: tuple[str, ...]) -> None:
    """The verdict of both kill tests: mutant ``name`` (of ``rules``) loaded, ran at least one
    scenario, and at least one failed."""
    run = kills[name]
    if isinstance(run, SuiteUsageError):
        pytest.fail(f"{name}: {run}")
    assert run.results, f"{name}: no scenario proves {rules}"
    failed = [r for r in run.results if r.status in ("failed", "error")]
    assert failed, f"{name} ({', '.join(rules)}) survived the scenarios of its rules"
