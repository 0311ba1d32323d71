"""Running probe extensions on the simulator (the setup of the live handoff probes)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult

__all__ = ["base", "entries", "run", "run_with", "session_records"]


def base(**overrides: Any) -> dict[str, Any]:
    scenario: dict[str, Any] = {
        "name": "handoff-host",
        "models": [{"id": "fake/fake-model", "context_window": 200_000, "max_tokens": 16_384}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 50_000, "keepRecentTokens": 2_000}}
        },
    }
    for key, value in overrides.items():
        scenario[key] = copy.deepcopy(value)
    return scenario


class _Registry:
    pass


REGISTRY = _Registry()


def _spec(factory: Any) -> str:
    name = f"ext{len(vars(REGISTRY))}"
    setattr(REGISTRY, name, factory)
    return f"{__name__}:REGISTRY.{name}"


def run(tmp_path: Path, scenario: dict[str, Any], implementation: Any) -> SimulationResult:
    """Run a scenario; ``result.final_manager`` is the session manager Pi held at the end."""
    simulation = Simulation(parse_scenario(scenario), workdir=tmp_path / "run", implementation=implementation)
    try:
        simulation.start()
        for op in simulation.result.scenario.operations:
            simulation.perform(op)
    finally:
        manager = simulation.host.runtime.session_manager if simulation.host.runtime is not None else None
        result = simulation.finish()
    result.final_manager = manager  # type: ignore[attr-defined]
    return result


def run_with(tmp_path: Path, scenario: dict[str, Any], first: Any, *others: Any) -> SimulationResult:
    scenario = dict(scenario)
    scenario["extensions"] = [{"implementation": True}] + [{"module": _spec(f)} for f in others]
    return run(tmp_path, scenario, first)


def entries(result: SimulationResult) -> list[dict[str, Any]]:
    manager = result.final_manager  # type: ignore[attr-defined]
    assert manager is not None
    return list(manager.get_entries())


def session_records(result: SimulationResult, name: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "session" and r["name"] == name]


def noop(pi: ExtensionAPI) -> None:
    """Registers nothing."""
