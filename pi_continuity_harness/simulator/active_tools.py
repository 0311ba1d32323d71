"""Pi 1.6's active tools once an extension sets them: ``pi.set_active_tools``/``pi.get_all_tools``.

Pi registers eight built-in tools (``createAllToolDefinitions``, core/tools/index.js:89-100:
read, bash, powershell, edit, write, grep, find, ls), of which four are active
(``DEFAULT_TOOL_NAMES``, settings-manager.js:35), then the extensions' tools, each active on
registration (``_refreshToolRegistry``, agent-session.js:2976-3060; one named like a built-in
takes that built-in's place in the registry). The active tools are what the model is declared
(``agent.state.tools``) and what the prompt's ``tools`` and ``rules`` sections are built from.

``setActiveTools(names)`` (``setActiveToolsByName``/``_applyToolLoadout``, :1182-1245): the
registered names among ``names`` (an unknown name is ignored, no error), the ones already active
in their order, then the newly active in the order given; the prompt is rebuilt at once
(``_rebuildSystemPrompt``, :1358-1384) and the model sees the change at its next request: the
next run's system message (``_preparePromptAndToolLoadout``, :1394-1400), or, mid-run, the
system message before the next turn's request (``prepareNextTurnWithContext``, :593-620,
pi-agent-core ``agent-loop.js:110-126``).

The session keeps Pi's default, the four built-ins then every extension tool in registration
order, until an extension sets the tools (:attr:`ActiveTools.explicit` is ``None``); only then
does it hold the list, so a session that never sets them computes nothing new. Once set:

* a tool registered later is appended (``_refreshToolRegistry`` without ``activeToolNames``:
  a name not registered before);
* a reload (``reload``, :3118-3135, ``includeAllExtensionTools``) keeps the active built-ins and
  activates every extension tool again, a deactivated one too.

The built-in extensions' tools ``codemode`` and ``tool_search`` (:mod:`.builtin_extension_tools`,
``dist/extensions/index.js:5-11``, registered with ``defaultActive: false``) are in the registry
after the extensions' tools: listed by ``getAllTools()``, never activated on registration, reload
or restore, and ``tool_search`` activated when named (``codemode``'s activation is not modelled).

A runtime started on a session with a transcript (resume, fork, restart) and a tree navigation
restore the loadout the branch's system messages declare (:meth:`ActiveTools.restore`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pi_continuity_harness.api.extension_api import ToolDefinition, ToolInfo
from pi_continuity_harness.simulator.builtin_extension_tools import (
    BUILTIN_EXTENSION_TOOL_NAMES,
    builtin_extension_tools,
)
from pi_continuity_harness.simulator.system_prompt import DATA_PATH

__all__ = [
    "CORE_TOOL_NAMES",
    "DEFAULT_ACTIVE",
    "ActiveTools",
    "CoreTool",
    "activatable_tools",
    "core_tools",
    "prompt_tools_and_rules",
    "tool_infos",
]

#: ``createAllToolDefinitions``'s order (core/tools/index.js:89-100), the registry's.
CORE_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "powershell", "edit", "write", "grep", "find", "ls")
#: ``DEFAULT_TOOL_NAMES`` (settings-manager.js:35).
DEFAULT_ACTIVE: tuple[str, ...] = ("read", "bash", "edit", "write")

_BASH_FILE_RULE = "Use bash for file operations like ls, rg, find"
_INACTIVE_CORE = frozenset(CORE_TOOL_NAMES) - frozenset(DEFAULT_ACTIVE)


@dataclass(frozen=True)
class CoreTool:
    """A built-in tool as Pi 1.6 defines it (``builtinTools`` of ``pi-1.6-system-prompt.json``,
    dumped by ``targets/realpi/dump_system_prompt.mjs``)."""

    declaration: dict[str, Any]
    snippet: str | None
    guidelines: tuple[str, ...] | None

    @property
    def name(self) -> str:
        return str(self.declaration["name"])


@cache
def core_tools() -> dict[str, CoreTool]:
    """The eight built-ins by name, in registry order."""
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))["builtinTools"]
    tools = {
        str(t["declaration"]["name"]): CoreTool(
            t["declaration"],
            t["promptSnippet"],
            None if t["promptGuidelines"] is None else tuple(t["promptGuidelines"]),
        )
        for t in data
    }
    assert tuple(tools) == CORE_TOOL_NAMES, tuple(tools)
    return tools


def registry_names(extension_tools: Sequence[ToolDefinition]) -> list[str]:
    """``_toolRegistry``'s keys: the built-ins, then each extension tool's name not already there
    (a Map keeps a replaced key in its place), then the built-in extensions' tools the simulator
    activates when named (``tool_search``; not ``codemode``, :mod:`.builtin_extension_tools`)."""
    names = dict.fromkeys(CORE_TOOL_NAMES)
    for tool in extension_tools:
        names.setdefault(tool.name)
    for builtin in builtin_extension_tools(extension_tools):
        if builtin.activatable:
            names.setdefault(builtin.name)
    return list(names)


def default_active(extension_tools: Sequence[ToolDefinition]) -> list[str]:
    """Pi's default: the four built-ins, then every extension tool in registration order, each
    name once (a Set, agent-session.js:3059)."""
    return list(dict.fromkeys([*DEFAULT_ACTIVE, *(t.name for t in extension_tools)]))


def activatable_tools(
    extension_tools: Sequence[ToolDefinition], loaded: Collection[str] | None
) -> list[ToolDefinition]:
    """The extension tools Pi activates on registration: all registered while loading, and of
    those registered later (``loaded`` names the former) all but one named like a built-in that
    is not active by default (``grep``, ``find``, ``ls``, ``powershell``): Pi activates a later
    tool only if its name was not registered before (``_refreshToolRegistry``,
    agent-session.js:3049-3055), and every built-in's name was. (One named like a default
    built-in replaces that built-in's definition, which stays active.)"""
    if loaded is None:
        return list(extension_tools)
    return [t for t in extension_tools if t.name in loaded or t.name not in _INACTIVE_CORE]


