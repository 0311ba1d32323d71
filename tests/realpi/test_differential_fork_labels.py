"""Differential: a fork of a path that holds ``label`` entries (``pi.set_label``), real Pi 1.6
against the simulator.

``createBranchedSession`` (session-manager.js:1226-1330) drops the path's ``label`` entries,
re-chains the rest, and writes the session's current labels of the kept entries after them
(``labelsById`` in its ``Map`` order, each with its ``labelTimestampsById``, :1270-1320). A label
set after the fork point on a kept entry is written; a cleared one is not; one of an entry past
the fork point is not; a label set again keeps its place, one cleared and set again goes to the
end. The simulator copied the path's label entries as they were.

The extension's ``/label <n> <text>`` labels the n-th user or assistant message.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
def extension(pi):
    async def label(args, ctx):
        which, _, text = args.partition(" ")
        found = [
            e["id"]
            for e in ctx.session_manager.get_entries()
            if e["type"] == "message" and e["message"]["role"] in ("user", "assistant")
        ]
        pi.set_label(found[int(which) - 1], text)

    pi.register_command("label", label)
"""


def _rows(entries: list[dict[str, Any]]) -> list[Any]:
    """Each message and label entry in file order: a message's text, a label's target text and
    label, and whether the entry's parent is the entry before it."""
    texts: dict[str, str] = {}
    rows: list[Any] = []
    previous: str | None = None
    for e in entries:
        if e["type"] == "message" and e["message"]["role"] in ("user", "assistant"):
            content = e["message"]["content"]
            texts[e["id"]] = content if isinstance(content, str) else content[0]["text"]
            rows.append(["message", texts[e["id"]], e["parentId"] == previous])
        elif e["type"] == "label":
            rows.append(
                ["label", texts.get(e["targetId"], e["targetId"]), e.get("label"), e["parentId"] == previous]
            )
        if e["type"] != "session":
            previous = e["id"]
    return rows


def test_a_fork_drops_the_paths_label_entries_and_writes_the_current_labels_after_the_copy(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("fork_labels_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]})
    ops: list[Any] = [
        {"prompt": "u1"},
        {"command": "/label 1 first"},
        {"prompt": "u2"},
        {"command": "/label 2 second"},
        {"command": "/label 1 "},
        {"command": "/label 1 again"},
        {"command": "/label 3 gone"},
        {"command": "/label 2 twice"},
        {"prompt": "u3"},
        {"command": "/label 5 off"},
        {"command": "/label 4 late"},
        {"fork": {"message": 3}},
    ]
    real, sim = play(targets, sc, ops, spec)

    expected = [
        ["message", "u1", True],
        ["message", "a1", True],
        ["message", "u2", True],
        ["message", "a2", True],
        # a1 set again keeps its place (a Map); u1, cleared and set, moved to the end.
        ["label", "a1", "twice", True],
        ["label", "u1", "again", True],
        ["label", "u2", "gone", True],
        ["label", "a2", "late", True],
    ]
    assert _rows(real.entries) == expected, json.dumps(_rows(real.entries), indent=1)
    assert _rows(sim.entries) == expected, json.dumps(_rows(sim.entries), indent=1)
    assert_equivalent(real, sim)
