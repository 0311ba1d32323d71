"""Confinement: nothing a scenario says may touch a file outside its run.

A scenario is shared data (a minimised explorer failure, a CI artifact, a user's bug report),
so replaying one must be safe. Every path a scenario names is checked twice:

* **at load** (:func:`check_scenario_path`, :func:`check_scenario_glob`): a path is relative to
  the project, or starts with one of the run's placeholders (``$PROJECT/``, ``$AGENT/``,
  ``$SESSIONS/``); an absolute path, a ``..`` component, a backslash, a NUL byte, an unknown
  ``$`` placeholder or ``~`` is refused with the scenario file and the field;
* **when applied** (:func:`resolve_inside`): the path is resolved with every symbolic link
  followed, and refused (:class:`ConfinementError`) unless it stays inside the run's
  directory, so a symlink planted by an extension cannot lead a scenario's edit out.

The simulated host also refuses a Python extension's own writes outside the run (see
``faults.FilesystemMonitor``), and points :mod:`tempfile` into the run while it runs.
"""

from __future__ import annotations

import os
import stat
import tempfile

from pi_continuity_harness.errors import ScenarioError

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "PLACEHOLDERS",
    "ConfinementError",
    "check_scenario_glob",
    "check_scenario_path",
    "confined_tempdir",
    "is_inside",
    "resolve_below",
    "resolve_inside",
]

#: The placeholders a scenario path may start with; everything else is project-relative.
PLACEHOLDERS: tuple[str, ...] = ("$PROJECT", "$AGENT", "$SESSIONS")


#: Linux's ``NAME_MAX``: a longer file name fails with ``ENAMETOOLONG`` when the run applies it.
MAX_NAME_BYTES = 255
#: A path below a run directory: ``PATH_MAX`` (4,096) less room for the run's own directory.
MAX_PATH_BYTES = 3_072


class ConfinementError(ScenarioError):
    """A path a scenario names would leave the run's directory."""


def _strip_placeholder(path: str) -> str:
    for name in PLACEHOLDERS:
        if path == name:
            return ""
        if path.startswith(name + "/"):
            return path[len(name) + 1 :]
    return path


def check_scenario_path(path: str) -> None:
    """Refuse a scenario path that could name something outside the run (raises ``ValueError``
    with the reason; the caller names the file and the field)."""
    if not path:
        raise ValueError("a path must not be empty")
    if "\x00" in path:
        raise ValueError(f"{path!r}: a path must not contain a NUL byte")
    if "\\" in path:
        raise ValueError(f"{path!r}: use '/' to separate path components, not '\\'")
    if path.startswith("/"):
        raise ValueError(
            f"{path!r}: absolute paths are refused; name it relative to the project or under "
            "$PROJECT/, $AGENT/ or $SESSIONS/"
        )
    if path.startswith("~"):
        raise ValueError(f"{path!r}: '~' is refused; paths stay inside the run")
    rest = _strip_placeholder(path)
    if rest.startswith("$"):
        raise ValueError(f"{path!r}: unknown placeholder; use $PROJECT/, $AGENT/ or $SESSIONS/")
    parts = rest.split("/")
    if ".." in parts:
        raise ValueError(f"{path!r}: '..' is refused; paths stay inside the run")
    if rest == "":
        raise ValueError(f"{path!r}: names a run directory itself; name a file or directory inside it")
    if "" in parts or "." in parts:
        raise ValueError(f"{path!r}: write the path without '.', '//' or a trailing '/'")
    long = next((part for part in parts if len(part.encode("utf-8")) > MAX_NAME_BYTES), None)
    if long is not None:
        raise ValueError(
            f"{_shown(path)}: the component {_shown(long)} is {len(long.encode('utf-8'))} bytes; "
            f"a file name has at most {MAX_NAME_BYTES} (the file system's limit)"
        )
    if len(rest.encode("utf-8")) > MAX_PATH_BYTES:
        raise ValueError(
            f"{_shown(path)}: {len(rest.encode('utf-8'))} bytes; a path in the run has at most {MAX_PATH_BYTES}"
        )


def _shown(text: str, limit: int = 60) -> str:
    """``repr(text)``, shortened in the middle when long (an error line stays one line)."""
    return repr(text) if len(text) <= limit else repr(text[: limit // 2] + "…" + text[-limit // 2 :])


def check_scenario_glob(pattern: str) -> None:
    """Refuse a glob over the run's files that names no placeholder or could leave the run."""
    if not any(pattern.startswith(name + "/") for name in PLACEHOLDERS) and not pattern.startswith("*"):
        raise ValueError(f"{pattern!r}: a path glob starts with $PROJECT/, $AGENT/, $SESSIONS/ or '*'")
    check_scenario_path(pattern if not pattern.startswith("*") else "$PROJECT/" + pattern)


def is_inside(path: str, root: str) -> bool:
    """Whether ``path``, with every symbolic link resolved, is ``root`` or below it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def resolve_below(path: str, root: str, real_root: str) -> str | None:
    """``os.path.realpath(path)`` when ``path`` is ``root`` or lexically below it and no component
    below ``root`` is ``.``, ``..`` or a symbolic link: ``real_root`` (``realpath(root)``, which
    the caller keeps) joined with the rest, one ``lstat`` per existing component. None
    otherwise: the caller resolves the whole path. A component that does not exist ends the
    walk, as in ``realpath`` (non-strict), which keeps the rest of the path as it is."""
    if path == root:
        return real_root
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix) :].split(os.sep)
    if ".." in parts or "." in parts:
        return None
    current = real_root.rstrip(os.sep)
    for index, part in enumerate(parts):
        if not part:
            continue
        candidate = current + os.sep + part
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:
            rest = [p for p in parts[index + 1 :] if p]
            return os.sep.join([candidate, *rest])
        if stat.S_ISLNK(mode):
            return None
        current = candidate
    return current or os.sep


def resolve_inside(root: str, path: str, *, follow_last: bool = True) -> str:
    """``path`` (absolute, already joined under the run) if it stays inside ``root``.

    ``follow_last=False`` checks only the parent directory, for operations that act on a
    symbolic link itself (removing it), never on what it points to.
    """
    check = path if follow_last else os.path.dirname(path.rstrip(os.sep)) or path
    if not is_inside(check, root):
        raise ConfinementError(
            f"{path}: refused, it leads outside the run's directory {os.path.realpath(root)} "
            "(through '..' or a symbolic link)"
        )
    return path


class confined_tempdir:  # noqa: N801  (used as a context manager)
    """Point :mod:`tempfile` at ``directory`` (inside the run) while an extension runs, so a
    Python implementation's temporary files stay in the run (and, with the seeded random
    source, get the same names on every replay). The directory is made when the run is laid
    out, never here: the filesystem monitor is already watching. (A class rather than a
    ``contextlib`` generator: every step of a simulation enters it, and a generator's context
    costs four times a class's.)"""

    __slots__ = ("_directory", "_saved")

    def __init__(self, directory: str) -> None:
        self._directory = directory

    def __enter__(self) -> None:
        self._saved = tempfile.tempdir
        tempfile.tempdir = self._directory

    def __exit__(self, *exc: object) -> None:
        tempfile.tempdir = self._saved
