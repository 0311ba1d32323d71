"""A scenario's timeline (its trace records) and the full model requests a run kept.

Each trace record becomes one row: ``seq``, virtual time, kind, name and the other fields,
each cut at :data:`VALUE_LIMIT` characters. A row with a cut field, and every model request,
expands to the whole record (cut at :data:`FULL_LIMIT`; the trace file keeps it whole).

Full requests: a trace keeps only a summary of each model request. When a run also kept the
full text of every request and reply (a ``request`` field on the record, or files under the
scenario's ``requests/`` directory: the reproduction issue's), they are shown too, each
expandable, whatever the files' names: sorted with their numbers compared as numbers.

Each kept request repeats the whole conversation so far, so a file is shown as what it adds to
the previous request of its series (the same ``kind``, else the same name without its number,
in the same directory; :func:`request_files`):

* the first request of a series is shown whole;
* a request whose messages start with all of the previous request's messages shows only the
  messages appended since, under a line naming that request and how many messages are the same,
  and leaves out (naming them) its other fields that equal the previous request's
  (``systemPrompt``, ``tools``, ...); the first appended message is not repeated either when it
  is the previous request's reply (the same role and content: shown with that request);
* any other request (a compaction replaced the history, a new session began) is shown whole,
  with the reason: the first message that differs, or fewer messages than before.

A file that is not a JSON object with a ``messages`` list (at the top or in ``request``) is
shown whole. What is shown is cut at :data:`REQUEST_LIMIT` characters; the file keeps it all.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.report.page_paths import shown_path

__all__ = [
    "FULL_LIMIT",
    "REQUEST_LIMIT",
    "VALUE_LIMIT",
    "RequestFile",
    "TimelineRow",
    "request_files",
    "timeline_rows",
]

VALUE_LIMIT = 80
FULL_LIMIT = 3000
#: A kept request or reply is shown up to this many characters (its file keeps it whole).
REQUEST_LIMIT = 32 * 1024
_NOT_FIELDS = frozenset({"seq", "t", "kind", "name", "phase"})


@dataclass
class TimelineRow:
    seq: int
    t: Any
    kind: str
    name: str
    fields: str
    css: str
    full: str | None = None
    request: str | None = None


def _value(value: Any) -> tuple[str, bool]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\n", "\\n")
    if isinstance(value, str) and (" " in text or not text):
        text = json.dumps(text, ensure_ascii=False)
    if len(text) > VALUE_LIMIT:
        return text[: VALUE_LIMIT - 1] + "…", True
    return text, False


def _cut(text: str, limit: int, where: str) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters in {shown_path(where)})"


def timeline_rows(records: list[dict[str, Any]]) -> list[TimelineRow]:
    rows: list[TimelineRow] = []
    for r in records:
        kind = str(r.get("kind", ""))
        name = str(r.get("name", "")) + (" end" if r.get("phase") == "end" else "")
        parts: list[str] = []
        cut = False
        for key, value in r.items():
            if key in _NOT_FIELDS:
                continue
            text, was_cut = _value(value)
            cut = cut or was_cut
            parts.append(f"{key}={text}")
        is_request = kind == "model" and r.get("name") == "request"
        css = kind
        if kind == "session" and r.get("name") in ("compaction_start", "compaction_end"):
            css += " compaction"
        if r.get("ok") is False or r.get("errorMessage") or kind == "fault":
            css += " bad"
        request = r.get("request") if is_request else None
        seq = r.get("seq")
        rows.append(
            TimelineRow(
                seq=seq if isinstance(seq, int) else len(rows),
                t=r.get("t", 0),
                kind=kind,
                name=name,
                fields=" ".join(parts),
                css=css,
                full=(
                    _cut(
                        json.dumps(r, indent=1, ensure_ascii=False),
                        FULL_LIMIT,
                        f"trace.jsonl, record seq {seq}",
                    )
                    if cut or is_request
                    else None
                ),
                request=(
                    _cut(json.dumps(request, indent=1, ensure_ascii=False), REQUEST_LIMIT, "trace.jsonl")
                    if isinstance(request, Mapping | list)
                    else None
                ),
            )
        )
    return rows


@dataclass
class RequestFile:
    name: str
    path: str
    size: int
    text: str
    #: What of the file is shown: whole (and why), or what it adds to the request it names.
    note: str | None = None
    #: The index (1-based, in the scenario's list) of the request this one extends.
    extends: int | None = None


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part]


@dataclass
class _Request:
    """A kept file read as a model request: its series and the object holding ``messages``."""

    series: tuple[str, str]
    name: str
    number: int
    document: dict[str, Any]
    holder: dict[str, Any]
    messages: list[Any]


def _as_request(name: str, document: Any, number: int) -> _Request | None:
    if not isinstance(document, dict):
        return None
    inner = document.get("request")
    holder: dict[str, Any] = inner if isinstance(inner, dict) else document
    messages = holder.get("messages")
    if not isinstance(messages, list):
        return None
    folder, _, base = name.rpartition("/")
    kind = document.get("kind")
    series = kind if isinstance(kind, str) else re.sub(r"[\d_.-]+$", "", base.rsplit(".", 1)[0])
    return _Request((folder, series), name, number, document, holder, messages)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _span(first: int, last: int) -> str:
    return f"message {first:,}" if first == last else f"messages {first:,}–{last:,}"


def _extension(request: _Request, previous: _Request) -> tuple[str, str | None]:
    """What ``request`` adds to ``previous``: the text shown and the note above it; the note is
    ``None`` when it does not extend it (then see :func:`_why_whole`)."""
    before, now = previous.messages, request.messages
    if not before or len(now) < len(before) or now[: len(before)] != before:
        return "", None
    same = [
        key
        for key, value in request.holder.items()
        if key not in ("messages", "kind", "index")
        and key in previous.holder
        and previous.holder[key] == value
    ]
    # The previous request's reply, when the conversation goes on from it: shown with it already.
    reply = previous.document.get("reply")
    replied = (
        len(now) > len(before)
        and isinstance(reply, dict)
        and isinstance(now[len(before)], dict)
        and now[len(before)].get("role") == reply.get("role")
        and now[len(before)].get("content") == reply.get("content")
    )
    start = len(before) + (2 if replied else 1)
    holder: dict[str, Any] = {}
    for key, value in request.holder.items():
        if key == "messages":
            if start <= len(now):
                holder[_span(start, len(now))] = now[start - 1 :]
        elif key not in same:
            holder[key] = value
    document = dict(request.document, request=holder) if request.holder is not request.document else holder
    shared = "message is" if len(before) == 1 else f"{len(before):,} messages are"
    note = f"The first {shared} the same as request {previous.name}'s (all of its messages)"
    if replied:
        note += f", and message {len(before) + 1:,} is that request's reply (its role and content)"
    if start <= len(now):
        note += f", not repeated; shown: what this request adds, {_span(start, len(now))} of {len(now):,}"
    elif replied:
        note += ": this request adds no other"
    else:
        note += ": this request adds none"
    if same:
        note += f". Its {', '.join(same)} {'is' if len(same) == 1 else 'are'} the same too, left out"
    return json.dumps(document, indent=1, ensure_ascii=False), note + "."


def _why_whole(request: _Request, previous: _Request) -> str:
    before, now = previous.messages, request.messages
    differs = next((i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b), None)
    if differs is not None:
        why = f"its message {differs + 1:,} differs from that request's"
    elif not before:
        why = "that request has no messages"
    else:
        why = f"it has {_plural(len(now), 'message')}, fewer than that request's {len(before):,}"
    return (
        f"Shown whole: it does not extend request {previous.name} (the previous {previous.series[1]} "
        f"request) by appending messages: {why}."
    )


def request_files(*directories: Path | None) -> list[RequestFile]:
    """Every file under the first ``<directory>/requests/`` there is (a run that kept its full
    model requests and replies), JSON pretty-printed, a request as what it adds to the
    previous one of its series (see the module), each cut at :data:`REQUEST_LIMIT` characters."""
    folder = next((d / "requests" for d in directories if d is not None and (d / "requests").is_dir()), None)
    if folder is None:
        return []
    files = sorted(
        (p for p in folder.rglob("*") if p.is_file()), key=lambda p: _natural(str(p.relative_to(folder)))
    )
    out: list[RequestFile] = []
    last: dict[tuple[str, str], _Request] = {}
    for path in files:
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        text = data.decode("utf-8", errors="replace")
        note: str | None = None
        extends: int | None = None
        if path.suffix == ".json":
            with contextlib.suppress(json.JSONDecodeError, RecursionError):
                document = json.loads(text)
                text = json.dumps(document, indent=1, ensure_ascii=False)
                request = _as_request(name, document, len(out) + 1)
                if request is not None:
                    previous = last.get(request.series)
                    last[request.series] = request
                    if previous is None:
                        note = f"The first {request.series[1]} request: shown whole."
                    else:
                        shown, note = _extension(request, previous)
                        if note is None:
                            note = _why_whole(request, previous)
                        else:
                            text, extends = shown, previous.number
        out.append(
            RequestFile(name, str(path), len(data), _cut(text, REQUEST_LIMIT, str(path)), note, extends)
        )
    return out
