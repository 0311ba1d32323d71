"""The Python side of the bridge: run a Python extension inside real Pi (see ``bridge.ts``).

Started by ``bridge.ts`` as::

    python -m pi_continuity_harness.features.realpi.bridge_runtime --extension module:factory \\
        [--config-dir-name .pi] [--faults plan.json]

It reads JSON lines from stdin and writes JSON lines to the real stdout (``print`` and
``sys.stdout`` of the extension go to stderr, so they cannot corrupt the protocol). The
process ends at stdin EOF, which is when Pi ends.

Concurrency: a reader thread parses stdin. Replies to this side's calls resolve
:class:`concurrent.futures.Future` objects directly, so a *synchronous* API method (``ctx.is_idle()``,
``ctx.session_manager.get_entries()``, ``pi.get_settings()``) can block on a round trip while the
asyncio loop is busy in a handler. Every other message is handed to the asyncio loop, and each
request (event, command, tool, callback) runs as its own task: a command can run while a
``session_before_compact`` handler awaits its synthesis, as in Pi.

Semantics are those of the simulator's runner (``simulator/runner.py``): action methods raise
:class:`NotInitializedError` while the factory runs; after a reload or session replacement (the
next ``load``) a captured ``pi``/``ctx`` raises :class:`StaleContextError` (Pi's own stale errors
map to it as well); ``send_user_message`` and the UI setters are fire-and-forget; a
``model_registry.complete()`` whose signal aborts resolves with ``stopReason: "aborted"`` (the
abort reaches Pi's own ``complete()`` signal); ``None`` results are ``undefined`` in Pi.

Filesystem faults (``--faults``): the simulator's :class:`FilesystemMonitor` is installed as an
audit hook here, over the real workspace directories. Every observed operation and fault is
appended to the plan's ``records`` file (JSON lines, the simulator's trace records ``fs`` and
``fault``); at start the counters are replayed from that file, so ``occurrence``/``times``
count across Pi restarts as they do across simulated restarts. A ``crash`` effect kills the
whole Pi process group (Pi and this process), as the simulated process dies. PiTarget gives the
implementation under test a plan even when the scenario has no fs fault, so its file operations
are always observed (``Observation.fs_events``).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import dataclasses
import inspect
import itertools
import json
import os
import signal as signal_module
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any, Literal

from ...simulator import extension_api
from ...simulator.abort import AbortController, AbortSignal
from ...simulator.events import (
    AgentEndEvent,
    AgentSettledEvent,
    AgentStartEvent,
    BeforeAgentStartEvent,
    BeforeCompactResult,
    BeforeSwitchResult,
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    ContextUsage,
    InputEvent,
    InputResult,
    MessageEndEvent,
    MessageStartEvent,
    ModelSelectEvent,
    SessionBeforeCompactEvent,
    SessionBeforeSwitchEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    ToolCallEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ...simulator.extension_api import (
    CommandHandler,
    EventHandler,
    ExtensionFactory,
    Mode,
    Model,
    NotInitializedError,
    ReplacedSessionContext,
    StaleContextError,
    ToolDefinition,
    ToolResult,
)
from ...simulator.faults import FilesystemMonitor, FsFault, activate_monitor
from ...simulator.simulation import resolve_implementation
from ...simulator.trace import Trace

__all__ = [
    "BridgeCallError",
    "BridgeCommandContext",
    "BridgeContext",
    "BridgeExtensionAPI",
    "BridgeReplacedContext",
    "BridgeRuntime",
    "GenericEvent",
    "build_event",
    "main",
    "model_from_wire",
    "model_to_wire",
    "result_to_wire",
]

Json = dict[str, Any]
#: Synchronous round trips answer at once; this only guards against a wedged Pi.
SYNC_CALL_TIMEOUT_S = 120.0


class BridgeCallError(RuntimeError):
    """A call into Pi failed (Pi's error message is the text)."""


class BridgeClosedError(BridgeCallError):
    """Pi has gone away (stdin reached EOF)."""


# =============================================================================== wire helpers


def model_to_wire(model: Model) -> Json:
    return {"provider": model.provider, "id": model.id}


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


def _json_default(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, BeforeCompactResult | BeforeSwitchResult | InputResult):
        return result_to_wire(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def result_to_wire(value: Any) -> Any:
    """A handler's return value in Pi's JSON shape (``None`` stays ``None``: undefined)."""
    if isinstance(value, BeforeCompactResult):
        out: Json = {}
        if value.cancel:
            out["cancel"] = True
        if value.compaction is not None:
            out["compaction"] = value.compaction.to_json()
        return out
    if isinstance(value, BeforeSwitchResult):
        return {"cancel": True} if value.cancel else {}
    if isinstance(value, InputResult):
        data: Json = {"action": value.action}
        if value.text is not None:
            data["text"] = value.text
        if value.images is not None:
            data["images"] = value.images
        return data
    if isinstance(value, CompactionResult):
        return value.to_json()
    if isinstance(value, ToolResult):
        return {
            "content": value.content,
            "details": value.details,
            "isError": value.is_error,
            "terminate": value.terminate,
        }
    return value


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


# =============================================================================== events


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
    if kind == "agent_start":
        return AgentStartEvent()
    if kind == "agent_end":
        return AgentEndEvent(messages=list(get("messages") or []))
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
        )
    if kind == "message_start":
        return MessageStartEvent(message=get("message") or {})
    if kind == "message_end":
        return MessageEndEvent(message=get("message") or {})
    if kind == "tool_execution_start":
        return ToolExecutionStartEvent(
            tool_call_id=str(get("toolCallId")), tool_name=str(get("toolName")), args=get("args") or {}
        )
    if kind == "tool_execution_end":
        return ToolExecutionEndEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            result=get("result") or {},
            is_error=bool(get("isError")),
        )
    if kind == "tool_call":
        return ToolCallEvent(
            tool_call_id=str(get("toolCallId")), tool_name=str(get("toolName")), input=get("input") or {}
        )
    if kind == "tool_result":
        return ToolResultEvent(
            tool_call_id=str(get("toolCallId")),
            tool_name=str(get("toolName")),
            input=get("input") or {},
            content=list(get("content") or []),
            details=get("details"),
            is_error=bool(get("isError")),
        )
    return GenericEvent(data)


