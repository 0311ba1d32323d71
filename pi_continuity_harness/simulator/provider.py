"""pi-ai's ``openai-completions`` provider, as the simulated host's model service runs it.

Real Pi talks to the harness's fake provider through pi-ai 1.6 (``dist/api/openai-completions.js``,
``dist/api/transform-messages.js``, ``dist/utils/transcript.js``); the simulated host does what it
does, in two halves, the request here and the response in :mod:`.provider_stream`:

* :func:`request_body` builds the chat-completions body Pi would send (``buildParams``):
  system messages folded into one leading message (``resolveTranscript``: the fake provider
  does not support mid-conversation system messages), then ``transformMessages`` and
  ``convertMessages``. Every rewrite between Pi's context and the wire is modelled here:

  - an assistant message whose ``stopReason`` is ``error`` or ``aborted`` is dropped, partial
    text and tool calls included (``transform-messages.js:169-180``);
  - a tool call left without a result gets a synthetic ``"No result provided"`` error result
    before the next assistant or user message, or at the end (``transform-messages.js:147-166,
    201-211``);
  - thinking from another model (provider, api or id differ) is dropped; same-model thinking
    that is blank and unsigned is dropped; a kept, non-blank thinking block is sent in the field
    its ``thinkingSignature`` names (``reasoning_content``) (``transform-messages.js:86-104``,
    ``openai-completions.js:966-1003``);
  - text blocks that are empty or whitespace are dropped, the rest joined into one string; an
    assistant message left with no text and no tool calls is not sent
    (``openai-completions.js:958-965, 1047-1055``);
  - empty user text blocks are dropped, and a user message left empty is not sent
    (``openai-completions.js:927-945``);
  - tool results are sent as their text blocks joined by ``"\\n"``, or ``"(no tool output)"``
    (``openai-completions.js:1058-1075``);
  - images: for a model without ``"image"`` in its ``input``, each run of images in a user
    message or tool result becomes a placeholder text (``downgradeUnsupportedImages``,
    ``transform-messages.js:1-2, 22-56``); for a model with it, user images go out as
    ``image_url`` parts and tool-result images in a user message after the tool results
    (``openai-completions.js:926-941, 1082-1113``);
  - tools come from the system messages' ``toolsAdded`` (``resolveTranscriptTools``, mode
    ``none``), each as ``{type: "function", function: {name, description, parameters}}``.

The response half, :class:`~.provider_stream.StreamReader` (the chunks the model streams back
as pi-ai's assistant message events), is :mod:`.provider_stream`'s, re-exported here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.identity_memo import IdentityMemo, identity, same_objects_prefix
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.messages import (
    UNDEFINED,
    JsTypeError,
    Message,
    current_system_message,
    current_tools,
    js_length,
    system_message_text,
)
from pi_continuity_harness.simulator.provider_stream import (
    REASONING_FIELDS,
    StreamReader,
    assistant_failure,
    setup_failure,
)

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "THINKING_LEVELS",
    "HeadResume",
    "StreamReader",
    "WireMemo",
    "assistant_failure",
    "clamp_thinking_level",
    "current_tools",
    "downgrade_unsupported_images",
    "fold_system_messages",
    "normalize_context",
    "request_body",
    "setup_failure",
    "supported_thinking_levels",
    "transform_messages",
    "wire_messages",
]


# ============================================================================ thinking levels
#: pi-ai ``EXTENDED_THINKING_LEVELS`` (models.js:701), in order.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
#: pi-coding-agent ``DEFAULT_THINKING_LEVEL`` (dist/core/defaults.js:1).
DEFAULT_THINKING_LEVEL = "medium"


def supported_thinking_levels(model: Model | None) -> list[str]:
    """pi-ai ``getSupportedThinkingLevels`` (models.js:702-713): ``off`` alone for a model without
    reasoning; else every level but ``xhigh`` and ``max``, which need a ``thinkingLevelMap`` entry
    (the harness's models have none). Without a model, every level (agent-session.js:2257-2260)."""
    if model is None:
        return list(THINKING_LEVELS)
    if not model.reasoning:
        return ["off"]
    return [level for level in THINKING_LEVELS if level not in ("xhigh", "max")]


def clamp_thinking_level(model: Model | None, level: str) -> str:
    """The level ``setThinkingLevel`` applies (agent-session.js:2221, 2281-2283; pi-ai
    ``clampThinkingLevel``, models.js:714-732): ``level`` when supported, else the nearest
    supported level above it, else below it; ``off`` without a model."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if model is None:
        return "off"
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


# ============================================================================ request
def fold_system_messages(messages: list[Message], resume: HeadResume | None = None) -> list[Message]:
    """pi-ai ``collapseSystemMessages``: the transcript's system messages replayed into one
    leading message (``getCurrentSystemMessage``), every other message in order. ``resume``:
    the previous request's fold (:class:`HeadResume`), taken when the system messages are the
    same; the result is the same."""
    if resume is None:
        head = current_system_message(messages)
    else:
        systems = [m for m in messages if m.get("role") == "system"]
        previous = resume.systems
        if len(systems) != len(previous) or same_objects_prefix(systems, previous) != len(systems):
            resume.systems, resume.head, resume.tools = systems, current_system_message(systems), None
        head = resume.head
    rest = [m for m in messages if m.get("role") != "system"]
    return rest if head is None else [head, *rest]


@dataclass
class HeadResume:
    """What :func:`request_body` keeps of one conversation's previous request's leading system
    message: the transcript's system messages, the message :func:`fold_system_messages` folded
    them into, and the wire form of its tools (``tools``, once made).

    The fold reads the system messages alone (their texts, sections, tools and the first
    timestamp), and a conversation's messages are never changed once made (as
    :class:`WireMemo` has it): a request whose system messages are the very objects of the
    previous one's (``is``, in the same order) gets the same folded message, the one object
    from request to request, and so the same wire form (:class:`WireResume` keeps the system
    message's, ``request_body`` the tools'). Folding and wiring them again for every request
    was about a tenth of a model call's own work (issue 16)."""

    systems: list[Message] = field(default_factory=list)
    head: Message | None = None
    tools: list[dict[str, Any]] | None = None


