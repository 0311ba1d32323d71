"""The extension API inside real Pi: ``pi``, ``ctx`` and their parts, as calls over the wire.

These are the bridge's implementations of :mod:`pi_continuity_harness.api` (the simulator's
are in ``simulator/runner.py``). Each object forwards to ``bridge.ts`` through a
:class:`Caller` bound to one extension instance and, for a ``ctx``, to one Pi context:
*synchronous* API methods (``ctx.is_idle()``, ``ctx.session_manager.get_entries()``) block on
a round trip, which the reader thread answers while the asyncio loop is busy in a handler;
fire-and-forget ones (``send_user_message``, the UI setters) do not wait. After a reload or a
session replacement an instance is stale and every call raises
:class:`~pi_continuity_harness.api.StaleContextError`, as in Pi.

What the objects need from the runtime that owns them is the :class:`RuntimePort` protocol.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import ContextUsage
from pi_continuity_harness.api.extension_api import (
    CommandHandler,
    CommandInfo,
    EventHandler,
    Mode,
    Model,
    NotInitializedError,
    ReplacedSessionContext,
    StaleContextError,
    ToolCallOutcome,
    ToolDefinition,
    ToolInfo,
)
from pi_continuity_harness.api.flags import flag_options
from pi_continuity_harness.targets.realpi.wire import (
    BridgeCallError,
    Connection,
    Json,
    command_info_from_wire,
    model_from_wire,
    model_to_wire,
    tool_info_from_wire,
    tool_to_wire,
    unwrap_reply,
)

__all__ = [
    "SYNC_CALL_TIMEOUT_S",
    "BridgeCommandContext",
    "BridgeContext",
    "BridgeExtensionAPI",
    "BridgeModelRegistry",
    "BridgeReplacedContext",
    "BridgeSessionManager",
    "BridgeToolContext",
    "BridgeUIContext",
    "Caller",
    "Instance",
    "RuntimePort",
]

#: Synchronous round trips answer at once; this only guards against a wedged Pi.
SYNC_CALL_TIMEOUT_S = 120.0


class RuntimePort(Protocol):
    """What the API objects need from the runtime that owns them (``bridge_runtime.RuntimePort``)."""

    conn: Connection
    descriptions: dict[tuple[int, str], str | None]

    def signal_from(self, ref: Any) -> AbortSignal | None: ...

    def signal_ref(self, signal: AbortSignal | None) -> Json | None: ...

    def register_callback(self, callback: Callable[[ReplacedSessionContext], Awaitable[None]]) -> str: ...

    def take_callback_error(self, cid: str) -> Exception | None: ...

    def register_compact_callback(self, on_complete: Any, on_error: Any) -> str: ...


@dataclasses.dataclass
class Instance:
    """One extension instance (one call of the factory)."""

    id: int
    loading: bool = True
    stale: bool = False
    handlers: list[tuple[str, EventHandler | None]] = dataclasses.field(default_factory=list)
    commands: dict[str, CommandHandler] = dataclasses.field(default_factory=dict)
    tools: dict[str, ToolDefinition] = dataclasses.field(default_factory=dict)
    #: Flags registered while the factory ran (``registerFlag``'s options), sent with the load
    #: reply; their defaults answer ``get_flag`` until the factory returns (loader.js:274-278).
    flags: dict[str, Json] = dataclasses.field(default_factory=dict)
    pending_flags: dict[str, Any] = dataclasses.field(default_factory=dict)

    def assert_active(self) -> None:
        if self.stale:
            raise StaleContextError()

    def require_runtime(self) -> None:
        self.assert_active()
        if self.loading:
            raise NotInitializedError()


class Caller:
    """Sends calls for one (instance, ctx) pair."""

    def __init__(self, runtime: RuntimePort, instance: Instance, ctx_id: str | None) -> None:
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
        return unwrap_reply(reply)

    async def call(self, target: str, method: str, *args: Any) -> Any:
        self._instance.assert_active()
        future = self._runtime.conn.call(self._message(target, method, list(args)))
        assert future is not None
        return unwrap_reply(await asyncio.wrap_future(future))

    def fire(self, target: str, method: str, *args: Any) -> None:
        self._instance.assert_active()
        self._runtime.conn.call(self._message(target, method, list(args)), noreply=True)


class BridgeTheme:
    """``ctx.ui.theme``: each ``fg`` is a round trip to Pi's own ``theme.fg`` (theme.js:202-207)."""

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

    def fg(self, color: str, text: str) -> str:
        return str(self._caller.sync("ui", "themeFg", color, text))


