"""Spec §6, §13: what ``session_before_compact`` refuses before any synthesis starts.

Pi 1.6 never calls the hook without a cut point, and always prepares the settings it holds,
so the simulated host cannot produce these inputs. The handler is called directly, with a
minimal context: a refusal must cancel, notify, record the failure and start nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    CompactionPreparation,
    CompactionSettings,
    SessionBeforeCompactEvent,
)
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.reference.psc.config import load_extension_config
from pi_continuity_harness.reference.psc.extension import Continuity
from pi_continuity_harness.reference.psc.state import LiveSettings, RuntimeState

MODEL = Model(provider="fake", id="fake-model", context_window=200_000, max_tokens=32_000)
LIVE = {"compaction": {"enabled": True, "reserveTokens": 50_000, "keepRecentTokens": 2_000}}
PREPARATION = CompactionPreparation(
    first_kept_entry_id="kept0001",
    messages_to_summarize=[{"role": "user", "content": "task step 1", "timestamp": 1}],
    turn_prefix_messages=[],
    is_split_turn=False,
    tokens_before=150_001,
    previous_summary=None,
    file_ops={},
    settings=CompactionSettings(enabled=True, reserve_tokens=50_000, keep_recent_tokens=2_000),
)


class _Pi:
    """A refused hook makes no ``pi`` call at all."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a refused hook called pi.{name}")


def _setup(
    tmp_path: Path, preparation: CompactionPreparation
) -> tuple[Continuity, RuntimeState, SessionBeforeCompactEvent]:
    app = Continuity(_Pi())  # type: ignore[arg-type]
    app.state = RuntimeState(
        cwd=str(tmp_path),
        session_id="0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        trusted=True,
        config=load_extension_config(str(tmp_path), trusted=True),
        live=LiveSettings.capture(LIVE),
    )
    event = SessionBeforeCompactEvent(
        preparation=preparation,
        branch_entries=[],
        custom_instructions=None,
        reason="manual",
        will_retry=False,
        signal=AbortController().signal,
    )
    return app, app.state, event


def _before_compact(
    tmp_path: Path, preparation: CompactionPreparation, model: Model | None = MODEL
) -> tuple[BeforeCompactResult, list[str], RuntimeState]:
    app, state, event = _setup(tmp_path, preparation)
    notes: list[str] = []
    ui = SimpleNamespace(notify=lambda message, kind="info": notes.append(message))
    result = asyncio.run(app.on_before_compact(event, SimpleNamespace(model=model, ui=ui)))  # type: ignore[arg-type]
    return result, notes, state


@pytest.mark.parametrize(
    "changes",
    [
        {"first_kept_entry_id": ""},
        {"messages_to_summarize": []},
    ],
    ids=["no-first-kept-entry", "nothing-to-summarize"],
)
def test_a_prepared_compaction_without_a_viable_cut_point_is_cancelled(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    result, notes, state = _before_compact(tmp_path, replace(PREPARATION, **changes))
    assert result == BeforeCompactResult(cancel=True)
    assert notes == [
        "Pi Session Continuity failed: the prepared compaction has no viable cut point. "
        "Native compaction was cancelled."
    ]
    assert state.last_failure == "manual compaction refused: the prepared compaction has no viable cut point"
    assert state.active is None and state.prepared is None
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_a_split_turn_prefix_alone_is_a_viable_cut_point(tmp_path: Path) -> None:
    prefix = [{"role": "user", "content": "a long turn", "timestamp": 1}]
    preparation = replace(
        PREPARATION, messages_to_summarize=[], turn_prefix_messages=prefix, is_split_turn=True
    )
    app, state, event = _setup(tmp_path, preparation)
    assert app._refusal(state, event, MODEL) is None
    assert app._refusal(
        state, replace(event, preparation=replace(preparation, turn_prefix_messages=[])), MODEL
    )


def test_no_active_model_is_cancelled(tmp_path: Path) -> None:
    result, notes, state = _before_compact(tmp_path, PREPARATION, model=None)
    assert result == BeforeCompactResult(cancel=True)
    assert notes == ["Pi Session Continuity failed: no active model. Native compaction was cancelled."]
    assert state.active is None


def test_the_preparation_settings_not_the_live_snapshot_are_enforced_before_synthesis(tmp_path: Path) -> None:
    # The live snapshot (reserve 50,000) is valid for the window; the settings Pi prepared
    # this compaction with are not, and they are what counts (spec §6, §13).
    invalid = CompactionSettings(enabled=True, reserve_tokens=200_000, keep_recent_tokens=2_000)
    result, notes, _state = _before_compact(tmp_path, replace(PREPARATION, settings=invalid))
    assert result == BeforeCompactResult(cancel=True)
    (note,) = notes
    assert "reserveTokens (200000) must be lower than the context window (200000)" in note
