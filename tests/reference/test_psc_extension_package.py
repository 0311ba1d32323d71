"""The reference package as a whole: entry point, timing hook, a full Brief.

Its boundary (it imports only the extension API) is held by ``tests/test_boundaries.py``.
"""

from __future__ import annotations

import threading
from importlib import metadata
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

import pi_continuity_harness.reference.psc as psc
from pi_continuity_harness.reference.psc.frontmatter import parse_brief
from pi_continuity_harness.reference.psc.lifecycle import set_timing_observer
from pi_continuity_harness.scenario.implementations import ENTRY_POINT_GROUP, resolve_implementation

from .sim import scenario, simulate_run, threshold_turns


def test_the_entry_point_loads_the_factory() -> None:
    (point,) = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == "reference"]
    assert point.value == "pi_continuity_harness.reference.psc:extension"
    assert point.load() is psc.extension
    name, factory = resolve_implementation("reference")
    assert (name, factory) == ("reference", psc.extension)


def test_the_factory_registers_one_command_and_the_lifecycle_handlers(tmp_path: Path) -> None:
    registered: dict[str, Any] = {"events": [], "commands": []}

    class Recorder:
        def on(self, event: str, handler: Any) -> Any:
            registered["events"].append(event)
            return lambda: None

        def register_command(self, name: str, handler: Any, **options: Any) -> None:
            registered["commands"].append((name, options.get("get_argument_completions")))

    psc.extension(Recorder())  # type: ignore[arg-type]
    assert sorted(registered["events"]) == sorted(
        [
            "session_start",
            "model_select",
            "session_before_compact",
            "session_compact",
            "session_compact_failed",
            "session_shutdown",
        ]
    )
    ((name, completions),) = registered["commands"]
    assert name == "continuity"
    assert [c["value"] for c in completions("")] == ["status", "checkpoint", "settings"]
    assert [c["value"] for c in completions("ch")] == ["checkpoint"]


def test_no_timers_threads_or_background_tasks_are_left_behind(tmp_path: Path) -> None:
    before = threading.active_count()
    replies, ops = threshold_turns()
    simulate_run(tmp_path, scenario(agent=replies, operations=ops))
    assert threading.active_count() == before


def test_the_timing_hook_reports_each_phase_and_the_fsync_count(tmp_path: Path) -> None:
    seen: list[tuple[str, float, dict[str, Any]]] = []
    previous = set_timing_observer(lambda phase, seconds, data: seen.append((phase, seconds, dict(data))))
    try:
        replies, ops = threshold_turns()
        simulate_run(tmp_path, scenario(agent=replies, operations=ops))
    finally:
        set_timing_observer(previous)
    assert [phase for phase, _, _ in seen] == ["synthesis", "validation", "write", "reread", "hash"]
    assert all(seconds >= 0 for _, seconds, _ in seen)
    write = next(data for phase, _, data in seen if phase == "write")
    # file fsync + directory fsync, plus one parent fsync per directory created on the way
    assert write["fsyncs"] == 2 + 3


def test_a_complete_brief_produced_end_to_end(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    """A threshold handoff's summary: exactly the Brief re-read from disk (spec §3, §8, §9)."""
    replies, ops = threshold_turns()
    run = simulate_run(tmp_path, scenario(agent=replies, operations=ops, seed=7))
    (entry,) = run.compactions()
    summary = entry["summary"]
    assert parse_brief(summary).frontmatter.handoff_reason == "threshold"
    assert summary.replace(run.result.host.paths.workdir, "$WORK") == snapshot
