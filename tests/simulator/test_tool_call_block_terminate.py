"""A ``tool_call`` handler's block with ``terminate: true``: pi-agent-core's ``prepareToolCall``
keeps it on the blocked call's error result (agent-loop.js:512-516), so a batch whose every
call ends with ``terminate === true`` ends the run (``shouldTerminateToolBatch``, :462-463);
the bridge sends a Python handler's dict as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import agent_requests, base, entries, run


def test_a_tool_call_block_with_terminate_true_ends_the_run_when_the_whole_batch_ends(tmp_path: Path) -> None:
    def block(event: Any, ctx: Any) -> Any:
        stop = event.input.get("command") != "echo go"
        return {"block": True, "reason": f"no {event.tool_call_id}", "terminate": True if stop else 1}

    def extension(pi: ExtensionAPI) -> None:
        pi.on("tool_call", block)

    def call(n: int, command: str) -> dict[str, Any]:
        return {"name": "bash", "arguments": {"command": command}, "result": "x\n", "id": f"c{n}"}

    replies = [
        # c2's terminate is 1, not true: the batch goes on.
        {"text": "mixed", "tool_calls": [call(1, "echo stop"), call(2, "echo go")]},
        {"text": "all", "tool_calls": [call(3, "echo stop"), call(4, "echo stop")]},
        {"text": "never asked"},
    ]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    assert len(agent_requests(result)) == 2
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert [(m["toolCallId"], m["content"][0]["text"], m["isError"]) for m in found] == [
        ("c1", "no c1", True),
        ("c2", "no c2", True),
        ("c3", "no c3", True),
        ("c4", "no c4", True),
    ]
