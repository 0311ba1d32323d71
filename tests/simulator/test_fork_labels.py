"""A fork of a path that holds ``label`` entries on the simulator
(``SessionManager.create_branched_session``), one test per rule of Pi 1.6's
``createBranchedSession`` (session-manager.js:1226-1330). The sessions are written by hand, so a
rule no live session reaches (a compaction whose ``firstKeptEntryId`` names a label entry) is
tested too. The differential twin is ``tests/realpi/test_differential_fork_labels.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.session_manager import SessionManager

from .loop_clock import ManualLoopClock
from .session_files import HEADER
from .session_files import entry as _entry


def _label(entry_id: str, parent: str, second: int, target: str, label: str) -> dict[str, Any]:
    return _entry(entry_id, parent, second, type="label", targetId=target, label=label)


def _fork(tmp_path: Path, leaf: str, *entries: dict[str, Any]) -> list[dict[str, Any]]:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in (HEADER, *entries)), encoding="utf-8")
    manager = SessionManager.open(
        str(path),
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(1),
    )
    manager.create_branched_session(leaf)
    return manager.get_entries()


def test_a_fork_drops_the_paths_label_entries_and_rechains_the_rest(tmp_path: Path) -> None:
    entries = _fork(tmp_path, "b", _entry("a", None, 1), _label("l1", "a", 2, "a", ""), _entry("b", "l1", 3))
    assert [(e["id"], e["parentId"]) for e in entries] == [("a", None), ("b", "a")]


def test_a_fork_writes_the_current_labels_of_the_kept_entries_in_map_order_after_the_copy(
    tmp_path: Path,
) -> None:
    entries = _fork(
        tmp_path,
        "b",
        _entry("a", None, 1),
        _label("l1", "a", 2, "a", "one"),
        _entry("b", "l1", 3),
        _label("l2", "b", 4, "b", "two"),
        _label("l3", "l2", 5, "a", ""),  # a delete: a's next set goes to the end
        _label("l4", "l3", 6, "a", "three"),
        _label("l5", "l4", 7, "b", "four"),  # a set of a present key stays in place
        _entry("c", "l5", 8),
        _label("l6", "c", 9, "c", "past the fork point"),
    )
    kept, written = entries[:2], entries[2:]
    assert [(e["id"], e["parentId"]) for e in kept] == [("a", None), ("b", "a")]
    assert [(e["targetId"], e["label"], e["timestamp"]) for e in written] == [
        ("b", "four", "2026-01-01T00:00:07.000Z"),
        ("a", "three", "2026-01-01T00:00:06.000Z"),
    ]
    assert [e["parentId"] for e in written] == ["b", written[0]["id"]]
    assert not {e["id"] for e in written} & {"a", "b", "l1", "l2", "l3", "l4", "l5"}
    assert list(written[0]) == ["type", "id", "parentId", "timestamp", "targetId", "label"]


def test_a_fork_points_a_compactions_first_kept_entry_at_a_dropped_label_to_the_next_kept_entry(
    tmp_path: Path,
) -> None:
    compaction = {"summary": "s", "tokensBefore": 1, "firstKeptEntryId": "l1"}
    entries = _fork(
        tmp_path,
        "c",
        _entry("a", None, 1),
        _label("l1", "a", 2, "a", ""),
        _entry("b", "l1", 3),
        _entry("c", "b", 4, type="compaction", **compaction),
    )
    assert [(e["id"], e.get("firstKeptEntryId")) for e in entries] == [("a", None), ("b", None), ("c", "b")]
