"""One process per run directory: a lock file inside it, held with ``flock``.

Two processes writing one run directory corrupt each other's files: two ``simulate`` of one
scenario interleaved their session files (14 entries, 3 duplicate ids, exit 0), and two ``run``
sharing a ``--workdir`` failed in ways that, on real Pi, read like conformance bugs. So every
command that writes a run directory (``simulate``, ``replay``, ``run``, ``compare``,
``explore --out``; the suite's pytest plugin for ``--harness-workdir``) holds
:func:`hold_run_directory` on it for the whole run, and a second process is refused with
:class:`RunDirectoryBusyError`, which names the directory and the holder (pid and command).

The lock is ``fcntl.flock`` on :data:`LOCK_NAME` inside the directory: the kernel releases it
when the holder exits, however it exits, so a killed run never blocks the next one. The holder
removes the file when it lets go (an acquirer that locked a file unlinked meanwhile tries
again), so a finished run leaves nothing behind; a killed run leaves the file, and the next run
simply takes it over. A directory the lock had to create is removed again at release when it is
still empty (a refused or failed setup leaves nothing on disk).

Within one process the lock is re-entrant: the command line takes it, then the suite's pytest
plugin, running in the same process, takes the same directory again (``flock`` locks belong to
an open file, so a second ``open`` in the same process would refuse itself).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pi_continuity_harness.errors import ScenarioError

__all__ = ["LOCK_NAME", "RunDirectoryBusyError", "RunDirectoryError", "hold_run_directory", "this_command"]

#: The lock file inside a run directory (ignored by ``prepare_workdir`` and by a run's outputs).
LOCK_NAME = ".pi-continuity-harness.lock"


class RunDirectoryError(ScenarioError):
    """A run directory that cannot be used at all (a file in its place, no permission)."""


class RunDirectoryBusyError(RunDirectoryError):
    """Another process holds the run directory."""

    def __init__(self, directory: Path, holder: str) -> None:
        self.directory = directory
        self.holder = holder
        super().__init__(
            f"{directory} is in use by another run ({holder}); wait for it to end or choose another directory"
        )


@dataclass
class _Held:
    fd: int
    count: int = 1
    #: Directories the lock created, outermost first.
    created: list[Path] = field(default_factory=list)


_HELD: dict[str, _Held] = {}
_GUARD = threading.Lock()


def this_command() -> str:
    """How this process was started, for the lock's holder line: ``pi-continuity-harness run ...``."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if program in ("__main__.py", "cli.py", "-c", "-m"):
        program = "pi-continuity-harness"
    return shlex.join([program, *sys.argv[1:]])


@contextlib.contextmanager
def hold_run_directory(directory: str | Path, *, command: str | None = None) -> Iterator[Path]:
    """Hold the run directory ``directory`` (created when missing) for the ``with`` block.

    Raises :class:`RunDirectoryBusyError` at once (never waits) when another process holds it,
    and :class:`RunDirectoryError` when it cannot be a directory. ``command`` is what the
    refusal names as the holder (default :func:`this_command`).
    """
    root = Path(directory).absolute()
    key = os.path.normpath(str(root))
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
    if held is None:
        held = _acquire(root, command if command is not None else this_command())
        with _GUARD:
            _HELD[key] = held
    try:
        yield root
    finally:
        with _GUARD:
            held.count -= 1
            last = held.count == 0
            if last:
                del _HELD[key]
        if last:
            _release(root, held)


def _make_directories(root: Path) -> list[Path]:
    """Create ``root`` and its missing parents; the ones created, outermost first."""
    missing: list[Path] = []
    current = root
    while not current.exists() and not current.is_symlink():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created: list[Path] = []
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as error:
            raise RunDirectoryError(f"{root}: cannot create {path}: {error.strerror or error}") from None
        created.append(path)
    if not root.is_dir():
        raise RunDirectoryError(f"{root}: exists and is not a directory")
    return created


def _acquire(root: Path, command: str) -> _Held:
    if root.exists() and not root.is_dir():
        raise RunDirectoryError(f"{root}: exists and is not a directory")
    created = _make_directories(root)
    path = root / LOCK_NAME
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:  # a releasing holder removed the directory it had created
            created += _make_directories(root)
            continue
        except OSError as error:
            _remove_empty(created)
            raise RunDirectoryError(f"{root}: cannot lock it: {error.strerror or error}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _holder(fd)
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                _remove_empty(created)
                raise RunDirectoryError(f"{root}: cannot lock it: {error.strerror or error}") from None
            raise RunDirectoryBusyError(root, holder) from None
        # The holder may have removed the file between our open and our flock: then the lock we
        # hold is on a file nobody else will open. Try again with the file that is there now.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}: {command}\n".encode(), 0)
    return _Held(fd, created=created)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "a process that has not said who it is yet"


def _release(root: Path, held: _Held) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / LOCK_NAME)
    fcntl.flock(held.fd, fcntl.LOCK_UN)
    os.close(held.fd)
    _remove_empty(held.created)


def _remove_empty(created: list[Path]) -> None:
    """Remove the directories the lock created, innermost first, while they are empty."""
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:
            return
