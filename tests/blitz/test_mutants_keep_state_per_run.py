"""A mutant's state lives in one simulated Pi process, a run: never across the runs an explorer
worker makes in one Python process, or a seed's verdict would depend on the seeds before it."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.explore.blitz import PLUGIN
from pi_continuity_harness.explore.runner import CaseResult, run_case
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS

STEPS = 40


def _run(seed: int, workdir: Path) -> CaseResult:
    spec = BLITZ_MUTANTS["blitz_request_survives_reload"].spec
    return run_case(PLUGIN, PLUGIN.case(seed, STEPS), implementation=spec, workdir=workdir, requests=False)


def test_a_request_carried_across_a_reload_stays_in_its_run(tmp_path: Path) -> None:
    """H80a's mutant keeps the active request where a TypeScript extension would keep it across
    a reload, in the Pi process. Kept in a class attribute, seed 3's request reached seed 4's run
    when seed 3 ran first in the same Python process: seed 4's ``/sh start`` was refused at
    trace seq 76 instead of 165, and at 92 when seed 4 ran twice."""
    first = _run(4, tmp_path / "a")
    _run(3, tmp_path / "b")
    again = _run(4, tmp_path / "c")
    assert [(v.invariant, v.message) for v in again.violations] == [
        (v.invariant, v.message) for v in first.violations
    ]
    assert again.records == first.records
    assert first.violations, "seed 4 no longer shows the carried request"
