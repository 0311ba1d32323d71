"""Event payloads and handler results, the Python form of Pi 1.6's extension events.

Field names are the snake_case form of Pi's camelCase payload keys (``willRetry`` is
``will_retry``). Data that Pi itself treats as JSON (session entries, agent messages,
models' ``usage``) stays a plain ``dict`` in Pi's own camelCase shape, exactly as it sits
in a session file, so an extension sees the same bytes through the simulator and through
the real-Pi bridge.

Handler results may be returned as the dataclasses below or as plain dicts in Pi's JSON
shape (``{"cancel": True}``, ``{"compaction": {"summary": ..., "firstKeptEntryId": ...}}``).
Python's ``{}`` counts as a result, because JavaScript's ``{}`` is truthy: Pi's "last
truthy result wins" rule is modelled on JavaScript truthiness (:func:`js_truthy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pi_continuity_harness.api.abort import AbortSignal

__all__ = [
    "AfterProviderResponseEvent",
    "AgentBeforeSettleEvent",
    "AgentEndEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeCompactResult",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "BeforeSwitchResult",
    "BeforeTreeResult",
    "CompactionPreparation",
    "CompactionReason",
    "CompactionResult",
    "CompactionSettings",
    "ContextEvent",
    "ContextUsage",
    "ContextWithSystemEvent",
    "Event",
    "InputEvent",
    "InputResult",
    "JsonObject",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ProviderStreamEvent",
    "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionInfoChangedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ThinkingLevelSelectEvent",
    "ToolCallEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResultEvent",
    "TreePreparation",
    "TurnEndEvent",
    "TurnStartEvent",
    "UserBashEvent",
    "coerce_before_compact_result",
    "coerce_before_switch_result",
    "coerce_before_tree_result",
    "coerce_input_result",
    "js_truthy",
]

JsonObject = dict[str, Any]
CompactionReason = Literal["manual", "threshold", "overflow"]


def js_truthy(value: object) -> bool:
    """JavaScript truthiness: objects (even ``{}``/``[]``) are true; None, False, 0, "" are not."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0
    if isinstance(value, str):
        return value != ""
    return True


@dataclass(frozen=True)
class CompactionSettings:
    """``preparation.settings``: the effective native settings Pi used for this check."""

    enabled: bool
    reserve_tokens: int
    keep_recent_tokens: int

    def to_json(self) -> JsonObject:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True)
class ContextUsage:
    """``ctx.get_context_usage()``. ``tokens`` is None after a compaction until the next reply."""

    tokens: int | None
    context_window: int
    percent: float | None


@dataclass(frozen=True)
class CompactionPreparation:
    """``CompactionPreparation`` of ``compaction.d.ts``: what Pi prepared before the hook runs."""

    first_kept_entry_id: str
    messages_to_summarize: list[JsonObject]
    turn_prefix_messages: list[JsonObject]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: dict[str, list[str]]
    settings: CompactionSettings


@dataclass(frozen=True)
class CompactionResult:
    """A custom compaction. Pi stores every field verbatim, without validation."""

    summary: str
    first_kept_entry_id: str | None
    tokens_before: int
    details: Any = None
    usage: JsonObject | None = None
    estimated_tokens_after: int | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.estimated_tokens_after is not None:
            out["estimatedTokensAfter"] = self.estimated_tokens_after
        if self.usage is not None:
            out["usage"] = self.usage
        if self.details is not None:
            out["details"] = self.details
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> CompactionResult:
        return cls(
            summary=data.get("summary"),  # type: ignore[arg-type]  # Pi does not validate; neither do we
            first_kept_entry_id=data.get("firstKeptEntryId"),
            tokens_before=data.get("tokensBefore"),  # type: ignore[arg-type]
            details=data.get("details"),
            usage=data.get("usage"),
        )


@dataclass(frozen=True)
class BeforeCompactResult:
    """Result of a ``session_before_compact`` handler."""

    cancel: bool = False
    compaction: CompactionResult | None = None


