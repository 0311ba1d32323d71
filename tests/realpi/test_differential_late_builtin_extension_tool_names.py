"""Differential: an extension tool named ``tool_search`` registered after loading, real Pi 1.6
against the simulator.

The built-in ``tool-search`` extension is left out at load when another extension registers a
tool of its name (``omitReplacedExtensions``, resource-loader.js:81-105); a ``session_start``
handler's registration comes after that check. Measured: real Pi still shows only the
extension's ``tool_search`` (``getAllTools`` lists it once, among the extensions' tools, with
the extension's description and path, then ``codemode``), declares it when activated, and runs
the extension's ``execute``. The simulator (which treats every extension tool of that name as
replacing the built-in, :mod:`.builtin_extension_tools`) agrees; this test pins the late case,
which no other test checks.
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


async def mine(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "mine"}], details={"mine": True})


def extension(pi):
    def start(event, ctx):
        pi.register_tool(ToolDefinition(
            name="tool_search", label="mine", description="My search.",
            parameters={"type": "object", "properties": {"query": {"type": "string"}}},
            execute=mine, prompt_snippet="My search",
        ))
        pi.set_active_tools(["read", "tool_search"])
        ctx.ui.notify("active: " + json.dumps(pi.get_active_tools()), "info")
        tools = [[t.name, t.source_info["source"]] for t in pi.get_all_tools()]
        ctx.ui.notify("all: " + json.dumps(tools[8:]), "info")

    pi.on("session_start", start)
"""


def _results(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]


def test_a_tool_search_registered_after_loading_replaces_the_built_in_one(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("late_tool_search", _EXTENSION)
    call = {"name": "tool_search", "arguments": {"query": "x"}, "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)

    assert notes(real)["active"] == ["read", "tool_search"]
    all_real = notes(real)["all"]
    assert [t[0] for t in all_real] == ["tool_search", "codemode"]
    assert [t[1] for t in all_real] == ["cli", "builtin"]
    assert [r.request.tools for r in real.requests("agent")] == [["read", "tool_search"]] * 2
    [declared] = [
        t
        for e in real.entries
        if e.get("message", {}).get("role") == "system"
        for t in e["message"].get("toolsAdded", [])
        if t["name"] == "tool_search"
    ]
    assert declared["description"] == "My search."
    [result] = _results(real.entries)
    assert result["content"] == [{"type": "text", "text": "mine"}] and result["details"] == {"mine": True}

    assert notes(sim)["active"] == notes(real)["active"]
    assert notes(sim)["all"] == all_real
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert [(r["content"], r["details"]) for r in _results(sim.entries)] == [
        (result["content"], result["details"])
    ]
    assert_equivalent(real, sim)
