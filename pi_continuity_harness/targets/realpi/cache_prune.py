"""Bytecode of sources that are gone leaves the harness's bytecode cache.

Every bridge and every test process writes compiled modules under ``<cache>/tmp/pycache``
(``PYTHONPYCACHEPREFIX``, :func:`~.install.bytecode_cache_env`), in a tree that mirrors each
source's absolute directory. Extensions under test often live in temporary directories (a
copied implementation, a scenario's own modules, a test's ``tmp_path``), so the tree gained a
directory for every such run and never lost one: 101 MB after a few days of test runs, 15 MB of
it for temporary directories that no longer existed (3 December 2026). A subtree whose mirrored
source directory is gone can never be read again (CPython checks a ``.pyc`` against its
source's size and modification time, and there is no source), so removing it loses nothing.

The walk costs a ``stat`` per cached directory, so it runs at most once a day per cache (the
mtime of ``<prefix>/.pruned``), at the first real-Pi start of a process. Removal is per
subtree with errors ignored: a concurrent process writing bytecode for a source that appears
again just writes it again.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

__all__ = ["PRUNE_EVERY_SECONDS", "STAMP_NAME", "prune_stale_bytecode"]

#: At most one walk per this many seconds per cache.
PRUNE_EVERY_SECONDS = 86_400.0
#: The file whose modification time says when the cache was last walked.
STAMP_NAME = ".pruned"


def prune_stale_bytecode(prefix: Path, *, every_seconds: float = PRUNE_EVERY_SECONDS) -> list[str]:
    """Remove each directory under ``prefix`` whose mirrored source directory (``/`` + its path
    below ``prefix``) does not exist; return the source directories they mirrored (sorted).

    Nothing happens when the cache was walked less than ``every_seconds`` ago, when it does not
    exist, or off POSIX (where the mirror starts with a drive)."""
    if os.name != "posix" or not prefix.is_dir():
        return []
    stamp = prefix / STAMP_NAME
    now = time.time()
    try:
        if now - stamp.stat().st_mtime < every_seconds:
            return []
    except FileNotFoundError:
        pass
    stamp.touch()
    removed: list[str] = []
    pending = [str(prefix)]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                subdirectories = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for path in subdirectories:
            source = "/" + os.path.relpath(path, prefix)
            if os.path.isdir(source):
                pending.append(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(source)
    return sorted(removed)
