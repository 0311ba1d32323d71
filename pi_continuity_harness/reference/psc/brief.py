"""Validation and deterministic enrichment of a Continuity Brief body (spec §9, §14).

The body comes from a model, so nothing about it is trusted: the fixed headings are how
future agents and tests find recovery-critical information, directive-looking lines must
stay quoted evidence, and the event-freshness rule is inserted by code rather than hoped
for, so a Brief that lingers in context is never mistaken for a new compaction.
"""

from __future__ import annotations

import functools
import operator
import re
from typing import NamedTuple

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


class _Line(NamedTuple):
    """One line of a body. A named tuple, not a frozen dataclass: every Brief judged is split
    into these two or three times, and making frozen dataclasses was half of that (issue 16)."""

    number: int  # 1-based
    text: str  # without the "\n"
    in_code: bool  # inside (or delimiting) a fenced code block


_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _scan(body: str) -> list[_Line]:
    """Lines of ``body`` split on "\\n" only (so offsets stay byte-faithful), fence-aware.

    A pure function of the text, remembered per body while the module is as imported
    (:func:`_as_imported`): one Brief is scanned by :func:`missing_headings`,
    :func:`authority_violations` and :func:`insert_event_freshness_rule` in turn, and scanning
    it each time was 2 % of a Pi Session Continuity exploration (issue 16). Each caller gets
    its own list."""
    if not _as_imported():
        return _scan_lines(body)
    known = _SCANNED.get(body)
    if known is None:
        if len(_SCANNED) >= _SCANNED_LIMIT:
            _SCANNED.clear()
        known = _SCANNED[body] = tuple(_scan_lines(body))
    return list(known)


#: :func:`_scan`'s lines by body.
_SCANNED: dict[str, tuple[_Line, ...]] = {}
_SCANNED_LIMIT = 64


