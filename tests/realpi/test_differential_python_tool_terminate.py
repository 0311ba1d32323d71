"""Differential: a Python tool's ``ToolResult(terminate=True)``, real Pi 1.6 against the simulator.

pi-agent-core ends the run after a tool batch whose every result has ``terminate === true``
(``shouldTerminateToolBatch``, agent-loop.js:462-463; :172): no further request. The bridge's
``execute`` (``bridge.ts`` ``registerTool``) used to return only ``content`` and ``details``, so
on real Pi a Python tool's ``terminate`` did nothing and the model was asked again, where the
simulator ended the run (a probe: 2 requests on real Pi, 1 on the simulator). It now passes
``terminate: true``. A batch in which one call does not terminate goes on, on both.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult


def extension(pi):
    async def execute(call_id, params, signal, ctx):
        stop = params.get("stop") is True
        return ToolResult(content=[{"type": "text", "text": "stop" if stop else "go"}], terminate=stop)

    params = {"type": "object", "properties": {"stop": {"type": "boolean"}}}
    pi.register_tool(ToolDefinition("stopper", "stopper", "Stops.", params, execute))
"""


def test_a_python_tools_terminate_ends_the_run_when_the_whole_batch_terminates(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("terminate_probe", _EXTENSION)

    def call(n: int, stop: bool) -> dict[str, object]:
        return {"name": "stopper", "arguments": {"stop": stop}, "id": f"c{n}"}

    replies = [
        {"text": "mixed", "tool_calls": [call(1, True), call(2, False)]},
        {"text": "all", "tool_calls": [call(3, True), call(4, True)]},
        {"text": "never asked"},
    ]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "go"}], spec)

    # The mixed batch goes on; the all-terminating one ends the run: two requests.
    assert len(real.requests("agent")) == 2
    ends = [
        (e["toolCallId"], e["result"].get("terminate"))
        for e in real.rpc_events
        if e["type"] == "tool_execution_end"
    ]
    assert ends == [("c1", True), ("c2", None), ("c3", True), ("c4", True)]
    assert len(sim.requests("agent")) == 2
    assert [
        (e["toolCallId"], e["result"].get("terminate"))
        for e in sim.rpc_events
        if e["type"] == "tool_execution_end"
    ] == ends
    assert_equivalent(real, sim)
