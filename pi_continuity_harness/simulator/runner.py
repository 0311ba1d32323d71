"""The extension runner: loading, and dispatch with Pi's result rules.

Ported from ``dist/core/extensions/runner.js`` and ``loader.js``:

* extensions run in load order, handlers in registration order, the handler list
  snapshotted per dispatch;
* a handler that raises is isolated: an ``extension_error`` is reported and dispatch goes
  on (§9.22); it does not cancel a compaction;
* for the ``session_before_*`` events the last truthy result wins (JavaScript truthiness,
  so ``{}`` counts) and the first result with a truthy ``cancel`` stops dispatch (§9.6);
* ``input`` handlers chain transforms, ``handled`` short-circuits;
* action methods raise during loading; after :meth:`ExtensionRunner.invalidate` (reload,
  session replacement) every ``pi``/``ctx`` getter raises :class:`StaleContextError`.

The objects an extension holds (``pi``, the ``ctx`` kinds, the read-only session view) are
:mod:`.runner_api`'s, re-exported here.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    BeforeProviderRequestEvent,
    BeforeSwitchResult,
    BeforeTreeResult,
    CompactionPreparation,
    ContextEvent,
    ContextUsage,
    ContextWithSystemEvent,
    Event,
    InputEvent,
    InputResult,
    ResourcesDiscoverEvent,
    TreePreparation,
    UserBashEvent,
    coerce_before_compact_result,
    coerce_before_switch_result,
    coerce_before_tree_result,
    coerce_input_result,
)
from pi_continuity_harness.api.extension_api import (
    CommandHandler,
    CommandInfo,
    EventHandler,
    ExtensionFactory,
    Mode,
    Model,
    NotInitializedError,
    StaleContextError,
    ToolCallOutcome,
    ToolDefinition,
    ToolInfo,
)
from pi_continuity_harness.api.wire_json import reply_line, result_to_wire, wire_dumps
from pi_continuity_harness.simulator.commands import BuiltinCommand, builtin_commands, resolve_commands
from pi_continuity_harness.simulator.json_copy import bridge_reply_copy, json_copy, json_copy_or_same
from pi_continuity_harness.simulator.messages import UNDEFINED, Message, current_system_message
from pi_continuity_harness.simulator.runner_api import (
    REPLACED_SESSION,
    ReadonlySessionView,
    SimCommandContext,
    SimExtensionAPI,
    SimExtensionContext,
    SimReplacedContext,
    SimToolContext,
)
from pi_continuity_harness.simulator.tool_result_hooks import apply_handler_result, hook_result, python_event
from pi_continuity_harness.simulator.user_bash import INVALID_RESULT, is_user_bash_event_result

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.ui import UIHub

#: runner.js:1063-1068: a ``context_with_system`` result without the leading system message.
_LEADING_SYSTEM_REMOVED = (
    "Handler removed the leading system message; the request has no prompt or initial tool declarations. "
    "Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage()."
)

__all__ = [
    "REPLACED_SESSION",
    "BoundaryOutcome",
    "ExtensionRecord",
    "ExtensionRunner",
    "InputOutcome",
    "ReadonlySessionView",
    "RuntimeBindings",
    "SimExtensionAPI",
    "SimExtensionContext",
    "SimReplacedContext",
    "UserBashError",
]


class RuntimeBindings:
    """What the runner needs from the session and the process (bound after loading)."""

    # Actions (pi.*)
    send_message: Callable[[dict[str, Any], bool | None, str | None], None]
    send_user_message: Callable[[str | list[dict[str, Any]], str | None, bool], None]
    append_entry: Callable[[str, Any], None]
    get_settings: Callable[[], dict[str, Any]]
    set_session_name: Callable[[str], None]
    set_label: Callable[[Any, Any], None]
    get_session_name: Callable[[], str | None]
    get_active_tools: Callable[[], list[str]]
    get_all_tools: Callable[[], list[ToolInfo]]
    #: ``pi.getCommands()`` (:mod:`.commands`).
    get_commands: Callable[[], list[CommandInfo]]
    set_active_tools: Callable[[list[str]], None]
    #: A tool registered after loading (``refreshTools``, loader.js:246-249): the next turn of a
    #: running run declares it.
    tools_changed: Callable[[], None]
    set_model: Callable[[Model], Awaitable[bool]]
    get_thinking_level: Callable[[], str]
    set_thinking_level: Callable[[str], None]
    # Context (ctx.*)
    get_model: Callable[[], Model | None]
    is_idle: Callable[[], bool]
    is_project_trusted: Callable[[], bool]
    get_signal: Callable[[], AbortSignal | None]
    abort: Callable[[], None]
    has_pending_messages: Callable[[], bool]
    shutdown: Callable[[], None]
    get_context_usage: Callable[[], ContextUsage | None]
    compact: Callable[[str | None, Any, Any], None]
    get_system_prompt: Callable[[], str]
    # Tool context (``ctx.execute_tool``: the calling call's id, the tool, its arguments, the signal)
    execute_tool: Callable[[str, str, Any, AbortSignal | None], Awaitable[ToolCallOutcome]]
    # Command context
    wait_for_idle: Callable[[], Awaitable[None]]
    new_session: Callable[[str | None, Any], Awaitable[dict[str, Any]]]
    fork: Callable[[str, str, Any], Awaitable[dict[str, Any]]]
    switch_session: Callable[[str, Any], Awaitable[dict[str, Any]]]
    reload: Callable[[], Awaitable[None]]
    navigate_tree: Callable[[str, bool, str | None, bool | None, str | None], Awaitable[dict[str, Any]]]
    # Replaced-session context (``with_session``): senders that resolve when the run settles
    send_user_message_settled: Callable[[str | list[dict[str, Any]], str | None], Awaitable[None]]
    send_message_settled: Callable[[dict[str, Any], bool | None, str | None], Awaitable[None]]


@dataclass
class ExtensionRecord:
    """One loaded extension instance."""

    path: str
    #: Per event, the handlers in registration order; an unsubscribed one's slot is ``None``.
    handlers: dict[str, list[EventHandler | None]] = field(default_factory=dict)
    commands: dict[str, tuple[CommandHandler, str | None]] = field(default_factory=dict)
    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    #: ``extension.flags`` (loader.js:273): the flags this extension registered.
    flags: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``pendingFlagValues`` (loader.js:198, 274-278): defaults registered while the factory
    #: runs, committed when it returns (:457-467).
    pending_flags: dict[str, Any] = field(default_factory=dict)
    loading: bool = True


class ExtensionRunner:
    """Runs the extensions of one runtime (one Pi session instance)."""

    def __init__(
        self,
        *,
        cwd: str,
        mode: Mode,
        session_manager: Any,
        model_registry: Any,
        ui: UIHub,
        on_error: Callable[[str, str, str], None],
        on_call: Callable[[str, str, dict[str, Any]], None],
        between_handlers: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.cwd = cwd
        #: Awaited after each handler of :meth:`emit` (the session's preflight settling).
        self._between_handlers = between_handlers
        self.mode: Mode = mode
        self.session_manager = session_manager
        self.model_registry = model_registry
        self.ui_hub = ui
        self._on_error = on_error
        self._on_call = on_call
        self.extensions: list[ExtensionRecord] = []
        self.bindings: RuntimeBindings | None = None
        self.stale_message: str | None = None
        #: The tool names registered while the factories ran (None until they have): Pi activates
        #: every one of them (``includeAllExtensionTools``, agent-session.js:3043-3047), a later one
        #: only if its name was not registered before (:3049-3055; see ``activatable_tools``).
        self.loaded_tool_names: frozenset[str] | None = None
        #: The command names registered while the factories ran: what ``omitReplacedExtensions``
        #: (resource-loader.js:81-105) saw when it left out a replaced built-in extension.
        self.loaded_command_names: frozenset[str] = frozenset()
        #: ``runtime.flagValues`` (loader.js:139): one per runtime, shared by its extensions.
        self.flag_values: dict[str, Any] = {}
        #: The event types a loaded extension registered a handler for (:meth:`has_handlers`):
        #: added when the extension is loaded and at each later ``pi.on`` (:meth:`note_handler`);
        #: never removed, as an unsubscribed slot still counts.
        self._handled: set[str] = set()

    # ----------------------------------------------------------------- lifecycle
    async def load(self, factories: list[tuple[str, ExtensionFactory]]) -> list[tuple[str, str]]:
        """Call every factory in order; a failing factory is skipped (loader.js) and returned as
        ``(path, message)``: the host decides (at startup real Pi refuses to start)."""
        failures: list[tuple[str, str]] = []
        for path, factory in factories:
            record = ExtensionRecord(path)
            api = SimExtensionAPI(self, record)
            try:
                result = factory(api)
                if inspect.isawaitable(result):
                    await result
                _encode_load_reply(record)
            except Exception as error:  # an extension that fails to load is not loaded
                failures.append((path, _describe(error)))
                continue
            # ``commit`` (loader.js:457-467): the pending defaults a value has not yet taken.
            for name, value in record.pending_flags.items():
                self.flag_values.setdefault(name, value)
            record.pending_flags.clear()
            record.loading = False
            self.extensions.append(record)
            self._handled.update(record.handlers)
        self.loaded_tool_names = frozenset(tool.name for tool in self.tools())
        self.loaded_command_names = frozenset(name for record in self.extensions for name in record.commands)
        return failures

    def bind(self, bindings: RuntimeBindings) -> None:
        self.bindings = bindings

    def invalidate(self) -> None:
        if self.stale_message is None:
            self.stale_message = StaleContextError().args[0]

    def assert_active(self) -> None:
        if self.stale_message is not None:
            raise StaleContextError(self.stale_message)

    def require_bindings(self) -> RuntimeBindings:
        self.assert_active()
        if self.bindings is None:
            raise NotInitializedError()
        return self.bindings

    # ----------------------------------------------------------------- queries
    def has_handlers(self, event_type: str) -> bool:
        """Whether an extension registered a handler for ``event_type`` (an unsubscribed slot
        counts, as Pi still awaits it). One set look-up, not a walk over the extensions' handler
        lists: asked before every agent event and every streamed chunk, about 155 times per
        scenario of the suite (issue 16)."""
        return event_type in self._handled

    def note_handler(self, record: ExtensionRecord, event_type: str) -> None:
        """``pi.on(event_type, ...)`` of ``record``: a loaded extension's handler counts from now
        on; one registered while its factory runs counts once the extension is loaded (a
        factory that fails leaves its handlers out, with the extension)."""
        if not record.loading:
            self._handled.add(event_type)

    def resolved_commands(self) -> list[tuple[str, ExtensionRecord | BuiltinCommand, str]]:
        """``resolveRegisteredCommands`` (runner.js:569-597, :func:`.commands.resolve_commands`):
        every extension's commands in load and registration order as ``(invocation name, its
        extension or the built-in command, name)``; Pi's built-in extensions load after the
        ``-e`` ones, so their commands come last (:func:`.commands.builtin_commands`)."""
        owned: list[tuple[str, tuple[ExtensionRecord | BuiltinCommand, str]]] = [
            (name, (record, name)) for record in self.extensions for name in record.commands
        ]
        owned += [(c.name, (c, c.name)) for c in builtin_commands(self.loaded_command_names)]
        return [(invocation, owner, name) for invocation, (owner, name) in resolve_commands(owned)]

    def get_command(self, name: str) -> tuple[ExtensionRecord, CommandHandler] | None:
        """``getCommand`` (runner.js:608-610): the extension command whose invocation name is
        ``name`` (a built-in extension's is not modelled: ``None``, as for no command)."""
        for invocation, owner, registered in self.resolved_commands():
            if invocation == name:
                return (owner, owner.commands[registered][0]) if isinstance(owner, ExtensionRecord) else None
        return None

    def command_names(self) -> list[str]:
        """The invocation names of the extensions' own commands."""
        return [i for i, owner, _ in self.resolved_commands() if isinstance(owner, ExtensionRecord)]

    def tools(self) -> list[ToolDefinition]:
        return [tool for record in self.extensions for tool in record.tools.values()]

    # ----------------------------------------------------------------- dispatch
    def handlers_of(self, event_type: str) -> list[tuple[ExtensionRecord, list[EventHandler]]]:
        """The handlers of ``event_type`` per extension, snapshotted: one registered during the
        dispatch does not run in it (Pi's ``snapshotEventHandlers``).

        Each is the bridge's Pi handler for it (``bridge.ts`` ``registerHandler``): Pi keeps it
        after an unsubscribe, and it answers ``undefined`` without calling the Python handler
        (``BridgeExtensionAPI.on``'s ``unsubscribe`` empties its slot), so a handler that
        unsubscribes a later one of the same dispatch keeps that one from running, as on real
        Pi, and Pi still awaits its slot."""
        found: list[tuple[ExtensionRecord, list[EventHandler]]] = []
        for record in self.extensions:
            slots = record.handlers.get(event_type)
            if slots:
                found.append((record, [_slot_handler(slots, index) for index in range(len(slots))]))
        return found

    async def call_handler(self, handler: EventHandler, event: Any, ctx: SimExtensionContext) -> Any:
        """Call one handler, awaiting its result when it returns an awaitable (sync or async).

        On real Pi the result crosses the bridge as JSON (``bridge_runtime._serve``,
        ``reply_line``); one JSON cannot carry (a dict key that is a tuple, a cycle) is answered
        as an error, and Pi's handler throws as if the Python handler had raised: the same
        ``TypeError`` or ``ValueError`` is raised here, so every caller reports it as the
        handler's error."""
        result = handler(event, ctx)
        if inspect.isawaitable(result):
            result = await result
        if result is not None and type(result) not in _PLAIN_REPLIES:
            wire_dumps(result_to_wire(result))
        return result

    async def emit(self, event: Event) -> BeforeCompactResult | BeforeSwitchResult | BeforeTreeResult | None:
        """Generic dispatch; returns the combined result of a ``session_before_*`` event."""
        ctx = self.create_context()
        before = event.type.startswith("session_before_")
        result: BeforeCompactResult | BeforeSwitchResult | BeforeTreeResult | None = None
        for record, handlers in self.handlers_of(event.type):
            for handler in handlers:
                failed = False
                try:
                    value = await self.call_handler(handler, bridged_copy(event), ctx)
                except Exception as error:
                    self.emit_error(record.path, event.type, _describe(error))
                    failed = True
                if self._between_handlers is not None:
                    # runner.js:832 awaits each handler: the microtasks a handler started (a
                    # ``send_user_message`` reaching its queue) run before the next handler.
                    await self._between_handlers()
                if failed:
                    continue
                # What the handler returned reaches Pi as JSON (the bridge's reply), so the
                # handler's own object (a ``details`` it keeps and changes later) is not Pi's,
                # and a set in it is a list, bytes their ``str()``, ``2.0`` the integer 2.
                value = _bridged_result(value)
                if before:
                    coerced: BeforeCompactResult | BeforeSwitchResult | BeforeTreeResult | None
                    if event.type == "session_before_compact":
                        coerced = coerce_before_compact_result(value)
                    elif event.type == "session_before_tree":
                        coerced = coerce_before_tree_result(value)
                    else:
                        coerced = coerce_before_switch_result(value)
                    if coerced is not None:
                        result = coerced
                        if coerced.cancel:
                            return result
        return result

    async def emit_boundary(
        self, event_type: str, make_event: Callable[[Any, Any], Event], build: Callable[[Any], object]
    ) -> BoundaryOutcome:
        """runner.js:772-818 ``emitBoundary``: each handler gets the drafts (``entries``) and the
        ``continue`` so far (``make_event``); a result's ``entries`` or ``continue`` that is not
        ``undefined`` replaces them (``null`` included: a Python ``None`` under the key); after
        every handler, failed or not, the drafts are previewed (``build``), and a preview that
        raises is an ``extension_error`` "Invalid boundary entries: ..." of that handler's
        extension. The outcome is the drafts and ``continue`` when the last preview held, else
        no drafts and no continue."""
        ctx = self.create_context()
        entries: Any = []
        should_continue: Any = False
        valid = True
        for record, handlers in self.handlers_of(event_type):
            for handler in handlers:
                try:
                    value = await self.call_handler(
                        handler, bridged_copy(make_event(entries, should_continue)), ctx
                    )
                except Exception as error:
                    self.emit_error(record.path, event_type, _describe(error))
                    value = None
                if self._between_handlers is not None:
                    await self._between_handlers()
                value = _bridged_result(value)
                if isinstance(value, dict):
                    if "entries" in value:
                        entries = value["entries"]
                    if "continue" in value:
                        should_continue = value["continue"]
                try:
                    build(entries)
                    valid = True
                except Exception as error:
                    valid = False
                    self.emit_error(record.path, event_type, f"Invalid boundary entries: {_describe(error)}")
        if not valid:
            return BoundaryOutcome(entries=[], continue_=False, valid=False)
        return BoundaryOutcome(entries=entries, continue_=should_continue, valid=True)

    async def emit_context(self, messages: list[Message]) -> list[Message]:
        """runner.js:1014-1078 ``emitContext``. Its ``context`` phase: the messages copied
        (``structuredClone``), then each handler gets the conversation without system messages
        (its own JSON copy, as through the bridge: a change in place reaches nothing); a
        result's ``messages`` (not ``undefined`` or ``null``) replace it, Pi's system messages
        restored (:func:`_restore_system_messages`); a raise is an ``extension_error``. Then
        the ``context_with_system`` phase (:meth:`_emit_context_with_system`)."""
        ctx = self.create_context()
        current: list[Message] = json_copy(messages)
        for record, handlers in self.handlers_of("context"):
            for handler in handlers:
                try:
                    visible = [m for m in current if m.get("role") != "system"]
                    value = await self.call_handler(handler, ContextEvent(messages=json_copy(visible)), ctx)
                    value = _bridged_result(value)
                    returned = value.get("messages") if isinstance(value, dict) else None
                    if returned is not None:
                        current = _restore_system_messages(current, visible, returned)
                except Exception as error:
                    self.emit_error(record.path, "context", _describe(error))
                if self._between_handlers is not None:
                    await self._between_handlers()
        return await self._emit_context_with_system(current, ctx)

    async def _emit_context_with_system(self, current: list[Message], ctx: Any) -> list[Message]:
        """runner.js:1049-1077: each ``context_with_system`` handler gets the whole transcript
        (a JSON copy); a result's ``messages`` (not ``undefined`` or ``null``) are used as they
        are, and one whose first message is not a system message where the transcript's was is
        reported (an ``extension_error``, the request still sent as returned); a raise is an
        ``extension_error``. A result that is not a list is refused (an ``extension_error``),
        where JavaScript would go on with it and fail later."""
        event_type = ContextWithSystemEvent.type
        for record, handlers in self.handlers_of(event_type):
            for handler in handlers:
                try:
                    had_leading_system = bool(current) and current[0].get("role") == "system"
                    value = await self.call_handler(
                        handler, ContextWithSystemEvent(messages=json_copy(current)), ctx
                    )
                    value = _bridged_result(value)
                    returned = value.get("messages") if isinstance(value, dict) else None
                    if returned is not None:
                        if not isinstance(returned, list):
                            raise TypeError("context_with_system messages must be a list")
                        current = returned
                    first = current[0] if current else None
                    if had_leading_system and not (isinstance(first, dict) and first.get("role") == "system"):
                        self.emit_error(record.path, event_type, _LEADING_SYSTEM_REMOVED)
                except Exception as error:
                    self.emit_error(record.path, event_type, _describe(error))
                if self._between_handlers is not None:
                    await self._between_handlers()
        return current

    async def emit_resources_discover(
        self, cwd: str, reason: Literal["startup", "reload"]
    ) -> dict[str, list[tuple[Any, str]]]:
        """runner.js:1194-1214 ``emitResourcesDiscover``: each handler gets ``{cwd, reason}``;
        the non-empty ``skillPaths``, ``promptPaths`` and ``themePaths`` of its result are
        collected in handler order, each path with its extension's path (Pi's ``{path,
        extensionPath}``, :1190-1196; a string there is what ``.map`` throws on, after the
        lists before it were taken); a raise is an ``extension_error``."""
        ctx = self.create_context()
        found: dict[str, list[tuple[Any, str]]] = {key: [] for key in _RESOURCE_KEYS}
        for record, handlers in self.handlers_of("resources_discover"):
            for handler in handlers:
                try:
                    event = ResourcesDiscoverEvent(cwd=cwd, reason=reason)
                    value = _bridged_result(await self.call_handler(handler, event, ctx))
                    for key in _RESOURCE_KEYS if isinstance(value, dict) else ():
                        paths = value.get(key)
                        if isinstance(paths, list) and paths:
                            found[key].extend((path, record.path) for path in paths)
                        elif isinstance(paths, str) and paths:
                            raise TypeError(f"result.{key}.map is not a function")
                except Exception as error:
                    self.emit_error(record.path, "resources_discover", _describe(error))
                if self._between_handlers is not None:
                    await self._between_handlers()
        return found

    async def emit_input(self, event: InputEvent) -> InputOutcome:
        """runner.js:1214-1249 ``emitInput``: each handler gets the text and images as they are
        now, a transform replaces the text (and the images when it has some), ``handled`` ends.

        Each handler's event is its own JSON copy (:func:`bridged_copy`): on real Pi a Python
        handler's event is parsed anew from the bridge's JSON for each call (``bridge.ts``
        ``registerHandler``), so a handler that changes ``event.images`` in place (adds an
        image, changes one) changes neither what the next handler sees nor the prompt's images.
        A transform's images crossed back as JSON too: the handler's own list and dicts are
        not the prompt's.

        A transform replaces the text with whatever its ``text`` is (``currentText =
        result.text``, :1232), none included: the next Python handler then reads ``""`` (the
        bridge's ``InputEvent`` takes ``str(text or "")``), and the outcome's ``text_error`` is
        the ``TypeError`` Pi's ``_expandSkillCommand`` throws on it (:func:`_starts_with_error`).
        """
        ctx = self.create_context()
        text, images = event.text, event.images
        js_text: Any = event.text  # Pi's currentText, which need not be a string
        for record, handlers in self.handlers_of("input"):
            for handler in handlers:
                current = bridged_copy(
                    InputEvent(
                        text=_bridged_text(js_text),
                        images=images,
                        source=event.source,
                        streaming_behavior=event.streaming_behavior,
                    )
                )
                try:
                    value = await self.call_handler(handler, current, ctx)
                except Exception as error:
                    self.emit_error(record.path, "input", _describe(error))
                    continue
                result = coerce_input_result(value)
                if result is None:
                    continue
                if result.action == "handled":
                    return InputOutcome(result.action, result.text, result.images)
                if result.action == "transform":
                    js_text = _transform_text(value)
                    text = result.text if isinstance(result.text, str) else text
                    images = json_copy_or_same(result.images) if result.images is not None else images
        if js_text != event.text or images is not event.images:
            return InputOutcome(
                "transform", text, images, text_error=_starts_with_error(js_text), pi_text=js_text
            )
        return InputOutcome("continue")

    async def emit_before_provider_request(self, payload: Any) -> Any:
        """runner.js:1079-1107 ``emitBeforeProviderRequest``: each handler gets the payload as
        it is now (``{type, payload: currentPayload}``), and whatever it returns but ``undefined``
        becomes the payload; a handler that throws is reported (``emitError``) and the payload
        stays. Returns the payload the provider sends.

        A Python handler's event is the payload's JSON, parsed anew for each call (``bridge.ts``
        ``registerHandler``: :func:`bridged_copy`), so an in-place change reaches neither Pi nor
        the next handler: only a returned payload counts. Its result crosses back as the
        bridge's reply (``result_to_wire``, then JSON: :func:`bridge_reply_copy`)."""
        ctx = self.create_context()
        current = payload
        for record, handlers in self.handlers_of("before_provider_request"):
            for handler in handlers:
                event = bridged_copy(BeforeProviderRequestEvent(payload=json_copy_or_same(current)))
                try:
                    value = await self.call_handler(handler, event, ctx)
                except Exception as error:
                    self.emit_error(record.path, "before_provider_request", _describe(error))
                    value = None
                if self._between_handlers is not None:
                    await self._between_handlers()
                if value is not None:
                    current = bridge_reply_copy(result_to_wire(value))
        return current

    async def emit_tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        args: dict[str, Any],
        result: dict[str, Any],
        is_error: Any,
        *,
        parent: str | None = None,
    ) -> dict[str, Any] | None:
        """runner.js:913-969 ``emitToolResult`` on the event of ``_afterToolCall``
        (agent-session.js:409-420): each handler sees what the ones before it changed and may
        change ``content``, ``details``, ``structuredContent``, ``isError``, ``usage``
        (:func:`~.tool_result_hooks.apply_handler_result`); one that raises is reported and the
        next runs. Returns the hook's result, ``None`` (``undefined``) when nothing changed.
        ``parent``: the calling tool's id for a nested call (``parentToolCallId``).

        A Python handler's event is built from the event's JSON by the bridge
        (:func:`~.tool_result_hooks.python_event`, inside the ``try``: the bridge's failure to
        build it is that handler's error on Pi), and its result crosses back as the bridge's
        reply (``result_to_wire``, then JSON: :func:`bridge_reply_copy`; ``None`` is
        ``undefined``)."""
        ctx = self.create_context()
        current: dict[str, Any] = {
            key: result[key] for key in ("content", "details", "structuredContent") if key in result
        }
        current["isError"] = is_error
        if "usage" in result:
            current["usage"] = result["usage"]
        modified = False
        for record, handlers in self.handlers_of("tool_result"):
            for handler in handlers:
                value: Any = None
                try:
                    event = python_event(tool_call_id, tool_name, args, current, parent=parent)
                    value = await self.call_handler(handler, bridged_copy(event), ctx)
                    if value is not None:
                        value = bridge_reply_copy(result_to_wire(value))
                except Exception as error:
                    self.emit_error(record.path, "tool_result", _describe(error))
                    value = None
                if self._between_handlers is not None:
                    await self._between_handlers()
                if apply_handler_result(current, value):
                    modified = True
        return hook_result(current) if modified else None

    async def emit_user_bash(self, event: UserBashEvent) -> dict[str, Any] | None:
        """runner.js:986-1013 ``emitUserBash``: the first handler returning something other than
        ``undefined`` decides, and its result must pass ``isUserBashEventResult``
        (:func:`~.user_bash.is_user_bash_event_result`, on the result as it crosses the bridge:
        :func:`bridge_reply_copy`), else it fails with :data:`~.user_bash.INVALID_RESULT`. A
        handler that raises, or an invalid result, is reported (``emitError``) and raised again:
        the RPC command fails with its message. ``None``: no handler decided (Pi runs the
        command)."""
        ctx = self.create_context()
        for record, handlers in self.handlers_of("user_bash"):
            for handler in handlers:
                failure: Exception | None = None
                try:
                    value = await self.call_handler(handler, bridged_copy(event), ctx)
                except Exception as error:
                    self.emit_error(record.path, "user_bash", _describe(error))
                    failure = error
                # runner.js:986-1013 awaits each handler: what it sent is queued before the next
                # one runs (``tests/realpi/test_differential_handler_sends.py``), or before the
                # command fails, as in :meth:`emit`.
                if self._between_handlers is not None:
                    await self._between_handlers()
                if failure is not None:
                    raise UserBashError(_describe(failure)) from failure
                if value is None:
                    continue
                try:
                    value = bridge_reply_copy(result_to_wire(value))
                    if not is_user_bash_event_result(value):
                        raise UserBashError(INVALID_RESULT)
                except Exception as error:
                    self.emit_error(record.path, "user_bash", _describe(error))
                    raise UserBashError(_describe(error)) from error
                return value  # type: ignore[no-any-return]
        return None

    def emit_error(self, path: str, event: str, error: str) -> None:
        self._on_error(path, event, error)

    def record_call(self, path: str, name: str, data: dict[str, Any]) -> None:
        self._on_call(path, name, data)

    # ----------------------------------------------------------------- contexts
    def create_context(self) -> SimExtensionContext:
        return SimExtensionContext(self)

    def create_tool_context(self, tool_call_id: str, signal: AbortSignal | None) -> SimToolContext:
        return SimToolContext(self, tool_call_id, signal)

    def create_command_context(self) -> SimCommandContext:
        return SimCommandContext(self)

    def create_replaced_context(self) -> SimReplacedContext:
        return SimReplacedContext(self)


