"""``pi-continuity-harness compare`` end to end on a small selection of the suite."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from features.test_parallel_run import run_with_a_broken_session

from pi_continuity_harness.cli import main
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi


def test_compare_finds_every_comparable_scenario_identical(
    pi_installation: PiInstallation, tmp_path: Path, short_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "compare.json"
    selection = "singleflight or reloadstaleisinert or print"
    page = tmp_path / "compare.html"
    code = main(
        ["compare", "-k", selection, "--workdir", str(short_tmp / "runs"), "--json", str(report_path),
         "--html", str(page)]
    )  # fmt: skip
    out = capsys.readouterr().out
    report = json.loads(report_path.read_text(encoding="utf-8"))
    summary = report["summary"]
    assert code == 0, out
    # Print mode runs on the simulator only: every scenario of print-mode-is-read-only (4 since
    # the rules work) is not comparable, and nothing else is.
    uncomparable = {s["assertion"] for s in report["scenarios"] if not s["comparable"]}
    assert summary["compared"] == 2 and summary["not_comparable"] >= 1
    assert uncomparable == {"print-mode-is-read-only"}
    assert summary["identical"] == summary["compared"]
    assert summary["explained_differences"] == 0 and summary["unexplained_differences"] == 0
    assert summary["outcome_differences"] == 0
    assert summary["median_time_ratio"] > 1
    assert "no unexplained difference" in out
    assert report["known_differences"] == []  # no path-lengths band, no entry at all
    assert {u["id"] for u in report["uncompared"]} >= {"wall-clock", "random-ids"}
    assert (short_tmp / "runs" / "sim").is_dir() and (short_tmp / "runs" / "pi").is_dir()
    # The page: both targets' context charts of each compared scenario, and no unexplained channel.
    html = page.read_text(encoding="utf-8")
    # reload-stale-is-inert asks no model (no chart on either side); single-flight has both; a
    # print-mode scenario (simulator only) may have a simulator chart alone.
    sim_charts = set(re.findall(r'<svg[^>]* id="(c\d+)-sim-chart"', html))
    pi_charts = set(re.findall(r'<svg[^>]* id="(c\d+)-pi-chart"', html))
    assert pi_charts and pi_charts <= sim_charts
    assert "no unexplained difference" in html and 'class="channel unexplained"' not in html


def test_compare_without_a_workdir_runs_the_longest_scenario_name_on_real_pi(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The README's ``compare --json compare.json`` (no ``--workdir``): its temporary directory
    leaves room for the suite's longest run directory (80 characters) under ``<it>/pi/``. It
    exited 2 before (``/tmp/pi-continuity-harness-compare-XXXXXXXX/pi`` was one character too
    long). The selection is the scenario whose directory name is longest."""
    monkeypatch.setenv("TMPDIR", "/tmp")
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    longest = "the summary is the disk Brief for every compaction reason"
    code = main(["compare", "--tags", "smoke", "-k", longest, "--json", str(tmp_path / "c.json"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    summary = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))["summary"]
    assert summary["compared"] == 3 and summary["identical"] == 3, summary


def test_compare_names_an_internal_error_of_pytest_and_gives_no_verdict(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    """A pytest session that stops with INTERNALERROR (exit 3) on either target: ``compare`` said
    "no scenario of the suite runs for this implementation" (a usage error, exit 2)."""
    done = run_with_a_broken_session(tmp_path, "compare")
    assert done.returncode == 1, done.stderr[-3000:]
    for target in ("sim", "pi"):
        assert (
            f"after 0 scenario result(s); the run is incomplete and failed (target {target})" in done.stderr
        )
    assert "no scenario" not in done.stderr and "no unexplained difference" not in done.stdout