class ActiveTools:
    """The session's active tool names once an extension set them (module docstring)."""

    def __init__(self) -> None:
        #: ``None`` while Pi's default holds; else the active names, in order.
        self.explicit: list[str] | None = None
        #: The registry's names when :attr:`explicit` was last brought up to date: a name
        #: registered since is a new tool, appended.
        self._known: set[str] = set()

    def names(self, extension_tools: Sequence[ToolDefinition]) -> list[str]:
        """``getActiveToolNames()``."""
        if self.explicit is None:
            return default_active(extension_tools)
        registry = registry_names(extension_tools)
        present = set(registry)
        names = [n for n in self.explicit if n in present]
        # A tool registered since is appended, unless it is registered inactive (the built-in
        # extensions' tools: ``_isActivatedOnRegistration``, agent-session.js:3066-3068, 3046-3050).
        names.extend(
            n
            for n in registry
            if n not in self._known and n not in names and n not in BUILTIN_EXTENSION_TOOL_NAMES
        )
        self.explicit, self._known = names, present
        return list(names)

    def set(self, tool_names: Sequence[str], extension_tools: Sequence[ToolDefinition]) -> None:
        """``setActiveToolsByName``: kept names in their order, then the new ones as given;
        unknown names are dropped."""
        current = self.names(extension_tools)
        registry = registry_names(extension_tools)
        # A name that is not a string names no tool (Pi's registry lookup misses it).
        requested = [n for n in tool_names if isinstance(n, str)]
        wanted = set(requested)
        kept = [n for n in current if n in wanted]
        present = set(registry)
        self.explicit = [n for n in dict.fromkeys([*kept, *requested]) if n in present]
        self._known = present

    def restore(
        self, declared: Sequence[str], mentioned: Collection[str], extension_tools: Sequence[ToolDefinition]
    ) -> None:
        """``_restoreToolsFromTranscript`` (agent-session.js:1460-1487), for a runtime started on
        a session whose branch has system messages (resume, fork, restart; agent-session.js:245)
        and after a tree navigation (:3515): the tools the branch declares (``declared``, in
        ``getCurrentTools`` order), then the extension tools it never ``mentioned`` (registered
        since), set as ``setActiveTools`` sets them. The default stays when that is what it gives."""
        registry = registry_names(extension_tools)
        # (not the built-in extensions' tools, registered inactive: agent-session.js:1477)
        new = [
            n
            for n in registry
            if n not in mentioned and n not in CORE_TOOL_NAMES and n not in BUILTIN_EXTENSION_TOOL_NAMES
        ]
        was_default = self.explicit is None
        current = self.names(extension_tools)
        self.set([*declared, *new], extension_tools)
        if was_default and self.explicit == list(dict.fromkeys(current)):
            self.explicit = None

    def reload(self) -> None:
        """A reload (agent-session.js:3118-3135): the active names stay, and every extension tool
        of the new runtime is activated (``includeAllExtensionTools``)."""
        if self.explicit is not None:
            self._known = set(CORE_TOOL_NAMES)


