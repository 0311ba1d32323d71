"""Differential: a Python extension's ``thinking_level_select`` handler, real Pi 1.6 against the
simulator.

``AgentSession.setThinkingLevel`` (agent-session.js:2219-2238) appends a
``thinking_level_change`` entry, emits the public ``thinking_level_changed`` and hands the
extensions ``{type: "thinking_level_select", level, previousLevel}`` through an *unawaited*
``_extensionRunner.emit`` (``void``), only when the clamped level changes. ``setModel`` calls it
before it emits ``model_select`` (:2134-2136), and the runner calls the bridge's handler at once
(the request is on its way to Python before ``model_select``'s), so a Python extension sees the
level first. A handler's return value is ignored; one that raises is an ``extension_error``.

The scenario: a model without reasoning (level ``off`` whatever the default), one with it, and
``defaultThinkingLevel: high``. Switching to the reasoning model restores ``high``, switching
back clamps it to ``off``; switching to the same model again changes no level. The extension
below, defined here, records each ``thinking_level_select`` (type, class, level, previous level,
``pi.get_thinking_level()`` in the handler) and each ``model_select``; a second handler raises.
The test asserts real Pi's list explicitly, then that the simulator's is the same (before the
simulator dispatched the event, its list had only the ``model_select`` rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play

from pi_continuity_harness.scenario.document import parse_scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def extension(pi):
    seen = []

    def level(event, ctx):
        seen.append([event.type, type(event).__name__, event.level, event.previous_level, pi.get_thinking_level()])
        return {"level": "minimal"}  # ignored

    def fail(event, ctx):
        raise RuntimeError("level handler failed at " + event.level)

    def model(event, ctx):
        seen.append([event.type, event.model.id, pi.get_thinking_level()])
        ctx.ui.notify("levels: " + json.dumps(seen), "info")

    pi.on("thinking_level_select", level)
    pi.on("thinking_level_select", fail)
    pi.on("model_select", model)
"""


def test_thinking_level_select_reaches_a_python_extension_before_model_select(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("thinking_level_probe", _EXTENSION)
    sc = parse_scenario(
        {
            "name": "differential",
            "models": [
                {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
                {"id": "fake/fake-think", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
            ],
            "settings": {"project": {"defaultThinkingLevel": "high"}},
            "model": {"agent": [{"text": "hello back"}]},
        }
    )
    ops: list[Any] = [
        {"set_model": "fake/fake-think"},
        {"set_model": "fake/fake-think"},
        {"set_model": "fake/fake-model"},
    ]
    real, sim = play(targets, sc, ops, "thinking_level_probe:extension")

    select = ["thinking_level_select", "ThinkingLevelSelectEvent"]
    expected = [
        [*select, "high", "off", "high"],
        ["model_select", "fake-think", "high"],
        [*select, "off", "high", "off"],
        ["model_select", "fake-model", "off"],
    ]
    # Real Pi: one event per change of level, before that switch's model_select; none for the
    # switch to the model already selected (no model_select either: same model).
    assert notes(real)["levels"] == expected, json.dumps(notes(real).get("levels"), indent=1)
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [
        ("thinking_level_select", "level handler failed at high"),
        ("thinking_level_select", "level handler failed at off"),
    ]
    assert [e["level"] for e in real.session("thinking_level_changed")] == ["high", "off"]
    assert notes(sim).get("levels") == notes(real)["levels"]
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
