"""Differential: a Python handler's or tool's result that JSON cannot carry (a dict key that is a
tuple, a cycle), real Pi 1.6 against the simulator.

The bridge encodes every reply (``bridge_runtime._serve``: ``reply_line``); ``json.dumps`` raises
on such a value, and the bridge used to let the error end its task without answering, so Pi
waited for the reply forever (with the old bridge this test timed out at the first such reply).
It now answers with an error, as for a handler that raised: Pi's handler (or tool) throws with
the message. So a ``tool_result`` handler's result is an ``extension_error`` and the next
handler runs on the unchanged event (runner.js:947-955), an ``agent_end`` handler's too
(runner.js:832-842), a ``tool_call`` handler's makes the call an error result
(agent-session.js:385-404, pi-agent-core agent-loop.js:529-535), and a tool's result makes its
call an error result (agent-loop.js:582-590). The simulator raises the same error where the
handler or the tool returns (``ExtensionRunner.call_handler``, ``SessionTools.execute_tool``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult


def extension(pi):
    seen = []

    async def knot(call_id, params, signal, ctx):
        return ToolResult(content=[{"type": "text", "text": "knotted"}], details={(1, 2): "pair"})

    params = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("knot", "knot", "Knots.", params, knot))

    def on_call(event, ctx):
        if event.tool_call_id == "c3":
            return {"block": False, (3,): "three"}
        return None

    def tuple_key(event, ctx):
        return {"details": {(1, 2): "pair"}}

    def look(event, ctx):
        seen.append([event.tool_call_id, event.content, event.details, event.is_error])

    def cycle(event, ctx):
        ctx.ui.notify("seen: " + json.dumps(seen), "info")
        loop = {"a": 1}
        loop["self"] = loop
        return loop

    pi.on("tool_call", on_call)
    pi.on("tool_result", tuple_key)
    pi.on("tool_result", look)
    pi.on("agent_end", cycle)
"""


def test_a_reply_json_cannot_carry_is_the_handlers_or_the_tools_error(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("unencodable_reply_probe", _EXTENSION)
    calls = [
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"},
        {"name": "knot", "arguments": {}, "id": "c2"},
        {"name": "bash", "arguments": {"command": "echo no"}, "result": "no\n", "id": "c3"},
    ]
    replies = [{"text": "calling", "tool_calls": [c]} for c in calls] + [{"text": "DONE"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "hello"}, {"prompt": "again"}], spec)

    tuple_error = "keys must be str, int, float, bool or None, not tuple"

    def text(value: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": value}]

    # The tool_result handler after the failing one sees each call's own result; the knot and
    # the blocked call are error results with the encoder's message (the tool_call handler's
    # error ends c3 before it runs: no tool_result).
    assert notes(real)["seen"] == [["c1", text("hi\n"), None, False], ["c2", text(tuple_error), {}, True]]
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [
        ("tool_result", tuple_error),
        ("tool_result", tuple_error),
        ("agent_end", "Circular reference detected"),
        ("agent_end", "Circular reference detected"),
    ]
    results = [
        (e["message"]["toolCallId"], e["message"]["content"], e["message"]["isError"])
        for e in real.entries
        if e.get("message", {}).get("role") == "toolResult"
    ]
    assert results == [
        ("c1", text("hi\n"), False),
        ("c2", text(tuple_error), True),
        ("c3", text(tuple_error), True),
    ]
    assert [(o.name, o.ok) for o in real.operations] == [("prompt", True), ("prompt", True)]

    assert notes(sim) == notes(real)
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
