"""Agent messages in pi-ai's shapes, and Pi's chars/4 token estimate.

Messages stay plain dicts with Pi's camelCase keys so session files and bridge traffic are
byte-compatible with real Pi. Ports of ``compaction.js`` (``estimateTokens``),
``messages.js`` (``convertToLlm``, with the compaction-summary wrapper of
``scenario.transcript``) and ``compaction/utils.js`` (``serializeConversation``).
"""

from __future__ import annotations

import functools
import json
import marshal
import math
from collections.abc import Iterable
from typing import Any, Final

from pi_continuity_harness.scenario.identity_memo import IdentityMemo, identity
from pi_continuity_harness.scenario.transcript import (
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    content_text,
)

__all__ = [
    "UNDEFINED",
    "JsTypeError",
    "LlmConversion",
    "Message",
    "RequestEstimate",
    "absent_if_none",
    "bash_execution_to_text",
    "calculate_context_tokens",
    "compaction_summary_message",
    "convert_to_llm",
    "current_system_message",
    "current_tools",
    "custom_message",
    "estimate_request_context_tokens",
    "estimate_tokens",
    "is_cut_point_message",
    "is_turn_start_message",
    "js_length",
    "serialize_conversation",
    "system_message_text",
    "user_message",
    "zero_usage",
]

Message = dict[str, Any]


class _Undefined:
    """JavaScript's ``undefined`` where Pi holds a value that need not be a string (an ``input``
    transform's text). A message never holds it: a text block without a text is one without
    the key, as ``JSON.stringify`` writes it and as the session file and the bridge have it."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()


def absent_if_none(value: Any) -> Any:
    """``value``, or :data:`UNDEFINED` for ``None``: for the simulator's own callers, whose
    ``None`` means "not given" where the session manager writes ``None`` as JSON's ``null``
    (as Pi writes a field an extension's draft gives as ``null``)."""
    return UNDEFINED if value is None else value


class JsTypeError(Exception):
    """A ``TypeError`` V8 throws where Pi reads a property of a value that is not what it
    expects; ``str()`` is V8's message (observed on real Pi 1.6.0)."""


def js_length(value: Any) -> int | None:
    """``value.length`` in JavaScript: a string's or an array's length, ``None`` (undefined)
    for a number, a boolean or an object; V8's ``TypeError`` for ``undefined`` (a missing
    key) and ``null``. (A string's length counts UTF-16 units in JavaScript; the simulator
    counts code points, as everywhere else.)"""
    if isinstance(value, str | list):
        return len(value)
    if value is UNDEFINED or value is None:
        kind = "null" if value is None else "undefined"
        raise JsTypeError(f"Cannot read properties of {kind} (reading 'length')")
    return None


def _js_truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value (an empty array or object is true)."""
    if value is UNDEFINED or value is None:
        return False
    if isinstance(value, dict | list):
        return True
    return bool(value) and not (isinstance(value, float) and math.isnan(value))


def _js_ceil(value: float) -> float:
    """``Math.ceil``: ``NaN`` stays ``NaN``."""
    return value if math.isnan(value) else math.ceil(value)


_ESTIMATED_IMAGE_CHARS = 4800
_TOOL_RESULT_MAX_CHARS = 2000


def system_message_text(message: Message) -> str:
    """pi-ai ``getSystemMessageText``: the content, then each section, joined by blank lines."""
    parts = [content_text(message.get("content"), "\n")]
    parts.extend(text for text in (message.get("sections") or {}).values() if text is not None)
    return "\n\n".join(part for part in parts if part)


def current_tools(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """pi-ai ``getCurrentTools``: every system message's removals, then additions, in order (a
    redefined tool keeps its first position, as a JavaScript ``Map`` does)."""
    tools: dict[str, dict[str, Any]] = {}
    for message in messages:
        if message.get("role") != "system":
            continue
        for removed in message.get("toolsRemoved") or []:
            tools.pop(str(removed.get("name") if isinstance(removed, dict) else removed), None)
        for tool in message.get("toolsAdded") or []:
            tools[str(tool.get("name"))] = tool
    return list(tools.values())


def current_system_message(messages: list[Message]) -> Message | None:
    """pi-ai ``getCurrentSystemMessage``: a transcript's system messages folded into one (their
    texts, the sections with later ones winning and ``null`` deleting, the current tools, the
    first timestamp); None when there is no system message and no tool. The request's leading
    system message (``collapseSystemMessages``) and a compaction entry's ``systemMessage``
    (session-manager.js:903-916) are both this."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp: Any = None
    seen = False
    for message in messages:
        if message.get("role") != "system":
            continue
        if not seen:
            timestamp, seen = message.get("timestamp"), True
        text = content_text(message.get("content"), "\n")
        if text:
            content.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = current_tools(messages)
    if not seen and not tools:
        return None
    head: Message = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        head["sections"] = sections
    if tools:
        head["toolsAdded"] = tools
    head["timestamp"] = timestamp if timestamp is not None else 0
    return head


