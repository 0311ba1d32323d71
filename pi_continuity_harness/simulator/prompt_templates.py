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
* ``promptPaths`` from ``resources_discover`` (``extendResources``, resource-loader.js:
  341-358): each path (relative to the project) remembered with the extension that named it
  last, merged after the paths so far (``mergePaths``), and every path's templates loaded
  again (``updatePromptsFromPaths``, :667-693; ``loadPromptTemplates``, prompt-templates.js:
  193-263): a folder's ``.md`` files (dot files included), an ``.md`` file, a missing path
  skipped. A template in a named path has the naming extension's ``sourceInfo``
  (``findSourceInfoForPath``, resource-loader.js:734-760, named paths before the folders'
  metadata). A reload forgets them until a handler names them again.

Not modelled (the simulator refuses a run where they may matter,
:func:`prompt_templates_problem`): the ``prompts`` setting (paths and ``-``/``+``
overrides), ignore files (``.gitignore``, ``.ignore``, ``.fdignore``) in a prompts folder.
Diagnostics (collisions, unreadable files) are not reported. The 60-character cut counts code
points where JavaScript counts UTF-16 units (differs for characters outside the BMP).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.skills import (
    IGNORE_FILE_NAMES,
    merge_paths,
    named_path_owner,
    resolve_resource_path,
    split_frontmatter,
)
from pi_continuity_harness.simulator.virtual_root import disk_path