# =============================================================================== transport


class _Connection:
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
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=_json_default)
        with self._write_lock:
            try:
                self._writer.write(data.encode("utf-8") + b"\n")
                self._writer.flush()
            except (BrokenPipeError, OSError, ValueError):
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


def _unwrap(reply: Json) -> Any:
    if "error" in reply:
        message = str(reply.get("error"))
        kind = reply.get("kind")
        if kind == "stale":
            raise StaleContextError(message)
        if kind == "notInitialized":
            raise NotInitializedError(message)
        raise BridgeCallError(message)
    return None if reply.get("undefined") else reply.get("value")


# =============================================================================== API objects


@dataclasses.dataclass
class _Instance:
    """One extension instance (one call of the factory)."""

    id: int
    loading: bool = True
    stale: bool = False
    handlers: list[tuple[str, EventHandler | None]] = dataclasses.field(default_factory=list)
    commands: dict[str, CommandHandler] = dataclasses.field(default_factory=dict)
    tools: dict[str, ToolDefinition] = dataclasses.field(default_factory=dict)

    def assert_active(self) -> None:
        if self.stale:
            raise StaleContextError()

    def require_runtime(self) -> None:
        self.assert_active()
        if self.loading:
            raise NotInitializedError()


class _Caller:
    """Sends calls for one (instance, ctx) pair."""

    def __init__(self, runtime: BridgeRuntime, instance: _Instance, ctx_id: str | None) -> None:
        self._runtime = runtime
        self._instance = instance
        self._ctx_id = ctx_id

    def _message(self, target: str, method: str, args: list[Any]) -> Json:
        return {
            "inst": self._instance.id,
            "ctx": self._ctx_id,
            "target": target,
            "method": method,
            "args": args,
        }

    def sync(self, target: str, method: str, *args: Any) -> Any:
        self._instance.assert_active()
        future = self._runtime.conn.call(self._message(target, method, list(args)))
        assert future is not None
        try:
            reply = future.result(timeout=SYNC_CALL_TIMEOUT_S)
        except concurrent.futures.TimeoutError:
            raise BridgeCallError(f"{target}.{method}: no answer from Pi") from None
        return _unwrap(reply)

    async def call(self, target: str, method: str, *args: Any) -> Any:
        self._instance.assert_active()
        future = self._runtime.conn.call(self._message(target, method, list(args)))
        assert future is not None
        return _unwrap(await asyncio.wrap_future(future))

    def fire(self, target: str, method: str, *args: Any) -> None:
        self._instance.assert_active()
        self._runtime.conn.call(self._message(target, method, list(args)), noreply=True)


