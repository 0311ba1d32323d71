"""The bridge's wire: JSON lines between ``bridge.ts`` (inside Pi) and the Python runtime.

One message per line, in both directions; :class:`Connection` frames them, thread-safely,
and resolves the futures of this side's calls when their replies arrive. The codec turns
Pi's JSON into the extension API's Python values and back: models (:func:`model_from_wire`),
event payloads (:func:`build_event`, a :mod:`~pi_continuity_harness.api.events` dataclass or a
:class:`GenericEvent`), handler results (:func:`result_to_wire`, ``None`` being JavaScript's
``undefined``) and tool declarations (:func:`tool_to_wire`). A line's encoding
(``wire_line``, and ``result_to_wire``) is ``api/wire_json.py``'s, which the simulator shares.
Pi's own stale-context and not-initialized errors come back as the API's exceptions, and any
other Error Pi's API threw as :class:`PiCallError` (the API's ``PiError``); the bridge's own
failures stay a plain :class:`BridgeCallError` (:func:`unwrap_reply`).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import (
    AfterProviderResponseEvent,
    AgentBeforeSettleEvent,
    AgentEndEvent,
    AgentSettledEvent,
    AgentStartEvent,
    BeforeAgentStartEvent,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    CompactionPreparation,
    CompactionSettings,
    ContextEvent,
    ContextWithSystemEvent,
    InputEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ModelSelectEvent,
    ProviderStreamEvent,
    ResourcesDiscoverEvent,
    SessionBeforeCompactEvent,
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionBeforeTreeEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    SessionTreeEvent,
    ThinkingLevelSelectEvent,
    ToolCallEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResultEvent,
    TreePreparation,
    TurnEndEvent,
    TurnStartEvent,
    UserBashEvent,
)
from pi_continuity_harness.api.extension_api import (
    CommandInfo,
    Model,
    NotInitializedError,
    PiError,
    StaleContextError,
    ToolDefinition,
    ToolInfo,
)
from pi_continuity_harness.api.wire_json import result_to_wire, wire_line
from pi_continuity_harness.errors import TargetError

__all__ = [
    "BridgeCallError",
    "BridgeClosedError",
    "Connection",
    "GenericEvent",
    "Json",
    "PiCallError",
    "build_event",
    "describe_error",
    "model_from_wire",
    "model_to_wire",
    "result_to_wire",
    "tool_to_wire",
    "unwrap_reply",
]

Json = dict[str, Any]


class BridgeCallError(TargetError, RuntimeError):
    """A call into Pi failed (Pi's error message is the text)."""


class BridgeClosedError(BridgeCallError):
    """Pi has gone away (stdin reached EOF)."""


class PiCallError(BridgeCallError, PiError):
    """Pi's API threw an Error on a call through the bridge (reply kind ``error``): the API's
    :class:`~pi_continuity_harness.api.PiError`, as the simulator raises it, and still a
    :class:`BridgeCallError` for code that catches that."""


def model_to_wire(model: Model) -> Json:
    """Every field of ``model`` (``Model.to_json``): ``bridge.ts`` ``modelFor`` hands Pi the
    registry's object when it is that model unchanged, else these fields over it (or over one of
    its provider's models), as a TypeScript extension's ``{...model, id: "other"}`` would be."""
    return model.to_json()


def model_from_wire(data: Any) -> Model | None:
    if not isinstance(data, dict) or not data.get("provider") or not data.get("id"):
        return None
    return Model(
        provider=str(data["provider"]),
        id=str(data["id"]),
        context_window=int(data.get("contextWindow") or 0),
        max_tokens=int(data.get("maxTokens") or 0),
        name=str(data.get("name") or data["id"]),
        api=str(data.get("api") or "openai-completions"),
        reasoning=bool(data.get("reasoning")),
        input=tuple(str(i) for i in data.get("input") or ("text",)),
    )


def describe_error(error: BaseException) -> str:
    return str(error) or type(error).__name__


def tool_to_wire(tool: ToolDefinition) -> Json:
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "parameters": tool.parameters,
        "promptSnippet": tool.prompt_snippet,
    }


