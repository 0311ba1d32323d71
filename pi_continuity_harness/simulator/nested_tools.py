"""The record of the tool calls a tool makes through ``ctx.execute_tool`` (Pi 1.6's
``NestedCallRecorder`` and the scopes of ``NestedToolCallRunner``, core/nested-tool-calls.js).

Pi gives a nested call the id ``<calling id>/<n>`` (n counts from 1 per calling call,
nested-tool-calls.js:97-108) and keeps, per model-issued call, one record of every call made under
it (nested ones included: a nested call's scope shares its caller's recorder, :127-131). The
session takes the record when the model-issued call's result message starts and puts it on that
message as ``nestedCalls`` (agent-session.js:773-783); nothing else of a nested call is persisted.
The events are the session's business (``AgentSession.execute_nested_tool``); this module only
keeps the ids and the record. Durations are the simulator's virtual milliseconds (Pi's are wall
time: ``durationMs`` is masked in every comparison).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NESTED_CALL_LIMITS", "NestedCallRecorder", "NestedCalls", "nested_error_text"]

#: ``NESTED_CALL_LIMITS`` (nested-tool-calls.js:16-21).
NESTED_CALL_LIMITS = {
    "maxCalls": 256,
    "maxArgumentBytesPerCall": 8 * 1024,
    "maxArgumentBytesTotal": 32 * 1024,
    "maxErrorChars": 500,
}


def _js_json(value: Any) -> str:
    """``JSON.stringify`` of plain JSON data (no spaces, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def nested_error_text(result: dict[str, Any]) -> str:
    """``textOf`` (nested-tool-calls.js:77-82): the result's text blocks joined by newlines."""
    blocks = result.get("content") or []
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


@dataclass
class NestedCallRecorder:
    """``NestedCallRecorder`` (nested-tool-calls.js:27-75) for one model-issued call."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    started_at: dict[int, int] = field(default_factory=dict)
    complete: bool = True
    argument_bytes: int = 0

    def start(self, tool_call: dict[str, Any], now: int) -> dict[str, Any] | None:
        """``start`` (:35-54): ``None`` when the call is dropped (over ``maxCalls``)."""
        if len(self.calls) >= NESTED_CALL_LIMITS["maxCalls"]:
            self.complete = False
            return None
        record: dict[str, Any] = {"id": tool_call["id"], "name": tool_call["name"], "status": "unfinished"}
        text = _js_json(tool_call.get("arguments") or {})
        size = len(text.encode("utf-8"))
        if (
            size > NESTED_CALL_LIMITS["maxArgumentBytesPerCall"]
            or self.argument_bytes + size > NESTED_CALL_LIMITS["maxArgumentBytesTotal"]
        ):
            record["argumentsBytes"] = size
            self.complete = False
        else:
            record["arguments"] = json.loads(text)
            self.argument_bytes += size
        self.calls.append(record)
        self.started_at[id(record)] = now
        return record

    def finish(self, record: dict[str, Any] | None, is_error: bool, error_text: str, now: int) -> None:
        """``finish`` (:55-63): the status, the duration, the error text (500 characters at most)."""
        if record is None:
            return
        record["status"] = "error" if is_error else "ok"
        record["durationMs"] = max(0, now - self.started_at.pop(id(record), now))
        if is_error and error_text:
            record["error"] = error_text[: NESTED_CALL_LIMITS["maxErrorChars"]]

    def snapshot(self) -> dict[str, Any] | None:
        """``snapshot`` (:70-75): ``None`` when no call was made."""
        if not self.calls and self.complete:
            return None
        calls = [dict(call) for call in self.calls]
        return {"calls": calls, "complete": self.complete and all(c["status"] != "unfinished" for c in calls)}


@dataclass
class _Scope:
    recorder: NestedCallRecorder
    next_id: int = 1


class NestedCalls:
    """The scopes of ``NestedToolCallRunner`` (nested-tool-calls.js:83-175), by calling call id."""

    def __init__(self) -> None:
        self._scopes: dict[str, _Scope] = {}

    def begin(self, caller_id: str, name: str, args: Any, now: int) -> tuple[dict[str, Any], Any]:
        """A new nested call of ``caller_id`` (:97-131): the call, and its record handle. The
        call's own scope (for the calls it makes) shares the caller's recorder."""
        scope = self._scopes.get(caller_id)
        if scope is None:
            scope = self._scopes[caller_id] = _Scope(NestedCallRecorder())
        call = {
            "type": "toolCall",
            "id": f"{caller_id}/{scope.next_id}",
            "name": name,
            "arguments": args if args is not None else {},
        }
        scope.next_id += 1
        record = scope.recorder.start(call, now)
        self._scopes[call["id"]] = _Scope(scope.recorder)
        return call, (scope.recorder, record)

    def end(
        self, call: dict[str, Any], handle: Any, result: dict[str, Any], is_error: bool, now: int
    ) -> None:
        """The call is done (:143-150): its scope goes, the record notes the outcome."""
        self._scopes.pop(call["id"], None)
        recorder, record = handle
        # (Pi sums the nested results' ``usage`` onto the record too, :146-147; no tool the
        # simulator runs returns one.)
        recorder.finish(record, is_error, nested_error_text(result), now)

    def take_record(self, tool_call_id: str) -> dict[str, Any] | None:
        """``takeRecord`` (:162-169): the record of ``tool_call_id``'s nested calls, removed."""
        scope = self._scopes.pop(tool_call_id, None)
        return scope.recorder.snapshot() if scope is not None else None

    def clear(self) -> None:
        self._scopes.clear()
