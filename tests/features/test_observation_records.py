"""Which scenarios leave an ``observation.json`` (issue 16: normalising and writing the record was
a quarter of a simulated scenario's CPU time).

A run into a directory the user keeps (``--workdir``, ``compare``, ``run --html``) writes every
scenario's record; a temporary run (``run``, plain pytest without ``--harness-workdir``), removed
unread when it passes, writes only the records of scenarios that failed, which it then keeps for
inspection, and its passing scenarios' ``trace.jsonl`` and ``requests/*.json`` only if it failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pi_continuity_harness.features import SUITE_DIR
from pi_continuity_harness.features.suite import run_suite

#: For the null implementation: one @host scenario that passes, one that fails.
KEYWORD = "the_threshold_is_strict or (status and not during and report and not refused)"


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


def _files(machine: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(machine)): p.read_bytes()
        for p in sorted(machine.rglob("*"))
        if p.is_file() and p.name != "observation.json"
    }


def test_a_failed_temporary_run_keeps_every_file_of_its_passing_scenarios(tmp_path: Path) -> None:
    """A passing scenario's trace.jsonl and requests/*.json wait for the end of a temporary run
    (written only if it failed): the kept directory holds the same files, byte for byte, as a
    kept run's."""
    kept = run_suite(target="sim", extension="null", keyword=KEYWORD, workdir=tmp_path / "runs")
    run = run_suite(target="sim", extension="null", keyword=KEYWORD)
    try:
        assert run.kept and run.workdir is not None
        passing = [r.nodeid.split("::")[-1] for r in run.results if r.status == "passed"]
        assert passing
        for name in passing:
            files = _files(run.workdir / name)
            assert any(path.startswith("requests/") for path in files)
            assert "trace.jsonl" in files
            assert files == _files(tmp_path / "runs" / name)
        assert {r.status for r in kept.results} == {r.status for r in run.results}
    finally:
        if run.workdir is not None:
            shutil.rmtree(run.workdir, ignore_errors=True)


def test_plain_pytest_in_its_own_temporary_directory_writes_only_failed_records(tmp_path: Path) -> None:
    """Without --harness-workdir the plugin's directory is removed when the session passes, so by
    default it writes the records of failed scenarios only, as ``run`` does."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "PCH_SCRATCH": str(scratch)}
    args = [sys.executable, "-m", "pytest", str(SUITE_DIR), "--target", "sim", "--extension", "null"]
    args += ["-k", KEYWORD, "-q", "-p", "no:cacheprovider", "-n", "0"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 1, done.stdout[-2000:]
    (root,) = scratch.iterdir()
    assert len(_observed(root)) == 1  # the failed scenario's
    assert len(list(root.rglob("requests"))) == 2  # both scenarios' requests are kept
