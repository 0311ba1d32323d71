"""Differential: the system prompt's sections when an extension's tools change, real Pi 1.6 against the simulator.

Pi keeps the system prompt in the transcript as sections (``buildSystemPromptSections``,
``dist/core/system-prompt.js:66-122``). Its ``tools`` section lists each active, declared tool
that has a ``promptSnippet`` (``- <name>: <snippet>``, :83-85; the snippet on one line,
``_normalizePromptSnippet``, agent-session.js:1336-1344); a tool an extension registers is
active on registration (``_refreshToolRegistry``, :2976-3040) and the prompt is rebuilt
(``_rebuildSystemPrompt``, :1358-1384). Before each run Pi diffs the sections against the
transcript's and writes the changed ones as a system message (``_preparePromptAndToolLoadout``,
:1394-1400, ``diffSystemPromptSections``, system-prompt.js:139-150).

The extension below registers a tool with a snippet at load (the first system message lists it)
and, after the first run, a second one (the second run's system message patches ``tools``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult


async def execute(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "done"}])


def tool(name, snippet):
    return ToolDefinition(
        name=name,
        label=name,
        description="A probe tool.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
        prompt_snippet=snippet,
    )


def extension(pi):
    pi.register_tool(tool("probe_first", "Lists  the\\nfirst probe"))
    pi.register_tool(tool("probe_quiet", None))

    def later(event, ctx):
        pi.register_tool(tool("probe_later", "The later probe"))

    pi.on("agent_end", later)
"""


def _system_messages(entries: list[dict]) -> list[dict]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


def _section(prompt: str, name: str) -> str:
    return prompt[prompt.index(f"<{name}>\n") : prompt.index(f"</{name}>")]


def test_tools_section_lists_extension_tool_snippets_and_a_later_tool_is_a_section_patch(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("sections_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], spec)

    first, second = real.requests("agent")
    tools = _section(first.request.system_prompt, "tools")
    assert "- probe_first: Lists the first probe\n" in tools, tools
    assert "probe_quiet" not in tools and "probe_later" not in tools
    assert "- probe_later: The later probe\n" in _section(second.request.system_prompt, "tools")
    system = _system_messages(real.entries)
    assert len(system) == 2 and list(system[1]["sections"]) == ["tools"], json.dumps(system[1])

    assert [_section(r.request.system_prompt, "tools") for r in sim.requests("agent")] == [
        tools,
        _section(second.request.system_prompt, "tools"),
    ]
    assert [list(m["sections"]) for m in _system_messages(sim.entries)][1:] == [["tools"]]
    assert_equivalent(real, sim)


_LS_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult


async def execute(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "done"}])


def extension(pi):
    pi.register_tool(
        ToolDefinition(
            name="ls",
            label="ls",
            description="Lists.",
            parameters={"type": "object", "properties": {}},
            execute=execute,
        )
    )
"""


def test_rules_drop_the_bash_file_operations_rule_when_an_ls_tool_is_active(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``buildRules`` (system-prompt.js:41-54): the bash rule only while no ``grep``, ``find``
    or ``ls`` tool is declared; a tool without a snippet is not listed in ``tools``."""
    spec = python_extension("sections_ls", _LS_EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)
    (request,) = real.requests("agent")
    assert "Use bash for file operations" not in _section(request.request.system_prompt, "rules")
    assert "- ls:" not in _section(request.request.system_prompt, "tools")
    (simulated,) = sim.requests("agent")
    assert _section(simulated.request.system_prompt, "rules") == _section(
        request.request.system_prompt, "rules"
    )
    assert_equivalent(real, sim)


def test_a_reload_that_drops_a_later_tool_patches_the_tools_section_back(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A reload re-registers only the load-time tools (``_refreshToolRegistry`` after the
    reload, agent-session.js:3099): the tool registered in ``agent_end`` is gone, so the next
    run's system message patches ``tools`` back to the load-time list (the second run's patch
    had added it)."""
    spec = python_extension("sections_reload", _EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}, {"text": "third"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, "reload", {"prompt": "three"}]
    real, sim = play(targets, sc, ops, spec)
    first, second, third = real.requests("agent")
    assert "probe_later" in second.request.system_prompt
    assert third.request.system_prompt == first.request.system_prompt
    system = _system_messages(real.entries)
    assert [list(m["sections"]) for m in system][1:] == [["tools"], ["tools"]], json.dumps(system)
    assert [list(m["sections"]) for m in _system_messages(sim.entries)][1:] == [["tools"], ["tools"]]
    assert_equivalent(real, sim)


_CONTEXT_EXTENSION = """\
import os


