"""Differential: ``pi.get_commands()`` of a Python extension, real Pi 1.6 against the simulator.

``getCommands()`` (types.d.ts:1338; ``AgentSession._bindExtensionCore``, agent-session.js:
2849-2872) lists the extensions' commands (``getRegisteredCommands``, runner.js:569-604: load
order, each extension's commands in the order their names were first registered, a name several
commands share as ``<name>:<n>``, an invocation name already taken counted on), then the prompt
templates, then the skills as ``skill:<name>``; read anew at each call, so a command registered
late is listed. While a factory runs it throws (``notInitialized``, loader.js:112-114, 135).
Pi's built-in extensions load after the ``-e`` ones: ``llama`` always, ``mcp`` unless an
extension registered ``/mcp`` while loading (``omitReplacedExtensions``, resource-loader.js:
81-105).

On real Pi the harness's observer (``targets/realpi/observer.ts``, loaded first) registers its
``harness-*`` commands; the bridge leaves them out (by the observer's path, ``bridge.ts``), so
neither record shows them. An entry's ``sourceInfo`` names the extension's file: on real Pi the
bridge's wrapper, on the simulator the extension's name (as ``extension_error.extensionPath``
does). The extensions report the list with that file as ``<n>`` (its load position) wherever Pi
derives a value from it (``neutral`` below), so the two records are compared whole with
``assert_equivalent``. Each test asserts real Pi's record explicitly, then the simulator's. The
old simulator and bridge had no ``get_commands``: the extension failed to load.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_NEUTRAL = r"""
import dataclasses
import json
import posixpath
import re


def neutral(commands):
    # Each extension's file as <n> (its load position) wherever Pi derives a value from it:
    # an extension command's sourceInfo.path, a skill's source (extension:<file name>) and
    # baseDir (the file's directory).
    paths = {}
    for c in commands:
        if c.source_info.get("source") == "cli":
            paths.setdefault(c.source_info["path"], len(paths))
    labels, dirs = {}, {}
    for path, n in paths.items():
        labels.setdefault("extension:" + re.sub(r"\.(ts|js)$", "", posixpath.basename(path)), n)
        dirs.setdefault(posixpath.dirname(path) or ".", n)
    found = []
    for c in commands:
        info = dict(c.source_info)
        if info["path"] in paths:
            info["path"] = "<%d>" % paths[info["path"]]
        if info["source"] in labels:
            info["source"] = "extension:<%d>" % labels[info["source"]]
        if info.get("baseDir") in dirs:
            info["baseDir"] = "<%d dir>" % dirs[info["baseDir"]]
        found.append({**dataclasses.asdict(c), "source_info": info})
    return json.dumps(found)


async def noop(args, ctx):
    pass
"""

_FIRST = (
    _NEUTRAL
    + """
from pi_continuity_harness.api import NotInitializedError

SKILLS = "<skills>"


def extension(pi):
    try:
        pi.get_commands()
        loading = "no error"
    except NotInitializedError as error:
        loading = [type(error).__name__, str(error)]

    def discover(event, ctx):
        return {"skillPaths": [SKILLS]}

    async def listing(args, ctx):
        pi.register_command("late", noop, description="registered late")
        pi.register_command("llama", noop, description="my llama")
        ctx.ui.notify("loading: " + json.dumps(loading), "info")
        ctx.ui.notify("commands: " + neutral(pi.get_commands()), "info")

    pi.register_command("zeta", noop, description="first zeta")
    pi.register_command("alpha", noop)
    pi.register_command("shared", noop, description="first's shared")
    pi.register_command("zeta", noop, description="second zeta")
    pi.register_command("list", listing, description="list the commands")
    pi.on("resources_discover", discover)
"""
)

_SECOND = """\
async def noop(args, ctx):
    pass


def extension(pi):
    pi.register_command("shared", noop, description="second's shared")
    pi.register_command("shared:1", noop, description="named like a suffix")
    pi.register_command("mcp", noop, description="my mcp")