@dataclass(frozen=True)
class BeforeSwitchResult:
    cancel: bool = False


@dataclass(frozen=True)
class BeforeTreeResult:
    """Result of a ``session_before_tree`` handler (``agent-session.js:3412-3433``): ``cancel``
    keeps the leaf; ``summary`` (used only when the user asked for one), and the overrides of the
    summariser's instructions and of the label."""

    cancel: bool = False
    summary: JsonObject | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class InputResult:
    """An ``input`` handler's result. A ``transform`` replaces the text with ``text`` as it is
    (``currentText = result.text``, runner.js:1232): one without a text leaves Pi none, and a
    prompt that expands templates (every RPC or interactive prompt) then fails with
    ``Cannot read properties of undefined (reading 'startsWith')`` (agent-session.js:1754,
    1821); ``send_user_message`` (no expansion) goes on with a user message without a text,
    and every later request fails (``Cannot read properties of undefined (reading 'length')``,
    pi-ai's estimate) until a compaction summarises it away. ``images`` replace the prompt's
    only when given."""

    action: Literal["continue", "transform", "handled"]
    text: str | None = None
    images: list[JsonObject] | None = None


def coerce_before_compact_result(value: object) -> BeforeCompactResult | None:
    """Turn a handler's return value into a result, or None when it is not truthy.

    A truthy value that carries neither ``cancel`` nor ``compaction`` (for example ``{}``)
    still counts as a result: it replaces an earlier extension's compaction (§9.6).
    """
    if not js_truthy(value):
        return None
    if isinstance(value, BeforeCompactResult):
        return value
    if isinstance(value, dict):
        compaction = value.get("compaction")
        if isinstance(compaction, CompactionResult):
            parsed = compaction
        elif isinstance(compaction, dict):
            parsed = CompactionResult.from_json(compaction)
        else:
            parsed = None
        return BeforeCompactResult(cancel=js_truthy(value.get("cancel")), compaction=parsed)
    return BeforeCompactResult()


def coerce_before_switch_result(value: object) -> BeforeSwitchResult | None:
    if not js_truthy(value):
        return None
    if isinstance(value, BeforeSwitchResult):
        return value
    if isinstance(value, dict):
        return BeforeSwitchResult(cancel=js_truthy(value.get("cancel")))
    return BeforeSwitchResult()


def coerce_before_tree_result(value: object) -> BeforeTreeResult | None:
    """A ``session_before_tree`` handler's value, or None when it is not truthy (Pi keeps the
    last truthy result, ``runner.js:833-838``)."""
    if not js_truthy(value):
        return None
    if isinstance(value, BeforeTreeResult):
        return value
    if isinstance(value, dict):
        summary = value.get("summary")
        return BeforeTreeResult(
            cancel=js_truthy(value.get("cancel")),
            summary=summary if isinstance(summary, dict) else None,
            custom_instructions=value.get("customInstructions"),
            replace_instructions=value.get("replaceInstructions"),
            label=value.get("label"),
        )
    return BeforeTreeResult()


def coerce_input_result(value: object) -> InputResult | None:
    if isinstance(value, InputResult):
        return value
    if isinstance(value, dict) and value.get("action") in ("continue", "transform", "handled"):
        return InputResult(action=value["action"], text=value.get("text"), images=value.get("images"))
    return None


class Event:
    """Base of every event payload. ``type`` is Pi's event name."""

    type: ClassVar[str]


@dataclass(frozen=True)
class SessionStartEvent(Event):
    type: ClassVar[str] = "session_start"
    reason: Literal["startup", "reload", "new", "resume", "fork"]
    previous_session_file: str | None = None


@dataclass(frozen=True)
class SessionShutdownEvent(Event):
    type: ClassVar[str] = "session_shutdown"
    reason: Literal["quit", "reload", "new", "resume", "fork"]
    target_session_file: str | None = None