def _scan_lines(body: str) -> list[_Line]:
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

    While the module is as imported (:func:`_as_imported`), each line is looked at once: the
    heading lines are indexed by their text, then each heading takes its first index after the
    previous match (the same answer). Asking :func:`_is_heading` of every line for every
    heading was 40 % of judging a new Brief in an exploration (issue 16); a mutant or a test
    that replaces ``_is_heading`` or the headings is still asked line by line.
    """
    if _as_imported():
        at: dict[str, list[int]] = {}
        for index, line in enumerate(lines):
            if not line.in_code:
                text = line.text.rstrip()
                if text in _HEADING_SET:
                    at.setdefault(text, []).append(index)
        matched: dict[str, int] = {}
        after = -1
        for heading in MANDATORY_HEADINGS:
            for index in at.get(heading, ()):
                if index > after:
                    matched[heading] = after = index
                    break
        return matched
    found: dict[str, int] = {}
    position = -1
    for heading in MANDATORY_HEADINGS:
        for index in range(position + 1, len(lines)):
            if _is_heading(lines[index], heading):
                found[heading] = index
                position = index
                break
    return found


#: The mandatory headings, for :func:`_match_headings`' look-up of a line.
_HEADING_SET = frozenset(MANDATORY_HEADINGS)


def missing_headings(body: str) -> list[str]:
    """Mandatory headings (spec §9) not present as their own line in the required order."""
    found = _match_headings(_scan(body))
    return [heading for heading in MANDATORY_HEADINGS if heading not in found]


# Text that impersonates a higher-authority channel when it opens a line.
_ROLE_LABEL = re.compile(r"(?:system|developer)\s*:", re.IGNORECASE)
# Directive-looking content wherever it stands in a line (spec §14): role tags, instruction
# overrides, acts against the continuity artifacts themselves, and claims of a compaction event
# (the Brief is historical evidence and must not announce one, §9/§14).
_DIRECTIVE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("system/developer tag", re.compile(r"<\s*/?\s*(?:system|developer)\b[^>]*>", re.IGNORECASE)),
    ("system/developer tag", re.compile(r"\[\s*(?:system|developer)\s*\]", re.IGNORECASE)),
    ("chat-template role marker", re.compile(r"<\|(?:im_start\|>\s*)?(?:system|developer)", re.IGNORECASE)),
    (
        "instruction override",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?]{0,40}?"
            r"\b(?:instructions?|rules|system prompt|guidelines|policies|policy|messages)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "an act against the continuity artifacts",
        re.compile(
            r"\b(?:delete|remove|erase|overwrite|rewrite|tamper with)\b[^.!?]{0,40}?"
            r"\b(?:continuity brief|this brief|the brief|brief file|continuity artifacts?|pending brief)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a claim of a compaction event",
        re.compile(
            r"\bannounce\s+(?:that|a|the)\b[^.!?]{0,60}?\bcompaction\b"
            r"|\bnew compaction (?:has )?(?:just )?(?:happened|occurred)\b",
            re.IGNORECASE,
        ),
    ),
)
_LIST_MARKER_RE = re.compile(r"^(?:(?:[-*+]|\d{1,9}[.)])\s+)+")
_EMPHASIS_RE = re.compile(r"^[*_]+")
# Quoted segments: code spans and double quotes (straight, curly, guillemets). Single quotes
# are apostrophes too often to delimit evidence.
_QUOTED_RE = re.compile(r"`[^`]*`|\"[^\"]*\"|\u201c[^\u201d]*\u201d|\u00ab[^\u00bb]*\u00bb")
# Saying where quoted text was observed makes it evidence (spec §14: "may record that such
# text existed").
_ATTRIBUTION_RE = re.compile(
    r"\b(?:observed|appeared|appears|said|says|saying|contained|contains|containing|read|reads|wrote|written|found|quoted|"
    r"reported|printed|showed|shows|returned|asked|from|in the (?:file|transcript|tool output|output|log))\b",
    re.IGNORECASE,
)


#: :func:`_directive`'s answers by text, for the patterns in ``_DIRECTIVE_SEEN_FOR`` (a mutant
#: or a test that replaces ``_DIRECTIVE_PATTERNS`` starts a fresh memo).
_DIRECTIVE_SEEN: dict[str, str | None] = {}
_DIRECTIVE_SEEN_FOR: list[object] = [None]
_DIRECTIVE_SEEN_LIMIT = 4096


def _directive(text: str) -> str | None:
    """The label of the first directive pattern ``text`` contains (None: none).

    A pure function of the text and the patterns, remembered per text: Briefs are judged
    line by line and most lines of one session's Briefs are the same lines (their sections'
    defaults, their headings), so the five searches per line were a thirtieth of an explored
    seed (issue 16)."""
    patterns = _DIRECTIVE_PATTERNS
    if _DIRECTIVE_SEEN_FOR[0] is not patterns:
        _DIRECTIVE_SEEN.clear()
        _DIRECTIVE_SEEN_FOR[0] = patterns
    if text in _DIRECTIVE_SEEN:
        return _DIRECTIVE_SEEN[text]
    found = None
    for label, pattern in patterns:
        if pattern.search(text):
            found = label
            break
    if len(_DIRECTIVE_SEEN) >= _DIRECTIVE_SEEN_LIMIT:
        _DIRECTIVE_SEEN.clear()
    _DIRECTIVE_SEEN[text] = found
    return found


def authority_violations(body: str) -> list[str]:
    """Lines that present directive-looking content as the Brief's own text (spec §14).

    Directive-looking content (a role label opening a line, a role tag, an instruction
    override, an act against the continuity artifacts, a claim that a compaction happened) may
    appear only as quoted, attributed evidence: inside a fenced code block, or inside a ``>``
    blockquote, a code span or quotation marks *and* with the line (or the line before) saying
    where it was observed ("NOTES.md said: ..."). Anywhere else it is promoted to an
    instruction, and the Brief is refused.
    """
    problems: list[str] = []
    lines = _scan(body)
    previous = ""
    memo = _LINE_LABELS if _as_imported() else None
    for line in lines:
        if line.in_code:
            previous = line.text
            continue
        key = (previous, line.text)
        if line.text.strip():
            previous = line.text
        if memo is not None:
            if key in memo:
                label = memo[key]
            else:
                if len(memo) >= _LINE_LABELS_LIMIT:
                    memo.clear()
                label = memo[key] = _line_label(*key)
        else:
            label = _line_label(*key)
        if label is not None:
            problems.append(
                f"line {line.number} presents directive-looking content as an unquoted "
                f"instruction ({label}); record it as quoted observed evidence instead: "
                f"{line.text.strip()[:120]!r}"
            )
    return problems


#: :func:`_line_label`'s answers by (line before, line), used while the module is as imported
#: (:func:`_as_imported`): a mutant or a test that replaces a pattern or a function gets a
#: fresh judgement of every line.
_LINE_LABELS: dict[tuple[str, str], str | None] = {}
_LINE_LABELS_LIMIT = 4096


def _line_label(previous: str, text: str) -> str | None:
    """Why the line ``text`` (not in a fenced block; ``previous`` is the last non-blank line
    before it, or the fence line) presents directive-looking content as an instruction (None:
    it does not). A pure function of the two lines, so :func:`authority_violations` remembers
    it per pair: the Briefs of one session repeat most of their lines (headings, the sections'
    defaults, the freshness rule), and judging each anew was 3 % of a Pi Session Continuity
    exploration (issue 16)."""
    content = text.lstrip()
    context = previous + "\n" + content
    quoted_block = content.startswith(">")
    content = _EMPHASIS_RE.sub("", _LIST_MARKER_RE.sub("", content.lstrip("> ")))
    own = _QUOTED_RE.sub(" ", content)
    label = None
    if not quoted_block and _ROLE_LABEL.match(own.lstrip()):
        label = "system/developer role label"
    elif not quoted_block:
        label = _directive(own)
    if label is None:
        quoted = _directive(content)
        if quoted is not None and not _ATTRIBUTION_RE.search(context):
            label = f"{quoted}, quoted without saying where it was observed"
    return label


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

    A pure function of the text, remembered per body while this module is as imported (as
    :func:`validate_brief_body`): the same model reply is enriched again in many handoffs (163
    insertions of 49 bodies in a run of the Pi Session Continuity suite, issue 16). A body
    without the heading raises every time (an exception is never remembered)."""
    if _as_imported():
        return _enriched(body)
    return _insert_event_freshness_rule(body)