"""

_LLAMA = "Manage llama.cpp router models"
_MCP = "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"
_BUILTIN = {"source": "builtin", "scope": "temporary", "origin": "top-level"}
_NOT_INITIALIZED = (
    "Extension runtime not initialized. Action methods cannot be called during extension loading."
)


def _skill(path: Path, front: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n# Body\n", encoding="utf-8")


def _command(name: str, description: str | None, n: int) -> dict[str, Any]:
    """An extension command of the scenario's ``n``-th extension."""
    info = {"path": f"<{n}>", "source": "cli", "scope": "temporary", "origin": "top-level"}
    return {"name": name, "description": description, "source": "extension", "source_info": info}


def _builtin(name: str, description: str, path: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "source": "extension",
        "source_info": {"path": path, **_BUILTIN},
    }


def test_get_commands_lists_extension_commands_in_load_order_then_builtins_then_skills(
    targets: Targets, tmp_path: Path, python_extension: Callable[[str, str], str]
) -> None:
    skills = tmp_path / "skills"
    _skill(skills / "beta" / "SKILL.md", "description: the beta skill")
    _skill(skills / "alpha" / "SKILL.md", "description: the alpha skill\ndisable-model-invocation: true")
    spec = python_extension("commands_first", _FIRST.replace("<skills>", str(skills)))
    python_extension("commands_second", _SECOND)
    sc = scenario(
        {"agent": [{"text": "hello back"}]},
        extensions=[{"implementation": True}, {"module": "commands_second:extension"}],
    )
    real, sim = play(targets, sc, [{"command": "/list"}], spec)

    skill_info = {
        "source": "extension:<0>",
        "scope": "temporary",
        "origin": "top-level",
        "baseDir": "<0 dir>",
    }
    assert notes(real)["commands"] == [
        # The first extension's commands in the order their names were first registered: a name
        # registered again keeps its place and takes the new description; none is undefined.
        _command("zeta", "second zeta", 0),
        _command("alpha", None, 0),
        _command("shared:1", "first's shared", 0),
        _command("list", "list the commands", 0),
        # Registered by the command itself: listed at once, after the factory's.
        _command("late", "registered late", 0),
        _command("llama:1", "my llama", 0),
        _command("shared:2", "second's shared", 1),
        # "shared:1" is the first extension's "shared" already: counted on.
        _command("shared:1:2", "named like a suffix", 1),
        # Registered while Pi loaded the extensions: the built-in mcp extension is left out.
        _command("mcp", "my mcp", 1),
        # The built-in llama.cpp extension, after the -e extensions; a late "llama" shares the name.
        _builtin("llama:2", _LLAMA, "builtin:llama.cpp"),
        # Every loaded skill (one the model may not invoke too), with the naming extension's
        # sourceInfo: its file's name and directory.
        *[
            {
                "name": f"skill:{name}",
                "description": f"the {name} skill",
                "source": "skill",
                "source_info": {"path": str(skills / name / "SKILL.md"), **skill_info},
            }
            for name in ("alpha", "beta")
        ],
    ]
    assert notes(real)["loading"] == ["NotInitializedError", _NOT_INITIALIZED]

    assert notes(sim)["commands"] == notes(real)["commands"]
    assert notes(sim)["loading"] == notes(real)["loading"]
    assert_equivalent(real, sim)


_LATE_MCP = (
    _NEUTRAL
    + """
def extension(pi):
    async def listing(args, ctx):
        pi.register_command("mcp", noop)
        ctx.ui.notify("commands: " + neutral(pi.get_commands()), "info")

    pi.register_command("list", listing)
"""
)


def test_the_builtin_mcp_command_stays_when_an_extension_registers_mcp_after_loading(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("commands_late_mcp", _LATE_MCP)
    sc = scenario({"agent": [{"text": "hello back"}]})
    real, sim = play(targets, sc, [{"command": "/list"}], spec)

    assert notes(real)["commands"] == [
        _command("list", None, 0),
        _command("mcp:1", None, 0),
        _builtin("llama", _LLAMA, "builtin:llama.cpp"),
        _builtin("mcp:2", _MCP, "builtin:mcp"),
    ]
    assert notes(sim)["commands"] == notes(real)["commands"]
    assert_equivalent(real, sim)
