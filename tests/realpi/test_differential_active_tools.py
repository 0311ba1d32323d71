"""Differential: ``pi.set_active_tools`` and ``pi.get_all_tools``, real Pi 1.6 against the simulator.

Pi's ``setActiveTools(names)`` (``setActiveToolsByName``/``_applyToolLoadout``,
``dist/core/agent-session.js:1182-1245``) keeps the registered names among ``names`` (an unknown
one is ignored), those already active in their order, then the newly active in the order given;
it rebuilds the prompt at once (``_rebuildSystemPrompt``, :1358-1384). The model sees the change
at its next request: the next run's system message (``_preparePromptAndToolLoadout``,
:1394-1400), or, during a run, the system message before the next turn's request
(``prepareNextTurnWithContext``, :593-620; pi-agent-core ``agent-loop.js:110-126``), carrying
the patched ``tools`` and ``rules`` sections (``buildRules``, system-prompt.js:31-62: the bash
rule goes once ``grep``, ``find`` or ``ls`` is active; each active tool's guidelines) and the
tool changes (``toolsAdded``/``toolsRemoved``). A ``before_agent_start`` handler's change shows
in that very run: Pi builds the run's sections after the handlers (:1560-1599).

Each test asserts real Pi's record explicitly, then the simulator's. Before the simulator
modelled the active tools, ``pi.set_active_tools`` raised ``AttributeError`` there (an
``extension_error``), so every request declared the default tools.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets import Observation

pytestmark = pytest.mark.realpi

_TOOL = """\
import dataclasses
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult


def probe(execute, name="probe", snippet="The probe"):
    return ToolDefinition(
        name=name,
        label=name,
        description="A probe tool.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        prompt_snippet=snippet,
    )


async def done(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "done"}])
"""

_BETWEEN_RUNS = (
    _TOOL
    + """

def extension(pi):
    pi.register_tool(probe(done))
    runs = []

    def end(event, ctx):
        runs.append(1)
        if len(runs) == 1:
            pi.set_active_tools(["write", "probe", "grep", "nope", "read", "ls"])
            ctx.ui.notify("after: " + json.dumps(pi.get_active_tools()), "info")
            ctx.ui.notify("all: " + json.dumps([dataclasses.asdict(t) for t in pi.get_all_tools()]), "info")

    pi.on("agent_end", end)
"""
)

_PROBE_RULES = (
    "<rules>\n- Use read to examine files instead of cat or sed.\n"
    "- Use write only for new files or complete rewrites.\n"
    "- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>"
)


def _system_messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


def _without_note(observation: Observation, label: str) -> Observation:
    """``observation`` without its ``label: ...`` notifications (compared above, field by field)."""
    kept = [n for n in observation.notifications if not n[0].startswith(f"{label}: ")]
    return dataclasses.replace(observation, notifications=kept)


def _changes(message: dict[str, Any]) -> tuple[list[str], list[str]]:
    """A system message's declared tool changes, by name."""
    return [t["name"] for t in message.get("toolsAdded", [])], [
        t["name"] for t in message.get("toolsRemoved", [])
    ]