def _same_model(message: Message, model: Model) -> bool:
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.id
    )


def _transform_assistant(message: Message, model: Model) -> Message:
    """The first pass of ``transformMessages`` for one assistant message (thinking, text)."""
    same = _same_model(message, model)
    blocks: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "thinking":
            if not same:
                continue
            if (
                block.get("redacted")
                or block.get("thinkingSignature")
                or str(block.get("thinking") or "").strip()
            ):
                blocks.append(block)
        elif kind == "text":
            blocks.append(block if same else {"type": "text", "text": block.get("text")})
        elif kind == "toolCall" and not same and "thoughtSignature" in block:
            blocks.append({k: v for k, v in block.items() if k != "thoughtSignature"})
        else:
            blocks.append(block)
    return {**message, "content": blocks}


#: pi-ai's placeholders for images a model cannot take (``transform-messages.js:1-2``).
NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"


def _replace_images(content: list[dict[str, Any]], placeholder: str) -> list[dict[str, Any]]:
    """pi-ai ``replaceImagesWithPlaceholder`` (``transform-messages.js:22-36``): each run of
    images becomes one placeholder text block, and an image right after a text block that *is*
    the placeholder adds none."""
    result: list[dict[str, Any]] = []
    previous_was_placeholder = False
    for block in content:
        if block.get("type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.get("text") == placeholder
    return result


def _has_image(content: list[dict[str, Any]]) -> bool:
    """Whether a user message's or tool result's content blocks include an image."""
    return any(block.get("type") == "image" for block in content)


def downgrade_unsupported_images(messages: list[Message], model: Model) -> list[Message]:
    """pi-ai ``downgradeUnsupportedImages`` (``transform-messages.js:37-56``), the first rewrite
    of ``transformMessages`` (``:67``): for a model whose ``input`` lacks ``"image"``, the images
    of user messages (with array content) and tool results become placeholder text; a model
    that takes images gets the messages unchanged.

    (``splitErrorToolResultImages``, ``:10-21``, is Anthropic's and Bedrock's only: the
    openai-completions provider never calls it.)
    """
    if "image" in model.input:
        return messages
    out: list[Message] = []
    for original in messages:
        message = original
        role = message.get("role")
        content = message.get("content")
        if role in ("user", "toolResult") and isinstance(content, list) and not _has_image(content):
            # Nothing to replace: the message as it is (equal to its copy; every request
            # re-sends the whole conversation, and copying each message was 2.5 % of a blitz
            # exploration, issue 16). Only the wire conversion reads the result.
            out.append(message)
            continue
        if role == "user" and isinstance(message.get("content"), list):
            message = {
                **message,
                "content": _replace_images(message["content"], NON_VISION_USER_IMAGE_PLACEHOLDER),
            }
        elif role == "toolResult":
            message = {
                **message,
                "content": _replace_images(message["content"], NON_VISION_TOOL_IMAGE_PLACEHOLDER),
            }
        out.append(message)
    return out


@dataclass
class TransformResume:
    """What :func:`transform_messages` keeps of one conversation's previous request, so the next
    request (the same messages and a few more) is transformed from where the two part.

    Every request re-sends the whole conversation, and transforming it all again for each was
    7 % of a blitz exploration (issue 16): the work grew with the square of the conversation.
    The transform is a walk over the messages whose only state is the tool calls of the latest
    assistant message that are still open (``pending``); where none is open (``clean``), what
    comes before is done for good. So the previous request's messages after the leading system
    message (which :func:`request_body` makes anew for every request), the result, and each
    clean position (message index, result length) are kept; a request whose messages start with
    the same objects (by identity, as :class:`WireMemo` already remembers messages) takes the
    result up to the last clean position within the common part and walks only the rest.
    Positions are kept only up to the first message the transform replaces by a new object
    (null content, an image the model cannot take), so every kept result is what the walk
    gives now: the same objects, from the same messages."""

    key: tuple[Any, ...] | None = None
    messages: list[Message] = field(default_factory=list)
    result: list[Message] = field(default_factory=list)
    clean: list[tuple[int, int]] = field(default_factory=list)


def transform_messages(
    messages: list[Message],
    model: Model,
    *,
    memo: WireMemo | None = None,
    resume: TransformResume | None = None,
) -> list[Message]:
    """pi-ai ``transformMessages`` (``transform-messages.js:63-213``) for the fake provider's
    plain ids: null content normalised, assistant thinking and text rewritten, failed and
    aborted assistant messages dropped, orphaned tool calls given synthetic results.

    Images first go through ``downgradeUnsupportedImages`` (:func:`downgrade_unsupported_images`).

    ``memo``: an assistant message of the conversation is rewritten once per run and model
    kind (the rewrite depends on the message and on whether ``model`` made it, nothing else),
    so the rewritten message is one object from request to request and its wire form is
    made once too (:func:`wire_messages`); a message whose null content was normalised here is
    a new object every time and is rewritten every time.

    ``resume`` (with ``memo``): the previous request's transform, taken up to where the two
    requests part (:class:`TransformResume`); the result is the same.
    """
    if resume is None or memo is None:
        return _transform_walk(messages, model, memo, [], None)
    head = messages[:1] if messages and messages[0].get("role") == "system" else []
    rest = messages[len(head) :]
    key = (model.provider, model.api, model.id, "image" in model.input, identity(memo))
    start, kept = 0, 0
    if resume.key == key:
        common = same_objects_prefix(rest, resume.messages)
        for index, length in reversed(resume.clean):
            if index <= common:
                start, kept = index, length
                break
    # The leading system message first: no tool call is open after it, so the rest is walked
    # from a clean state whatever it was. With content, the walk leaves it as it is (it
    # appends a system message where no tool call is open): taken without the walk.
    plain = bool(head) and head[0].get("content") is not None
    result = [head[0]] if plain else _transform_walk(head, model, memo, [], None)
    clean = [(index, length) for index, length in resume.clean if index < start]
    tail = _transform_walk(rest[start:], model, memo, resume.result[:kept] if kept else [], (clean, start))
    resume.key, resume.messages, resume.clean = key, rest, clean
    resume.result = tail
    result.extend(tail)
    return result


def _transform_walk(
    messages: list[Message],
    model: Model,
    memo: WireMemo | None,
    result: list[Message],
    clean: tuple[list[tuple[int, int]], int] | None,
) -> list[Message]:
    """The walk of :func:`transform_messages` over ``messages``, appending to ``result`` (the
    transform of the messages before them, which left no tool call open). ``clean``: a list to
    fill with the clean positions (:class:`TransformResume`) and the index of ``messages[0]``
    in the request. Returns ``result`` with what the last messages leave open closed; the
    recorded result lengths never count that closing."""
    transformed: list[Message] = []
    normalized = [m if m.get("content") is not None else {**m, "content": []} for m in messages]
    # Clean positions are kept only up to the first message replaced by a new object.
    barrier = len(messages)
    for position, (original, message) in enumerate(
        zip(messages, downgrade_unsupported_images(normalized, model), strict=True)
    ):
        if message is not original and barrier == len(messages):
            barrier = position
        if message.get("role") != "assistant":
            transformed.append(message)
        elif memo is None or message is not original:
            transformed.append(_transform_assistant(message, model))
        else:
            rewritten = memo.get(
                message,
                functools.partial(_transform_assistant, message, model),
                ("transform", _same_model(message, model)),
            )
            assert rewritten is not None
            transformed.append(rewritten)
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()
    held: list[Message] = []

    def close_pending() -> None:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call.get("id"),
                        "toolName": call.get("name"),
                        "content": [{"type": "text", "text": "No result provided"}],
                        "isError": True,
                    }
                )
        pending, answered = [], set()
        result.extend(held)
        held.clear()

    for position, message in enumerate(transformed):
        if clean is not None and not pending and position <= barrier:
            clean[0].append((clean[1] + position, len(result)))
        role = message.get("role")
        if role == "assistant":
            close_pending()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            calls = [b for b in message["content"] if b.get("type") == "toolCall"]
            if calls:
                pending, answered = calls, set()
            result.append(message)
        elif role == "toolResult":
            answered.add(str(message.get("toolCallId")))
            result.append(message)
        elif role == "system":
            (held if pending else result).append(message)
        elif role == "user":
            close_pending()
            result.append(message)
        else:
            result.append(message)
    if clean is not None and not pending and len(transformed) <= barrier:
        clean[0].append((clean[1] + len(transformed), len(result)))
    close_pending()
    return result


