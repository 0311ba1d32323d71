"""``pi.get_commands`` on the simulator, one test per rule of Pi 1.6's ``getCommands``
(``AgentSession._bindExtensionCore``, dist/core/agent-session.js:2849-2872;
``resolveRegisteredCommands``, core/extensions/runner.js:569-597; ``omitReplacedExtensions``,
core/resource-loader.js:81-105; ``simulator/commands.py``). The differential twin is
``tests/realpi/test_differential_get_commands.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import CommandInfo, ExtensionAPI, NotInitializedError
from pi_continuity_harness.simulator.commands import resolve_commands
from pi_continuity_harness.simulator.prompt_templates import (
    PromptTemplatesNotModelledError,
    prompt_templates_problem,
)

from .helpers import base, run_all

_LLAMA = "Manage llama.cpp router models"
_MCP = "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"


async def _noop(args: str, ctx: Any) -> None:
    pass


def _listing(pi: ExtensionAPI, seen: list[list[CommandInfo]]) -> None:
    async def probe(args: str, ctx: Any) -> None:
        seen.append(pi.get_commands())

    pi.register_command("probe", probe)


def _play(tmp_path: Path, *factories: Any, **overrides: Any) -> Any:
    return run_all(tmp_path, base(operations=[{"command": "/probe"}], **overrides), *factories)


def _names(commands: list[CommandInfo]) -> list[str]:
    return [c.name for c in commands]


def test_get_commands_raises_while_the_factory_runs(tmp_path: Path) -> None:
    raised: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        try:
            pi.get_commands()
        except NotInitializedError as error:
            raised.append(str(error))

    _play(tmp_path, extension)
    assert raised == [
        "Extension runtime not initialized. Action methods cannot be called during extension loading."
    ]


def test_extension_commands_come_in_load_order_each_in_the_order_its_names_were_first_registered(
    tmp_path: Path,
) -> None:
    seen: list[list[CommandInfo]] = []

    def first(pi: ExtensionAPI) -> None:
        pi.register_command("zeta", _noop, description="old")
        pi.register_command("alpha", _noop)
        pi.register_command("zeta", _noop, description="new")
        _listing(pi, seen)

    def second(pi: ExtensionAPI) -> None:
        pi.register_command("beta", _noop, description="b")

    _play(tmp_path, first, second)
    (commands,) = seen
    assert _names(commands) == ["zeta", "alpha", "probe", "beta", "llama", "mcp"]
    zeta, alpha = commands[:2]
    assert (zeta.description, alpha.description) == ("new", None)
    assert {c.source for c in commands} == {"extension"}
    assert commands[0].source_info["path"] != commands[3].source_info["path"]
    assert commands[0].source_info == {**commands[0].source_info, "source": "cli", "scope": "temporary"}


def test_a_name_several_commands_share_is_numbered_and_a_taken_invocation_name_counted_on() -> None:
    names = [name for name, _ in resolve_commands([(n, None) for n in ["a", "x", "a", "a:1", "x:2", "x"]])]
    # "a:1" is the first "a" already, so the command named "a:1" counts on to "a:1:2"; the
    # command named "x:2" is registered once ("x:2"), so the second "x" counts on to "x:3".
    assert names == ["a:1", "x:1", "a:2", "a:1:2", "x:2", "x:3"]


def test_a_numbered_invocation_name_runs_its_own_command(tmp_path: Path) -> None:
    ran: list[str] = []

    def command(label: str) -> Any:
        async def handler(args: str, ctx: Any) -> None:
            ran.append(label)

        return handler

    def first(pi: ExtensionAPI) -> None:
        pi.register_command("shared", command("first shared"))

    def second(pi: ExtensionAPI) -> None:
        pi.register_command("shared", command("second shared"))
        pi.register_command("shared:1", command("second shared:1"))

    ops = [{"command": "/shared:1"}, {"command": "/shared:2"}, {"command": "/shared:1:2"}]
    run_all(tmp_path, base(operations=ops), first, second)
    assert ran == ["first shared", "second shared", "second shared:1"]


def test_the_builtin_commands_follow_the_extensions_and_mcp_registered_while_loading_replaces_the_builtin(
    tmp_path: Path,
) -> None:
    seen: list[list[CommandInfo]] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.register_command("mcp", _noop, description="mine")
        _listing(pi, seen)

    _play(tmp_path, extension)
    (commands,) = seen
    assert _names(commands) == ["mcp", "probe", "llama"]
    llama = commands[-1]
    assert (llama.description, llama.source) == (_LLAMA, "extension")
    assert llama.source_info == {
        "path": "builtin:llama.cpp",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }


def test_a_command_registered_after_loading_is_listed_and_shares_the_builtins_name(tmp_path: Path) -> None:
    seen: list[list[CommandInfo]] = []

    def extension(pi: ExtensionAPI) -> None:
        async def probe(args: str, ctx: Any) -> None:
            pi.register_command("mcp", _noop)
            seen.append(pi.get_commands())

        pi.register_command("probe", probe)

    _play(tmp_path, extension)
    (commands,) = seen
    assert _names(commands) == ["probe", "mcp:1", "llama", "mcp:2"]
    assert (commands[-1].description, commands[-1].source_info["path"]) == (_MCP, "builtin:mcp")


def test_skills_follow_as_skill_name_with_the_naming_extensions_source_info(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    for name, extra in (("beta", ""), ("alpha", "\ndisable-model-invocation: true")):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(f"---\ndescription: the {name} skill{extra}\n---\n\nBody\n")
    seen: list[list[CommandInfo]] = []

    def extension(pi: ExtensionAPI) -> None:
        _listing(pi, seen)

    def namer(pi: ExtensionAPI) -> None:
        pi.on("resources_discover", lambda event, ctx: {"skillPaths": [str(skills)]})

    _play(tmp_path, extension, namer)
    (commands,) = seen
    assert _names(commands) == ["probe", "llama", "mcp", "skill:alpha", "skill:beta"]
    alpha = commands[3]
    namer_path = alpha.source_info["source"].removeprefix("extension:")
    assert (alpha.description, alpha.source) == ("the alpha skill", "skill")
    assert alpha.source_info == {
        "path": str(skills / "alpha" / "SKILL.md"),
        "source": f"extension:{namer_path}",
        "scope": "temporary",
        "origin": "top-level",
        "baseDir": ".",
    }
    # The namer is the second extension: not the listing one's.
    assert namer_path != commands[0].source_info["path"]


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        (
            {"files": {"$AGENT/prompts/.gitignore": {"text": "review.md\n"}}},
            "$AGENT/prompts has an ignore file (.gitignore)",
        ),
        (
            {"files": {".pi/prompts/.fdignore": {"text": "review.md\n"}}},
            "$PROJECT/.pi/prompts has an ignore file (.fdignore)",
        ),
        (
            {"settings": {"global": {"prompts": ["somewhere"]}}},
            "the settings name prompt templates (prompts)",
        ),
    ],
)
def test_a_run_that_may_have_templates_beyond_the_default_folders_is_refused(
    tmp_path: Path, overrides: dict[str, Any], problem: str
) -> None:
    """Run without them, its ``/name`` prompts and ``get_commands`` would lack templates real Pi
    loads: the runtime's start refuses it (``HostRuntimes._load_prompt_templates``)."""
    seen: list[list[CommandInfo]] = []

    def extension(pi: ExtensionAPI) -> None:
        _listing(pi, seen)

    message = f"prompt templates beyond Pi's default folders are not modelled by the simulator ({problem})"
    with pytest.raises(PromptTemplatesNotModelledError) as raised:
        _play(tmp_path, extension, **overrides)
    assert str(raised.value) == message
    assert seen == []