class UserBashError(Exception):
    """``emitUserBash`` rethrew (a handler raised, or returned an invalid result): the RPC
    ``bash`` command fails with this message (rpc-mode.js:652-655)."""


@dataclass(frozen=True)
class BoundaryOutcome:
    """:meth:`ExtensionRunner.emit_boundary`'s result (runner.js:815-817): the drafts, the
    ``continue`` as the handlers left it (any JSON value: Pi tests its truthiness), and whether
    the last preview of the drafts held."""

    entries: Any
    continue_: Any
    valid: bool


@dataclass(frozen=True)
class InputOutcome(InputResult):
    """:meth:`ExtensionRunner.emit_input`'s result. ``text_error``: the text Pi ends with is not
    a string (a transform without one), and this is the ``TypeError`` ``prompt()`` throws when
    it expands skill commands and templates (``_expandSkillCommand``, agent-session.js:1754,
    1820-1821: ``text.startsWith``); ``text`` is then the last string text. ``pi_text``: the
    text as Pi has it (:data:`~.messages.UNDEFINED`, ``None``, a number...), which a prompt
    that does not expand templates (``sendUserMessage``) goes on with."""

    text_error: str | None = None
    pi_text: Any = None


#: A transform's ``text`` when the handler's result has none: JavaScript's ``undefined``.
_UNDEFINED = UNDEFINED


