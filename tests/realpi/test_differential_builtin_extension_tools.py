"""Differential: the built-in extensions' tools ``codemode`` and ``tool_search``, real Pi 1.6 against the simulator.

Pi's CLI loads four built-in extensions before the user's (``dist/extensions/index.js:5-11``,
``main.js:487``). ``codemode`` (``extensions/codemode/index.js:17-31``) and ``tool-search``
(``extensions/tool-search/index.js:8-12``) each register one tool with ``defaultActive: false``:
inactive (``_isActivatedOnRegistration``, ``core/agent-session.js:3066-3068``), so neither the
prompt nor a request shows it, but ``getAllTools()`` (:1160-1172) lists both after the
extensions' tools, with ``exposure`` ``model-only``, and ``setActiveTools`` activates them.
A replaceable built-in extension that shares a tool name with another extension is left out
(``omitReplacedExtensions``, ``core/resource-loader.js:81-105``).

Each test asserts real Pi's record explicitly, then the simulator's. The old simulator listed
neither tool and ignored their names in ``set_active_tools``; before it modelled a call of
``tool_search`` it answered with a scripted built-in's empty text and no details.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_ACTIVATE = """\
import dataclasses
import json


def extension(pi):
    runs = []

    def end(event, ctx):
        runs.append(1)
        if len(runs) == 1:
            ctx.ui.notify("all: " + json.dumps([dataclasses.asdict(t) for t in pi.get_all_tools()]), "info")
            pi.set_active_tools(["read", "tool_search"])
            ctx.ui.notify("after: " + json.dumps(pi.get_active_tools()), "info")

    pi.on("agent_end", end)
"""


def _machine_free(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tools`` with the machine root before ``/pi-package/`` left out of the descriptions (each
    target's own root: a temporary directory on real Pi, a virtual one on the simulator)."""
    return [{**t, "description": re.sub(r"\S*(?=/pi-package/)", "<root>", t["description"])} for t in tools]


_BUILTINS = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"]


def _system_messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


def test_builtin_extension_tools_are_listed_inactive_and_tool_search_activates(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("builtin_ext_tools", _ACTIVATE)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], spec)

    # Real Pi: both listed after the extensions' tools (here none), model-only, inactive.
    everything = notes(real)["all"]
    assert [t["name"] for t in everything] == [*_BUILTINS, "codemode", "tool_search"]
    codemode, search = everything[-2:]
    assert codemode["exposure"] == search["exposure"] == "model-only"
    assert codemode["source_info"] == {
        "path": "builtin:codemode",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert search["source_info"]["path"] == "builtin:tool-search"
    assert codemode["description"].startswith("Run JavaScript that calls other tools.")
    assert codemode["description"].endswith("/pi-package/docs/codemode.md first.")
    assert codemode["parameters"] == {
        "type": "object",
        "required": ["code"],
        "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
    }
    assert codemode["prompt_guidelines"] == [
        "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter "
        "large output, instead of many separate calls."
    ]
    assert search["prompt_guidelines"] is None
    assert search["description"].startswith("# Tool discovery\n\nSearches over deferred tool metadata")
    assert search["parameters"]["required"] == ["query"]
    # set_active_tools activates tool_search: declared at the next request, its snippet listed.
    assert notes(real)["after"] == ["read", "tool_search"]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write"],
        ["read", "tool_search"],
    ]
    first, second = _system_messages(real.entries)
    assert "tool_search" not in first["sections"]["tools"] and "codemode" not in first["sections"]["tools"]
    assert [t["name"] for t in second["toolsAdded"]] == ["tool_search"]
    assert second["toolsAdded"][0] == {
        "name": "tool_search",
        "description": search["description"],
        "parameters": search["parameters"],
    }
    assert second["sections"]["tools"] == (
        "<tools>\n- read: Read file contents\n"
        "- tool_search: Search for tools that are not loaded yet and load the matches\n\n"
        "Additional tools may be available.\n</tools>"
    )

    assert _machine_free(notes(sim)["all"]) == _machine_free(everything)
    assert notes(sim)["after"] == notes(real)["after"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    simulated = _system_messages(sim.entries)
    assert len(simulated) == 2
    assert simulated[1]["sections"] == second["sections"]
    assert simulated[1]["toolsAdded"] == second["toolsAdded"]
    assert simulated[1]["toolsRemoved"] == second["toolsRemoved"]
    assert_equivalent(real, sim)


_REPLACE = """\
import dataclasses
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult


async def done(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "done"}])


def extension(pi):
    pi.register_tool(
        ToolDefinition(
            name="tool_search",
            label="tool_search",
            description="My own search.",
            parameters={"type": "object", "properties": {}},
            execute=done,
        )
    )

    def start(event, ctx):
        names = [[t.name, t.source_info["source"], t.exposure] for t in pi.get_all_tools()]
        ctx.ui.notify("all: " + json.dumps(names[8:]), "info")

    pi.on("before_agent_start", start)
"""


def test_an_extensions_own_tool_search_replaces_the_builtin_extension(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("builtin_ext_replaced", _REPLACE)
    sc = scenario({"agent": [{"text": "first"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)

    # Real Pi: the tool-search extension is left out; the extension's tool_search is active on
    # registration, and codemode stays.
    assert notes(real)["all"] == [["tool_search", "cli", "direct"], ["codemode", "builtin", "model-only"]]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "tool_search"]
    ]

    assert notes(sim)["all"] == notes(real)["all"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert_equivalent(real, sim)


_CALL = """\
def extension(pi):
    pi.on("session_start", lambda event, ctx: pi.set_active_tools(["read", "tool_search"]))
"""


def test_a_call_of_tool_search_finds_nothing_to_load_and_rejects_a_blank_query_or_bad_limit(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("builtin_ext_call", _CALL)
    calls = [
        {"name": "tool_search", "arguments": {"query": "files"}, "id": "c1"},
        {"name": "tool_search", "arguments": {"query": "  "}, "id": "c2"},
        {"name": "tool_search", "arguments": {"query": "files", "limit": 0}, "id": "c3"},
    ]
    sc = scenario({"agent": [{"text": "calling", "tool_calls": calls}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)

    def results(entries: list[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
        found = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
        return [(m["content"], m.get("details"), m["isError"]) for m in found]

    # Real Pi: no tool has codemode or deferred exposure, so nothing is found or loaded; a blank
    # query and a limit of 0 throw (extensions/tool-search/tool.js:249-263).
    assert results(real.entries) == [
        ([{"type": "text", "text": "No matching tools found."}], {"loaded": []}, False),
        ([{"type": "text", "text": "query must not be empty"}], {}, True),
        ([{"type": "text", "text": "limit must be a positive integer"}], {}, True),
    ]
    assert [r.request.tools for r in real.requests("agent")] == [["read", "tool_search"]] * 2

    assert results(sim.entries) == results(real.entries)
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert_equivalent(real, sim)
