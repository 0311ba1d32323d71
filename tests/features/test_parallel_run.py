"""Issue 16: ``run -n N`` (pytest-xdist) gives the results and reports of a serial run."""

from __future__ import annotations

import json
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