def _transform_text(value: Any) -> Any:
    """A transform's ``text`` as Pi has it after the bridge: a missing key (or an
    ``InputResult`` without text, which ``result_to_wire`` leaves out) is ``undefined``,
    ``None`` is ``null``, anything else its JSON copy."""
    if isinstance(value, InputResult):
        return _UNDEFINED if value.text is None else _reply_text(value.text)
    if isinstance(value, dict) and "text" in value:
        # The bridge's JSON: ``5.0`` reaches Pi as the number 5 (``bridge_reply_copy``).
        return _reply_text(value["text"])
    return _UNDEFINED


def _reply_text(text: Any) -> Any:
    """A transform's ``text`` as Pi has it: its :func:`bridge_reply_copy`, but a NaN or an
    infinity stays the number (``bridge.ts`` revives it), on which ``startsWith`` is not a
    function, and which the next handler reads as JSON's ``null``."""
    if isinstance(text, float) and not math.isfinite(text):
        return text
    return bridge_reply_copy(text)


def _bridged_text(js_text: Any) -> str:
    """``event.text`` as a Python handler reads Pi's ``currentText``: the bridge's
    ``InputEvent`` takes ``str(text or "")`` of the JSON (``undefined`` and ``null`` are ``""``,
    ``5`` is ``"5"``)."""
    if isinstance(js_text, str):
        return js_text
    if js_text is _UNDEFINED or (isinstance(js_text, float) and not math.isfinite(js_text)):
        return ""  # undefined, or a NaN or an infinity, which JSON.stringify writes as null
    return str(js_text or "")


