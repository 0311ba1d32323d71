"""Differential: a Python tool's result whose ``details`` is ``None``, real Pi 1.6 against the
simulator.

``ToolResult.details`` defaults to ``None``, which crosses the bridge as JSON ``null``
(``wire_json.result_to_wire``); ``bridge.ts`` hands Pi ``{content, details}`` and pi-agent-core's
``createToolResultMessage`` copies ``details`` whatever it is (agent-loop.js:656-670), so the
toolResult message and its session entry carry ``"details": null``. A built-in tool's result
without details has no key (``undefined``). Before, the simulator left the key out for ``None``.

Each call runs alone in its turn: Pi runs a reply's calls in parallel and emits each
``tool_execution_end`` when its call finishes (``executeToolCallsParallel``, agent-loop.js:414-461),
so whether the built-in ``write`` ends before the Python tools, which answer through the bridge,
depends on how fast the real processes run, which no simulator can know (CI on 5 December 2026
saw ``write`` end first; the simulator's tools finish in call order).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult


async def plain(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "plain"}])


async def detailed(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "detailed"}], details={"n": 1})


def extension(pi):
    for name, execute in (("plain", plain), ("detailed", detailed)):
        pi.register_tool(
            ToolDefinition(
                name=name,
                label=name,
                description="A probe tool.",
                parameters={"type": "object", "properties": {}},
                execute=execute,
            )
        )
"""


def test_a_python_tools_none_details_is_written_as_null_and_a_builtins_missing_details_is_absent(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("details_none_probe", _EXTENSION)
    calls = [
        {"name": "plain", "arguments": {}, "id": "c1"},
        {"name": "detailed", "arguments": {}, "id": "c2"},
        {"name": "write", "arguments": {"path": "out.txt", "content": "x"}, "id": "c3"},
    ]
    replies = [{"text": "calling", "tool_calls": [call]} for call in calls] + [{"text": "DONE"}]
    sc = scenario({"agent": replies})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "details_none_probe:extension")

    def results(observation: Observation) -> list[tuple[str, bool, object]]:
        messages = [
            e["message"] for e in observation.entries if e.get("message", {}).get("role") == "toolResult"
        ]
        return [(m["toolName"], "details" in m, m.get("details")) for m in messages]

    # Real Pi: null for the Python tool's None, the dict as given, no key for the built-in's.
    assert results(real) == [("plain", True, None), ("detailed", True, {"n": 1}), ("write", False, None)]
    assert results(sim) == results(real)
    assert_equivalent(real, sim)