class BridgeUIContext:
    """``ctx.ui`` over RPC dialogs (answered by the harness's rules)."""

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

    @property
    def theme(self) -> BridgeTheme:
        return BridgeTheme(self._caller)

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

    def __init__(self, caller: Caller) -> None:
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

    def get_label(self, entry_id: str) -> str | None:
        value = self._caller.sync("sm", "getLabel", entry_id)
        return None if value is None else str(value)

    def get_tree(self) -> list[Json]:
        return list(self._caller.sync("sm", "getTree") or [])


class BridgeModelRegistry:
    """``ctx.model_registry`` backed by Pi's ModelRegistry (calls reach the fake server)."""

    def __init__(self, runtime: RuntimePort, caller: Caller) -> None:
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

    def __init__(self, runtime: RuntimePort, instance: Instance, info: Json) -> None:
        self._runtime = runtime
        self._instance = instance
        self._info = info
        self._caller = Caller(runtime, instance, str(info.get("id")) if info.get("id") else None)

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

    @property
    def thinking_level(self) -> str:
        # A round trip: Pi's getter reads the session's level at each access (runner.js:663-666).
        return str(self._caller.sync("ctx", "thinkingLevel"))

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


class BridgeToolContext(BridgeContext):
    """``ctx`` of a tool's ``execute`` (``ExtensionToolContext``, types.d.ts:289-301): ``ctx`` plus
    ``execute_tool``, which runs in Pi (bridge.ts ``performCtx`` ``executeTool``). The outcome
    comes back as JSON; Pi's ``onUpdate`` option, a JavaScript callback, is not offered."""

    async def execute_tool(
        self, name: str, args: Json | None = None, *, signal: AbortSignal | None = None
    ) -> ToolCallOutcome:
        value = await self._caller.call("ctx", "executeTool", name, args, self._runtime.signal_ref(signal))
        outcome: Json = value if isinstance(value, dict) else {}
        duration = outcome.get("durationMs")
        return ToolCallOutcome(
            tool_call=dict(outcome.get("toolCall") or {}),
            result=dict(outcome.get("result") or {}),
            is_error=bool(outcome.get("isError")),
            duration_ms=int(duration) if isinstance(duration, (int, float)) else None,
        )


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
        return await self._replace("newSession", [parent_session], with_session)

    async def fork(
        self,
        entry_id: str,
        *,
        position: Literal["before", "at"] = "before",
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> Json:
        return await self._replace("fork", [entry_id, position], with_session)

    async def switch_session(
        self,
        session_path: str,
        *,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> Json:
        return await self._replace("switchSession", [session_path], with_session)

    async def _replace(
        self,
        method: str,
        args: list[Any],
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None,
    ) -> Json:
        """A session replacement (``ctx.newSession``, ``fork``, ``switchSession``) with an optional
        ``with_session`` callback, registered by id: Pi calls it back with the new session's
        context before the call resolves."""
        callback = self._runtime.register_callback(with_session) if with_session is not None else None
        try:
            result = await self._caller.call("ctx", method, *args, callback)
        except BridgeCallError:
            # Pi's call rejects with what withSession threw, the callback's last step
            # (agent-session-runtime.js:139-146): the exception the Python callback raised, as a
            # JavaScript extension's await would get its own Error back (the simulator's too).
            raised = self._runtime.take_callback_error(callback) if callback is not None else None
            if raised is not None:
                raise raised from None
            raise
        if callback is not None:
            self._runtime.take_callback_error(callback)
        return dict(result) if isinstance(result, dict) else {"cancelled": False}

    async def reload(self) -> None:
        await self._caller.call("ctx", "reload")

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> Json:
        options: Json = {"summarize": summarize}
        if custom_instructions is not None:
            options["customInstructions"] = custom_instructions
        if replace_instructions is not None:
            options["replaceInstructions"] = replace_instructions
        if label is not None:
            options["label"] = label
        result = await self._caller.call("ctx", "navigateTree", target_id, options)
        return dict(result) if isinstance(result, dict) else {"cancelled": False}


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

    def __init__(self, runtime: RuntimePort, instance: Instance) -> None:
        self._runtime = runtime
        self._instance = instance
        self._caller = Caller(runtime, instance, None)

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

    def register_flag(
        self,
        name: str,
        *,
        type: Literal["boolean", "string"],
        default: bool | str | None = None,
        description: str | None = None,
    ) -> None:
        instance = self._instance
        instance.assert_active()
        options = flag_options(name, type, default, description, check=instance.loading)
        if instance.loading:
            # Pi registers it when the factory's registrations are replayed (bridge.ts ``load``).
            instance.flags[name] = options
            if default is not None:
                instance.pending_flags.setdefault(name, default)
            return
        self._caller.sync("pi", "registerFlag", name, options)

    def get_flag(self, name: str) -> bool | str | None:
        instance = self._instance
        instance.assert_active()
        if instance.loading:
            # Pi's pending default (loader.js:306-311); a value an earlier extension's default
            # gave the runtime is not seen here while the factory runs.
            return instance.pending_flags.get(name) if name in instance.flags else None
        value = self._caller.sync("pi", "getFlag", name)
        return value if isinstance(value, (bool, str)) else None

    def register_tool(self, tool: ToolDefinition) -> None:
        instance = self._instance
        instance.assert_active()
        instance.tools[tool.name] = tool
        if not instance.loading:
            self._runtime.conn.send(
                {"type": "register", "inst": instance.id, "kind": "tool", "tool": tool_to_wire(tool)}
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

    def set_label(self, entry_id: str, label: str | None = None) -> None:
        # A round trip: Pi's ``appendLabelChange`` throws for an unknown entry
        # (session-manager.js:1056-1058), which the caller gets as ``PiError``.
        self._instance.require_runtime()
        self._caller.sync("pi", "setLabel", entry_id, label)

    def get_active_tools(self) -> list[str]:
        self._instance.require_runtime()
        return [str(t) for t in self._caller.sync("pi", "getActiveTools") or []]

    def get_all_tools(self) -> list[ToolInfo]:
        self._instance.require_runtime()
        return [tool_info_from_wire(t) for t in self._caller.sync("pi", "getAllTools") or []]

    def get_commands(self) -> list[CommandInfo]:
        self._instance.require_runtime()
        return [command_info_from_wire(c) for c in self._caller.sync("pi", "getCommands") or []]

    def set_active_tools(self, tool_names: list[str]) -> None:
        # A round trip, not fire-and-forget: Pi's ``setActiveTools`` is synchronous, so what
        # ``get_active_tools`` and the next request see is settled when this returns.
        self._instance.require_runtime()
        self._caller.sync("pi", "setActiveTools", list(tool_names))

    async def set_model(self, model: Model) -> bool:
        self._instance.require_runtime()
        return bool(await self._caller.call("pi", "setModel", model_to_wire(model)))

    def get_thinking_level(self) -> str:
        self._instance.require_runtime()
        return str(self._caller.sync("pi", "getThinkingLevel"))

    def set_thinking_level(self, level: str) -> None:
        # A round trip, as ``set_active_tools``: Pi's ``setThinkingLevel`` is synchronous, so the
        # entry is appended and ``get_thinking_level`` answers the new level when this returns.
        self._instance.require_runtime()
        self._caller.sync("pi", "setThinkingLevel", level)
