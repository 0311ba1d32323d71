"""Differential: a tool that runs other tools through ``ctx.execute_tool``, real Pi 1.6 against the
simulator.

Pi 1.6's tool context has ``executeTool`` (core/extensions/types.d.ts:289-301; runner.js:709-736).
A nested call gets the id ``<calling id>/<n>`` and runs through the model's pipeline against the
callable tools (``AgentSession._executeNestedToolCall``, agent-session.js:446-475;
``NestedToolCallRunner.execute``, nested-tool-calls.js:96-160; pi-agent-core ``runToolCall``,
agent-loop.js:559-566): ``tool_execution_start``, then (an unknown or inactive tool, invalid
arguments and a ``tool_call`` block end it at once) ``tool_call``, the tool, ``tool_result``, then
``tool_execution_end``; each event carries ``parentToolCallId``, the RPC events too. No message of
the session is made for it: the calling call's result message records it as ``nestedCalls``
(agent-session.js:773-783).

The extension below, defined here, registers ``outer`` (which calls ``bash``, ``inner``, an unknown
tool, the inactive built-in ``grep``, ``inner`` blocked by its ``tool_call`` handler, ``inner``
without its required argument, and ``boom``, which raises), ``inner`` (which calls ``bash`` itself)
and ``boom``. It records every tool event's type, call id, tool name and parent id and what
``outer`` got back, and notifies both at ``agent_end``. The test asserts real Pi's record
explicitly, then that the simulator's is the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult


def extension(pi):
    seen = []
    got = []

    def record(event, ctx):
        seen.append([event.type, event.tool_call_id, event.tool_name, event.parent_tool_call_id])

    def block(event, ctx):
        record(event, ctx)
        if event.input.get("block"):
            return {"block": True, "reason": "blocked by policy"}
        return None

    def end(event, ctx):
        ctx.ui.notify("tools: " + json.dumps(seen), "info")
        ctx.ui.notify("outcomes: " + json.dumps(got), "info")
        seen.clear()
        got.clear()

    async def outer(call_id, params, signal, ctx):
        calls = [
            ("bash", {"command": "echo nested"}),
            ("inner", {"n": 2}),
            ("nope", {}),
            ("grep", {"pattern": "x"}),
            ("inner", {"n": 3, "block": True}),
            ("inner", {}),
            ("boom", {}),
        ]
        for name, args in calls:
            outcome = await ctx.execute_tool(name, args)
            texts = [b.get("text") for b in outcome.result.get("content") or []]
            got.append([outcome.tool_call, texts, outcome.is_error, outcome.duration_ms is not None])
        return ToolResult(content=[{"type": "text", "text": "outer done"}], details={"calls": len(calls)})

    async def inner(call_id, params, signal, ctx):
        deep = await ctx.execute_tool("bash", {"command": "echo deep"})
        text = deep.result["content"][0]["text"].strip()
        return ToolResult(content=[{"type": "text", "text": f"inner {params['n']} {text}"}], details={"n": params["n"]})

    async def boom(call_id, params, signal, ctx):
        raise RuntimeError("boom failed")

    properties = {"n": {"type": "number"}, "block": {"type": "boolean"}}
    number = {"type": "object", "properties": properties, "required": ["n"]}
    empty = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("outer", "outer", "Runs other tools.", empty, outer))
    pi.register_tool(ToolDefinition("inner", "inner", "A nested tool.", number, inner))
    pi.register_tool(ToolDefinition("boom", "boom", "Raises.", empty, boom))
    for name in ("tool_execution_start", "tool_execution_end", "tool_result"):
        pi.on(name, record)
    pi.on("tool_call", block)
    pi.on("agent_end", end)
"""


def _nested_rpc(observation: Any) -> list[list[Any]]:
    return [
        [e["type"], e["toolCallId"], e.get("parentToolCallId")]
        for e in observation.rpc_events
        if e.get("type", "").startswith("tool_execution_")
    ]


