"""Pi 1.6's prompt templates: markdown files a ``/name args`` prompt expands to.

Modelled from ``dist/core/prompt-templates.js``, ``core/package-manager.js`` and
``core/resource-loader.js`` (Pi 1.6.0; ``docs/prompt-templates.md``):

* Discovery (``addAutoDiscoveredResources``, package-manager.js:2160-2243): the ``.md`` files
  of ``<project>/.pi/prompts`` when the project is trusted (:2226), then those of
  ``<agentDir>/prompts`` (:2240), each folder non-recursively in name order (``readdirSync``,
  which libuv sorts by bytes), skipping names that start with ``.`` and ``node_modules``, a
  symlink followed to a file (``collectAutoPromptEntries``, :324-358). Project before user:
  ``resourcePrecedenceRank`` (:77-85) ranks project ``auto`` 1 and user ``auto`` 3.
* Each file's ``sourceInfo`` is its folder's metadata (``findSourceInfoForPath``,
  resource-loader.js:734-760; ``createSourceInfo``, source-info.js:28-37): ``source`` ``auto``,
  ``scope`` ``project``/``user``, ``origin`` ``top-level``, ``baseDir`` ``<project>/.pi`` or
  the agent dir (package-manager.js:2161-2172).
* A template (``loadTemplateFromFile``, prompt-templates.js:102-147): its name is the file
  name without ``.md``; its description the frontmatter's ``description`` when a string, else
  the body's first non-blank line cut to 60 characters (``...`` added when longer); its
  content the body after the frontmatter (``parseFrontmatter``, utils/frontmatter.js: trimmed
  after a frontmatter, as written without one). An unreadable file or bad YAML loads none.
* A name two templates share: the first wins (``dedupePrompts``, resource-loader.js:912-935).
  Names are not checked against extension commands or skills: an extension command of the
  same name runs first (below), and ``get_commands`` lists both.
* Expansion (``expandPromptTemplate``, prompt-templates.js:268-282): a text ``/name`` or
  ``/name <whitespace> args`` whose name is a template's becomes the template's content with
  the arguments (``parseCommandArgs``, :11-63: whitespace-separated, quotes ``"``/``'`` only
  at an argument's start, ``\\"`` inside a quote, an unclosed quote literal) substituted
  (``substituteArgs``, :77-101: ``$1``..., ``$@`` and ``$ARGUMENTS`` all joined by spaces,
  ``${N:-default}``, ``${@:-default}``/``${ARGUMENTS:-default}``, ``${@:N}``, ``${@:N:L}``;
  not recursive). ``AgentSession.prompt`` (agent-session.js:1704-1786) tries an extension
  command first (``_tryExecuteExtensionCommand``, :1713), then the ``input`` event sees the
  unexpanded text (:1744), then ``/skill:`` expansion, then the template's (:1753-1756); only
  when ``expandPromptTemplates`` (``sendUserMessage`` passes false).
* Loaded at each runtime's start and on reload (``reload()``, resource-loader.js:454-458):
  files added later are not seen until a reload.

Not modelled (``pi.get_commands`` refuses where they may matter,
:func:`.commands.prompt_templates_problem`): the ``prompts`` setting (paths and ``-``/``+``
overrides), ignore files (``.gitignore``, ``.ignore``, ``.fdignore``) in a prompts folder,
and ``promptPaths`` from ``resources_discover``. The 60-character cut counts code points where
JavaScript counts UTF-16 units (differs for characters outside the BMP).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.simulator.skills import _split_frontmatter

__all__ = [
    "PromptTemplate",
    "expand_prompt_template",
    "load_prompt_templates",
    "parse_command_args",
    "substitute_args",
]


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template (prompt-templates.js:136-144), ``argumentHint`` left out."""

    name: str
    description: str
    content: str
    file_path: str
    source_info: dict[str, Any] = field(default_factory=dict)


