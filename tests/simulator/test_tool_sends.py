"""What a Python tool sends Pi before it returns reaches Pi first: the bridge is one connection
read in order, so Pi queues a ``send_user_message`` (``queue_update``) before the call's result
comes back (``tool_execution_end``), unless a Python ``input`` handler puts a round trip into
the send's preparation. Real Pi does the same
(``tests/realpi/test_differential_tool_sends.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult

from .helpers import base, run


def _session_names(tmp_path: Path, input_handler: bool) -> list[str]:
    def extension(pi: ExtensionAPI) -> None:
        async def follower(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            pi.send_user_message("a follow-up from a tool", deliver_as="followUp")
            return ToolResult(content=[{"type": "text", "text": "followed"}])

        params = {"type": "object", "properties": {}}
        pi.register_tool(ToolDefinition("follower", "follower", "A probe tool.", params, follower))
        if input_handler:
            pi.on("input", lambda event, ctx: None)

    call = {"name": "follower", "arguments": {}, "id": "c1"}
    replies = [{"text": "calling", "tool_calls": [call]}, {"text": "DONE"}, {"text": "AFTER"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    return [
        r["name"]
        for r in result.host.trace.records
        if r["kind"] == "session" and r["name"] in ("queue_update", "tool_execution_end", "turn_end")
    ]


def test_a_follow_up_a_tool_sends_right_before_it_returns_is_queued_before_the_calls_end(
    tmp_path: Path,
) -> None:
    assert _session_names(tmp_path, input_handler=False)[:3] == [
        "queue_update",
        "tool_execution_end",
        "turn_end",
    ]


def test_with_an_input_handler_the_call_ends_before_its_follow_up_is_queued(tmp_path: Path) -> None:
    """The handler's round trip through the bridge lets Pi end the call first (agent-session.js:1745)."""
    names = _session_names(tmp_path, input_handler=True)
    assert names.index("tool_execution_end") < names.index("queue_update")