def tool_info_from_wire(data: Any) -> ToolInfo:
    """One item of Pi's ``getAllTools()`` (agent-session.js:1160-1172) as :class:`ToolInfo`:
    ``promptGuidelines`` is absent where Pi's is ``undefined`` (``None``)."""
    guidelines = data.get("promptGuidelines")
    return ToolInfo(
        name=str(data.get("name")),
        description=str(data.get("description") or ""),
        parameters=dict(data.get("parameters") or {}),
        exposure=data.get("exposure") or "direct",
        prompt_guidelines=None if guidelines is None else tuple(str(g) for g in guidelines),
        source_info=dict(data.get("sourceInfo") or {}),
    )


def command_info_from_wire(data: Any) -> CommandInfo:
    """One item of Pi's ``getCommands()`` (agent-session.js:2849-2872) as :class:`CommandInfo`:
    ``description`` is absent where Pi's is ``undefined`` (``None``)."""
    description = data.get("description")
    return CommandInfo(
        name=str(data.get("name")),
        description=None if description is None else str(description),
        source=data.get("source"),
        source_info=dict(data.get("sourceInfo") or {}),
    )


def _snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class GenericEvent:
    """An event the bridge has no dataclass for: ``event.tool_name`` reads ``toolName``."""

    def __init__(self, data: Json) -> None:
        self.type = str(data.get("type", ""))
        self.data = data

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("data") or {}
        for key in (name, _snake_to_camel(name)):
            if key in data:
                return data[key]
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"GenericEvent({self.type!r})"


def _preparation(p: Json) -> CompactionPreparation:
    settings = p.get("settings") or {}
    file_ops = p.get("fileOps") or {}
    return CompactionPreparation(
        first_kept_entry_id=p.get("firstKeptEntryId"),  # type: ignore[arg-type]
        messages_to_summarize=list(p.get("messagesToSummarize") or []),
        turn_prefix_messages=list(p.get("turnPrefixMessages") or []),
        is_split_turn=bool(p.get("isSplitTurn")),
        tokens_before=p.get("tokensBefore"),  # type: ignore[arg-type]
        previous_summary=p.get("previousSummary"),
        file_ops={str(k): sorted(str(x) for x in v) for k, v in file_ops.items() if isinstance(v, list)},
        settings=CompactionSettings(
            enabled=bool(settings.get("enabled")),
            reserve_tokens=settings.get("reserveTokens"),  # type: ignore[arg-type]
            keep_recent_tokens=settings.get("keepRecentTokens"),  # type: ignore[arg-type]
        ),
    )