class BridgeUIContext:
    """``ctx.ui`` over RPC dialogs (answered by the harness's rules)."""

    def __init__(self, caller: _Caller) -> None:
        self._caller = caller

    def notify(self, message: str, notify_type: Literal["info", "warning", "error"] = "info") -> None:
        self._caller.fire("ui", "notify", message, notify_type)

    def set_status(self, key: str, text: str | None) -> None:
        self._caller.fire("ui", "setStatus", key, text)

    def set_widget(
        self,
        key: str,
        lines: list[str] | None,
        *,
        placement: Literal["aboveEditor", "belowEditor"] | None = None,
    ) -> None:
        self._caller.fire("ui", "setWidget", key, lines, placement)

    @staticmethod
    def _ms(timeout: float | None) -> int | None:
        return None if timeout is None else round(timeout * 1000)

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        value = await self._caller.call("ui", "select", title, list(options), self._ms(timeout))
        return None if value is None else str(value)

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return bool(await self._caller.call("ui", "confirm", title, message, self._ms(timeout)))

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        value = await self._caller.call("ui", "input", title, placeholder, self._ms(timeout))
        return None if value is None else str(value)

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        value = await self._caller.call("ui", "editor", title, prefill)
        return None if value is None else str(value)


class BridgeSessionManager:
    """``ctx.session_manager``: every getter is a live round trip to Pi's SessionManager."""

    def __init__(self, caller: _Caller) -> None:
        self._caller = caller

    def get_session_id(self) -> str:
        return str(self._caller.sync("sm", "getSessionId"))

    def get_session_file(self) -> str | None:
        value = self._caller.sync("sm", "getSessionFile")
        return None if value is None else str(value)

    def get_session_dir(self) -> str:
        return str(self._caller.sync("sm", "getSessionDir"))

    def get_cwd(self) -> str:
        return str(self._caller.sync("sm", "getCwd"))

    def get_header(self) -> Json | None:
        value = self._caller.sync("sm", "getHeader")
        return value if isinstance(value, dict) else None

    def get_entries(self) -> list[Json]:
        return list(self._caller.sync("sm", "getEntries") or [])

    def get_entry(self, entry_id: str) -> Json | None:
        value = self._caller.sync("sm", "getEntry", entry_id)
        return value if isinstance(value, dict) else None

    def get_leaf_id(self) -> str | None:
        value = self._caller.sync("sm", "getLeafId")
        return None if value is None else str(value)

    def get_leaf_entry(self) -> Json | None:
        value = self._caller.sync("sm", "getLeafEntry")
        return value if isinstance(value, dict) else None

    def get_branch(self, from_id: str | None = None) -> list[Json]:
        args = [] if from_id is None else [from_id]
        return list(self._caller.sync("sm", "getBranch", *args) or [])

    def get_session_name(self) -> str | None:
        value = self._caller.sync("sm", "getSessionName")
        return None if value is None else str(value)


class BridgeModelRegistry:
    """``ctx.model_registry`` backed by Pi's ModelRegistry (calls reach the fake server)."""

    def __init__(self, runtime: BridgeRuntime, caller: _Caller) -> None:
        self._runtime = runtime
        self._caller = caller

    def find(self, provider: str, model_id: str) -> Model | None:
        return model_from_wire(self._caller.sync("registry", "find", provider, model_id))

    def get_all(self) -> list[Model]:
        return [m for m in (model_from_wire(d) for d in self._caller.sync("registry", "getAll") or []) if m]

    def get_available(self) -> list[Model]:
        models = self._caller.sync("registry", "getAvailable") or []
        return [m for m in (model_from_wire(d) for d in models) if m]

    def has_configured_auth(self, model: Model) -> bool:
        return bool(self._caller.sync("registry", "hasConfiguredAuth", model_to_wire(model)))

    async def complete(
        self,
        model: Model,
        context: Json,
        *,
        max_tokens: int | None = None,
        signal: AbortSignal | None = None,
        reasoning: str | None = None,
    ) -> Json:
        effective = reasoning if (reasoning and model.reasoning and reasoning != "off") else None
        result = await self._caller.call(
            "registry",
            "complete",
            model_to_wire(model),
            context,
            max_tokens,
            self._runtime.signal_ref(signal),
            effective,
        )
        return (
            dict(result) if isinstance(result, dict) else {"stopReason": "error", "errorMessage": str(result)}
        )


