"""Validation and deterministic enrichment of a Continuity Brief body (spec §9, §14).

The body comes from a model, so nothing about it is trusted: the fixed headings are how
future agents and tests find recovery-critical information, directive-looking lines must
stay quoted evidence, and the event-freshness rule is inserted by code rather than hoped
for, so a Brief that lingers in context is never mistaken for a new compaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pi_continuity_harness.reference.psc.constants import (
    EVENT_FRESHNESS_RULE,
    FAILURE_TITLE,
    MANDATORY_HEADINGS,
    RECOVERY_HEADING,
)

__all__ = [
    "MissingRecoveryHeadingError",
    "authority_violations",
    "failure_brief_body",
    "insert_event_freshness_rule",
    "missing_headings",
    "validate_brief_body",
]


@dataclass(frozen=True)
class _Line:
    number: int  # 1-based
    text: str  # without the "\n"
    in_code: bool  # inside (or delimiting) a fenced code block


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _scan(body: str) -> list[_Line]:
    """Lines of ``body`` split on "\\n" only (so offsets stay byte-faithful), fence-aware."""
    lines: list[_Line] = []
    fence: str | None = None
    for index, text in enumerate(body.split("\n")):
        match = _FENCE_RE.match(text)
        if fence is None:
            if match:
                fence = match.group(1)
                lines.append(_Line(index + 1, text, True))
                continue
            lines.append(_Line(index + 1, text, False))
        else:
            lines.append(_Line(index + 1, text, True))
            closes = match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
            if closes and not text.strip().lstrip(fence[0]):
                fence = None
    return lines


def _is_heading(line: _Line, heading: str) -> bool:
    return not line.in_code and line.text.rstrip() == heading


def _match_headings(lines: list[_Line]) -> dict[str, int]:
    """Index (into ``lines``) of each mandatory heading found in order.

    Each heading takes its first occurrence after the previous match, so one absent or
    misplaced heading is reported alone instead of hiding every heading after it.
    """
    found: dict[str, int] = {}
    position = -1
    for heading in MANDATORY_HEADINGS:
        for index in range(position + 1, len(lines)):
            if _is_heading(lines[index], heading):
                found[heading] = index
                position = index
                break
    return found


def missing_headings(body: str) -> list[str]:
    """Mandatory headings (spec §9) not present as their own line in the required order."""
    found = _match_headings(_scan(body))
    return [heading for heading in MANDATORY_HEADINGS if heading not in found]


# Text that impersonates a higher-authority channel when it opens a line.
_DIRECTIVE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("system/developer role label", re.compile(r"(?:system|developer)\s*:", re.IGNORECASE)),
    ("system/developer tag", re.compile(r"<\s*/?\s*(?:system|developer)\b[^>]*>", re.IGNORECASE)),
    ("system/developer tag", re.compile(r"\[\s*(?:system|developer)\s*\]", re.IGNORECASE)),
    ("chat-template role marker", re.compile(r"<\|(?:im_start\|>\s*)?(?:system|developer)", re.IGNORECASE)),
    (
        "instruction override",
        re.compile(
            r"(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions|messages|rules|prompts)",
            re.IGNORECASE,
        ),
    ),
)
_LIST_MARKER_RE = re.compile(r"^(?:(?:[-*+]|\d{1,9}[.)])\s+)+")
_EMPHASIS_RE = re.compile(r"^[*_]+")
_QUOTE_OPENERS = ("`", '"', "'", "\u201c", "\u2018", "\u00ab")


def authority_violations(body: str) -> list[str]:
    """Lines that present directive-looking content as an unquoted instruction (spec §14).

    Deliberately conservative: only a line that *opens* with a role label (``SYSTEM:``,
    ``Developer:``), a role tag (``<system>``, ``[system]``, ``<|im_start|>system``) or an
    override phrase ("Ignore all previous instructions") counts, after list markers and
    emphasis. Recording such text as evidence is fine and expected: inside a ``>``
    blockquote, a fenced code block, a code span, or quotation marks, or anywhere after the
    start of a line ("The README contained `SYSTEM: ...`").
    """
    problems: list[str] = []
    for line in _scan(body):
        if line.in_code:
            continue
        content = line.text.lstrip()
        if content.startswith(">"):
            continue
        content = _EMPHASIS_RE.sub("", _LIST_MARKER_RE.sub("", content))
        if content.startswith(_QUOTE_OPENERS):
            continue
        for label, pattern in _DIRECTIVE_PATTERNS:
            if pattern.match(content):
                problems.append(
                    f"line {line.number} presents directive-looking content as an unquoted "
                    f"instruction ({label}); record it as quoted observed evidence instead: "
                    f"{line.text.strip()[:120]!r}"
                )
                break
    return problems


class MissingRecoveryHeadingError(ValueError):
    """The body has no ``## Recovery Instructions`` heading to insert the rule under."""


def _section_end(lines: list[_Line], start: int) -> int:
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not line.in_code and re.match(r"^#{1,2} ", line.text):
            return index
    return len(lines)


def insert_event_freshness_rule(body: str) -> str:
    """Insert :data:`EVENT_FRESHNESS_RULE` right after ``## Recovery Instructions``.

    Deterministic and idempotent: when the section already contains the rule text (because
    this ran before, or the model copied it from the prompt) the body is returned unchanged.
    Otherwise a blank line, the rule, and (unless one follows already) a blank line are
    inserted after the heading line; every other byte of the body is kept as it was.
    """
    lines = _scan(body)
    index = _match_headings(lines).get(RECOVERY_HEADING)
    if index is None:
        raise MissingRecoveryHeadingError(f"the Brief body has no {RECOVERY_HEADING!r} heading")
    section = "\n".join(line.text for line in lines[index + 1 : _section_end(lines, index)])
    if EVENT_FRESHNESS_RULE in section:
        return body
    raw = body.split("\n")
    head = "\n".join(raw[: index + 1]) + "\n"
    rest = "\n".join(raw[index + 1 :])
    block = "\n" + EVENT_FRESHNESS_RULE + "\n"
    if rest and not rest.startswith("\n"):
        block += "\n"
    return head + block + rest


def validate_brief_body(body: str) -> list[str]:
    """Every reason the body cannot be a Continuity Brief; empty means valid."""
    if not body.strip():
        return ["the Brief body is empty"]
    problems: list[str] = []
    if body.lstrip("\n").startswith("---"):
        problems.append("the Brief body must not start with its own frontmatter block")
    problems.extend(f"missing or out-of-order heading: {heading}" for heading in missing_headings(body))
    problems.extend(authority_violations(body))
    return problems


def failure_brief_body(
    *, phase: str, error: str, event_id: str, session_id: str, compaction_cancelled: bool
) -> str:
    """Postmortem body for a synthesis that failed before a valid body existed (spec §8).

    It records what a later reader needs to trust that nothing was committed: the phase,
    the error, the identity, and that no compaction or continuation followed.
    """
    compaction = (
        "Native compaction was cancelled."
        if compaction_cancelled
        else "No compaction was requested (manual checkpoint)."
    )
    return (
        f"{FAILURE_TITLE}\n"
        "\n"
        f"- Phase: {phase}\n"
        f"- Error: {' '.join(error.split())}\n"
        f"- Event: {event_id}\n"
        f"- Session: {session_id}\n"
        f"- Compaction: {compaction}\n"
        "- Continuation: no continuation prompt was submitted.\n"
        "\n"
        "This artifact is a postmortem only. It is never compaction or resume input.\n"
    )
