"""Pi 1.6's ``edit`` tool: exact (then fuzzy) text replacement, and the diff its result carries.

A port of pi-coding-agent ``dist/core/tools/edit.js`` (arguments, the file's BOM and line endings,
the result) and ``edit-diff.js`` (matching, errors, the display diff and the patch, through
:mod:`.js_diff`). The simulator's ``edit`` used to write ``newText`` over the whole file and
answer ``Successfully wrote to <path>``; real Pi replaces each ``edits[].oldText`` that matches
once, answers ``Successfully replaced N block(s) in <path>.`` with ``details: {diff, patch,
firstChangedLine}``, and fails a missing, ambiguous, overlapping or no-op edit with its own
message (``tests/realpi/test_differential_file_tools.py``).

The functions work on Python strings where Pi's work on UTF-16 strings; offsets differ for
characters outside the BMP, but every offset is used within one string, and no result names one.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.simulator.js_diff import DiffPart, Hunk, diff_lines, format_patch, structured_patch
from pi_continuity_harness.simulator.session_manager import js_trim_end

__all__ = [
    "EditError",
    "Replacement",
    "apply_edits_to_normalized_content",
    "apply_replacements_to_original",
    "generate_edit_diff",
    "normalize_for_fuzzy_match",
    "normalize_to_lf",
    "prepare_edit_arguments",
    "run_edit",
]

#: Unchanged lines diffed on each side of a replacement (``DIFF_WINDOW_MARGIN_LINES``, edit-diff.js:446).
_DIFF_WINDOW_MARGIN_LINES = 32
_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


class EditError(Exception):
    """An error Pi's edit tool throws: its message becomes the error result's text."""


@dataclass
class Replacement:
    """A matched edit: ``match_length`` characters at ``match_index`` become ``new_text``."""

    match_index: int
    match_length: int
    new_text: str
    edit_index: int = -1


# ============================================================================ arguments
def _is_single_edit(value: Any) -> bool:
    """``isSingleEditInput`` (edit.js:29-35)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )


def prepare_edit_arguments(args: Any) -> Any:
    """``prepareEditArguments`` (edit.js:41-66), run before the arguments are validated: ``edits``
    sent as a JSON string or as one object becomes a list, and the legacy top-level
    ``oldText``/``newText`` pair is appended to ``edits``."""
    if not isinstance(args, dict):
        return args
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
        elif _is_single_edit(parsed):
            args["edits"] = [parsed]
    elif _is_single_edit(edits):
        args["edits"] = [edits]
    if not isinstance(args.get("oldText"), str) or not isinstance(args.get("newText"), str):
        return args
    merged = list(args["edits"]) if isinstance(args.get("edits"), list) else []
    merged.append({"oldText": args["oldText"], "newText": args["newText"]})
    rest = {k: v for k, v in args.items() if k not in ("oldText", "newText")}
    return {**rest, "edits": merged}


# ============================================================================ matching
def normalize_to_lf(text: str) -> str:
    """``normalizeToLF`` (edit-diff.js:9-11)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_for_fuzzy_match(text: str) -> str:
    """``normalizeForFuzzyMatch`` (edit-diff.js:75-94): NFKC, trailing whitespace off each line,
    smart quotes, Unicode dashes and special spaces to ASCII."""
    text = "\n".join(js_trim_end(line) for line in unicodedata.normalize("NFKC", text).split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


def _fuzzy_find(content: str, old_text: str) -> tuple[int, int, bool]:
    """``fuzzyFindText`` (edit-diff.js:184-219): (index, match length, fuzzy); index -1 when absent."""
    exact = content.find(old_text)
    if exact != -1:
        return exact, len(old_text), False
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    if index == -1:
        return -1, 0, False
    return index, len(fuzzy_old), True


def _count_occurrences(content: str, old_text: str) -> int:
    """``countOccurrences`` (edit-diff.js:220-224): ``split(...).length - 1`` of the fuzzy forms.

    An ``oldText`` of spaces is not empty, but its fuzzy form is (trailing whitespace is
    trimmed), and ``split("")`` cuts a string into its UTF-16 code units: one fewer
    "occurrences" than code units, where Python's ``count("")`` gives one more than characters."""
    haystack = normalize_for_fuzzy_match(content)
    needle = normalize_for_fuzzy_match(old_text)
    if not needle:
        return len(haystack.encode("utf-16-le", errors="surrogatepass")) // 2 - 1
    return haystack.count(needle)


