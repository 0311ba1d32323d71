"""The Python form of Pi 1.6's extension API: the one seam an extension sees.

An extension is a factory ``def extension(pi: ExtensionAPI) -> None`` (or ``async def``),
exactly as in Pi. It imports nothing from the harness but :mod:`pi_continuity_harness.api` (this module,
``events`` and ``abort``, re-exported by the package), so the same code runs in the simulator
and, through the bridge, inside real Pi.

Names are the snake_case form of Pi's (``sendUserMessage`` is ``send_user_message``,
``isProjectTrusted`` is ``is_project_trusted``); semantics are Pi's, including its quirks:

* action methods raise during loading ("Extension runtime not initialized");
* ``send_user_message`` is fire-and-forget, never acknowledges delivery, and while the
  agent is busy is rejected (as an extension error, not an exception) without
  ``deliver_as``;
* a captured ``pi`` or ``ctx`` raises :class:`StaleContextError` after a reload or a
  session replacement;
* where Pi's API throws an ``Error`` (an unknown theme colour, ``navigate_tree`` to an unknown
  entry or while a run streams, ``reload`` while a run streams...), the call raises
  :class:`PiError` with Pi's message, on both targets;
* dialogs without a UI return ``None`` / ``False``.

The concrete classes live in the simulator (``simulator.runner``) and in the bridge
(``targets.realpi.bridge_api``); this module only declares what both provide.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import ContextUsage, JsonObject
from pi_continuity_harness.errors import ApiError

__all__ = [
    "AGENT_DIR_ENV",
    "CONFIG_DIR_NAME",
    "CommandHandler",
    "CommandInfo",
    "CommandSource",
    "DeliverAs",
    "EventHandler",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionFactory",
    "ExtensionToolContext",
    "ExtensionUIContext",
    "Mode",
    "Model",
    "ModelRegistry",
    "NotInitializedError",
    "PiError",
    "ReadonlySessionManager",
    "ReplacedSessionContext",
    "StaleContextError",
    "Theme",
    "ToolCallOutcome",
    "ToolDefinition",
    "ToolExposure",
    "ToolInfo",
    "ToolResult",
    "WidgetPlacement",
    "get_agent_dir",
]

#: Pi's ``CONFIG_DIR_NAME`` (``dist/config.js``). Code must take the project config
#: directory name from this constant, never spell ``.pi`` itself.
CONFIG_DIR_NAME = ".pi"

#: Pi's agent directory variable (``dist/config.js``); :func:`get_agent_dir` reads it.
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def get_agent_dir() -> str:
    """Pi's exported ``getAgentDir()``: ``$PI_CODING_AGENT_DIR`` (tilde-expanded, read on every
    call), else ``~/.pi/agent`` (config.js:510-516). The simulator sets the variable to the
    machine's agent directory while it runs; real Pi's bridge inherits it from Pi."""
    configured = os.environ.get(AGENT_DIR_ENV)
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), CONFIG_DIR_NAME, "agent")


Mode = Literal["tui", "rpc", "json", "print"]
WidgetPlacement = Literal["aboveEditor", "belowEditor"]
DeliverAs = Literal["steer", "followUp"]

STALE_CONTEXT_MESSAGE = (
    "This extension ctx is stale after session replacement or reload. Do not use a captured pi or "
    "command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For "
    "newSession, fork, and switchSession, move post-replacement work into withSession and use the "
    "ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload()."
)
NOT_INITIALIZED_MESSAGE = (
    "Extension runtime not initialized. Action methods cannot be called during extension loading."
)


class StaleContextError(ApiError, RuntimeError):
    """A captured ``pi`` or ``ctx`` was used after reload or session replacement."""

    def __init__(self, message: str = STALE_CONTEXT_MESSAGE) -> None:
        super().__init__(message)


class NotInitializedError(ApiError, RuntimeError):
    """An action method was called while the extension factory was still loading."""

    def __init__(self, message: str = NOT_INITIALIZED_MESSAGE) -> None:
        super().__init__(message)


class PiError(ApiError, RuntimeError):
    """Pi's API threw this ``Error``; ``str()`` is Pi's message, word for word.

    Raised by a call an extension makes (``pi.*``, ``ctx.*``, ``ctx.ui.*``) where Pi 1.6's API
    throws, on the simulator and on real Pi alike (the bridge's ``PiCallError`` is one), and
    handed to ``ctx.compact``'s ``on_error``. Where Pi throws (``dist/`` of
    ``@earendil-works/pi-coding-agent`` 1.6.0):

    * ``ctx.ui.theme.fg`` of an unknown token: ``Unknown theme color: <token>``
      (``tokenAnsi``, ``modes/interactive/theme/theme.js:212-215``);
    * ``ctx.navigate_tree``: while a run streams or a prompt is in preflight, while compacting
      or navigating, ``summarize`` without a model, an unknown entry
      (``AgentSession.navigateTree``, ``core/agent-session.js:3371-3389``);
    * ``ctx.reload``: while a run streams, while compacting (``AgentSession.reload``,
      ``core/agent-session.js:3105-3110``);
    * the ``with_session`` context's ``send_user_message``: ``prompt()``'s refusals (while
      compacting, busy without ``deliver_as``, no model, no API key;
      ``core/agent-session.js:1721-1785``);
    * ``ctx.compact``'s ``on_error``: why the compaction failed (``core/agent-session.js:2335-2461``,
      2936-2948).

    A stale ``pi``/``ctx`` and an action during loading keep their own classes
    (:class:`StaleContextError`, :class:`NotInitializedError`), which Pi throws as plain Errors
    too. An exception an extension raises itself is not a ``PiError``.
    """


@dataclass(frozen=True)
class Model:
    """A model as Pi describes it (``Model`` of pi-ai). ``full_id`` is ``provider/id``."""

    provider: str
    id: str
    context_window: int
    max_tokens: int
    name: str = ""
    api: str = "openai-completions"
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)

    @property
    def full_id(self) -> str:
        return f"{self.provider}/{self.id}"

    def to_json(self) -> JsonObject:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "api": self.api,
            "provider": self.provider,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
        }


@dataclass(frozen=True)
class ToolResult:
    """What a tool's ``execute`` returns (``AgentToolResult``)."""

    content: list[JsonObject]
    details: Any = None
    is_error: bool = False
    terminate: bool = False