def _wire_user(message: Message) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": content}
    parts: list[dict[str, Any]] = []
    for item in content or []:
        if item.get("type") == "text":
            # ``.filter((item) => item.type !== "text" || item.text.length > 0)``
            # (openai-completions.js:927): a text block without a text (or ``null``) throws
            # V8's TypeError; a number's ``length`` is undefined, and the block is dropped.
            text = item.get("text", UNDEFINED)
            length = js_length(text)
            if length is None or length == 0:
                continue
            if not isinstance(text, str):  # an array: sanitizeSurrogates' ``text.replace``
                raise JsTypeError("text.replace is not a function")
            parts.append({"type": "text", "text": text})
        else:
            parts.append(_image_url(item))
    return {"role": "user", "content": parts} if parts else None


def _wire_assistant(message: Message) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant", "content": None}
    # One pass over the blocks (every request re-sends the whole conversation, so this runs
    # for every assistant message of every request: issue 16); the same selections as pi-ai's
    # three filters, in block order.
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for b in message.get("content") or []:
        kind = b.get("type")
        if kind == "text":
            block_text = str(b.get("text", ""))
            if block_text.strip():
                texts.append(block_text)
        elif kind == "thinking":
            if str(b.get("thinking") or "").strip():
                thinking.append(b)
        elif kind == "toolCall":
            calls.append(b)
    text = "".join(texts)
    if text:
        out["content"] = text
    if thinking:
        signature = thinking[0].get("thinkingSignature")
        if signature in REASONING_FIELDS:
            out[str(signature)] = "\n".join(str(b.get("thinking")) for b in thinking)
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {
                    "name": c.get("name"),
                    "arguments": json.dumps(c.get("arguments"), ensure_ascii=False, separators=(",", ":")),
                },
            }
            for c in calls
        ]
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


