"""The objects an extension holds: its ``pi`` (:class:`SimExtensionAPI`) and its ``ctx`` kinds.

The part of the extension runner (:mod:`.runner`) an extension's code calls into: ``pi``
(``createExtensionAPI``, loader.js:197-481: registration while loading, the actions reaching the
runtime's :class:`~.runner.RuntimeBindings` afterwards), the event handlers' ``ctx``
(``createContext``, runner.js:626-708), the tools' (``createToolContext``, :709-736), the
commands' (``createCommandContext``, :737-771), the read-only session view, and the ``ctx`` a
``withSession`` callback gets after a session replacement (:class:`SimReplacedContext`,
``finishSessionReplacement``, agent-session-runtime.js:139-146). Every getter and action
raises :class:`~.api.extension_api.StaleContextError` once the runner is invalidated.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import (
    ContextUsage,
)
from pi_continuity_harness.api.extension_api import (
    CommandHandler,
    CommandInfo,
    EventHandler,
    Mode,
    Model,
    ReplacedSessionContext,
    ToolCallOutcome,
    ToolDefinition,
    ToolInfo,
)
from pi_continuity_harness.api.flags import flag_options
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.json_copy import json_copy

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.runner import ExtensionRecord, ExtensionRunner, RuntimeBindings

__all__ = [
    "REPLACED_SESSION",
    "ReadonlySessionView",
    "SimCommandContext",
    "SimExtensionAPI",
    "SimExtensionContext",
    "SimReplacedContext",
    "SimToolContext",
]


class SimExtensionAPI:
    """``pi`` for one extension instance."""

    def __init__(self, runner: ExtensionRunner, record: ExtensionRecord) -> None:
        self._runner = runner
        self._record = record

    def _bindings(self) -> RuntimeBindings:
        return self._runner.require_bindings()

    def _log(self, name: str, **data: Any) -> None:
        self._runner.record_call(self._record.path, name, data)

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]:
        self._runner.assert_active()
        handlers = self._record.handlers.setdefault(event, [])
        index = len(handlers)
        handlers.append(handler)
        self._runner.note_handler(self._record, event)

        def unsubscribe() -> None:
            # The bridge empties the slot; Pi keeps its handler, which answers ``undefined``.
            handlers[index] = None

        return unsubscribe

    def register_command(
        self,
        name: str,
        handler: CommandHandler,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], list[dict[str, Any]] | None] | None = None,
    ) -> None:
        self._runner.assert_active()
        self._record.commands[name] = (handler, description)

    def register_tool(self, tool: ToolDefinition) -> None:
        self._runner.assert_active()
        self._record.tools[tool.name] = tool
        if self._runner.bindings is not None:
            self._runner.bindings.tools_changed()

    def register_flag(
        self,
        name: str,
        *,
        type: Literal["boolean", "string"],
        default: bool | str | None = None,
        description: str | None = None,
    ) -> None:
        # loader.js:268-283; the arguments as the bridge's JSON hands them to Pi.
        self._runner.assert_active()
        name, default = json_copy(name), json_copy(default)
        options = flag_options(name, type, default, description)
        self._record.flags[name] = options
        if default is not None and name not in self._runner.flag_values:
            if self._record.loading:
                self._record.pending_flags.setdefault(name, default)
            else:
                self._runner.flag_values[name] = default

    def get_flag(self, name: str) -> bool | str | None:
        # loader.js:306-311.
        self._runner.assert_active()
        if name not in self._record.flags:
            return None
        if name in self._runner.flag_values:
            return self._runner.flag_values[name]  # type: ignore[no-any-return]
        return self._record.pending_flags.get(name)

    def send_message(
        self,
        message: dict[str, Any],
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None:
        bindings = self._bindings()
        self._log(
            "send_message",
            customType=message.get("customType"),
            triggerTurn=trigger_turn,
            deliverAs=deliver_as,
        )
        bindings.send_message(message, trigger_turn, deliver_as)

    def send_user_message(
        self,
        content: str | list[dict[str, Any]],
        *,
        deliver_as: Literal["steer", "followUp"] | None = None,
        expand_prompt_templates: bool = False,
    ) -> None:
        bindings = self._bindings()
        text = content_text(content, "\n")
        self._log("send_user_message", deliverAs=deliver_as, chars=len(text), text=_excerpt(text))
        bindings.send_user_message(content, deliver_as, expand_prompt_templates)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        bindings = self._bindings()
        self._log("append_entry", customType=custom_type)
        bindings.append_entry(custom_type, data)

    def get_settings(self) -> dict[str, Any]:
        return self._bindings().get_settings()

    def get_session_name(self) -> str | None:
        return self._bindings().get_session_name()

    def set_session_name(self, name: str) -> None:
        self._bindings().set_session_name(name)

    def set_label(self, entry_id: str, label: str | None = None) -> None:
        # What crosses the bridge on real Pi: JSON copies of both.
        self._bindings().set_label(json_copy(entry_id), json_copy(label))

    def get_active_tools(self) -> list[str]:
        return self._bindings().get_active_tools()

    def get_all_tools(self) -> list[ToolInfo]:
        return self._bindings().get_all_tools()

    def get_commands(self) -> list[CommandInfo]:
        return self._bindings().get_commands()

    def set_active_tools(self, tool_names: list[str]) -> None:
        bindings = self._bindings()
        # What crosses the bridge on real Pi: a JSON copy of the names.
        bindings.set_active_tools(json_copy(list(tool_names)))

    async def set_model(self, model: Model) -> bool:
        return await self._bindings().set_model(model)

    def get_thinking_level(self) -> str:
        return self._bindings().get_thinking_level()

    def set_thinking_level(self, level: str) -> None:
        # What crosses the bridge on real Pi: a JSON copy (a level that is no string reaches
        # Pi's clamp as it is, and is no level).
        self._bindings().set_thinking_level(json_copy(level))


def _excerpt(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class SimExtensionContext:
    """``ctx`` for handlers and tools; every access checks that the runtime is current."""

    def __init__(self, runner: ExtensionRunner) -> None:
        self._runner = runner

    def _b(self) -> RuntimeBindings:
        return self._runner.require_bindings()

    @property
    def ui(self) -> Any:
        self._runner.assert_active()
        return self._runner.ui_hub.context_for(self._runner.mode)

    @property
    def mode(self) -> Mode:
        self._runner.assert_active()
        return self._runner.mode

    @property
    def has_ui(self) -> bool:
        self._runner.assert_active()
        return self._runner.mode in ("tui", "rpc")

    @property
    def cwd(self) -> str:
        self._runner.assert_active()
        return self._runner.cwd

    @property
    def session_manager(self) -> ReadonlySessionView:
        self._runner.assert_active()
        return ReadonlySessionView(self._runner.session_manager)

    @property
    def model_registry(self) -> Any:
        self._runner.assert_active()
        return self._runner.model_registry

    @property
    def model(self) -> Model | None:
        return self._b().get_model()

    @property
    def signal(self) -> AbortSignal | None:
        return self._b().get_signal()

    @property
    def thinking_level(self) -> str:
        # runner.js:663-666: read anew at every access.
        return self._b().get_thinking_level()

    def is_idle(self) -> bool:
        return self._b().is_idle()

    def is_project_trusted(self) -> bool:
        return self._b().is_project_trusted()

    def abort(self) -> None:
        self._b().abort()

    def has_pending_messages(self) -> bool:
        return self._b().has_pending_messages()

    def shutdown(self) -> None:
        self._b().shutdown()

    def get_context_usage(self) -> ContextUsage | None:
        return self._b().get_context_usage()

    def compact(
        self,
        *,
        custom_instructions: str | None = None,
        on_complete: Callable[[dict[str, Any]], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self._b().compact(custom_instructions, on_complete, on_error)

    def get_system_prompt(self) -> str:
        return self._b().get_system_prompt()


class ReadonlySessionView:
    """``ctx.session_manager`` as a Python extension has it on real Pi: each answer is a JSON copy.

    On real Pi every getter is a round trip through the bridge (``targets/realpi/bridge_api.py``
    ``BridgeSessionManager``): the entries come back parsed from JSON, so changing one changes
    no entry of Pi's (session-manager.js:1128-1130 ``getEntries`` filters ``fileEntries``; the
    extension never holds them). Handing out the simulator's own entries let an extension that
    changed one (popped its ``id``, say) change the session, or break it.
    """

    def __init__(self, manager: Any) -> None:
        self._manager = manager

    def get_session_id(self) -> str:
        return str(self._manager.get_session_id())

    def get_session_file(self) -> str | None:
        found = self._manager.get_session_file()
        return None if found is None else str(found)

    def get_session_dir(self) -> str:
        return str(self._manager.get_session_dir())

    def get_cwd(self) -> str:
        return str(self._manager.get_cwd())

    def get_header(self) -> dict[str, Any] | None:
        return json_copy(self._manager.get_header())  # type: ignore[no-any-return]

    def get_entries(self) -> list[dict[str, Any]]:
        return json_copy(self._manager.get_entries())  # type: ignore[no-any-return]

    def get_entry(self, entry_id: str) -> dict[str, Any] | None:
        return json_copy(self._manager.get_entry(entry_id))  # type: ignore[no-any-return]

    def get_leaf_id(self) -> str | None:
        found = self._manager.get_leaf_id()
        return None if found is None else str(found)

    def get_leaf_entry(self) -> dict[str, Any] | None:
        return json_copy(self._manager.get_leaf_entry())  # type: ignore[no-any-return]

    def get_branch(self, from_id: str | None = None) -> list[dict[str, Any]]:
        return json_copy(self._manager.get_branch(from_id))  # type: ignore[no-any-return]

    def get_session_name(self) -> str | None:
        found = self._manager.get_session_name()
        return None if found is None else str(found)

    def get_label(self, entry_id: str) -> str | None:
        found = self._manager.get_label(json_copy(entry_id))
        return None if found is None else str(found)

    def get_tree(self) -> list[dict[str, Any]]:
        return json_copy(self._manager.get_tree())  # type: ignore[no-any-return]


class SimToolContext(SimExtensionContext):
    """``ctx`` of a tool's ``execute`` (``createToolContext``, runner.js:709-736): the extension
    context plus ``execute_tool``, bound to the call the tool runs for; ``signal`` is the nested
    calls' default signal (the calling tool's)."""

    def __init__(self, runner: ExtensionRunner, tool_call_id: str, signal: AbortSignal | None) -> None:
        super().__init__(runner)
        self._tool_call_id = tool_call_id
        self._tool_signal = signal

    async def execute_tool(
        self, name: str, args: dict[str, Any] | None = None, *, signal: AbortSignal | None = None
    ) -> ToolCallOutcome:
        self._runner.assert_active()  # runner.js:721
        # The arguments cross the bridge as JSON on real Pi (``bridge_copy``, as ``send_message``).
        return await self._b().execute_tool(
            self._tool_call_id, name, json_copy(args) if args is not None else {}, signal or self._tool_signal
        )


class SimCommandContext(SimExtensionContext):
    """The command handler context: session controls on top of ``ctx``."""

    async def wait_for_idle(self) -> None:
        await self._b().wait_for_idle()

    async def new_session(
        self,
        *,
        parent_session: str | None = None,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        return await self._b().new_session(parent_session, with_session)

    async def fork(
        self,
        entry_id: str,
        *,
        position: Literal["before", "at"] = "before",
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        return await self._b().fork(entry_id, position, with_session)

    async def switch_session(
        self,
        session_path: str,
        *,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        return await self._b().switch_session(session_path, with_session)

    async def reload(self) -> None:
        await self._b().reload()

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:
        return await self._b().navigate_tree(
            target_id, summarize, custom_instructions, replace_instructions, label
        )


#: The ``ext`` of the ``call`` records of what ``with_session``'s context sends: a message sent
#: through the replaced-session context, not by an extension's own ``pi``.
REPLACED_SESSION = "<replaced-session>"


class SimReplacedContext(SimCommandContext):
    """``with_session``'s ctx: bound to the new session; its senders resolve at settlement."""

    async def send_user_message(
        self, content: str | list[dict[str, Any]], *, deliver_as: Literal["steer", "followUp"] | None = None
    ) -> None:
        text = content_text(content, "\n")
        self._runner.record_call(
            REPLACED_SESSION,
            "send_user_message",
            {"deliverAs": deliver_as, "chars": len(text), "awaited": True},
        )
        await self._b().send_user_message_settled(content, deliver_as)

    async def send_message(
        self,
        message: dict[str, Any],
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None:
        await self._b().send_message_settled(message, trigger_turn, deliver_as)
