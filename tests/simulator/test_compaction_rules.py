"""Unit tests of the compaction rules: threshold, estimates, cut point, ``prepare_compaction``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.events import CompactionSettings
from pi_continuity_harness.simulator.compaction import (
    estimate_context_tokens,
    estimate_projected_context_tokens,
    format_file_operations,
    prepare_compaction,
    should_compact,
)
from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.messages import (
    UNDEFINED,
    calculate_context_tokens,
    estimate_tokens,
    serialize_conversation,
)
from pi_continuity_harness.simulator.session_manager import SessionManager

from .loop_clock import ManualLoopClock

SETTINGS = CompactionSettings(enabled=True, reserve_tokens=4000, keep_recent_tokens=100)


def sm(tmp_path: Path) -> SessionManager:
    return SessionManager.create(
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(4),
        persist=False,
    )


def user(chars: int, text: str = "u") -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": (text * chars)[:chars]}], "timestamp": 1}


def assistant(
    chars: int, tokens: int = 0, stop: str = "stop", calls: list[Any] | None = None
) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": "a" * chars}] + (calls or [])
    return {
        "role": "assistant",
        "content": content,
        "provider": "fake",
        "model": "m",
        "usage": {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens},
        "stopReason": stop,
        "timestamp": 2,
    }


def prepare(manager: SessionManager, settings: CompactionSettings = SETTINGS) -> Any:
    projection = manager.build_session_projection()
    before = estimate_projected_context_tokens(
        projection, manager.branch_position, manager.latest_invalidating_position()
    )
    return prepare_compaction(manager.branch_view(), projection, settings, before.tokens)


@pytest.mark.parametrize(("tokens", "expected"), [(15999, False), (16000, False), (16001, True)])
def test_threshold_is_strictly_greater(tokens: int, expected: bool) -> None:
    assert should_compact(tokens, 20000, SETTINGS) is expected
    assert should_compact(tokens, 20000, CompactionSettings(False, 4000, 100)) is False


def test_calculate_context_tokens_prefers_total_then_sums() -> None:
    assert calculate_context_tokens({"totalTokens": 9, "input": 1}) == 9
    assert calculate_context_tokens({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4}) == 10
    assert calculate_context_tokens(None) == 0


def test_estimates_are_chars_over_four_rounded_up() -> None:
    assert estimate_tokens(user(9)) == 3
    call = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}
    assert estimate_tokens(assistant(4, calls=[call])) == 6  # ceil((4 text + 4 name + 16 JSON args) / 4)
    assert estimate_tokens({"role": "user", "content": [{"type": "image"}]}) == 1200
    assert estimate_tokens({"role": "compactionSummary", "summary": "x" * 8}) == 2
    assert estimate_tokens({"role": "weird"}) == 0


def test_estimate_context_tokens_uses_last_valid_usage_plus_trailing() -> None:
    messages = [user(40), assistant(4, tokens=1000), user(9), assistant(4, tokens=0, stop="error")]
    estimate = estimate_context_tokens(messages)
    assert (estimate.tokens, estimate.usage_tokens, estimate.last_usage_index) == (1000 + 3 + 1, 1000, 1)
    assert estimate_context_tokens([user(40)]).tokens == 10


def test_projected_estimate_distrusts_usage_older_than_a_context_edit(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(40))
    a = manager.append_message(assistant(8, tokens=5000))
    manager.append_message(user(12))
    args = (manager.branch_position, manager.latest_invalidating_position())
    assert estimate_projected_context_tokens(manager.build_session_projection(), *args).tokens == 5003
    manager.append_context_edit(a, None)
    args = (manager.branch_position, manager.latest_invalidating_position())
    assert estimate_projected_context_tokens(manager.build_session_projection(), *args).tokens == 10 + 3


def test_small_session_prepares_nothing(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(8))
    manager.append_message(assistant(8, tokens=17000))
    assert prepare(manager) is None


def test_cut_at_a_user_message_is_a_clean_turn(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(400))
    manager.append_message(assistant(400))
    u2 = manager.append_message(user(400))
    manager.append_message(assistant(4))
    prepared = prepare(manager)
    p = prepared.preparation
    assert (
        p.first_kept_entry_id,
        p.is_split_turn,
        len(p.messages_to_summarize),
        len(p.turn_prefix_messages),
    ) == (u2, False, 2, 0)


def test_cut_at_an_assistant_splits_the_turn(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(400))
    manager.append_message(assistant(400))
    manager.append_message(user(8))
    a2 = manager.append_message(assistant(400))
    p = prepare(manager).preparation
    assert (
        p.first_kept_entry_id,
        p.is_split_turn,
        len(p.messages_to_summarize),
        len(p.turn_prefix_messages),
    ) == (a2, True, 2, 1)


def test_tool_results_are_never_cut_points(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(400))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}
    a = manager.append_message(assistant(4, calls=[call]))
    manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "x" * 800}],
            "isError": False,
            "timestamp": 3,
        }
    )
    assert prepare(manager).preparation.first_kept_entry_id == a


def test_cut_moves_back_over_metadata_and_marks_split_turn(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(8))
    manager.append_message(assistant(400))
    manager.append_message(user(8))
    manager.append_message(assistant(400))
    custom = manager.append_custom_entry("probe")
    manager.append_model_change("fake", "m")
    manager.append_message(user(800))
    manager.append_message(assistant(2))
    p = prepare(manager).preparation
    assert (
        p.first_kept_entry_id,
        p.is_split_turn,
        len(p.turn_prefix_messages),
        len(p.messages_to_summarize),
    ) == (custom, True, 2, 2)


def test_previous_summary_and_already_compacted(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(400))
    manager.append_message(assistant(400))
    u2 = manager.append_message(user(400))
    manager.append_compaction("FIRST", u2, 1, UNDEFINED, False)
    assert prepare(manager) is None  # the last entry is a compaction
    manager.append_message(assistant(400))
    manager.append_message(user(400))
    manager.append_message(assistant(400))
    p = prepare(manager).preparation
    assert p.previous_summary == "FIRST"
    assert any(m["role"] == "user" for m in p.messages_to_summarize)  # the kept prompt is summarised again


def test_recovery_suffix_moves_the_cut_onto_the_omitted_attempt(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(8))
    manager.append_message(assistant(400))
    manager.append_message(user(800))
    failed = manager.append_message(assistant(0, stop="error"))
    manager.append_context_edit(failed, None)
    p = prepare(manager).preparation
    assert p.first_kept_entry_id == failed
    assert p.is_split_turn and [m["role"] for m in p.turn_prefix_messages] == ["user"]


def test_file_operations_from_tool_calls_and_previous_details(tmp_path: Path) -> None:
    manager = sm(tmp_path)
    manager.append_message(user(400))
    calls = [
        {"type": "toolCall", "id": "r", "name": "read", "arguments": {"path": "a.md"}},
        {"type": "toolCall", "id": "w", "name": "write", "arguments": {"path": "b.md"}},
        {"type": "toolCall", "id": "e", "name": "edit", "arguments": {"path": "a.md"}},
        {"type": "toolCall", "id": "x", "name": "write", "arguments": {"path": ""}},  # no path: skipped
    ]
    manager.append_message(assistant(400, calls=calls))
    manager.append_message(user(800))
    manager.append_message(assistant(2))
    prepared = prepare(manager)
    assert prepared.preparation.file_ops == {"read": ["a.md"], "written": ["b.md"], "edited": ["a.md"]}
    assert (
        format_file_operations([], ["a.md", "b.md"]) == "\n\n<modified-files>\na.md\nb.md\n</modified-files>"
    )
    assert format_file_operations([], []) == ""


def test_serialize_conversation_is_pis_summary_transcript() -> None:
    """``serializeConversation`` (compaction/utils.js): user and tool-result text joined with "",
    assistant text with contentText's "\\n", tool calls as ``name(k=JSON)``, thinking left out,
    tool results cut at 2,000 characters, empty messages skipped."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "one "}, {"type": "text", "text": "two"}]},
        {"role": "user", "content": []},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hidden"},
                {"type": "text", "text": "first"},
                {"type": "text", "text": "second"},
                {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "é.md", "limit": 2}},
            ],
        },
        {"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "r" * 2005}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "d", "name": "bash", "arguments": {}}]},
    ]
    assert serialize_conversation(messages) == "\n\n".join(
        [
            "[User]: one two",
            "[Assistant]: first\nsecond",
            '[Assistant tool calls]: read(path="é.md", limit=2)',
            "[Tool result]: " + "r" * 2000 + "\n\n[... 5 more characters truncated]",
            "[Assistant tool calls]: bash()",
        ]
    )


def test_projected_estimate_finds_the_entry_of_the_usage_among_later_entries(tmp_path: Path) -> None:
    """The usage's entry is found where it is, with entries after it (one without messages, a
    context edit, a later user message): the edit is newer than the usage, so the usage is
    distrusted and every message is estimated (5 + 2 + 3); taking a later entry for the usage's
    would trust it (5000 + 3). Without the edit the usage stands."""
    manager = sm(tmp_path)
    u1 = manager.append_message(user(40))
    manager.append_message(assistant(8, tokens=5000))
    manager.append_thinking_level_change("high")
    manager.append_message(user(12))
    args = (manager.branch_position, manager.latest_invalidating_position())
    assert estimate_projected_context_tokens(manager.build_session_projection(), *args).tokens == 5003
    manager.append_context_edit(u1, {"content": "x" * 20})
    manager.append_message(user(12))
    args = (manager.branch_position, manager.latest_invalidating_position())
    projection = manager.build_session_projection()
    assert len(projection.messages) == 4
    assert estimate_projected_context_tokens(projection, *args).tokens == 5 + 2 + 3 + 3
