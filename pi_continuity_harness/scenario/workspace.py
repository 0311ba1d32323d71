"""The machine's directories and the ``edit_file`` operation, shared by both targets.

An ``edit_file`` operation is something the user does to the files while Pi runs (write a
settings file, remove an artifact directory, put a file where a directory should be). The
simulated host and the real-Pi target apply it with the same function, so a scenario means
the same thing on both.

A run directory (:func:`prepare_workdir`) is emptied before a run only when it is one a
previous run created (it holds the :data:`RUN_MARKER` file); any other non-empty directory is
refused, so a typo cannot delete someone's files.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.confine import (
    ConfinementError,
    check_scenario_path,
    is_inside,
    resolve_inside,
)
from pi_continuity_harness.scenario.json_text import dumps_indented
from pi_continuity_harness.scenario.run_lock import LOCK_NAME

if TYPE_CHECKING:
    from pi_continuity_harness.scenario.document import Scenario
    from pi_continuity_harness.scenario.operations import EditFileSpec

__all__ = [
    "RUN_MARKER",
    "EditFileError",
    "HostPaths",
    "WorkdirError",
    "apply_edit",
    "as_path",
    "deep_merge",
    "make_dir",
    "path_exists",
    "path_is_dir",
    "prepare_files",
    "prepare_workdir",
    "workdir_problem",
    "write_file",
    "write_json",
]

RUN_MARKER = ".pi-continuity-harness-run"


class WorkdirError(ScenarioError):
    """A work directory that the harness will not empty."""


def _mergeable(value: Any) -> bool:
    return isinstance(value, dict)


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``deepMergeObjects``: nested objects merge, anything else is replaced by the override."""
    result = dict(base)
    for key, value in overrides.items():
        if _mergeable(base.get(key)) and _mergeable(value):
            result[key] = deep_merge(base[key], value)
        else:
            result[key] = value
    return result


#: The class ``Path(...)`` makes here (``PosixPath``).
_PATH_CLASS = type(Path())


def as_path(path: str | Path) -> Path:
    """``Path(path)``: ``path`` itself when it is one of the class ``Path`` makes (immutable, so
    the same), else a new one. ``Path`` of a ``Path`` parses all its parts again: a scenario's
    run directory, given as a ``Path`` of a dozen parts, was parsed again by the target and by
    each check of it (issue 16)."""
    return path if type(path) is _PATH_CLASS else Path(path)


@functools.lru_cache(maxsize=256)
def path_of(text: str) -> Path:
    """``Path(text)``, the one made before for the same string: a ``Path`` of a string is a
    function of the string alone (nothing is resolved, no current directory is read) and
    immutable, so sharing one is safe. For strings asked about again and again: the simulated
    host's directories and session files, spelt below its fixed virtual root
    (``simulator/virtual_root.py``) and so the same in every simulation, and a scenario's
    configured artifact directory (``features/world.py``); building and parsing their ``Path``
    objects again was a few of the ``Path`` objects made per scenario (issue 16)."""
    return Path(text)


def workdir_problem(workdir: str | Path) -> str | None:
    """Why :func:`prepare_workdir` would refuse ``workdir`` (``"<path>: <reason>"``), or None:
    a path that exists must be a directory, empty or a harness run directory."""
    return _resolved_workdir(as_path(workdir).resolve())[0]


def _resolved_workdir(root: Path) -> tuple[str | None, list[Path] | None]:
    """:func:`workdir_problem` of a resolved ``root``, and the entries it found there besides
    the lock (None: nothing is at ``root``), for :func:`prepare_workdir` to clear.

    One ``stat`` answers "exists" and "is a directory" (``Path.exists`` then ``Path.is_dir``,
    each a ``stat``, with ``Path.exists``'s rule for what counts as absent), and the listing is
    made once: :func:`prepare_workdir` resolved, stat-ed and listed the directory twice, its
    own check and this one, before every scenario of the suite (issue 16)."""
    try:
        mode = os.stat(root).st_mode
    except OSError as error:
        if error.errno in _ABSENT_ERRNOS:
            return None, None
        raise
    if not stat.S_ISDIR(mode):
        return f"{root}: exists and is not a directory", None
    entries = [entry for entry in root.iterdir() if entry.name != LOCK_NAME]
    if entries and not (root / RUN_MARKER).exists():
        return (
            f"{root}: not empty and not a harness run directory (no {RUN_MARKER}); refusing to clear it",
            entries,
        )
    return None, entries