def zero_usage() -> dict[str, Any]:
    """pi-ai's empty ``usage`` (a reply that reported none: errors, aborts, run failures)."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def calculate_context_tokens(usage: dict[str, Any] | None) -> int:
    """``calculateContextTokens`` (the coding agent's and pi-ai's): ``totalTokens`` or the sum of the parts."""
    if not usage:
        return 0
    total = usage.get("totalTokens") or 0
    if total:
        return int(total)
    return int(
        (usage.get("input") or 0)
        + (usage.get("output") or 0)
        + (usage.get("cacheRead") or 0)
        + (usage.get("cacheWrite") or 0)
    )


def user_message(text: Any, timestamp: int) -> Message:
    """A user message with one text block (``_prepareRun``, agent-session.js:1571-1581;
    ``_queueSteer``/``_queueFollowUp``, :1888-1914). ``text`` is a string, or what an
    ``input`` transform without a string text left (``currentText = result.text``,
    runner.js:1232) on a prompt that does not expand templates (``sendUserMessage``):
    :data:`UNDEFINED` makes a block without ``text`` (``JSON.stringify`` drops the key, so
    the session file and every event have ``{"type": "text"}``), ``None`` and a number stay."""
    block: dict[str, Any] = {"type": "text"} if text is UNDEFINED else {"type": "text", "text": text}
    return {"role": "user", "content": [block], "timestamp": timestamp}


def custom_message(
    custom_type: str | _Undefined, content: Any, display: bool | _Undefined, details: Any, timestamp: int
) -> Message:
    """``createCustomMessage`` (messages.js:57-66) of a session entry; an entry without
    ``customType`` or ``display`` (a boundary draft's) makes a message without the key, as
    JavaScript's ``undefined`` is written; ``details`` :data:`UNDEFINED` (an entry without the
    key) is no key, ``None`` (an entry's ``null``) is ``null``."""
    message: Message = {"role": "custom"}
    if custom_type is not UNDEFINED:
        message["customType"] = custom_type
    message["content"] = content
    if display is not UNDEFINED:
        message["display"] = display
    if details is not UNDEFINED:
        message["details"] = details
    message["timestamp"] = timestamp
    return message


def compaction_summary_message(summary: str, tokens_before: int, timestamp: int) -> Message:
    return {
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": tokens_before,
        "timestamp": timestamp,
    }


def _content_chars(content: Any) -> float:
    """``estimateTextAndImageContentChars`` (compaction.js:182-196): a text block counts when
    its text is truthy (``block.text && ...``), so a missing or ``null`` text counts nothing;
    a truthy text without a ``length`` (a number) makes the count ``NaN``."""
    if isinstance(content, str):
        return len(content)
    chars: float = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text = block.get("text", UNDEFINED)
                if _js_truthy(text):
                    length = js_length(text)
                    chars += math.nan if length is None else length
            elif block.get("type") == "image":
                chars += _ESTIMATED_IMAGE_CHARS
    return chars


def _js_json_length(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


#: ``_js_json_length`` of system messages' tool lists, by the list's identity, else by its
#: ``marshal`` bytes (equal bytes are equal data of equal types, hence equal JSON; a fifth of
#: ``json.dumps``'s time). A transcript's system message declares the four built-in tools
#: (about 5,000 characters of JSON), and every request's estimate and every compaction check
#: encoded them again, also after each restart, which loads the session's messages as new
#: objects: 3 % of an exploration (issue 16). A tool list is never changed once it is on a
#: message (``tool_declarations._with_changes`` makes new lists).
_TOOL_JSON_LENGTHS: IdentityMemo[int] = IdentityMemo(limit=256)
_TOOL_JSON_LENGTHS_BY_BYTES: dict[bytes, int] = {}
_TOOL_JSON_LENGTHS_MAX = 256


def _tools_json_length(tools: Any) -> int:
    return _TOOL_JSON_LENGTHS.get(tools, functools.partial(_tools_json_length_by_bytes, tools))


def _tools_json_length_by_bytes(tools: Any) -> int:
    try:
        key: bytes | None = marshal.dumps(tools)
    except ValueError:  # not plain data
        key = None
    length = _TOOL_JSON_LENGTHS_BY_BYTES.get(key) if key is not None else None
    if length is None:
        length = _js_json_length(tools)
        if key is not None:
            if len(_TOOL_JSON_LENGTHS_BY_BYTES) >= _TOOL_JSON_LENGTHS_MAX:
                del _TOOL_JSON_LENGTHS_BY_BYTES[next(iter(_TOOL_JSON_LENGTHS_BY_BYTES))]
            _TOOL_JSON_LENGTHS_BY_BYTES[key] = length
    return length


def estimate_tokens(message: Message) -> float:
    """``estimateTokens``: chars/4 rounded up, per role (compaction.js:199). ``NaN`` for a user
    message whose text is a number (:func:`_content_chars`), as in JavaScript."""
    role = message.get("role")
    chars: float = 0
    if role == "system":
        chars = _content_chars(message.get("content"))
        sections = message.get("sections") or {}
        for section in sections.values():
            if section:
                chars += len(section)
        if message.get("toolsAdded"):
            chars += _tools_json_length(message["toolsAdded"])
    elif role == "user" or role in ("custom", "toolResult"):
        chars = _content_chars(message.get("content"))
    elif role == "assistant":
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text", ""))
            elif kind == "thinking":
                chars += len(block.get("thinking", ""))
            elif kind == "toolCall":
                chars += len(block.get("name", "")) + _js_json_length(block.get("arguments", {}))
    elif role == "bashExecution":
        chars = len(message.get("command", "")) + len(message.get("output", ""))
    elif role in ("branchSummary", "compactionSummary"):
        chars = len(message.get("summary", ""))
    else:
        return 0
    return _js_ceil(chars / 4)


# ---------------------------------------------------------------------- pi-ai's estimate
#: pi-ai ``utils/estimate.js``: its own estimate (3.5 characters per token), used to clamp
#: ``max_tokens`` of a request to the window, unlike the coding agent's chars/4 above.
_PI_AI_CHARS_PER_TOKEN = 3.5


def _pi_ai_text_tokens(chars: float) -> float:
    return _js_ceil(chars / _PI_AI_CHARS_PER_TOKEN)


def _pi_ai_message_tokens(message: Message) -> float:
    role = message.get("role")
    if role == "system":
        # ``getSystemMessageText`` (content, then sections) plus the tools' JSON.
        tokens = _pi_ai_text_tokens(len(system_message_text(message)))
        for key in ("toolsAdded", "toolsRemoved"):
            if message.get(key):
                tokens += _pi_ai_text_tokens(_tools_json_length(message[key]))
        return tokens
    if role in ("user", "toolResult"):
        content = message.get("content")
        if isinstance(content, str):
            return _pi_ai_text_tokens(len(content))
        # ``chars += block.type === "text" ? block.text.length : ...`` (utils/estimate.js:15-21),
        # unguarded: a text block without a text (or ``null``) throws V8's TypeError, which
        # fails the request (see :func:`estimate_request_context_tokens`); a number's
        # ``length`` is undefined and the estimate ``NaN``.
        chars: float = 0
        for block in content or []:
            if block.get("type") == "text":
                length = js_length(block.get("text", UNDEFINED))
                chars += math.nan if length is None else length
            else:
                chars += _ESTIMATED_IMAGE_CHARS
        return _pi_ai_text_tokens(chars)
    chars = 0
    for block in message.get("content") or []:
        if block.get("type") == "text":
            chars += len(block.get("text", ""))
        elif block.get("type") == "thinking":
            chars += len(block.get("thinking", ""))
        else:
            chars += len(block.get("name", "")) + _js_json_length(block.get("arguments"))
    return _pi_ai_text_tokens(chars)


def estimate_request_context_tokens(messages: list[Message]) -> float:
    """pi-ai ``estimateContextTokens`` of a request's messages (after ``convertToLlm``).

    It runs in the provider's ``streamSimple`` (``clampMaxTokensToContext``,
    api/simple-options.js:13-23, 36), so a user message it cannot measure (a text block
    without a text: :class:`JsTypeError`) fails the request before anything is sent; a text
    that is a number makes the estimate ``NaN`` (no ``max_tokens`` is sent then).

    The last assistant usage counts only when no message before it is newer (a compaction
    summary inserted in front of kept replies invalidates their usage); what follows it, or
    everything without such usage, is estimated at 3.5 characters per token. A message
    without a timestamp poisons the comparison (``NaN`` in JavaScript).
    """
    latest = -math.inf
    usage_index: int | None = None
    for index, message in enumerate(messages):
        stamp = message.get("timestamp")
        if message.get("role") == "assistant":
            applies = isinstance(stamp, int | float) and not math.isnan(latest) and stamp >= latest
            if (
                applies
                and message.get("stopReason") not in ("aborted", "error")
                and calculate_context_tokens(message.get("usage")) > 0
            ):
                usage_index = index
        # JavaScript: Math.max(x, undefined) is NaN, and stays NaN.
        fine = isinstance(stamp, int | float) and not math.isnan(latest)
        latest = max(latest, float(stamp or 0)) if fine else math.nan
    if usage_index is not None:
        usage = calculate_context_tokens(messages[usage_index].get("usage"))
        return usage + sum(_pi_ai_message_tokens(m) for m in messages[usage_index + 1 :])
    return sum(_pi_ai_message_tokens(m) for m in messages)


class RequestEstimate:
    """:func:`estimate_request_context_tokens` over a growing projection, kept incrementally.

    Between compactions the session's projection only grows at its end (the same message
    objects, then new ones), so the scan resumes where the previous request's stopped;
    anything else (a compaction, a context edit: a new first message, or a changed last one)
    starts over. The result is always equal to the full computation (a property test checks
    it); only the cost changes, from the whole context per request to what is new.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._first: Message | None = None
        self._last: Message | None = None
        self._count = 0
        self._latest = -math.inf
        self._usage = 0
        self._usage_found = False
        self._trailing: float = 0
        self._all: float = 0

    def estimate(self, projected: list[Message]) -> float:
        """pi-ai's estimate of the request built from ``projected`` (projection messages);
        raises :class:`JsTypeError` where pi-ai's throws (and starts over next time)."""
        resumable = (
            0 < self._count <= len(projected)
            and projected[0] is self._first
            and projected[self._count - 1] is self._last
        )
        if not resumable:
            self._reset()
        try:
            for message in projected[self._count :]:
                for llm in convert_to_llm([message]):
                    self._add(llm)
        except JsTypeError:
            self._reset()
            raise
        if projected:
            self._first, self._last, self._count = projected[0], projected[-1], len(projected)
        return self._usage + self._trailing if self._usage_found else self._all

    def _add(self, message: Message) -> None:
        stamp = message.get("timestamp")
        tokens = _pi_ai_message_tokens(message)
        self._all += tokens
        if message.get("role") == "assistant":
            applies = (
                isinstance(stamp, int | float) and not math.isnan(self._latest) and stamp >= self._latest
            )
            usage = calculate_context_tokens(message.get("usage"))
            if applies and message.get("stopReason") not in ("aborted", "error") and usage > 0:
                self._usage, self._usage_found, self._trailing = usage, True, 0
                self._advance(stamp)
                return
        self._trailing += tokens
        self._advance(stamp)

    def _advance(self, stamp: Any) -> None:
        # JavaScript: Math.max(x, undefined) is NaN, and stays NaN.
        fine = isinstance(stamp, int | float) and not math.isnan(self._latest)
        self._latest = max(self._latest, float(stamp or 0)) if fine else math.nan


def is_cut_point_message(message: Message) -> bool:
    return message.get("role") in (
        "user",
        "assistant",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    )


def is_turn_start_message(message: Message) -> bool:
    return message.get("role") in ("user", "bashExecution", "custom", "branchSummary", "compactionSummary")


def convert_to_llm(messages: list[Message]) -> list[Message]:
    """``convertToLlm`` (``dist/core/messages.js:75-122``): custom, summary and shell-command
    (``bashExecution``, unless ``excludeFromContext``) messages become user messages for the model."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "bashExecution":
            if not m.get("excludeFromContext"):
                text = bash_execution_to_text(m)
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": text}],
                        "timestamp": m.get("timestamp"),
                    }
                )
        elif role == "custom":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + m["summary"] + COMPACTION_SUMMARY_SUFFIX
            out.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": m.get("timestamp")}
            )
        elif role == "branchSummary":
            text = (
                "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
                + m["summary"]
                + "</summary>"
            )
            out.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": m.get("timestamp")}
            )
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


#: The roles :func:`convert_to_llm` passes on as they are.
_PASSED_ROLES: Final = frozenset({"system", "user", "assistant", "toolResult"})
#: The fields :func:`convert_to_llm` reads of each message it converts into a new one (a
#: message of another role it drops).
_CONVERTED_FIELDS: dict[Any, tuple[str, ...]] = {
    "bashExecution": (
        "excludeFromContext",
        "command",
        "output",
        "exitCode",
        "cancelled",
        "truncated",
        "fullOutputPath",
        "timestamp",
    ),
    "custom": ("content", "timestamp"),
    "compactionSummary": ("summary", "timestamp"),
    "branchSummary": ("summary", "timestamp"),
}


class LlmConversion:
    """:func:`convert_to_llm` of a session's successive requests, each custom, summary or
    shell-command message converted once: the same message object converts to the same user
    message object from request to request, while the fields it is made of are the very
    values (``is``) it was made of.

    Every request re-sends the conversation, and after a compaction it starts with the
    summary, which ``convertToLlm`` makes into a new user message: a new object every request,
    so the request's resumed walks (``provider.TransformResume``, ``provider.WireResume``,
    ``chat_wire.ConvertResume``), which take over the previous request's work as far as the
    messages are the same objects, parted at the first message and transformed, wired and
    parsed the whole conversation again at every request after a compaction (a 1,000-turn
    session of ``bench/bench_simulator.py``: the transform walk alone was a third of its
    request building). A converted message is never changed: what a request records of its
    messages is shared from request to request already (``ScriptedModelService._shared``).
    The memo holds each message it converted (so its identity is not another's) and is
    emptied when it holds more than :attr:`LIMIT`."""

    LIMIT: Final = 4096

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: dict[int, tuple[Message, tuple[Any, ...], list[Message]]] = {}

    def convert(self, messages: list[Message]) -> list[Message]:
        """``convert_to_llm(messages)``: equal messages, the converted ones reused."""
        out: list[Message] = []
        made = self._made
        for message in messages:
            role = message.get("role")
            if role in _PASSED_ROLES:
                out.append(message)
                continue
            fields = _CONVERTED_FIELDS.get(role)
            if fields is None:  # dropped
                continue
            values = tuple(message.get(name) for name in fields)
            key = identity(message)
            known = made.get(key)
            if (
                known is not None
                and known[0] is message
                and all(a is b for a, b in zip(known[1], values, strict=True))
            ):
                out.extend(known[2])
                continue
            converted = convert_to_llm([message])
            if len(made) >= self.LIMIT:
                made.clear()
            made[key] = (message, values, converted)
            out.extend(converted)
        return out


def bash_execution_to_text(message: dict[str, Any]) -> str:
    """``bashExecutionToText`` (``dist/core/messages.js:21-39``): what the model reads."""
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {_js_number(exit_code)}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _js_number(value: Any) -> str:
    """A number as a JavaScript template literal writes it (``2.0`` is ``2``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _truncate_for_summary(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n[... {len(text) - limit} more characters truncated]"


def serialize_conversation(messages: list[Message]) -> str:
    """``serializeConversation`` of compaction/utils.js, used by Pi's own summarizer."""
    parts: list[str] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = content_text(msg.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            content = msg.get("content") or []
            calls = []
            for block in content:
                if block.get("type") == "toolCall":
                    args = ", ".join(
                        f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
                        for k, v in (block.get("arguments") or {}).items()
                    )
                    calls.append(f"{block.get('name')}({args})")
            if any(block.get("type") == "text" for block in content):
                # pi-ai contentText's default separator, unlike the user and tool result ("").
                parts.append("[Assistant]: " + content_text(content, "\n"))
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            text = content_text(msg.get("content"))
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, _TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)
