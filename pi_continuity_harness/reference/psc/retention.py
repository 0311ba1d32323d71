"""Archive retention (spec §7): keep the newest archived Briefs of one session.

Retention touches only files it can prove are archive Briefs of the given session
directory (name ``<timestamp>-<eventId>.md``), so a mistaken path can never delete
pending Briefs, failed postmortems, other sessions' files or a user's notes.
"""

from __future__ import annotations

import os
import re
from stat import S_ISREG

from pi_continuity_harness.reference.psc.constants import ARCHIVE_RETENTION
from pi_continuity_harness.reference.psc.paths import parse_archive_name

__all__ = ["archived_briefs", "pending_briefs", "prune_archive"]


def archived_briefs(archive_dir: str) -> list[str]:
    """Archive Brief paths of one session, oldest first (file-name order is time order)."""
    try:
        names = sorted(os.listdir(archive_dir))  # the listing order is the filesystem's
    except FileNotFoundError:
        return []
    paths = [
        os.path.join(archive_dir, name)
        for name in names
        if parse_archive_name(name) is not None and os.path.isfile(os.path.join(archive_dir, name))
    ]
    return sorted(paths, key=os.path.basename)


def prune_archive(archive_dir: str, keep: int = ARCHIVE_RETENTION) -> list[str]:
    """Delete all but the newest ``keep`` archived Briefs in ``archive_dir``; return deleted."""
    if keep < 0:
        raise ValueError(f"keep must not be negative (got {keep})")
    briefs = archived_briefs(archive_dir)
    doomed = briefs[: max(0, len(briefs) - keep)]
    deleted: list[str] = []
    for path in doomed:
        try:
            os.remove(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted


def pending_briefs(pending_dir: str) -> list[str]:
    """Pending Brief paths of one session (``*.md``, no temp files), oldest first: by the
    time each was last written, then by name.

    At ``session_start`` these are stale by definition: they stay inert and are only
    reported (spec §7, §13). A Brief is named by its event id, a random UUID, so an order by
    name was a random one: ``/continuity status`` listed two stale Briefs in either order, and
    a run on real Pi differed from the simulator's in about half its runs ("status shows the
    path of every stale pending Brief", ``compare``). The order a user reads them in is the
    order they were written.
    """
    try:
        names = sorted(os.listdir(pending_dir))  # the listing order is the filesystem's
    except FileNotFoundError:
        return []
    found: list[tuple[int, str]] = []
    for name in names:
        path = os.path.join(pending_dir, name)
        if not name.endswith(".md") or name.startswith("."):
            continue
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if S_ISREG(stat.st_mode):
            found.append((stat.st_mtime_ns, path))
    return [path for _, path in sorted(found)]


#: ``atomic_io.atomic_write_text``'s temporary name: ``.<target name>.<uuid4 hex>.tmp``.
_TEMP_NAME = re.compile(r"^\..+\.md\.[0-9a-f]{32}\.tmp$")


def leftover_temp_files(*directories: str) -> list[str]:
    """Temporary files of an atomic write that never reached its rename, sorted by path.

    The rename is the commit point of a write (``atomic_io.atomic_write_text``), so such a
    file is never a complete artifact: a process that died between the write and the rename
    left it (issue 10 item 6, rule P136). Only names of that exact shape are returned.
    """
    found: list[str] = []
    for directory in directories:
        try:
            names = sorted(os.listdir(directory))  # the listing order is the filesystem's
        except (FileNotFoundError, NotADirectoryError):
            continue
        found.extend(
            os.path.join(directory, name)
            for name in names
            if _TEMP_NAME.match(name) and os.path.isfile(os.path.join(directory, name))
        )
    return sorted(found)
