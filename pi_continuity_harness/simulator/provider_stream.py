"""pi-ai's ``openai-completions`` stream reading: the model's chunks as pi-ai's message events.

The response half of :mod:`.provider` (pi-ai 1.6, ``dist/api/openai-completions.js``):
:class:`StreamReader` turns the chunks the model streams back (the very chunks the fake server
sends, :func:`~pi_continuity_harness.scenario.chat_wire.chat_stream`) into pi-ai's assistant
message events and final message (``openai-completions.js:152-500``): ``start`` once the
headers are in, ``thinking_*``/``text_*``/``toolcall_*`` per delta, the ``*_end`` events when
the stream ends, and the message with ``responseId``, ``usage`` (``parseChunkUsage``:
``reasoning`` and ``cost.totalFromProvider`` included), ``rawStopReason`` and ``durationMs``
in pi-ai's key order; or the failure: ``"Request was aborted"`` when the request is aborted
mid-stream (what was streamed stays in the message), ``"Stream ended without finish_reason"``
when the connection drops, the SSE error's message.

A request aborted before its headers never reaches :class:`StreamReader`: pi-ai reports
``"Request aborted"`` with no ``responseId`` (``utils/provider-retry.js:47, 84-85``); an HTTP
error is ``"<status>: <JSON of the error object>"``.

:meth:`StreamReader.feed` runs once per streamed chunk, the hot path of a run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.simulator.json_copy import js_json_number, js_loads, js_ordered
from pi_continuity_harness.simulator.messages import Message, zero_usage

__all__ = [
    "REASONING_FIELDS",
    "REASONING_KEYS",
    "StreamReader",
    "assistant_failure",
    "partial_json_object",
    "setup_failure",
]

#: pi-ai's fields that may carry thinking on an openai-completions assistant message.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
REASONING_KEYS = frozenset(REASONING_FIELDS)


# ============================================================================ response
def _chunk_usage(raw: dict[str, Any]) -> dict[str, Any]:
    """``parseChunkUsage`` with the fake models' zero prices (``calculateCost``)."""
    prompt = int(raw.get("prompt_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cache_read = int(details.get("cached_tokens") or 0)
    cache_write = int(details.get("cache_write_tokens") or 0)
    usage_input = max(0, prompt - cache_read - cache_write)
    output = int(raw.get("completion_tokens") or 0)
    reasoning = int((raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    return {
        "input": usage_input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "reasoning": reasoning,
        "totalTokens": usage_input + output + cache_read + cache_write,
        "cost": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 0,
            "totalFromProvider": False,
        },
    }


_STOP = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "function_call": "toolUse",
    "tool_calls": "toolUse",
}


def assistant_failure(
    model: Model, error: str, timestamp: int, stop_reason: str, duration_ms: int | None = None
) -> Message:
    """A reply that never streamed: pi-ai's output object as it was when the request failed."""
    message: Message = {
        "role": "assistant",
        "content": [],
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": zero_usage(),
        "stopReason": stop_reason,
        "timestamp": timestamp,
        "errorMessage": error,
    }
    if duration_ms is not None:
        message["durationMs"] = duration_ms
    return message


def setup_failure(model: Model, error: str, timestamp: int, stop_reason: str) -> Message:
    """A reply whose stream failed while it was set up (auth, the provider's ``streamSimple``
    throwing before it streamed): ``createSetupErrorMessage`` (api/lazy.js:2-21), whose
    ``errorMessage`` comes before the ``timestamp``, then ``durationMs`` (the event stream's,
    utils/event-stream.js:115-117; 0 in virtual time)."""
    message = assistant_failure(model, error, timestamp, stop_reason, 0)
    message["timestamp"] = message.pop("timestamp")
    message["durationMs"] = message.pop("durationMs")
    return message


@dataclass
class _ToolState:
    block: dict[str, Any]
    text: str = ""


@dataclass
class StreamReader:
    """pi-ai's handling of one streamed chat completion (``openai-completions.js:152-500``).

    :meth:`start` is the ``start`` event (the headers are in); :meth:`feed` reads one chunk and
    returns the events it caused; :meth:`end` reads the end of the stream (``[DONE]``, or a
    dropped connection) and :meth:`fail` an abort or an SSE error, each returning the last
    events. Every event is pi-ai's ``AssistantMessageEvent`` without ``partial``; the partial
    message is :attr:`output`.
    """

    model: Model
    timestamp: int
    output: dict[str, Any] = field(init=False)
    _text: dict[str, Any] | None = field(default=None, init=False)
    _thinking: dict[str, Any] | None = field(default=None, init=False)
    _tools: dict[int, _ToolState] = field(default_factory=dict, init=False)
    _finished: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.output = {
            "role": "assistant",
            "content": [],
            "api": self.model.api,
            "provider": self.model.provider,
            "model": self.model.id,
            "usage": zero_usage(),
            "stopReason": "pending",
            "timestamp": self.timestamp,
        }

    @property
    def blocks(self) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = self.output["content"]
        return content

    def _index(self, block: dict[str, Any]) -> int:
        """The position of ``block`` in the message's content. Every block is a dict this reader
        made and appended once (the content list is appended to here only), so when it is the
        last one that is its position: the block a delta continues almost always is (the text
        after the thinking, the last tool call), and the scan is left for the others (one per
        delta of every reply, issue 16)."""
        blocks: list[dict[str, Any]] = self.output["content"]  # (:attr:`blocks`, without its call)
        if blocks and blocks[-1] is block:
            return len(blocks) - 1
        return next(i for i, b in enumerate(blocks) if b is block)

    def start(self) -> dict[str, Any]:
        return {"type": "start"}

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        if "error" in chunk and "choices" not in chunk:
            raise ValueError("an SSE error object is read with fail()")
        events: list[dict[str, Any]] = []
        output = self.output
        if not output.get("responseId") and chunk.get("id"):
            output["responseId"] = chunk["id"]
        usage = chunk.get("usage")
        if usage:
            output["usage"] = _chunk_usage(usage)
        choices = chunk.get("choices")
        if not choices:
            return events
        choice = choices[0]
        finish = choice.get("finish_reason")
        if finish:
            output["rawStopReason"] = finish
            output["stopReason"] = _STOP.get(finish, "error")
            self._finished = True
        delta = choice.get("delta") or {}
        if not REASONING_KEYS.isdisjoint(delta):  # (most deltas have no reasoning field)
            self._thinking_delta(delta, events)
        text = delta.get("content")
        if isinstance(text, str) and text:
            block = self._text
            if block is None:
                block = self._text = {"type": "text", "text": ""}
                self.blocks.append(block)
                events.append({"type": "text_start", "contentIndex": self._index(block)})
            block["text"] += text
            events.append({"type": "text_delta", "contentIndex": self._index(block), "delta": text})
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                events.extend(self._tool_delta(call))
        return events

    def _thinking_delta(self, delta: dict[str, Any], events: list[dict[str, Any]]) -> None:
        """The first reasoning field of ``delta`` with text, added to the thinking block."""
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if isinstance(value, str) and value:
                if self._thinking is None:
                    self._thinking = {"type": "thinking", "thinking": "", "thinkingSignature": name}
                    self.blocks.append(self._thinking)
                    events.append({"type": "thinking_start", "contentIndex": self._index(self._thinking)})
                self._thinking["thinking"] += value
                events.append(
                    {"type": "thinking_delta", "contentIndex": self._index(self._thinking), "delta": value}
                )
                return

    def _tool_delta(self, call: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        index = int(call.get("index", 0))
        fn = call.get("function") or {}
        state = self._tools.get(index)
        if state is None:
            block: dict[str, Any] = {
                "type": "toolCall",
                "id": call.get("id") or "",
                "name": fn.get("name") or "",
                "arguments": {},
            }
            state = _ToolState(block)
            self._tools[index] = state
            self.blocks.append(block)
            events.append(
                {
                    "type": "toolcall_start",
                    "contentIndex": self._index(block),
                    "id": block["id"],
                    "toolName": block["name"],
                }
            )
        block = state.block
        if not block["id"] and call.get("id"):
            block["id"] = call["id"]
        if not block["name"] and fn.get("name"):
            block["name"] = fn["name"]
        delta = ""
        if fn.get("arguments"):
            delta = str(fn["arguments"])
            state.text += delta
            block["arguments"] = partial_json_object(state.text)
        events.append({"type": "toolcall_delta", "contentIndex": self._index(block), "delta": delta})
        return events

    def _finish_blocks(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for position, block in enumerate(self.blocks):
            if block.get("type") == "text":
                events.append({"type": "text_end", "contentIndex": position, "content": block["text"]})
            elif block.get("type") == "thinking":
                events.append(
                    {"type": "thinking_end", "contentIndex": position, "content": block["thinking"]}
                )
            elif block.get("type") == "toolCall":
                state = next(s for s in self._tools.values() if s.block is block)
                block["arguments"] = _final_arguments(state.text)
                events.append({"type": "toolcall_end", "contentIndex": position, "toolCall": block})
        return events

    def end(self, duration_ms: int) -> list[dict[str, Any]]:
        """The stream ended (``[DONE]`` or a dropped connection): the blocks finish, then the
        message is done, or fails without a finish reason."""
        events = self._finish_blocks()
        if not self._finished or self.output["stopReason"] == "pending":
            return [*events, self.fail("Stream ended without finish_reason", duration_ms)]
        if self.output["stopReason"] == "error":
            return [
                *events,
                self.fail(f"Provider finish_reason: {self.output.get('rawStopReason')}", duration_ms),
            ]
        self.output["durationMs"] = duration_ms
        return [*events, {"type": "done", "reason": self.output["stopReason"]}]

    def abort(self, duration_ms: int) -> list[dict[str, Any]]:
        """The request was aborted mid-stream: the SDK's stream ends, the blocks finish, then
        pi-ai throws ``"Request was aborted"`` (``openai-completions.js:454-466``); what was
        streamed stays in the message, with ``stopReason: "aborted"``."""
        return [*self._finish_blocks(), self.fail("Request was aborted", duration_ms, aborted=True)]

    def fail(self, error: str, duration_ms: int, *, aborted: bool = False) -> dict[str, Any]:
        """The stream failed: an error thrown while it was read (an SSE error object: no block
        finishes), or after it (see :meth:`end`, :meth:`abort`). What was streamed stays in the
        message (``openai-completions.js:480-494``)."""
        self.output["stopReason"] = "aborted" if aborted else "error"
        self.output["errorMessage"] = error
        self.output["durationMs"] = duration_ms
        return {"type": "error", "reason": self.output["stopReason"]}


def _final_arguments(text: str) -> dict[str, Any]:
    """``parseToolCallArguments`` of the whole arguments text (``utils/json-parse.js:91-107``)."""
    if not text.strip():
        return {}
    try:
        # Numbers as JavaScript holds them: ``"count": 2.0`` is the number 2, written ``2`` in
        # every later request and entry (differential test_differential_tool_arguments.py); keys
        # in its order (``{"b": 1, "7": 2}`` is ``{"7": 2, "b": 1}``, :func:`.json_copy.js_ordered`).
        value = js_loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ============================================================================ partial JSON
#: What ends a run of plain characters in a JSON string: its closing quote or an escape.
_QUOTE_OR_ESCAPE = re.compile(r'["\\]')
#: JSON's one-character escapes.
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Partial:
    """The value of a JSON prefix, by the rules of pi-ai's ``StreamingJsonParser``
    (``utils/streaming-json.js``): an unterminated string shows what was read (an unfinished
    escape held back), an unterminated container its members so far, a member whose value has
    not started is left out, an unterminated literal or number shows its value once it is a
    prefix of ``true``/``false``/``null`` or a number."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\n\r":
            self.pos += 1

    def value(self) -> tuple[bool, Any]:
        """(started, value); ``started`` is False when the value did not begin."""
        self.skip()
        if self.pos >= len(self.text):
            return False, None
        char = self.text[self.pos]
        if char == "{":
            return True, self.obj()
        if char == "[":
            return True, self.arr()
        if char == '"':
            return True, self.string()[0]
        return self.scalar()

    def string(self) -> tuple[str, bool]:
        """The string's characters and whether it was terminated.

        The characters between two quotes or backslashes are taken as one slice (found by
        :data:`_QUOTE_OR_ESCAPE`): read one by one, a tool call's arguments (a dossier the
        model writes) were parsed again at every streamed delta, character by character, 1 %
        of a blitz exploration (issue 16)."""
        self.pos += 1
        out: list[str] = []
        escapes = _ESCAPES
        while self.pos < len(self.text):
            found = _QUOTE_OR_ESCAPE.search(self.text, self.pos)
            if found is None:
                out.append(self.text[self.pos :])
                self.pos = len(self.text)
                break
            if found.start() > self.pos:
                out.append(self.text[self.pos : found.start()])
                self.pos = found.start()
            char = self.text[self.pos]
            if char == '"':
                self.pos += 1
                return "".join(out), True
            # A backslash.
            if self.pos + 1 >= len(self.text):
                self.pos = len(self.text)
                break
            nxt = self.text[self.pos + 1]
            if nxt == "u":
                digits = self.text[self.pos + 2 : self.pos + 6]
                if len(digits) < 4:
                    self.pos = len(self.text)
                    break
                out.append(chr(int(digits, 16)))
                self.pos += 6
                continue
            out.append(escapes.get(nxt, "\\" + nxt))
            self.pos += 2
        return "".join(out), False

    def scalar(self) -> tuple[bool, Any]:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ' \t\n\r,:{}[]"':
            self.pos += 1
        token = self.text[start : self.pos]
        complete = self.pos < len(self.text)
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if token == literal or (not complete and literal.startswith(token)):
                return True, value
        try:
            float(token)
        except ValueError:
            return False, None
        return True, js_json_number(token)  # a JavaScript number: ``2.0`` is 2

    def obj(self) -> dict[str, Any]:
        """An object so far, its keys in JavaScript's order (:func:`.json_copy.js_ordered`)."""
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            self.skip()
            if self.pos >= len(self.text):
                return js_ordered(out)
            char = self.text[self.pos]
            if char == "}":
                self.pos += 1
                return js_ordered(out)
            if char == ",":
                self.pos += 1
                continue
            if char != '"':
                self.pos += 1
                continue
            key, closed = self.string()
            if not closed:
                return js_ordered(out)
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == ":":
                self.pos += 1
            started, value = self.value()
            if not started:
                return js_ordered(out)
            out[key] = value

    def arr(self) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            self.skip()
            if self.pos >= len(self.text):
                return out
            char = self.text[self.pos]
            if char == "]":
                self.pos += 1
                return out
            if char == ",":
                self.pos += 1
                continue
            started, value = self.value()
            if not started:
                return out
            out.append(value)


def partial_json_object(text: str) -> dict[str, Any]:
    """What pi-ai shows as a tool call's arguments while they stream: the value of the prefix
    when it is an object, else ``{}`` (``ToolCallArgumentsStream``)."""
    started, value = _Partial(text).value()
    return value if started and isinstance(value, dict) else {}
