"""The preview a boundary handler's drafts are applied to (``boundary.preview_boundary_drafts``;
Pi's ``_buildBoundaryContext``, agent-session.js:674-693): the drafts applied to a preview of
the branch, never to the session, with the error an invalid draft raises; for no drafts (what
every handler that returns none leaves) no preview is built, and the answer is the one a
preview would give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.simulator.boundary import (
    BoundaryDraftError,
    apply_boundary_drafts,
    preview_boundary_drafts,
)
from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.session_manager import SessionManager

from .loop_clock import ManualLoopClock


def _manager(tmp_path: Path, *, header: bool = True) -> SessionManager:
    (tmp_path / "sessions").mkdir(exist_ok=True)
    options: dict[str, Any] = {
        "cwd": str(tmp_path / "project"),
        "session_dir": str(tmp_path / "sessions"),
        "clock": VirtualClock(ManualLoopClock()),
        "rng": SeededRandom(1),
    }
    manager = SessionManager.create(**options) if header else SessionManager(**options, persist=False)
    if header:
        manager.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1})
    return manager


def test_no_drafts_append_nothing_and_build_no_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = _manager(tmp_path)
    assert apply_boundary_drafts(manager.branch_preview(), []) == []

    def no_preview() -> SessionManager:
        raise AssertionError("a preview was built for no drafts")

    monkeypatch.setattr(manager, "branch_preview", no_preview)
    before = manager.get_entries()
    assert preview_boundary_drafts(manager, []) == []
    assert manager.get_entries() == before


def test_no_drafts_without_a_session_header_raise_as_the_preview_does(tmp_path: Path) -> None:
    manager = _manager(tmp_path, header=False)
    assert manager.get_header() is None
    with pytest.raises(ValueError, match="Session header is missing"):
        manager.branch_preview()
    with pytest.raises(ValueError, match="Session header is missing"):
        preview_boundary_drafts(manager, [])


def test_drafts_are_applied_to_a_preview_and_an_invalid_one_raises(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    before = manager.get_entries()
    [entry] = preview_boundary_drafts(manager, [{"type": "custom", "customType": "note", "data": {"a": 1}}])
    assert entry["type"] == "custom"
    assert manager.get_entries() == before  # the session itself is untouched
    with pytest.raises(BoundaryDraftError, match="reading 'type'"):
        preview_boundary_drafts(manager, [None])
    with pytest.raises(BoundaryDraftError, match="not iterable"):
        preview_boundary_drafts(manager, 5)