def _line_spans(content: str) -> list[tuple[int, int]]:
    spans = []
    offset = 0
    for match in _LINES_WITH_ENDINGS.finditer(content):
        spans.append((offset, offset + len(match.group(0))))
        offset += len(match.group(0))
    return spans


def _replacement_line_range(lines: list[tuple[int, int]], r: Replacement) -> tuple[int, int]:
    """``getReplacementLineRange`` (edit-diff.js:106-128)."""
    start, end = r.match_index, r.match_index + r.match_length
    first = next((i for i, (s, e) in enumerate(lines) if s <= start < e), -1)
    if first == -1:
        raise EditError("Replacement range is outside the base content.")
    last = first
    while last < len(lines) and lines[last][1] < end:
        last += 1
    if last >= len(lines):
        raise EditError("Replacement range is outside the base content.")
    return first, last + 1


def _apply_replacements(content: str, replacements: list[Replacement], offset: int = 0) -> str:
    """``applyReplacements`` (edit-diff.js:129-137): from the last, so earlier offsets hold."""
    for r in reversed(replacements):
        index = r.match_index - offset
        content = content[:index] + r.new_text + content[index + r.match_length :]
    return content


def _widen_to_lines(original: str, base: str, replacements: list[Replacement]) -> list[Replacement]:
    """``widenReplacementsToLines`` (edit-diff.js:149-183): a fuzzy match rewrites only the lines
    it touches, from the normalised text; every other line keeps its original bytes."""
    original_lines, base_lines = _line_spans(original), _line_spans(base)
    if len(original_lines) != len(base_lines):
        raise EditError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )
    groups: list[list[Any]] = []  # [start line, end line, replacements]
    for r in sorted(replacements, key=lambda r: r.match_index):
        start, end = _replacement_line_range(base_lines, r)
        if groups and start < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], end)
            groups[-1][2].append(r)
            continue
        groups.append([start, end, [r]])
    widened = []
    for start, end, members in groups:
        group_start, group_end = base_lines[start][0], base_lines[end - 1][1]
        original_start = original_lines[start][0]
        widened.append(
            Replacement(
                original_start,
                original_lines[end - 1][1] - original_start,
                _apply_replacements(base[group_start:group_end], members, group_start),
            )
        )
    return widened


def _one_or_many(total: int, one: str, many: str) -> EditError:
    return EditError(one if total == 1 else many)


def apply_edits_to_normalized_content(
    content: str, edits: list[dict[str, Any]], path: str
) -> tuple[str, str, list[Replacement]]:
    """``applyEditsToNormalizedContent`` (edit-diff.js:258-306): (base, new content, replacements),
    or :class:`EditError` with Pi's message for an empty, missing, repeated or overlapping
    ``oldText`` and for edits that change nothing."""
    normalized = [(normalize_to_lf(str(e["oldText"])), normalize_to_lf(str(e["newText"]))) for e in edits]
    total = len(normalized)
    for i, (old, _new) in enumerate(normalized):
        if not old:
            raise _one_or_many(
                total,
                f"oldText must not be empty in {path}.",
                f"edits[{i}].oldText must not be empty in {path}.",
            )
    fuzzy = any(_fuzzy_find(content, old)[2] for old, _new in normalized)
    base_for_matching = normalize_for_fuzzy_match(content) if fuzzy else content
    matched: list[Replacement] = []
    for i, (old, new) in enumerate(normalized):
        index, length, _used = _fuzzy_find(base_for_matching, old)
        if index == -1:
            raise _one_or_many(
                total,
                f"Could not find the exact text in {path}. The old text must match exactly including all "
                "whitespace and newlines.",
                f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace "
                "and newlines.",
            )
        occurrences = _count_occurrences(base_for_matching, old)
        if occurrences > 1:
            raise _one_or_many(
                total,
                f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide "
                "more context to make it unique.",
                f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please "
                "provide more context to make it unique.",
            )
        matched.append(Replacement(index, length, new, i))
    matched.sort(key=lambda r: r.match_index)
    for previous, current in itertools.pairwise(matched):
        if previous.match_index + previous.match_length > current.match_index:
            raise EditError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. Merge them into "
                "one edit or target disjoint regions."
            )
    replacements = _widen_to_lines(content, base_for_matching, matched) if fuzzy else matched
    new_content = _apply_replacements(content, replacements)
    if new_content == content:
        raise _one_or_many(
            total,
            f"No changes made to {path}. The replacement produced identical content. This might indicate an "
            "issue with special characters or the text not existing as expected.",
            f"No changes made to {path}. The replacements produced identical content.",
        )
    return content, new_content, replacements