#: The errors ``Path.exists`` takes for "not there" (pathlib's ``_IGNORED_ERRNOS``); any other
#: error propagates, as it does from ``Path.exists``.
_ABSENT_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def path_exists(path: str) -> bool:
    """``Path(path).exists()`` without the ``Path``: False for a missing path (or a link to
    nothing, or a name with a NUL), the error itself for any other failure of ``stat``. For
    paths tested at every host start (the simulator's trust decision, issue 16), where building
    and parsing a ``Path`` per test was most of the cost."""
    return _mode(path) is not None


def path_is_dir(path: str) -> bool:
    """``Path(path).is_dir()`` of a non-empty ``path`` without the ``Path`` (``Path("")`` is
    the current directory; ``os.stat("")`` fails): the ``stat`` of :func:`path_exists`, with
    its rule for what is absent, True for a directory (or a link to one). For the directories
    the harness asks about at every scenario (its machine's, its artifacts'), where building
    and parsing a ``Path`` for one ``stat`` was most of the cost (issue 16)."""
    mode = _mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def _mode(path: str) -> int | None:
    """``os.stat(path).st_mode``, or None for what pathlib counts as absent (:data:`_ABSENT_ERRNOS`,
    a name with a NUL); any other failure of ``stat`` propagates."""
    try:
        return os.stat(path).st_mode
    except OSError as error:
        if error.errno in _ABSENT_ERRNOS:
            return None
        raise
    except ValueError:
        return None


def prepare_workdir(workdir: str | Path) -> Path:
    """Create or empty a run directory, refusing to touch anything that is not one.

    The run-directory lock file (:data:`~.run_lock.LOCK_NAME`) is neither content nor removed:
    the process emptying the directory is the one holding it."""
    root = as_path(workdir).resolve()
    problem, entries = _resolved_workdir(root)
    if problem is not None:
        raise WorkdirError(problem)
    if entries is None:
        root.mkdir(parents=True, exist_ok=True)
    else:  # a directory: emptied, then (as ``mkdir(exist_ok=True)`` left it) kept
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    write_file(os.path.join(root, RUN_MARKER), "created by pi-continuity-harness; emptied before each run\n")
    return root


@dataclass(frozen=True)
class HostPaths:
    """The directories of one machine: ``agent/``, ``project/`` and ``sessions/`` under the work dir."""

    workdir: str
    agent_dir: str
    project_dir: str
    session_dir: str

    @classmethod
    def under(cls, workdir: str) -> HostPaths:
        if cls is HostPaths and os.path.isabs(workdir):
            return _host_paths_under(workdir)
        return cls._under(workdir)

    @classmethod
    def _under(cls, workdir: str) -> HostPaths:
        root = os.path.abspath(workdir)
        return cls(
            root, os.path.join(root, "agent"), os.path.join(root, "project"), os.path.join(root, "sessions")
        )

    def resolve(self, path: str) -> str:
        """A scenario path: ``$AGENT/...``, ``$SESSIONS/...``, else relative to the project."""
        if path.startswith("$AGENT/"):
            return os.path.join(self.agent_dir, path[len("$AGENT/") :])
        if path.startswith("$SESSIONS/"):
            return os.path.join(self.session_dir, path[len("$SESSIONS/") :])
        if path.startswith("$PROJECT/"):
            path = path[len("$PROJECT/") :]
        return os.path.join(self.project_dir, path)


@functools.lru_cache(maxsize=64)
def _host_paths_under(workdir: str) -> HostPaths:
    """:meth:`HostPaths.under` of an absolute path: a function of the string alone (no current
    directory), and frozen, so one made before is the same. Every simulated host names its
    machine by the same fixed virtual root (``simulator/virtual_root.py``), so the four paths
    were built again for every scenario (issue 16)."""
    return HostPaths._under(workdir)


