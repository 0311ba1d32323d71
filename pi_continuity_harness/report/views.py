"""What the templates show of one scenario, one chart and one artifact (plain dicts).

A scenario comes as a result record (``SuiteRun.record()["assertions"][i]``: name, assertion,
system, status, steps, detail, ``observed.workdir``, optional ``rules``) and its work
directory; everything else is read from that directory (:mod:`.data`, :mod:`.timeline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from markupsafe import Markup

from pi_continuity_harness.errors import ReportError
from pi_continuity_harness.report.chart import render_chart
from pi_continuity_harness.report.curve import Curve
from pi_continuity_harness.report.data import (
    Artifact,
    load_artifacts,
    machine_dir,
    read_json,
    read_jsonl,
    scenario_curve,
)
from pi_continuity_harness.report.markdown import render_markdown
from pi_continuity_harness.report.timeline import request_files, timeline_rows

__all__ = ["FAILED", "RANK", "aggregate", "artifact_view", "curve_view", "scenario_view", "step_states"]

FAILED = ("failed", "error")
#: The order of a result table: failures first, then skips (each has a reason), then passes.
RANK = {"failed": 0, "error": 0, "skipped": 1, "passed": 2}


def aggregate(statuses: list[str]) -> str:
    """The status of a group of scenarios: failed if one failed, skipped if all skipped."""
    if set(statuses) & set(FAILED):
        return "failed"
    if statuses and set(statuses) <= {"skipped"}:
        return "skipped"
    return "passed"


def step_states(steps: list[Mapping[str, Any]], status: str) -> list[dict[str, Any]]:
    """Each step with its state. pytest-bdd marks every step after the failing one as failed
    too, so the first failed step is *the* failing step and the later ones did not run."""
    out: list[dict[str, Any]] = []
    seen_failure = False
    for step in steps:
        if step.get("failed"):
            state = "not-run" if seen_failure else "failed"
            seen_failure = True
        else:
            state = "skipped" if status == "skipped" else "passed"
        out.append({"keyword": "", "name": "", "line_number": None, **step, "state": state})
    return out


def artifact_view(artifact: Artifact) -> dict[str, Any]:
    markdown = artifact.frontmatter is not None or artifact.relative.endswith(".md")
    return {
        "path": artifact.path,
        "relative": artifact.relative,
        "sha256": artifact.sha256,
        "size": artifact.size,
        "truncated": artifact.truncated,
        "frontmatter": artifact.frontmatter,
        "frontmatter_error": artifact.frontmatter_error,
        "body_html": render_markdown(artifact.body) if markdown else None,
        "text": artifact.text,
    }


def curve_view(
    curve: Curve | None, prefix: str, *, width: float = 9.0, height: float = 2.7
) -> dict[str, Any] | None:
    if curve is None or curve.empty:
        return None
    return {
        # chart.py escapes every text it draws (test_chart checks a planted one).
        "svg": Markup(render_chart(curve, prefix, width=width, height=height)),
        "prefix": prefix,
        "limits": curve.limits,
        "source": curve.source,
        "compactions": curve.compactions,
        "markers": curve.markers,
        "peak": max((s.tokens for s in curve.samples), default=None),
    }


def _records(
    workdir: Path | None, problems: list[str]
) -> tuple[list[dict[str, Any]] | None, dict[str, Any] | None]:
    """The trace and the observation of a scenario directory; an unreadable one is noted."""
    trace: list[dict[str, Any]] | None = None
    observation: dict[str, Any] | None = None
    if workdir is None:
        return None, None
    if (workdir / "trace.jsonl").is_file():
        try:
            trace = read_jsonl(workdir / "trace.jsonl")
        except ReportError as error:
            problems.append(str(error))
    if (workdir / "observation.json").is_file():
        try:
            value = read_json(workdir / "observation.json")
            observation = value if isinstance(value, dict) else None
        except ReportError as error:
            problems.append(str(error))
    return trace, observation


def scenario_view(
    result: Mapping[str, Any],
    index: int,
    *,
    workdir: Path | None = None,
    scenario: Mapping[str, Any] | None = None,
    timeline: bool = True,
) -> dict[str, Any]:
    """Everything the page shows of one scenario; ``timeline``: include its trace records and
    any full requests the run kept (they are most of a page's size)."""
    observed: Mapping[str, Any] = result.get("observed") or {}
    if workdir is None and observed.get("workdir"):
        workdir = Path(str(observed["workdir"]))
    problems: list[str] = []
    if workdir is not None and not workdir.is_dir():
        problems.append(f"the work directory {workdir} is gone")
        workdir = None
    status = str(result.get("status", "passed"))
    steps = step_states(list(result.get("steps") or []), status)
    detail = str(result.get("detail") or "")
    failed_step: Mapping[str, Any] = result.get("failed_step") or {}
    # What was observed: the failing step's own message (the detail adds the expectation and
    # the implementation's errors), else the failure's first line.
    observed_text = str(failed_step.get("message") or detail)
    reason = str(failed_step.get("message") or next(iter(detail.splitlines()), status))
    artifacts = load_artifacts(workdir, observed.get("artifacts") or [])
    trace, observation = _records(workdir, problems)
    curve = scenario_curve(workdir, scenario, artifacts, trace, observation)
    notifications = observed.get("notifications")
    if notifications is None and trace is not None:
        notifications = [
            {"message": r.get("message", ""), "type": r.get("notifyType", "info")}
            for r in trace
            if r.get("kind") == "ui" and r.get("name") == "notify"
        ]
    operations = observed.get("operations")
    if operations is None and trace is not None:
        operations = [
            {"name": r.get("name"), "ok": r.get("ok"), "error": r.get("error")}
            for r in trace
            if r.get("kind") == "op" and r.get("phase") == "end"
        ]
    return {
        "anchor": f"s{index}",
        "name": str(result.get("name", "")),
        "assertion": str(result.get("assertion", "")),
        "system": str(result.get("system", "")),
        "status": status,
        "duration_s": result.get("duration_s"),
        "detail": detail,
        "observation": observed_text,
        "reason": reason[:300],
        "nodeid": str(result.get("nodeid") or ""),
        "feature_file": str(result.get("feature_file") or ""),
        "rules": [str(rule) for rule in result.get("rules") or []]
        or [
            str(tag).removeprefix("rule-") for tag in result.get("tags") or [] if str(tag).startswith("rule-")
        ],
        "steps": steps,
        "failing": next((s for s in steps if s["state"] == "failed"), None),
        "workdir": str(workdir) if workdir else observed.get("workdir"),
        "operations": [{"name": "", "ok": True, "error": None, **o} for o in operations or []],
        "notifications": [{"message": "", "type": "info", **n} for n in notifications or []],
        "artifacts": [artifact_view(a) for a in artifacts],
        "chart": curve_view(curve, f"s{index}"),
        "timeline": timeline_rows(trace) if timeline and trace is not None else None,
        "requests": request_files(workdir, machine_dir(workdir) if workdir else None) if timeline else [],
        "problems": problems,
    }
