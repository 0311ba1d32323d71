"""The skills Pi 1.6 loads from paths an extension names, and how its system prompt lists them.

A ``resources_discover`` handler may return ``skillPaths`` (agent-session.js:2790-2804):
Pi's resource loader loads the skills found there (``resource-loader.js:339-364``
``extendResources``, then ``loadSkills`` with ``includeDefaults: false``,
``dist/core/skills.js:316-403``) and the rebuilt system prompt lists those the model may
invoke in a ``skills`` section (``system-prompt.js:99-108``, ``formatSkillsForPrompt``
skills.js:278-303), between ``docs`` and ``cwd``.

What is modelled (``dist/core/skills.js``):

* a path is resolved against the project directory (``resolvePath``, ``utils/paths.js:124``);
  paths are merged without duplicates (``mergePaths``, resource-loader.js:803-815, by real
  path); a missing path or a file that is not ``.md`` loads nothing (a diagnostic Pi shows
  in its TUI only);
* a directory: a ``SKILL.md`` in it makes it one skill root (no recursion); otherwise its
  ``.md`` files (at the top level only) and, recursively, its subdirectories' ``SKILL.md``,
  skipping names that start with ``.`` and ``node_modules`` (``loadSkillsFromDirInternal``,
  :124-211), entries in byte order (libuv's ``scandir`` sorts them);
* a file: its YAML frontmatter (``utils/frontmatter.js``) must give a non-empty
  ``description``; ``name`` defaults to the parent directory's name; an ``.md`` file that is
  not ``SKILL.md`` without a description is no skill (:212-260); a name seen before loses
  (a collision diagnostic), the same file twice is skipped (:325-350);
* ``disable-model-invocation: true`` keeps a skill out of the prompt (:279).

The frontmatter is read as Pi's ``yaml`` package (2.9.0) reads it by default: YAML 1.2's core
schema (``yes``, ``on``, a date, ``1:30`` are strings; ``0o17`` and ``0x1F`` integers; ``<<``
an ordinary key) and a key named twice in a mapping an error (:class:`_CoreSchemaLoader`).

Not modelled: ``.gitignore``/``.ignore``/``.fdignore`` rules in a skill directory
(skills.js:38-55: a folder with one refuses the run, :func:`refuse_ignore_files`), and the
``yaml`` package's error messages (a ``/skill:`` prompt whose file became invalid YAML reports
PyYAML's).

``/skill:name`` prompts are expanded (:func:`expand_skill_command`). The skills of Pi's skill
folders and ``skills`` setting are found by :mod:`.skill_dirs` and loaded here too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, cast

import yaml

from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.scenario.yaml_text import UniqueKeyLoader

__all__ = [
    "IGNORE_FILE_NAMES",
    "Skill",
    "SkillsNotModelledError",
    "expand_skill_command",
    "format_skills_for_prompt",
    "load_skills",
    "merge_paths",
    "named_path_owner",
    "refuse_ignore_files",
    "resolve_resource_path",
    "split_frontmatter",
]


#: The ignore files Pi reads in a folder it collects skills or prompt templates from
#: (``IGNORE_FILE_NAMES``, skills.js:12, package-manager.js:93).
IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ignore", ".fdignore")


class SkillsNotModelledError(SimulatorError, ValueError):
    """The run's skills depend on what the simulator does not model: an entry of the ``skills``
    setting (a pattern, ``~``, something not a string: :mod:`.skill_dirs`) or an ignore file in
    a skill folder Pi reads (:func:`refuse_ignore_files`). The run is refused rather than run
    with other skills than Pi's."""


def refuse_ignore_files(directory: str, names: list[str]) -> None:
    """Refuse a skill folder (``names``: its entries) that holds an ignore file.

    Pi reads the ignore files of every skill folder it walks before anything else in it, both
    where an extension names the folder (``loadSkillsFromDirInternal``, skills.js:124-133,
    ``addIgnoreRules`` :38-55) and in its own skill folders (``collectSkillEntries``,
    package-manager.js:222-228, :127-146), and their rules hide files, ``SKILL.md`` too. They are
    not modelled, so such a run raises :class:`SkillsNotModelledError` rather than load skills
    Pi hides (over-cautious, as a prompts folder's refusal is: an ignore file that hides
    nothing, or a dangling link of that name, refuses too)."""
    ignore_file = next((name for name in IGNORE_FILE_NAMES if name in names), None)
    if ignore_file is not None:
        raise SkillsNotModelledError(
            f"the skill folder {os.path.basename(directory)!r} has an ignore file ({ignore_file}), "
            "which the simulator does not model"
        )


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    file_path: str
    disable_model_invocation: bool


