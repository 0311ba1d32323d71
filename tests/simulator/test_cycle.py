"""``cycle_model``, ``set_thinking_level`` and ``cycle_thinking_level`` on the simulator
(agent-session.js:2157-2252). Compared with real Pi in ``tests/realpi/test_differential_cycle.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.simulator.session_model import ModelScopeNotModelledError

from .helpers import base, run

_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
    {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
]


def _ends(result: Any) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "op" and r.get("phase") == "end"]


def test_cycle_model_wraps_round_the_available_models(tmp_path: Path) -> None:
    result = run(tmp_path, base(models=_MODELS, operations=["cycle_model", "cycle_model", "cycle_model"]))
    assert [e.get("model") for e in _ends(result)] == ["fake/fake-big", "fake/fake-model", "fake/fake-big"]


def test_cycle_thinking_level_wraps_and_does_nothing_without_reasoning(tmp_path: Path) -> None:
    ops = [{"set_thinking_level": "high"}, "cycle_thinking_level", "cycle_thinking_level", "cycle_model"]
    result = run(
        tmp_path, base(models=_MODELS, thinking_level="low", operations=[*ops, "cycle_thinking_level"])
    )
    assert [e.get("level") for e in _ends(result) if e["name"] == "cycle_thinking_level"] == [
        "off",
        "minimal",
        None,
    ]


def test_scoped_models_are_refused_as_not_modelled(tmp_path: Path) -> None:
    scenario = base(models=_MODELS, operations=["cycle_model"])
    scenario["settings"]["project"]["enabledModels"] = ["fake/*"]
    with pytest.raises(ModelScopeNotModelledError, match="not modelled by the simulator"):
        run(tmp_path, scenario)