def build_event(data: Json, signal_from: Callable[[Any], AbortSignal | None]) -> Any:
    """The :mod:`events` dataclass for a Pi event payload (``GenericEvent`` for the rest)."""
    kind = data.get("type")

    def get(key: str) -> Any:
        return data.get(key)

    if kind == "session_start":
        return SessionStartEvent(reason=get("reason"), previous_session_file=get("previousSessionFile"))
    if kind == "session_shutdown":
        return SessionShutdownEvent(reason=get("reason"), target_session_file=get("targetSessionFile"))
    if kind == "session_before_switch":
        return SessionBeforeSwitchEvent(reason=get("reason"), target_session_file=get("targetSessionFile"))
    if kind == "session_before_fork":
        return SessionBeforeForkEvent(entry_id=get("entryId"), position=get("position") or "before")
    if kind == "session_before_tree":
        p = get("preparation") or {}
        return SessionBeforeTreeEvent(
            preparation=TreePreparation(
                target_id=str(p.get("targetId") or ""),
                old_leaf_id=p.get("oldLeafId"),
                common_ancestor_id=p.get("commonAncestorId"),
                entries_to_summarize=list(p.get("entriesToSummarize") or []),
                user_wants_summary=bool(p.get("userWantsSummary")),
                custom_instructions=p.get("customInstructions"),
                replace_instructions=p.get("replaceInstructions"),
                label=p.get("label"),
            ),
            signal=signal_from(get("signal")) or AbortSignal(),
        )
    if kind == "session_tree":
        return SessionTreeEvent(
            new_leaf_id=get("newLeafId"),
            old_leaf_id=get("oldLeafId"),
            summary_entry=get("summaryEntry"),
            from_extension=get("fromExtension"),
        )
    if kind == "session_before_compact":
        return SessionBeforeCompactEvent(
            preparation=_preparation(get("preparation") or {}),
            branch_entries=list(get("branchEntries") or []),
            custom_instructions=get("customInstructions"),
            reason=get("reason"),
            will_retry=bool(get("willRetry")),
            signal=signal_from(get("signal")) or AbortSignal(),
        )
    if kind == "session_compact":
        return SessionCompactEvent(
            compaction_entry=get("compactionEntry") or {},
            from_extension=bool(get("fromExtension")),
            reason=get("reason"),
            will_retry=bool(get("willRetry")),
        )
    if kind == "session_compact_failed":
        return SessionCompactFailedEvent(
            reason=get("reason"),
            error_message=get("errorMessage"),
            aborted=bool(get("aborted")),
            will_retry=bool(get("willRetry")),
            from_extension=bool(get("fromExtension")),
        )
    if kind == "model_select":
        return ModelSelectEvent(
            model=model_from_wire(get("model")),
            previous_model=model_from_wire(get("previousModel")),
            source=get("source"),
        )
    if kind == "thinking_level_select":
        return ThinkingLevelSelectEvent(level=str(get("level")), previous_level=str(get("previousLevel")))
    if kind == "input":
        return InputEvent(
            text=str(get("text") or ""),
            images=get("images"),
            source=get("source"),
            streaming_behavior=get("streamingBehavior"),
        )
    if kind == "before_agent_start":
        return BeforeAgentStartEvent(
            message_type=get("messageType"),
            prompt=get("prompt"),
            system_prompt=str(get("systemPrompt") or ""),
            message=get("message"),
        )
    if kind == "context":
        return ContextEvent(messages=list(get("messages") or []))
    if kind == "resources_discover":
        return ResourcesDiscoverEvent(cwd=str(get("cwd") or ""), reason=get("reason"))
    if kind == "context_with_system":
        return ContextWithSystemEvent(messages=list(get("messages") or []))
    if kind == "agent_start":
        return AgentStartEvent()
    if kind == "agent_end":
        return AgentEndEvent(messages=list(get("messages") or []))
    if kind == "agent_before_settle":
        # bridge.ts registerHandler leaves out ``context``; ``entries`` and ``continue`` are
        # what the earlier handlers returned, as Pi has them.
        return AgentBeforeSettleEvent(
            outcome=get("outcome") or "completed", entries=get("entries"), continue_=get("continue")
        )
    if kind == "agent_settled":
        return AgentSettledEvent(aborted=bool(get("aborted")))
    if kind == "turn_start":
        return TurnStartEvent(turn_index=int(get("turnIndex") or 0), timestamp=int(get("timestamp") or 0))
    if kind == "turn_end":
        return TurnEndEvent(
            turn_index=int(get("turnIndex") or 0),
            message=get("message") or {},
            tool_results=list(get("toolResults") or []),
            message_entry_id=get("messageEntryId"),
            tool_result_entry_ids=list(get("toolResultEntryIds") or []),
            outcome=get("outcome") or "completed",
            # bridge.ts registerHandler leaves out ``context``, as for agent_before_settle.
            entries=get("entries") if "entries" in data else [],
            continue_=get("continue") if "continue" in data else False,
        )
    if kind == "message_start":
        return MessageStartEvent(message=get("message") or {})
    if kind == "message_update":
        # bridge.ts registerHandler has already dropped the delta event's ``partial``.
        return MessageUpdateEvent(
            message=get("message") or {}, assistant_message_event=get("assistantMessageEvent") or {}
        )
    if kind == "message_end":
        return MessageEndEvent(message=get("message") or {})
    if kind == "tool_execution_start":
        return ToolExecutionStartEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            args=get("args") or {},
            parent_tool_call_id=get("parentToolCallId"),
        )
    if kind == "tool_execution_update":
        return ToolExecutionUpdateEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            args=get("args") or {},
            partial_result=get("partialResult") or {},
            parent_tool_call_id=get("parentToolCallId"),
        )
    if kind == "tool_execution_end":
        return ToolExecutionEndEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            result=get("result") or {},
            is_error=bool(get("isError")),
            duration_ms=get("durationMs"),
            parent_tool_call_id=get("parentToolCallId"),
        )
    if kind == "user_bash":
        return UserBashEvent(
            command=str(get("command") or ""),
            exclude_from_context=bool(get("excludeFromContext")),
            cwd=str(get("cwd") or ""),
        )
    if kind == "tool_call":
        return ToolCallEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            input=get("input") or {},
            parent_tool_call_id=get("parentToolCallId"),
        )
    if kind == "tool_result":
        return ToolResultEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            input=get("input") or {},
            content=list(get("content") or []),
            details=get("details"),
            is_error=bool(get("isError")),
            parent_tool_call_id=get("parentToolCallId"),
        )
    if kind == "before_provider_request":
        # A handler's result goes back as the payload (bridge.ts registerHandler returns it).
        return BeforeProviderRequestEvent(payload=get("payload"))
    if kind == "after_provider_response":
        return AfterProviderResponseEvent(status=int(get("status") or 0), headers=dict(get("headers") or {}))
    if kind == "before_provider_headers":
        return BeforeProviderHeadersEvent(headers=dict(get("headers") or {}))
    if kind == "provider_stream_event":
        return ProviderStreamEvent(
            data=get("data"),
            provider=str(get("provider") or ""),
            api=str(get("api") or ""),
            model=str(get("model") or ""),
        )
    return GenericEvent(data)