def named_path_owner(file_path: str, owners: dict[str, str]) -> str | None:
    """The extension whose named path (``owners``: resolved path -> extension, in the order
    first named) ``file_path`` lies in, the first in that order, or ``None``: the named-path half
    of ``findSourceInfoForPath`` (resource-loader.js:734-760; ``isPathWithin``, utils/paths.js:
    45-53), for skills and prompt templates alike."""
    for path, owner in owners.items():
        if file_path == path or file_path.startswith(path.rstrip(os.sep) + os.sep):
            return owner
    return None


def resolve_resource_path(path: str, cwd: str) -> str:
    """``resolvePath(p, cwd, {trim: true})`` (utils/paths.js:124-128): trimmed, ``~``
    expanded, relative paths against ``cwd``, normalised."""
    normalized = os.path.expanduser(path.strip())
    return os.path.normpath(os.path.join(cwd, normalized))


def merge_paths(primary: list[str], additional: list[str], cwd: str) -> list[str]:
    """``mergePaths`` (resource-loader.js:803-815): resolved, the first of each real path kept."""
    merged: list[str] = []
    seen: set[str] = set()
    for path in [*primary, *additional]:
        resolved = resolve_resource_path(path, cwd)
        key = os.path.realpath(resolved)
        if key not in seen:
            seen.add(key)
            merged.append(resolved)
    return merged


_INT_10 = re.compile(r"[-+]?[0-9]+")
_INT_8 = re.compile(r"0o[0-7]+")
_INT_16 = re.compile(r"0x[0-9a-fA-F]+")


