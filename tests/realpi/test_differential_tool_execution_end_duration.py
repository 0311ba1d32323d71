"""Differential: ``tool_execution_end``'s ``durationMs`` as a Python extension gets it, real Pi 1.6
against the simulator.

pi-agent-core times a tool's ``execute`` (``executePreparedToolCall``, agent-loop.js:565-596:
``Math.round(performance.now() - startedAt)``) and puts the value in the ``tool_execution_end``
event and the tool result message only for a call that ran (:645-668); agent-session.js:1036-1045
passes it on to the extensions when set, and the bridge sends the payload whole
(``api.ToolExecutionEndEvent.duration_ms``). A call refused before it runs (an unknown tool) has
none.

The value is wall time on real Pi, so the test compares its presence and type, and that it is the
tool result message's ``durationMs``; the simulator's exact virtual duration is checked in
``tests/simulator/test_loop_extension_events.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def extension(pi):
    seen = []
    durations = {}

    def end(event, ctx):
        seen.append([event.tool_call_id, event.tool_name, type(event.duration_ms).__name__])
        durations[event.tool_call_id] = event.duration_ms

    def settled(event, ctx):
        rows = []
        for entry in ctx.session_manager.get_entries():
            message = entry.get("message") or {}
            if message.get("role") == "toolResult":
                call = message.get("toolCallId")
                rows.append([call, "durationMs" in message, message.get("durationMs") == durations.get(call)])
        ctx.ui.notify("ends: " + json.dumps([seen, rows]), "info")

    pi.on("tool_execution_end", end)
    pi.on("agent_settled", settled)
"""


def test_tool_execution_end_carries_the_duration_of_a_call_that_ran(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("tool_end_probe", _EXTENSION)
    bash = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
    unknown = {"name": "no_such_tool", "arguments": {}, "id": "c2"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [bash, unknown]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "tool_end_probe:extension")

    expected = [
        [["c2", "no_such_tool", "NoneType"], ["c1", "bash", "int"]],
        [["c1", True, True], ["c2", False, True]],
    ]
    assert notes(real)["ends"] == expected, json.dumps(notes(real).get("ends"))
    assert real.session("extension_error") == []
    assert notes(sim).get("ends") == expected
    assert_equivalent(real, sim)