def _line_ending_at(content: str, offset: int) -> str:
    """``getLineEndingAt`` (edit-diff.js:60-68)."""
    line_feed = content.find("\n", offset)
    if line_feed == -1:
        line_feed = content.rfind("\n", 0, offset + 1)
    if line_feed == -1:
        return "\r" if "\r" in content else "\n"
    return "\r\n" if line_feed > 0 and content[line_feed - 1] == "\r" else "\n"


def apply_replacements_to_original(original: str, replacements: list[Replacement]) -> str:
    """``applyReplacementsToOriginal`` (edit-diff.js:18-54): the normalised matches applied to the
    CRLF original, untouched text keeping its bytes and new line breaks taking the line's ending."""
    crlfs = [m.start() for m in re.finditer("\r\n", original)]
    state = {"before": 0}

    def to_original(offset: int) -> int:
        while state["before"] < len(crlfs) and crlfs[state["before"]] - state["before"] < offset:
            state["before"] += 1
        return offset + state["before"]

    parts: list[str] = []
    ends_with_cr = False

    def push(part: str) -> None:
        nonlocal ends_with_cr
        if not part:
            return
        if ends_with_cr and part[0] == "\n":
            parts.append("\n")
        parts.append(part)
        ends_with_cr = part[-1] == "\r"

    position = 0
    for r in replacements:
        start = to_original(r.match_index)
        push(original[position:start])
        ending = _line_ending_at(original, start)
        push(r.new_text if ending == "\n" else r.new_text.replace("\n", ending))
        position = to_original(r.match_index + r.match_length)
    push(original[position:])
    return "".join(parts)


# ============================================================================ the diff
def _line_count(text: str) -> int:
    return text.count("\n") + 1


def _format_display_diff(
    parts: list[DiffPart], old_line: int, new_line: int, width: int, context: int
) -> tuple[list[str], int | None]:
    """``formatDisplayDiff`` (edit-diff.js:335-445): numbered ``+``/``-`` lines, up to ``context``
    unchanged lines around each change, `` ...`` where lines are skipped."""
    out: list[str] = []
    first_changed: int | None = None
    last_was_change = False
    skip = f" {'':>{width}} ..."

    def shown(prefix: str, number: int, line: str) -> str:
        return f"{prefix}{number:>{width}} {line}"

    for i, part in enumerate(parts):
        raw = part.value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if part.added or part.removed:
            if first_changed is None:
                first_changed = new_line
            for line in raw:
                if part.added:
                    out.append(shown("+", new_line, line))
                    new_line += 1
                else:
                    out.append(shown("-", old_line, line))
                    old_line += 1
            last_was_change = True
            continue
        trailing = i < len(parts) - 1 and (parts[i + 1].added or parts[i + 1].removed)
        if last_was_change and trailing:
            if len(raw) <= context * 2:
                lead, tail, skipped = raw, [], 0
            else:
                lead, tail, skipped = raw[:context], raw[len(raw) - context :], len(raw) - 2 * context
        elif last_was_change:
            lead, tail, skipped = raw[:context], [], len(raw) - min(len(raw), context)
        elif trailing:
            skipped = max(0, len(raw) - context)
            lead, tail = [], raw[skipped:]
        else:
            old_line += len(raw)
            new_line += len(raw)
            last_was_change = False
            continue
        for line in lead:
            out.append(shown(" ", old_line, line))
            old_line += 1
            new_line += 1
        if skipped > 0:
            out.append(skip)
            old_line += skipped
            new_line += skipped
        for line in tail:
            out.append(shown(" ", old_line, line))
            old_line += 1
            new_line += 1
        last_was_change = False
    return out, first_changed


def _line_start_before(text: str, offset: int) -> int:
    return 0 if offset == 0 else text.rfind("\n", 0, offset) + 1


