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


def test_a_python_tools_none_details_is_null_in_its_tool_result_message(tmp_path: Path) -> None:
    """The bridge's ``execute`` returns ``details: null`` for ``details=None``, and
    ``createToolResultMessage`` keeps it (agent-loop.js:656-670): JSON writes ``null``, where a
    built-in tool's ``undefined`` details are no key."""

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "plain"}])

    def extension(pi: ExtensionAPI) -> None:
        pi.register_tool(
            ToolDefinition("plain", "plain", "Plain.", {"type": "object", "properties": {}}, execute)
        )

    calls = [
        {"name": "plain", "arguments": {}, "id": "p1"},
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "b1"},
    ]
    replies = [{"text": "t", "tool_calls": calls}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert [("details" in m, m.get("details")) for m in found] == [(True, None), (False, None)]


def test_a_python_tools_terminate_ends_the_run_only_when_true_for_the_whole_batch(tmp_path: Path) -> None:
    """``shouldTerminateToolBatch`` (agent-loop.js:462-463): every result ``terminate === true``;
    the bridge passes ``terminate`` only when it is ``True``."""

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": call_id}], terminate=params.get("stop"))

    def extension(pi: ExtensionAPI) -> None:
        params = {"type": "object", "properties": {"stop": {}}}
        pi.register_tool(ToolDefinition("stopper", "stopper", "Stops.", params, execute))

    def call(n: int, stop: Any) -> dict[str, Any]:
        return {"name": "stopper", "arguments": {"stop": stop}, "id": f"c{n}"}

    replies = [
        {"text": "truthy", "tool_calls": [call(1, 1)]},
        {"text": "mixed", "tool_calls": [call(2, True), call(3, False)]},
        {"text": "all", "tool_calls": [call(4, True), call(5, True)]},
        {"text": "never asked"},
    ]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    assert len(agent_requests(result)) == 3
