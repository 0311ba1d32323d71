"""The HTML report: one self-contained page per command (``--html PATH``), opened offline.

Audience: a maintainer deciding a release, someone reproducing a failure. The page shows the
run's summary and a table per named assertion and per rule; per scenario its steps (the
failing one with its expectation and observation), a chart of context tokens over the
session with the window and threshold drawn and each compaction marked by reason and outcome,
the Briefs (frontmatter as a table, body as Markdown, path and hash), notifications and the
timeline; ``compare`` puts two observations side by side; ``explore`` lists seeds with their
minimised scenarios; ``matrix`` shows the assertion × Pi version grid.

The report reads results, observations and traces as data (records and files), never the
simulator's or the targets' objects: layer-wise it sits beside ``commands``, which alone
imports it. It needs the ``report`` extra (Jinja2, markdown-it-py); the functions
below import it on first use, so :func:`missing_dependencies` can be asked before any work
starts. Every page has no script and a Content-Security-Policy that forbids scripts and
network loads; everything taken from a run is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pi_continuity_harness.report.dependencies import INSTALL_HINT, missing_dependencies, require_dependencies
from pi_continuity_harness.report.page_paths import page_directory

__all__ = [
    "INSTALL_HINT",
    "missing_dependencies",
    "page_directory",
    "render_compare",
    "render_explore",
    "render_matrix",
    "render_run",
    "render_simulate",
    "require_dependencies",
    "write_html",
]


def render_run(record: Mapping[str, Any], *, timelines: Literal["all", "failed", "none"] = "all") -> str:
    """The page of a suite run; ``record`` is ``SuiteRun.record()``. ``timelines``: whose trace
    timelines (and kept model requests) the page holds, most of its size."""
    from pi_continuity_harness.report.run_page import render_run as render  # noqa: PLC0415  (the extra)

    return render(record, timelines=timelines)


def render_simulate(
    scenario_path: Path,
    workdir: Path,
    *,
    implementation: str,
    operations: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The page of one simulated scenario: the file, then its run directory."""
    from pi_continuity_harness.report.run_page import render_simulate as render  # noqa: PLC0415

    return render(scenario_path, workdir, implementation=implementation, operations=operations)


def render_compare(report: Mapping[str, Any]) -> str:
    """The page of ``compare``; ``report`` is ``CompareReport.to_json()``."""
    from pi_continuity_harness.report.compare_page import render_compare as render  # noqa: PLC0415

    return render(report)


def render_explore(report: Mapping[str, Any]) -> str:
    """The page of ``explore``; ``report`` is what ``explore --json`` writes."""
    from pi_continuity_harness.report.explore_page import render_explore as render  # noqa: PLC0415

    return render(report)


def render_matrix(matrix: Mapping[str, Any]) -> str:
    """The page of ``matrix``; ``matrix`` is what ``matrix --json`` writes."""
    from pi_continuity_harness.report.matrix_page import render_matrix as render  # noqa: PLC0415

    return render(matrix)


def write_html(path: Path, html: str) -> Path:
    """Write a page (its directory made if needed); returns ``path``.

    The page is encoded before the file is opened: ``Path.write_text`` truncated the file and
    then failed to encode text UTF-8 cannot encode (a lone surrogate), leaving a 0-byte page.
    Now ``UnicodeEncodeError`` leaves the file as it was. (The command line writes its pages
    through ``scenario.atomic_write``, which the report, importing only ``errors``, may not.)"""
    data = html.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
