"""The project context files Pi 1.6 puts in the system prompt's ``project_context`` section.

Each time Pi's resource loader (re)loads (``DefaultResourceLoader.reload``,
``dist/core/resource-loader.js:372-491``: for every new runtime, ``agent-session-services.js:69``,
startup, new session, fork, resume; and on ``/reload``, ``agent-session.js:3122``), after the
extensions are loaded (:429), it reads the context files (``loadProjectContextFiles``, :179-210):
the agent directory's first of ``AGENTS.override.md``, ``AGENTS.md``, ``AGENTS.MD``,
``CLAUDE.md``, ``CLAUDE.MD`` (:130-147, a regular file, its text without a BOM), then the same
for every ancestor of the cwd, outermost first, the cwd last, each path once. The prompt lists
them (``renderProjectContext``, system-prompt.js:25-30) in a ``project_context`` section after
``addendum`` and before ``skills`` (:96-97); a change shows as a section patch on the next run.

The same load finds ``SYSTEM.md`` and ``APPEND_SYSTEM.md`` (:492-511, ``discoverSystemPromptFile``
and ``discoverAppendSystemPromptFile``, :961-982): the project's ``.pi/`` one when the project
is trusted, else the agent directory's. ``SYSTEM.md`` replaces the preamble and drops the
``tools``, ``rules`` and ``docs`` sections (system-prompt.js:77-94); ``APPEND_SYSTEM.md`` is the
``addendum`` section (:95-96). An empty file counts as none.

Not modelled: the ancestors above the machine root (real Pi goes on to ``/``; the simulated
host's root is a virtual path, ``virtual_root.py``, and the run's real parents are no part of
the machine), the git-worktree shadowing (``findShadowedContextFile``, :157-178: scenarios have
no linked worktrees), and an unreadable file's console warning.
"""

from __future__ import annotations

import functools
import os

from pi_continuity_harness.simulator.virtual_root import disk_path

__all__ = ["CONTEXT_FILE_NAMES", "load_context_files", "prompt_file", "render_project_context"]

#: ``loadContextFileFromDir``'s candidates, first found wins (resource-loader.js:130).
CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


#: The candidates' case-folded names: a name none of a directory's entries folds to is no file
#: there, on a case-sensitive filesystem or on one that ignores case.
_FOLDED = frozenset(name.casefold() for name in CONTEXT_FILE_NAMES)


def _from_dir(directory: str) -> tuple[str, str] | None:
    """``loadContextFileFromDir`` (resource-loader.js:129-147).

    The directory is listed once, and a candidate is looked at (``isfile``, then read, as
    before) only when one of the entries is its name up to case: a name with no such entry
    cannot name a file there, whether the filesystem tells case apart or not, and the
    candidates of a directory with none of them are skipped without a ``stat`` each (five per
    directory, three directories per load, every host start: a hundredth of a suite scenario,
    issue 16). A directory that cannot be listed (none, or not readable but searchable) is
    looked at name by name, as before. Listed by its disk spelling
    (:func:`.virtual_root.disk_path`: the same names, without the walk through ``/proc``)."""
    try:
        entries = os.listdir(disk_path(directory))
    except (OSError, ValueError):
        return _first_file(directory)
    if _FOLDED.isdisjoint(entry.casefold() for entry in entries):
        return None
    return _first_file(directory)


def _first_file(directory: str) -> tuple[str, str] | None:
    """The first candidate in ``directory`` that is a regular file and can be read."""
    for name in CONTEXT_FILE_NAMES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue  # Pi warns on the console and tries the next name
        return path, text.removeprefix("\ufeff")
    return None


def load_context_files(cwd: str, agent_dir: str, root: str) -> list[tuple[str, str]]:
    """``loadProjectContextFiles`` (resource-loader.js:179-210): (path, content) of the agent
    directory's file, then of ``cwd`` and its ancestors up to ``root`` (inclusive), outermost
    first, each path once."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    own = _from_dir(agent_dir)
    if own is not None:
        found.append(own)
        seen.add(own[0])
    ancestors: list[tuple[str, str]] = []
    for directory in _chain(cwd, root):
        file = _from_dir(directory)
        if file is not None and file[0] not in seen:
            ancestors.insert(0, file)
            seen.add(file[0])
    return found + ancestors


@functools.lru_cache(maxsize=64)
def _chain(cwd: str, root: str) -> tuple[str, ...]:
    """``cwd`` (normalised) and its ancestors up to ``root`` (inclusive) or ``/``, innermost
    first: a function of the two strings, the same for every host (they name their machines by
    one virtual root, ``virtual_root.py``), kept rather than walked at every runtime's start."""
    chain: list[str] = []
    directory = os.path.normpath(cwd)
    top = os.path.normpath(root)
    while True:
        chain.append(directory)
        parent = os.path.dirname(directory)
        if directory in (top, parent):
            return tuple(chain)
        directory = parent


def prompt_file(cwd: str, agent_dir: str, name: str, *, trusted: bool) -> str:
    """``SYSTEM.md`` or ``APPEND_SYSTEM.md`` (resource-loader.js:961-982, read by
    ``resolvePromptInput``, :113-127, without a BOM): the trusted project's ``.pi/<name>``, else
    the agent directory's, "" for none (a file that cannot be read counts as none; Pi would
    use its path as the text)."""
    for path, allowed in zip(_prompt_file_paths(cwd, agent_dir, name), (trusted, True), strict=True):
        # Whether it is there asked of its disk spelling (:func:`.virtual_root.disk_path`):
        # four lookups per runtime's start, most of them of no file.
        if allowed and os.path.exists(disk_path(path)):
            try:
                with open(path, encoding="utf-8") as handle:
                    return handle.read().removeprefix("\ufeff")
            except (OSError, UnicodeDecodeError):
                return ""
    return ""


@functools.lru_cache(maxsize=64)
def _prompt_file_paths(cwd: str, agent_dir: str, name: str) -> tuple[str, str]:
    """:func:`prompt_file`'s two candidates, the project's and the agent directory's: a function
    of the strings, built once rather than at every runtime's start."""
    return os.path.join(cwd, ".pi", name), os.path.join(agent_dir, name)


def render_project_context(files: list[tuple[str, str]]) -> str:
    """``renderProjectContext`` (system-prompt.js:25-30): the section's text, "" for no file."""
    if not files:
        return ""
    return "\n\n".join(
        [
            "Project-specific instructions and guidelines:",
            *(
                f'<project_instructions path="{path}">\n{content}\n</project_instructions>'
                for path, content in files
            ),
        ]
    )
