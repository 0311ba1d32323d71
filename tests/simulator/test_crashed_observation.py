"""What an observation shows after Pi crashed: what the dead process left on disk, as the real-Pi
target reads it (``PiTarget.observe``: a crashed process answers no ``get_entries``, so the
entries are the session file's lines, and an in-memory session leaves none). The simulator read
them from the dead runtime's memory, and differential exploration of the continuity cases found
the difference (seed 18: an in-memory session that crashed after a compaction)."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import CrashOp, PromptOp
from pi_continuity_harness.targets.sim import SimTarget


def _crashed(tmp_path: Path, session: str) -> tuple[SimTarget, str | None, int]:
    target = SimTarget("reference", tmp_path / "run")
    scenario = parse_scenario(
        {"name": "crashed", "session": session, "model": {"agent": [{"text": "one"}]}}, "crashed"
    )
    target.start(scenario)
    target.perform(PromptOp.model_validate({"prompt": {"text": "hello"}}))
    alive = target.observe()
    target.perform(CrashOp.model_validate({"crash": {}}))
    return target, alive.session_id, len(alive.entries)


def test_a_crashed_in_memory_session_shows_no_entry_and_keeps_its_id(tmp_path: Path) -> None:
    target, session_id, entries = _crashed(tmp_path, "memory")
    try:
        assert entries > 0
        observation = target.observe()
        assert observation.entries == []
        assert observation.session_file is None
        assert observation.session_id == session_id
    finally:
        target.close()


def test_a_crashed_sessions_entries_are_its_files_lines(tmp_path: Path) -> None:
    target, session_id, entries = _crashed(tmp_path, "file")
    try:
        observation = target.observe()
        assert observation.session_file is not None
        lines = observation.session_file_entries()
        assert lines[0]["id"] == observation.session_id == session_id
        assert observation.entries == lines[1:]
        assert len(observation.entries) == entries
    finally:
        target.close()
