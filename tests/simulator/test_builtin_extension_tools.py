"""The built-in extensions' tools ``codemode`` and ``tool_search`` (simulator/builtin_extension_tools.py).

Pi 1.6 registers them inactive (``defaultActive: false``, ``extensions/codemode/index.js:17-31``,
``extensions/tool-search/index.js:8-12``): listed by ``getAllTools()`` after the extensions'
tools (agent-session.js:1160-1172), never activated on registration, reload or restore
(:1477, :3046-3050, :3066-3068), and activated by ``setActiveTools``; a replaceable built-in
extension gives way to an extension registering the same tool (resource-loader.js:81-105).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult
from pi_continuity_harness.simulator.active_tools import (
    CORE_TOOL_NAMES,
    ActiveTools,
    prompt_tools_and_rules,
    tool_infos,
)
from pi_continuity_harness.simulator.builtin_extension_tools import run_tool_search

from .helpers import agent_requests, base, entries, run


async def _done(*_: Any) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": "done"}])


def _tool(name: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        label=name,
        description="A probe tool.",
        parameters={"type": "object", "properties": {}},
        execute=_done,
    )


def test_get_all_tools_lists_codemode_and_tool_search_after_the_extensions_tools_model_only() -> None:
    infos = tool_infos([_tool("probe")], {"probe": "ext.py"}, "/machine/pi-package/")
    assert [t.name for t in infos] == [*CORE_TOOL_NAMES, "probe", "codemode", "tool_search"]
    codemode, search = infos[-2:]
    assert codemode.exposure == search.exposure == "model-only"
    assert codemode.source_info == {
        "path": "builtin:codemode",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert search.source_info["path"] == "builtin:tool-search" and search.prompt_guidelines is None
    assert codemode.description.endswith("Read /machine/pi-package/docs/codemode.md first.")
    assert codemode.parameters["required"] == ["code"]
    assert codemode.prompt_guidelines is not None and codemode.prompt_guidelines[0].startswith("Use codemode")


def test_an_extension_tool_of_the_same_name_replaces_the_builtin_extensions_tool() -> None:
    infos = tool_infos([_tool("tool_search")], {"tool_search": "ext.py"}, "/pkg")
    assert [(t.name, t.source_info["source"]) for t in infos[8:]] == [
        ("tool_search", "cli"),
        ("codemode", "builtin"),
    ]


def test_they_are_inactive_by_default_and_not_appended_once_tools_are_set_or_reloaded() -> None:
    active = ActiveTools()
    assert active.names([]) == ["read", "bash", "edit", "write"]
    active.set(["read"], [])
    assert active.names([_tool("late")]) == ["read", "late"]
    active.reload()
    assert active.names([_tool("late")]) == ["read", "late"]


def test_set_active_tools_activates_tool_search_but_not_codemode_which_is_not_modelled() -> None:
    active = ActiveTools()
    active.set(["read", "codemode", "tool_search"], [])
    assert active.names([]) == ["read", "tool_search"]
    tools, _ = prompt_tools_and_rules(["read", "tool_search"], [])
    assert "- tool_search: Search for tools that are not loaded yet and load the matches\n" in tools


def test_a_restore_keeps_a_declared_tool_search_and_adds_neither_as_new() -> None:
    active = ActiveTools()
    active.restore(["read", "tool_search"], {"read", "tool_search"}, [])
    assert active.names([]) == ["read", "tool_search"]
    fresh = ActiveTools()
    fresh.restore(["read", "bash", "edit", "write"], {"read", "bash", "edit", "write"}, [])
    assert fresh.names([]) == ["read", "bash", "edit", "write"] and fresh.explicit is None


def test_an_activated_tool_search_is_declared_at_the_next_request(tmp_path: Path) -> None:
    def extension(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda event, ctx: pi.set_active_tools(["read", "tool_search"]))

    scenario = base(
        model={"agent": [{"text": "a"}, {"text": "b"}]}, operations=[{"prompt": "1"}, {"prompt": "2"}]
    )
    result = run(tmp_path, scenario, extension)
    assert [r.tools for r in agent_requests(result)] == [
        ["read", "bash", "edit", "write"],
        ["read", "tool_search"],
    ]
    patch = [
        e["message"] for e in entries(result) if e["type"] == "message" and e["message"]["role"] == "system"
    ][1]
    [added] = patch["toolsAdded"]
    assert added["name"] == "tool_search" and added["parameters"]["required"] == ["query"]


def test_tool_search_finds_nothing_and_throws_for_a_blank_query_or_a_limit_no_positive_integer() -> None:
    assert run_tool_search({"query": "files"}) == ("No matching tools found.", {"loaded": []})
    assert run_tool_search({"query": "files", "limit": 2.0}) == ("No matching tools found.", {"loaded": []})
    for args, message in [
        ({"query": " \n"}, "query must not be empty"),
        ({"query": "x", "limit": 0}, "limit must be a positive integer"),
        ({"query": "x", "limit": 1.5}, "limit must be a positive integer"),
    ]:
        with pytest.raises(ValueError, match=message):
            run_tool_search(args)
