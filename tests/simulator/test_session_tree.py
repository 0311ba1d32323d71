"""``ctx.session_manager.get_tree`` on the simulator (``SessionManager.get_tree``), one test per
rule of Pi 1.6's ``getTree`` (session-manager.js:1136-1172). The sessions are written by hand, so
a rule no live session reaches (children out of timestamp order, an orphan, an entry that is
its own parent) is tested too. The differential twin is
``tests/realpi/test_differential_get_tree.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.session_manager import SessionManager

from .loop_clock import ManualLoopClock
from .session_files import HEADER
from .session_files import entry as _entry


def _tree(tmp_path: Path, *entries: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in (HEADER, *entries)), encoding="utf-8")
    manager = SessionManager.open(
        str(path),
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(1),
    )
    return manager.get_tree()


def _shape(nodes: list[dict[str, Any]]) -> list[Any]:
    return [[n["entry"]["id"], _shape(n["children"])] if n["children"] else n["entry"]["id"] for n in nodes]


def test_get_tree_sorts_each_nodes_children_by_timestamp_oldest_first(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path, _entry("a", None, 1), _entry("late", "a", 9), _entry("early", "a", 5), _entry("mid", "a", 7)
    )
    assert _shape(tree) == [["a", ["early", "mid", "late"]]]


def test_get_tree_keeps_the_file_order_of_children_with_equal_timestamps(tmp_path: Path) -> None:
    tree = _tree(tmp_path, _entry("a", None, 1), _entry("x", "a", 5), _entry("y", "a", 5))
    assert _shape(tree) == [["a", ["x", "y"]]]


def test_get_tree_makes_roots_of_null_self_and_unknown_parents_in_file_order(tmp_path: Path) -> None:
    tree = _tree(tmp_path, _entry("a", None, 1), _entry("self", "self", 2), _entry("orphan", "gone", 3))
    assert _shape(tree) == ["a", "self", "orphan"]


def test_get_tree_leaves_the_header_out_and_holds_each_entry_whole(tmp_path: Path) -> None:
    entry = _entry("a", None, 1, data={"k": [1, 2]})
    [node] = _tree(tmp_path, entry)
    assert node == {"entry": entry, "children": []}, "no label keys without a label"


def test_get_tree_gives_a_node_its_current_label_and_the_timestamp_of_the_label_entry_that_set_it(
    tmp_path: Path,
) -> None:
    label = {"type": "label", "targetId": "a"}
    tree = _tree(
        tmp_path,
        _entry("a", None, 1),
        _entry("b", "a", 2),
        _entry("l1", "b", 3, **label, label="old"),
        _entry("l2", "l1", 4, **label, label="new"),
        _entry("l3", "l2", 5, type="label", targetId="b", label="gone"),
        _entry("l4", "l3", 6, type="label", targetId="b", label=""),
    )
    a, b = tree[0], tree[0]["children"][0]
    assert (a["label"], a["labelTimestamp"]) == ("new", "2026-01-01T00:00:04.000Z")
    assert "label" not in b and "labelTimestamp" not in b, "an empty label clears it"
