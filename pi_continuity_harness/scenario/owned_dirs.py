"""Temporary directories that name their owner, so the next harness process removes those a
killed one left behind.

A harness process removes its temporary run directories in ``finally`` blocks (a passing run,
Ctrl-C, SIGTERM: ``cli.py``) and keeps them, printing where, only after a failure. A process
killed by SIGKILL (the kernel's OOM killer, ``kill -9``, a CI runner tearing down a job) runs no
``finally`` block: its directory stayed for ever, on ``/dev/shm`` in memory (the simulator's
runs go there, ``features/scratch.py``), a suite run's machines about 100 MB.

Each such directory is *claimed* when it is made: a marker file beside it,
``<name>.pch-owner``, names the process (its pid, its start time in clock ticks since boot from
``/proc/<pid>/stat`` field 22, the boot id and the pid namespace). The claim is *released*
(the marker removed) when the process removes the directory, and for every directory still
claimed when the process ends normally (``atexit``): a failing run's kept directory is then
the user's, as before. :func:`sweep_orphans`, which every command runs first (``cli.py``) and
the suite's pytest plugin when it starts, removes a claimed directory only when its owner is
certainly gone: a marker that does not parse, a directory that is not one (a symbolic link),
another boot or another pid namespace (another container sharing ``/tmp``: its processes are
not ours to see) are all left alone. A pid that lives again as another process is told apart
by its start time.

Linux only (``/proc``); elsewhere nothing is claimed and nothing is swept.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "MARKER_SUFFIX",
    "claim",
    "make_owned_directory",
    "owned_temporary_directory",
    "release",
    "remove_owned",
    "sweep_message",
    "sweep_orphans",
    "sweep_roots",
]

#: The marker beside a claimed directory: ``<directory name><MARKER_SUFFIX>``.
MARKER_SUFFIX = ".pch-owner"
#: Only directories with these name prefixes are ever removed by a sweep (the harness's own).
_PREFIXES = ("pch-", "pi-continuity-", "pi-matrix-", "pi-version-")

_lock = threading.Lock()
#: Directories this process claimed and has not released: path -> the pid that claimed it (a
#: forked child inherits the set and must not release its parent's claims).
_claimed: dict[str, int] = {}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat`` (``proc(5)``: the process's start time after boot, in
    clock ticks): with the pid, it names one process for the life of the boot. The fields are
    counted after the command name's closing parenthesis (a name may hold spaces)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None or ")" not in stat:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _identity(pid: int) -> dict[str, str | int] | None:
    start = _start_time(pid)
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    if start is None or boot is None:
        return None
    return {"pid": pid, "start": start, "boot": boot, "pidns": namespace}


def _marker(directory: str) -> str:
    return os.path.normpath(directory) + MARKER_SUFFIX


def claim(directory: str | os.PathLike[str]) -> None:
    """Name this process as the owner of ``directory`` (made by it, under a harness prefix).
    Written whole (a temporary file renamed), so a sweep never reads half a marker."""
    path = os.path.realpath(os.fspath(directory))
    identity = _identity(os.getpid())
    if identity is None:
        return
    identity["dir"] = os.path.basename(path)
    marker = _marker(path)
    partial = f"{marker}.{os.getpid()}.partial"
    with open(partial, "w", encoding="ascii") as handle:
        handle.write(json.dumps(identity, sort_keys=True) + "\n")
    os.replace(partial, marker)
    with _lock:
        _claimed[path] = os.getpid()


def release(directory: str | os.PathLike[str]) -> None:
    """Give ``directory`` up: it is removed, or kept for the user (a failing run's). A
    directory this process never claimed is left as it is."""
    path = os.path.realpath(os.fspath(directory))
    with _lock:
        owner = _claimed.pop(path, None)
    if owner == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_marker(path))


def _release_all() -> None:
    with _lock:
        mine = sorted(path for path, pid in _claimed.items() if pid == os.getpid())
    for path in mine:
        release(path)


atexit.register(_release_all)


def make_owned_directory(prefix: str, dir: str | os.PathLike[str] | None = None) -> Path:
    """``tempfile.mkdtemp(prefix=prefix, dir=dir)``, claimed (see the module's docstring)."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    claim(path)
    return Path(path)


def remove_owned(directory: str | os.PathLike[str]) -> None:
    """Remove a claimed directory (``shutil.rmtree``, errors ignored) and its claim."""
    shutil.rmtree(directory, ignore_errors=True)
    release(directory)


@contextlib.contextmanager
def owned_temporary_directory(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """``tempfile.TemporaryDirectory(prefix=prefix, dir=dir)``, claimed while it exists."""
    path = make_owned_directory(prefix, dir)
    try:
        yield str(path)
    finally:
        remove_owned(path)


def sweep_roots() -> list[str]:
    """Where this process's harness would have put temporary directories: ``$PCH_SCRATCH``,
    ``/dev/shm`` and the temporary directory (``tempfile.gettempdir()``), each once."""
    roots: list[str] = []
    for root in (os.environ.get("PCH_SCRATCH"), "/dev/shm", tempfile.gettempdir()):
        if root and os.path.isdir(root):
            real = os.path.realpath(root)
            if real not in roots:
                roots.append(real)
    return roots


def _orphan(marker: str, mine: dict[str, str | int]) -> str | None:
    """The directory ``marker`` claims when its owner is certainly gone, else None (``mine``:
    this process's :func:`_identity`, for its boot and pid namespace)."""
    text = _read(marker)
    if text is None:
        return None
    try:
        owner = json.loads(text)
    except ValueError:
        return None
    if not isinstance(owner, dict):
        return None
    name, pid = owner.get("dir"), owner.get("pid")
    if not isinstance(name, str) or not isinstance(pid, int) or isinstance(pid, bool):
        return None
    directory = os.path.join(os.path.dirname(marker), name)
    if (
        name in ("", ".", "..")
        or "/" in name
        or not name.startswith(_PREFIXES)
        or _marker(directory) != marker
    ):
        return None
    if owner.get("boot") != mine["boot"] or owner.get("pidns") != mine["pidns"]:
        return None  # another boot or another container: not ours to judge
    if _start_time(pid) == owner.get("start"):
        return None  # the owner lives
    return directory


def sweep_orphans(roots: Iterable[str] | None = None) -> list[Path]:
    """Remove the claimed directories under ``roots`` (default :func:`sweep_roots`) whose owner
    was killed, and their markers; the directories removed, in name order. A symbolic link
    where the directory was is not followed (only the marker goes)."""
    removed: list[Path] = []
    mine = _identity(os.getpid())
    if mine is None:
        return removed  # no /proc: no owner can be judged
    for root in sweep_roots() if roots is None else roots:
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        for name in names:
            if not name.endswith(MARKER_SUFFIX):
                continue
            marker = os.path.join(root, name)
            directory = _orphan(marker, mine)
            if directory is None:
                continue
            if os.path.isdir(directory) and not os.path.islink(directory):
                shutil.rmtree(directory, ignore_errors=True)
                if not os.path.exists(directory):
                    removed.append(Path(directory))
            with contextlib.suppress(FileNotFoundError):
                if not os.path.lexists(directory) or os.path.islink(directory):
                    os.unlink(marker)
    return removed


def sweep_message(removed: list[Path]) -> str:
    """The one line a command prints on stderr for what :func:`sweep_orphans` removed."""
    noun = "directory" if len(removed) == 1 else "directories"
    names = ", ".join(str(path) for path in removed)
    return f"pi-continuity-harness: removed {len(removed)} temporary {noun} left by killed harness processes: {names}"
