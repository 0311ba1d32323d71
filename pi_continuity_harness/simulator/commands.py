"""Pi 1.6's slash commands as an extension sees them: ``pi.get_commands()``.

``getCommands`` (``AgentSession._bindExtensionCore``, ``dist/core/agent-session.js:2849-2872``)
answers, read anew at each call:

1. the extensions' commands, ``runner.getRegisteredCommands()`` (``core/extensions/runner.js:
   569-604``, :func:`resolve_commands`): extensions in load order, each one's commands in the
   order it first registered their names (``extension.commands`` is a ``Map``; registering a
   name again replaces the command in its place, loader.js:250-263); a name that several
   commands have is ``<name>:<n>`` (``n`` counting that name's commands in this order), and an
   invocation name already taken goes on counting (``<name>:<n+1>``...). Pi's CLI loads its
   built-in extensions after the ``-e`` ones (``extensionPaths`` order, resource-loader.js:
   426, 577-592; ``main.js:487``), so ``llama`` (the ``llama.cpp`` extension,
   ``extensions/llama/index.js:163``) and ``mcp`` (``extensions/mcp/index.js:1119``) come after
   the extensions' commands. The ``mcp`` extension is replaceable: an extension that registered
   ``/mcp`` while Pi loaded it leaves it out (``omitReplacedExtensions``, resource-loader.js:
   81-105), one registered later does not. The runner's dispatch of a ``/name`` prompt
   resolves names the same way (``getCommand``, runner.js:608-610: ``/llama:1`` is an
   extension's ``llama``); the built-in commands' handlers are not modelled (``/llama`` and
   ``/mcp`` are no extension command to the simulator, as before);
2. the prompt templates (``source`` ``prompt``, :mod:`.prompt_templates`): the default
   folders', with their folder's ``sourceInfo``, and those of ``resources_discover``'s
   ``promptPaths``, with the naming extension's (as a skill's, below);
3. the skills, ``skill:<name>`` (``source`` ``skill``), every loaded one (a skill with
   ``disable-model-invocation`` too), with the ``sourceInfo`` of the extension whose
   ``resources_discover`` named its path (``buildExtensionResourcePaths`` and
   ``getExtensionSourceLabel``, agent-session.js:2806-2828; ``findSourceInfoForPath``,
   resource-loader.js:734-748: the first named path the file lies in), or for a skill of Pi's
   skill folders or ``skills`` setting that folder's or entry's (:mod:`.skill_dirs`).

An extension command's ``sourceInfo`` is its extension's, loaded with ``-e`` (``source``
``cli``, resource-loader.js:411-415); its ``path`` is the file Pi loaded, on real Pi the bridge's
wrapper, here the extension's name (as ``extension_error.extensionPath`` is), and so are the
``extension:<name>`` and ``baseDir`` of a skill's.

Prompt templates of the ``prompts`` setting, and ignore files in a prompts folder, are not
modelled: the simulator refuses a run that may have such when its runtime starts or reloads
(:func:`.prompt_templates.prompt_templates_problem`, ``HostRuntimes._load_prompt_templates``), rather than list and
expand templates that silently lack them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.api.extension_api import CommandInfo

__all__ = [
    "BUILTIN_COMMANDS",
    "BuiltinCommand",
    "builtin_commands",
    "command_infos",
    "extension_resource_info",
    "extension_source_label",
    "resolve_commands",
]


@dataclass(frozen=True)
class BuiltinCommand:
    """A command of one of Pi's built-in extensions (handlers not modelled)."""

    #: The extension's path (``builtin:<name>``).
    path: str
    name: str
    description: str
    #: Left out when an extension registered its name while Pi loaded them.
    replaceable: bool = False


#: The built-in extensions' commands in load order (``dist/extensions/index.js:5-11``), as real
#: Pi 1.6.0 lists them (``tests/realpi/test_differential_get_commands.py``).
BUILTIN_COMMANDS: tuple[BuiltinCommand, ...] = (
    BuiltinCommand("builtin:llama.cpp", "llama", "Manage llama.cpp router models"),
    BuiltinCommand(
        "builtin:mcp",
        "mcp",
        "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        replaceable=True,
    ),
)


