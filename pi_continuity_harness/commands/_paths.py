"""Output paths checked before a run, so a mistake costs nothing.

Before, ``--cucumber`` into a missing directory raised a traceback after the whole run and the
``--json``, ``--junit`` and ``--report`` asked for alongside were never written; ``--report`` at a
file, an unwritable ``--json`` and ``run --workdir`` at a file were tracebacks too. Every output
path is now checked before anything runs or is written: :func:`check_file` for a file option
(its directory must exist: a typo there is a mistake to report, not a directory to create),
:func:`check_directory` for a directory option (created with its parents when missing, as run
directories always were). A file where a directory is needed, a directory where a file is
needed, a missing directory for a file and a place the process cannot write are each a
:class:`UsageError` naming the option and the path. Nothing is created by a check: writability
is tried with a temporary file that is removed at once (permission bits alone say nothing when
running as root).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pi_continuity_harness.commands import UsageError

__all__ = ["check_directory", "check_file"]


def _existing_ancestor(path: Path, option: str) -> Path:
    """The nearest existing ancestor of ``path``, which must be a directory."""
    current = path.parent
    while not current.exists():
        if current.is_symlink():
            raise UsageError(f"{option} {path}: {current} is a dangling symbolic link")
        current = current.parent
    if not current.is_dir():
        raise UsageError(f"{option} {path}: {current} is not a directory")
    return current


def _try_writing_in(directory: Path, option: str, path: Path) -> None:
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".pi-continuity-harness-probe-"):
            pass
    except OSError as error:
        raise UsageError(f"{option} {path}: cannot write in {directory}: {error.strerror or error}") from None


def check_file(option: str, path: Path | None) -> None:
    """``path`` can be written as a file by option ``option`` (None: not asked for)."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    parent = path.parent
    if not parent.exists():
        raise UsageError(f"{option} {path}: no such directory: {parent}")
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: {parent} is not a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: is not writable")
    _try_writing_in(parent, option, path)


def check_directory(option: str, path: Path | None) -> None:
    """``path`` can be (or become) a directory that option ``option`` writes into."""
    if path is None:
        return
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"{option} {path}: exists and is not a directory")
        _try_writing_in(path, option, path)
        return
    _try_writing_in(_existing_ancestor(path, option), option, path)
