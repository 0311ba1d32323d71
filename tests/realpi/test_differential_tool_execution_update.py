"""Differential: a Python extension's ``tool_execution_update`` handler, real Pi 1.6 against the
simulator.

Real Pi hands a running tool's every partial result to the extensions (agent-session.js:1026-1034:
``{type: "tool_execution_update", toolCallId, toolName, args, partialResult}`` through an awaited
``_extensionRunner.emit``); pi-agent-core awaits every update before the tool's result is final
(agent-loop.js:568-581), so they come after ``tool_execution_start`` and before ``tool_result``
and ``tool_execution_end``. ``bash`` reports an empty result as it starts, then its output so far
(bash.js:204-241: ``details`` of ``undefined`` fields, ``{}`` in JSON). A handler's return value
is ignored; one that raises is reported as an ``extension_error`` and the tool goes on.

The extension below, defined here, records each tool event's type and class and, for an update,
the call's id, name, arguments and partial result; one more handler raises on every update. It
notifies the list at ``agent_end``. The test asserts real Pi's list explicitly, then that the
simulator's is the same (before the simulator dispatched the event, its list had no update).
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


def extension(pi):
    seen = []

    def record(event, ctx):
        row = [event.type, type(event).__name__]
        if event.type == "tool_execution_update":
            row += [event.tool_call_id, event.tool_name, event.args, json.loads(json.dumps(event.partial_result))]
            seen.append(row)
            # A handler changing the event in place changes nothing of Pi's (it got a copy),
            # and its return value is ignored.
            event.partial_result["content"] = [{"type": "text", "text": "changed"}]
            return {"content": [{"type": "text", "text": "ignored"}]}
        seen.append(row)
        return None

    def fail(event, ctx):
        raise RuntimeError("update handler failed: " + str(len(event.partial_result.get("content") or [])))

    def end(event, ctx):
        ctx.ui.notify("tools: " + json.dumps(seen), "info")
        seen.clear()

    for name in ("tool_execution_start", "tool_execution_update", "tool_result", "tool_execution_end"):
        pi.on(name, record)
    pi.on("tool_execution_update", fail)
    pi.on("agent_end", end)
"""


def test_tool_execution_update_reaches_a_python_extension_before_the_tools_result(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("tool_update_probe", _EXTENSION)
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [tool]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "tool_update_probe:extension")

    args = {"command": "echo hi"}
    update = ["tool_execution_update", "ToolExecutionUpdateEvent", "c1", "bash", args]
    expected: list[Any] = [
        ["tool_execution_start", "ToolExecutionStartEvent"],
        [*update, {"content": []}],
        [*update, {"content": [{"type": "text", "text": "hi\n"}], "details": {}}],
        ["tool_result", "ToolResultEvent"],
        ["tool_execution_end", "ToolExecutionEndEvent"],
    ]
    # Real Pi: the start, bash's two partial results in order, then the result and the end.
    assert notes(real)["tools"] == expected, json.dumps(notes(real).get("tools"), indent=1)
    # The raising handler: one extension_error per update, the tool's result unchanged.
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [
        ("tool_execution_update", "update handler failed: 0"),
        ("tool_execution_update", "update handler failed: 1"),
    ]
    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["content"] == [{"type": "text", "text": "hi\n"}] and result["isError"] is False
    assert notes(sim).get("tools") == notes(real)["tools"]
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