@dataclass(frozen=True)
class ToolCallOutcome:
    """What ``ctx.execute_tool`` returns: Pi's ``AgentToolCallOutcome`` (pi-agent-core
    agent-loop.js:559-566, ``runToolCall``). ``tool_call`` is the nested call as Pi made it
    (``{"type": "toolCall", "id": "<calling id>/<n>", "name", "arguments"}``,
    nested-tool-calls.js:103-108), ``result`` the tool's result as JSON (``content``,
    ``details``...), ``duration_ms`` how long the tool ran (``None`` for a call refused before it
    ran: unknown, invalid, blocked)."""

    tool_call: JsonObject
    result: JsonObject
    is_error: bool
    duration_ms: int | None = None


@dataclass(frozen=True)
class ToolDefinition:
    """``pi.register_tool(ToolDefinition(...))``; ``execute`` receives the tool context
    (:class:`ExtensionToolContext`)."""

    name: str
    label: str
    description: str
    parameters: JsonObject
    execute: Callable[[str, JsonObject, AbortSignal | None, ExtensionToolContext], Awaitable[ToolResult]]
    prompt_snippet: str | None = None
    metadata: JsonObject = field(default_factory=dict)


#: ``ToolExposure`` (types.d.ts:415): which tools the model is shown. A Python extension's tools
#: and Pi's built-ins are all ``direct``.
ToolExposure = Literal["direct", "model-only", "codemode", "deferred", "hidden"]


