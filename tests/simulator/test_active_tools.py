"""``pi.set_active_tools`` and ``pi.get_all_tools`` on the simulator (``simulator/active_tools.py``),
one test per rule of Pi 1.6 (``setActiveToolsByName``/``_applyToolLoadout``,
``dist/core/agent-session.js:1182-1245``; ``buildRules``, system-prompt.js:31-62). The
differential twin is ``tests/realpi/test_differential_active_tools.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, NotInitializedError, ToolDefinition, ToolResult
from pi_continuity_harness.simulator.active_tools import (
    CORE_TOOL_NAMES,
    ActiveTools,
    activatable_tools,
    prompt_tools_and_rules,
    skills_reader,
    tool_infos,
)
from pi_continuity_harness.simulator.system_prompt import _data

from .helpers import agent_requests, base, entries, run

_BASH_RULE = "- Use bash for file operations like ls, rg, find\n"


async def _done(*_: Any) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": "done"}], details={"ok": True})


def _tool(name: str, snippet: str | None = None, execute: Any = _done) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        label=name,
        description="A probe tool.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        prompt_snippet=snippet,
    )


def test_the_default_is_the_four_builtins_then_every_extension_tool() -> None:
    assert ActiveTools().names([_tool("probe")]) == ["read", "bash", "edit", "write", "probe"]


def test_set_keeps_active_names_in_order_then_appends_new_ones_as_given_and_drops_unknown_ones() -> None:
    active = ActiveTools()
    tools = [_tool("probe")]
    active.set(["write", "probe", "grep", "nope", "read", "ls", 5], tools)  # type: ignore[list-item]
    assert active.names(tools) == ["read", "write", "probe", "grep", "ls"]
    active.set(["ls", "read"], tools)
    assert active.names(tools) == ["read", "ls"], "reordering the same names changes nothing"


def test_a_tool_registered_after_the_tools_were_set_is_appended() -> None:
    active = ActiveTools()
    active.set(["read"], [_tool("probe")])
    assert active.names([_tool("probe"), _tool("late")]) == ["read", "late"]


def test_a_tool_named_like_a_builtin_registered_after_the_tools_were_set_is_not_activated() -> None:
    """``_refreshToolRegistry`` (agent-session.js:3049-3055): the built-in's name was activated on
    registration before, so the new tool of that name is not."""
    active = ActiveTools()
    active.set(["read"], [])
    assert active.names([_tool("ls")]) == ["read"]


def test_the_default_names_each_tool_once() -> None:
    assert ActiveTools().names([_tool("read"), _tool("probe"), _tool("probe")]) == [
        "read",
        "bash",
        "edit",
        "write",
        "probe",
    ]


def test_a_later_tool_named_like_an_inactive_builtin_is_not_activated_by_default() -> None:
    """``_refreshToolRegistry`` (agent-session.js:3043-3055): every tool registered while loading
    is activated, a later one only if its name was not registered before (a built-in's was)."""
    tools = [_tool("grep"), _tool("ls"), _tool("read"), _tool("late")]
    assert [t.name for t in activatable_tools(tools, {"grep"})] == ["grep", "read", "late"]
    assert [t.name for t in activatable_tools(tools, None)] == ["grep", "ls", "read", "late"]


def test_a_reload_activates_every_extension_tool_again_but_not_a_deactivated_builtin() -> None:
    active = ActiveTools()
    active.set(["read"], [_tool("probe")])
    active.reload()
    assert active.names([_tool("probe")]) == ["read", "probe"]


def test_restore_activates_the_declared_tools_then_extension_tools_never_mentioned() -> None:
    """``_restoreToolsFromTranscript`` (agent-session.js:1460-1487)."""
    active = ActiveTools()
    tools = [_tool("probe"), _tool("gone"), _tool("fresh")]
    active.restore(["read", "gone"], {"read", "bash", "edit", "write", "probe", "gone"}, tools)
    assert active.names(tools) == ["read", "gone", "fresh"]


def test_restore_keeps_the_default_when_the_transcript_declares_it() -> None:
    active = ActiveTools()
    tools = [_tool("probe")]
    active.restore(
        ["read", "bash", "edit", "write", "probe"], {"read", "bash", "edit", "write", "probe"}, tools
    )
    assert active.explicit is None


def test_the_default_four_give_the_dumped_tools_and_rules_sections() -> None:
    dumped = _data()["sections"]
    assert prompt_tools_and_rules(["read", "bash", "edit", "write"], []) == (dumped["tools"], dumped["rules"])


def test_an_inactive_tools_line_and_guidelines_are_gone() -> None:
    tools, rules = prompt_tools_and_rules(["read", "write"], [])
    assert "- bash:" not in tools and "- edit:" not in tools
    assert _BASH_RULE not in rules and "PI_* environment" not in rules and "Use edit" not in rules
    assert "- Use read to examine files" in rules and "- Use write only" in rules


@pytest.mark.parametrize("name", ["grep", "find", "ls"])
def test_an_active_grep_find_or_ls_drops_the_bash_rule(name: str) -> None:
    assert _BASH_RULE in prompt_tools_and_rules(["bash"], [])[1]
    assert _BASH_RULE not in prompt_tools_and_rules(["bash", name], [])[1]


def test_powershell_has_its_own_file_operations_rule_and_shares_bashs_guideline() -> None:
    rules = prompt_tools_and_rules(["powershell"], [])[1]
    assert "- Use PowerShell for file operations like listing, searching, and finding files\n" in rules
    both = prompt_tools_and_rules(["bash", "powershell"], [])[1]
    assert "- Use bash or PowerShell for file operations" in both
    assert both.count("PI_* environment") == 1, "addRule keeps one copy of a repeated guideline"


def test_tools_are_listed_in_active_order_and_none_is_said_when_nothing_has_a_snippet() -> None:
    tools = prompt_tools_and_rules(["probe", "read"], [_tool("probe", "The  probe\n")])[0]
    assert tools.startswith("<tools>\n- probe: The probe\n- read: Read file contents\n\n")
    assert prompt_tools_and_rules(["quiet"], [_tool("quiet")])[0] == (
        "<tools>\n(none)\n\nAdditional tools may be available.\n</tools>"
    )


def test_skills_are_read_with_read_else_bash_else_not_listed() -> None:
    assert skills_reader(["bash", "read"]) == "read"
    assert skills_reader(["write", "bash"]) == "bash"
    assert skills_reader(["write"]) is None


def test_get_all_tools_lists_the_eight_builtins_then_extension_tools_one_named_like_a_builtin_in_its_place() -> (
    None
):
    infos = tool_infos([_tool("probe"), _tool("ls")], {"probe": "ext.py", "ls": "ext.py"}, "/pkg")
    assert [t.name for t in infos] == [*CORE_TOOL_NAMES, "probe", "codemode", "tool_search"]
    assert infos[0].source_info == {
        "path": "builtin:read",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert infos[0].prompt_guidelines == ("Use read to examine files instead of cat or sed.",)
    assert infos[7].description == "A probe tool." and infos[7].source_info["source"] == "cli"
    assert infos[5].prompt_guidelines is None and infos[8].exposure == "direct"


def _setter(when: str, names: list[str]) -> Any:
    def extension(pi: ExtensionAPI) -> None:
        async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            if when == "tool":
                pi.set_active_tools(names)
            return ToolResult(content=[{"type": "text", "text": "done"}], details={"ok": True})

        pi.register_tool(_tool("probe", "The probe", execute))
        if when != "tool":
            pi.on(when, lambda event, ctx: pi.set_active_tools(names))

    return extension


def _system(result: Any) -> list[dict[str, Any]]:
    return [
        e["message"] for e in entries(result) if e["type"] == "message" and e["message"]["role"] == "system"
    ]


def test_set_between_runs_shows_at_the_next_runs_system_message(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [{"text": "a"}, {"text": "b"}]}, operations=[{"prompt": "1"}, {"prompt": "2"}]
    )
    result = run(tmp_path, scenario, _setter("agent_end", ["read", "probe", "ls"]))
    assert [r.tools for r in agent_requests(result)] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read", "probe", "ls"],
    ]
    patch = _system(result)[1]
    assert list(patch["sections"]) == ["tools", "rules"] and _BASH_RULE not in patch["sections"]["rules"]
    assert [t["name"] for t in patch["toolsAdded"]] == ["ls"]
    assert patch["toolsRemoved"] == [{"name": "bash"}, {"name": "edit"}, {"name": "write"}]


