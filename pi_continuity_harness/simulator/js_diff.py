"""The line diff and unified patch of jsdiff 8.0.4 (npm ``diff``), as Pi 1.6's ``edit`` tool uses them.

Pi's ``edit`` result carries a display diff and a unified patch (``details.diff``,
``details.patch``; pi-coding-agent ``dist/core/tools/edit-diff.js:308-476``), both computed with
jsdiff: ``Diff.diffLines``, ``Diff.structuredPatch`` and ``Diff.formatPatch``. The model sees
neither (only the text block reaches it), but both are in the session file, so an edit's entry
is only Pi's if the diff aligns lines exactly as jsdiff does. Python's ``difflib`` aligns
differently (it is not Myers's algorithm), so this is a port of jsdiff's:

* :func:`diff_lines`: ``Diff.prototype.diff`` (``libesm/diff/base.js:2-148``) with the line
  tokenizer (``libesm/diff/line.js:51-64``): Myers's O(ND) walk with jsdiff's pruning of the
  diagonals past an edge, preferring a removal when both moves reach as far
  (``removePath.oldPos >= addPath.oldPos``, base.js:83-88), so a changed line is reported as
  removed, then added.
* :func:`structured_patch`: ``structuredPatch``'s hunks (``libesm/patch/create.js:17-121``).
* :func:`format_patch`: ``formatPatch`` with headers only (create.js:126-165).

Strings are compared as Python strings; jsdiff's indices are UTF-16 code units, but no result
here carries an index, only lines and their counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["DiffPart", "Hunk", "diff_lines", "format_patch", "structured_patch"]

_LINE_SPLIT = re.compile(r"(\n|\r\n)")


@dataclass
class DiffPart:
    """A jsdiff change object: ``count`` tokens (lines) that are ``added``, ``removed`` or common."""

    value: str
    count: int
    added: bool = False
    removed: bool = False


@dataclass
class Hunk:
    """A ``structuredPatch`` hunk: its start lines (1-based), its line counts and its lines."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None


@dataclass
class _Path:
    old_pos: int
    last: _Component | None


def _tokenize(value: str) -> list[str]:
    """line.js ``tokenize``: each line with its line break (``\\n`` or ``\\r\\n``); no empty last token."""
    parts = _LINE_SPLIT.split(value)
    if not parts[-1]:
        parts.pop()
    lines: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            lines[-1] += part
        else:
            lines.append(part)
    return lines


def _add_to_path(path: _Path, added: bool, removed: bool, old_inc: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _Path(path.old_pos + old_inc, _Component(last.count + 1, added, removed, last.previous))
    return _Path(path.old_pos + old_inc, _Component(1, added, removed, last))


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _build_values(last: _Component | None, new: list[str], old: list[str]) -> list[DiffPart]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    parts: list[DiffPart] = []
    new_pos = old_pos = 0
    for c in components:
        if not c.removed:
            value = "".join(new[new_pos : new_pos + c.count])
            new_pos += c.count
            if not c.added:
                old_pos += c.count
        else:
            value = "".join(old[old_pos : old_pos + c.count])
            old_pos += c.count
        parts.append(DiffPart(value, c.count, c.added, c.removed))
    return parts


def diff_lines(old_text: str, new_text: str) -> list[DiffPart]:
    """``Diff.diffLines(old_text, new_text)`` without options (base.js:2-148, line.js)."""
    old = [t for t in _tokenize(old_text) if t]
    new = [t for t in _tokenize(new_text) if t]
    new_len, old_len = len(new), len(old)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    start = best[0]
    assert start is not None
    new_pos = _extract_common(start, new, old, 0)
    if start.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(start.last, new, old)
    min_diagonal: float = float("-inf")
    max_diagonal: float = float("inf")
    edit_length = 1
    while edit_length <= new_len + old_len:
        diagonal = int(max(min_diagonal, -edit_length))
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = False
            if add_path is not None:
                add_new_pos = add_path.old_pos - diagonal
                can_add = 0 <= add_new_pos < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add
                and remove_path is not None
                and add_path is not None
                and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("jsdiff always ends within new_len + old_len edits")


def _split_lines(text: str) -> list[str]:
    """create.js ``splitLines``: the lines of ``text`` with their trailing newline, where present."""
    result = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        result.pop()
    else:
        result[-1] = result[-1][:-1]
    return result


def structured_patch(old_text: str, new_text: str, context: int = 4) -> list[Hunk]:
    """``Diff.structuredPatch(...).hunks`` (create.js:17-121), with ``\\ No newline at end of file``."""
    diff: list[tuple[list[str], bool, bool]] = [
        (_split_lines(p.value), p.added, p.removed) for p in diff_lines(old_text, new_text)
    ]
    diff.append(([], False, False))
    hunks: list[Hunk] = []
    old_range_start = new_range_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for i, (lines, added, removed) in enumerate(diff):
        if added or removed:
            if not old_range_start:
                old_range_start, new_range_start = old_line, new_line
                if i > 0:
                    previous = diff[i - 1][0]
                    current = [" " + line for line in previous[-context:]] if context > 0 else []
                    old_range_start -= len(current)
                    new_range_start -= len(current)
            current.extend(("+" if added else "-") + line for line in lines)
            if added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if len(lines) <= context * 2 and i < len(diff) - 2:
                    current.extend(" " + line for line in lines)
                else:
                    size = min(len(lines), context)
                    current.extend(" " + line for line in lines[:size])
                    hunks.append(
                        Hunk(
                            old_range_start,
                            old_line - old_range_start + size,
                            new_range_start,
                            new_line - new_range_start + size,
                            current,
                        )
                    )
                    old_range_start = new_range_start = 0
                    current = []
            old_line += len(lines)
            new_line += len(lines)
    for hunk in hunks:
        out: list[str] = []
        for line in hunk.lines:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out.extend((line, "\\ No newline at end of file"))
        hunk.lines = out
    return hunks


def format_patch(old_name: str, new_name: str, hunks: list[Hunk]) -> str:
    """``Diff.formatPatch(patch, FILE_HEADERS_ONLY)`` (create.js:126-165): the file headers, then
    each hunk (a zero-line side's start one lower, the unified format's quirk)."""
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for hunk in hunks:
        old_start = hunk.old_start - 1 if hunk.old_lines == 0 else hunk.old_start
        new_start = hunk.new_start - 1 if hunk.new_lines == 0 else hunk.new_start
        out.append(f"@@ -{old_start},{hunk.old_lines} +{new_start},{hunk.new_lines} @@")
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"