def write_json(path: str | Path, value: Any) -> None:
    """``value`` as indented JSON (the layout every harness-written settings file has), through
    :func:`.json_text.dumps_indented`: the bytes of ``json.dumps(value, indent=2)`` without the
    pure-Python encoder ``indent`` asks for (every scenario writes three such files)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_text(_json_text(value), encoding="utf-8")


def _json_text(value: Any) -> str:
    """What :func:`write_json` writes for ``value``.

    Kept per the value's compact JSON (``json.dumps``, CPython's C encoder): the same compact
    text is the same values in the same order, which :func:`.json_text.dumps_indented` writes as
    the same indented text. Most scenarios lay out the same agent settings (the harness's
    defaults and a few keys), and indenting them in Python anew was 4 % of starting a simulated
    host (issue 16). A value the C encoder refuses (or a cycle) is written as before, so its
    error is the one it was."""
    try:
        compact = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return dumps_indented(value, indent=2, ensure_ascii=False) + "\n"
    text = _JSON_TEXTS.get(compact)
    if text is None:
        text = dumps_indented(value, indent=2, ensure_ascii=False) + "\n"
        if len(_JSON_TEXTS) >= _JSON_TEXTS_KEPT:
            _JSON_TEXTS.clear()
        _JSON_TEXTS[compact] = text
    return text


#: :func:`_json_text`'s texts by the value's compact JSON, at most :data:`_JSON_TEXTS_KEPT`.
_JSON_TEXTS: dict[str, str] = {}
_JSON_TEXTS_KEPT = 64


#: ``open(path, mode)``'s flags for the modes the harness writes files with (CPython's
#: ``FileIO``: write-only, created with 0o666 less the umask, not inherited by a child process;
#: ``O_BINARY`` and ``O_NOINHERIT`` exist only on Windows).
_OPEN_FLAGS: dict[str, int] = {
    mode: os.O_WRONLY
    | os.O_CREAT
    | extra
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOINHERIT", 0)
    | getattr(os, "O_BINARY", 0)
    for mode, extra in (("w", os.O_TRUNC), ("a", os.O_APPEND), ("x", os.O_EXCL))
}


def write_file(path: str, data: str | bytes, mode: str = "w", *, on_disk: str | None = None) -> None:
    """``open(path, mode)`` and one ``write`` of ``data`` (text in UTF-8, ``\n`` as the
    platform's line separator, as text mode writes it), through ``os.open`` and ``os.write``:
    the same file, mode bits and errors (class, errno, file name). ``open()`` also asks for the
    file's size and whether it is a terminal, seeks, and builds a buffer and an encoder around
    the descriptor; for the small files the harness lays out and the session lines the
    simulated host appends that was half of each write (21 -> 10 us CPU per new file, a 4.5 kB
    append 20 -> 10 us, issue 16). Text is encoded after the file is opened, as a text file
    encodes it at its ``write``: text UTF-8 cannot encode leaves the file opened (created,
    truncated) and raises the same ``UnicodeEncodeError``. A short write goes on with the rest,
    as the buffered writer does. ``mode``: ``"w"``, ``"a"`` or ``"x"``.

    ``on_disk``: another spelling of ``path`` (the simulated host's disk spelling of its own
    files, ``simulator/virtual_root.disk_path``), opened first; when that open fails, ``path``
    is opened as before, so an error is the one ``path`` gives."""
    flags = _OPEN_FLAGS[mode]
    if on_disk is None or on_disk == path:
        fd = os.open(path, flags, 0o666)
    else:
        try:
            fd = os.open(on_disk, flags, 0o666)
        except OSError:
            fd = os.open(path, flags, 0o666)
    try:
        if isinstance(data, str):
            if os.linesep != "\n":  # pragma: no cover - Windows
                data = data.replace("\n", os.linesep)
            data = data.encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def make_dir(path: str, *, on_disk: str | None = None) -> bool:
    """``os.makedirs(path, exist_ok=True)`` for a directory whose parent is usually there and
    itself usually not: one ``mkdir``; anything else (no parent, already there, a file in its
    place) goes to ``makedirs``, which makes, accepts or refuses it as before.

    True when the one ``mkdir`` made ``path``: a new directory there, no symbolic link.
    ``on_disk``: another spelling of ``path`` (see :func:`write_file`) the one ``mkdir`` is
    asked of; ``makedirs`` is asked of ``path``."""
    try:
        os.mkdir(path if on_disk is None else on_disk)
    except OSError:
        os.makedirs(path, exist_ok=True)
        return False
    return True


def _lay_out(path: str, write: Callable[[str], None], on_disk: Callable[[str], str] | None = None) -> None:
    """``write(path)`` with its directory made first when it is missing, for
    :func:`prepare_files`: the same files and directories as ``os.makedirs(dirname,
    exist_ok=True)`` before every write, which cost a refused ``mkdir``, its exception and a
    ``stat`` for a directory that is nearly always there (three or more files per scenario).
    A write that finds no directory (or a file in its place) makes it as before and writes
    again; ``makedirs`` raises the error it raised before. Only before Pi starts: no monitor
    is active then, so the refused first write is not an operation of anyone's."""
    try:
        write(path)
    except (FileNotFoundError, NotADirectoryError):
        parent = os.path.dirname(path)
        spelt = parent if on_disk is None else on_disk(parent)
        try:
            os.makedirs(spelt, exist_ok=True)
        except OSError:
            if spelt == parent:
                raise
            os.makedirs(parent, exist_ok=True)  # its error, naming the path
        write(path)


def prepare_files(
    paths: HostPaths,
    scenario: Scenario,
    *,
    canonical: Callable[[str], str] = os.path.realpath,
    on_disk: Callable[[str], str] | None = None,
) -> list[str]:
    """Lay out the machine before Pi starts: agent settings, project settings, project files.

    ``canonical`` is the host's canonical form of a path (Pi's ``realpath``), for the trust
    store's key: the simulator's keeps its fixed virtual root, so the file holds the same path
    in any run directory (``simulator/virtual_root.py``).

    Returns every file it wrote, in order (a path written twice is named twice): in a fresh
    machine, every file there is (the simulated host stamps them with its start time,
    ``SimHost.stamp_laid_out_files``, without walking the machine for them).

    ``on_disk``: another spelling of a path (the simulator's disk spelling of its virtual root,
    ``simulator/virtual_root.disk_path``) that the settings and files are written by and the
    three directories made by, each falling back to the path itself when that fails (so an
    error names the path, as before): the walk through ``/proc`` was 5 to 12 us per lookup
    where the disk spelling takes 2 to 3 (issue 16). What is returned names the paths."""
    written: list[str] = []

    def lay_out(path: str, write: Callable[[str], None]) -> None:
        _lay_out(path, write, on_disk)
        written.append(path)

    for directory in (paths.agent_dir, paths.project_dir, paths.session_dir):
        make_dir(directory, on_disk=None if on_disk is None else on_disk(directory))
    agent_settings = deep_merge(
        {
            "defaultThinkingLevel": "off",
            "quietStartup": True,
            "retry": {"enabled": True, "maxRetries": 1, "baseDelayMs": 100},
        },
        dict(scenario.settings.global_),
    )
    if scenario.trust != "ask":
        agent_settings = {**agent_settings, "defaultProjectTrust": scenario.trust}

    def file_of(data: str | bytes) -> Callable[[str], None]:
        if on_disk is None:
            return functools.partial(write_file, data=data)
        return lambda path: write_file(path, data, on_disk=on_disk(path))

    def json_file(value: Any) -> Callable[[str], None]:
        return file_of(_json_text(value))

    lay_out(os.path.join(paths.agent_dir, "settings.json"), json_file(agent_settings))
    if scenario.saved_trust is not None:
        # Pi's trust store: {"<canonical project path>": true|false} (dist/core/trust-manager.js:18-20
        # canonicalises the cwd; :25-40 finds the nearest saved decision).
        lay_out(
            os.path.join(paths.agent_dir, "trust.json"),
            json_file({canonical(paths.project_dir): scenario.saved_trust}),
        )
    if scenario.settings.project is not None:
        lay_out(
            os.path.join(paths.project_dir, CONFIG_DIR_NAME, "settings.json"),
            json_file(scenario.settings.project),
        )
    for relative, spec in scenario.files.items():
        check_scenario_path(relative)
        target = resolve_inside(paths.workdir, paths.resolve(relative))
        data = spec.content_bytes
        if spec.directory:
            os.makedirs(target, exist_ok=True)
        elif data is not None:
            lay_out(target, file_of(data))  # exact bytes: not always UTF-8
        elif spec.text is not None:
            lay_out(target, file_of(spec.text))
        else:  # json, null too: the file holds the JSON null
            lay_out(target, json_file(spec.json_value))
    return written


class EditFileError(ScenarioError):
    """An ``edit_file`` operation that cannot be applied to what is on disk (the operation fails
    with this message, as a refused path does)."""


def _json_object_in(target: str, path: str) -> dict[str, Any]:
    """The JSON object in the file ``merge_json`` merges into, or :class:`EditFileError` saying
    what is there instead (the file may be anything by then: an extension or an earlier
    operation wrote it). Before stop 28 a file that was not a JSON object ended the run with a
    ``JSONDecodeError``, ``TypeError`` or ``AttributeError`` traceback."""
    try:
        with open(target, encoding="utf-8") as handle:
            current = json.loads(handle.read())
    except UnicodeDecodeError:
        raise EditFileError(f"edit_file {path!r}: merge_json: the file is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise EditFileError(f"edit_file {path!r}: merge_json: the file is not JSON ({error})") from None
    except RecursionError:
        raise EditFileError(
            f"edit_file {path!r}: merge_json: the file's JSON is nested too deeply to read"
        ) from None
    if not isinstance(current, dict):
        raise EditFileError(
            f"edit_file {path!r}: merge_json: the file holds a JSON {type(current).__name__}, not an object"
        )
    return current


def _remove_entry(path: str) -> None:
    """Remove whatever is at ``path`` without following a link there: a directory with its
    contents, a file or a link (a missing path is fine)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def _plant_link(paths: HostPaths, link: str, spec: EditFileSpec) -> None:
    """``kind: symlink``: a symbolic link at ``link`` to ``spec.target``, replacing what was there.

    The target was checked at load like every scenario path (no absolute path, no ``..``); here
    it is checked again with links followed (:func:`~.confine.resolve_inside`): a link an
    extension planted on the way (``$PROJECT/out -> /elsewhere``, then ``target: out/x``) would
    otherwise make the new link lead out of the run, and a later ``edit_file`` through it would
    then be refused anyway, but the link itself must not exist. The link is written relative to
    its own directory, computed from both real directories, so it holds the same bytes on both
    targets and in any run directory (the simulator's host path is its virtual root,
    ``simulator/virtual_root.py``) and resolves where the scenario said even when a directory on
    the way is itself a link inside the run. Last, the planted link is resolved once more: if
    it does not stay in the run it is removed and the operation fails."""
    assert spec.target is not None  # EditFileSpec: kind symlink has a target
    check_scenario_path(spec.target)
    destination = resolve_inside(paths.workdir, paths.resolve(spec.target))
    directory = os.path.dirname(link)
    os.makedirs(directory, exist_ok=True)
    _remove_entry(link)
    real_destination = os.path.join(
        os.path.realpath(os.path.dirname(destination)), os.path.basename(destination)
    )
    os.symlink(os.path.relpath(real_destination, os.path.realpath(directory)), link)
    if not is_inside(link, paths.workdir):
        os.remove(link)
        raise ConfinementError(
            f"{link}: refused, the link to {spec.target!r} leads outside the run's directory "
            f"{os.path.realpath(paths.workdir)}"
        )


def apply_edit(paths: HostPaths, spec: EditFileSpec) -> None:
    """Apply one ``edit_file`` operation: make the path absent, a directory, JSON, text or bytes.

    The path was checked when the scenario loaded (``confine.check_scenario_path``); here it is
    checked again with symbolic links resolved, since an extension may have planted one that
    leads out of the run (:class:`~.confine.ConfinementError`). ``kind: absent`` and ``kind:
    symlink`` act on the entry itself (its directory is checked, a link there is removed or
    replaced, never followed); the others act on what the path leads to.
    """
    target = paths.resolve(spec.path)
    check_scenario_path(spec.path)
    resolve_inside(paths.workdir, target, follow_last=spec.kind not in ("absent", "symlink"))
    if spec.kind == "symlink":
        _plant_link(paths, target, spec)
        return
    if spec.kind == "absent":
        _remove_entry(target)
        return
    if spec.kind == "directory":
        if os.path.isfile(target):
            os.remove(target)
        os.makedirs(target, exist_ok=True)
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.isdir(target):
        shutil.rmtree(target)
    data = spec.content_bytes
    if data is not None:
        Path(target).write_bytes(data)  # exact bytes: a file that need not be UTF-8 (H86)
    elif spec.json_given:  # null too: the file holds the JSON null
        value = spec.json_value
        if spec.merge_json and os.path.isfile(target):
            value = deep_merge(_json_object_in(target, spec.path), value)
        write_json(target, value)
    else:
        Path(target).write_text(spec.text or "", encoding="utf-8")