def _starts_with_error(js_text: Any) -> str | None:
    """V8's message for ``text.startsWith(...)`` on a text that is not a string (observed on
    real Pi 1.6.0), or ``None`` for a string."""
    if isinstance(js_text, str):
        return None
    if js_text is _UNDEFINED:
        return "Cannot read properties of undefined (reading 'startsWith')"
    if js_text is None:
        return "Cannot read properties of null (reading 'startsWith')"
    return "text.startsWith is not a function"


def bridged_copy(value: Any) -> Any:
    """An event (or its ``preparation``) as a Python extension's handler gets it on real Pi: its
    JSON data parsed anew for each handler call (``bridge.ts`` ``registerHandler`` sends the
    payload to Python with every call), so a handler that changes a message, a list or an entry
    in place changes nothing of Pi's, nor what the next handler sees. Other fields (the abort
    signal, a model) stay as they are, and so does data JSON cannot copy (a tool's arbitrary
    ``details``)."""
    kind = type(value)
    names = _FIELD_NAMES.get(kind)
    if names is None:
        if len(_FIELD_NAMES) >= 256:
            _FIELD_NAMES.clear()
        names = _FIELD_NAMES[kind] = _field_names(kind)
    changes: dict[str, Any] = {}
    for name in names:
        current = getattr(value, name)
        if isinstance(current, _JSON_CONTAINERS):
            changes[name] = json_copy_or_same(current)
        elif isinstance(current, _PREPARATIONS):
            changes[name] = bridged_copy(current)
    return dataclasses.replace(value, **changes) if changes else value