def _image_url(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.get('mimeType')};base64,{block.get('data')}"},
    }


#: The wire form of user messages and tool results by the message's identity
#: (:class:`~pi_continuity_harness.scenario.identity_memo.IdentityMemo`), for a caller that builds one
#: growing conversation's requests again and again (the simulated model); assistant messages
#: too, by their rewritten form (``transform_messages`` makes it once with the memo). Not a
#: tool result with images (its images follow it in a message of their own).
WireMemo = IdentityMemo[dict[str, Any] | None]


@dataclass
class WireResume:
    """What :func:`wire_messages` keeps of one conversation's previous request: its messages
    after the first (the leading system message, made anew for every request) and their wire
    form. A request whose messages after the first start with all of those (by identity: the
    transformed messages are one object from request to request, :class:`TransformResume`)
    converts only the messages that follow: converting the whole conversation for every
    request was 5 % of a blitz exploration (issue 16). Kept only when no tool result's images
    were waiting at the end (a run of them continues into the next messages)."""

    key: tuple[Any, ...] | None = None
    messages: list[Message] = field(default_factory=list)
    out: list[dict[str, Any]] = field(default_factory=list)
    #: The leading system message and its wire form (none for an empty text): the same message
    #: (:class:`HeadResume`'s) gives the same, one object from request to request.
    head: Message | None = None
    head_out: list[dict[str, Any]] = field(default_factory=list)