@dataclass(frozen=True)
class ToolInfo:
    """One tool of ``pi.get_all_tools()`` (Pi's ``ToolInfo``, types.d.ts:1622-1627, made by
    ``AgentSession.getAllTools``, agent-session.js:1160-1172): every registered tool, active or
    not, the eight built-ins first (``createAllToolDefinitions``, core/tools/index.js:89-100),
    then the extensions' tools in registration order (one of an extension named like a built-in
    takes that built-in's place).

    ``prompt_guidelines`` is ``None`` where Pi's field is ``undefined`` (a Python extension's
    tools, ``grep``/``find``/``ls``/``powershell``). ``source_info`` is Pi's ``sourceInfo``
    (``path``, ``source``, ``scope``, ``origin``): ``builtin:<name>`` with source ``builtin`` for
    a built-in; for an extension's tool the extension's own, whose ``path`` names the file Pi
    loaded (on real Pi the bridge's wrapper, on the simulator the Python file)."""

    name: str
    description: str
    parameters: JsonObject
    exposure: ToolExposure = "direct"
    prompt_guidelines: tuple[str, ...] | None = None
    source_info: JsonObject = field(default_factory=dict)


#: ``SlashCommandSource`` (core/slash-commands.d.ts:2).
CommandSource = Literal["extension", "prompt", "skill"]


@dataclass(frozen=True)
class CommandInfo:
    """One command of ``pi.get_commands()`` (Pi's ``SlashCommandInfo``, core/slash-commands.d.ts:
    3-8, made by ``getCommands`` in ``AgentSession._bindExtensionCore``, agent-session.js:
    2849-2872): the extensions' commands (``runner.getRegisteredCommands()``, runner.js:569-604:
    extensions in load order, each one's commands in registration order, a name several
    extensions registered as ``<name>:<n>``), then the prompt templates, then the skills as
    ``skill:<name>``. Read anew at each call, so a command registered late is listed.

    ``description`` is ``None`` where Pi's is ``undefined`` (a command registered without one).
    ``source_info`` is Pi's ``sourceInfo``: for an extension's command its extension's
    (``path``, ``source``, ``scope``, ``origin``; ``path`` names the file Pi loaded: on real Pi the
    bridge's wrapper, on the simulator the Python file; ``builtin:<name>`` for Pi's built-in
    extensions' ``llama`` and ``mcp``), for a skill its file's."""

    name: str
    description: str | None
    source: CommandSource
    source_info: JsonObject = field(default_factory=dict)


EventHandler = Callable[[Any, "ExtensionContext"], Any]
CommandHandler = Callable[[str, "ExtensionCommandContext"], Awaitable[None]]


@runtime_checkable
class Theme(Protocol):
    """``ctx.ui.theme``: Pi's current theme (``dist/modes/interactive/theme/theme.js``). Pi loads
    one in every mode (``dist/main.js:814``), so an extension may colour its widget lines in RPC,
    print and json modes too; over RPC the escape sequences travel in ``widgetLines``."""

    def fg(self, color: str, text: str) -> str:
        """``text`` in the foreground colour of the theme token ``color`` (``warning``, ``error``,
        ``success``, ``accent``, ``muted``, ...); an unknown token raises ``Unknown theme color:
        <token>`` (``Theme.fg``/``tokenAnsi``, theme.js:202-213)."""
        ...


