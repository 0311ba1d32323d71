"""A ``tool_call`` handler that aborts the run: Pi's ``emitToolCall`` (runner.js:970-985) runs
every handler up to a block, and pi-agent-core's ``prepareToolCall`` looks at the signal only
after them (agent-loop.js:505-510), so the later handlers still run and the abort wins over a
later block ("Operation aborted")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, entries, run


def test_a_tool_call_handler_that_aborts_does_not_stop_the_later_handlers(tmp_path: Path) -> None:
    seen: list[str] = []

    def first(event: Any, ctx: Any) -> None:
        ctx.abort()

    def second(event: Any, ctx: Any) -> Any:
        seen.append(event.tool_call_id)
        return {"block": True, "reason": "blocked by the second"}

    def extension(pi: ExtensionAPI) -> None:
        pi.on("tool_call", first)
        pi.on("tool_call", second)

    call = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
    replies = [{"text": "calling", "tool_calls": [call]}, {"text": "never asked"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    assert seen == ["c1"]
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert [(m["toolCallId"], m["content"][0]["text"], m["isError"]) for m in found] == [
        ("c1", "Operation aborted", True)
    ]
