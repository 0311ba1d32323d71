"""``run --allure DIR``: Allure results through allure-pytest-bdd, one per scenario with its
steps, for CI servers with an Allure plugin; refused before the run without the extra."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main

from .conftest import MUTANT, SMALL


def test_allure_results_have_each_scenario_with_its_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "allure"
    code = main(["run", "--extension", MUTANT, "-k", SMALL, "--workdir", str(tmp_path / "w"), "--quiet",
                 "--allure", str(results)])  # fmt: skip
    capsys.readouterr()
    assert code == 1
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(results.glob("*-result.json"))]
    by_name = {r["name"]: r for r in found}
    assert sorted(r["status"] for r in found) == ["failed", "passed", "passed"]
    failed = by_name["compaction-summary-is-disk-brief"]
    assert "the summary is not the Brief on disk" in failed["statusDetails"]["message"]
    states = [s["status"] for s in failed["steps"]]
    assert states[:5] == ["passed"] * 4 + ["failed"] and set(states[5:]) == {"skipped"}
    assert {"name": "feature", "value": "compaction-summary-is-disk-brief"} in failed["labels"]


def test_allure_without_the_extra_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "allure_pytest_bdd", None)
    assert main(["run", "--workdir", str(tmp_path / "w"), "--allure", str(tmp_path / "a")]) == 2
    assert "--allure needs the 'allure' extra" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert main(["run", "--allure", str(tmp_path / "file")]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
