"""Differential: a Python ``tool_call`` handler's ``{"block": True, "terminate": True}``, real
Pi 1.6 against the simulator.

pi-agent-core's ``prepareToolCall`` keeps a block's ``terminate === true`` on the blocked call's
error result (agent-loop.js:512-516), so a batch whose every call ends so ends the run
(``shouldTerminateToolBatch``, :462-463); a ``terminate`` of ``1`` does not. The simulator
dropped it (one more request).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
def extension(pi):
    def block(event, ctx):
        stop = event.input.get("command") != "echo go"
        return {"block": True, "reason": "no " + event.tool_call_id, "terminate": True if stop else 1}

    pi.on("tool_call", block)
"""


def test_a_tool_call_block_with_terminate_true_ends_the_run_when_the_whole_batch_ends(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("block_terminate_probe", _EXTENSION)

    def call(n: int, command: str) -> dict[str, object]:
        return {"name": "bash", "arguments": {"command": command}, "result": "x\n", "id": f"c{n}"}

    replies = [
        {"text": "mixed", "tool_calls": [call(1, "echo stop"), call(2, "echo go")]},
        {"text": "all", "tool_calls": [call(3, "echo stop"), call(4, "echo stop")]},
        {"text": "never asked"},
    ]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "go"}], spec)

    # The mixed batch goes on (c2's terminate is 1); the all-terminating one ends the run.
    assert len(real.requests("agent")) == 2
    ends = [
        (e["toolCallId"], e["result"].get("terminate"), e["isError"])
        for e in real.rpc_events
        if e["type"] == "tool_execution_end"
    ]
    assert ends == [("c1", True, True), ("c2", None, True), ("c3", True, True), ("c4", True, True)]
    assert len(sim.requests("agent")) == 2
    assert [
        (e["toolCallId"], e["result"].get("terminate"), e["isError"])
        for e in sim.rpc_events
        if e["type"] == "tool_execution_end"
    ] == ends
    assert_equivalent(real, sim)
