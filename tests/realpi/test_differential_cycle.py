"""Differential: RPC ``cycle_model``, ``set_thinking_level`` and ``cycle_thinking_level``, real
Pi 1.6 against the simulator.

``cycleModel`` (agent-session.js:2157-2209) takes the next of the available models
(``getNextCycleIndex``, :97-105), its thinking level as ``setModel`` chooses it, a
``model_change`` entry and ``model_select{source: "cycle"}``; ``cycleThinkingLevel``
(:2243-2252) the model's next level, nothing without reasoning; ``setThinkingLevel``
(:2219-2242) clamps. The Pi Session Continuity reference re-validates the native settings for
the new model at ``model_select`` (spec §11), so a cycle to a model with another window is a
continuity event. None of the three could be said in a scenario before.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
    {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
    {"id": "other/third", "context_window": 30000, "max_tokens": 1000, "reasoning": True},
]


def _changes(observation: Observation) -> list[tuple[str, str]]:
    out = []
    for e in observation.entries:
        if e["type"] == "model_change":
            out.append(("model", f"{e['provider']}/{e['modelId']}"))
        elif e["type"] == "thinking_level_change":
            out.append(("thinking", e["thinkingLevel"]))
    return out


def test_cycle_model_goes_round_the_available_models(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}]}, models=_MODELS, thinking_level="low")
    ops: list[Any] = [{"prompt": "a"}, "cycle_model", "cycle_model", {"prompt": "b"}, "cycle_model"]
    real, sim = play(targets, sc, ops)
    assert all(o.ok for o in real.operations)
    selects = [(e.get("source"), e.get("model")) for e in real.events("model_select")]
    assert selects == [("cycle", "fake/fake-big"), ("cycle", "other/third"), ("cycle", "fake/fake-model")], (
        selects
    )
    assert_equivalent(real, sim)


def test_thinking_levels_are_set_clamped_and_cycled(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "one"}]}, models=_MODELS, thinking_level="low")
    ops: list[Any] = [
        {"set_thinking_level": "high"},
        {"set_thinking_level": "xhigh"},  # no thinkingLevelMap: clamped to high, no change
        "cycle_thinking_level",  # high -> off (the levels wrap)
        "cycle_thinking_level",  # off -> minimal
        {"prompt": "a"},
        "cycle_model",  # to fake-big, without reasoning
        "cycle_thinking_level",  # nothing
        {"set_thinking_level": "medium"},  # clamped to off
    ]
    real, sim = play(targets, sc, ops)
    assert all(o.ok for o in real.operations)
    assert [c for c in _changes(real) if c[0] == "thinking"][-3:] == [
        ("thinking", "off"),
        ("thinking", "minimal"),
        ("thinking", "off"),
    ]
    assert_equivalent(real, sim)


def test_a_single_available_model_does_not_cycle(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "one"}]}, models=_MODELS[:1])
    real, sim = play(targets, sc, ["cycle_model", {"prompt": "a"}])
    assert not real.events("model_select")
    assert_equivalent(real, sim)


def test_the_continuity_reference_revalidates_after_a_cycle(targets: Targets) -> None:
    """Pi Session Continuity checks the native settings against the new model's window at
    ``model_select``: reserveTokens 16,000 refused for a 20,000 window, fine for 40,000."""
    sc = scenario(
        {"agent": [{"text": "one"}, {"text": "two"}]},
        models=_MODELS[:2],
        settings={
            "project": {"compaction": {"enabled": True, "reserveTokens": 16000, "keepRecentTokens": 100}}
        },
    )
    real, sim = play(
        targets, sc, [{"prompt": "a"}, "cycle_model", {"prompt": "b"}, "cycle_model"], "reference"
    )
    assert_equivalent(real, sim)


def test_set_session_name_trims_refuses_an_empty_name_and_tells_the_extensions(
    targets: Targets, python_extension: Any
) -> None:
    """RPC ``set_session_name`` (rpc-mode.js:537-544): trimmed as JavaScript trims (a BOM is
    whitespace to it, not to Python's ``strip``), an empty name refused, else a ``session_info``
    entry and ``session_info_changed`` to RPC and the extensions."""
    spec = python_extension(
        "session_name_probe",
        "def extension(pi):\n"
        "    pi.on('session_info_changed', lambda event, ctx: ctx.ui.notify(f'name {event.name}', 'info'))\n",
    )
    sc = scenario({"agent": [{"text": "one"}]})
    ops: list[Any] = [
        {"set_session_name": " \ufeff\u00a0 "},
        {"set_session_name": " \ufefftask T-42\n"},
        {"prompt": "a"},
    ]
    real, sim = play(targets, sc, ops, spec)
    assert [(o.ok, o.error) for o in real.operations[:2]] == [
        (False, "Session name cannot be empty"),
        (True, None),
    ]
    assert real.notifications == [("name task T-42", "info")]
    assert_equivalent(real, sim)
