"""Correlating a prepared Brief with what Pi committed, and what may be resumed from.

Pi stores a custom compaction result verbatim and hands ``session_compact`` the first
entry with an equal summary, and another extension may replace the result entirely. So
the only safe commit proof is an exact match of identity, path, hash and bytes between
the prepared Brief, the committed entry and the file on disk (spec §8, §18).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.reference.psc.brief import validate_brief_body
from pi_continuity_harness.reference.psc.constants import CONTINUATION_SUFFIX
from pi_continuity_harness.reference.psc.frontmatter import (
    BriefParseError,
    HandoffReason,
    LegacyBriefError,
    parse_brief,
)
from pi_continuity_harness.reference.psc.native_settings import NativeCompactionSettings

__all__ = [
    "PreparedHandoff",
    "brief_sha256",
    "commit_mismatches",
    "continuation_text",
    "handoff_reason_for",
    "resume_source_problems",
]


def brief_sha256(text: str) -> str:
    """Hex SHA-256 of the exact UTF-8 bytes of a Brief (the ``sha256`` detail)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_REASONS: dict[str, HandoffReason] = {
    "threshold": "threshold",
    "overflow": "overflow",
    "manual": "manual-compaction",
}


def handoff_reason_for(compaction_reason: str) -> HandoffReason:
    """Pi's compaction reason → the Brief's ``handoffReason`` (a checkpoint has none)."""
    try:
        return _REASONS[compaction_reason]
    except KeyError:
        raise ValueError(f"unknown compaction reason {compaction_reason!r}") from None


@dataclass(frozen=True)
class PreparedHandoff:
    """What ``session_before_compact`` returned, remembered for ``session_compact``."""

    event_id: str
    session_id: str
    artifact_path: str
    text: str
    compaction_reason: str
    settings: NativeCompactionSettings

    @property
    def sha256(self) -> str:
        return brief_sha256(self.text)

    @property
    def handoff_reason(self) -> HandoffReason:
        return handoff_reason_for(self.compaction_reason)

    def details(self) -> dict[str, Any]:
        """``CompactionEntry.details`` of the custom compaction (spec §8, §18)."""
        return {
            "continuityEventId": self.event_id,
            "artifactPath": self.artifact_path,
            "sha256": self.sha256,
            "sessionId": self.session_id,
            "handoffReason": self.handoff_reason,
            "settings": self.settings.to_json(),
        }


def commit_mismatches(
    prepared: PreparedHandoff,
    *,
    from_extension: bool,
    reason: str,
    session_id: str,
    compaction_entry: Mapping[str, Any],
    disk_text: str | None,
) -> list[str]:
    """Names of every check that failed; empty means archive (and maybe continue).

    Checks ``fromExtension``, the reason, the current session, the entry's details
    (event id, artifact path, hash, session), the entry's summary bytes, and the disk
    bytes (which must still be the same pending Brief).
    """
    bad: list[str] = []

    def fail(name: str) -> None:
        if name not in bad:
            bad.append(name)

    if not from_extension:
        fail("fromExtension")
    if reason != prepared.compaction_reason:
        fail("reason")
    if session_id != prepared.session_id:
        fail("sessionId")
    details = compaction_entry.get("details")
    if not isinstance(details, Mapping):
        details = {}
    if details.get("continuityEventId") != prepared.event_id:
        fail("eventId")
    if details.get("artifactPath") != prepared.artifact_path:
        fail("artifactPath")
    if details.get("sha256") != prepared.sha256:
        fail("sha256")
    if details.get("sessionId") != prepared.session_id:
        fail("sessionId")
    if compaction_entry.get("summary") != prepared.text:
        fail("summary")
    disk_ok = disk_text is not None and disk_text == prepared.text
    if not disk_ok or resume_source_problems(
        prepared.text, session_id=prepared.session_id, event_id=prepared.event_id
    ):
        fail("disk")
    return bad


def resume_source_problems(text: str, *, session_id: str, event_id: str | None = None) -> list[str]:
    """Why ``text`` may not be compaction summary or continuation input; empty means it may.

    Only a valid same-session ``pending`` v2 Brief qualifies. Failed, archived, foreign,
    legacy and malformed artifacts are refused whatever their body says.
    """
    try:
        frontmatter, body = parse_brief(text)
    except LegacyBriefError as exc:
        return [f"legacy artifact: {exc}"]
    except BriefParseError as exc:
        return [str(exc)]
    problems: list[str] = []
    if frontmatter.status != "pending":
        problems.append(f"status is {frontmatter.status}; only a pending Brief may be used")
    if frontmatter.session_id != session_id:
        problems.append(f"belongs to session {frontmatter.session_id!r}, not {session_id!r}")
    if event_id is not None and frontmatter.event_id != event_id:
        problems.append(f"eventId is {frontmatter.event_id!r}, expected {event_id!r}")
    problems.extend(validate_brief_body(body))
    return problems


def continuation_text(brief_text: str) -> str:
    """The threshold continuation: the exact Brief bytes, a blank line, the fixed suffix."""
    text = brief_text if brief_text.endswith("\n") else brief_text + "\n"
    return text + "\n" + CONTINUATION_SUFFIX