class BridgeContext:
    """``ctx`` for handlers and tools. Static fields come with the event; the rest is live."""

    def __init__(self, runtime: BridgeRuntime, instance: _Instance, info: Json) -> None:
        self._runtime = runtime
        self._instance = instance
        self._info = info
        self._caller = _Caller(runtime, instance, str(info.get("id")) if info.get("id") else None)

    @property
    def ui(self) -> BridgeUIContext:
        self._instance.assert_active()
        return BridgeUIContext(self._caller)

    @property
    def mode(self) -> Mode:
        self._instance.assert_active()
        mode: Mode = self._info.get("mode") or "rpc"
        return mode

    @property
    def has_ui(self) -> bool:
        self._instance.assert_active()
        return bool(self._info.get("hasUI"))

    @property
    def cwd(self) -> str:
        self._instance.assert_active()
        cwd = self._info.get("cwd")
        return str(cwd) if cwd is not None else os.getcwd()

    @property
    def session_manager(self) -> BridgeSessionManager:
        self._instance.assert_active()
        return BridgeSessionManager(self._caller)

    @property
    def model_registry(self) -> BridgeModelRegistry:
        self._instance.assert_active()
        return BridgeModelRegistry(self._runtime, self._caller)

    @property
    def model(self) -> Model | None:
        return model_from_wire(self._caller.sync("ctx", "model"))

    @property
    def signal(self) -> AbortSignal | None:
        return self._runtime.signal_from(self._caller.sync("ctx", "signal"))

    def is_idle(self) -> bool:
        return bool(self._caller.sync("ctx", "isIdle"))

    def is_project_trusted(self) -> bool:
        return bool(self._caller.sync("ctx", "isProjectTrusted"))

    def abort(self) -> None:
        self._caller.fire("ctx", "abort")

    def has_pending_messages(self) -> bool:
        return bool(self._caller.sync("ctx", "hasPendingMessages"))

    def shutdown(self) -> None:
        self._caller.fire("ctx", "shutdown")

    def get_context_usage(self) -> ContextUsage | None:
        value = self._caller.sync("ctx", "getContextUsage")
        if not isinstance(value, dict):
            return None
        return ContextUsage(
            tokens=value.get("tokens"),
            context_window=int(value.get("contextWindow") or 0),
            percent=value.get("percent"),
        )

    def compact(
        self,
        *,
        custom_instructions: str | None = None,
        on_complete: Callable[[Json], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        callback = self._runtime.register_compact_callback(on_complete, on_error)
        self._caller.fire("ctx", "compact", custom_instructions, callback)

    def get_system_prompt(self) -> str:
        return str(self._caller.sync("ctx", "getSystemPrompt") or "")


class BridgeCommandContext(BridgeContext):
    """The command handler context: session controls on top of ``ctx``."""

    async def wait_for_idle(self) -> None:
        await self._caller.call("ctx", "waitForIdle")

    async def new_session(
        self,
        *,
        parent_session: str | None = None,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> Json:
        callback = self._runtime.register_callback(with_session) if with_session is not None else None
        result = await self._caller.call("ctx", "newSession", parent_session, callback)
        return dict(result) if isinstance(result, dict) else {"cancelled": False}

    async def reload(self) -> None:
        await self._caller.call("ctx", "reload")


class BridgeReplacedContext(BridgeCommandContext):
    """``with_session``'s ctx: Pi's ``ReplacedSessionContext``; its senders resolve when the
    run they start has settled (the bridge awaits Pi's promise)."""

    async def send_user_message(
        self, content: str | list[Json], *, deliver_as: Literal["steer", "followUp"] | None = None
    ) -> None:
        options: Json = {"deliverAs": deliver_as} if deliver_as is not None else {}
        await self._caller.call("ctx", "sendUserMessage", content, options or None)

    async def send_message(
        self,
        message: Json,
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None:
        options: Json = {}
        if trigger_turn is not None:
            options["triggerTurn"] = trigger_turn
        if deliver_as is not None:
            options["deliverAs"] = deliver_as
        await self._caller.call("ctx", "sendMessage", message, options or None)


class BridgeExtensionAPI:
    """``pi`` for one extension instance."""

    def __init__(self, runtime: BridgeRuntime, instance: _Instance) -> None:
        self._runtime = runtime
        self._instance = instance
        self._caller = _Caller(runtime, instance, None)

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        instance = self._instance
        instance.assert_active()
        index = len(instance.handlers)
        instance.handlers.append((event, handler))
        if not instance.loading:
            self._runtime.conn.send(
                {"type": "register", "inst": instance.id, "kind": "handler", "event": event, "index": index}
            )

        def unsubscribe() -> None:
            # Pi keeps the bridged handler; it answers ``undefined`` from now on.
            instance.handlers[index] = (event, None)

        return unsubscribe

    def register_command(
        self,
        name: str,
        handler: CommandHandler,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], list[Json] | None] | None = None,
    ) -> None:
        instance = self._instance
        instance.assert_active()
        known = name in instance.commands
        instance.commands[name] = handler
        if not instance.loading and not known:
            self._runtime.conn.send(
                {
                    "type": "register",
                    "inst": instance.id,
                    "kind": "command",
                    "name": name,
                    "description": description,
                }
            )
        self._runtime.descriptions[(instance.id, name)] = description

    def register_tool(self, tool: ToolDefinition) -> None:
        instance = self._instance
        instance.assert_active()
        instance.tools[tool.name] = tool
        if not instance.loading:
            self._runtime.conn.send(
                {"type": "register", "inst": instance.id, "kind": "tool", "tool": _tool_wire(tool)}
            )

    def send_message(
        self,
        message: Json,
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None:
        self._instance.require_runtime()
        options: Json = {}
        if trigger_turn is not None:
            options["triggerTurn"] = trigger_turn
        if deliver_as is not None:
            options["deliverAs"] = deliver_as
        self._caller.fire("pi", "sendMessage", message, options or None)

    def send_user_message(
        self,
        content: str | list[Json],
        *,
        deliver_as: Literal["steer", "followUp"] | None = None,
        expand_prompt_templates: bool = False,
    ) -> None:
        self._instance.require_runtime()
        options: Json = {}
        if deliver_as is not None:
            options["deliverAs"] = deliver_as
        if expand_prompt_templates:
            options["expandPromptTemplates"] = True
        self._caller.fire("pi", "sendUserMessage", content, options or None)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self._instance.require_runtime()
        self._caller.fire("pi", "appendEntry", custom_type, data)

    def get_settings(self) -> Json:
        self._instance.require_runtime()
        value = self._caller.sync("pi", "getSettings")
        return dict(value) if isinstance(value, dict) else {}

    def get_session_name(self) -> str | None:
        self._instance.require_runtime()
        value = self._caller.sync("pi", "getSessionName")
        return None if value is None else str(value)

    def set_session_name(self, name: str) -> None:
        self._instance.require_runtime()
        self._caller.fire("pi", "setSessionName", name)

    def get_active_tools(self) -> list[str]:
        self._instance.require_runtime()
        return [str(t) for t in self._caller.sync("pi", "getActiveTools") or []]

    async def set_model(self, model: Model) -> bool:
        self._instance.require_runtime()
        return bool(await self._caller.call("pi", "setModel", model_to_wire(model)))

    def get_thinking_level(self) -> str:
        self._instance.require_runtime()
        return str(self._caller.sync("pi", "getThinkingLevel"))


def _tool_wire(tool: ToolDefinition) -> Json:
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "parameters": tool.parameters,
        "promptSnippet": tool.prompt_snippet,
    }


# =============================================================================== runtime


class BridgeRuntime:
    """Dispatches Pi's requests to the Python extension's instances."""

    def __init__(self, conn: _Connection, factory: ExtensionFactory, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.factory = factory
        self.loop = loop
        self.instances: dict[int, _Instance] = {}
        self.current: _Instance | None = None
        self.descriptions: dict[tuple[int, str], str | None] = {}
        self._signals: dict[str, AbortController] = {}
        self._signal_ids: dict[int, tuple[AbortSignal, str]] = {}
        self._py_signal_ids = itertools.count(1)
        self._callback_ids = itertools.count(1)
        self._callbacks: dict[str, Callable[[ReplacedSessionContext], Awaitable[None]]] = {}
        self._compact_callbacks: dict[str, tuple[Any, Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.eof = asyncio.Event()

    # ------------------------------------------------------------------ signals, callbacks
    def signal_from(self, ref: Any) -> AbortSignal | None:
        if not isinstance(ref, dict) or not ref.get("$signal"):
            return None
        sid = str(ref["$signal"])
        controller = self._signals.get(sid)
        if controller is None:
            controller = AbortController()
            self._signals[sid] = controller
            self._signal_ids[id(controller.signal)] = (controller.signal, sid)
        if ref.get("aborted") and not controller.signal.aborted:
            controller.abort("aborted")
        return controller.signal

    def signal_ref(self, signal: AbortSignal | None) -> Json | None:
        if signal is None:
            return None
        known = self._signal_ids.get(id(signal))
        if known is not None and known[0] is signal:
            sid = known[1]
            return {"$signal": sid, "aborted": signal.aborted, "py": sid.startswith("py")}
        sid = f"py{next(self._py_signal_ids)}"
        self._signal_ids[id(signal)] = (signal, sid)
        signal.add_listener(lambda: self.conn.send({"type": "abort_signal", "signal": sid}))
        return {"$signal": sid, "aborted": signal.aborted, "py": True}

    def register_callback(self, callback: Callable[[ReplacedSessionContext], Awaitable[None]]) -> str:
        cid = f"cb{next(self._callback_ids)}"
        self._callbacks[cid] = callback
        return cid

    def register_compact_callback(self, on_complete: Any, on_error: Any) -> str:
        cid = f"cc{next(self._callback_ids)}"
        self._compact_callbacks[cid] = (on_complete, on_error)
        return cid

    # ------------------------------------------------------------------ messages
    def deliver(self, message: Json) -> None:
        """Called from the reader thread."""
        self.loop.call_soon_threadsafe(self._on_message, message)

    def on_eof(self) -> None:
        self.loop.call_soon_threadsafe(self.eof.set)

    def _on_message(self, message: Json) -> None:
        kind = message.get("type")
        if kind == "abort":
            controller = self._signals.get(str(message.get("signal")))
            if controller is not None:
                controller.abort(str(message.get("reason") or "aborted"))
            return
        if kind == "compact_done":
            on_complete, on_error = self._compact_callbacks.pop(str(message.get("callback")), (None, None))
            try:
                if "error" in message:
                    if on_error is not None:
                        on_error(RuntimeError(str(message["error"])))
                elif on_complete is not None:
                    on_complete(message.get("result") or {})
            except Exception as error:
                print(f"[bridge] ctx.compact callback raised: {_describe(error)}", file=sys.stderr)
            return
        if kind in ("load", "event", "command", "tool", "callback"):
            task = self.loop.create_task(self._serve(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        print(f"[bridge] unknown message from Pi: {kind!r}", file=sys.stderr)

    async def _serve(self, message: Json) -> None:
        try:
            value = await self._handle(message)
        except Exception as error:
            self.conn.send({"type": "error", "id": message.get("id"), "error": _describe(error)})
            return
        except BaseException as error:  # SimulatedCrash from an fs fault, cancellation at exit
            self.conn.send({"type": "error", "id": message.get("id"), "error": _describe(error)})
            raise
        wire = result_to_wire(value)
        self.conn.send({"type": "result", "id": message.get("id"), "value": wire, "undefined": wire is None})

    async def _handle(self, message: Json) -> Any:
        kind = message.get("type")
        if kind == "load":
            return await self._load(int(message["inst"]))
        instance = self.instances.get(int(message.get("inst") or 0))
        info = message.get("ctx") or {}
        if kind == "callback":
            callback = self._callbacks.pop(str(message.get("callback")), None)
            if callback is None:
                return None
            detached = _Instance(id=int(info.get("inst") or 0), loading=False)
            await callback(BridgeReplacedContext(self, detached, info))
            return None
        if instance is None:
            raise BridgeCallError(f"unknown extension instance {message.get('inst')}")
        if kind == "event":
            _event_name, handler = instance.handlers[int(message["handler"])]
            if handler is None:
                return None
            event = build_event(message.get("event") or {}, self.signal_from)
            return await _maybe_await(handler(event, BridgeContext(self, instance, info)))
        if kind == "command":
            command = instance.commands.get(str(message.get("name")))
            if command is None:
                raise BridgeCallError(f"unknown command {message.get('name')}")
            await _maybe_await(
                command(str(message.get("args") or ""), BridgeCommandContext(self, instance, info))
            )
            return None
        if kind == "tool":
            tool = instance.tools.get(str(message.get("name")))
            if tool is None:
                raise BridgeCallError(f"unknown tool {message.get('name')}")
            result = await tool.execute(
                str(message.get("toolCallId")),
                message.get("params") or {},
                self.signal_from(message.get("signal")),
                BridgeContext(self, instance, info),
            )
            return result
        raise BridgeCallError(f"unknown request {kind}")

    async def _load(self, inst_id: int) -> Json:
        for previous in self.instances.values():
            previous.stale = True
        instance = _Instance(id=inst_id)
        self.instances[inst_id] = instance
        self.current = instance
        api = BridgeExtensionAPI(self, instance)
        try:
            await _maybe_await(self.factory(api))
        finally:
            instance.loading = False
        return {
            "handlers": [[event, i] for i, (event, _h) in enumerate(instance.handlers)],
            "commands": [[name, self.descriptions.get((inst_id, name))] for name in instance.commands],
            "tools": [_tool_wire(t) for t in instance.tools.values()],
        }

    async def run_until_eof(self) -> None:
        await self.eof.wait()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


# =============================================================================== faults


def _replay_counters(monitor: FilesystemMonitor, records_path: str) -> None:
    """Advance the fault counters over the operations earlier processes of this run saw."""
    try:
        with open(records_path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("kind") == "fs":
            monitor.replay(str(record.get("name")), str(record.get("path")))


def install_fault_monitor(plan_path: str) -> FilesystemMonitor:
    """Read a fault plan, replay earlier records, and activate the monitor for this process."""
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    records_path = str(plan["records"])
    faults = tuple(FsFault.model_validate(f) for f in plan.get("faults") or [])
    records = open(records_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    started = time.monotonic()
    trace = Trace(lambda: round((time.monotonic() - started) * 1000), "")

    def crash() -> None:
        with contextlib.suppress(OSError):
            records.flush()
        with contextlib.suppress(OSError):
            os.killpg(os.getpgrp(), signal_module.SIGKILL)
        os._exit(137)

    monitor = FilesystemMonitor(
        workdir=str(plan["workdir"]),
        placeholders={str(k): str(v) for k, v in (plan.get("placeholders") or {}).items()},
        trace=trace,
        faults=faults,
        on_crash=crash,
    )

    def sink(record: Json) -> None:
        monitor.host_io += 1
        try:
            records.write(json.dumps({**record, "pid": os.getpid()}, ensure_ascii=False) + "\n")
            records.flush()
        finally:
            monitor.host_io -= 1

    trace.sinks.append(sink)
    _replay_counters(monitor, records_path)
    activate_monitor(monitor).__enter__()
    return monitor


# =============================================================================== main


def _protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    """Keep fds 0/1 for the protocol; point the extension's stdin/stdout elsewhere."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bridge_runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--extension", required=True, help="module:factory or an implementation name")
    parser.add_argument("--config-dir-name", default=None, help="Pi's CONFIG_DIR_NAME")
    parser.add_argument("--faults", default=None, help="JSON file with the filesystem fault plan")
    args = parser.parse_args(argv)
    proto_in, proto_out = _protocol_streams()
    if args.config_dir_name:
        extension_api.CONFIG_DIR_NAME = args.config_dir_name
        simulator_pkg = sys.modules.get("pi_continuity_harness.simulator")
        if simulator_pkg is not None:
            simulator_pkg.CONFIG_DIR_NAME = args.config_dir_name  # type: ignore[attr-defined]
    _name, factory = resolve_implementation(args.extension)
    if args.faults:
        install_fault_monitor(args.faults)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    conn = _Connection(proto_in, proto_out)
    runtime = BridgeRuntime(conn, factory, loop)
    reader = threading.Thread(
        target=conn.read_forever, args=(runtime.deliver, runtime.on_eof), name="bridge-reader", daemon=True
    )
    reader.start()
    try:
        loop.run_until_complete(runtime.run_until_eof())
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