@functools.lru_cache(maxsize=64)
def _enriched(body: str) -> str:
    return _insert_event_freshness_rule(body)


def _insert_event_freshness_rule(body: str) -> str:
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
    """Every reason the body cannot be a Continuity Brief; empty means valid.

    A pure function of the text, and the same Brief is judged again and again (before it is
    committed, and by every resume that finds it), so the answer is remembered per body while
    this module is as it was imported: a mutant (``pi_continuity_harness.mutants``) or a test
    that replaces one of its functions or patterns gets a fresh judgement every time."""
    if _as_imported():
        return list(_brief_body_problems(body))
    return _validate_brief_body(body)


@functools.lru_cache(maxsize=64)
def _brief_body_problems(body: str) -> tuple[str, ...]:
    return tuple(_validate_brief_body(body))


def _validate_brief_body(body: str) -> list[str]:
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


def _as_imported() -> bool:
    """Whether every module-level name still has the value it was imported with (compared in
    C: this is asked at every scan and judgement of a Brief)."""
    return all(map(operator.is_, map(globals().get, _IMPORTED_NAMES), _IMPORTED_VALUES))


#: Every module-level name and its value as imported (``validate_brief_body``, ``_scan`` and
#: ``authority_violations`` remember answers only while they are all unchanged).
_IMPORTED_NAMES: tuple[str, ...] = tuple(name for name in globals() if not name.startswith("__"))
_IMPORTED_VALUES: tuple[object, ...] = tuple(globals()[name] for name in _IMPORTED_NAMES)