def extension(pi):
    def later(event, ctx):
        with open(os.path.join(ctx.cwd, "AGENTS.md"), "w", encoding="utf-8") as handle:
            handle.write("\\ufeffBe brief.\\n")
        with open(os.path.join(os.path.dirname(ctx.cwd), "CLAUDE.md"), "w", encoding="utf-8") as handle:
            handle.write("From the machine root.")

    pi.on("agent_end", later)
"""


def _rooted(text: str, entries: list[dict]) -> str:
    """``text`` with the machine root (the parent of the first system message's cwd) written
    ``$ROOT``: the targets' roots differ, with the same lengths (``scenario/layout.py``)."""
    cwd = _system_messages(entries)[0]["sections"]["cwd"].split("\n")[1]
    return text.replace(cwd.rsplit("/", 1)[0], "$ROOT")


def test_context_files_written_before_a_reload_are_a_project_context_patch(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The resource loader reads the context files on reload (resource-loader.js:482-491,
    ``loadProjectContextFiles`` :179-210: ancestors outermost first, the cwd's last, without a
    BOM), so the next run patches ``project_context`` (system-prompt.js:25-30, :96-97)."""
    spec = python_extension("sections_context", _CONTEXT_EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "reload", {"prompt": "two"}], spec)
    system = _system_messages(real.entries)
    assert [list(m["sections"]) for m in system][1:] == [["project_context"]], json.dumps(system)
    patch = _rooted(system[1]["sections"]["project_context"], real.entries)
    assert patch == (
        "<project_context>\nProject-specific instructions and guidelines:\n\n"
        '<project_instructions path="$ROOT/CLAUDE.md">\nFrom the machine root.\n</project_instructions>\n\n'
        '<project_instructions path="$ROOT/project/AGENTS.md">\nBe brief.\n\n</project_instructions>\n'
        "</project_context>"
    )
    simulated = _system_messages(sim.entries)
    assert [list(m["sections"]) for m in simulated][1:] == [["project_context"]]
    assert _rooted(simulated[1]["sections"]["project_context"], sim.entries) == patch
    assert_equivalent(real, sim)


_PROMPT_FILES_EXTENSION = """\
import os


def extension(pi):
    def later(event, ctx):
        root = os.path.dirname(ctx.cwd)
        with open(os.path.join(root, "agent", "SYSTEM.md"), "w", encoding="utf-8") as handle:
            handle.write("You are the probe's own assistant.")
        with open(os.path.join(root, "agent", "APPEND_SYSTEM.md"), "w", encoding="utf-8") as handle:
            handle.write("\\ufeffGlobal addendum.")
        os.makedirs(os.path.join(ctx.cwd, ".pi"), exist_ok=True)
        with open(os.path.join(ctx.cwd, ".pi", "APPEND_SYSTEM.md"), "w", encoding="utf-8") as handle:
            handle.write("Project addendum.")

    pi.on("agent_end", later)
"""


def test_system_and_append_system_files_written_before_a_reload_are_a_section_patch(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``SYSTEM.md`` replaces the preamble and drops ``tools``, ``rules`` and ``docs``;
    ``APPEND_SYSTEM.md`` is the ``addendum`` section (system-prompt.js:77-96); the project's
    ``.pi/`` file wins only in a trusted project, else the agent directory's
    (resource-loader.js:961-982). Read on reload, so the next run patches them."""
    spec = python_extension("sections_files", _PROMPT_FILES_EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "reload", {"prompt": "two"}], spec)
    system = _system_messages(real.entries)
    assert len(system) == 2, json.dumps(system)
    patch = system[1]["sections"]
    assert patch["preamble"] == "You are the probe's own assistant."
    assert patch["tools"] is None and patch["rules"] is None and patch["docs"] is None
    # The harness's project is trusted, so its ``.pi/APPEND_SYSTEM.md`` wins over the agent's.
    assert patch["addendum"] == "<addendum>\nProject addendum.\n</addendum>"
    assert _system_messages(sim.entries)[1]["sections"] == patch
    assert_equivalent(real, sim)
