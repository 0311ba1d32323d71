"""A readable timeline of a trace: one line per record.

::

    t=12ms     event    session_before_compact reason=threshold willRetry=false preparation={...}
    t=12ms     session  compaction_end reason=threshold aborted=false willRetry=false

The columns are virtual time, the record kind and its name, then every other field as
``key=value`` (compact JSON, long values shortened). Operation ends read ``<op> end``. The
text depends only on the records, so the timeline of a deterministic trace is
deterministic too, and it stays plain text (no colour) so it can be diffed.

With ``exchanges`` (the run's ``requests/`` files, by kind and index) every model request is
followed by the full text the model was sent (the system prompt when it changed, each message
with its role, the tools and ``max_tokens``) and every reply by the full reply::

    t=0ms      model    request caller=agent index=0 ... file=requests/agent-0000.json
               | system: You are a coding assistant ...
               | [user] hello one: describe the schema
               | tools: read, bash, edit, write; maxTokens: 14395
    t=1ms      model    reply caller=agent index=0 stopReason=stop ...
               | [assistant] answer one: the schema has three tables. ...
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
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


def render_timeline(
    records: Iterable[dict[str, Any]], exchanges: Mapping[tuple[str, int], dict[str, Any]] | None = None
) -> str:
    """The whole timeline, one line per record, ending with a newline (empty for no records);
    with ``exchanges``, model requests and replies in full below their records."""
    lines: list[str] = []
    system: list[str | None] = [None]
    for record in records:
        lines.append(render_record(record))
        if exchanges is None or record.get("kind") != "model":
            continue
        exchange = exchanges.get((str(record.get("caller")), int(record.get("index", -1))))
        if exchange is None:
            continue
        if record.get("name") == "request":
            lines.extend(_request_lines(exchange.get("request") or {}, system))
        elif record.get("name") == "reply" and exchange.get("reply"):
            lines.extend(_message_lines(exchange["reply"]))
    return "".join(line + "\n" for line in lines)


_INDENT = " " * 11 + "| "


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            parts.append(f"(thinking) {block.get('thinking', '')}")
        elif kind == "toolCall":
            arguments = json.dumps(block.get("arguments", {}), ensure_ascii=False, sort_keys=True)
            parts.append(f"(tool call {block.get('name')} {block.get('id')}) {arguments}")
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def _block(label: str, text: str) -> list[str]:
    body = text.splitlines() or [""]
    # No trailing blanks (a blank line of the text is the bare margin), so the output diffs cleanly.
    return [(_INDENT + label + body[0]).rstrip(), *(f"{_INDENT}  {line}".rstrip() for line in body[1:])]


def _request_lines(request: dict[str, Any], system: list[str | None]) -> list[str]:
    out: list[str] = []
    prompt = request.get("systemPrompt")
    if prompt and prompt != system[0]:
        out.extend(_block("system: ", str(prompt)))
    elif prompt:
        out.append(_INDENT + "system: (as in the previous request)")
    system[0] = prompt
    for message in request.get("messages") or []:
        out.extend(_message_lines(message))
    tools = ", ".join(request.get("tools") or []) or "none"
    out.append(f"{_INDENT}tools: {tools}; maxTokens: {request.get('maxTokens')}")
    return out


def _message_lines(message: dict[str, Any]) -> list[str]:
    role = str(message.get("role"))
    extra = []
    if message.get("stopReason"):
        extra.append(f"stopReason {message['stopReason']}")
    if message.get("errorMessage"):
        extra.append(f"error {message['errorMessage']!r}")
    usage = message.get("usage")
    if isinstance(usage, dict) and usage.get("totalTokens"):
        extra.append(f"totalTokens {usage['totalTokens']}")
    label = f"[{role}{' ' + ', '.join(extra) if extra else ''}] "
    return _block(label, _text(message.get("content")))
