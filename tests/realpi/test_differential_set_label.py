"""Differential: ``pi.set_label`` and ``ctx.session_manager.get_label`` of a Python extension, real
Pi 1.6 against the simulator.

``pi.setLabel(entryId, label)`` (types.d.ts:1323, loader.js:333-336, agent-session.js:2902-2904)
is ``SessionManager.appendLabelChange`` (session-manager.js:1055-1075): it throws
``Entry <id> not found`` for an unknown id, else appends a ``label`` entry at the leaf
(``targetId``, ``label``; no ``label`` key when it is ``undefined``, the Python ``None``) and
sets the label, or clears it when the label is empty or missing. ``getLabel(id)``
(session-manager.js:1047-1049) answers the label, or ``undefined`` (``None``).

The extension's ``/label <which> [<label>]`` labels the first user or assistant message (or an
unknown id) and records ``get_label`` of both messages after the call, or the error it got;
``/labels`` notifies the record. The test asserts real Pi's record and label entries
explicitly, then the simulator's.
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

from pi_continuity_harness.api import PiError


def extension(pi):
    seen = []

    def ids(ctx):
        found = {}
        for entry in ctx.session_manager.get_entries():
            if entry["type"] == "message":
                found.setdefault(entry["message"]["role"], entry["id"])
        return found

    async def label(args, ctx):
        which, _, text = args.partition(" ")
        found = ids(ctx)
        target = found.get(which, which)
        value = None if text == "<none>" else text
        try:
            pi.set_label(target, value)
        except PiError as error:
            seen.append([args, "PiError", str(error)])
            return
        sm = ctx.session_manager
        seen.append([args, sm.get_label(found["user"]), sm.get_label(found["assistant"]), sm.get_label("nope")])

    async def labels(args, ctx):
        ctx.ui.notify("labels: " + json.dumps(seen), "info")

    pi.register_command("label", label)
    pi.register_command("labels", labels)
"""


def _label_rows(entries: list[dict[str, Any]]) -> list[Any]:
    """Each label entry: which message it targets, whether it has a ``label`` key, the label."""
    roles = {e["id"]: e["message"]["role"] for e in entries if e["type"] == "message"}
    return [
        [roles.get(e["targetId"], e["targetId"]), "label" in e, e.get("label")]
        for e in entries
        if e["type"] == "label"
    ]


def test_set_label_appends_a_label_entry_and_get_label_answers_the_current_label(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("set_label_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "hello back"}]})
    ops: list[Any] = [
        {"prompt": "hello"},
        {"command": "/label user one"},
        {"command": "/label user two"},
        {"command": "/label assistant keep"},
        {"command": "/label user <none>"},
        {"command": "/label assistant "},
        {"command": "/label missing three"},
        {"command": "/labels"},
    ]
    real, sim = play(targets, sc, ops, "set_label_probe:extension")

    expected_notes = [
        ["user one", "one", None, None],
        ["user two", "two", None, None],
        ["assistant keep", "two", "keep", None],
        # None (undefined) and "" clear the label.
        ["user <none>", None, "keep", None],
        ["assistant ", None, None, None],
        ["missing three", "PiError", "Entry missing not found"],
    ]
    assert notes(real)["labels"] == expected_notes, json.dumps(notes(real).get("labels"), indent=1)
    expected_entries = [
        ["user", True, "one"],
        ["user", True, "two"],
        ["assistant", True, "keep"],
        ["user", False, None],
        ["assistant", True, ""],
    ]
    assert _label_rows(real.entries) == expected_entries, json.dumps(_label_rows(real.entries), indent=1)
    assert notes(sim).get("labels") == notes(real)["labels"]
    assert _label_rows(sim.entries) == _label_rows(real.entries)
    assert_equivalent(real, sim)
