"""Shared helpers for the simulator tests: a base scenario like the live checks' setup.

The live checks of pi-host-1.6-verified.md ran with two fake models (windows 20,000 and
40,000, ``maxTokens`` 1000) and project settings ``{"compaction": {"enabled": true,
"reserveTokens": 4000, "keepRecentTokens": 100}}``; :func:`base` builds that setup.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario import load_scenario, parse_scenario
from pi_continuity_harness.simulator import simulate
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult

from . import probe_extension

__all__ = [
    "EXAMPLES",
    "EXAMPLE_NAMES",
    "REGISTRY",
    "agent_requests",
    "base",
    "entries",
    "event_records",
    "labels",
    "long_text",
    "module_spec",
    "names",
    "noop",
    "projection",
    "records",
    "run",
    "run_all",
    "run_example",
    "session_entries",
    "session_records",
    "tree_snapshot",
    "victim_beside",
]


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


def run_example(name: str, workdir: Path, seed: int | None = None) -> SimulationResult:
    """Run ``examples/<name>.yaml`` with the probe extension."""
    return simulate(
        load_scenario(EXAMPLES / f"{name}.yaml"),
        workdir=workdir,
        seed=seed,
        implementation=probe_extension.extension,
    )


def noop(pi: ExtensionAPI) -> None:
    """An implementation that registers nothing (Pi with no continuity extension)."""


def base(**overrides: Any) -> dict[str, Any]:
    scenario: dict[str, Any] = {
        "name": "fidelity",
        "models": [
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        ],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
        },
    }
    for key, value in overrides.items():
        scenario[key] = copy.deepcopy(value)
    return scenario


def run(
    tmp_path: Path,
    scenario: dict[str, Any],
    implementation: Any = noop,
    *,
    seed: int | None = None,
    sub: str = "run",
) -> SimulationResult:
    """Run a scenario; ``result.final_manager`` is the session manager Pi held at the end."""
    simulation = Simulation(
        parse_scenario(scenario), workdir=tmp_path / sub, seed=seed, implementation=implementation
    )
    manager = None
    try:
        simulation.start()
        for op in simulation.result.scenario.operations:
            simulation.perform(op)
            if simulation.host.runtime is not None:
                manager = simulation.host.runtime.session_manager
    finally:
        if simulation.host.runtime is not None:
            manager = simulation.host.runtime.session_manager
        result = simulation.finish()
    result.final_manager = manager  # type: ignore[attr-defined]
    return result


def records(result: SimulationResult, *kinds: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if not kinds or r["kind"] in kinds]


def names(result: SimulationResult, *kinds: str, only: tuple[str, ...] | None = None) -> list[str]:
    """``kind:name`` of every record of ``kinds`` (op records as ``op:name`` / ``op:name:end``)."""
    out = []
    for r in records(result, *kinds):
        label = f"{r['kind']}:{r['name']}" + (":end" if r.get("phase") == "end" else "")
        if only is None or r["name"] in only:
            out.append(label)
    return out


def entries(result: SimulationResult) -> list[dict[str, Any]]:
    """The entries of the current session (in memory)."""
    manager = result.final_manager  # type: ignore[attr-defined]
    assert manager is not None
    return list(manager.get_entries())


def session_entries(result: SimulationResult) -> list[dict[str, Any]]:
    """The lines of the (only) session file, header first."""
    files = result.session_files()
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]


class _Registry:
    """Extension factories referenced from scenarios as ``module: <helpers>:REGISTRY.<name>``."""


REGISTRY = _Registry()


def module_spec(factory: Any) -> str:
    name = f"ext{len(vars(REGISTRY))}"
    setattr(REGISTRY, name, factory)
    return f"{__name__}:REGISTRY.{name}"


def run_all(tmp_path: Path, scenario: dict[str, Any], *factories: Any, **kwargs: Any) -> SimulationResult:
    """Run with ``factories`` loaded in order (the first is the implementation under test)."""
    scenario = dict(scenario)
    first, *others = factories or (noop,)
    scenario["extensions"] = [{"implementation": True}] + [{"module": module_spec(f)} for f in others]
    return run(tmp_path, scenario, first, **kwargs)


def labels(result: SimulationResult, *kinds: str, detail: str | None = None) -> list[str]:
    """``name`` of each record of ``kinds`` (default: session events, the RPC view).

    ``message_end`` records read ``message_end:<role>``; ``detail`` appends that field.
    """
    kinds = kinds or ("session",)
    out = []
    for r in result.host.trace.records:
        if r["kind"] not in kinds:
            continue
        label = r["name"]
        if len(kinds) > 1:
            label = f"{r['kind']}:{label}"
        if r["name"] in ("message_end", "message_start") and "role" in r:
            label += f":{r['role']}"
        if r["kind"] == "op" and r.get("phase") == "end":
            label += ":end"
        if detail and detail in r:
            label += f"{{{r[detail]}}}"
        out.append(label)
    return out


def long_text(prefix: str, chars: int = 400) -> str:
    """``prefix`` padded with ``L`` to ``chars`` characters (chars/4 tokens of context)."""
    return prefix + " " + "L" * max(0, chars - len(prefix) - 1)


def event_records(result: SimulationResult, name: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "event" and r["name"] == name]


def session_records(result: SimulationResult, name: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "session" and r["name"] == name]


def agent_requests(result: SimulationResult) -> list[Any]:
    return [r for r in result.host.service.requests if r.kind == "agent"]


def projection(result: SimulationResult) -> Any:
    """The context projection of the final session."""
    return result.final_manager.build_session_projection()  # type: ignore[attr-defined]


def tree_snapshot(root: Path) -> dict[str, str]:
    """Every entry below ``root``: a digest of a file's bytes, ``dir``, or a link's text (what a
    confinement test compares before and after a hostile scenario)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def victim_beside(tmp: Path) -> Path:
    """A directory beside the run with files in it, the victim of a hostile scenario."""
    victim = tmp / "victim"
    (victim / "nested").mkdir(parents=True, exist_ok=True)
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    (victim / "nested" / "deep.json").write_text('{"a": 1}\n', encoding="utf-8")
    return victim


def session_lines(path: Path) -> list[dict[str, Any]]:
    """A session file's JSON lines."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def op_ends(result: SimulationResult) -> list[tuple[str, bool, str | None]]:
    """Each operation's end in the trace: its name, whether it succeeded, its error."""
    return [
        (r["name"], r["ok"], r.get("error"))
        for r in result.host.trace.records
        if r["kind"] == "op" and r.get("phase") == "end"
    ]
