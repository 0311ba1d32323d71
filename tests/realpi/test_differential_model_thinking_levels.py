"""Differential: the ``modelThinkingLevels`` setting, real Pi 1.6 against the simulator.

Pi keeps a thinking level per model in the settings (``modelThinkingLevels``,
settings-manager.js:600-605). Without ``--thinking`` (the scenario's level ``off``), a session
with no messages yet takes its model's level (sdk.js:128-134), and a switch to a model takes
that model's (``_getThinkingLevelForModelSwitch``, agent-session.js:2268-2280), before the
settings' ``defaultThinkingLevel``. The simulator chooses so
(``HostRuntimes._choose_model_and_thinking``, ``SessionModel._thinking_level_for_model_switch``);
until this test no scenario had a per-model level.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi


def _scenario(levels: dict[str, str], **fields: Any) -> Any:
    return parse_scenario(
        {
            "name": "differential",
            "models": [
                {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
                {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
            ],
            "thinking_level": "off",
            "settings": {"global": {"modelThinkingLevels": levels}},
            "model": {"agent": [{"text": f"reply {i}"} for i in range(6)]},
            **fields,
        }
    )


def _levels(observation: Observation) -> list[str]:
    return [e["thinkingLevel"] for e in observation.entries if e.get("type") == "thinking_level_change"]


def _reasoning(observation: Observation) -> list[Any]:
    return [r.request.reasoning for r in observation.model_requests if r.kind == "agent"]


def test_each_model_gets_its_own_level_for_a_new_session_and_a_switch(targets: Targets) -> None:
    sc = _scenario({"fake/fake-model": "high", "fake/fake-big": "low"})
    ops = [
        {"prompt": "one"},
        {"set_model": "fake/fake-big"},
        {"prompt": "two"},
        "new_session",
        {"prompt": "three"},
    ]
    real, sim = play(targets, sc, ops)
    # Real Pi: the first session starts at fake-model's "high"; the switch takes fake-big's "low";
    # the new session goes back to the --model model and its "high".
    assert _reasoning(real) == ["high", "low", "high"]
    assert _levels(real) == ["high"]  # the entries of the session in use: the new one
    assert _reasoning(sim) == _reasoning(real)
    assert_equivalent(real, sim)


def test_a_model_without_a_level_of_its_own_takes_the_default(targets: Targets) -> None:
    sc = _scenario({"fake/fake-big": "medium"})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"set_model": "fake/fake-big"}, {"prompt": "two"}])
    assert _levels(real) == ["off", "medium"]
    assert_equivalent(real, sim)
