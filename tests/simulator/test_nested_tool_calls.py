"""``ctx.execute_tool``: a tool running other tools as Pi 1.6 runs them (``ExtensionToolContext``,
types.d.ts:289-301; agent-session.js:446-475, 773-786; nested-tool-calls.js; pi-agent-core
``runToolCall``, agent-loop.js:559-566). The differential twin on real Pi is
``tests/realpi/test_differential_nested_tool_calls.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolCallOutcome, ToolDefinition, ToolResult
from pi_continuity_harness.simulator.nested_tools import NESTED_CALL_LIMITS, NestedCalls

from .helpers import base, entries, run

EMPTY = {"type": "object", "properties": {}}
NUMBER = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
TOOL_EVENTS = (
    "tool_execution_start",
    "tool_call",
    "tool_execution_update",
    "tool_result",
    "tool_execution_end",
)


def _run(tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], *, block: bool = False) -> tuple[Any, ...]:
    """``outer`` (the model's call ``c1``) runs ``calls``; ``inner`` runs ``bash`` itself, ``boom``
    raises. Returns (events seen, outcomes, the session's tool result messages)."""
    seen: list[Any] = []
    outcomes: list[ToolCallOutcome] = []

    def extension(pi: ExtensionAPI) -> None:
        async def outer(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            for name, args in calls:
                outcomes.append(await ctx.execute_tool(name, args))
            return ToolResult(content=[{"type": "text", "text": "outer done"}], details={})

        async def inner(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            await ctx.execute_tool("bash", {"command": "echo deep"})
            return ToolResult(content=[{"type": "text", "text": f"inner {params['n']}"}], details={})

        async def boom(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            raise RuntimeError("boom failed")

        def record(event: Any, ctx: Any) -> Any:
            seen.append((event.type, event.tool_call_id, event.parent_tool_call_id))
            if block and event.type == "tool_call" and event.tool_call_id != "c1":
                return {"block": True, "reason": "no nesting"}
            return None

        pi.register_tool(ToolDefinition("outer", "outer", "Runs tools.", EMPTY, outer))
        pi.register_tool(ToolDefinition("inner", "inner", "Nested.", NUMBER, inner))
        pi.register_tool(ToolDefinition("boom", "boom", "Raises.", EMPTY, boom))
        for name in TOOL_EVENTS:
            pi.on(name, record)

    call = {"name": "outer", "arguments": {}, "id": "c1"}
    result = run(
        tmp_path,
        base(
            model={"agent": [{"text": "t", "tool_calls": [call]}, {"text": "DONE"}]},
            operations=[{"prompt": "hello"}],
        ),
        extension,
    )
    results = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    return seen, outcomes, results


def test_a_nested_call_gets_the_child_id_of_its_caller_and_its_events_name_the_parent(tmp_path: Path) -> None:
    """nested-tool-calls.js:97-160: the id ``<calling id>/<n>``, ``tool_execution_start``, the
    pipeline's ``tool_call``, the updates, ``tool_result``, ``tool_execution_end``, each with
    ``parentToolCallId``; a nested tool's own nested call is ``c1/1/1``, inside its caller's events."""
    seen, outcomes, _ = _run(tmp_path, [("bash", {"command": "echo hi"}), ("inner", {"n": 1})])
    child = [(kind, "c1/1", "c1") for kind in TOOL_EVENTS]
    child.insert(3, ("tool_execution_update", "c1/1", "c1"))  # bash: an empty update, then its output
    deep = [(kind, "c1/2/1", "c1/2") for kind in TOOL_EVENTS]
    deep.insert(3, ("tool_execution_update", "c1/2/1", "c1/2"))
    assert seen == [
        ("tool_execution_start", "c1", None),
        ("tool_call", "c1", None),
        *child,
        ("tool_execution_start", "c1/2", "c1"),
        ("tool_call", "c1/2", "c1"),
        *deep,
        ("tool_result", "c1/2", "c1"),
        ("tool_execution_end", "c1/2", "c1"),
        ("tool_result", "c1", None),
        ("tool_execution_end", "c1", None),
    ]
    assert [(o.tool_call, o.result["content"], o.is_error) for o in outcomes] == [
        (
            {"type": "toolCall", "id": "c1/1", "name": "bash", "arguments": {"command": "echo hi"}},
            [{"type": "text", "text": "hi\n"}],
            False,
        ),
        (
            {"type": "toolCall", "id": "c1/2", "name": "inner", "arguments": {"n": 1}},
            [{"type": "text", "text": "inner 1"}],
            False,
        ),
    ]
    assert all(o.duration_ms is not None for o in outcomes)


def test_a_nested_call_is_no_message_and_is_recorded_on_the_calling_calls_result(tmp_path: Path) -> None:
    """agent-session.js:773-783: one tool result message (the model's call's), with ``nestedCalls``:
    every call made under it, nested ones included, in start order."""
    _, _, results = _run(tmp_path, [("inner", {"n": 1}), ("nope", {})])
    [message] = results
    assert message["toolCallId"] == "c1"
    record = message["nestedCalls"]
    assert record["complete"] is True
    assert [(c["id"], c["name"], c["status"], c["arguments"], c.get("error")) for c in record["calls"]] == [
        ("c1/1", "inner", "ok", {"n": 1}, None),
        ("c1/1/1", "bash", "ok", {"command": "echo deep"}, None),
        ("c1/2", "nope", "error", {}, "Tool nope not found"),
    ]
    assert all(isinstance(c["durationMs"], int) for c in record["calls"])


def test_an_unknown_inactive_or_invalid_nested_call_ends_at_once_before_tool_call(tmp_path: Path) -> None:
    """``prepareToolCall`` (agent-loop.js:478-538) against the callable tools (the active ones,
    agent-session.js:1229-1234): ``Tool <name> not found`` (``grep`` is not active), a validation
    failure; no ``tool_call``, no duration."""
    seen, outcomes, _ = _run(tmp_path, [("nope", {}), ("grep", {"pattern": "x"}), ("inner", {})])
    nested = [s for s in seen if s[2] == "c1"]
    assert [s[0] for s in nested] == ["tool_execution_start", "tool_execution_end"] * 3
    texts = [o.result["content"][0]["text"] for o in outcomes]
    assert texts[:2] == ["Tool nope not found", "Tool grep not found"]
    assert texts[2].startswith('Validation failed for tool "inner":\n  - n: missing')
    assert [(o.is_error, o.duration_ms) for o in outcomes] == [(True, None)] * 3


def test_a_nested_call_a_tool_call_handler_blocks_comes_back_as_an_error(tmp_path: Path) -> None:
    """agent-loop.js:511-519: the block's reason, an error, the tool not run (no ``tool_result``)."""
    seen, outcomes, _ = _run(tmp_path, [("inner", {"n": 1})], block=True)
    assert [s[0] for s in seen if s[1] == "c1/1"] == [
        "tool_execution_start",
        "tool_call",
        "tool_execution_end",
    ]
    [outcome] = outcomes
    assert (outcome.result, outcome.is_error, outcome.duration_ms) == (
        {"content": [{"type": "text", "text": "no nesting"}], "details": {}},
        True,
        None,
    )


def test_a_nested_tool_that_raises_comes_back_as_an_error_after_tool_result(tmp_path: Path) -> None:
    """agent-loop.js:582-590: the raise's message, ``details: {}``, a duration; ``tool_result``
    sees it; the outer tool goes on."""
    seen, outcomes, results = _run(tmp_path, [("boom", {})])
    assert [s[0] for s in seen if s[1] == "c1/1"] == [
        "tool_execution_start",
        "tool_call",
        "tool_result",
        "tool_execution_end",
    ]
    [outcome] = outcomes
    assert (outcome.result, outcome.is_error) == (
        {"content": [{"type": "text", "text": "boom failed"}], "details": {}},
        True,
    )
    assert outcome.duration_ms is not None
    assert results[0]["content"] == [{"type": "text", "text": "outer done"}]
    assert results[0]["nestedCalls"]["calls"][0]["error"] == "boom failed"


def test_the_nested_call_record_omits_large_arguments_and_cuts_errors_as_pi_does() -> None:
    """``NESTED_CALL_LIMITS`` (nested-tool-calls.js:16-63): arguments over 8 KiB are left out
    (their size kept) and the record is incomplete; an error keeps 500 characters."""
    calls = NestedCalls()
    big = {"text": "x" * (NESTED_CALL_LIMITS["maxArgumentBytesPerCall"] + 1)}
    call, handle = calls.begin("c1", "bash", big, 0)
    calls.end(call, handle, {"content": [{"type": "text", "text": "e" * 600}]}, True, 5)
    record = calls.take_record("c1")
    assert record is not None
    [entry] = record["calls"]
    assert "arguments" not in entry and entry["argumentsBytes"] == len(big["text"]) + 11
    assert entry["error"] == "e" * 500 and entry["durationMs"] == 5
    assert record["complete"] is False
    assert calls.take_record("c1") is None