def builtin_commands(loaded_command_names: frozenset[str]) -> list[BuiltinCommand]:
    """The built-in extensions' commands Pi loaded, given the command names the extensions had
    registered when their factories returned (what ``omitReplacedExtensions`` saw)."""
    return [c for c in BUILTIN_COMMANDS if not (c.replaceable and c.name in loaded_command_names)]


def resolve_commands(commands: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``resolveRegisteredCommands`` (runner.js:569-597): each ``(name, value)`` in order as
    ``(invocation name, value)``."""
    listed = list(commands)
    counts: dict[str, int] = {}
    for name, _ in listed:
        counts[name] = counts.get(name, 0) + 1
    seen: dict[str, int] = {}
    taken: set[str] = set()
    resolved: list[tuple[str, Any]] = []
    for name, value in listed:
        occurrence = seen.get(name, 0) + 1
        seen[name] = occurrence
        invocation = f"{name}:{occurrence}" if counts[name] > 1 else name
        suffix = occurrence
        while invocation in taken:
            suffix += 1
            invocation = f"{name}:{suffix}"
        taken.add(invocation)
        resolved.append((invocation, value))
    return resolved


def extension_source_label(extension_path: str) -> str:
    """``getExtensionSourceLabel`` (agent-session.js:2821-2828)."""
    if _is_synthetic(extension_path):
        return "extension:" + re.sub(r"[<>]", "", extension_path)
    return "extension:" + re.sub(r"\.(ts|js)$", "", posixpath.basename(extension_path))


def _is_synthetic(path: str) -> bool:
    # ``isSyntheticPath`` (source-info.js:21-23).
    return path.startswith(("builtin:", "<"))


def _source_info(path: str, source: str, base_dir: str | None = None) -> dict[str, Any]:
    # ``createSourceInfo``/``createSyntheticSourceInfo`` (source-info.js:38-47): no ``baseDir``
    # key where it is undefined.
    info: dict[str, Any] = {"path": path, "source": source, "scope": "temporary", "origin": "top-level"}
    if base_dir is not None:
        info["baseDir"] = base_dir
    return info


def extension_resource_info(file_path: str, extension_path: str) -> dict[str, Any]:
    """The ``sourceInfo`` of a skill or prompt template found in a path the extension at
    ``extension_path`` named (``buildExtensionResourcePaths``, agent-session.js:2806-2820;
    ``findSourceInfoForPath``, resource-loader.js:741-746): ``extension:<name>``, ``temporary``,
    the extension file's directory as ``baseDir`` (none for a synthetic path)."""
    base_dir = None if _is_synthetic(extension_path) else (posixpath.dirname(extension_path) or ".")
    return _source_info(file_path, extension_source_label(extension_path), base_dir)


def command_infos(
    commands: Sequence[tuple[str, str, str | None]],
    skills: Sequence[tuple[str, str, str, str | dict[str, str]]],
    templates: Sequence[tuple[str, str, dict[str, Any]]] = (),
) -> list[CommandInfo]:
    """``getCommands()`` for the resolved extension commands (each ``(invocation name, its
    extension's path, description)``, built-in ones included), the prompt ``templates`` (each
    ``(name, description, sourceInfo)``) and ``skills`` (each ``(name, description, file path,
    path of the extension that named it or, for a skill no extension named, its
    ``sourceInfo``)``)."""
    infos: list[CommandInfo] = []
    for invocation, path, description in commands:
        source = "builtin" if path.startswith("builtin:") else "cli"
        infos.append(
            CommandInfo(
                name=invocation,
                # The bridge hands Pi a description only when it is a string (bridge.ts).
                description=description if isinstance(description, str) else None,
                source="extension",
                source_info=_source_info(path, source),
            )
        )
    for name, description, info in templates:
        infos.append(CommandInfo(name=name, description=description, source="prompt", source_info=dict(info)))
    for name, description, file_path, owner in skills:
        # A skill folder's or the setting's own sourceInfo (:mod:`.skill_dirs`), else the naming
        # extension's.
        info = owner if isinstance(owner, dict) else extension_resource_info(file_path, owner)
        infos.append(
            CommandInfo(name=f"skill:{name}", description=description, source="skill", source_info=info)
        )
    return infos
