"""A scenario's timeline (its trace records) and the full model requests a run kept.

Each trace record becomes one row: ``seq``, virtual time, kind, name and the other fields,
each cut at :data:`VALUE_LIMIT` characters. A row with a cut field, and every model request,
expands to the whole record (cut at :data:`FULL_LIMIT`; the trace file keeps it whole).

Full requests: a trace keeps only a summary of each model request. When a run also kept the
full text of every request and reply (a ``request`` field on the record, or files under the
scenario's ``requests/`` directory: the reproduction issue's), they are shown too, each
expandable, whatever the files' names: sorted with their numbers compared as numbers.
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


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part]


def request_files(*directories: Path | None) -> list[RequestFile]:
    """Every file under the first ``<directory>/requests/`` there is (a run that kept its full
    model requests and replies), JSON pretty-printed, each cut at :data:`REQUEST_LIMIT`
    characters."""
    folder = next((d / "requests" for d in directories if d is not None and (d / "requests").is_dir()), None)
    if folder is None:
        return []
    files = sorted(
        (p for p in folder.rglob("*") if p.is_file()), key=lambda p: _natural(str(p.relative_to(folder)))
    )
    out: list[RequestFile] = []
    for path in files:
        data = path.read_bytes()
        text = data.decode("utf-8", errors="replace")
        if path.suffix == ".json":
            with contextlib.suppress(json.JSONDecodeError, RecursionError):
                text = json.dumps(json.loads(text), indent=1, ensure_ascii=False)
        out.append(
            RequestFile(
                str(path.relative_to(folder)), str(path), len(data), _cut(text, REQUEST_LIMIT, str(path))
            )
        )
    return out
