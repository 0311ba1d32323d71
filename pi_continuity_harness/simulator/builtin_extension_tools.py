"""Pi 1.6's built-in extensions' tools: ``codemode`` and ``tool_search``, registered inactive.

Pi's CLI loads four built-in extensions (``dist/extensions/index.js:5-11``, ``main.js:487``):
``llama.cpp`` (a provider and its commands), and the replaceable ``codemode``, ``tool-search`` and
``mcp``. ``codemode`` (``extensions/codemode/index.js:17-31``) and ``tool-search``
(``extensions/tool-search/index.js:8-12``) each register one tool with ``defaultActive: false``,
so it is not active on registration (``_isActivatedOnRegistration``, ``core/agent-session.js:
3066-3068``; nor after a reload or a restore, :1477, :3046-3050): the prompt and the requests do
not show it, but ``getAllTools()`` lists it (:1160-1172) after the extensions' tools, with
``exposure`` ``model-only`` and ``sourceInfo`` ``builtin:codemode`` / ``builtin:tool-search``,
and ``setActiveTools`` activates it (:1182-1245).

A replaceable built-in extension is left out when another extension registers one of its tool,
command or flag names (``omitReplacedExtensions``, ``core/resource-loader.js:81-105``): an
extension's own ``tool_search`` or ``codemode`` takes the place of the built-in one.

The data is real Pi 1.6.0's ``getAllTools()`` record (``tests/realpi/
test_differential_builtin_extension_tools.py``). ``codemode``'s description names the package's
``docs/codemode.md`` (``CODEMODE_DOCS_PATH``, ``extensions/codemode/tool.js:48``, under
``getDocsPath()``, ``config.js:384-386``). Activating ``codemode`` is not modelled: Pi rewrites
its description and the callable tools' descriptions for the request (``prepareCodemodeLoadout``,
``extensions/codemode/tool.js:256-287``), so the simulator ignores the name in
``set_active_tools`` (as an unknown one). A call of an active ``tool_search`` is
:func:`run_tool_search`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import ToolDefinition

__all__ = [
    "BUILTIN_EXTENSION_TOOL_NAMES",
    "BuiltinExtensionTool",
    "builtin_extension_tools",
    "run_tool_search",
]


@dataclass(frozen=True)
class BuiltinExtensionTool:
    """One built-in extension's tool as ``getAllTools()`` shows it."""

    name: str
    description: str
    parameters_json: str
    snippet: str
    guidelines: tuple[str, ...] | None
    #: ``sourceInfo.path`` (``builtin:<extension name>``).
    source_path: str
    #: Whether the simulator activates it when named (module docstring: not ``codemode``).
    activatable: bool

    @property
    def parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = json.loads(self.parameters_json)
        return parameters

    def describe(self, package_dir: str) -> str:
        """The description, ``codemode``'s naming ``<package>/docs/codemode.md``."""
        return self.description.replace("{docs}", f"{package_dir.rstrip('/')}/docs/codemode.md")

    def declaration(self) -> dict[str, Any]:
        """``toToolDeclaration`` (pi-ai ``utils/transcript.js:106-113``) of an activatable tool."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


#: Real Pi 1.6.0's record (``codemode``'s ``{docs}`` standing for its docs file); the
#: snippets are ``codemodeToolSystemPromptContribution`` (extensions/codemode/tool.js:41-46) and
#: extensions/tool-search/tool.js:245; ``activatable`` is the simulator's (module docstring).
DATA_PATH = Path(__file__).with_name("pi-1.6-builtin-extension-tools.json")


def _load() -> tuple[BuiltinExtensionTool, ...]:
    return tuple(
        BuiltinExtensionTool(
            name=t["name"],
            description=t["description"],
            parameters_json=json.dumps(t["parameters"]),
            snippet=t["promptSnippet"],
            guidelines=None if t["promptGuidelines"] is None else tuple(t["promptGuidelines"]),
            source_path=t["sourcePath"],
            activatable=t["activatable"],
        )
        for t in json.loads(DATA_PATH.read_text(encoding="utf-8"))
    )


#: In ``getAllTools()`` order.
_TOOLS: tuple[BuiltinExtensionTool, ...] = _load()
BUILTIN_EXTENSION_TOOL_NAMES: frozenset[str] = frozenset(t.name for t in _TOOLS)


def builtin_extension_tools(extension_tools: Sequence[ToolDefinition]) -> list[BuiltinExtensionTool]:
    """The built-in extensions' tools no extension replaced (``omitReplacedExtensions``): one an
    extension registers a tool of the same name for is left out."""
    taken = {t.name for t in extension_tools}
    return [t for t in _TOOLS if t.name not in taken]


def run_tool_search(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``tool_search``'s ``execute`` (extensions/tool-search/tool.js:249-263): its text and details.

    It searches the registered tools with ``codemode`` or ``deferred`` exposure that are not
    active (``searchAndLoad``, :219-231); a Python extension's tools are ``direct`` and the
    simulator has no MCP servers, so there is none: ``No matching tools found.`` and nothing
    loaded. A blank ``query`` or a ``limit`` that is no positive integer throws first
    (:250-254): :class:`ValueError` with Pi's message. (Pi validates the arguments against the
    schema before, which the simulator does not for a built-in extension's tool.)"""
    query = args.get("query")
    if not isinstance(query, str) or query.strip() == "":
        raise ValueError("query must not be empty")
    limit = args.get("limit", 8)
    if limit is None:
        limit = 8
    valid = isinstance(limit, (int, float)) and not isinstance(limit, bool) and float(limit).is_integer()
    if not valid or limit <= 0:
        raise ValueError("limit must be a positive integer")
    return "No matching tools found.", {"loaded": []}