class Connection:
    """JSON lines over two binary streams; thread-safe sends; futures for replies."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[str, concurrent.futures.Future[Json]] = {}
        self._pending_lock = threading.Lock()
        self.closed = False

    def send(self, message: Json) -> None:
        # Encoded before the lock and the write: an encoding error is the caller's (a lone
        # surrogate used to raise UnicodeEncodeError, a ValueError, inside the ``except`` below
        # and mark the connection closed: every later call failed with "Pi has exited").
        self.send_line(wire_line(message))

    def send_line(self, line: bytes) -> None:
        """Write one encoded line (:func:`wire_line`, or a reply's ``reply_line``)."""
        with self._write_lock:
            try:
                self._writer.write(line)
                self._writer.flush()
            except (BrokenPipeError, OSError, ValueError):  # ValueError: write to a closed file
                self.closed = True

    def call(self, message: Json, *, noreply: bool = False) -> concurrent.futures.Future[Json] | None:
        if self.closed:
            raise BridgeClosedError("Pi has exited")
        call_id = f"p{next(self._ids)}"
        future: concurrent.futures.Future[Json] | None = None
        if not noreply:
            future = concurrent.futures.Future()
            with self._pending_lock:
                self._pending[call_id] = future
        self.send({**message, "type": "call", "id": call_id, **({"noreply": True} if noreply else {})})
        return future

    def read_forever(self, deliver: Callable[[Json], None], on_eof: Callable[[], None]) -> None:
        try:
            for line in iter(self._reader.readline, b""):
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    print(f"[bridge] unparsable line from Pi: {line[:200]!r}", file=sys.stderr)
                    continue
                if message.get("type") == "reply":
                    with self._pending_lock:
                        future = self._pending.pop(str(message.get("id")), None)
                    if future is not None and not future.done():
                        future.set_result(message)
                    continue
                deliver(message)
        except (OSError, ValueError):
            pass
        finally:
            self.closed = True
            with self._pending_lock:
                pending, self._pending = self._pending, {}
            for future in pending.values():
                if not future.done():
                    future.set_exception(BridgeClosedError("Pi has exited"))
            on_eof()


def unwrap_reply(reply: Json) -> Any:
    if "error" in reply:
        message = str(reply.get("error"))
        kind = reply.get("kind")
        if kind == "stale":
            raise StaleContextError(message)
        if kind == "notInitialized":
            raise NotInitializedError(message)
        if kind == "bridge":
            # The bridge's own failure (a call it cannot make, a Python callback that raised).
            raise BridgeCallError(message)
        raise PiCallError(message)
    return None if reply.get("undefined") else reply.get("value")