@dataclass(frozen=True)
class SessionInfoChangedEvent(Event):
    """``pi.setSessionName`` / RPC ``set_session_name``: the new name (also a session event)."""

    type: ClassVar[str] = "session_info_changed"
    name: str | None


@dataclass(frozen=True)
class SessionBeforeSwitchEvent(Event):
    type: ClassVar[str] = "session_before_switch"
    reason: Literal["new", "resume"]
    target_session_file: str | None = None


@dataclass(frozen=True)
class SessionBeforeForkEvent(Event):
    """``session_before_fork`` (``dist/core/agent-session-runtime.js:109-120``): before RPC
    ``fork`` branches the session at ``entry_id``; ``{"cancel": true}`` keeps the session."""

    type: ClassVar[str] = "session_before_fork"
    entry_id: str
    position: Literal["before", "at"] = "before"


@dataclass(frozen=True)
class TreePreparation:
    """``preparation`` of ``session_before_tree`` (``agent-session.js:3394-3403``): the target,
    the leaf before, their deepest common ancestor, the entries of the abandoned branch (old
    leaf back to that ancestor, oldest first: ``collectEntriesForBranchSummary``,
    ``core/compaction/branch-summarization.js:27-56``) and the caller's options."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[JsonObject]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class SessionBeforeTreeEvent(Event):
    """``session_before_tree`` (``agent-session.js:3412-3421``): before ``navigateTree`` moves
    the leaf; ``{"cancel": true}`` keeps it (``navigateTree`` returns ``{cancelled: true}``)."""

    type: ClassVar[str] = "session_before_tree"
    preparation: TreePreparation
    signal: AbortSignal


@dataclass(frozen=True)
class SessionTreeEvent(Event):
    """``session_tree`` (``agent-session.js:3518-3524``): after the leaf moved and the context was
    refreshed. ``summary_entry`` and ``from_extension`` only with a branch summary."""

    type: ClassVar[str] = "session_tree"
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: JsonObject | None = None
    from_extension: bool | None = None


@dataclass(frozen=True)
class SessionBeforeCompactEvent(Event):
    type: ClassVar[str] = "session_before_compact"
    preparation: CompactionPreparation
    branch_entries: list[JsonObject]
    custom_instructions: str | None
    reason: CompactionReason
    will_retry: bool
    signal: AbortSignal


@dataclass(frozen=True)
class SessionCompactEvent(Event):
    type: ClassVar[str] = "session_compact"
    compaction_entry: JsonObject
    from_extension: bool
    reason: CompactionReason
    will_retry: bool


@dataclass(frozen=True)
class SessionCompactFailedEvent(Event):
    type: ClassVar[str] = "session_compact_failed"
    reason: CompactionReason
    error_message: str | None
    aborted: bool
    will_retry: bool
    from_extension: bool


@dataclass(frozen=True)
class ModelSelectEvent(Event):
    type: ClassVar[str] = "model_select"
    model: Any
    previous_model: Any
    source: Literal["set", "cycle", "restore"]


@dataclass(frozen=True)
class ThinkingLevelSelectEvent(Event):
    """The thinking level changed (agent-session.js:2219-2238, ``setThinkingLevel``: a model
    switch clamps or restores it): ``level`` the new, clamped level, ``previous_level`` the one
    before. Pi does not await it (``void _extensionRunner.emit``) and ignores a handler's
    return value; a handler that raises is an ``extension_error``."""

    type: ClassVar[str] = "thinking_level_select"
    level: str
    previous_level: str


@dataclass(frozen=True)
class InputEvent(Event):
    type: ClassVar[str] = "input"
    text: str
    images: list[JsonObject] | None
    source: Literal["interactive", "rpc", "extension"]
    streaming_behavior: Literal["steer", "followUp"] | None


@dataclass(frozen=True)
class BeforeAgentStartEvent(Event):
    type: ClassVar[str] = "before_agent_start"
    message_type: Literal["user", "custom"]
    prompt: str | None
    system_prompt: str
    message: JsonObject | None = None


@dataclass(frozen=True)
class ContextEvent(Event):
    """Before each model request of a run (``dist/core/sdk.js:276-282``, runner.js:1014-1078
    ``emitContext``): the conversation the model is about to get, without Pi's system
    messages. A handler may return ``{"messages": [...]}``: the model then gets those (Pi's
    system prompt and tool declarations folded into one leading system message before them);
    the session keeps the whole conversation. Changing ``messages`` in place changes nothing
    (a Python handler has a copy); a handler that raises is an ``extension_error``."""

    type: ClassVar[str] = "context"
    messages: list[JsonObject]


@dataclass(frozen=True)
class ResourcesDiscoverEvent(Event):
    """After every ``session_start`` of a runtime (``dist/core/agent-session.js:2786-2804``
    ``bindExtensions`` then ``extendResourcesFromExtensions``; :3136-3139 after a reload):
    the project directory and ``reason``, ``"reload"`` after a reload, else ``"startup"`` (a
    new, forked or resumed session too: RPC mode binds each new session, ``rpc-mode.js:249``).

    A handler may return ``{"skillPaths": [...], "promptPaths": [...], "themePaths": [...]}``
    (runner.js:1194-1210 ``emitResourcesDiscover``): each list's paths, relative ones resolved
    against the project directory, are added to what Pi loaded (``resource-loader.js:339-364``
    ``extendResources``), and the system prompt is rebuilt, so the skills found there are
    listed in its ``skills`` section from the next first run on. A handler that raises is an
    ``extension_error`` and adds nothing."""

    type: ClassVar[str] = "resources_discover"
    cwd: str
    reason: Literal["startup", "reload"]


@dataclass(frozen=True)
class ContextWithSystemEvent(Event):
    """The phase of ``emitContext`` after ``context`` (runner.js:1049-1077): the whole request
    transcript, Pi's system messages included (the leading one holds the system prompt and the
    tool declarations). A handler may return ``{"messages": [...]}``: the model gets exactly
    those, with no restoring; a result whose first message is not a system message where the
    transcript had one is still used, and reported as an ``extension_error`` ("Handler removed
    the leading system message; ..."). Changing ``messages`` in place changes nothing (a Python
    handler has a copy); a handler that raises is an ``extension_error``."""

    type: ClassVar[str] = "context_with_system"
    messages: list[JsonObject]


@dataclass(frozen=True)
class AgentStartEvent(Event):
    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True)
class AgentEndEvent(Event):
    """The extension payload has no ``will_retry`` (§9.5): ``agent_end`` is not final."""

    type: ClassVar[str] = "agent_end"
    messages: list[JsonObject]


@dataclass(frozen=True)
class AgentBeforeSettleEvent(Event):
    """Before the run settles (agent-session.js:1639-1662, ``_runBeforeSettleBoundary``): the
    last turn's ``outcome`` (``completed``, ``aborted`` or ``error``), the session-entry drafts
    so far (``entries``) and whether a handler asked to go on (``continue_``: Pi's ``continue``,
    a Python keyword). Each handler sees what the earlier ones returned (runner.js:772-818,
    ``emitBoundary``); a handler may return ``{"entries": [...drafts], "continue": True}``:
    Pi appends the drafts (``custom``, ``custom_message``, ``context_edit``, ``compaction``)
    and, when the context can go on, starts another turn. The bridge leaves out Pi's
    ``context`` preview (bridge.ts ``registerHandler``)."""

    type: ClassVar[str] = "agent_before_settle"
    outcome: Literal["completed", "aborted", "error"]
    entries: list[Any]
    continue_: Any


@dataclass(frozen=True)
class AgentSettledEvent(Event):
    type: ClassVar[str] = "agent_settled"
    aborted: bool


@dataclass(frozen=True)
class TurnStartEvent(Event):
    type: ClassVar[str] = "turn_start"
    turn_index: int
    timestamp: int


@dataclass(frozen=True)
class TurnEndEvent(Event):
    """A turn ended (agent-session.js:546-579, ``_dispatchTurnEndBoundary``). Like
    ``agent_before_settle`` it is a run boundary (runner.js:772-818, ``emitBoundary``):
    ``entries`` and ``continue_`` (Pi's ``continue``, a Python keyword) are the session-entry
    drafts and the ``continue`` the earlier handlers returned; a handler may return
    ``{"entries": [...drafts], "continue": True}``: Pi appends the drafts and, when the loop
    would stop and the context can go on, runs one more context-only turn. The bridge leaves out
    Pi's ``context`` preview (bridge.ts ``registerHandler``)."""

    type: ClassVar[str] = "turn_end"
    turn_index: int
    message: JsonObject
    tool_results: list[JsonObject]
    message_entry_id: str | None
    tool_result_entry_ids: list[str]
    outcome: Literal["completed", "aborted", "error"]
    entries: list[Any] = field(default_factory=list)
    continue_: Any = False


@dataclass(frozen=True)
class MessageStartEvent(Event):
    type: ClassVar[str] = "message_start"
    message: JsonObject


@dataclass(frozen=True)
class MessageUpdateEvent(Event):
    """One streamed delta of an assistant message (agent-session.js:990-996): ``message`` as it
    stands at this delta, ``assistant_message_event`` pi-ai's delta event (``text_delta``, ...)
    without its ``partial`` (the bridge drops it: it repeats ``message``)."""

    type: ClassVar[str] = "message_update"
    message: JsonObject
    assistant_message_event: JsonObject


@dataclass(frozen=True)
class MessageEndEvent(Event):
    type: ClassVar[str] = "message_end"
    message: JsonObject


@dataclass(frozen=True)
class ToolExecutionStartEvent(Event):
    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: JsonObject
    #: Set for a call another tool made (``ctx.execute_tool``): the calling call's id
    #: (nested-tool-calls.js:109-160, agent-session.js:385-416).
    parent_tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolExecutionUpdateEvent(Event):
    """A running tool's partial result (agent-session.js:1026-1034, from pi-agent-core
    ``emitToolExecutionUpdate``, agent-loop.js:540-547): ``args`` the call's arguments,
    ``partial_result`` what the tool reported (``bash``: an empty one as it starts, then its
    output so far, bash.js:204-241). Pi awaits every update before ``tool_execution_end``
    (agent-loop.js:577-581); a handler's return value is ignored."""

    type: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: JsonObject
    partial_result: JsonObject
    #: Set for a call another tool made (``ctx.execute_tool``): the calling call's id
    #: (nested-tool-calls.js:109-160, agent-session.js:385-416).
    parent_tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolExecutionEndEvent(Event):
    """A tool call's end (agent-session.js:1036-1045). ``duration_ms``: how long the tool's
    ``execute`` ran, rounded milliseconds (pi-agent-core agent-loop.js:576-591, 653), present
    only for a call that was executed (``None`` for one refused, blocked or failed before it
    ran); wall time on real Pi, virtual time on the simulator."""

    type: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: JsonObject
    is_error: bool
    duration_ms: int | None = None
    #: Set for a call another tool made (``ctx.execute_tool``): the calling call's id
    #: (nested-tool-calls.js:109-160, agent-session.js:385-416).
    parent_tool_call_id: str | None = None


@dataclass(frozen=True)
class UserBashEvent(Event):
    """A user's shell command (RPC ``bash``, ``dist/modes/rpc/rpc-mode.js:462-468``): ``command``
    as sent, ``exclude_from_context`` the command's ``excludeFromContext ?? false``, ``cwd`` the
    session's directory. The first handler returning something other than ``None`` decides
    (``emitUserBash``, ``dist/core/extensions/runner.js:986-1013``): it must be
    ``{"result": {"output": str, "exitCode": int, "cancelled": bool, "truncated": bool}}``
    (``fullOutputPath``, a string, may be added; ``isUserBashEventResult``, runner.js:51-75),
    which Pi records instead of running the command. ``{operations}`` needs a JavaScript function,
    which a Python result cannot carry, and an ``exitCode`` of ``None`` is JSON ``null``, which Pi
    refuses. Anything else, or a raise, is an ``extension_error`` and fails the command with it."""

    type: ClassVar[str] = "user_bash"
    command: str
    exclude_from_context: bool
    cwd: str


@dataclass(frozen=True)
class ToolCallEvent(Event):
    type: ClassVar[str] = "tool_call"
    tool_call_id: str
    tool_name: str
    input: JsonObject = field(default_factory=dict)
    #: Set for a call another tool made (``ctx.execute_tool``): the calling call's id
    #: (nested-tool-calls.js:109-160, agent-session.js:385-416).
    parent_tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolResultEvent(Event):
    type: ClassVar[str] = "tool_result"
    tool_call_id: str
    tool_name: str
    input: JsonObject
    content: list[JsonObject]
    details: Any
    is_error: bool
    #: Set for a call another tool made (``ctx.execute_tool``): the calling call's id
    #: (nested-tool-calls.js:109-160, agent-session.js:385-416).
    parent_tool_call_id: str | None = None


@dataclass(frozen=True)
class BeforeProviderRequestEvent(Event):
    """The provider's request body, just before it is sent (``onPayload``: sdk.js:224-229,
    runner.js:1079-1107 ``emitBeforeProviderRequest``): for the agent's own model calls only
    (pi-agent-core agent.js:312 passes ``onPayload`` to the agent loop; compaction and branch
    summaries, compaction.js:477-488, and ``ctx.model_registry.complete`` do not). ``payload``
    is what pi-ai's ``buildParams`` made (openai-completions.js:188-192: the chat-completions
    body), or what the handler before returned. A handler that returns anything but ``None``
    replaces the payload: the next handler sees the replacement, and the last one is the body
    Pi sends (JSON). A handler that raises is reported as an extension error and the payload
    stays as it was."""

    type: ClassVar[str] = "before_provider_request"
    payload: Any


@dataclass(frozen=True)
class AfterProviderResponseEvent(Event):
    """The HTTP response's status and headers, once they are in and before the stream is read
    (``onResponse``: sdk.js:230-238, openai-completions.js:203): for the agent's own model calls
    only, and only for a response the provider accepted (an HTTP error status makes the SDK
    throw first: no event). ``headers`` as ``headersToRecord`` makes them (pi-ai
    utils/headers.js: the fetch ``Headers``' entries, names lower-case and sorted). The return
    value is ignored."""

    type: ClassVar[str] = "after_provider_response"
    status: int
    headers: dict[str, str]


@dataclass(frozen=True)
class ProviderStreamEvent(Event):
    """One chunk of the provider's stream as the provider's SDK parsed it, before pi-ai reads it
    (``onProviderStreamEvent``: sdk.js:240-249, openai-completions.js:339-340): for the agent's
    own model calls only. ``data`` is the chat-completion chunk (an SSE ``error`` object and
    ``[DONE]`` are not chunks); ``provider``, ``api`` and ``model`` (its id) name the request's
    model. The return value is ignored."""

    type: ClassVar[str] = "provider_stream_event"
    data: Any
    provider: str
    api: str
    model: str


@dataclass(frozen=True)
class BeforeProviderHeadersEvent(Event):
    """The request's extra HTTP headers, once auth is resolved and before the provider builds
    its request (``transformHeaders``: sdk.js:206-208, model-runtime.js:476-478,
    runner.js:1108-1133 ``emitBeforeProviderHeaders``): for every request through the agent's
    stream function, the agent's turns and the compaction summaries alike, not for
    ``ctx.model_registry.complete``. Pi's handlers change ``headers`` in place and their return
    value is ignored; a Python handler's ``headers`` is the bridge's JSON copy, so on real Pi it
    only observes them (``{}`` for the harness's provider, which declares none)."""

    type: ClassVar[str] = "before_provider_headers"
    headers: dict[str, str]
