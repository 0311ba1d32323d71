"""A scenario's session id (``session_id:``), checked the way Pi 1.6 checks ``--session-id``.

Pi refuses a custom id that does not match ``/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/``
(``assertValidSessionId``, ``dist/core/session-manager.js:15-19``; ``main.js:296`` prints the
message and exits 1 before any session exists), so no id Pi runs with holds a path separator,
starts or ends with a dot, or has a non-ASCII character: ``a..b`` is accepted, ``..``, ``a/b`` and
``é`` are not. The id goes into the session file name unchanged,
``<sessionDir>/<ISO timestamp, ':' and '.' as '-'>_<id>.jsonl`` (``session-manager.js:721-723``),
so an accepted id always names a file directly inside the session directory.

One id Pi accepts still fails: a file name longer than the filesystem allows (255 bytes on
Linux). Pi then throws ``ENAMETOOLONG`` when it first writes the session (lazily, at the first
user or assistant message; measured on Pi 1.6 with a 230-character id). A scenario with such an
id is refused at load with that reason rather than simulated half-way.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_SESSION_ID_LENGTH",
    "PI_SESSION_ID_MESSAGE",
    "check_session_id",
    "session_file_name",
]

#: ``assertValidSessionId``'s pattern (session-manager.js:16). ``fullmatch``: Python's ``$``
#: would also match before a final newline, JavaScript's does not.
_PI_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")

#: Pi's refusal, word for word (session-manager.js:17).
PI_SESSION_ID_MESSAGE = (
    "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', "
    "and start and end with an alphanumeric character"
)

#: The file name is ``<24-character timestamp>_<id>.jsonl``; 255 bytes is NAME_MAX.
_NAME_MAX = 255
MAX_SESSION_ID_LENGTH = _NAME_MAX - len("2026-01-01T00-00-00-000Z_") - len(".jsonl")


def session_file_name(timestamp: str, session_id: str) -> str:
    """Pi's session file name for a header timestamp (session-manager.js:721-723)."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def check_session_id(session_id: str) -> str:
    """The id, or ``ValueError`` with Pi's reason (or the file name's) when Pi would not run with it."""
    if _PI_SESSION_ID.fullmatch(session_id) is None:
        raise ValueError(f"{session_id[:80]!r}: Pi 1.6 refuses it: {PI_SESSION_ID_MESSAGE}")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise ValueError(
            f"{len(session_id)} characters: Pi 1.6 accepts the id but cannot write the session file "
            f"(ENAMETOOLONG: the file name would exceed {_NAME_MAX} bytes; at most "
            f"{MAX_SESSION_ID_LENGTH} characters)"
        )
    return session_id
