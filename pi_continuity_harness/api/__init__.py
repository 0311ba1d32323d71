"""The Python form of Pi 1.6's extension API: everything an extension imports.

Audience: extension authors. An extension is a factory ``def extension(pi: ExtensionAPI)``
(or ``async def``) that imports nothing of the harness but this package, so the same code
runs on the simulated host and, through the bridge, inside real Pi 1.6::

    from pi_continuity_harness.api import ExtensionAPI, ExtensionContext, SessionBeforeCompactEvent

    def extension(pi: ExtensionAPI) -> None:
        async def before_compact(event: SessionBeforeCompactEvent, ctx: ExtensionContext) -> object:
            return {"cancel": True}

        pi.on("session_before_compact", before_compact)

The modules: :mod:`.extension_api` (``pi``, ``ctx`` and the command contexts, models, tools,
``CONFIG_DIR_NAME``), :mod:`.events` (event payloads and handler results) and :mod:`.abort`
(``AbortSignal``/``AbortController``). Names are the snake_case form of Pi's; semantics are
Pi's, quirks included (see each module).
"""

from pi_continuity_harness.api.abort import AbortController, AbortError, AbortSignal
from pi_continuity_harness.api.events import (
    AgentEndEvent,
    AgentSettledEvent,
    AgentStartEvent,
    BeforeAgentStartEvent,
    BeforeCompactResult,
    BeforeSwitchResult,
    CompactionPreparation,
    CompactionReason,
    CompactionResult,
    CompactionSettings,
    ContextUsage,
    Event,
    InputEvent,
    InputResult,
    JsonObject,
    MessageEndEvent,
    MessageStartEvent,
    ModelSelectEvent,
    SessionBeforeCompactEvent,
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionInfoChangedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    ToolCallEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from pi_continuity_harness.api.extension_api import (
    AGENT_DIR_ENV,
    CONFIG_DIR_NAME,
    CommandHandler,
    DeliverAs,
    EventHandler,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    ExtensionFactory,
    ExtensionUIContext,
    Mode,
    Model,
    ModelRegistry,
    NotInitializedError,
    ReadonlySessionManager,
    ReplacedSessionContext,
    StaleContextError,
    Theme,
    ToolDefinition,
    ToolResult,
    WidgetPlacement,
    get_agent_dir,
)

__all__ = [
    "AGENT_DIR_ENV",
    "CONFIG_DIR_NAME",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AgentEndEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeCompactResult",
    "BeforeSwitchResult",
    "CommandHandler",
    "CompactionPreparation",
    "CompactionReason",
    "CompactionResult",
    "CompactionSettings",
    "ContextUsage",
    "DeliverAs",
    "Event",
    "EventHandler",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionFactory",
    "ExtensionUIContext",
    "InputEvent",
    "InputResult",
    "JsonObject",
    "MessageEndEvent",
    "MessageStartEvent",
    "Mode",
    "Model",
    "ModelRegistry",
    "ModelSelectEvent",
    "NotInitializedError",
    "ReadonlySessionManager",
    "ReplacedSessionContext",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionInfoChangedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "StaleContextError",
    "Theme",
    "ToolCallEvent",
    "ToolDefinition",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolResult",
    "ToolResultEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "WidgetPlacement",
    "get_agent_dir",
]