@runtime_checkable
class ExtensionUIContext(Protocol):
    """``ctx.ui``. Dialogs are answered by the scenario (or an RPC client)."""

    @property
    def theme(self) -> Theme: ...

    def notify(self, message: str, notify_type: Literal["info", "warning", "error"] = "info") -> None: ...

    def set_status(self, key: str, text: str | None) -> None: ...

    def set_widget(
        self, key: str, lines: list[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None: ...

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool: ...

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None: ...

    async def editor(self, title: str, prefill: str | None = None) -> str | None: ...


@runtime_checkable
class ReadonlySessionManager(Protocol):
    """``ctx.session_manager``: identity and branch of the current session."""

    def get_session_id(self) -> str: ...

    def get_session_file(self) -> str | None: ...

    def get_session_dir(self) -> str: ...

    def get_cwd(self) -> str: ...

    def get_header(self) -> JsonObject | None: ...

    def get_entries(self) -> list[JsonObject]: ...

    def get_entry(self, entry_id: str) -> JsonObject | None: ...

    def get_leaf_id(self) -> str | None: ...

    def get_leaf_entry(self) -> JsonObject | None: ...

    def get_branch(self, from_id: str | None = None) -> list[JsonObject]: ...

    def get_label(self, entry_id: str) -> str | None:
        """``getLabel`` (session-manager.d.ts:178, session-manager.js:1047-1049): the entry's
        current label, or ``None`` (never set, cleared, or no such entry). Labels are read from
        every entry of the session, whatever the branch (``_buildIndex``, :752-760)."""
        ...

    def get_tree(self) -> list[JsonObject]:
        """``getTree`` (session-manager.d.ts:178, ``SessionTreeNode`` :132-139;
        session-manager.js:1136-1172): the roots of the session's entries, every branch, the
        header left out. A node is ``{"entry", "children", "label", "labelTimestamp"}``, the
        last two only when the entry has a label (the timestamp of the label entry that set it);
        an entry whose ``parentId`` is null, itself or unknown is a root; every node's children
        are sorted by their entries' timestamps, oldest first (a stable sort: equal times keep
        the file's order)."""
        ...

    def get_session_name(self) -> str | None: ...


@runtime_checkable
class ModelRegistry(Protocol):
    """``ctx.model_registry``: model lookup, auth, and model calls.

    ``complete`` mirrors ``modelRegistry.complete(model, context, options)``: ``max_tokens``
    is sent as given (Pi does not clamp it to the context), and an aborted ``signal`` makes
    the call *resolve* with ``stopReason == "aborted"``. ``reasoning`` asks for a thinking
    effort; Pi maps it only through ``streamSimple`` (the bridge does that when it is set).
    """

    def find(self, provider: str, model_id: str) -> Model | None: ...

    def get_all(self) -> list[Model]: ...

    def get_available(self) -> list[Model]: ...

    def has_configured_auth(self, model: Model) -> bool: ...

    async def complete(
        self,
        model: Model,
        context: JsonObject,
        *,
        max_tokens: int | None = None,
        signal: AbortSignal | None = None,
        reasoning: str | None = None,
    ) -> JsonObject: ...


@runtime_checkable
class ExtensionContext(Protocol):
    """``ctx`` passed to event handlers and tools (``ExtensionContext``, types.d.ts:233)."""

    @property
    def ui(self) -> ExtensionUIContext: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def has_ui(self) -> bool: ...

    @property
    def cwd(self) -> str: ...

    @property
    def session_manager(self) -> ReadonlySessionManager: ...

    @property
    def model_registry(self) -> ModelRegistry: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def signal(self) -> AbortSignal | None: ...

    @property
    def thinking_level(self) -> str:
        """``ctx.thinkingLevel`` (types.d.ts:254): a live getter of the session's current level
        (runner.js:663-666, ``runtime.getThinkingLevel``), what ``pi.get_thinking_level()``
        answers at the moment it is read."""
        ...

    def is_idle(self) -> bool: ...

    def is_project_trusted(self) -> bool: ...

    def abort(self) -> None: ...

    def has_pending_messages(self) -> bool: ...

    def shutdown(self) -> None: ...

    def get_context_usage(self) -> ContextUsage | None: ...

    def compact(
        self,
        *,
        custom_instructions: str | None = None,
        on_complete: Callable[[JsonObject], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None: ...

    def get_system_prompt(self) -> str: ...


@runtime_checkable
class ExtensionToolContext(ExtensionContext, Protocol):
    """``ctx`` of a tool's ``execute`` (``ExtensionToolContext``, core/extensions/types.d.ts:289-301;
    made by ``createToolContext``, runner.js:709-736): the extension context plus
    ``execute_tool``."""

    async def execute_tool(
        self, name: str, args: JsonObject | None = None, *, signal: AbortSignal | None = None
    ) -> ToolCallOutcome:
        """Run another tool as the model's calls run (``ctx.executeTool``, types.d.ts:291-300;
        ``AgentSession._executeNestedToolCall``, agent-session.js:446-475, and
        ``NestedToolCallRunner.execute``, nested-tool-calls.js:96-160): against the callable tools
        (the active ones, agent-session.js:1229-1234), with argument validation and the
        ``tool_call``/``tool_result`` handlers. The call's id is ``<this call's id>/<n>``; its
        ``tool_execution_*``, ``tool_call`` and ``tool_result`` events carry
        ``parent_tool_call_id`` (RPC: ``parentToolCallId``). It is not a message of the session:
        the calling tool's result message records it under ``nestedCalls``
        (agent-session.js:773-783). Never raises for a tool's failure: an unknown or inactive
        tool, invalid arguments, a blocked call and a raise come back as ``is_error``.
        ``signal`` defaults to the calling tool's. Pi's ``onUpdate`` option (a JavaScript
        callback) cannot cross the bridge and is not offered: the partial results reach the
        ``tool_execution_update`` handlers."""
        ...


class ExtensionCommandContext(ExtensionContext, Protocol):
    """Command handlers get these extra session controls (types.d.ts:306)."""

    async def wait_for_idle(self) -> None: ...

    async def new_session(
        self,
        *,
        parent_session: str | None = None,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> JsonObject: ...

    async def fork(
        self,
        entry_id: str,
        *,
        position: Literal["before", "at"] = "before",
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> JsonObject:
        """``ctx.fork`` (types.d.ts:320-325; ``runtimeHost.fork``, agent-session-runtime.js:193-262):
        a new session holding the path up to the parent of the user message ``entry_id``
        (``before``) or up to the entry itself (``at``), linked to this one. Returns
        ``{"cancelled": bool}`` (``session_before_fork`` may cancel); raises :class:`PiError`
        where Pi throws (an unknown entry, ``before`` an entry that is no user message, a session
        not written yet)."""
        ...

    async def switch_session(
        self,
        session_path: str,
        *,
        with_session: Callable[[ReplacedSessionContext], Awaitable[None]] | None = None,
    ) -> JsonObject:
        """``ctx.switchSession`` (types.d.ts:336-340; ``runtimeHost.switchSession``,
        agent-session-runtime.js:147-165): resume the session file ``session_path``
        (``session_before_switch{resume}`` may cancel). Returns ``{"cancelled": bool}``."""
        ...

    async def reload(self) -> None: ...

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> JsonObject:
        """``ctx.navigateTree`` (``core/extensions/runner.js:758-760``, ``AgentSession.navigateTree``,
        ``agent-session.js:3370-3535``): move the leaf in the same session file. Returns
        ``{"cancelled": bool}`` (every mode keeps only that, ``rpc-mode.js:259-267``); raises where Pi throws (while a
        run streams, while compacting or navigating, an unknown entry). The simulator refuses
        ``summarize=True`` (it does not model the branch summariser); real Pi runs it."""
        ...


@runtime_checkable
class ReplacedSessionContext(ExtensionCommandContext, Protocol):
    """The ``ctx`` handed to ``with_session`` (Pi's ``ReplacedSessionContext``, types.d.ts:349).

    Bound to the *new* session. Unlike ``pi.send_user_message``, its senders return
    awaitables that resolve when the run they start has settled (AS:3732-3737); left
    unawaited, the run starts on its own and ``new_session`` returns first.
    """

    async def send_user_message(
        self, content: str | list[JsonObject], *, deliver_as: DeliverAs | None = None
    ) -> None: ...

    async def send_message(
        self,
        message: JsonObject,
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None: ...


@runtime_checkable
class ExtensionAPI(Protocol):
    """``pi``, handed to the factory (``ExtensionAPI``, types.d.ts:1228)."""

    def on(self, event: str, handler: EventHandler) -> Callable[[], None]: ...

    def register_command(
        self,
        name: str,
        handler: CommandHandler,
        *,
        description: str | None = None,
        get_argument_completions: Callable[[str], list[JsonObject] | None] | None = None,
    ) -> None: ...

    def register_tool(self, tool: ToolDefinition) -> None: ...

    def register_flag(
        self,
        name: str,
        *,
        type: Literal["boolean", "string"],
        default: bool | str | None = None,
        description: str | None = None,
    ) -> None:
        """``pi.registerFlag`` (types.d.ts:1280; loader.js:268-283): ``PiError`` when
        ``default``'s type is not ``type`` (:mod:`.flags`); else the flag is this extension's and
        its default becomes the runtime's value unless the runtime has one (a CLI value, or an
        earlier extension's default). Registered while the factory runs, the default is
        pending until the factory returns (``commit``, :457-467): a factory that fails leaves
        no value. The harness passes Pi no CLI flags, so a value is always a default."""
        ...

    def get_flag(self, name: str) -> bool | str | None:
        """``pi.getFlag`` (types.d.ts:1290; loader.js:306-311): ``None`` for a flag this
        extension did not register (another extension's included); else the runtime's value,
        or while the factory runs its pending default."""
        ...

    def send_message(
        self,
        message: JsonObject,
        *,
        trigger_turn: bool | None = None,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None: ...

    def send_user_message(
        self,
        content: str | list[JsonObject],
        *,
        deliver_as: DeliverAs | None = None,
        expand_prompt_templates: bool = False,
    ) -> None: ...

    def append_entry(self, custom_type: str, data: Any = None) -> None: ...

    def get_settings(self) -> JsonObject: ...

    def get_session_name(self) -> str | None: ...

    def set_session_name(self, name: str) -> None: ...

    def set_label(self, entry_id: str, label: str | None = None) -> None:
        """``pi.setLabel`` (types.d.ts:1323; loader.js:333-336, agent-session.js:2902-2904):
        ``SessionManager.appendLabelChange`` (session-manager.js:1055-1075). An unknown
        ``entry_id`` raises :class:`PiError` (``Entry <id> not found``); else a ``label`` entry
        is appended at the leaf (``targetId``, ``label``; with ``None``, Pi's ``undefined``, the
        entry has no ``label`` key) and the label is set, or cleared by ``None`` or ``""``. No
        event is emitted."""
        ...

    def get_active_tools(self) -> list[str]: ...

    def get_all_tools(self) -> list[ToolInfo]: ...

    def get_commands(self) -> list[CommandInfo]:
        """``pi.getCommands()`` (types.d.ts:1338, loader.js:357-360): :class:`CommandInfo`. An
        action method: it raises :class:`NotInitializedError` while the factory runs
        (loader.js:112-114, 135)."""
        ...

    def set_active_tools(self, tool_names: list[str]) -> None:
        """``pi.setActiveTools`` (``setActiveToolsByName``, agent-session.js:1182-1193,
        ``_applyToolLoadout`` :1239-1245): the active tools become the registered ones among
        ``tool_names`` (an unknown name is ignored, no error); tools that stay active keep their
        order and the newly active follow in the order given. The model's next request (the next
        turn of a running run, or the next run) declares the change (``toolsAdded`` /
        ``toolsRemoved``) and patches the prompt's ``tools`` and ``rules`` sections."""
        ...

    async def set_model(self, model: Model) -> bool: ...

    def get_thinking_level(self) -> str: ...

    def set_thinking_level(self, level: str) -> None:
        """``pi.setThinkingLevel`` (types.d.ts:1350; loader.js:369-372 to
        ``AgentSession.setThinkingLevel``, agent-session.js:2219-2238, without ``persist``: the
        settings' default is untouched). The level is clamped to the current model
        (``clampThinkingLevel``, pi-ai models.js:714-732: a model without reasoning has only
        ``off``; ``xhigh``/``max`` fall to ``high``; an unknown name becomes the model's first
        level, ``off``). Only a change of the clamped level appends a ``thinking_level_change``
        entry, emits ``thinking_level_changed`` and starts ``thinking_level_select`` (not
        awaited: a Python handler runs once the caller yields)."""
        ...


ExtensionFactory = Callable[[ExtensionAPI], "Awaitable[None] | None"]
