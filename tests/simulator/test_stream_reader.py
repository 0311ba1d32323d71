"""pi-ai's reading of a streamed chat completion (``provider.StreamReader``): every event names
the position of its block in the message's content (``contentIndex``), whichever block a delta
continues (the last one, or an earlier one when deltas interleave)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.simulator.provider import StreamReader

MODEL = Model(provider="fake", id="fake-model", context_window=20000, max_tokens=1000)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_every_event_names_the_position_of_its_block() -> None:
    reader = StreamReader(MODEL, 0)
    chunks = [
        _chunk({"role": "assistant"}),
        _chunk({"reasoning_content": "think "}),
        _chunk({"content": "text "}),
        _chunk({"reasoning_content": "more"}),  # the thinking block is no longer the last
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "bash", "arguments": "{"}}]}),
        _chunk({"content": "again"}),  # the text block, between thinking and the tool call
        _chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "read", "arguments": "{}"}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
        _chunk({}, "tool_calls"),
    ]
    events = [event for chunk in chunks for event in reader.feed(chunk)] + reader.end(5)
    blocks = reader.output["content"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "toolCall", "toolCall"]
    positions = {"thinking": 0, "text": 1}
    for event in events:
        kind = event["type"]
        if kind.startswith(("thinking", "text")):
            assert event["contentIndex"] == positions[kind.partition("_")[0]], event
    calls = [(e["type"], e["contentIndex"]) for e in events if e["type"].startswith("toolcall")]
    assert calls == [
        ("toolcall_start", 2),
        ("toolcall_delta", 2),
        ("toolcall_start", 3),
        ("toolcall_delta", 3),
        ("toolcall_delta", 2),
        ("toolcall_end", 2),
        ("toolcall_end", 3),
    ]
    assert blocks[0]["thinking"] == "think more" and blocks[1]["text"] == "text again"
    assert [e["contentIndex"] for e in events if e["type"] in ("thinking_delta", "text_delta")] == [
        0,
        1,
        0,
        1,
    ]
