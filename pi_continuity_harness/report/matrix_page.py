"""The page of ``matrix``: per implementation, the assertion × Pi version grid.

Input (what ``matrix --json`` writes)::

    {"implementations": [{"implementation", "system", "pi_versions": [...],
                          "rows": [{"assertion", "scenario",
                                    "cells": {"<version>": {"status", "reason", "duration_s"}}}],
                          "lowest_passing_version", "seconds_per_version": {"<version>": s}}],
     "simulator_models": "1.6.0"}

Rows with a failure come first; a missing cell is shown as ``missing``; a row tagged ``@host``
(``"host": true``: Pi's own behaviour) is marked. The lowest passing version (and the minimum
supported version, when given) is the command's own verdict, shown as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_continuity_harness.report.templating import render_page
from pi_continuity_harness.report.views import FAILED

__all__ = ["render_matrix"]

_MISSING = {"status": "missing", "reason": "not run on this version", "duration_s": None}


def _implementation(entry: Mapping[str, Any], index: int) -> dict[str, Any]:
    versions = [str(v) for v in entry.get("pi_versions") or []]
    rows: list[dict[str, Any]] = []
    for row in entry.get("rows") or []:
        cells: Mapping[str, Any] = row.get("cells") or {}
        shown = [{**_MISSING, "reason": "", **(cells.get(v) or _MISSING)} for v in versions]
        rows.append(
            {
                "assertion": str(row.get("assertion", "")),
                "scenario": str(row.get("scenario", "")),
                "cells": shown,
                "host": bool(row.get("host")),
                "failed": any(c["status"] in FAILED for c in shown),
            }
        )
    rows.sort(key=lambda r: not r["failed"])
    counts = {
        v: {
            "passed": sum(1 for r in rows if r["cells"][i]["status"] == "passed"),
            "failed": sum(1 for r in rows if r["cells"][i]["status"] in FAILED),
        }
        for i, v in enumerate(versions)
    }
    return {
        "anchor": f"m{index}",
        "implementation": str(entry.get("implementation", "")),
        "system": str(entry.get("system", "")),
        "versions": versions,
        "rows": rows,
        "counts": counts,
        "lowest": entry.get("lowest_passing_version"),
        "minimum": entry.get("minimum_supported_version"),
        "seconds": dict(entry.get("seconds_per_version") or {}),
    }


def render_matrix(matrix: Mapping[str, Any]) -> str:
    implementations = [_implementation(e, i) for i, e in enumerate(matrix.get("implementations") or [], 1)]
    names = ", ".join(i["implementation"] for i in implementations)
    return render_page(
        "matrix.html.j2",
        kind="matrix",
        title=f"Pi version matrix — {names}",
        matrix=matrix,
        implementations=implementations,
        all_pass=all(i["lowest"] for i in implementations) and bool(implementations),
    )
