"""Issue 16: ``run -n N`` (pytest-xdist) gives the results and reports of a serial run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main

pytestmark = pytest.mark.slow

TIMINGS = {"duration_s", "seconds", "duration"}


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _run(tmp_path: Path, name: str, *extra: str) -> dict[str, Path]:
    out = {kind: tmp_path / f"{name}.{kind}" for kind in ("json", "cucumber", "junit")}
    status = main(
        [
            "run", "--tags", "smoke", "-k", "native or settings", "--quiet", "--workdir", str(tmp_path / name),
            "--json", str(out["json"]), "--cucumber", str(out["cucumber"]), "--junit", str(out["junit"]),
            "--report", str(tmp_path / f"{name}-record"), *extra,
        ]
    )  # fmt: skip
    assert status == 0
    return out


def _steps(path: Path) -> list[tuple[str, str, tuple[tuple[str, str, str], ...]]]:
    features = json.loads(path.read_text(encoding="utf-8"))
    return sorted(
        (
            feature["uri"],
            element["name"],
            tuple((s["keyword"], s["name"], s["result"]["status"]) for s in element["steps"]),
        )
        for feature in features
        for element in feature["elements"]
    )


def test_run_n_2_gives_the_serial_runs_results_and_reports(tmp_path: Path) -> None:
    serial = _run(tmp_path, "serial")
    parallel = _run(tmp_path, "parallel", "-n", "2")
    results = [
        _untimed(json.loads(p.read_text(encoding="utf-8"))["results"])
        for p in (serial["json"], parallel["json"])
    ]
    assert len(results[0]) >= 4 and results[0] == results[1]
    assert _steps(serial["cucumber"]) == _steps(parallel["cucumber"]) != []
    for name in ("serial", "parallel"):
        record = json.loads(
            (tmp_path / f"{name}-record" / "validation-record.json").read_text(encoding="utf-8")
        )
        assert record
    junit = [p["junit"].read_text(encoding="utf-8").count("<testcase ") for p in (serial, parallel)]
    assert junit[0] == junit[1] == len(results[0])


#: A copy of the harness that is not the one running: imported, it says so and stops.
OTHER_COPY = 'raise ImportError("the other copy of pi_continuity_harness was imported")\n'


def _run_in(directory: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``pi-continuity-harness run`` as its installed script starts it, in ``directory``: with
    ``-P`` Python does not put the directory first on ``sys.path`` (nor does the script)."""
    command = [sys.executable, "-P", "-m", "pi_continuity_harness.cli", "run", "--tags", "smoke", "-k"]
    return subprocess.run(
        [*command, "native or settings", "--quiet", *extra],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_run_n_2_in_a_checkout_of_another_copy_runs_this_copy_in_its_workers(tmp_path: Path) -> None:
    """The command puts its current directory first on ``sys.path`` (as ``python -m`` does), and
    pytest-xdist's workers take that ``sys.path``: in a worktree or another checkout of the
    harness they imported that copy, and the controller stopped at its first scenario with
    ``assert not crashitem`` (found running a worktree of the harness)."""
    checkout = tmp_path / "checkout"
    (checkout / "pi_continuity_harness").mkdir(parents=True)
    (checkout / "pi_continuity_harness" / "__init__.py").write_text(OTHER_COPY, encoding="utf-8")
    done = _run_in(checkout, "-n", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the other copy" not in done.stdout + done.stderr
    assert "passed" in done.stdout


def run_with_a_broken_session(tmp_path: Path, command: str) -> subprocess.CompletedProcess[str]:
    """``pi-continuity-harness COMMAND --tags smoke --quiet`` in ``tmp_path`` with a pytest plugin
    whose ``pytest_runtestloop`` raises, so pytest ends the session with INTERNALERROR (exit 3)."""
    (tmp_path / "breaks_the_loop.py").write_text(
        "def pytest_runtestloop(session):\n    raise RuntimeError('a plugin broke the session')\n",
        encoding="utf-8",
    )
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-P", "-m", "pi_continuity_harness.cli", command, "--tags", "smoke", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "PYTHONPATH": path, "PYTEST_ADDOPTS": "-p breaks_the_loop"},
    )


def test_an_internal_error_of_pytest_is_named_not_taken_for_an_empty_selection(tmp_path: Path) -> None:
    """pytest's INTERNALERROR (exit 3) left no result, and ``run`` said "no scenario of the suite
    runs for this implementation", a usage error (exit 2) about the user's arguments."""
    done = run_with_a_broken_session(tmp_path, "run")
    assert done.returncode == 1, done.stderr[-3000:]
    assert "a plugin broke the session" in done.stderr
    assert "pytest stopped with an internal error" in done.stderr
    assert "after 0 scenario result(s)" in done.stderr
    assert "no scenario" not in done.stderr