def test_set_active_tools_between_runs_keeps_order_drops_unknown_names_and_patches_tools_and_rules(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("active_between_runs", _BETWEEN_RUNS)
    bash = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
    sc = scenario({"agent": [{"text": "first"}, {"text": "calling", "tool_calls": [bash]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], spec)

    # Real Pi: kept names in their order, then the new ones as given; "nope" ignored.
    assert notes(real)["after"] == ["read", "write", "probe", "grep", "ls"]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read", "write", "probe", "grep", "ls"],
        ["read", "write", "probe", "grep", "ls"],
    ]
    # A call of a deactivated tool: not among the executable tools (agent-loop.js:478-492).
    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["isError"] is True and result["content"] == [
        {"type": "text", "text": "Tool bash not found"}
    ]
    _, second = _system_messages(real.entries)
    assert _changes(second) == (["grep", "ls"], ["bash", "edit"])
    assert second["sections"] == {
        "tools": "<tools>\n- read: Read file contents\n- write: Create or overwrite files\n- probe: The probe\n"
        "- grep: Search file contents for patterns (respects .gitignore)\n- ls: List directory contents\n\n"
        "Additional tools may be available.\n</tools>",
        "rules": _PROBE_RULES,
    }
    # getAllTools: the eight built-ins, the extension's tool, then the built-in extensions' two
    # (compared in test_differential_builtin_extension_tools.py).
    everything = notes(real)["all"]
    names = [t["name"] for t in everything]
    builtins = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"]
    assert names == [*builtins, "probe", "codemode", "tool_search"]
    assert everything[0]["source_info"] == {
        "path": "builtin:read",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    assert everything[5]["prompt_guidelines"] is None and everything[8]["source_info"]["source"] == "cli"

    assert notes(sim)["after"] == notes(real)["after"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    simulated = _system_messages(sim.entries)
    assert len(simulated) == 2 and _changes(simulated[1]) == _changes(second)
    assert simulated[1]["sections"] == second["sections"]
    assert simulated[1]["toolsAdded"] == second["toolsAdded"]
    sim_all = notes(sim)["all"]
    for tool in (t for t in sim_all + everything if t["name"] == "probe"):
        tool["source_info"].pop("path")  # the Python file there, the bridge's wrapper here
    assert sim_all[:9] == everything[:9]
    assert [t["name"] for t in sim_all] == names
    assert_equivalent(_without_note(real, "all"), _without_note(sim, "all"))


_MID_RUN = (
    _TOOL
    + """

def extension(pi):
    async def execute(call_id, params, signal, ctx):
        pi.set_active_tools(["probe", "read"])
        ctx.ui.notify("midrun: " + json.dumps(pi.get_active_tools()), "info")
        # (details given: a Python tool's ``None`` is ``null`` on real Pi, left out by the simulator)
        return ToolResult(content=[{"type": "text", "text": "done"}], details={"ok": True})

    pi.register_tool(probe(execute))
"""
)


def test_set_active_tools_during_a_run_shows_at_the_next_turns_request(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("active_mid_run", _MID_RUN)
    call = {"name": "probe", "arguments": {}, "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)

    assert notes(real)["midrun"] == ["read", "probe"]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read", "probe"],
    ]
    roles = [e["message"]["role"] for e in real.entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "system", "assistant"]
    patch = _system_messages(real.entries)[1]
    assert _changes(patch) == ([], ["bash", "edit", "write"])
    assert patch["sections"] == {
        "tools": "<tools>\n- read: Read file contents\n- probe: The probe\n\n"
        "Additional tools may be available.\n</tools>",
        "rules": "<rules>\n- Use read to examine files instead of cat or sed.\n"
        "- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>",
    }

    assert notes(sim)["midrun"] == notes(real)["midrun"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert [e["message"]["role"] for e in sim.entries if e["type"] == "message"] == roles
    simulated = _system_messages(sim.entries)[1]
    assert _changes(simulated) == _changes(patch) and simulated["sections"] == patch["sections"]
    assert_equivalent(real, sim)


_RELOAD = (
    _TOOL
    + """

def extension(pi):
    pi.register_tool(probe(done))

    def end(event, ctx):
        pi.set_active_tools(["read"])

    pi.on("agent_end", end)
    pi.on("session_start", lambda event, ctx: ctx.ui.notify(
        "start: " + json.dumps([event.reason, pi.get_active_tools()]), "info"))
"""
)


def test_a_reload_activates_every_extension_tool_again_but_not_a_deactivated_built_in(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``reload`` (agent-session.js:3118-3135): the active names stay and every extension tool
    of the new runtime is activated (``includeAllExtensionTools``)."""
    spec = python_extension("active_reload", _RELOAD)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "reload", {"prompt": "two"}], spec)
    assert notes(real)["start"] == ["reload", ["read", "probe"]]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read", "probe"],
    ]
    assert notes(sim)["start"] == notes(real)["start"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert [m.get("sections") for m in _system_messages(sim.entries)[1:]] == [
        m.get("sections") for m in _system_messages(real.entries)[1:]
    ]
    assert_equivalent(real, sim)


_BEFORE_AGENT_START = (
    _TOOL
    + """

def extension(pi):
    def before(event, ctx):
        if event.prompt == "one":
            pi.set_active_tools(["read", "write"])
        else:
            pi.register_tool(probe(done, "late", "The late probe"))
            pi.register_tool(probe(done, "ls", "Lists"))

    pi.on("before_agent_start", before)
"""
)


def test_a_before_agent_start_handlers_set_active_tools_shows_in_that_run_a_registered_tool_next_run(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """Pi builds the run's sections after the ``before_agent_start`` handlers, with the live
    active tools but the snippets of the options it handed them (agent-session.js:1560-1599): a
    ``set_active_tools`` there shows in that run's first system message. A tool a handler
    registers is declared in that run and listed in ``tools`` from the next; one named like a
    built-in (``ls``) registered after loading is not activated (``_refreshToolRegistry``,
    :3049-3055: the built-in's name was activated on registration before)."""
    spec = python_extension("active_before_start", _BEFORE_AGENT_START)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}, {"prompt": "three"}], spec)
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "write"],
        ["read", "write", "late"],
        ["read", "write", "late"],
    ]
    first, second, third = _system_messages(real.entries)
    assert _changes(first) == (["read", "write"], [])
    assert first["sections"]["tools"] == (
        "<tools>\n- read: Read file contents\n- write: Create or overwrite files\n\n"
        "Additional tools may be available.\n</tools>"
    )
    assert first["sections"]["rules"] == _PROBE_RULES
    # The run whose handler registered ``late``: declared, not listed (no section patch).
    assert _changes(second) == (["late"], []) and "sections" not in second
    assert _changes(third) == ([], []) and third["sections"] == {
        "tools": "<tools>\n- read: Read file contents\n- write: Create or overwrite files\n"
        "- late: The late probe\n\nAdditional tools may be available.\n</tools>"
    }

    simulated = _system_messages(sim.entries)
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert [(_changes(m), m.get("sections")) for m in simulated[1:]] == [
        (_changes(m), m.get("sections")) for m in (second, third)
    ], json.dumps(simulated[1:])
    assert _changes(simulated[0]) == _changes(first)
    assert simulated[0]["sections"]["tools"] == first["sections"]["tools"]
    assert simulated[0]["sections"]["rules"] == first["sections"]["rules"]
    assert_equivalent(real, sim)


def test_a_restart_restores_the_tools_the_transcript_declares(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``_restoreToolsFromTranscript`` (agent-session.js:245, :1460-1487): a runtime started on
    a session whose branch declares tools activates those, not Pi's default, and its
    ``session_start`` handlers already see them. What counts is what a request declared: the
    ``set_active_tools`` after the second run is declared by none, so only the first one's
    (``read``, declared by the second run) is restored; ``probe``, declared and then removed, is
    not registered anew."""
    spec = python_extension("active_restore", _RELOAD)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, "restart", {"prompt": "three"}]
    real, sim = play(targets, sc, ops, spec)
    starts = [n for n, _ in real.notifications if n.startswith("start: ")]
    assert starts == [
        'start: ["startup", ["read", "bash", "edit", "write", "probe"]]',
        'start: ["startup", ["read"]]',
    ]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read"],
        ["read"],
    ]
    assert [n for n, _ in sim.notifications if n.startswith("start: ")] == starts
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert_equivalent(real, sim)


def test_a_tree_navigation_restores_the_tools_of_the_branch_it_moves_to(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``navigateTree`` (agent-session.js:3515): back on the first user message's parent, the
    branch declares Pi's default tools again, so the next run's request declares them."""
    spec = python_extension("active_tree", _RELOAD)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 1}}, {"prompt": "three"}]
    real, sim = play(targets, sc, ops, spec)
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read"],
        ["read", "bash", "edit", "write", "probe"],
    ]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert_equivalent(real, sim)


