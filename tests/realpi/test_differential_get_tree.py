"""Differential: ``ctx.session_manager.get_tree`` of a Python extension, real Pi 1.6 against the
simulator.

``getTree()`` (core/session-manager.d.ts:178, session-manager.js:1136-1172) answers the session's
entries (every branch, the header left out) as nodes ``{entry, children, label?,
labelTimestamp?}``: an entry whose ``parentId`` is null (or itself, or unknown) is a root, every
other is its parent's child; each node's children are sorted by timestamp, oldest first; a node
carries its entry's current label and the timestamp of the label entry that set it.

The scenario: two prompts, a label on the first user message, a tree navigation back to the
second user message and a third prompt, which starts a second branch beside the second prompt.
The extension's ``/tree`` notifies the tree as nested rows (what each entry is, its label and
whether ``labelTimestamp`` is the label entry's timestamp, its children). The test asserts real
Pi's tree explicitly, then the simulator's.
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
    def what(entry):
        if entry["type"] == "message":
            message = entry["message"]
            content = message.get("content")
            text = content if isinstance(content, str) else "".join(
                part.get("text", "") for part in content or [] if isinstance(part, dict)
            )
            return message["role"] + ":" + text
        if entry["type"] == "custom":
            return "custom:" + entry["customType"]
        return entry["type"]

    def row(node, stamps):
        name = what(node["entry"])
        if "label" in node or "labelTimestamp" in node:
            same = node.get("labelTimestamp") == stamps.get(node["entry"]["id"])
            name += " #" + str(node.get("label")) + (" @label-entry" if same else " @other")
        children = [row(child, stamps) for child in node["children"]]
        return [name, children] if children else name

    async def label(args, ctx):
        for entry in ctx.session_manager.get_entries():
            if entry["type"] == "message" and entry["message"]["role"] == "user":
                pi.set_label(entry["id"], args)
                return

    async def tree(args, ctx):
        stamps = {}
        for entry in ctx.session_manager.get_entries():
            if entry["type"] == "label":
                stamps[entry["targetId"]] = entry["timestamp"]
        ctx.ui.notify("tree: " + json.dumps([row(node, stamps) for node in ctx.session_manager.get_tree()]), "info")

    pi.register_command("label", label)
    pi.register_command("tree", tree)
"""


def test_get_tree_answers_every_branch_as_nested_nodes_with_labels(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("get_tree_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]})
    ops: list[Any] = [
        {"prompt": "one"},
        {"prompt": "two"},
        {"command": "/label first"},
        {"tree": {"to": 2}},
        {"prompt": "three"},
        {"command": "/tree"},
    ]
    real, sim = play(targets, sc, ops, "get_tree_probe:extension")
    # One root; the label node is a child of the leaf it was appended at; the navigation back to
    # "two" left a second branch beside it, after it (its timestamp is later); the labelled
    # node carries its label and the label entry's timestamp, the others neither key.
    expected = [
        [
            "model_change",
            [
                [
                    "thinking_level_change",
                    [
                        [
                            "system:",
                            [
                                [
                                    "user:one #first @label-entry",
                                    [
                                        [
                                            "assistant:a1",
                                            [
                                                ["user:two", [["assistant:a2", ["label"]]]],
                                                ["user:three", ["assistant:a3"]],
                                            ],
                                        ]
                                    ],
                                ]
                            ],
                        ]
                    ],
                ]
            ],
        ]
    ]
    assert notes(real)["tree"] == expected, json.dumps(notes(real).get("tree"), indent=1)
    assert notes(sim).get("tree") == notes(real)["tree"]
    assert_equivalent(real, sim)
