"""Running the reference extension on the simulated Pi host, and reading what it did.

The base machine: one model with a 200,000-token window, project settings
``{"compaction": {"enabled": true, "reserveTokens": 50000, "keepRecentTokens": 2000}}``,
RPC mode, trusted project. Turns carry ~4,000-character prompts and replies, so compaction
always has something to summarise (Pi skips it silently otherwise).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.reference.psc.frontmatter import ParsedBrief, parse_brief
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult

__all__ = [
    "CONFIG",
    "THRESHOLD",
    "Run",
    "extra_extension",
    "filler",
    "scenario",
    "simulate_run",
    "threshold_turns",
    "turn",
    "work_turns",
]

CONFIG = CONFIG_DIR_NAME
WINDOW = 200_000
RESERVE = 50_000
KEEP = 2_000
THRESHOLD = WINDOW - RESERVE  # 150,000: compaction when usage > this
TURN_CHARS = 4_000


def filler(label: str, chars: int = TURN_CHARS) -> str:
    return (f"{label}: " + "work " * (chars // 5 + 1))[:chars]


def turn(n: int, tokens: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(scripted agent reply, prompt operation) of one ordinary turn."""
    return {"text": filler(f"reply {n}"), "context_tokens": tokens}, {"prompt": filler(f"task step {n}")}


def work_turns(
    count: int, start: int = 1, tokens: int = 10_000
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    replies, ops = [], []
    for n in range(start, start + count):
        reply, op = turn(n, tokens)
        replies.append(reply)
        ops.append(op)
    return replies, ops


def threshold_turns(work: int = 2) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``work`` ordinary turns, then one whose reply crosses the threshold."""
    replies, ops = work_turns(work)
    reply, op = turn(work + 1, THRESHOLD + 1)
    return [*replies, reply], [*ops, op]


def scenario(
    *,
    agent: list[dict[str, Any]] | None = None,
    extension: list[dict[str, Any]] | None = None,
    operations: list[Any] | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "reference",
        "models": [{"id": "fake/fake-model", "context_window": WINDOW}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": RESERVE, "keepRecentTokens": KEEP}}
        },
        "model": {"agent": agent or [], "extension": extension or []},
        "operations": operations or [],
    }
    for key, value in overrides.items():
        data[key] = copy.deepcopy(value)
    return data


class Run:
    """A finished simulation and views of its observable outputs."""

    def __init__(self, result: SimulationResult, manager: Any) -> None:
        self.result = result
        self.manager = manager

    # ------------------------------------------------------------------ host view
    @property
    def records(self) -> list[dict[str, Any]]:
        return self.result.host.trace.records

    def named(self, kind: str, name: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == kind and (name is None or r["name"] == name)]

    @property
    def notifications(self) -> list[str]:
        return [n.message for n in self.result.host.ui.notifications]

    def notified(self, text: str) -> list[str]:
        return [m for m in self.notifications if text in m]

    @property
    def statuses(self) -> dict[str, str]:
        return dict(self.result.host.ui.statuses)

    @property
    def dialogs(self) -> list[dict[str, Any]]:
        return list(self.result.host.ui.dialogs)

    def requests(self, kind: str) -> list[Any]:
        return [r for r in self.result.host.service.requests if r.kind == kind]

    def compaction_ends(self) -> list[dict[str, Any]]:
        return self.named("session", "compaction_end")

    def extension_errors(self) -> list[dict[str, Any]]:
        return self.named("session", "extension_error")

    def sent_user_messages(self) -> list[dict[str, Any]]:
        return self.named("call", "send_user_message")

    # ------------------------------------------------------------------ session
    @property
    def entries(self) -> list[dict[str, Any]]:
        return list(self.manager.get_entries())

    def session_lines(self) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for path in self.result.session_files():
            lines.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
        return lines

    def compactions(self) -> list[dict[str, Any]]:
        return [e for e in self.entries if e.get("type") == "compaction"]

    def user_texts(self) -> list[str]:
        out = []
        for entry in self.entries:
            message = entry.get("message") or {}
            if entry.get("type") == "message" and message.get("role") == "user":
                content = message.get("content")
                out.append(
                    content
                    if isinstance(content, str)
                    else "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
                )
        return out

    @property
    def session_id(self) -> str:
        return str(self.manager.get_session_id())

    # ------------------------------------------------------------------ files
    @property
    def project(self) -> Path:
        return Path(self.result.host.paths.project_dir)

    @property
    def artifact_dir(self) -> Path:
        return self.project / CONFIG / "session-continuity"

    @property
    def session_dir(self) -> Path:
        return self.artifact_dir / self.session_id

    def artifacts(self, state: str, session_id: str | None = None) -> dict[str, str]:
        directory = self.artifact_dir / (session_id or self.session_id) / state
        if not directory.is_dir():
            return {}
        return {
            p.name: p.read_text(encoding="utf-8")
            for p in sorted(directory.iterdir())
            if p.is_file() and not p.name.startswith(".")
        }

    def briefs(self, state: str) -> list[ParsedBrief]:
        return [parse_brief(text) for text in self.artifacts(state).values()]

    def project_files(self) -> list[str]:
        return [str(p.relative_to(self.project)) for p in self.result.project_files()]

    def fs(self, name: str | None = None) -> list[dict[str, Any]]:
        return self.named("fs", name)


class _Registry:
    """Extension factories referenced from scenarios as ``module: <this module>:REGISTRY.<name>``."""


REGISTRY = _Registry()


def extra_extension(factory: Any) -> dict[str, str]:
    """A scenario ``extensions`` entry loading ``factory`` (a plain Python extension)."""
    name = f"ext{len(vars(REGISTRY))}"
    setattr(REGISTRY, name, factory)
    return {"module": f"{__name__}:REGISTRY.{name}"}


def simulate_run(
    tmp_path: Path,
    data: dict[str, Any],
    *,
    sub: str = "run",
    implementation: Any = "reference",
    setup: Callable[[Simulation], None] | None = None,
) -> Run:
    """Run ``data`` with the reference; keeps the last session manager for inspection.

    ``setup(simulation)`` runs after Pi started and before the first operation (to plant
    files that need the session id, for example).
    """
    simulation = Simulation(parse_scenario(data), workdir=tmp_path / sub, implementation=implementation)
    manager = None
    try:
        simulation.start()
        if simulation.host.runtime is not None:
            manager = simulation.host.runtime.session_manager
        if setup is not None:
            setup(simulation)
        for op in simulation.result.scenario.operations:
            simulation.perform(op)
            if simulation.host.runtime is not None:
                manager = simulation.host.runtime.session_manager
    finally:
        result = simulation.finish()
    return Run(result, manager)
