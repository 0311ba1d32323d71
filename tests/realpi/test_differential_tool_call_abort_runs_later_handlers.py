"""Differential: a Python ``tool_call`` handler that aborts the run, real Pi 1.6 against the
simulator.

Pi's ``emitToolCall`` (runner.js:970-985) runs every ``tool_call`` handler, stopping only at a
block; pi-agent-core's ``prepareToolCall`` looks at the signal once, after all of them
(agent-loop.js:505-510), so a handler after the one that called ``ctx.abort()`` still runs (its
notify happens) and the aborted signal wins over its block: the call ends "Operation aborted".
The simulator stopped after the aborting handler (no notify).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
def extension(pi):
    def first(event, ctx):
        ctx.abort()

    def second(event, ctx):
        ctx.ui.notify("second ran for " + event.tool_call_id, "info")
        return {"block": True, "reason": "blocked by the second"}

    pi.on("tool_call", first)
    pi.on("tool_call", second)
"""


def test_a_tool_call_handler_that_aborts_does_not_stop_the_later_handlers(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("tool_call_abort_probe", _EXTENSION)
    call = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
    replies = [{"text": "calling", "tool_calls": [call]}, {"text": "never asked"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "go"}], spec)

    def ends(observation: object) -> list[tuple[object, object, object]]:
        return [
            (e["toolCallId"], e["result"]["content"][0]["text"], e["isError"])
            for e in observation.rpc_events  # type: ignore[attr-defined]
            if e["type"] == "tool_execution_end"
        ]

    seen = [m for m, _ in real.notifications if m.startswith("second ran")]
    assert seen == ["second ran for c1"]
    assert ends(real) == [("c1", "Operation aborted", True)]
    assert [m for m, _ in sim.notifications if m.startswith("second ran")] == seen
    assert ends(sim) == ends(real)
    assert_equivalent(real, sim)
