"""File operations of the handoff: atomic replacement, exclusive reservation, exact removal.

Every OS call goes through ``os``/``open`` at call time, so the simulator's filesystem
faults reach each step. Nothing here reads a dossier: the reservation is metadata only.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid

__all__ = [
    "ReservationError",
    "atomic_write_text",
    "ensure_directory",
    "is_nonempty_regular_file",
    "remove_exact",
    "reserve_exclusive",
]


class ReservationError(OSError):
    """The reserved file name is taken (never overwritten) or cannot be created."""


def ensure_directory(directory: str) -> None:
    """Create ``directory`` and its parents; a symlink to a directory is accepted."""
    os.makedirs(directory, mode=0o755, exist_ok=True)


def atomic_write_text(path: str, text: str, *, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` atomically: temp file, fsync, ``os.replace``, fsync dir."""
    target = os.path.abspath(path)
    directory = os.path.dirname(target)
    ensure_directory(directory)
    temp = os.path.join(directory, f".{os.path.basename(target)}.{uuid.uuid4().hex}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise


def reserve_exclusive(path: str) -> None:
    """Create ``path`` empty, owner-only, failing if anything is already there."""
    ensure_directory(os.path.dirname(os.path.abspath(path)))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ReservationError(f"{path} already exists; it is never overwritten") from None
    os.close(fd)


def is_nonempty_regular_file(path: str) -> bool:
    """Metadata only (``lstat``): a regular, nonempty file. The content is never read."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def remove_exact(path: str) -> str | None:
    """Remove ``path``; a missing file is harmless. Returns an error naming the path, if any."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{path}: {error.strerror or error}"
    return None
