"""The chat-completions wire both targets share: what Pi sends, and what the model streams back.

Pi talks to the harness's fake provider with pi-ai's ``openai-completions`` API
(``dist/api/openai-completions.js``): a ``POST /chat/completions`` body, answered by a stream
of chat-completion chunks. Both targets go through this one module:

* :func:`parse_chat_request` reads a request body into a :class:`ModelRequest` (pi-ai message
  shapes) and :func:`classify_request` tells the three request kinds apart. The fake server
  parses what real Pi sent; the simulated model parses the body its port of pi-ai built
  (``simulator/provider.py``), so the scripted model sees the same request on both targets.
* :func:`chat_stream` is the stream of chunks that answers an outcome, with the point where a
  :class:`~.model_script.StreamPlan` cuts it. The fake server sends these chunks; the
  simulated model feeds the same chunks through its port of pi-ai's stream handling, so both
  targets produce the same ``message_update`` deltas and the same persisted message.

Ids are the fake server's: ``chatcmpl-fake-<seq>`` for a completion and ``call_<seq>_<i>`` for
an unnamed tool call, ``seq`` being the request's number among every request the model got.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.scenario.identity_memo import IdentityMemo, identity, same_objects_prefix
from pi_continuity_harness.scenario.model_script import (
    SUMMARIZATION_SYSTEM_PROMPT_PREFIX,
    ModelOutcome,
    ModelRequest,
    RequestKind,
    tool_arguments_json,
)
from pi_continuity_harness.scenario.transcript import content_text

__all__ = [
    "TEXT_CHUNK",
    "ChatStream",
    "ConvertMemo",
    "ConvertResume",
    "chat_stream",
    "classify_body",
    "classify_request",
    "completion_id",
    "parse_chat_request",
    "tool_call_id",
    "tool_names",
]

#: Characters per streamed text or thinking chunk.
TEXT_CHUNK = 256
_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def completion_id(seq: int) -> str:
    """The ``id`` of every chunk of the ``seq``-th completion (pi-ai's ``responseId``)."""
    return f"chatcmpl-fake-{seq}"


def tool_call_id(seq: int, index: int) -> str:
    """The id of the ``index``-th tool call of the ``seq``-th completion, when the script names none."""
    return f"call_{seq}_{index}"


# --------------------------------------------------------------------------- parsing


def _user_content(content: Any) -> Any:
    if isinstance(content, str) or content is None:
        return content or ""
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            mime, data = "application/octet-stream", url
            if url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
            blocks.append({"type": "image", "mimeType": mime, "data": data})
    return blocks


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": value}


def _convert_message(
    role: Any, msg: dict[str, Any], tool_name: str
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """One wire message (not the leading system prompt) in pi-ai's shape, and the ``(id, name)``
    of the tool calls it makes; ``tool_name``: a tool result's tool name (read from the calls
    before it)."""
    if role in ("system", "developer"):
        return {"role": "system", "content": content_text(msg.get("content"))}, ()
    if role == "user":
        return {"role": "user", "content": _user_content(msg.get("content"))}, ()
    if role == "assistant":
        blocks: list[dict[str, Any]] = []
        calls: list[tuple[str, str]] = []
        for key in ("reasoning_content", "reasoning", "reasoning_text"):
            thinking = msg.get(key)
            if isinstance(thinking, str) and thinking:
                blocks.append({"type": "thinking", "thinking": thinking})
                break
        text = content_text(msg.get("content"))
        if text:
            blocks.append({"type": "text", "text": text})
        for call in msg.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") or call.get("custom") or {}
            name = str(fn.get("name", ""))
            call_id = str(call.get("id", ""))
            calls.append((call_id, name))
            args = fn.get("arguments") if "arguments" in fn else fn.get("input")
            blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": _arguments(args)})
        return {"role": "assistant", "content": blocks}, tuple(calls)
    if role == "tool":
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": str(msg.get("tool_call_id", "")),
            "toolName": tool_name,
            "content": [{"type": "text", "text": content_text(msg.get("content"))}],
        }
        return result, ()
    return {"role": str(role), "content": msg.get("content")}, ()


#: Converted wire messages and the tool calls they make, by the wire message's identity and,
#: for a tool result, the tool name the calls before it give
#: (:class:`~pi_continuity_harness.scenario.identity_memo.IdentityMemo`), for a caller that parses one
#: growing conversation again and again (the simulated model: every request re-sends the
#: whole conversation, and its wire messages are shared objects,
#: ``ScriptedModelService._share``). The leading system prompt is never remembered.
ConvertMemo = IdentityMemo[tuple[dict[str, Any], tuple[tuple[str, str], ...]]]


def _convert_shared(
    memo: ConvertMemo, role: Any, msg: dict[str, Any], tool_name: str
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """:func:`_convert_message`, the message shared by ``memo``."""
    converted, calls = _convert_message(role, msg, tool_name)
    return memo.share(converted), calls


@dataclass
class ConvertResume:
    """What :func:`parse_chat_request` keeps of one conversation's previous request: its wire
    messages after the first (the system prompt), their conversions and the tool names their
    calls gave. A request whose wire messages after the first start with all of those (by
    identity: the simulated model's wire messages are shared objects) converts only the
    messages that follow, with those names: converting the whole conversation for every
    request was 5 % of a blitz exploration (issue 16)."""

    key: int | None = None
    wire: list[Any] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)


def _convert_messages(
    wire: list[Any], memo: ConvertMemo | None = None, resume: ConvertResume | None = None
) -> tuple[str | None, list[dict[str, Any]]]:
    first = wire[0] if wire else None
    if (
        resume is None
        or memo is None
        or not isinstance(first, dict)
        or first.get("role") not in ("system", "developer")
    ):
        if resume is not None:
            resume.key = None
        system_prompt, messages, _names = _convert_walk(wire, memo, [], {}, first=True)
        return system_prompt, messages
    system_prompt = content_text(first.get("content"))
    rest = wire[1:]
    previous = resume.wire
    if resume.key == identity(memo) and same_objects_prefix(rest, previous) == len(previous):
        _none, messages, names = _convert_walk(
            rest[len(previous) :], memo, list(resume.messages), dict(resume.tool_names), first=False
        )
    else:
        _none, messages, names = _convert_walk(rest, memo, [], {}, first=False)
    resume.key, resume.wire, resume.messages, resume.tool_names = identity(memo), rest, messages, names
    return system_prompt, list(messages)


def _convert_walk(
    wire: list[Any],
    memo: ConvertMemo | None,
    messages: list[dict[str, Any]],
    tool_names: dict[str, str],
    *,
    first: bool,
) -> tuple[str | None, list[dict[str, Any]], dict[str, str]]:
    """The walk of :func:`_convert_messages`, appending to ``messages`` with the tool names
    ``tool_names`` (call id: name) of the messages before (``first``: ``wire[0]`` is the
    request's first message, a system prompt when it is a system or developer message)."""
    system_prompt: str | None = None
    for position, msg in enumerate(wire):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role in ("system", "developer") and first and position == 0 and system_prompt is None:
            system_prompt = content_text(msg.get("content"))
            continue
        tool_name = (
            msg.get("name") or tool_names.get(str(msg.get("tool_call_id", "")), "")
            if role == "tool"
            else None
        )
        if memo is None or not isinstance(tool_name, str | None):
            # (a name that is not a string never comes from a wire pi-ai built: not remembered)
            converted, calls = _convert_message(role, msg, tool_name or "")
        else:
            converted, calls = memo.get(
                msg, functools.partial(_convert_shared, memo, role, msg, tool_name or ""), tool_name
            )
        tool_names.update(calls)
        messages.append(converted)
    return system_prompt, messages, tool_names


def tool_names(body: dict[str, Any]) -> list[str]:
    """The names of the tools a request body declares, in order."""
    names: list[str] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            spec = tool.get("function") or tool.get("custom") or {}
            if isinstance(spec, dict) and spec.get("name"):
                names.append(str(spec["name"]))
    return names


def classify_request(system_prompt: str | None, tools: list[str]) -> RequestKind:
    """``summary`` (Pi's summarizer prompt), ``agent`` (Pi's agent loop sends its tools), else
    ``extension``: Pi's agent loop always declares its tools, while the default summarizer
    (``completeSummarization``) and an extension's ``modelRegistry.complete()`` send none."""
    if system_prompt is not None and system_prompt.startswith(SUMMARIZATION_SYSTEM_PROMPT_PREFIX):
        return "summary"
    if tools:
        return "agent"
    return "extension"


def classify_body(body: dict[str, Any], tools: list[str] | None = None) -> RequestKind:
    """:func:`classify_request` of a request body, as :func:`parse_chat_request` reads it (the
    system prompt is a leading system or developer message), without converting the messages:
    the fake server picks a request's script by it, and the simulated host's model service
    (:mod:`pi_continuity_harness.simulator.model_service`) by the same rule. ``tools``: the
    body's :func:`tool_names`, when the caller has them already."""
    wire = body.get("messages") or []
    first = wire[0] if isinstance(wire, list) and wire else None
    system_prompt = (
        content_text(first.get("content"))
        if isinstance(first, dict) and first.get("role") in ("system", "developer")
        else None
    )
    return classify_request(system_prompt, tool_names(body) if tools is None else tools)


def parse_chat_request(
    body: dict[str, Any],
    *,
    index: int = 0,
    kind: RequestKind | None = None,
    memo: ConvertMemo | None = None,
    resume: ConvertResume | None = None,
    model: str | None = None,
    tools: list[str] | None = None,
) -> ModelRequest:
    """A chat-completions request body as a :class:`ModelRequest` (pi-ai message shapes);
    ``memo``: messages converted before (see :class:`ConvertMemo`); ``resume``: the previous
    request of the conversation (see :class:`ConvertResume`); ``model``: the model the request
    is recorded with (default: the body's ``model``; the simulated model records
    ``provider/id``, as the real-Pi target does); ``tools``: the body's :func:`tool_names`, when
    the caller read them already (the simulated model reads them once for :func:`classify_body`
    and the request: 9,000 of a model call's 707,000 instructions with four tools, issue 16)."""
    system_prompt, messages = _convert_messages(list(body.get("messages") or []), memo, resume)
    if tools is None:
        tools = tool_names(body)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    reasoning = body.get("reasoning_effort")
    return ModelRequest(
        kind=kind or classify_request(system_prompt, tools),
        index=index,
        model=str(body.get("model", "")) if model is None else model,
        system_prompt=system_prompt,
        messages=messages,
        tools=tools,
        max_tokens=int(max_tokens) if isinstance(max_tokens, int | float) else None,
        reasoning=str(reasoning) if isinstance(reasoning, str) else None,
        body=body,
    )


# --------------------------------------------------------------------------- streaming


@dataclass(frozen=True)
class ChatStream:
    """The chunks that answer a non-error outcome, and where its stream plan cuts them.

    ``chunks[:cut]`` are sent before the hold, the dropped connection or the SSE error (the
    response headers and the role chunk always come first); the rest completes the reply.
    ``cut`` is None when the outcome has no stream plan.
    """

    chunks: tuple[dict[str, Any], ...]
    cut: int | None


def _deltas(outcome: ModelOutcome, seq: int) -> list[dict[str, Any]]:
    """The deltas of a reply, in order: thinking and text in :data:`TEXT_CHUNK` pieces, then
    one per tool call (id, name and the whole arguments JSON). Made as the chunks' own deltas:
    a piece and its delta were two objects, each delta and each chunk a call of its own
    (111,000 instructions for the 14 chunks of a 2,800-character reply, 93,000 now; 11,900
    chunks in a suite run, issue 16)."""
    thinking = outcome.thinking or ""
    text = outcome.text
    deltas: list[dict[str, Any]] = [
        {"reasoning_content": thinking[start : start + TEXT_CHUNK]}
        for start in range(0, len(thinking), TEXT_CHUNK)
    ]
    deltas += [{"content": text[start : start + TEXT_CHUNK]} for start in range(0, len(text), TEXT_CHUNK)]
    for i, call in enumerate(outcome.tool_calls):
        call_id = call.id or tool_call_id(seq, i)
        function = {"name": call.name, "arguments": tool_arguments_json(call.arguments)}
        deltas.append({"tool_calls": [{"index": i, "id": call_id, "type": "function", "function": function}]})
    return deltas


def _split(delta: dict[str, Any], at: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A delta cut after ``at`` characters: a text's or thinking's text; a tool call's arguments,
    the rest of them in a delta of their own that names the call by its index only."""
    calls = delta.get("tool_calls")
    if calls is None:
        ((kind, value),) = delta.items()
        return {kind: value[:at]}, {kind: value[at:]}
    call = calls[0]
    arguments = call["function"]["arguments"]
    function = {"name": call["function"]["name"], "arguments": arguments[:at]}
    head = {"tool_calls": [{**call, "function": function}]}
    return head, {"tool_calls": [{"index": call["index"], "function": {"arguments": arguments[at:]}}]}


def _delta_chars(delta: dict[str, Any]) -> int:
    calls = delta.get("tool_calls")
    if calls is None:
        ((_kind, value),) = delta.items()
        return len(value)
    return len(calls[0]["function"]["arguments"])


def chat_stream(outcome: ModelOutcome, *, model: str, seq: int) -> ChatStream:
    """The chat-completion chunks (JSON objects) that stream a non-error outcome, cut where its
    :class:`~.model_script.StreamPlan` says (``upto`` characters after the role chunk)."""
    created = 1_700_000_000 + seq
    ident = completion_id(seq)
    deltas = _deltas(outcome, seq)
    cut: int | None = None
    plan = outcome.stream
    if plan is not None:
        remaining = plan.upto
        cut_delta = len(deltas)
        for position, delta in enumerate(deltas):
            size = _delta_chars(delta)
            if remaining >= size:
                remaining -= size
                continue
            if remaining > 0:
                deltas[position : position + 1] = _split(delta, remaining)
                cut_delta = position + 1
            else:
                cut_delta = position
            break
        cut = 1 + cut_delta  # (after the role chunk)
    # The role chunk, the deltas' chunks, then the finish reason's (each written out in place).
    chunks = [
        {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
        for delta in [{"role": "assistant", "content": ""}, *deltas]
    ]
    finish = _FINISH.get(outcome.stop_reason, "stop")
    chunks.append(
        {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
        }
    )
    usage = outcome.usage
    chunks.append(
        {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": usage.input + usage.cache_read + usage.cache_write,
                "completion_tokens": usage.output,
                "total_tokens": usage.total,
                "prompt_tokens_details": {
                    "cached_tokens": usage.cache_read,
                    "cache_write_tokens": usage.cache_write,
                },
            },
        }
    )
    return ChatStream(tuple(chunks), cut)