#: :func:`_field_names` of each type :func:`bridged_copy` has copied a value of.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass of type ``kind`` (none for another type, or for a class itself,
    whose type is its metaclass). :func:`bridged_copy` asks once per type (:data:`_FIELD_NAMES`):
    ``dataclasses.is_dataclass`` and ``dataclasses.fields`` at every handler's copy of every
    event were 0.2 % of an exploration (issue 16)."""
    if not dataclasses.is_dataclass(kind):
        return ()
    return tuple(item.name for item in dataclasses.fields(kind))


#: :func:`bridged_copy`'s ``isinstance`` tuples, the same classes as ``dict | list`` and
#: ``CompactionPreparation | TreePreparation``: a union is an object ``isinstance`` takes apart
#: at every call (one more ``isinstance`` per member), which made a ``turn_end``'s copy for a
#: handler 13.4 us instead of 10.4 (issue 16; every handler of every event gets one).
_JSON_CONTAINERS = (dict, list)
_PREPARATIONS = (CompactionPreparation, TreePreparation)


def _restore_system_messages(current: list[Message], visible: list[Message], returned: Any) -> list[Message]:
    """runner.js:90-106 ``restoreSystemMessages``: the same conversation (the same objects, in
    order) keeps every system message in place; another gets Pi's system messages folded into
    one leading message (``getCurrentSystemMessage``) before it. What a Python handler returns
    crossed the bridge, so it is never the same objects unless both are empty. A result that
    is not a list is what V8's spread throws on (a string, which JavaScript would spread into
    characters, is refused the same way here)."""
    if not isinstance(returned, list):
        raise TypeError("returned is not iterable")
    if len(returned) == len(visible) and all(a is b for a, b in zip(returned, visible, strict=True)):
        return current
    head = current_system_message(current)
    return [head, *returned] if head is not None else list(returned)


#: Handler results whose JSON cannot fail (:meth:`ExtensionRunner.call_handler` skips them).
_PLAIN_REPLIES = frozenset({str, int, float, bool})


def _slot_handler(slots: list[EventHandler | None], index: int) -> EventHandler:
    """Slot ``index`` of ``slots`` as the bridge's Pi handler: the Python handler registered
    there if it is still subscribed when called, else ``undefined``."""
    registered = slots[index]

    def call(event: Any, ctx: Any) -> Any:
        if registered is None or slots[index] is not registered:
            return None
        return registered(event, ctx)

    return call


def _bridged_result(value: Any) -> Any:
    """A ``session_before_*`` handler's result as Pi gets it from a Python handler: plain data
    as :func:`bridge_reply_copy` makes it; a :class:`BeforeCompactResult`'s compaction with its
    ``details`` and ``usage`` so (``result_to_wire`` sends ``compaction.to_json()``)."""
    if isinstance(value, _JSON_CONTAINERS):
        return bridge_reply_copy(value)
    if isinstance(value, BeforeCompactResult) and value.compaction is not None:
        compaction = value.compaction
        return dataclasses.replace(
            value,
            compaction=dataclasses.replace(
                compaction,
                details=bridge_reply_copy(compaction.details),
                usage=bridge_reply_copy(compaction.usage),
            ),
        )
    return value


#: The lists a ``resources_discover`` result may hold, in the order Pi takes them.
_RESOURCE_KEYS = ("skillPaths", "promptPaths", "themePaths")


def _encode_load_reply(record: ExtensionRecord) -> None:
    """Encode what a Python extension's load reply carries to real Pi (``bridge_runtime._load``:
    its handlers, commands with their descriptions, tools' names, labels, descriptions,
    parameters and snippets), as the bridge does (``_serve``, :func:`.wire_json.reply_line`).
    A value JSON cannot carry (a tuple key in a tool's ``parameters``, a cycle) raises: the
    bridge answers the load with that error, ``bridge.ts`` rejects the load request with it
    (:333, :407), and real Pi 1.6.0 reports the extension as failed to load
    (core/extensions/loader.js:563; at startup ``Failed to load extension "<path>": Failed to
    load extension: keys must be str, int, float, bool or None, not tuple`` and exit 1,
    main.js:825; measured)."""
    reply_line(
        {
            "type": "result",
            "id": 0,
            "value": {
                "commands": [[name, description] for name, (_, description) in record.commands.items()],
                "tools": [
                    [t.name, t.label, t.description, t.parameters, t.prompt_snippet]
                    for t in record.tools.values()
                ],
            },
        }
    )


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__
