"""A readable timeline of a trace: one line per record.

::

    t=12ms     event    session_before_compact reason=threshold willRetry=false preparation={...}
    t=12ms     session  compaction_end reason=threshold aborted=false willRetry=false

The columns are virtual time, the record kind and its name, then every other field as
``key=value`` (compact JSON, long values shortened). Operation ends read ``<op> end``. The
text depends only on the records, so the timeline of a deterministic trace is
deterministic too, and it stays plain text (no colour) so it can be diffed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["render_record", "render_timeline"]

_SKIP = frozenset({"seq", "t", "kind", "name", "phase"})
_VALUE_LIMIT = 80


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("\n", "\\n")
    if isinstance(value, str) and (" " in text or not text):
        text = json.dumps(text, ensure_ascii=False)
    if len(text) > _VALUE_LIMIT:
        text = text[: _VALUE_LIMIT - 1] + "…"
    return text


def render_record(record: dict[str, Any]) -> str:
    """One timeline line for one trace record."""
    time = f"t={record.get('t', 0)}ms"
    name = str(record.get("name", ""))
    if record.get("phase") == "end":
        name += " end"
    fields = " ".join(f"{k}={_value(v)}" for k, v in record.items() if k not in _SKIP)
    line = f"{time:<10} {record.get('kind', ''):<8} {name}"
    return f"{line} {fields}" if fields else line


def render_timeline(records: Iterable[dict[str, Any]]) -> str:
    """The whole timeline, one line per record, ending with a newline (empty for no records)."""
    return "".join(render_record(r) + "\n" for r in records)
