"""The skills Pi 1.6 finds without an extension naming them: its skill folders and setting.

Pi's package manager resolves the skill files (``DefaultPackageManager.resolve``,
``dist/core/package-manager.js:748-790``) and its resource loader loads them before the
extensions' ``resources_discover`` paths (``reload``, ``dist/core/resource-loader.js:395-445``;
``extendResources`` merges those after them, :353, so on a name collision the folders' skill
wins, ``loadSkills`` keeping the first of a name, ``dist/core/skills.js:325-350``). The rules:

* the ``skills`` setting, project entries then global ones (package-manager.js:765-778):
  each plain entry resolved against ``<project>/.pi`` or the agent dir (``resolveLocalEntries``,
  :2147-2160), a file kept as it is, a directory collected as ``<agentDir>/skills`` is
  (``collectFilesFromPaths``, :2243-2261); ``sourceInfo`` ``local``, the entry's scope, no
  ``baseDir``;
* then the folders (``addAutoDiscoveredResources``, :2161-2242), ``sourceInfo`` ``auto``:
  ``<project>/.pi/skills`` when the project is trusted (scope ``project``, ``baseDir``
  ``<project>/.pi``), the ``.agents/skills`` of the project and of its ancestors up to the git
  root when trusted (``collectAncestorAgentsSkillDirs``, :306-323; ``baseDir`` that ``.agents``),
  ``<agentDir>/skills`` (scope ``user``, ``baseDir`` the agent dir), ``~/.agents/skills``;
* each path kept once, the first naming wins (``addResource``, :2276-2281); sorted, stably,
  project before user and ``local`` before ``auto`` (``resourcePrecedenceRank``, :77-85;
  ``toResolvedPaths``, :2294-2306), the same real file once;
* a folder is collected by ``collectSkillEntries`` (:222-289): a ``SKILL.md`` in a directory is
  its one entry (no recursion), names starting with ``.`` and ``node_modules`` are skipped,
  subdirectories recursed; ``.md`` files are entries at the folder's top level only in a ``pi``
  folder, below it only in an ``.agents`` folder (``mode``, :271-273). A ``.md`` file that is not
  ``SKILL.md`` and has no description is then no skill (skills.js:233-235).

Each loaded skill's ``get_commands`` entry carries the ``sourceInfo`` of its path
(``findSourceInfoForPath``, resource-loader.js:734-760: an extension's named path holding the
file first, then this metadata), and the system prompt lists it as any skill
(:func:`.skills.format_skills_for_prompt`); ``/skill:<name>`` expands it. Each runtime and each
reload collect anew (``reload``, resource-loader.js:395).

Not modelled: ``~/.agents/skills`` and the ``.agents/skills`` of the project's ancestors (a
scenario writes only under ``$PROJECT``, ``$AGENT`` and ``$SESSIONS``, and real Pi's ``HOME`` is
empty; the simulator reads the project's own only); ``.gitignore``/``.ignore``/``.fdignore``
files in a folder (package-manager.js:228); the ``skills`` setting's patterns and overrides
(``!``, ``+``, ``-``, ``*``, ``?``: ``applyPatterns``/``isEnabledByOverrides``, :580-650,
``minimatch``) and an entry with ``~``: a run with an ignore file in a skill folder or such a
setting entry is refused (:class:`SkillsNotModelledError`), not run with other skills than
Pi's; ``--no-skills``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.simulator.skills import (
    SkillsNotModelledError,
    format_skills_for_prompt,
    load_skills,
    merge_paths,
    named_path_owner,
    refuse_ignore_files,
)
from pi_continuity_harness.simulator.virtual_root import disk_path

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = [
    "SkillOrigin",
    "SkillsNotModelledError",
    "collect_skill_entries",
    "default_skill_paths",
    "load_default_skills",
    "skill_paths",
    "skill_source",
]


@dataclass(frozen=True)
class SkillOrigin:
    """The metadata a skill path's ``sourceInfo`` is made of (``createSourceInfo``,
    source-info.js:28-37)."""

    source: Literal["auto", "local"]
    scope: Literal["user", "project"]
    base_dir: str | None

    def source_info(self, path: str) -> dict[str, str]:
        """The ``sourceInfo`` of the skill file ``path`` (``baseDir`` left out when undefined,
        as ``JSON.stringify`` drops it)."""
        info = {"path": path, "source": self.source, "scope": self.scope, "origin": "top-level"}
        if self.base_dir is not None:
            info["baseDir"] = self.base_dir
        return info

    @property
    def rank(self) -> int:
        """``resourcePrecedenceRank`` (package-manager.js:77-85)."""
        return (0 if self.scope == "project" else 2) + (0 if self.source == "local" else 1)


def _entries(directory: str) -> list[str]:
    """``readdirSync``'s names, in byte order (libuv's ``scandir`` sorts them); the directory
    listed by its disk spelling (:func:`.virtual_root.disk_path`: three skill folders, mostly
    absent, at every runtime's start)."""
    return sorted(os.listdir(disk_path(directory)), key=lambda n: n.encode("utf-8", "surrogateescape"))


def collect_skill_entries(
    directory: str, mode: Literal["pi", "agents"], root: str | None = None
) -> list[str]:
    """``collectSkillEntries`` (package-manager.js:222-289): the skill files of one folder; a
    folder with an ignore file is refused (:func:`.skills.refuse_ignore_files`; before, the
    simulator loaded the skills Pi hides)."""
    root = directory if root is None else root
    try:
        names = _entries(directory)
    except OSError:
        return []
    refuse_ignore_files(directory, names)
    if "SKILL.md" in names and os.path.isfile(os.path.join(directory, "SKILL.md")):
        return [os.path.join(directory, "SKILL.md")]
    found: list[str] = []
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        full = os.path.join(directory, name)
        at_root = directory == root
        if os.path.isfile(full) and name.endswith(".md") and at_root == (mode == "pi"):
            found.append(full)
        elif os.path.isdir(full):
            found.extend(collect_skill_entries(full, mode, root))
    return found


def _agents_dirs(cwd: str) -> list[str]:
    """``collectAncestorAgentsSkillDirs`` (package-manager.js:306-323) within the project: its
    own ``.agents/skills`` only (Pi walks on up to the git root or ``/``, where no scenario lays
    out files)."""
    return [os.path.join(cwd, ".agents", "skills")]


@functools.lru_cache(maxsize=64)
def _skill_folders(cwd: str, agent_dir: str) -> tuple[str, str, tuple[tuple[str, str], ...], str]:
    """:func:`default_skill_paths`' folders: the project's config folder and its ``skills``, each
    ``.agents/skills`` folder with the folder it is in, and the agent directory's ``skills``. A
    function of the strings, the same for every host (one virtual root, ``virtual_root.py``),
    built once rather than at every runtime's start."""
    project_base = os.path.join(cwd, CONFIG_DIR_NAME)
    agents = tuple((path, os.path.dirname(path)) for path in _agents_dirs(cwd))
    return project_base, os.path.join(project_base, "skills"), agents, os.path.join(agent_dir, "skills")


def _setting_entries(settings: dict[str, Any], scope: str) -> list[str]:
    """The ``skills`` setting's entries, refused unless each is a plain path."""
    entries = settings.get("skills")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise SkillsNotModelledError(f"the {scope} skills setting is not a list")
    for entry in entries:
        if (
            not isinstance(entry, str)
            or entry.startswith(("!", "+", "-", "~"))
            or "*" in entry
            or "?" in entry
        ):
            raise SkillsNotModelledError(
                f"the {scope} skills setting's entry {entry!r} is not modelled by the simulator "
                "(patterns, overrides and ~ are not)"
            )
    return entries


def default_skill_paths(
    cwd: str,
    agent_dir: str,
    *,
    trusted: bool,
    global_settings: dict[str, Any],
    project_settings: dict[str, Any],
) -> list[tuple[str, SkillOrigin]]:
    """The skill files Pi's resource loader starts from (``lastSkillPaths``,
    resource-loader.js:441-444), each with its origin, in Pi's order."""
    project_base, project_skills, agents_skills, user_skills = _skill_folders(cwd, agent_dir)
    found: dict[str, SkillOrigin] = {}

    def add(paths: list[str], origin: SkillOrigin) -> None:
        for path in paths:
            found.setdefault(path, origin)

    for settings, scope, base in (
        (project_settings, "project", project_base),
        (global_settings, "user", agent_dir),
    ):
        origin = SkillOrigin("local", "project" if scope == "project" else "user", None)
        for entry in _setting_entries(settings, scope):
            path = os.path.normpath(os.path.join(base, entry.strip()))
            if os.path.isfile(path):
                add([path], origin)
            elif os.path.isdir(path):
                add(collect_skill_entries(path, "pi"), origin)
    if trusted:
        add(collect_skill_entries(project_skills, "pi"), SkillOrigin("auto", "project", project_base))
        for agents, agents_base in agents_skills:
            add(collect_skill_entries(agents, "agents"), SkillOrigin("auto", "project", agents_base))
    add(collect_skill_entries(user_skills, "pi"), SkillOrigin("auto", "user", agent_dir))
    ranked = sorted(found.items(), key=lambda item: item[1].rank)
    seen: set[str] = set()
    paths: list[tuple[str, SkillOrigin]] = []
    for path, origin in ranked:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            paths.append((path, origin))
    return paths


def skill_paths(session: AgentSession) -> list[str]:
    """``lastSkillPaths`` (resource-loader.js:353, 444): the folders' and setting's skill files,
    then the paths the extensions named, the same real path once (``mergePaths``, :803-815)."""
    return merge_paths(
        [path for path, _ in session.default_skills], session.extension_skill_paths, session.cwd
    )


def load_default_skills(
    session: AgentSession,
    agent_dir: str,
    *,
    trusted: bool,
    global_settings: dict[str, Any],
    project_settings: dict[str, Any],
) -> None:
    """The resource loader's skills before any extension named one (resource-loader.js:441-445),
    for each runtime and after a reload dropped the extensions' (the files read as the host's
    own, :attr:`.AgentSession.host_io`); a setting the simulator does not model raises
    :class:`SkillsNotModelledError`."""
    with session.host_io():
        session.default_skills = default_skill_paths(
            session.cwd,
            agent_dir,
            trusted=trusted,
            global_settings=global_settings,
            project_settings=project_settings,
        )
        if not session.default_skills:
            return
        session.skills = load_skills(skill_paths(session), session.cwd)
    # ``read`` is always among the simulated session's tools (system-prompt.js:101-103).
    session.skills_prompt = format_skills_for_prompt(session.skills, "read")
    session.skills_seen = session.skills_seen or bool(session.skills_prompt)


def skill_source(
    file_path: str, owners: dict[str, str], origins: dict[str, SkillOrigin]
) -> str | dict[str, str]:
    """Where a skill's ``get_commands`` entry says it comes from (``findSourceInfoForPath``,
    resource-loader.js:734-760): the extension that named a path holding the file (its path,
    :func:`.skills.named_path_owner`), else the ``sourceInfo`` of the folder or setting it was
    found by (``<unknown>`` for neither)."""
    owner = named_path_owner(file_path, owners)
    if owner is not None:
        return owner
    origin = origins.get(file_path)
    return "<unknown>" if origin is None else origin.source_info(file_path)