def test_a_fork_restores_the_tools_its_branch_declares(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A fork is a new runtime on the branch up to the chosen message's parent
    (agent-session-runtime.js:223-247), whose constructor restores that branch's tools
    (agent-session.js:245): before the third message, the second run's ``read`` is declared."""
    spec = python_extension("active_fork", _RELOAD)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}, {"text": "fourth"}]})
    ops = [
        {"prompt": "one"},
        {"prompt": "two"},
        {"prompt": "three"},
        {"fork": {"message": 3}},
        {"prompt": "four"},
    ]
    real, sim = play(targets, sc, ops, spec)
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read"],
        ["read"],
        ["read"],
    ]
    assert notes(real)["start"] == ["fork", ["read"]]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert notes(sim)["start"] == notes(real)["start"]
    assert_equivalent(real, sim)


_REGISTER_MID_RUN = (
    _TOOL
    + """

def extension(pi):
    async def execute(call_id, params, signal, ctx):
        pi.register_tool(probe(done, "late", "The late probe"))
        return ToolResult(content=[{"type": "text", "text": "done"}], details={"ok": True})

    pi.register_tool(probe(execute))
"""
)


def test_a_tool_registered_during_a_run_shows_at_the_next_turns_request(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``registerTool`` after loading refreshes the registry at once (loader.js:246-249,
    ``_refreshToolRegistry``): the new tool is active, and the next turn's system message
    declares it and lists its snippet (``prepareNextTurnWithContext``, agent-session.js:593-620)."""
    spec = python_extension("active_register_mid_run", _REGISTER_MID_RUN)
    call = {"name": "probe", "arguments": {}, "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "probe"],
        ["read", "bash", "edit", "write", "probe", "late"],
    ]
    patch = _system_messages(real.entries)[1]
    assert _changes(patch) == (["late"], [])
    assert list(patch["sections"]) == ["tools"] and "- late: The late probe\n" in patch["sections"]["tools"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    simulated = _system_messages(sim.entries)[1]
    assert _changes(simulated) == _changes(patch) and simulated["sections"] == patch["sections"]
    assert_equivalent(real, sim)


_BUILTIN_NAMES = (
    _TOOL
    + """

def extension(pi):
    pi.register_tool(probe(done, "read", "My read"))
    pi.register_tool(probe(done, "grep", None))

    def end(event, ctx):
        pi.register_tool(probe(done, "ls", "Lists"))
        ctx.ui.notify("active: " + json.dumps(pi.get_active_tools()), "info")

    pi.on("agent_end", end)
"""
)


def test_extension_tools_named_like_built_ins_replace_them_once_and_a_later_one_stays_inactive(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """An extension's ``read`` replaces the built-in's definition in the registry (a Map,
    agent-session.js:2990-3000): ``read`` is declared once, with the extension's description, and
    listed with its snippet; ``grep`` registered while loading is activated
    (``includeAllExtensionTools``, :3043-3047), ``ls`` registered later is not (its name was
    registered before, :3049-3055), so it neither is declared nor changes ``rules``."""
    spec = python_extension("active_builtin_names", _BUILTIN_NAMES)
    call = {"name": "ls", "arguments": {}, "id": "c1"}
    sc = scenario({"agent": [{"text": "first"}, {"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], spec)
    assert notes(real)["active"] == ["read", "bash", "edit", "write", "grep"]
    assert [r.request.tools for r in real.requests("agent")] == [
        ["read", "bash", "edit", "write", "grep"]
    ] * 3
    first = _system_messages(real.entries)[0]
    assert [t["description"] for t in first["toolsAdded"]][:2] == [
        "A probe tool.",
        first["toolsAdded"][1]["description"],
    ]
    assert first["sections"]["tools"].startswith("<tools>\n- read: My read\n- bash: ")
    assert len(_system_messages(real.entries)) == 1
    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["content"] == [{"type": "text", "text": "Tool ls not found"}]

    assert notes(sim)["active"] == notes(real)["active"]
    assert [r.request.tools for r in sim.requests("agent")] == [
        r.request.tools for r in real.requests("agent")
    ]
    assert _system_messages(sim.entries)[0]["toolsAdded"] == first["toolsAdded"]
    assert len(_system_messages(sim.entries)) == 1
    assert_equivalent(real, sim)
