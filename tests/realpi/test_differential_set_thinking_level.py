"""Differential: ``pi.set_thinking_level`` and ``ctx.thinking_level`` of a Python extension, real
Pi 1.6 against the simulator.

``pi.setThinkingLevel`` (types.d.ts:1350, loader.js:369-372) is ``AgentSession.setThinkingLevel``
(agent-session.js:2219-2238) without ``persist``: the level is clamped to the current model
(pi-ai ``clampThinkingLevel``, models.js:714-732), and only a change of the clamped level
appends a ``thinking_level_change`` entry, emits ``thinking_level_changed`` and starts the
extensions' ``thinking_level_select`` (``void``: not awaited). ``ctx.thinkingLevel``
(types.d.ts:254) is a live getter (runner.js:663-666).

The scenario starts on a model without reasoning, then switches to one with it (the harness's
``defaultThinkingLevel`` is ``off``). The extension's ``/think <level>`` reads
``ctx.thinking_level``, sets the level, appends an ``after`` entry and reads both getters again;
its ``thinking_level_select`` handler records the event and appends a ``select`` entry.
``/levels`` notifies what was recorded. The test asserts real Pi's record explicitly, then the
simulator's.
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

    def select(event, ctx):
        seen.append(["select", event.level, event.previous_level, pi.get_thinking_level(), ctx.thinking_level])
        pi.append_entry("select", {"level": event.level, "previous": event.previous_level})

    async def think(args, ctx):
        before = ctx.thinking_level
        pi.set_thinking_level(args)
        pi.append_entry("after", {"asked": args})
        seen.append(["think", args, before, pi.get_thinking_level(), ctx.thinking_level])

    async def levels(args, ctx):
        ctx.ui.notify("levels: " + json.dumps(seen), "info")

    pi.on("thinking_level_select", select)
    pi.register_command("think", think)
    pi.register_command("levels", levels)
"""


def _record(entries: list[dict[str, Any]]) -> list[Any]:
    """The level entries and the extension's entries, in the session's order."""
    rows: list[Any] = []
    for entry in entries:
        if entry["type"] == "thinking_level_change":
            rows.append(["thinking_level_change", entry["thinkingLevel"]])
        elif entry["type"] == "custom":
            rows.append([entry["customType"], entry.get("data")])
    return rows


def test_set_thinking_level_clamps_records_a_change_and_starts_thinking_level_select(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("set_thinking_probe", _EXTENSION)
    sc = parse_scenario(
        {
            "name": "differential",
            "models": [
                {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
                {"id": "fake/fake-think", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
            ],
            "model": {"agent": [{"text": "hello back"}]},
        }
    )
    ops: list[Any] = [
        {"command": "/think high"},
        {"set_model": "fake/fake-think"},
        {"command": "/think xhigh"},
        {"command": "/think high"},
        {"command": "/think minimal"},
        {"command": "/think bogus"},
        {"command": "/levels"},
    ]
    real, sim = play(targets, sc, ops, "set_thinking_probe:extension")

    expected_notes = [
        # No reasoning: high is clamped to off, no change, no event.
        ["think", "high", "off", "off", "off"],
        # xhigh needs a thinkingLevelMap entry: clamped to high.
        ["think", "xhigh", "off", "high", "high"],
        ["select", "high", "off", "high", "high"],
        ["think", "high", "high", "high", "high"],
        ["think", "minimal", "high", "minimal", "minimal"],
        ["select", "minimal", "high", "minimal", "minimal"],
        # An unknown name is the model's first level, off.
        ["think", "bogus", "minimal", "off", "off"],
        ["select", "off", "minimal", "off", "off"],
    ]
    assert notes(real)["levels"] == expected_notes, json.dumps(notes(real).get("levels"), indent=1)
    expected_entries = [
        ["thinking_level_change", "off"],
        ["after", {"asked": "high"}],
        ["thinking_level_change", "high"],
        ["after", {"asked": "xhigh"}],
        ["select", {"level": "high", "previous": "off"}],
        ["after", {"asked": "high"}],
        ["thinking_level_change", "minimal"],
        ["after", {"asked": "minimal"}],
        ["select", {"level": "minimal", "previous": "high"}],
        ["thinking_level_change", "off"],
        ["after", {"asked": "bogus"}],
        ["select", {"level": "off", "previous": "minimal"}],
    ]
    assert _record(real.entries) == expected_entries, json.dumps(_record(real.entries), indent=1)
    assert [e["level"] for e in real.session("thinking_level_changed")] == ["high", "minimal", "off"]
    assert notes(sim).get("levels") == notes(real)["levels"]
    assert _record(sim.entries) == _record(real.entries)
    assert_equivalent(real, sim)