__all__ = [
    "IGNORE_FILE_NAMES",
    "PromptTemplate",
    "PromptTemplates",
    "PromptTemplatesNotModelledError",
    "expand_prompt_template",
    "parse_command_args",
    "prompt_templates_problem",
    "substitute_args",
]


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template (prompt-templates.js:136-144), ``argumentHint`` left out."""

    name: str
    description: str
    content: str
    file_path: str
    #: Its folder's ``sourceInfo`` (the default folders' metadata, else the loader's own).
    source_info: dict[str, Any] = field(default_factory=dict)
    #: The extension whose ``promptPaths`` it lies in (its ``sourceInfo`` then is that
    #: extension's, :func:`.commands.extension_resource_info`), or None.
    owner: str | None = None


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
            parsed, body = split_frontmatter(file.read())
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
    return [
        path for name, path in _md_files(directory) if not name.startswith(".") and name != "node_modules"
    ]


def _md_files(directory: str) -> list[tuple[str, str]]:
    """The ``.md`` files directly in ``directory`` (a symlink followed), in name order, each as
    ``(name, path)`` (``loadTemplatesFromDir``, prompt-templates.js:151-186). Listed by its disk
    spelling (:func:`.virtual_root.disk_path`); the paths are the host's."""
    try:
        names = sorted(os.listdir(disk_path(directory)), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return []
    found = []
    for name in names:
        path = os.path.join(directory, name)
        if name.endswith(".md") and os.path.isfile(path):
            found.append((name, path))
    return found


def _loader_source_info(path: str) -> dict[str, Any]:
    # ``getSourceInfo`` (prompt-templates.js:214-233) outside the default folders (these have
    # their metadata): ``local``, the path's directory as ``baseDir``.
    base_dir = path if os.path.isdir(path) else os.path.dirname(path)
    return {"path": path, "source": "local", "scope": "temporary", "origin": "top-level", "baseDir": base_dir}


@functools.lru_cache(maxsize=64)
def _default_folders(agent_dir: str, cwd: str, trusted: bool) -> tuple[tuple[str, str, str], ...]:
    """:meth:`PromptTemplates.discover`'s folders, ``(scope, base directory, its prompts
    folder)``, project (when trusted) then user: a function of the strings, the same for every
    host (one virtual root, ``virtual_root.py``), built once rather than at every runtime's start."""
    folders: list[tuple[str, str]] = []
    if trusted:
        folders.append(("project", os.path.join(cwd, CONFIG_DIR_NAME)))
    folders.append(("user", agent_dir))
    return tuple((scope, base_dir, os.path.join(base_dir, "prompts")) for scope, base_dir in folders)


@dataclass
class PromptTemplates:
    """One runtime's prompt templates and what the resource loader knows to reload them
    (``lastPromptPaths``, ``metadataByPath``, ``extensionPromptSourceInfos``; resource-loader.js:
    339-364, 454-458, 667-693)."""

    #: ``lastPromptPaths``: the default folders' files at the runtime's start, then the paths
    #: ``resources_discover`` handlers named, merged (``mergePaths``).
    paths: list[str] = field(default_factory=list)
    #: Each default folder's file -> its folder's metadata (``metadataByPath``).
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Each named path (resolved) -> the path of the extension that named it last, in the order
    #: first named (``extensionPromptSourceInfos``, a ``Map``).
    owners: dict[str, str] = field(default_factory=dict)
    templates: list[PromptTemplate] = field(default_factory=list)

    @classmethod
    def discover(cls, agent_dir: str, cwd: str, *, trusted: bool) -> PromptTemplates:
        """The default folders' templates, project (when trusted) then user (module docstring)."""
        found = cls()
        for scope, base_dir, prompts in _default_folders(agent_dir, cwd, trusted):
            for path in _auto_entries(prompts):
                found.paths.append(path)
                found.metadata[path] = {
                    "source": "auto",
                    "scope": scope,
                    "origin": "top-level",
                    "baseDir": base_dir,
                }
        found.load()
        return found

    def extend(self, named: Sequence[tuple[str, str]], cwd: str) -> None:
        """``extendResources`` for ``promptPaths`` (resource-loader.js:341-358): each ``(path,
        extension path)`` remembered, the paths merged after the others, all loaded again."""
        for path, owner in named:
            self.owners[resolve_resource_path(path, cwd)] = owner
        self.paths = merge_paths(self.paths, [path for path, _ in named], cwd)
        self.load()

    def load(self) -> None:
        """``updatePromptsFromPaths`` (resource-loader.js:667-693): every path's templates (a
        folder's ``.md`` files, dot files too, or an ``.md`` file), a name's first one kept."""
        templates: list[PromptTemplate] = []
        names: set[str] = set()
        for path in self.paths:
            if os.path.isdir(path):
                files = [file for _, file in _md_files(path)]
            elif path.endswith(".md") and os.path.isfile(path):
                files = [path]
            else:
                continue
            for file in files:
                owner = named_path_owner(file, self.owners)
                info = (
                    {"path": file, **self.metadata[file]}
                    if file in self.metadata
                    else _loader_source_info(file)
                )
                template = _load_template(file, info)
                if template is not None and template.name not in names:
                    names.add(template.name)
                    templates.append(dataclasses.replace(template, owner=owner) if owner else template)
        self.templates = templates


class PromptTemplatesNotModelledError(SimulatorError, RuntimeError):
    """A run that may have prompt templates the simulator does not load (the ``prompts``
    setting, an ignore file in a prompts folder): refused when a runtime starts or reloads, since
    its ``/name`` prompts and ``get_commands`` answers would lack them."""


def prompt_templates_problem(
    settings: dict[str, Any], agent_dir: str, project_dir: str, *, trusted: bool
) -> str | None:
    """Why the run may have prompt templates the simulator does not load (:mod:`.prompt_templates`
    loads the default folders' and ``resources_discover``'s ``promptPaths``), or ``None``: the
    ``prompts`` setting (global or project, merged in ``settings``: more paths, or overrides
    that disable default ones, package-manager.js:2175-2184), or an ignore file in a default
    folder Pi reads (``addIgnoreRules`` in ``collectAutoPromptEntries``, package-manager.js:
    324-330; the project's only when trusted, :2225). Over-cautious on purpose: a setting that
    adds no template refuses too."""
    if settings.get("prompts"):
        return "the settings name prompt templates (prompts)"
    for name, directory in _ignore_file_folders(agent_dir, project_dir, trusted):
        # A folder that is not there holds no ignore file: one ``lstat`` of the folder instead of
        # one per ignore file (two folders, three names, at every runtime's start; most runs
        # have no prompts folder at all, issue 16). When the folder's own ``lstat`` fails (no
        # such entry, a component missing, not a directory or not searchable), the lookup of
        # a name in it goes through the same components and fails too: ``lexists`` of every
        # ignore file is False. Anything there (a folder, a link, dangling or not, a file) is
        # looked into as before.
        # Asked of the disk spelling (:func:`.virtual_root.disk_path`); the message names the
        # host's.
        on_disk = disk_path(directory)
        if not os.path.lexists(on_disk):
            continue
        for ignore_file in IGNORE_FILE_NAMES:
            if os.path.lexists(os.path.join(on_disk, ignore_file)):
                return f"{name} has an ignore file ({ignore_file})"
    return None


@functools.lru_cache(maxsize=64)
def _ignore_file_folders(agent_dir: str, project_dir: str, trusted: bool) -> tuple[tuple[str, str], ...]:
    """The prompts folders :func:`prompt_templates_problem` looks into for an ignore file, each
    as ``(the name it reports, its path)``: a function of the strings, built once."""
    directories = [("$AGENT/prompts", os.path.join(agent_dir, "prompts"))]
    if trusted:
        directories.append(
            (f"$PROJECT/{CONFIG_DIR_NAME}/prompts", os.path.join(project_dir, CONFIG_DIR_NAME, "prompts"))
        )
    return tuple(directories)
