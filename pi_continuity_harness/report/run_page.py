"""The page of a suite run (``run --html``) and of one simulated scenario (``simulate --html``)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from pi_continuity_harness.report.data import read_jsonl
from pi_continuity_harness.report.templating import CSP, render_page
from pi_continuity_harness.report.views import FAILED, RANK, aggregate, scenario_view

__all__ = ["Timelines", "render_run", "render_simulate", "versions"]

#: Which scenarios' timelines (and kept requests) a run page holds.
Timelines = Literal["all", "failed", "none"]


def versions(environment: Mapping[str, Any]) -> dict[str, str]:
    """Pi and Node versions from a run's environment (``features.suite.default_environment``)."""
    host = str(environment.get("host", ""))
    pi = next((word for word in host.split() if word[:1].isdigit()), "")
    node = str(environment.get("node") or ("n/a (simulated)" if "simulated" in host else "—"))
    return {"pi": pi, "host": host, "node": node}


def _groups(scenarios: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Scenarios grouped by ``key`` (an assertion, or each of a scenario's rule ids), failures
    first, then the suite's order."""
    groups: OrderedDict[tuple[str, str], list[dict[str, Any]]] = OrderedDict()
    for s in scenarios:
        keys = s[key] if isinstance(s[key], list) else [s[key]]
        for k in keys:
            groups.setdefault((s["system"], k), []).append(s)
    out = []
    for (system, name), members in groups.items():
        feature = members[0]["feature_file"].replace("\\", "/").split("/")
        out.append(
            {
                "system": system,
                "name": name,
                "group": feature[-2] if len(feature) >= 2 else "",
                "status": aggregate([m["status"] for m in members]),
                "passed": sum(1 for m in members if m["status"] == "passed"),
                "total": len(members),
                "seconds": sum(float(m["duration_s"] or 0) for m in members),
                "scenarios": members,
            }
        )
    return sorted(out, key=lambda g: RANK.get(g["status"], 1))


def _rules(record: Mapping[str, Any], scenarios: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The rule table: the run's verdict per catalogue rule (``record["rules"]``: rule, section,
    status passed / failed / not run, the scenarios that prove it), failures first, then the
    catalogue's order; without verdicts, the rule ids the scenarios carry, grouped."""
    by_name = {s["name"]: s for s in scenarios}
    verdicts = [v for v in record.get("rules") or [] if isinstance(v, Mapping) and v.get("rule")]
    rows: list[dict[str, Any]] = []
    if verdicts:
        for verdict in verdicts:
            members = []
            for item in verdict.get("scenarios") or []:
                view = by_name.get(str(item.get("name")))
                members.append(
                    {
                        "name": str(item.get("name")),
                        "status": str(item.get("status")),
                        "anchor": view["anchor"] if view else None,
                        "reason": view["reason"] if view and view["status"] != "passed" else "",
                    }
                )
            rows.append(
                {
                    "rule": str(verdict["rule"]),
                    "section": str(verdict.get("section") or ""),
                    "status": str(verdict.get("status") or "not run"),
                    "passed": sum(1 for m in members if m["status"] == "passed"),
                    "total": len(members),
                    "scenarios": members,
                }
            )
    elif any(s["rules"] for s in scenarios):
        for group in _groups(scenarios, "rules"):
            members = [
                {"name": m["name"], "status": m["status"], "anchor": m["anchor"], "reason": m["reason"]}
                for m in group["scenarios"]
            ]
            rows.append({**group, "rule": group["name"], "section": "", "scenarios": members})
    if not rows:
        return None
    order = {"failed": 0, "error": 0, "passed": 1, "skipped": 2, "not run": 3}
    rows.sort(key=lambda r: order.get(r["status"], 1))
    counts = {
        status: sum(1 for r in rows if r["status"] == status) for status in ("failed", "passed", "not run")
    }
    return {"rows": rows, "counts": counts}


def render_run(record: Mapping[str, Any], *, timelines: Timelines = "all", csp: str | None = CSP) -> str:
    """The page of a suite run. ``record``: ``SuiteRun.record()`` (the validation record's JSON:
    ``target``, ``implementation``, ``environment``, ``counts``, ``seconds``,
    ``install_command``, ``assertions``: one result each, with ``steps``, ``observed`` and,
    when the rules engineers' results carry them, ``rules``)."""
    results: list[Mapping[str, Any]] = list(record.get("assertions") or [])
    scenarios = [
        scenario_view(
            result,
            index,
            timeline=timelines == "all" or (timelines == "failed" and result.get("status") in FAILED),
        )
        for index, result in enumerate(results, 1)
    ]
    counts: Mapping[str, int] = record.get("counts") or {}
    environment: Mapping[str, Any] = record.get("environment") or {}
    systems = sorted({s["system"] for s in scenarios if s["system"]})
    return render_page(
        "run.html.j2",
        csp=csp,
        kind="run",
        title=f"{record.get('implementation', '')} on {record.get('target', '')}",
        record=record,
        environment=environment,
        versions=versions(environment),
        systems=systems,
        counts=counts,
        failed=counts.get("failed", 0) + counts.get("error", 0),
        assertions=_groups(scenarios, "assertion"),
        rules=_rules(record, scenarios),
        scenarios=sorted(scenarios, key=lambda s: RANK.get(s["status"], 1)),
    )


def render_simulate(
    scenario_path: Path,
    workdir: Path,
    *,
    implementation: str,
    operations: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The page of ``simulate SCENARIO``: the scenario file, then its run (chart, artifacts,
    notifications, operations, timeline) from the run directory's ``trace.jsonl``."""
    text = scenario_path.read_text(encoding="utf-8")
    scenario = yaml.safe_load(text)  # JSON is YAML too
    scenario = scenario if isinstance(scenario, dict) else {}
    trace = read_jsonl(workdir / "trace.jsonl")
    head = next((r for r in trace if r.get("kind") == "host" and r.get("name") == "scenario"), {})
    ends = [r for r in trace if r.get("kind") == "op" and r.get("phase") == "end"]
    result = {
        "name": str(scenario.get("name") or scenario_path.stem),
        "assertion": str(scenario.get("description") or ""),
        "status": "ran" if all(r.get("ok", True) for r in ends) else "failed",
        "observed": {
            "workdir": str(workdir),
            **({"operations": operations} if operations is not None else {}),
        },
    }
    view = scenario_view(result, 1, workdir=workdir, scenario=scenario)
    return render_page(
        "simulate.html.j2",
        kind="simulate",
        title=f"simulate {scenario_path.name}",
        scenario_path=str(scenario_path),
        scenario_text=text,
        seed=head.get("seed", scenario.get("seed")),
        implementation=head.get("implementation", implementation),
        s=view,
    )