def test_an_extension_command_named_like_a_builtin_one_is_numbered_and_runs_by_its_number(
    tmp_path: Path,
) -> None:
    """``llama`` is the built-in llama.cpp extension's too (loaded after the ``-e`` ones): the
    extension's is ``llama:1``, and ``/llama:1`` runs it (``getCommand``, runner.js:608-610)."""
    ran: list[str] = []
    seen: list[list[CommandInfo]] = []

    def extension(pi: ExtensionAPI) -> None:
        async def mine(args: str, ctx: Any) -> None:
            ran.append(args)

        pi.register_command("llama", mine)
        _listing(pi, seen)

    run_all(tmp_path, base(operations=[{"command": "/probe"}, {"command": "/llama:1 go"}]), extension)
    assert _names(seen[0]) == ["llama:1", "probe", "llama:2", "mcp"]
    assert ran == ["go"]


def test_an_ignore_file_is_found_through_any_prompts_folder_there_and_none_without_one(
    tmp_path: Path,
) -> None:
    """``prompt_templates_problem`` looks into a prompts folder only when something is there:
    none, or a path through a file, has no ignore file; a folder reached through a link has its
    own; a dangling link has none."""
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    assert prompt_templates_problem({}, str(agent), str(project), trusted=True) is None
    (agent / "prompts").write_text("a file, not a folder", encoding="utf-8")
    assert prompt_templates_problem({}, str(agent), str(project), trusted=True) is None
    (agent / "prompts").unlink()
    (agent / "prompts").symlink_to(tmp_path / "nowhere")
    assert prompt_templates_problem({}, str(agent), str(project), trusted=True) is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".ignore").write_text("x.md\n", encoding="utf-8")
    (project / ".pi" / "prompts").symlink_to(elsewhere)
    assert prompt_templates_problem({}, str(agent), str(project), trusted=False) is None
    assert (
        prompt_templates_problem({}, str(agent), str(project), trusted=True)
        == "$PROJECT/.pi/prompts has an ignore file (.ignore)"
    )
    (agent / "prompts").unlink()
    (agent / "prompts").mkdir()
    (agent / "prompts" / ".gitignore").symlink_to(tmp_path / "nowhere")
    assert prompt_templates_problem({}, str(agent), str(project), trusted=True) == (
        "$AGENT/prompts has an ignore file (.gitignore)"
    )
