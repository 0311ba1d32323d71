"""Crash-safe file writes and exact reads.

A Brief must be either fully on disk or absent: compaction may only proceed on bytes that
survived a write, a flush, an fsync and an atomic rename. Every OS call goes through the
``os`` module (or the builtin ``open``) at call time, so the simulator's audit-hook fault
injection on ``open``/``os.replace``/``os.mkdir``/``os.remove`` reaches every step.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass

__all__ = [
    "AtomicWriteRecord",
    "atomic_write_text",
    "ensure_directory",
    "read_text_exact",
    "remove_file",
]


@dataclass(frozen=True)
class AtomicWriteRecord:
    """What :func:`atomic_write_text` did, for diagnostics ("the write path's fsync count")."""

    path: str
    temp_path: str
    bytes_written: int
    fsync_count: int
    created_directories: tuple[str, ...]


def _fsync_directory(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_directory(directory: str) -> tuple[str, ...]:
    """Create ``directory`` and missing parents (``os.mkdir`` per level); return the created.

    Each new directory's parent is fsynced, so the new entry survives a crash too.
    """
    directory = os.path.abspath(directory)
    missing: list[str] = []
    current = directory
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    created: list[str] = []
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue
        created.append(path)
        _fsync_directory(os.path.dirname(path))
    return tuple(created)


def atomic_write_text(path: str, text: str) -> AtomicWriteRecord:
    """Write ``text`` (UTF-8) to ``path`` atomically and durably.

    Temp file in the target directory, write, flush, ``os.fsync`` the file, ``os.replace``
    onto the target, ``os.fsync`` the directory. On any failure the temp file is removed
    and the error re-raised, so a reader sees the old content or the new, never a prefix.
    """
    target = os.path.abspath(path)
    directory = os.path.dirname(target)
    created = ensure_directory(directory)
    fsyncs = len(created)
    data = text.encode("utf-8")
    temp = os.path.join(directory, f".{os.path.basename(target)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        fsyncs += 1
        os.replace(temp, target)
        _fsync_directory(directory)
        fsyncs += 1
    except BaseException:
        # The temp file may never have been created, or already renamed onto the target.
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise
    return AtomicWriteRecord(target, temp, len(data), fsyncs, created)


def read_text_exact(path: str) -> str:
    """The file's bytes decoded as strict UTF-8: no newline translation, no BOM stripping."""
    with open(path, "rb") as handle:
        data = handle.read()
    return data.decode("utf-8")


def remove_file(path: str) -> bool:
    """``os.remove`` that treats an already-missing file as done; True if it removed one."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return False
    return True
