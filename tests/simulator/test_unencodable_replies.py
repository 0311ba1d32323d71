"""A Python handler's or tool's result that JSON cannot carry (a dict key that is a tuple, a
cycle) is answered by the bridge as an error (``bridge_runtime._serve``), so Pi's handler or tool
throws with the encoder's message, as if it had raised; the simulator raises the same error where
the result comes back (``ExtensionRunner.call_handler``, ``SessionTools.execute_tool``). The
differential twin on real Pi is ``tests/realpi/test_differential_unencodable_reply.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult

from .helpers import base, entries, run, session_records

TUPLE_KEY = "keys must be str, int, float, bool or None, not tuple"
BASH = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}


def _errors(result: Any) -> list[tuple[str, str]]:
    return [(r["event"], r["error"]) for r in session_records(result, "extension_error")]


def _results(result: Any) -> list[tuple[Any, Any]]:
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    return [(m["content"], m["isError"]) for m in found]


def _cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    return loop


def test_a_handler_result_json_cannot_carry_is_that_handlers_error(tmp_path: Path) -> None:
    """runner.js:832-842 and 947-955: the bridge's error reply makes Pi's handler throw: an
    ``extension_error`` with the encoder's message, and the next handler runs."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.on("tool_result", lambda event, ctx: {"details": {(1, 2): "pair"}})
        pi.on("tool_result", lambda event, ctx: seen.append(event.details))
        pi.on("agent_end", lambda event, ctx: _cycle())

    replies = [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "hello"}]), extension)
    assert seen == [None]
    assert _errors(result) == [("tool_result", TUPLE_KEY), ("agent_end", "Circular reference detected")]
    assert _results(result) == [([{"type": "text", "text": "hi\n"}], False)]


def test_a_tool_result_json_cannot_carry_makes_the_call_an_error_result(tmp_path: Path) -> None:
    """agent-loop.js:582-590: the bridge's error reply makes the tool's ``execute`` throw; the
    call's result is the message (``createErrorToolResult``)."""

    async def knot(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "knotted"}], details={(1, 2): "pair"})

    def extension(pi: ExtensionAPI) -> None:
        params = {"type": "object", "properties": {}}
        pi.register_tool(ToolDefinition("knot", "knot", "Knots.", params, knot))

    call = {"name": "knot", "arguments": {}, "id": "k1"}
    replies = [{"text": "t", "tool_calls": [call]}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "hello"}]), extension)
    assert _results(result) == [([{"type": "text", "text": TUPLE_KEY}], True)]


def test_a_tool_call_handler_result_json_cannot_carry_fails_the_call(tmp_path: Path) -> None:
    """emitToolCall does not catch (runner.js:970-984): the thrown error ends the call before it
    runs (agent-loop.js:529-535), its message the result."""

    def extension(pi: ExtensionAPI) -> None:
        pi.on("tool_call", lambda event, ctx: {"block": False, (3,): "three"})

    replies = [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "hello"}]), extension)
    assert _results(result) == [([{"type": "text", "text": TUPLE_KEY}], True)]