def parse_command_args(args_string: str) -> list[str]:
    """``parseCommandArgs`` (prompt-templates.js:11-63)."""
    args: list[str] = []
    current = ""
    has_token = False
    in_quote: str | None = None
    quote_start = 0
    i = 0
    n = len(args_string)
    while i < n:
        char = args_string[i]
        if in_quote:
            if char == "\\" and i + 1 < n and args_string[i + 1] == in_quote:
                current += in_quote
                i += 1
            elif char == in_quote:
                in_quote = None
            else:
                current += char
        elif char in ('"', "'") and not has_token:
            in_quote = char
            quote_start = i
            has_token = True
        elif char.isspace():
            if has_token:
                args.append(current)
                current = ""
                has_token = False
        else:
            current += char
            has_token = True
        if in_quote and i == n - 1:
            # An unclosed quote is text: re-read from it with the quote as the token's start.
            in_quote = None
            current = args_string[quote_start]
            i = quote_start
        i += 1
    if has_token:
        args.append(current)
    return args


_PLACEHOLDER = re.compile(
    r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"
)


def substitute_args(content: str, args: Sequence[str]) -> str:
    """``substituteArgs`` (prompt-templates.js:77-101): one pass over the template."""
    all_args = " ".join(args)

    def positional(number: str) -> str | None:
        # ``args[parseInt(n) - 1]``: JavaScript's out-of-range index (``$0`` too) is undefined.
        index = int(number) - 1
        return args[index] if 0 <= index < len(args) else None

    def replace(match: re.Match[str]) -> str:
        default_target, default_value, slice_start, slice_length, simple = match.groups()
        if default_target:
            value = all_args if default_target in ("@", "ARGUMENTS") else positional(default_target)
            return value if value else default_value
        if slice_start:
            start = max(int(slice_start) - 1, 0)
            if slice_length:
                return " ".join(args[start : start + int(slice_length)])
            return " ".join(args[start:])
        if simple in ("ARGUMENTS", "@"):
            return all_args
        return positional(simple) or ""

    return _PLACEHOLDER.sub(replace, content)


def expand_prompt_template(text: str, templates: Sequence[PromptTemplate]) -> str:
    """``expandPromptTemplate`` (prompt-templates.js:268-282): the text unchanged unless it is
    ``/<name>`` of a template, optionally followed by whitespace and the arguments."""
    match = re.fullmatch(r"/(\S+)(?:\s+(.*))?", text, re.DOTALL)
    if not match:
        return text
    name, args_string = match.group(1), match.group(2) or ""
    for template in templates:
        if template.name == name:
            return substitute_args(template.content, parse_command_args(args_string))
    return text


def _load_template(path: str, source_info: dict[str, Any]) -> PromptTemplate | None:
    """``loadTemplateFromFile`` (prompt-templates.js:102-147), diagnostics left out."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            parsed, body = _split_frontmatter(file.read())
    except (OSError, yaml.YAMLError):
        return None
    front = parsed if isinstance(parsed, dict) else {}
    description = front.get("description")
    if not isinstance(description, str):
        description = ""
    if not description:
        first = next((line for line in body.split("\n") if line.strip()), None)
        if first:
            description = first[:60] + ("..." if len(first) > 60 else "")
    name = os.path.basename(path).removesuffix(".md")
    return PromptTemplate(name, description, body, path, source_info)


def _auto_entries(directory: str) -> list[str]:
    """``collectAutoPromptEntries`` (package-manager.js:324-358), ignore files left out."""
    try:
        names = sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return []
    return [
        os.path.join(directory, name)
        for name in names
        if not name.startswith(".")
        and name != "node_modules"
        and name.endswith(".md")
        and os.path.isfile(os.path.join(directory, name))
    ]


def load_prompt_templates(agent_dir: str, cwd: str, *, trusted: bool) -> list[PromptTemplate]:
    """The templates of the default folders, project (when trusted) then user, a name's first
    one kept (module docstring)."""
    folders: list[tuple[str, str, str]] = []
    if trusted:
        folders.append(("project", os.path.join(cwd, CONFIG_DIR_NAME), "prompts"))
    folders.append(("user", agent_dir, "prompts"))
    templates: list[PromptTemplate] = []
    names: set[str] = set()
    for scope, base_dir, sub in folders:
        for path in _auto_entries(os.path.join(base_dir, sub)):
            info = {
                "path": path,
                "source": "auto",
                "scope": scope,
                "origin": "top-level",
                "baseDir": base_dir,
            }
            template = _load_template(path, info)
            if template is not None and template.name not in names:
                names.add(template.name)
                templates.append(template)
    return templates
