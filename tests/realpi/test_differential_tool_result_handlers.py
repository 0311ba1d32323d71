"""Differential: what a Python extension's ``tool_result`` handlers return, real Pi 1.6 against the
simulator, for a built-in tool (a scripted ``bash`` call) and a Python extension's tool.

Pi applies a handler's ``content``, ``details``, ``structuredContent``, ``isError`` and ``usage``
to one event the handlers share, so each sees the changes of the ones before it, a ``None``
(JSON ``null``) included (``emitToolResult``, runner.js:913-969); a raising handler is an
``extension_error`` and the next one runs; a list or a string is no result. The call's result is
then the hook's content (``null``: the tool's), details and usage (``null``: the tool's),
``isError`` as given (``"yes"`` stays a string), never its ``terminate`` (agent-session.js:406-440,
pi-agent-core agent-loop.js:598-630); a content that is not a list fails the call with
``content.some is not a function`` (``normalizeToolResultImages``, tool-result-images.js:13-15;
a ``None`` block ``Cannot read properties of null (reading 'type')``), and details alone keep the
tool's ``structuredContent``.
That result is what ``tool_execution_end``, the ``toolResult`` entry and the next request show.

Six calls, alternately ``bash`` and the extension's ``probe``: the extension's first handler
returns something else for each; the second and fourth record what they see, the third raises;
a ``tool_execution_end`` handler records the result; the list is notified at ``agent_end``. The test asserts real Pi's
record explicitly, then that the simulator's is the same (before, the simulator ignored what
the handlers returned: every handler saw the tool's own result, and so did the entries).
"""

from __future__ import annotations

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

    async def probe(call_id, params, signal, ctx):
        return ToolResult(content=[{"type": "text", "text": "probe out"}], details={"n": 1})

    params = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("probe", "probe", "Probes.", params, probe))

    def look(tag, event):
        seen.append([tag, event.tool_call_id, event.content, event.details, event.is_error])

    def first(event, ctx):
        look("first", event)
        if event.tool_call_id == "c1":
            return {"content": [{"type": "text", "text": "replaced"}], "details": {"by": "first"}}
        if event.tool_call_id == "c2":
            return ToolResult(content=[{"type": "text", "text": "from a ToolResult"}], terminate=True)
        if event.tool_call_id == "c3":
            return {"content": "plain text"}
        if event.tool_call_id == "c4":
            return {"isError": "yes", "usage": {"input": 1, "output": 2}}
        if event.tool_call_id == "c5":
            return {"details": {"d": 1}}
        return {"content": [{"type": "text", "text": "kept"}, None]}

    def second(event, ctx):
        look("second", event)
        if event.tool_call_id == "c1":
            return {"details": None, "isError": True, "other": 1}
        if event.tool_call_id == "c2":
            return {"details": {"by": "second"}, "isError": True}
        return None

    def third(event, ctx):
        raise RuntimeError("third failed on " + event.tool_call_id)

    def fourth(event, ctx):
        look("fourth", event)
        return ["ignored"] if event.tool_call_id == "c2" else "ignored"

    def end(event, ctx):
        seen.append(["end", event.tool_call_id, event.result, event.is_error, list(event.result)])

    def agent_end(event, ctx):
        ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("tool_result", first)
    pi.on("tool_result", second)
    pi.on("tool_result", third)
    pi.on("tool_result", fourth)
    pi.on("tool_execution_end", end)
    pi.on("agent_end", agent_end)
