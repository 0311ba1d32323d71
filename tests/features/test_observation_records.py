"""Which scenarios leave an ``observation.json`` (issue 16: normalising and writing the record was
a quarter of a simulated scenario's CPU time).

A run into a directory the user keeps (``--workdir``, ``compare``, ``run --html``) writes every
scenario's record; a temporary run, removed unread when it passes, writes only the records of
scenarios that failed, which it then keeps for inspection.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pi_continuity_harness.features.suite import run_suite

#: For the null implementation: one @host scenario that passes, one that fails.
KEYWORD = "the_threshold_is_strict or (status and not during and report)"


def _observed(root: Path) -> set[str]:
    return {p.parent.name for p in root.rglob("observation.json")}


def test_a_kept_run_writes_every_scenarios_record(tmp_path: Path) -> None:
    run = run_suite(target="sim", extension="null", keyword=KEYWORD, workdir=tmp_path / "runs")
    assert {r.status for r in run.results} == {"passed", "failed"}
    assert len(_observed(tmp_path / "runs")) == len(run.results)


def test_a_temporary_run_writes_only_the_records_of_failed_scenarios() -> None:
    run = run_suite(target="sim", extension="null", keyword=KEYWORD)
    try:
        assert run.kept and run.workdir is not None
        assert {r.status for r in run.results} == {"passed", "failed"}
        failed = [r for r in run.results if r.status == "failed"]
        assert len(_observed(run.workdir)) == len(failed) >= 1
    finally:
        if run.workdir is not None:
            shutil.rmtree(run.workdir, ignore_errors=True)