def test_set_during_a_run_shows_at_the_next_turns_request(tmp_path: Path) -> None:
    call = {"name": "probe", "arguments": {}, "id": "c1"}
    scenario = base(
        model={"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "done"}]},
        operations=[{"prompt": "1"}],
    )
    result = run(tmp_path, scenario, _setter("tool", ["read"]))
    assert [r.tools for r in agent_requests(result)] == [["read", "bash", "edit", "write", "probe"], ["read"]]
    roles = [e["message"]["role"] for e in entries(result) if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "system", "assistant"]


def test_a_tool_registered_during_a_run_is_declared_at_the_next_turn(tmp_path: Path) -> None:
    """``registerTool`` after loading refreshes the registry at once (loader.js:246-249)."""

    def extension(pi: ExtensionAPI) -> None:
        async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
            pi.register_tool(_tool("late", "The late probe"))
            return ToolResult(content=[{"type": "text", "text": "done"}], details={"ok": True})

        pi.register_tool(_tool("probe", execute=execute))

    call = {"name": "probe", "arguments": {}, "id": "c1"}
    scenario = base(
        model={"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "done"}]},
        operations=[{"prompt": "1"}],
    )
    result = run(tmp_path, scenario, extension)
    assert [r.tools for r in agent_requests(result)][1][-1] == "late"
    patch = _system(result)[1]
    assert [t["name"] for t in patch["toolsAdded"]] == ["late"] and "- late: The late probe" in patch[
        "sections"
    ]["tools"]


def test_a_call_of_a_deactivated_tool_is_not_found(tmp_path: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "echo hi"}, "id": "c1"}
    scenario = base(
        model={"agent": [{"text": "a"}, {"text": "calling", "tool_calls": [call]}, {"text": "done"}]},
        operations=[{"prompt": "1"}, {"prompt": "2"}],
    )
    result = run(tmp_path, scenario, _setter("agent_end", ["read"]))
    [tool_result] = [
        e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"
    ]
    assert tool_result["isError"] is True and tool_result["content"][0]["text"] == "Tool bash not found"


def test_set_in_before_agent_start_shows_in_that_runs_first_system_message(tmp_path: Path) -> None:
    scenario = base(model={"agent": [{"text": "a"}]}, operations=[{"prompt": "1"}])
    result = run(tmp_path, scenario, _setter("before_agent_start", ["write", "read"]))
    [system] = _system(result)
    assert [t["name"] for t in system["toolsAdded"]] == ["read", "write"]
    assert system["sections"]["tools"].startswith("<tools>\n- read: Read file contents\n- write: ")
    assert _BASH_RULE not in system["sections"]["rules"]


def test_set_active_tools_while_loading_raises_not_initialized(tmp_path: Path) -> None:
    raised: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        for call in (lambda: pi.set_active_tools(["read"]), pi.get_all_tools):
            try:
                call()
            except NotInitializedError as error:
                raised.append(type(error).__name__)

    run(tmp_path, base(operations=[]), extension)
    assert raised == ["NotInitializedError", "NotInitializedError"]
