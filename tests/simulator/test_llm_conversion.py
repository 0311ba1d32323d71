"""``LlmConversion`` (simulator/messages.py): ``convertToLlm`` of successive requests, each
custom, summary or shell-command message converted once, so a request after a compaction is the
same objects as the one before it and the resumed request walks take it over (issue 16)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.simulator.messages import LlmConversion, convert_to_llm


def _conversation() -> list[dict[str, Any]]:
    return [
        {"role": "compactionSummary", "summary": "so far", "tokensBefore": 10, "timestamp": 1},
        {"role": "branchSummary", "summary": "a branch", "fromId": "x", "timestamp": 2},
        {"role": "custom", "customType": "note", "content": "a note", "display": True, "timestamp": 3},
        {"role": "custom", "customType": "note", "content": [{"type": "text", "text": "b"}], "timestamp": 4},
        {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 2, "timestamp": 5},
        {"role": "bashExecution", "command": "pwd", "output": "", "excludeFromContext": True, "timestamp": 6},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 7},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"},
        {"role": "toolResult", "toolCallId": "c", "content": [], "isError": False},
        {"role": "system", "content": "rules"},
        {"role": "somethingElse", "text": "dropped"},
    ]


def test_each_request_is_what_convert_to_llm_makes_and_reuses_the_converted_messages() -> None:
    conversion = LlmConversion()
    messages = _conversation()
    first = conversion.convert(messages)
    assert first == convert_to_llm(messages)
    again = conversion.convert([*messages, {"role": "user", "content": "more"}])
    assert again == convert_to_llm([*messages, {"role": "user", "content": "more"}])
    assert len(again) == len(first) + 1
    assert all(a is b for a, b in zip(first, again, strict=False))


def test_a_message_whose_fields_were_replaced_is_converted_anew() -> None:
    """A converted message is reused only while the fields it was made of are the very values it
    was made of: a summary, a timestamp or a command replaced in place gives the new text."""
    conversion = LlmConversion()
    messages = _conversation()
    first = conversion.convert(messages)
    messages[0]["summary"] = "rewritten"
    messages[1]["timestamp"] = 20
    messages[4]["exitCode"] = 0
    messages[2]["content"] = "another note"
    messages[5]["excludeFromContext"] = False
    again = conversion.convert(messages)
    assert again == convert_to_llm(messages)
    assert again != first
    assert "rewritten" in again[0]["content"][0]["text"]
    assert again[1]["timestamp"] == 20


def test_an_equal_message_that_is_another_object_is_converted_for_itself() -> None:
    conversion = LlmConversion()
    one = {"role": "compactionSummary", "summary": "s", "timestamp": 1}
    two = dict(one)
    first, second = conversion.convert([one]), conversion.convert([two])
    assert first == second
    assert first[0] is not second[0]
    assert conversion.convert([one])[0] is first[0]