def _diff_windows(base: str, replacements: list[Replacement]) -> list[dict[str, int]]:
    """``getDiffWindows`` (edit-diff.js:483-524): whole-line windows with 32 lines of margin."""
    windows: list[dict[str, int]] = []
    offset_delta = line_delta = cursor_offset = cursor_line = 0
    for r in replacements:
        match_end = r.match_index + r.match_length
        start = _line_start_before(base, r.match_index)
        for _ in range(_DIFF_WINDOW_MARGIN_LINES):
            if start <= 0:
                break
            start = _line_start_before(base, start - 1)
        end = match_end
        for i in range(_DIFF_WINDOW_MARGIN_LINES + 1):
            if end >= len(base):
                break
            line_feed = base.find("\n", max(match_end - 1, r.match_index) if i == 0 else end)
            end = len(base) if line_feed == -1 else line_feed + 1
        offset_change = len(r.new_text) - r.match_length
        line_change = r.new_text.count("\n") - base.count("\n", r.match_index, match_end)
        if windows and start <= windows[-1]["oldEnd"]:
            previous = windows[-1]
            previous["oldEnd"] = max(previous["oldEnd"], end)
            previous["newEnd"] = previous["oldEnd"] + offset_delta + offset_change
        else:
            cursor_line += base.count("\n", cursor_offset, start)
            cursor_offset = start
            windows.append(
                {
                    "oldStart": start,
                    "oldEnd": end,
                    "oldLine": cursor_line,
                    "newStart": start + offset_delta,
                    "newEnd": end + offset_delta + offset_change,
                    "newLine": cursor_line + line_delta,
                }
            )
        offset_delta += offset_change
        line_delta += line_change
    return windows


def generate_edit_diff(
    path: str, base: str, new_content: str, replacements: list[Replacement], context: int = 4
) -> dict[str, Any]:
    """``generateEditDiff`` (edit-diff.js:452-476): ``{diff, patch, firstChangedLine}``, each
    window diffed alone (jsdiff's ``diffLines`` and ``structuredPatch``)."""
    width = len(str(max(_line_count(base), _line_count(new_content))))
    skip = f" {'':>{width}} ..."
    out: list[str] = []
    hunks: list[Hunk] = []
    first_changed: int | None = None
    for w in _diff_windows(base, replacements):
        old_text = base[w["oldStart"] : w["oldEnd"]]
        new_text = new_content[w["newStart"] : w["newEnd"]]
        shown, first = _format_display_diff(
            diff_lines(old_text, new_text), w["oldLine"] + 1, w["newLine"] + 1, width, context
        )
        if first_changed is None:
            first_changed = first
        if out and out[-1] == skip and shown and shown[0] == skip:
            shown = shown[1:]
        out.extend(shown)
        for hunk in structured_patch(old_text, new_text, context):
            hunk.old_start += w["oldLine"]
            hunk.new_start += w["newLine"]
            hunks.append(hunk)
    details: dict[str, Any] = {"diff": "\n".join(out), "patch": format_patch(path, path, hunks)}
    if first_changed is not None:
        details["firstChangedLine"] = first_changed
    return details


# ============================================================================ the tool
def run_edit(
    path: str,
    edits: list[dict[str, Any]],
    *,
    access: Callable[[], str | None],
    read_bytes: Callable[[], bytes],
    write_text: Callable[[str], None],
) -> dict[str, Any]:
    """``execute`` (edit.js:83-137): the file must be readable and writable (``access`` returns
    the error code, such as ``ENOENT``, else None), is read, matched without its BOM and with LF
    line ends, and written back with them. Returns the result; raises :class:`EditError`."""
    code = access()
    if code is not None:
        raise EditError(f"Could not edit file: {path}. Error code: {code}.")
    raw = read_bytes().decode("utf-8", errors="replace")
    bom, content = ("\ufeff", raw[1:]) if raw.startswith("\ufeff") else ("", raw)
    normalized = normalize_to_lf(content)
    base, new_content, replacements = apply_edits_to_normalized_content(normalized, edits, path)
    details = generate_edit_diff(path, base, new_content, replacements)
    final = bom + (
        new_content if content == normalized else apply_replacements_to_original(content, replacements)
    )
    write_text(final)
    return {
        "content": [{"type": "text", "text": f"Successfully replaced {len(edits)} block(s) in {path}."}],
        "details": details,
    }