class _CoreSchemaLoader(UniqueKeyLoader):
    """PyYAML's safe loader with YAML 1.2's core schema (the ``yaml`` package's default,
    ``schema: "core"``, its ``tags/core.js`` resolvers) in place of YAML 1.1's, refusing a key a
    mapping names twice (``uniqueKeys: true``, which ``parse`` throws on) as
    :class:`~pi_continuity_harness.scenario.yaml_text.UniqueKeyLoader` does. No timestamp, no
    sexagesimal numbers, no ``yes``/``no``/``on``/``off`` booleans, no merge key: those are
    strings."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 (PyYAML's class attribute)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """``0o`` octal, ``0x`` hexadecimal, else decimal (a leading zero is no octal in 1.2)."""
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        try:
            return int(text, 10)
        except ValueError:  # beyond Python's 4,300 digits: JavaScript's Number is a double too
            return cast(int, float(text))


_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _CoreSchemaLoader.construct_yaml_int)
for _tag, _pattern, _first in (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("int", f"{_INT_10.pattern}|{_INT_8.pattern}|{_INT_16.pattern}", "-+0123456789"),
    (
        "float",
        r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
):
    _CoreSchemaLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first)
    )


def split_frontmatter(text: str) -> tuple[Any, str]:
    """utils/frontmatter.js's split, shared by ``parseFrontmatter`` and ``stripFrontmatter``:
    the parsed YAML between a leading ``---`` and the next ``\\n---`` (None without one) and
    the body after it (the whole normalised text without one); a YAML error raises."""
    normalized = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    end = normalized.find("\n---", 3) if normalized.startswith("---") else -1
    if end == -1:
        return None, normalized
    return yaml.load(normalized[4:end], Loader=_CoreSchemaLoader), normalized[end + 4 :].strip()


def _frontmatter(text: str) -> dict[str, Any]:
    """``parseFrontmatter`` (utils/frontmatter.js): the frontmatter's mapping; none, or YAML
    that is not a mapping, is ``{}``."""
    parsed, _body = split_frontmatter(text)
    return parsed if isinstance(parsed, dict) else {}


def _skill_from_file(path: str) -> Skill | None:
    """``loadSkillFromFile`` (skills.js:212-260), diagnostics left out."""
    try:
        with open(path, encoding="utf-8") as file:
            raw = file.read()
        front = _frontmatter(raw)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    description = front.get("description")
    if not isinstance(description, str) or description.strip() == "":
        return None
    name = front.get("name")
    if not isinstance(name, str) or not name:
        name = os.path.basename(os.path.dirname(path))
    return Skill(
        name=name,
        description=description,
        file_path=path,
        disable_model_invocation=front.get("disable-model-invocation") is True,
    )


def _skills_from_dir(directory: str, include_root_files: bool) -> list[Skill]:
    """``loadSkillsFromDirInternal`` (skills.js:124-211); a folder with an ignore file is
    refused (:func:`refuse_ignore_files`)."""
    try:
        names = sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return []
    refuse_ignore_files(directory, names)
    if "SKILL.md" in names and os.path.isfile(os.path.join(directory, "SKILL.md")):
        skill = _skill_from_file(os.path.join(directory, "SKILL.md"))
        return [skill] if skill else []
    skills: list[Skill] = []
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        full = os.path.join(directory, name)
        if os.path.isdir(full):
            skills.extend(_skills_from_dir(full, False))
        elif include_root_files and name.endswith(".md") and os.path.isfile(full):
            skill = _skill_from_file(full)
            if skill:
                skills.append(skill)
    return skills


def load_skills(paths: list[str], cwd: str) -> list[Skill]:
    """``loadSkills`` with ``includeDefaults: false`` (skills.js:316-403): the skills of
    ``paths`` (already merged), first of each name and of each real file kept."""
    by_name: dict[str, Skill] = {}
    real_paths: set[str] = set()
    for raw in paths:
        resolved = resolve_resource_path(raw, cwd)
        if os.path.isdir(resolved):
            found = _skills_from_dir(resolved, True)
        elif os.path.isfile(resolved) and resolved.endswith(".md"):
            skill = _skill_from_file(resolved)
            found = [skill] if skill else []
        else:
            continue
        for skill in found:
            real = os.path.realpath(skill.file_path)
            if real in real_paths or skill.name in by_name:
                continue
            by_name[skill.name] = skill
            real_paths.add(real)
    return list(by_name.values())


def _escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills_for_prompt(skills: list[Skill], file_read_tool: str = "read") -> str:
    """``formatSkillsForPrompt`` (skills.js:278-303), trimmed as ``buildSystemPromptSections``
    uses it (system-prompt.js:105): "" when no skill may be invoked by the model."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    hint = {
        "read": "Use the read tool to load a skill's file when the task matches its description.",
        "bash": "Use bash to load a skill's file when the task matches its description.",
    }.get(file_read_tool, "Load a skill's file when the task matches its description.")
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        hint,
        "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines.append("  <skill>")
        lines.append(f"    <name>{_escape_xml(skill.name)}</name>")
        lines.append(f"    <description>{_escape_xml(skill.description)}</description>")
        lines.append(f"    <location>{_escape_xml(skill.file_path)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines).strip()


def _strip_frontmatter(text: str) -> str:
    """``stripFrontmatter`` (utils/frontmatter.js): the body after the frontmatter (the YAML is
    still parsed, and an error in it raises as in Pi)."""
    return split_frontmatter(text)[1]


def expand_skill_command(text: str, skills: list[Skill]) -> tuple[str, Skill | None, str | None]:
    """``_expandSkillCommand`` (agent-session.js:1820-1844): ``/skill:<name> [args]`` of a
    loaded skill becomes its body in a ``<skill>`` block, the arguments after it; another text
    stays. Returns the text, the skill and, when its file could not be read, the error (Pi then
    keeps the text and reports an ``extension_error`` of event ``skill_expansion``)."""
    if not text.startswith("/skill:"):
        return text, None, None
    space = text.find(" ")
    name = text[7:] if space == -1 else text[7:space]
    args = "" if space == -1 else text[space + 1 :].strip()
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text, None, None
    try:
        with open(skill.file_path, encoding="utf-8") as file:
            body = _strip_frontmatter(file.read()).strip()
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        return text, skill, str(error)
    base_dir = os.path.dirname(skill.file_path)
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {base_dir}.\n\n{body}\n</skill>"
    )
    return (f"{block}\n\n{args}" if args else block), skill, None
