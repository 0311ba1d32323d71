"""The page of ``compare``: each scenario's two observations side by side, differences marked.

Why difflib (the standard library): it aligns the two channels' lines and groups the context
around each difference, which is all a side-by-side view needs; a changed line is then diffed
again by words, numbers and punctuation, so ``3898`` against ``3914`` is marked as one number.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pi_continuity_harness.errors import ReportError
from pi_continuity_harness.report.curve import curve_from_observation
from pi_continuity_harness.report.data import initial_limits, load_artifacts, read_json
from pi_continuity_harness.report.run_page import versions
from pi_continuity_harness.report.templating import render_page
from pi_continuity_harness.report.views import curve_view

__all__ = ["CHANNELS", "render_compare", "side_by_side"]

#: The observation record's channels in report order: ``targets.comparison.CHANNELS`` (a test
#: holds the two equal; the report reads records and imports no target).
CHANNELS: tuple[str, ...] = (
    "operations",
    "held_operations",
    "session_events",
    "extension_events",
    "notifications",
    "statuses",
    "widgets",
    "dialogs",
    "model_requests",
    "entries",
    "session_file",
    "artifacts",
)
_TARGETS = ("sim", "pi")


def _lines(value: Any) -> list[str]:
    if isinstance(value, list):
        return [json.dumps(item, sort_keys=True, ensure_ascii=False) for item in value]
    if isinstance(value, dict):
        return [json.dumps({k: v}, sort_keys=True, ensure_ascii=False) for k, v in sorted(value.items())]
    return [json.dumps(value, sort_keys=True, ensure_ascii=False)]


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _changed_parts(a: str, b: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Each line cut into (text, changed) parts by a diff of its words and numbers."""
    if len(a) + len(b) > 20_000:
        return [(a, True)], [(b, True)]
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes():
        if i2 > i1:
            left.append(("".join(ta[i1:i2]), tag != "equal"))
        if j2 > j1:
            right.append(("".join(tb[j1:j2]), tag != "equal"))
    return left, right


def side_by_side(sim: Any, pi: Any, context: int = 2) -> list[dict[str, Any]]:
    """Rows of two channel values aligned by difflib: ``equal``, ``replace``, ``delete`` (only
    on the simulator) or ``insert`` (only on real Pi); runs of equal lines further than
    ``context`` from a difference become one ``skip`` row with their count."""
    left, right = _lines(sim), _lines(pi)
    rows: list[dict[str, Any]] = []
    groups = list(difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_grouped_opcodes(context))
    shown = 0
    for group in groups:
        if group[0][1] > shown:
            rows.append({"tag": "skip", "count": group[0][1] - shown})
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                a = left[i1 + k] if i1 + k < i2 else None
                b = right[j1 + k] if j1 + k < j2 else None
                row: dict[str, Any] = {
                    "tag": tag,
                    "sim": a,
                    "pi": b,
                    "n_sim": i1 + k + 1 if a is not None else None,
                    "n_pi": j1 + k + 1 if b is not None else None,
                    "sim_parts": None,
                    "pi_parts": None,
                }
                if tag == "replace" and a is not None and b is not None:
                    row["sim_parts"], row["pi_parts"] = _changed_parts(a, b)
                rows.append(row)
        shown = group[-1][2]
    if groups and shown < len(left):
        rows.append({"tag": "skip", "count": len(left) - shown})
    return rows


def _channel(record: Mapping[str, Any], channel: str) -> Any:
    return record.get("session_file_lines", []) if channel == "session_file" else record.get(channel)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, list | dict) else 1


def _verdict(s: Mapping[str, Any]) -> tuple[str, int]:
    differences = list(s.get("differences") or [])
    unexplained = [d for d in differences if not d.get("explained")]
    if s.get("outcome_differs"):
        return "outcome differs", 0
    if unexplained:
        return f"{len(unexplained)} unexplained", 1
    if not s.get("comparable"):
        return "not comparable", 4
    if differences:
        return f"{len(differences)} explained", 2
    return "identical", 3


def _scenario(s: Mapping[str, Any], index: int) -> dict[str, Any]:
    paths = {t: Path(str(p)) for t, p in (s.get("observations") or {}).items() if p and t in _TARGETS}
    records: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for target, path in paths.items():
        if path.is_file():
            try:
                value = read_json(path)
            except ReportError as error:
                problems.append(str(error))
                continue
            if isinstance(value, dict):
                records[target] = value
    differing = {str(d.get("channel")): d for d in s.get("differences") or []}
    channels = []
    if len(records) == 2 and all(r.get("started", True) for r in records.values()):
        for channel in CHANNELS:
            a, b = _channel(records["sim"], channel), _channel(records["pi"], channel)
            if a is None and b is None:
                continue
            difference = differing.get(channel) or {}
            channels.append(
                {
                    "name": channel,
                    "differs": a != b,
                    "explained": bool(difference.get("explained")),
                    "explained_by": list(difference.get("explained_by") or []),
                    "rows": side_by_side(a, b) if a != b else [],
                    "sizes": (_size(a), _size(b)),
                }
            )
    charts: dict[str, Any] = {}
    for target, record in records.items():
        if record.get("started", True):
            directory = paths[target].parent
            limits = initial_limits(directory, None, load_artifacts(directory))
            charts[target] = curve_view(
                curve_from_observation(record, limits), f"c{index}-{target}", width=6.4, height=3.0
            )
    verdict, rank = _verdict(s)
    return {
        **s,
        "anchor": f"c{index}",
        "channels": channels,
        "charts": charts,
        "verdict": verdict,
        "rank": rank,
        "dirs": {t: str(p.parent) for t, p in paths.items()},
        "problems": problems,
    }


def render_compare(report: Mapping[str, Any]) -> str:
    """The page of ``compare``: ``report`` is ``CompareReport.to_json()``; each scenario's
    ``observations`` names its two ``observation.json`` files (read for the side-by-side view
    and the charts)."""
    items = [_scenario(s, index) for index, s in enumerate(report.get("scenarios") or [], 1)]
    items.sort(key=lambda item: item["rank"])
    environment: Mapping[str, Any] = report.get("environment") or {}
    return render_page(
        "compare.html.j2",
        kind="compare",
        title=f"simulator vs real Pi — {report.get('implementation', '')}",
        report=report,
        summary=report.get("summary") or {},
        versions={t: versions(environment.get(t) or {}) for t in _TARGETS},
        scenarios=items,
        known=list(report.get("known_differences") or []),
    )