"""


def _timeless(value: Any) -> Any:
    """``value`` with bash's ``wall_time_seconds`` masked (ledger ``durations``): Pi rounds the
    command's wall time to 0.1 s (``Math.round(ms / 100) / 10``, dist/core/tools/bash.js), so
    ``echo hi`` reads 0.1 once it takes 50 ms on a loaded machine (a whole-suite run failed so)."""
    if isinstance(value, dict):
        return {k: "<s>" if k == "wall_time_seconds" else _timeless(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_tool_result_handlers_chain_and_their_results_become_the_calls_result(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("tool_result_probe", _EXTENSION)
    calls = [
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"},
        {"name": "probe", "arguments": {}, "id": "c2"},
        {"name": "bash", "arguments": {"command": "echo bye"}, "result": "bye\n", "id": "c3"},
        {"name": "probe", "arguments": {}, "id": "c4"},
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c5"},
        {"name": "probe", "arguments": {}, "id": "c6"},
    ]
    replies = [{"text": "calling", "tool_calls": [c]} for c in calls] + [{"text": "DONE"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "hello"}], spec)

    def text(value: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": value}]

    replaced, from_result, probe_out = text("replaced"), text("from a ToolResult"), text("probe out")
    failed = text("content.some is not a function")
    chars = list("plain text")
    usage = {"input": 1, "output": 2}
    null_block = text("Cannot read properties of null (reading 'type')")
    structured = {"output": "hi\n", "truncated": False, "exit_code": 0, "wall_time_seconds": "<s>"}
    bash_kept = {"content": text("hi\n"), "details": {"d": 1}, "structuredContent": structured}
    assert _timeless(notes(real)["seen"]) == [
        # c1: the second sees the first's changes, the fourth the second's None details; the
        # end: the first's content, bash's own (no) details, no structuredContent, isError set.
        ["first", "c1", text("hi\n"), None, False],
        ["second", "c1", replaced, {"by": "first"}, False],
        ["fourth", "c1", replaced, None, True],
        ["end", "c1", {"content": replaced}, True, ["content"]],
        # c2: a ToolResult is all its keys (details null, isError false; terminate not taken).
        ["first", "c2", probe_out, {"n": 1}, False],
        ["second", "c2", from_result, None, False],
        ["fourth", "c2", from_result, {"by": "second"}, True],
        ["end", "c2", {"content": from_result, "details": {"by": "second"}}, True, ["content", "details"]],
        # c3: a string content (the bridge's event lists its characters) fails the call.
        ["first", "c3", text("bye\n"), None, False],
        ["second", "c3", chars, None, False],
        ["fourth", "c3", chars, None, False],
        ["end", "c3", {"content": failed, "details": {}}, True, ["content", "details"]],
        # c4: isError "yes" is kept as given (Python's event has bool(isError)), usage added.
        ["first", "c4", probe_out, {"n": 1}, False],
        ["second", "c4", probe_out, {"n": 1}, True],
        ["fourth", "c4", probe_out, {"n": 1}, True],
        [
            "end",
            "c4",
            {"content": probe_out, "details": {"n": 1}, "usage": usage},
            True,
            ["content", "details", "usage"],
        ],
        # c5: details alone keep bash's structuredContent; the details stand after the content.
        ["first", "c5", text("hi\n"), None, False],
        ["second", "c5", text("hi\n"), {"d": 1}, False],
        ["fourth", "c5", text("hi\n"), {"d": 1}, False],
        ["end", "c5", bash_kept, False, ["content", "details", "structuredContent"]],
        # c6: a None block fails the call (normalizeToolResultImages reads block.type).
        ["first", "c6", probe_out, {"n": 1}, False],
        ["second", "c6", [*text("kept"), None], {"n": 1}, False],
        ["fourth", "c6", [*text("kept"), None], {"n": 1}, False],
        ["end", "c6", {"content": null_block, "details": {}}, True, ["content", "details"]],
    ]
    errors = [("tool_result", f"third failed on c{n}") for n in range(1, 7)]
    assert [(e["event"], e["error"]) for e in real.session("extension_error")] == errors
    ends = [
        (e["toolCallId"], _timeless(e["result"]), e["isError"])
        for e in real.rpc_events
        if e["type"] == "tool_execution_end"
    ]
    assert ends == [
        ("c1", {"content": replaced}, True),
        ("c2", {"content": from_result, "details": {"by": "second"}}, True),
        ("c3", {"content": failed, "details": {}}, True),
        ("c4", {"content": probe_out, "details": {"n": 1}, "usage": usage}, "yes"),
        ("c5", bash_kept, False),
        ("c6", {"content": null_block, "details": {}}, True),
    ]
    keys = ("toolCallId", "content", "details", "usage", "isError")
    results = [
        {k: e["message"][k] for k in keys if k in e["message"]}
        for e in real.entries
        if e.get("message", {}).get("role") == "toolResult"
    ]
    assert results == [
        {"toolCallId": "c1", "content": replaced, "isError": True},
        {"toolCallId": "c2", "content": from_result, "details": {"by": "second"}, "isError": True},
        {"toolCallId": "c3", "content": failed, "details": {}, "isError": True},
        {
            "toolCallId": "c4",
            "content": probe_out,
            "details": {"n": 1},
            "usage": usage,
            "isError": "yes",
        },
        {"toolCallId": "c5", "content": text("hi\n"), "details": {"d": 1}, "isError": False},
        {"toolCallId": "c6", "content": null_block, "details": {}, "isError": True},
    ]
    # The model's last request carries each result's content.
    sent = [m["content"] for m in real.model_requests[-1].request.messages if m["role"] == "toolResult"]
    assert sent == [replaced, from_result, failed, probe_out, text("hi\n"), null_block]

    assert _timeless(notes(sim)) == _timeless(notes(real))
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert [
        (e["toolCallId"], _timeless(e["result"]), e["isError"])
        for e in sim.rpc_events
        if e["type"] == "tool_execution_end"
    ] == ends
    assert_equivalent(real, sim)
