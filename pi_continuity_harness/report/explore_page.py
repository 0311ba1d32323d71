"""The page of ``explore``: every seed, failures first, each with its invariant, the replay
command and its minimised scenario (the YAML, the ``.feature``, the chart and the timeline)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from pi_continuity_harness.errors import ReportError
from pi_continuity_harness.report.curve import curve_from_trace
from pi_continuity_harness.report.data import initial_limits, read_jsonl
from pi_continuity_harness.report.templating import render_page
from pi_continuity_harness.report.timeline import timeline_rows
from pi_continuity_harness.report.views import curve_view

__all__ = ["render_explore"]


def _read(path: str | None) -> str | None:
    if not path:
        return None
    file = Path(path)
    return file.read_text(encoding="utf-8", errors="replace") if file.is_file() else None


def _seed(seed: Mapping[str, Any], index: int) -> dict[str, Any]:
    view: dict[str, Any] = {
        "violation": None,
        "harness_errors": [],
        "minimised": None,
        "determinism": None,
        **seed,
        "anchor": f"seed-{seed.get('seed')}",
        "files": {},
        "chart": None,
        "timeline": None,
        "problems": [],
    }
    minimised = seed.get("minimised")
    if not isinstance(minimised, Mapping):
        return view
    files = {key: _read(str(minimised.get(key) or "")) for key in ("yaml", "feature")}
    view["files"] = files
    scenario: Any = None
    if files["yaml"]:
        try:
            scenario = yaml.safe_load(files["yaml"])
        except yaml.YAMLError:
            scenario = None
    trace_path = Path(str(minimised.get("trace") or ""))
    if trace_path.is_file():
        try:
            trace = read_jsonl(trace_path)
        except ReportError as error:
            view["problems"].append(str(error))
        else:
            limits = initial_limits(None, scenario if isinstance(scenario, dict) else None)
            view["chart"] = curve_view(curve_from_trace(trace, limits), f"e{index}")
            view["timeline"] = timeline_rows(trace)
    return view


def render_explore(report: Mapping[str, Any]) -> str:
    """The page of ``explore``: ``report`` is what ``explore --json`` writes (``implementation``,
    ``system``, ``steps``, ``summary``, ``seeds``: one ``SeedReport.to_json()`` each)."""
    seeds = [_seed(seed, index) for index, seed in enumerate(report.get("seeds") or [], 1)]
    seeds.sort(key=lambda s: (bool(s.get("ok")), s.get("seed", 0)))
    return render_page(
        "explore.html.j2",
        kind="explore",
        title=f"exploration — {report.get('implementation', '')}",
        report=report,
        summary=report.get("summary") or {},
        seeds=seeds,
    )
