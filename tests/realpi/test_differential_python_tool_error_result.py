"""Differential: a Python tool that returns an error result (``ToolResult(is_error=True)``), real Pi
1.6 against the simulator.

The bridge's ``execute`` (``bridge.ts`` ``registerTool``) throws for such a result, with the
blocks' texts joined (``content.map((b) => b?.text ?? "").join("")``, a block without a text
adding nothing, a number its ``String()``) or "tool failed"; pi-agent-core makes the thrown error
the call's result (``createErrorToolResult``, agent-loop.js:582-590): one text block and
``details: {}``. The simulator used to keep the tool's blocks and details.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult

CONTENTS = {
    "c1": [{"type": "text", "text": "first "}, {"type": "text", "text": "second"}],
    "c2": [],
    "c3": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}, {"type": "text", "text": 5}],
}


def extension(pi):
    async def execute(call_id, params, signal, ctx):
        return ToolResult(content=CONTENTS[call_id], details={"n": 1}, is_error=True, terminate=True)

    params = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("failing", "failing", "Fails.", params, execute))
"""


def test_a_python_tools_error_result_is_one_text_of_its_blocks_texts_with_empty_details(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("tool_error_probe", _EXTENSION)
    calls = [{"name": "failing", "arguments": {}, "id": f"c{n}"} for n in (1, 2, 3)]
    sc = scenario({"agent": [{"text": "calling", "tool_calls": calls}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "go"}], spec)

    def results(observation: Any) -> list[tuple[Any, ...]]:
        found = [
            e["message"] for e in observation.entries if e.get("message", {}).get("role") == "toolResult"
        ]
        return [(m["toolCallId"], m["content"], m.get("details"), m["isError"]) for m in found]

    def text(value: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": value}]

    assert results(real) == [
        ("c1", text("first second"), {}, True),
        ("c2", text("tool failed"), {}, True),
        ("c3", text("5"), {}, True),
    ]
    # terminate is not taken from a thrown result: the model is asked again.
    assert len(real.requests("agent")) == 2
    assert results(sim) == results(real)
    assert_equivalent(real, sim)
