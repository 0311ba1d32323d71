"""Session-scoped artifact layout (spec §7) and filesystem-safe names.

Session ids come from the host (``--session-id`` is user-chosen), so they are untrusted
path components: a ``/`` or ``..`` must never move one session's artifacts into another's
directory, and two distinct ids must never share a directory (that would let a stale
Brief of one session look like a same-session artifact of another).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "ARCHIVE_NAME_RE",
    "ArtifactLayout",
    "file_timestamp",
    "iso_timestamp",
    "parse_archive_name",
    "safe_path_component",
    "safe_session_component",
]

_SAFE_CHARS_RE = re.compile(r"[A-Za-z0-9._-]")
_UNSAFE_CHAR_RE = re.compile(r"[^a-z0-9._-]")
_MAX_PLAIN_LENGTH = 128
_MAX_PREFIX_LENGTH = 64
_HASH_SEPARATOR = "~"  # never kept from an input, so plain and hashed names cannot meet


def safe_path_component(value: str) -> str:
    """A directory/file name component that maps distinct values to distinct names.

    Values made only of ``[a-z0-9._-]`` (Pi's uuidv7 session ids, our uuid event ids),
    not starting with ``.`` and at most 128 characters, are used as they are. Anything
    else becomes a readable prefix (unsafe characters replaced by ``_``) plus ``~`` and 16
    hex digits of the SHA-256 of the original value. ``~`` never survives from an input, so
    a kept value can never equal a hashed one; upper-case letters are hashed too, so ids
    differing only in case stay apart on case-insensitive filesystems.
    """
    if (
        value
        and len(value) <= _MAX_PLAIN_LENGTH
        and not value.startswith(".")
        and not _UNSAFE_CHAR_RE.search(value)
    ):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    prefix = "".join(ch if _SAFE_CHARS_RE.fullmatch(ch) else "_" for ch in value)[:_MAX_PREFIX_LENGTH]
    prefix = re.sub(r"^\.+", lambda m: "_" * len(m.group(0)), prefix)
    return f"{prefix or '_'}{_HASH_SEPARATOR}{digest}"


def safe_session_component(session_id: str) -> str:
    """The directory name of one session under the artifact directory."""
    return safe_path_component(session_id)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("timestamps must be timezone-aware (naive datetimes are ambiguous)")
    return moment.astimezone(UTC)


def iso_timestamp(moment: datetime) -> str:
    """JavaScript ``toISOString()`` form, ``2026-11-30T00:01:02.123Z`` (frontmatter)."""
    t = _utc(moment)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}."
        f"{t.microsecond // 1000:03d}Z"
    )


def file_timestamp(moment: datetime) -> str:
    """``2026-11-30T00-01-02-123Z``: ``:``/``.`` replaced like Pi's session file names.

    Fixed width, so lexical order of archive names is chronological order.
    """
    return iso_timestamp(moment).replace(":", "-").replace(".", "-")


ARCHIVE_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)-(.+)\.md$")


def parse_archive_name(name: str) -> tuple[str, str] | None:
    """``(timestamp, eventId component)`` of an archive/failed file name, else None."""
    match = ARCHIVE_NAME_RE.match(name)
    if match is None:
        return None
    return match.group(1), match.group(2)


@dataclass(frozen=True)
class ArtifactLayout:
    """Paths of one session's artifacts under a resolved artifact directory."""

    artifact_dir: str
    session_id: str

    @property
    def session_dir(self) -> str:
        return _session_dirs(self.artifact_dir, safe_session_component(self.session_id))[0]

    @property
    def pending_dir(self) -> str:
        return _session_dirs(self.artifact_dir, safe_session_component(self.session_id))[1]

    @property
    def archive_dir(self) -> str:
        return _session_dirs(self.artifact_dir, safe_session_component(self.session_id))[2]

    @property
    def failed_dir(self) -> str:
        return _session_dirs(self.artifact_dir, safe_session_component(self.session_id))[3]

    def pending_path(self, event_id: str) -> str:
        """``<artifactDirectory>/<sessionId>/pending/<eventId>.md``."""
        return os.path.join(self.pending_dir, f"{safe_path_component(event_id)}.md")

    def archive_path(self, moment: datetime, event_id: str) -> str:
        """``<artifactDirectory>/<sessionId>/archive/<timestamp>-<eventId>.md``."""
        return os.path.join(self.archive_dir, f"{file_timestamp(moment)}-{safe_path_component(event_id)}.md")

    def failed_path(self, moment: datetime, event_id: str) -> str:
        """``<artifactDirectory>/<sessionId>/failed/<timestamp>-<eventId>.md``."""
        return os.path.join(self.failed_dir, f"{file_timestamp(moment)}-{safe_path_component(event_id)}.md")


@functools.lru_cache(maxsize=64)
def _session_dirs(artifact_dir: str, component: str) -> tuple[str, str, str, str]:
    """The session, pending, archive and failed directories of a session whose directory is
    named ``component`` under ``artifact_dir``: a function of the two strings alone, so one
    made before is the same. A layout is made anew for every artifact path
    (``ExtensionState.layout``), and each of its directories joined the session's again,
    several times an event (issue 16). The name is still made at every call
    (:func:`safe_session_component`, which mutants replace)."""
    session_dir = os.path.join(artifact_dir, component)
    return (
        session_dir,
        os.path.join(session_dir, "pending"),
        os.path.join(session_dir, "archive"),
        os.path.join(session_dir, "failed"),
    )
