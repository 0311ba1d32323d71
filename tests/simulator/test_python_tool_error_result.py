"""A Python tool's error result (``ToolResult(is_error=True)``) is thrown by the bridge's
``execute`` (``bridge.ts`` ``registerTool``), so the call's result is one text of the blocks'
texts (or "tool failed") with ``details: {}`` (pi-agent-core agent-loop.js:582-590). The
differential twin on real Pi is ``tests/realpi/test_differential_python_tool_error_result.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult

from .helpers import agent_requests, base, entries, run

CONTENTS: dict[str, list[dict[str, Any]]] = {
    "c1": [{"type": "text", "text": "first "}, {"type": "text", "text": "second"}],
    "c2": [],
    "c3": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}, {"type": "text", "text": 5}],
}


def test_a_python_tools_error_result_is_one_text_of_its_blocks_texts_with_empty_details(
    tmp_path: Path,
) -> None:
    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=CONTENTS[call_id], details={"n": 1}, is_error=True, terminate=True)

    def extension(pi: ExtensionAPI) -> None:
        params = {"type": "object", "properties": {}}
        pi.register_tool(ToolDefinition("failing", "failing", "Fails.", params, execute))

    calls = [{"name": "failing", "arguments": {}, "id": f"c{n}"} for n in (1, 2, 3)]
    replies = [{"text": "t", "tool_calls": calls}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert [(m["content"], m["details"], m["isError"]) for m in found] == [
        ([{"type": "text", "text": "first second"}], {}, True),
        ([{"type": "text", "text": "tool failed"}], {}, True),
        ([{"type": "text", "text": "5"}], {}, True),
    ]
    assert len(agent_requests(result)) == 2  # a thrown result has no terminate
