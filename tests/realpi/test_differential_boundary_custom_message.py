"""Differential: a boundary's ``custom_message`` draft without ``display``, ``content`` or
``customType``, real Pi 1.6 against the simulator.

Pi appends the draft with ``appendCustomMessageEntry(draft.customType, draft.content,
draft.display, draft.details)`` (agent-session.js:645-647), which puts each in the entry as it is
(session-manager.js:968-981): a missing one is ``undefined``, so the session file and every copy
through JSON (the bridge's ``get_entries``) have no key. The simulator wrote ``null`` for a missing
``display`` or ``content`` (and ``customType``) until 5 December 2026.

A draft's explicit ``null`` is written as ``null``: a ``custom_message``'s ``"details": null``,
a ``custom`` draft's ``"data": null`` (``appendCustomEntry``, session-manager.js:921-932) and a
``compaction`` draft's ``"details": null`` and ``"usage": null`` (``appendCompaction``,
session-manager.js:901-920), which the simulator left out until 5 December 2026 (its own
callers pass ``None`` for "none"; they now pass ``messages.UNDEFINED``).

The extension's ``turn_end`` handler drafts, on the first prompt's turn, three messages without
a key, one with ``null`` details, two custom entries (``null`` data, no data) and two compaction
entries (``null`` details and usage, neither); its ``agent_settled`` handler reports the
custom_message and custom entries it reads back. The test asserts real Pi's entries explicitly,
then that the simulator's are the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def extension(pi):
    turns = []

    def turn_end(event, ctx):
        turns.append(1)
        if len(turns) > 1:
            return None
        return {
            "entries": [
                {"type": "custom_message", "customType": "no-display", "content": "a"},
                {"type": "custom_message", "customType": "no-content", "display": False},
                {"type": "custom_message", "details": {"d": 1}},
                {"type": "custom_message", "customType": "null-details", "content": "b", "details": None},
                {"type": "custom", "customType": "null-data", "data": None},
                {"type": "custom", "customType": "no-data"},
                {"type": "compaction", "summary": "S", "details": None, "usage": None},
                {"type": "compaction", "summary": "T"},
            ]
        }

    def settled(event, ctx):
        found = [
            {k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")}
            for e in ctx.session_manager.get_entries()
            if e.get("type") in ("custom_message", "custom")
        ]
        ctx.ui.notify("drafted: " + json.dumps(found), "info")

    pi.on("turn_end", turn_end)
    pi.on("agent_settled", settled)
"""

PATH = "draft_probe:extension"

EXPECTED = [
    {"type": "custom_message", "customType": "no-display", "content": "a"},
    {"type": "custom_message", "customType": "no-content", "display": False},
    {"type": "custom_message", "details": {"d": 1}},
    {"type": "custom_message", "customType": "null-details", "content": "b", "details": None},
    {"type": "custom", "customType": "null-data", "data": None},
    {"type": "custom", "customType": "no-data"},
]


def test_a_draft_has_no_key_it_leaves_out_and_null_where_it_gives_none(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("draft_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first"}]})
    ops: list[Any] = [{"prompt": "one"}]
    real, sim = play(targets, sc, ops, PATH)

    def written(observation: Any) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in e.items() if k not in ("id", "parentId", "timestamp")}
            for e in observation.entries
            if e["type"] in ("custom_message", "custom")
        ]

    assert notes(real)["drafted"] == EXPECTED, json.dumps(notes(real).get("drafted"))
    assert written(real) == EXPECTED
    assert real.session("extension_error") == []
    assert notes(sim).get("drafted") == EXPECTED
    assert written(sim) == EXPECTED
    assert_equivalent(real, sim)

    def nulls(observation: Any) -> list[dict[str, Any]]:
        return [
            {k: e[k] for k in ("summary", "details", "usage") if k in e}
            for e in observation.entries
            if e["type"] == "compaction"
        ]

    assert nulls(real) == [{"summary": "S", "details": None, "usage": None}, {"summary": "T"}]
    assert nulls(sim) == nulls(real)