def wire_messages(
    messages: list[Message],
    *,
    takes_images: bool = False,
    memo: WireMemo | None = None,
    resume: WireResume | None = None,
) -> list[dict[str, Any]]:
    """pi-ai ``convertMessages`` of the transformed transcript (the fake provider's compat:
    ``system`` role, no ``name`` on tool results, null assistant content allowed).

    A user message's images go out as ``image_url`` parts with a ``data:`` URL
    (``openai-completions.js:926-941``). A tool result is sent as text only; for a model that
    takes images (``takes_images``), the images of a run of consecutive tool results follow
    them in one user message headed ``"Attached image(s) from tool result:"``
    (``openai-completions.js:1058-1113``).

    ``resume`` (with ``memo``): the previous request's wire form, taken when this request's
    messages extend it (:class:`WireResume`); the result is the same.
    """
    if resume is None or memo is None or not messages or messages[0].get("role") != "system":
        if resume is not None:
            resume.key = None
        return _wire_walk(messages, takes_images, memo, [], first=True)[0]
    # The leading system message, as the walk sends a first message that is a system one.
    if messages[0] is not resume.head:
        text = system_message_text(messages[0])
        resume.head, resume.head_out = messages[0], [{"role": "system", "content": text}] if text else []
    out = list(resume.head_out)
    rest = messages[1:]
    key = (takes_images, identity(memo))
    previous = resume.messages
    if resume.key == key and same_objects_prefix(rest, previous) == len(previous):
        done = list(resume.out)
        tail, waiting = _wire_walk(rest[len(previous) :], takes_images, memo, done, first=False)
    else:
        tail, waiting = _wire_walk(rest, takes_images, memo, [], first=False)
    resume.key = None if waiting else key
    resume.messages, resume.out = rest, tail
    out.extend(tail)
    return out


def _wire_walk(
    messages: list[Message],
    takes_images: bool,
    memo: WireMemo | None,
    out: list[dict[str, Any]],
    *,
    first: bool,
) -> tuple[list[dict[str, Any]], bool]:
    """The walk of :func:`wire_messages`, appending to ``out`` (``first``: ``messages[0]`` is
    the request's first message). Returns ``out`` and whether tool result images were waiting
    at the end (then sent in a message of their own, at the end of ``out``)."""
    tool_images: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        if message.get("role") != "toolResult" and tool_images:
            out.append({"role": "user", "content": [dict(_TOOL_IMAGES_CAPTION), *tool_images]})
            tool_images = []
        role = message.get("role")
        if role == "system":
            text = system_message_text(message) if first and position == 0 else _system_update_text(message)
            if text:
                out.append({"role": "system", "content": text})
        elif role == "user":
            user = (
                _wire_user(message)
                if memo is None
                else memo.get(message, functools.partial(_wire_shared, memo, _wire_user, message))
            )
            if user is not None:
                out.append(user)
        elif role == "assistant":
            # Remembered by the rewritten message (one object per conversation message and
            # model kind, see ``transform_messages``); an empty one may be a fresh
            # normalisation of null content, and has no wire form to remember.
            assistant = (
                _wire_assistant(message)
                if memo is None or not message.get("content")
                else memo.get(message, functools.partial(_wire_shared, memo, _wire_assistant, message))
            )
            if assistant is not None:
                out.append(assistant)
        elif role == "toolResult":
            has_images = _has_image(message.get("content") or [])
            tool = (
                _wire_tool_result(message)
                if memo is None or has_images
                else memo.get(message, functools.partial(_wire_shared, memo, _wire_tool_result, message))
            )
            assert tool is not None
            out.append(tool)
            if has_images and takes_images:
                tool_images.extend(
                    _image_url(b) for b in message.get("content") or [] if b.get("type") == "image"
                )
    if tool_images:
        out.append({"role": "user", "content": [dict(_TOOL_IMAGES_CAPTION), *tool_images]})
    return out, bool(tool_images)


_TOOL_IMAGES_CAPTION = {"type": "text", "text": "Attached image(s) from tool result:"}


def _wire_tool_result(message: Message) -> dict[str, Any]:
    """A tool result as sent: its text only (its images, if any, go in a message after it)."""
    text = "\n".join(str(b.get("text", "")) for b in message.get("content") or [] if b.get("type") == "text")
    has_images = _has_image(message.get("content") or [])
    shown = text if text.strip() else "(see attached image)" if has_images else "(no tool output)"
    return {"role": "tool", "content": shown, "tool_call_id": message.get("toolCallId")}


