"""Pi 1.6's ``read`` tool on a text file: the lines asked for, truncated as Pi truncates them.

A port of pi-coding-agent ``dist/core/tools/read.js:170-292`` (text files) and ``truncate.js``
(``truncateHead``, ``formatSize``). The simulator's ``read`` used to return the whole file
whatever ``offset`` and ``limit`` said; real Pi returns the lines from ``offset`` (1-based),
at most ``limit`` of them and at most 2,000 lines or 50 KB, with a notice naming the offset to
continue from, and fails an offset past the end (``tests/realpi/test_differential_file_tools.py``).

Pi streams integer ranges (``selectLinesFromStream``) and reads other ranges whole
(``selectLinesFromBuffer``); both select the same lines and report the same counts, so one
function does both here: the file is split at ``\\n`` and the selection taken with JavaScript's
``slice`` (which truncates a fractional index and counts a negative one from the end).

An image file is read by :mod:`.read_image`.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pi_continuity_harness.scenario.transcript import js_number

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "ReadError", "format_size", "read_text", "truncate_head"]

#: truncate.js:10-11.
DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024


class ReadError(Exception):
    """An error Pi's read tool throws: its message becomes the error result's text."""


def format_size(size: int) -> str:
    """``formatSize`` (truncate.js:25-35)."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{_to_fixed_1(size / 1024)}KB"
    return f"{_to_fixed_1(size / (1024 * 1024))}MB"


def _to_fixed_1(value: float) -> str:
    """``Number.prototype.toFixed(1)`` for a positive value: the exact binary value rounded half up."""
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def truncate_head(content: str) -> dict[str, Any]:
    """``truncateHead`` (truncate.js:44-113) with the default limits: whole lines from the start,
    at most 2,000 and 50 KB; a first line over the byte limit gives no content at all."""
    total_bytes = _bytes(content)
    lines = content.split("\n") if content else []
    if content.endswith("\n"):
        lines.pop()
    limits = {"maxLines": DEFAULT_MAX_LINES, "maxBytes": DEFAULT_MAX_BYTES}
    if len(lines) <= DEFAULT_MAX_LINES and total_bytes <= DEFAULT_MAX_BYTES:
        return {
            "content": content,
            "truncated": False,
            "truncatedBy": None,
            "totalLines": len(lines),
            "totalBytes": total_bytes,
            "outputLines": len(lines),
            "outputBytes": total_bytes,
            "lastLinePartial": False,
            "firstLineExceedsLimit": False,
            **limits,
        }
    if _bytes(lines[0]) > DEFAULT_MAX_BYTES:
        return {
            "content": "",
            "truncated": True,
            "truncatedBy": "bytes",
            "totalLines": len(lines),
            "totalBytes": total_bytes,
            "outputLines": 0,
            "outputBytes": 0,
            "lastLinePartial": False,
            "firstLineExceedsLimit": True,
            **limits,
        }
    kept: list[str] = []
    size = 0
    truncated_by = "lines"
    for i, line in enumerate(lines[:DEFAULT_MAX_LINES]):
        line_bytes = _bytes(line) + (1 if i > 0 else 0)
        if size + line_bytes > DEFAULT_MAX_BYTES:
            truncated_by = "bytes"
            break
        kept.append(line)
        size += line_bytes
    if len(kept) >= DEFAULT_MAX_LINES and size <= DEFAULT_MAX_BYTES:
        truncated_by = "lines"
    output = "\n".join(kept)
    return {
        "content": output,
        "truncated": True,
        "truncatedBy": truncated_by,
        "totalLines": len(lines),
        "totalBytes": total_bytes,
        "outputLines": len(kept),
        "outputBytes": _bytes(output),
        "lastLinePartial": False,
        "firstLineExceedsLimit": False,
        **limits,
    }


def _js_slice_index(index: float, length: int) -> int:
    """A ``slice`` bound: truncated toward zero, counted from the end when negative, clamped."""
    if math.isnan(index):
        return 0
    if math.isinf(index):
        return length if index > 0 else 0
    whole = int(index)
    return max(0, length + whole) if whole < 0 else min(whole, length)


def read_text(path: str, raw: bytes, offset: float | None, limit: float | None) -> dict[str, Any]:
    """The text branch of ``execute`` (read.js:230-270): the result (``content``, and ``details``
    where Pi sets them) for a file's bytes, or :class:`ReadError` for an offset past the end."""
    text = raw.decode("utf-8", errors="replace")
    all_lines = text.split("\n")
    total = len(all_lines)
    start_line = max(0.0, offset - 1) if offset else 0
    start_display = start_line + 1
    end_line = None if limit is None else min(start_line + limit, total)
    begin = _js_slice_index(start_line, total)
    end = total if end_line is None else _js_slice_index(end_line, total)
    selected = all_lines[begin:end]
    truncation = truncate_head("\n".join(selected))
    if start_line >= total:
        shown = js_number(offset) if offset is not None else "undefined"
        raise ReadError(f"Offset {shown} is beyond end of file ({total} lines total)")
    limited = None if limit is None else min(start_line + limit, total) - start_line
    details: dict[str, Any] | None = None
    if truncation["firstLineExceedsLimit"]:
        first_size = format_size(_bytes(all_lines[begin])) if begin < total else format_size(0)
        display = js_number(start_display)
        output = (
            f"[Line {display} is {first_size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{display}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": truncation}
    elif truncation["truncated"]:
        end_display = start_display + truncation["outputLines"] - 1
        next_offset = js_number(end_display + 1)
        output = truncation["content"]
        span = f"{js_number(start_display)}-{js_number(end_display)} of {total}"
        if truncation["truncatedBy"] == "lines":
            output += f"\n\n[Showing lines {span}. Use offset={next_offset} to continue.]"
        else:
            cap = format_size(DEFAULT_MAX_BYTES)
            output += f"\n\n[Showing lines {span} ({cap} limit). Use offset={next_offset} to continue.]"
        details = {"truncation": truncation}
    elif limited is not None and start_line + limited < total:
        remaining = total - (start_line + limited)
        output = (
            f"{truncation['content']}\n\n[{js_number(remaining)} more lines in file. "
            f"Use offset={js_number(start_line + limited + 1)} to continue.]"
        )
    else:
        output = truncation["content"]
    result: dict[str, Any] = {"content": [{"type": "text", "text": output}]}
    if details is not None:
        result["details"] = details
    result["structuredContent"] = output
    return result
