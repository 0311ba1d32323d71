"""The §20 validation record of a package gate run, as Markdown and JSON.

It names the Pi, Node, npm and Verdaccio versions and the OS, every install and remove command
with its transcript, the artifact paths each source produced, the manifest and docs checks
(``needs-a-person`` items listed for the reviewer), the load results and the suite's
assertions through the installed package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_continuity_harness.package.gate import GateResult

__all__ = ["record_json", "write_record"]


def record_json(result: GateResult) -> dict[str, Any]:
    return {
        "package": {"name": result.name, "version": result.version, "input": result.input},
        "verdict": "pass" if result.ok else "fail",
        "stopped": result.stopped,
        "environment": result.environment,
        "registry": result.registry,
        "packed": {
            "tarball": result.static.packed.tarball.name,
            "size": result.static.packed.size,
            "files": list(result.static.packed.files),
        },
        "published": [t.to_json() for t in result.published],
        "checks": [c.to_json() for c in result.checks],
        "sources": [
            {
                "source": run.source,
                "install_command": run.spec,
                "artifacts": run.artifacts,
                "status_text": run.status_text,
                "transcripts": [t.to_json() for t in run.transcripts],
            }
            for run in result.sources
        ],
        "suite": None
        if result.suite is None
        else {
            "command": result.suite.command,
            "seconds": result.suite.seconds,
            "results": result.suite.results,
        },
        "timings": result.timings,
    }


def _markdown(result: GateResult) -> str:
    env = result.environment
    lines = [
        f"# Release gate: {result.name}@{result.version}",
        "",
        f"Verdict: **{'pass' if result.ok else 'fail'}**"
        + (f" ({result.stopped})" if result.stopped else ""),
        "",
        f"- Pi {env.get('pi')}, Node {env.get('node')}, npm {env.get('npm')}, Verdaccio {env.get('verdaccio')}",
        f"- OS: {env.get('os')}; Python {env.get('python')}",
        f"- Input: `{result.input}`; packed `{result.static.packed.tarball.name}` "
        f"({len(result.static.packed.files)} files, {result.static.packed.size} bytes)",
    ]
    if result.registry:
        lines.append(
            f"- Registry: {result.registry['url']} (Verdaccio, started in {result.registry['start_s']} s)"
        )
    lines += ["", "## Checks", "", "| status | check | file | field | detail |", "|---|---|---|---|---|"]
    for c in result.checks:
        detail = c.detail.replace("|", "\\|").replace("\n", " ")[:300]
        lines.append(f"| {c.status} | `{c.name}` | {c.file} | {c.field} | {detail} |")
    person = [c for c in result.checks if c.status == "needs-a-person"]
    if person:
        lines += ["", "Needs a person (never counted as passed): " + ", ".join(f"`{c.name}`" for c in person)]
    for run in result.sources:
        lines += ["", f"## Install source `{run.source}`: `{run.spec}`", ""]
        for key, value in run.artifacts.items():
            lines.append(f"- {key}: `{value}`")
        for t in run.transcripts:
            lines += [
                "",
                f"`$ {t.command}` (in `{t.cwd}`, exit {t.exit}, {t.seconds} s)",
                "",
                "```",
                t.output,
                "```",
            ]
    if result.suite is not None:
        lines += [
            "",
            "## Suite through the installed package",
            "",
            f"`{result.suite.command}` ({result.suite.seconds} s)",
        ]
    lines += ["", "## Timings (s)", ""] + [f"- {k}: {v}" for k, v in result.timings.items()]
    return "\n".join(lines) + "\n"


def write_record(result: GateResult, directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    md, js = directory / "validation-record.md", directory / "validation-record.json"
    js.write_text(json.dumps(record_json(result), indent=1) + "\n", encoding="utf-8")
    md.write_text(_markdown(result), encoding="utf-8")
    return md, js