def _wire_shared(
    memo: WireMemo, wire: Callable[[Message], dict[str, Any] | None], message: Message
) -> dict[str, Any] | None:
    """``wire(message)``, shared by ``memo`` (what ``memo`` remembers for ``message``)."""
    made = wire(message)
    return None if made is None else memo.share(made)


def _system_update_text(message: Message) -> str:
    """pi-ai ``renderSystemMessageUpdate`` (only reachable with mid-conversation system messages)."""
    parts: list[str] = []
    text = content_text(message.get("content"), "\n")
    if text:
        parts.append(text)
    for name, value in (message.get("sections") or {}).items():
        parts.append(
            f'Removed system prompt section "{name}".'
            if value is None
            else f'Updated system prompt section "{name}":\n\n{value}'
        )
    return "\n\n".join(parts)


def _wire_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """pi-ai ``convertTools`` for the fake provider (openai-completions.js:1124-1155; no strict
    mode, no grammar): the tool's ``name``, ``description`` and ``parameters``, a key the tool
    lacks left out as ``JSON.stringify`` leaves ``undefined`` out (an explicit ``None`` is
    ``null``). The agent's tools always have all three; an extension's ``complete()`` context
    may not."""
    function = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
    return {"type": "function", "function": function}


def normalize_context(
    messages: list[Message], system_prompt: str | None = None, tools: list[Any] | None = None
) -> list[Message]:
    """pi-ai ``normalizeContext``: a ``Context.systemPrompt`` and ``Context.tools`` become a
    leading system message (``createInitialSystemMessage``, ``dist/utils/transcript.js:6-26``:
    its ``toolsAdded`` the tools, ``timestamp`` 0), as ``streamSimple`` hands the context to
    the provider (models.js:466, 477), whose ``buildBaseOptions`` estimates it."""
    if not (system_prompt or tools):
        return list(messages)
    lead: Message = {"role": "system", "content": system_prompt or ""}
    if tools:
        lead["toolsAdded"] = list(tools)
    lead["timestamp"] = 0
    return [lead, *messages]


def request_body(
    model: Model,
    messages: list[Message],
    *,
    system_prompt: str | None = None,
    max_tokens: int | None = None,
    reasoning: str | None = None,
    memo: WireMemo | None = None,
    resume: TransformResume | None = None,
    wire_resume: WireResume | None = None,
    head_resume: HeadResume | None = None,
    tools: list[Any] | None = None,
) -> dict[str, Any]:
    """The chat-completions body pi-ai sends for ``messages`` (after ``convertToLlm``):
    ``normalizeContext`` (a ``systemPrompt`` and ``Context.tools`` become a leading system
    message, its ``toolsAdded`` the tools: ``createInitialSystemMessage``, pi-ai
    ``dist/utils/transcript.js:6-26``), then ``buildParams`` for the fake provider. ``memo``
    and ``resume``: see :func:`transform_messages`; ``wire_resume``: :func:`wire_messages`'s;
    ``head_resume``: the leading system message's (:class:`HeadResume`). ``tools``: an
    extension's ``complete()`` context's (the agent declares its tools on its system messages
    instead)."""
    transcript = fold_system_messages(normalize_context(messages, system_prompt, tools), head_resume)
    # The folded transcript's only system message is its head, whose ``toolsAdded`` are
    # ``getCurrentTools`` of the transcript (read there rather than replayed again, issue 16).
    head = transcript[0] if transcript and transcript[0].get("role") == "system" else None
    body: dict[str, Any] = {
        "model": model.id,
        "messages": wire_messages(
            transform_messages(transcript, model, memo=memo, resume=resume),
            takes_images="image" in model.input,
            memo=memo,
            resume=wire_resume,
        ),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if max_tokens:
        body["max_tokens"] = max_tokens
    tools = None if head is None else head.get("toolsAdded")
    if tools:
        if head_resume is None or head is not head_resume.head:
            body["tools"] = [_wire_tool(t) for t in tools]
        else:
            if head_resume.tools is None:
                head_resume.tools = [_wire_tool(t) for t in tools]
            body["tools"] = list(head_resume.tools)
    # streamSimple clamps the requested level to what the model supports (pi-ai
    # dist/api/openai-completions.js:508-509): ``xhigh`` on a model without a thinkingLevelMap
    # entry goes out as ``high``, ``off`` sends no effort.
    effort = clamp_thinking_level(model, reasoning) if reasoning else "off"
    if effort != "off":
        body["reasoning_effort"] = effort
    return body
