"""``pi-continuity-harness compare`` end to end on a small selection of the suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi


def test_compare_finds_every_comparable_scenario_identical(
    pi_installation: PiInstallation, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "compare.json"
    selection = "singleflight or reloadstaleisinert or print"
    code = main(["compare", "-k", selection, "--workdir", str(tmp_path / "runs"), "--json", str(report_path)])
    out = capsys.readouterr().out
    report = json.loads(report_path.read_text(encoding="utf-8"))
    summary = report["summary"]
    assert code == 0, out
    assert summary["compared"] == 2 and summary["not_comparable"] == 1  # print mode: simulator only
    assert summary["identical"] == summary["compared"]
    assert summary["explained_differences"] == 0 and summary["unexplained_differences"] == 0
    assert summary["outcome_differences"] == 0
    assert summary["median_time_ratio"] > 1
    assert "no unexplained difference" in out
    assert report["known_differences"] == []  # no path-lengths band, no entry at all
    assert {u["id"] for u in report["uncompared"]} >= {"wall-clock", "random-ids"}
    assert (tmp_path / "runs" / "sim").is_dir() and (tmp_path / "runs" / "pi").is_dir()