def _normalize_snippet(text: str | None) -> str | None:
    """``_normalizePromptSnippet`` (agent-session.js:1336-1344)."""
    if not text:
        return None
    one_line = " ".join(re.sub(r"[\r\n]+", " ", text).split())
    return one_line or None


def prompt_tools_and_rules(
    active: Sequence[str], extension_tools: Sequence[ToolDefinition]
) -> tuple[str, str]:
    """The ``tools`` and ``rules`` sections for the ``active`` names (``buildSystemPromptSections``
    and ``buildRules``, system-prompt.js:31-62, :80-86): each active tool with a snippet, in
    active order; the bash (or PowerShell) rule while no ``grep``, ``find`` or ``ls`` is active;
    each active tool's guidelines; then Pi's two closing rules. An extension tool replaces a
    built-in's snippet and guidelines (a Python tool has no guidelines)."""
    snippets: dict[str, str | None] = {n: _normalize_snippet(t.snippet) for n, t in core_tools().items()}
    guidelines: dict[str, tuple[str, ...]] = {n: t.guidelines or () for n, t in core_tools().items()}
    for builtin in builtin_extension_tools(extension_tools):
        snippets[builtin.name] = _normalize_snippet(builtin.snippet)
        guidelines[builtin.name] = builtin.guidelines or ()
    for tool in extension_tools:
        snippets[tool.name] = _normalize_snippet(tool.prompt_snippet)
        guidelines[tool.name] = ()
    listed = [f"- {name}: {snippets[name]}" for name in active if snippets.get(name)]
    tools = "\n".join(listed) or "(none)"
    rules: list[str] = []

    def add(rule: str) -> None:
        text = rule.strip()
        if text and text not in rules:
            rules.append(text)

    bash, powershell = "bash" in active, "powershell" in active
    if (bash or powershell) and not any(n in active for n in ("grep", "find", "ls")):
        if bash and powershell:
            add("Use bash or PowerShell for file operations like listing, searching, and finding files")
        elif powershell:
            add("Use PowerShell for file operations like listing, searching, and finding files")
        else:
            add(_BASH_FILE_RULE)
    for name in active:
        for rule in guidelines.get(name, ()):
            add(rule)
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    body = "\n".join(f"- {rule}" for rule in rules)
    return f"<tools>\n{tools}\n\nAdditional tools may be available.\n</tools>", f"<rules>\n{body}\n</rules>"


def skills_reader(active: Sequence[str]) -> str | None:
    """The tool the ``skills`` section tells the model to read a skill with (system-prompt.js:
    100-104): ``read``, else ``bash``, else none (no section; a Python extension cannot hide a
    tool, so there is no ``indirect``)."""
    return next((n for n in ("read", "bash") if n in active), None)


def tool_infos(
    extension_tools: Sequence[ToolDefinition], extension_paths: dict[str, str], package_dir: str
) -> list[ToolInfo]:
    """``getAllTools()`` (agent-session.js:1160-1172): the registry's tools, built-ins first with
    ``sourceInfo`` ``builtin:<name>`` (``createSyntheticSourceInfo``, source-info.js:38-47), an
    extension's tool with its extension's (``source`` ``cli``: loaded with ``-e``, as both targets
    load a scenario's extensions; ``path`` the Python file, where real Pi names the bridge's
    wrapper), then the built-in extensions' ``codemode`` and ``tool_search`` (``exposure``
    ``model-only``; :mod:`.builtin_extension_tools`, whose ``codemode`` description names
    ``package_dir``'s docs). ``extension_paths``: each extension tool's file."""
    defined: dict[str, ToolInfo] = {}
    for name, core in core_tools().items():
        defined[name] = ToolInfo(
            name=name,
            description=str(core.declaration["description"]),
            parameters=json.loads(json.dumps(core.declaration["parameters"])),
            prompt_guidelines=core.guidelines,
            source_info=_source_info(f"builtin:{name}", "builtin"),
        )
    for tool in extension_tools:
        defined[tool.name] = ToolInfo(
            name=tool.name,
            description=tool.description,
            parameters=json.loads(json.dumps(tool.parameters)),
            source_info=_source_info(extension_paths.get(tool.name, ""), "cli"),
        )
    for builtin in builtin_extension_tools(extension_tools):
        defined[builtin.name] = ToolInfo(
            name=builtin.name,
            description=builtin.describe(package_dir),
            parameters=builtin.parameters,
            exposure="model-only",
            prompt_guidelines=builtin.guidelines,
            source_info=_source_info(builtin.source_path, "builtin"),
        )
    return list(defined.values())


def _source_info(path: str, source: str) -> dict[str, Any]:
    return {"path": path, "source": source, "scope": "temporary", "origin": "top-level"}