def test_execute_tool_runs_nested_calls_with_parent_ids_and_records_them_on_the_result_message(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("nested_tool_probe", _EXTENSION)
    tool = {"name": "outer", "arguments": {}, "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [tool]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "nested_tool_probe:extension")

    nested = [["c1/1", "bash", "c1"], ["c1/2", "inner", "c1"], ["c1/2/1", "bash", "c1/2"]]
    nested += [[f"c1/{n}", name, "c1"] for n, name in ((3, "nope"), (4, "grep"), (5, "inner"), (6, "inner"))]
    nested.append(["c1/7", "boom", "c1"])
    start, call, result, end = ("tool_execution_start", "tool_call", "tool_result", "tool_execution_end")

    def rows(ids: list[str], *kinds: str) -> list[list[Any]]:
        return [[kind, *ids] for kind in kinds]

    c1 = ["c1", "outer", None]
    expected_tools = [
        *rows(c1, start, call),
        *rows(nested[0], start, call, result, end),
        # inner runs bash itself: c1/2/1, parent c1/2, inside inner's own events
        *rows(nested[1], start, call),
        *rows(nested[2], start, call, result, end),
        *rows(nested[1], result, end),
        # an unknown tool and an inactive built-in: "Tool <name> not found", no tool_call
        *rows(nested[3], start, end),
        *rows(nested[4], start, end),
        # blocked by the tool_call handler: no tool_result
        *rows(nested[5], start, call, end),
        # invalid arguments: refused before tool_call
        *rows(nested[6], start, end),
        # a raise: an error result, tool_result sees it
        *rows(nested[7], start, call, result, end),
        *rows(c1, result, end),
    ]
    assert notes(real)["tools"] == expected_tools, json.dumps(notes(real).get("tools"))

    def outcome(n: int, name: str, args: dict[str, Any], text: str, error: bool, ran: bool) -> list[Any]:
        return [{"type": "toolCall", "id": f"c1/{n}", "name": name, "arguments": args}, [text], error, ran]

    invalid_text = 'Validation failed for tool "inner":\n  - n: missing\n\nReceived arguments:\n{}'
    expected_outcomes = [
        outcome(1, "bash", {"command": "echo nested"}, "nested\n", False, True),
        outcome(2, "inner", {"n": 2}, "inner 2 deep", False, True),
        outcome(3, "nope", {}, "Tool nope not found", True, False),
        outcome(4, "grep", {"pattern": "x"}, "Tool grep not found", True, False),
        outcome(5, "inner", {"n": 3, "block": True}, "blocked by policy", True, False),
        outcome(6, "inner", {}, invalid_text, True, False),
        outcome(7, "boom", {}, "boom failed", True, True),
    ]
    assert notes(real)["outcomes"] == expected_outcomes, json.dumps(notes(real).get("outcomes"))

    # RPC clients see every nested tool_execution_* event with parentToolCallId (bash's two
    # partial results included); the model-issued call's have none.
    update = "tool_execution_update"
    rpc = [
        [start, "c1", None],
        *([kind, "c1/1", "c1"] for kind in (start, update, update, end)),
        [start, "c1/2", "c1"],
        *([kind, "c1/2/1", "c1/2"] for kind in (start, update, update, end)),
        [end, "c1/2", "c1"],
        *([kind, f"c1/{n}", "c1"] for n in (3, 4, 5, 6, 7) for kind in (start, end)),
        [end, "c1", None],
    ]
    assert _nested_rpc(real) == rpc

    # The session: no message for a nested call; the calling call's result message records them.
    [message] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert message["toolCallId"] == "c1" and message["content"] == [{"type": "text", "text": "outer done"}]
    calls = message["nestedCalls"]["calls"]
    assert message["nestedCalls"]["complete"] is True
    assert [[c["id"], c["name"], c["status"], c.get("error")] for c in calls] == [
        ["c1/1", "bash", "ok", None],
        ["c1/2", "inner", "ok", None],
        ["c1/2/1", "bash", "ok", None],
        ["c1/3", "nope", "error", "Tool nope not found"],
        ["c1/4", "grep", "error", "Tool grep not found"],
        ["c1/5", "inner", "error", "blocked by policy"],
        ["c1/6", "inner", "error", invalid_text],
        ["c1/7", "boom", "error", "boom failed"],
    ]
    arguments = [o[0]["arguments"] for o in expected_outcomes]
    assert [c["arguments"] for c in calls] == [*arguments[:2], {"command": "echo deep"}, *arguments[2:]]

    assert notes(sim) == notes(real)
    assert _nested_rpc(sim) == _nested_rpc(real)
    assert_equivalent(real, sim)
