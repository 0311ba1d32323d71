"""``AgentSession`` of Pi 1.6 (``dist/core/agent-session.js``), ported to asyncio.

This is where Pi decides when to compact, and where nearly every quirk of §9 lives. The
port keeps Pi's structure (``prompt`` → ``start_run`` → ``_prepare_run`` → loop →
``_handle_post_agent_run`` → ``_emit_agent_settled``, all but the first in
:mod:`.session_runs`) so a reader can hold it next to the JavaScript. Pi's class does several
jobs; each but the first is a module of its own, a
collaborator the session holds and that reads and changes the session's state:

* this module: the state (the constructor, agent-session.js:206-246; ``isStreaming``,
  ``isIdle``, ``isCompacting``, :1131-1138, :1295-1300; idle waits, :725-741, :2094-2102),
  the agent's events, handed to the extensions, then to RPC, then persisted
  (``_handleAgentEvent``, :768-861; ``_emitExtensionEvent``, :961-1052;
  ``_emit``/``_emitQueueUpdate``, :708-719), the agent loop's hooks (the request,
  ``finishTurn``, ``prepareNextTurnWithContext``, :492-628), abort (:2082-2093) and
  ``getContextUsage`` (:3614-3654);
* :mod:`.session_tools`: the active tools, tool calls, ``ctx.execute_tool``, the prompt sections;
* :mod:`.session_prompting`: ``prompt()``, the queues, custom and user messages, RPC ``bash``;
* :mod:`.session_runs`: a run from its start to ``agent_settled``, retry and the boundaries;
* :mod:`.session_compaction`: the threshold checks, automatic and manual compaction;
* :mod:`.session_tree`: ``navigateTree``; :mod:`.session_model`: ``setModel``, ``setThinkingLevel``.

The hot path (a streamed delta: ``message_update``) stays in this module, one call from the
loop to :meth:`AgentSession._handle_agent_event` as before. The quirks, each named in the code
where it happens:

* §9.1  manual compaction aborts the running turn first, emits ``compaction_start`` even
  when it then fails ("Nothing to compact", "Already compacted"), ignores ``enabled``;
* §9.2  the threshold is checked at three points: mid-run before the next request, after
  ``agent_end`` (reported usage), and before a new prompt (after ``input``, before
  ``agent_start``; the prompt is not acknowledged until the hook returns);
* §9.3  a session too small to summarise skips automatic compaction silently;
* §9.4  overflow: error patterns, silent overflow on a ``stop`` above the window,
  recoverable ``length`` stops; one compact-and-retry per chain of failed replies, with a
  ``context_edit`` omission, Pi's two failure texts, and a silent give-up when nothing is
  left to summarise;
* §9.5  ``agent_end`` is not final; ``agent_settled`` is;
* §9.6/9.7  extension results are combined by the runner and stored verbatim;
* §9.9  ``session_compact`` receives the *first* entry whose summary equals the new one;
* §9.16 ``send_user_message`` while busy without ``deliver_as`` is rejected as an
  extension error; during manual compaction it is rejected and the message is lost;
* §9.17 busy from ``start_run`` to ``agent_settled``; idle also requires no compaction;
* §9.21 ``get_context_usage()`` has null tokens after a compaction until the next reply;
* §9.24 retryable errors are retried (virtual backoff) before any compaction check.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.api.events import (
    AgentEndEvent,
    AgentStartEvent,
    BeforeCompactResult,
    BeforeSwitchResult,
    BeforeTreeResult,
    ContextUsage,
    Event,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    SessionCompactEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnStartEvent,
)
from pi_continuity_harness.api.extension_api import Model, ToolCallOutcome, ToolInfo
from pi_continuity_harness.scenario.identity_memo import identity
from pi_continuity_harness.scenario.layout import pi_package_path
from pi_continuity_harness.scenario.observed import OBSERVABLE_EVENTS, event_summary
from pi_continuity_harness.scenario.trace import SimulatedCrash, Trace
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.active_tools import ActiveTools
from pi_continuity_harness.simulator.agent_loop import Agent, AgentEvent, CompletedTurn, LoopHooks, StreamEmit
from pi_continuity_harness.simulator.builtin_tools import BuiltinTools
from pi_continuity_harness.simulator.compaction import (
    calculate_context_tokens,
    estimate_projected_context_tokens,
)
from pi_continuity_harness.simulator.messages import (
    UNDEFINED,
    JsTypeError,
    LlmConversion,
    Message,
    RequestEstimate,
    absent_if_none,
)
from pi_continuity_harness.simulator.model_service import ScriptedModelService
from pi_continuity_harness.simulator.nested_tools import NestedCalls
from pi_continuity_harness.simulator.prompt_templates import PromptTemplates
from pi_continuity_harness.simulator.provider_events import agent_provider_hooks, summary_provider_hooks
from pi_continuity_harness.simulator.session_compaction import (
    LENGTH_RECOVERY_FAILED,
    OVERFLOW_RECOVERY_FAILED,
    SessionCompaction,
)
from pi_continuity_harness.simulator.session_manager import SessionManager
from pi_continuity_harness.simulator.session_model import SessionModel
from pi_continuity_harness.simulator.session_prompting import (
    BUSY_WITHOUT_BEHAVIOR,
    PROMPT_DURING_COMPACTION,
    SessionPrompting,
)
from pi_continuity_harness.simulator.session_runs import SessionRuns
from pi_continuity_harness.simulator.session_shared import PiThrewError, PromptRejectedError, clamp_max_tokens
from pi_continuity_harness.simulator.session_tools import SessionTools
from pi_continuity_harness.simulator.session_tree import SessionTree
from pi_continuity_harness.simulator.settings import SettingsManager
from pi_continuity_harness.simulator.skill_dirs import SkillOrigin
from pi_continuity_harness.simulator.skills import Skill
from pi_continuity_harness.simulator.virtual_loop import InstantMark

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.runner import ExtensionRunner

__all__ = [
    "BUSY_WITHOUT_BEHAVIOR",
    "LENGTH_RECOVERY_FAILED",
    "OVERFLOW_RECOVERY_FAILED",
    "PROMPT_DURING_COMPACTION",
    "AgentSession",
    "PiThrewError",
    "PromptRejectedError",
]

#: The agent events whose extension step does more than a dispatch of its extension event: the
#: observable ones (the trace records them with or without a handler, :meth:`AgentSession.dispatch`),
#: which also reset or count the turn index (``turn_end``: its boundary) and read the clock
#: (``turn_start``: its ``timestamp``). Any other agent event (``message_start``,
#: ``message_end``, ``tool_execution_start``/``_end``) is only dispatched, and a dispatch without
#: a handler does nothing (no trace, no await point), so it is skipped then
#: (:meth:`AgentSession._handle_agent_event`).
_RUN_EVENTS = frozenset({"agent_start", "agent_end", "turn_start", "turn_end"})


class AgentSession:
    """One session of the simulated Pi process."""

    def __init__(
        self,
        *,
        session_manager: SessionManager,
        settings: SettingsManager,
        service: ScriptedModelService,
        model: Model | None,
        trace: Trace,
        cwd: str,
        package_dir: str | None = None,
        thinking_level: str = "off",
        spawn: Callable[[Coroutine[Any, Any, Any], str], asyncio.Task[Any]],
        track: Callable[[asyncio.Task[Any]], None] | None = None,
        write_file: Callable[[str, str], None],
        remove_file: Callable[[str], None] | None = None,
        read_file: Callable[[str], bytes] | None = None,
        confine: Callable[[str, str], None] | None = None,
        summary_files: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.session_manager = session_manager
        self.settings = settings
        self.service = service
        self.model = model
        self.trace = trace
        self.cwd = cwd
        #: The Pi package directory the system prompt names (``scenario/layout.py``); by default
        #: beside the project, as the simulated host lays it out.
        self.package_dir = package_dir or pi_package_path(os.path.dirname(cwd.rstrip("/")))
        self.thinking_level = thinking_level
        #: The ``skills`` section of the system prompt: the skills of Pi's skill folders
        #: (:mod:`.skill_dirs`) and those ``resources_discover`` handlers named (:mod:`.resources`),
        #: "" for none (a reload starts again from the folders').
        self.skills_prompt = ""
        #: The paths those handlers returned, merged (``lastSkillPaths``, resource-loader.js:353).
        self.extension_skill_paths: list[str] = []
        #: The skill files Pi finds without an extension, each with its origin (the skill folders
        #: and the ``skills`` setting, :mod:`.skill_dirs`; read anew for each runtime and reload).
        self.default_skills: list[tuple[str, SkillOrigin]] = []
        #: The skills loaded from those and the extensions' paths (``/skill:name`` prompts
        #: expand to them).
        self.skills: list[Skill] = []
        #: ``extensionSkillSourceInfos`` (resource-loader.js:251, 344): each path those handlers
        #: named (resolved) -> the extension that named it last, in the order first named (a
        #: reload starts again from none, :mod:`.resources`).
        self.extension_skill_owners: dict[str, str] = {}
        #: The prompt templates: the default folders', loaded at the runtime's start and on
        #: reload, and those of the paths ``resources_discover`` handlers named
        #: (:mod:`.prompt_templates`); ``/name args`` prompts expand to them.
        self.prompt_templates = PromptTemplates()
        #: Marks a file operation as Pi's own, not the extension's (the host's ``host_io``).
        self.host_io: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
        #: Whether this session ever listed skills: only then can the prompt sections differ
        #: from the transcript's, and each run diffs them.
        self.skills_seen = False
        #: Whether an extension tool ever changed the prompt's ``tools``/``rules`` sections
        #: (:meth:`.session_tools.SessionTools.prompt_extension_tools`): from then on each run diffs the sections, so a
        #: tool that is gone after a reload is patched away too.
        self.prompt_tools_seen = False
        #: The active tools (``pi.set_active_tools``): Pi's default until an extension sets them.
        self.active_tools = ActiveTools()
        #: Set when an extension sets the tools or registers one after loading: the next turn of
        #: a running run declares them (``prepareNextTurnWithContext``, agent-session.js:593-620);
        #: a run's start clears it.
        self._loadout_changed = False
        #: The prompt files the runtime's resource loader read (:func:`.resources.read_prompt_files`),
        #: "" for none: the ``project_context`` section's text (the context files), ``SYSTEM.md``
        #: and ``APPEND_SYSTEM.md``.
        self.project_context = ""
        self.custom_prompt = ""
        self.prompt_addendum = ""
        #: Whether this session ever read such a file: from then on each run diffs the sections
        #: (a file written before a reload is patched in, one removed patched away).
        self.prompt_files_seen = False
        #: The files under the project holding a summary's exact bytes, read as the host (the
        #: ``summaryFiles`` witness of ``session_compact``, ``scenario/observed.py``).
        self._summary_files = summary_files
        #: Told the new level when :meth:`set_thinking_level` changes it (the host keeps it for
        #: the runtimes it starts and for ``pi.getThinkingLevel()``).
        self.on_thinking_level: Callable[[str], None] | None = None
        #: Whether the process this session lives in has died (the host sets it: ``SimHost.crashed``).
        self.process_dead: Callable[[], bool] = lambda: False
        self._spawn = spawn
        #: Makes a task started elsewhere a host task (``SimHost._track``: the host waits for
        #: it and reports its failure), for the dispatches Pi does not await.
        self._track = track
        self.builtin_tools = BuiltinTools(
            cwd=cwd,
            scripted_output=service.tool_result_for,
            write_file=write_file,
            remove_file=remove_file or _remove_plain,
            read_file=read_file,
            confine=confine,
            model=lambda: self.model,
        )
        self.runner: ExtensionRunner | None = None
        #: The session's compaction job (:mod:`.session_compaction`).
        self._compaction = SessionCompaction(self)
        #: The session's tools, their loadout and the prompt sections they change (:mod:`.session_tools`).
        self._tools = SessionTools(self)
        #: The session's prompts, queues, custom messages and shell commands (:mod:`.session_prompting`).
        self._prompting = SessionPrompting(self)
        #: The session's runs, from start to ``agent_settled`` (:mod:`.session_runs`).
        self._runs = SessionRuns(self)
        #: The session's tree navigation (:mod:`.session_tree`).
        self._tree = SessionTree(self)
        #: The session's model and thinking level (:mod:`.session_model`).
        self._models = SessionModel(self)
        #: Receives every session event as RPC writes it (the host's RPC log), when recording.
        self.rpc: Callable[[dict[str, Any]], None] | None = None
        #: Receives a streamed delta's ``usage`` and delta event, which RPC writes as
        #: ``{"type": "message_update", "usage": ..., "assistantMessageEvent": ...}`` (the host
        #: copies them without that dict being made); without it they go to :attr:`rpc` so.
        self.rpc_update: Callable[[Any, Any], None] | None = None
        self.agent = Agent(
            listener=self._handle_agent_event,
            hooks=LoopHooks(
                stream=self._stream_assistant,
                finish_turn=self._finish_turn,
                prepare_next_turn=self._prepare_next_turn,
                declare_turn_tools=self._tools.declare_turn_tools,
                prepare_tool=self._tools.prepare_tool,
                execute_tool=self._tools.execute_tool,
                now_ms=self.service.clock.now_ms,
                now_loop_ms=self.service.clock.loop_ms,
                model=lambda: self.model,
            ),
        )
        #: The agent loop's provider callbacks (``before_provider_request``,
        #: ``after_provider_response``: :mod:`.provider_events`).
        self._provider_hooks = agent_provider_hooks(
            self._runner, self.dispatch, self.settle_preflights, trace
        )
        #: A compaction summary's (``before_provider_headers`` only).
        self._summary_hooks = summary_provider_hooks(self._runner, self.dispatch)
        self._is_agent_run_active = False
        self._agent_run_abort_requested = False
        self._compaction_abort: AbortController | None = None
        self._auto_compaction_abort: AbortController | None = None
        #: ``_branchSummaryAbortController``: set while ``navigate_tree`` runs its hooks.
        self._branch_summary_abort: AbortController | None = None
        #: ``_promptPreflightCount`` (agent-session.js:1724-1733): prompts between their command
        #: check and the start of their run; tree navigation refuses meanwhile (:3371).
        self._prompt_preflight_count = 0
        self._overflow_recovery_attempted = False
        self._retry_attempt = 0
        self._retry_abort: AbortController | None = None
        # Pi's ``_steeringMessages``/``_followUpMessages``: strings, or what an ``input``
        # transform without a string text left (UNDEFINED, None, a number).
        self._steering_texts: list[Any] = []
        self._follow_up_texts: list[Any] = []
        self._pending_next_turn: list[Message] = []
        self._pending_custom: list[Message] = []
        #: ``_pendingBashMessages`` (agent-session.js:145): shell-command records held while a run
        #: streams (:meth:`record_bash_result`).
        self._pending_bash: list[Message] = []
        self._turn_index = 0
        self._last_assistant: Message | None = None
        #: The calls tools made through ``ctx.execute_tool`` (:meth:`execute_nested_tool`).
        self._nested_calls = NestedCalls()
        self._is_emitting_settled = False
        self._deferred_settled: list[Callable[[], Awaitable[None]]] = []
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._entry_ids: dict[int, tuple[Message, str]] = {}
        self._boundary_dispatched: set[int] = set()
        #: The last turn's outcome and whether ``agent_before_settle`` runs / an abort came
        #: meanwhile (agent-session.js:152-154).
        self._last_activity_outcome: Literal["completed", "aborted", "error"] = "completed"
        self._is_before_settle = False
        self._abort_during_before_settle = False
        self._preflights: list[InstantMark] = []
        self._request_estimate = RequestEstimate()
        #: ``convertToLlm`` of each request, converted messages reused (:class:`.messages.LlmConversion`).
        self._llm_conversion = LlmConversion()
        #: Commands of the harness itself (the real-Pi observer extension's, loaded first there):
        #: run by ``prompt()`` like an extension command, deferred and all.
        self.host_commands: dict[str, Callable[[str], Awaitable[None]]] = {}
        self._refresh_finalized_context()

    # ================================================================= state
    @property
    def is_streaming(self) -> bool:
        return self._is_agent_run_active

    @property
    def is_compacting(self) -> bool:
        # ``isCompacting`` (agent-session.js:1295-1299): a tree navigation counts too.
        return (
            self._auto_compaction_abort is not None
            or self._compaction_abort is not None
            or self._branch_summary_abort is not None
        )

    @property
    def is_idle(self) -> bool:
        return not self._is_agent_run_active and not self.is_compacting

    @property
    def pending_message_count(self) -> int:
        return len(self._steering_texts) + len(self._follow_up_texts)

    def _abort_requested(self) -> bool:
        """Read the abort flag anew (it changes across awaits; a method defeats stale narrowing)."""
        return self._agent_run_abort_requested

    def _runner(self) -> ExtensionRunner:
        assert self.runner is not None
        return self.runner

    def _emit(self, name: str, *, rpc: dict[str, Any] | None = None, **data: Any) -> None:
        """A session event (what RPC streams): the trace's record of it, and the whole event as
        RPC writes it (``rpc``; by default the trace's fields without ``None`` values, which
        JSON leaves out as ``undefined``)."""
        self.trace.emit("session", name, **data)
        if self.rpc is None:
            return
        if rpc is None:
            # A loop, not a dict comprehension (a function call of its own): about 24 session
            # events a scenario (issue 16).
            rpc = {"type": name}
            for key, value in data.items():
                if value is not None:
                    rpc[key] = value
        self.rpc(rpc)

    def _rpc(self, event: dict[str, Any]) -> None:
        if self.rpc is not None:
            self.rpc(event)

    def _emit_queue_update(self) -> None:
        self._emit(
            "queue_update",
            rpc={
                "type": "queue_update",
                # JSON.stringify writes an undefined in an array as null.
                "steering": [None if t is UNDEFINED else t for t in self._steering_texts],
                "followUp": [None if t is UNDEFINED else t for t in self._follow_up_texts],
            },
            steering=len(self._steering_texts),
            followUp=len(self._follow_up_texts),
        )

    def _refresh_finalized_context(self) -> None:
        projection = self.session_manager.build_session_projection()
        for entry in projection.entries:
            for message in entry.messages:
                self._entry_ids[identity(message)] = (message, entry.source["id"])
        self.agent.messages = list(projection.messages)

    def _find_entry_id(self, message: Message) -> str | None:
        known = self._entry_ids.get(identity(message))
        if known is not None and known[0] is message:
            return known[1]
        for entry in reversed(self.session_manager.branch_view()):
            if entry.get("type") == "message" and entry["message"] is message:
                return str(entry["id"])
        return None

    def _resolve_idle_waiters(self) -> None:
        if not self.is_idle:
            return
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_for_idle(self) -> None:
        if self.is_idle:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_waiters.append(future)
        await future

    def _find_last_assistant(self) -> Message | None:
        for message in reversed(self.agent.messages):
            if message.get("role") == "assistant":
                return message
        return None

    def _model_for_message(self, message: Message) -> Model | None:
        model = self.model
        if (
            model is not None
            and model.provider == message.get("provider")
            and model.id == message.get("model")
        ):
            return model
        return None

    # ================================================================= agent events
    async def _handle_agent_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        kind = event["type"]
        runner = self.runner
        assert runner is not None
        if kind in ("message_update", "tool_execution_update"):
            # One per streamed delta (more than half of all agent events) or per partial result
            # of a running tool, and nothing of it is persisted: Pi hands it to the extensions
            # first (agent-session.js:990-996, 1026-1034, awaited ``_extensionRunner.emit``), then
            # to the public listeners. With no extension handler for it that dispatch does
            # nothing (``dispatch`` returns before any trace or await point: it is not an
            # observable event), so the extension step and the tests below are skipped then
            # (issue 16; a streamed delta without a handler does not even come here:
            # :meth:`_stream_assistant`).
            if runner.has_handlers(kind):
                update = self._extension_event(event)
                assert update is not None
                await self.dispatch(update)
            self._emit_public(event)
            return
        if kind == "message_start":
            message = event["message"]
            role = message.get("role")
            if role == "toolResult":
                # agent-session.js:773-786: the calls a tool made through ctx.execute_tool go on
                # its result message (``nestedCalls``) as the message starts; the scopes go at
                # agent_end.
                record = self._nested_calls.take_record(message.get("toolCallId", ""))
                if record is not None:
                    message["nestedCalls"] = record
            elif role == "user":
                self._overflow_recovery_attempted = False
                text = content_text(message.get("content"))
                if text in self._steering_texts:
                    self._steering_texts.remove(text)
                    self._emit_queue_update()
                elif text in self._follow_up_texts:
                    self._follow_up_texts.remove(text)
                    self._emit_queue_update()
        elif kind == "agent_start":
            if self._agent_run_abort_requested:
                self.agent.abort()
        elif kind == "agent_end":
            self._nested_calls.clear()
        # Extensions first (``_emitExtensionEvent``, agent-session.js:961-1052), then the public
        # listeners (RPC), then persistence. Without a handler a message's or a tool call's
        # extension event is not dispatched: that dispatch does nothing (``_RUN_EVENTS``); 3,224
        # of the 6,064 agent events of a run of the Pi Session Continuity suite (issue 16).
        if kind == "turn_end":
            # Its dispatch is the ``turn_end`` boundary, which ``finishTurn`` has dispatched
            # already for a completed turn (:meth:`_finish_turn`).
            message = event["message"]
            if message.get("role") == "assistant" and identity(message) not in self._boundary_dispatched:
                await self._runs.dispatch_turn_end(message, event["toolResults"])
            self._boundary_dispatched.discard(identity(message))
            self._turn_index += 1
        elif kind in _RUN_EVENTS or runner.has_handlers(kind):
            # :meth:`dispatch` inlined: an event without a handler is only traced, with no
            # coroutine for it (the run's events, about 12 a scenario, have none in most runs).
            extension_event = self._extension_event(event)
            if extension_event is not None:
                handling = self._announce(extension_event)
                if handling is not None:
                    await handling.emit(extension_event)
                    await self.settle_preflights()
        self._emit_public(event)
        if kind == "message_end":
            message = event["message"]
            role = message.get("role")
            entry_id: str | None = None
            if role == "custom":
                entry_id = self.session_manager.append_custom_message_entry(
                    message["customType"],
                    message.get("content"),
                    message.get("display", True),
                    absent_if_none(message.get("details")),
                )
            elif role in ("system", "user", "assistant", "toolResult"):
                entry_id = self.session_manager.append_message(message)
            if entry_id is not None:
                self._entry_ids[identity(message)] = (message, entry_id)
            if role == "assistant":
                self._last_assistant = message
                if message.get("stopReason") not in ("error", "length"):
                    self._overflow_recovery_attempted = False
                if message.get("stopReason") != "error" and self._retry_attempt > 0:
                    self._emit("auto_retry_end", success=True, attempt=self._retry_attempt)
                    self._retry_attempt = 0
        elif kind == "turn_end":
            self._prompting.flush_pending_custom()

    def _emit_public(self, event: AgentEvent) -> None:
        """An agent event for the public listeners: RPC writes it whole (``toJsonEvent``:
        ``message_update`` carries the message's ``usage`` and the delta event without its
        ``partial``, ``modes/json-event.js``); the trace records its summary (a message's at
        its ``message_end`` only)."""
        kind = event["type"]
        if kind == "message_update":
            self._emit_update(event.get("message") or {}, event["assistantMessageEvent"])
            return
        if kind == "message_start":
            self._rpc({"type": kind, "message": event["message"]})
            return
        if kind == "message_end":
            message = event["message"]
            role = message.get("role")
            data: dict[str, Any] = {"role": role}
            if role == "assistant":
                data["stopReason"] = message.get("stopReason")
                data["totalTokens"] = (message.get("usage") or {}).get("totalTokens")
            text = content_text(message.get("content")) if role != "system" else ""
            if text:
                data["text"] = text[:80]
            self._emit(kind, rpc={"type": kind, "message": message}, **data)
            return
        if kind == "tool_execution_update":
            self._rpc(dict(event))
            return
        if kind == "agent_end":
            will_retry = self._runs.will_retry_after_agent_end(event)
            self._emit(
                "agent_end",
                rpc={"type": kind, "messages": event["messages"], "willRetry": will_retry},
                willRetry=will_retry,
            )
        elif kind == "turn_end":
            self._emit(
                "turn_end",
                rpc={"type": kind, "message": event["message"], "toolResults": event["toolResults"]},
            )
        elif kind == "turn_start":
            self._emit("turn_start")
        elif kind == "agent_start":
            self._emit("agent_start")
        elif kind == "tool_execution_start":
            self._emit("tool_execution_start", rpc=dict(event), toolName=event["toolName"])
        elif kind == "tool_execution_end":
            self._emit(
                "tool_execution_end", rpc=dict(event), toolName=event["toolName"], isError=event["isError"]
            )

    def _emit_update(self, message: Message, delta: dict[str, Any]) -> None:
        """A streamed delta's ``message_update`` for the public listeners: RPC writes the
        message's ``usage`` and the delta event (the host copies them without that dict being
        made, :attr:`rpc_update`); the trace records nothing of it."""
        usage = message.get("usage")
        if self.rpc_update is not None:
            self.rpc_update(usage, delta)
        else:
            self._rpc({"type": "message_update", "usage": usage, "assistantMessageEvent": delta})

    def _extension_event(self, event: AgentEvent) -> Event | None:
        """The extension event ``_emitExtensionEvent`` (agent-session.js:961-1052) dispatches for
        an agent event other than ``turn_end`` (:meth:`_handle_agent_event`), made as it is
        dispatched: ``agent_start`` resets the turn index, ``turn_start`` reads the clock."""
        kind = event["type"]
        if kind == "agent_start":
            self._turn_index = 0
            return AgentStartEvent()
        if kind == "agent_end":
            return AgentEndEvent(messages=event["messages"])
        if kind == "turn_start":
            return TurnStartEvent(turn_index=self._turn_index, timestamp=self.service.clock.now_ms())
        if kind == "message_start":
            return MessageStartEvent(message=event["message"])
        if kind == "message_update":
            # agent-session.js:990-996: ``{type: "message_update", message, assistantMessageEvent}``
            # through the awaited ``_extensionRunner.emit``. A Python handler gets it through the
            # bridge as JSON made at its call, the delta event without its ``partial`` (bridge.ts
            # ``registerHandler``); ``runner.emit`` copies the event per handler call
            # (``bridged_copy``), and the stream here waits for the dispatch, so each handler sees
            # the message as it stands at this delta. (On real Pi ``{...partialMessage}``,
            # pi-agent-core agent-loop.js:305-310, shares the ``content`` blocks pi-ai goes on
            # filling during the bridge's round trip: its handler may see text of later deltas
            # already; the simulator's is the outcome of a reply read delta by delta.)
            delta = {k: v for k, v in event["assistantMessageEvent"].items() if k != "partial"}
            return MessageUpdateEvent(message=event["message"], assistant_message_event=delta)
        if kind == "message_end":
            return MessageEndEvent(message=event["message"])
        if kind == "tool_execution_start":
            return ToolExecutionStartEvent(
                tool_call_id=event["toolCallId"],
                tool_name=event["toolName"],
                args=event["args"],
                parent_tool_call_id=event.get("parentToolCallId"),
            )
        if kind == "tool_execution_update":
            # agent-session.js:1026-1034: the call's id, name and arguments and the tool's partial
            # result, through the awaited ``_extensionRunner.emit`` (return value ignored; a
            # handler that raises is an ``extension_error``). pi-agent-core awaits each update
            # before the result is final (agent-loop.js:568-581): after ``tool_execution_start``,
            # before ``tool_result`` and ``tool_execution_end`` (:meth:`.session_tools.SessionTools.execute_tool`).
            return ToolExecutionUpdateEvent(
                tool_call_id=event["toolCallId"],
                tool_name=event["toolName"],
                args=event["args"],
                partial_result=event["partialResult"],
                parent_tool_call_id=event.get("parentToolCallId"),
            )
        if kind == "tool_execution_end":
            return ToolExecutionEndEvent(
                tool_call_id=event["toolCallId"],
                tool_name=event["toolName"],
                result=event["result"],
                # The bridge's ``bool(isError)``: a handler's ``"yes"`` (tool_result_hooks).
                is_error=bool(event["isError"]),
                # :1043: only when the loop has one (an executed call).
                duration_ms=event.get("durationMs"),
                parent_tool_call_id=event.get("parentToolCallId"),
            )
        return None

    async def dispatch(
        self, event: Event
    ) -> BeforeCompactResult | BeforeSwitchResult | BeforeTreeResult | None:
        """Dispatch an extension event, traced, then let extension preflights settle.

        The host dispatches the lifecycle events (``session_start``, ``session_shutdown``,
        ``session_before_switch``, ``session_info_changed``) through here too, so every event
        an extension sees is traced the same way."""
        if self.process_dead():
            # A killed process runs nothing more: a ``finally`` on the way out of a run (its
            # ``agent_settled``) must not reach the handlers. Before, a crash during a held reply
            # still ran them, and a blitz ``agent_settled`` notified after Pi had died
            # (differential seed 10301).
            raise SimulatedCrash("the process is dead")
        runner = self._announce(event)
        if runner is None:
            return None
        result = await runner.emit(event)
        await self.settle_preflights()
        return result

    def _announce(self, event: Event) -> ExtensionRunner | None:
        """:meth:`dispatch` up to the handlers: the trace's record of ``event`` (an observable
        one's with or without a handler), then the runner when an extension handles it, else
        ``None`` (the dispatch ends there, before any await point)."""
        runner = self.runner
        assert runner is not None
        kind = event.type
        observable = kind in OBSERVABLE_EVENTS
        if observable:
            if kind == "session_compact":
                self.trace.emit("event", kind, **event_summary(event), **self._witness(event))
            else:
                self.trace.emit("event", kind, **event_summary(event))
        if not runner.has_handlers(kind):
            return None
        if not observable:
            self.trace.emit("event", kind, **event_summary(event))
        return runner

    def _witness(self, event: Event) -> dict[str, Any]:
        """``summaryFiles`` of a ``session_compact`` (:meth:`dispatch` asks for no other event's):
        what was on disk when Pi appended the entry, before any handler ran (the real-Pi
        observer, loaded first, logs the same)."""
        if not isinstance(event, SessionCompactEvent) or self._summary_files is None:
            return {}
        summary = event.compaction_entry.get("summary")
        return {"summaryFiles": self._summary_files(summary)} if isinstance(summary, str) else {}

    async def settle_preflights(self) -> None:
        """Model JavaScript's eager microtasks: an extension's ``send_user_message`` issued in
        a handler reaches its queue/reject decision before Pi continues past the dispatch, and
        before the event's next handler runs (the runner awaits this after each handler:
        ``await handler(event, ctx)``, runner.js:832), so that handler's
        ``has_pending_messages()`` counts the message (agent-session.js:1757-1770, 2065-2067).

        Only while no time passes: Pi does not await the send (``sendUserMessage`` is
        fire-and-forget, agent-session.js:2879). When its preparation waits (an ``input``
        handler that sleeps, ``_runInputHandlers`` awaiting its round trip, :1745), Pi goes on
        and the message is queued when the handler returns, as real Pi 1.6.0 does with a Python
        ``input`` handler that awaits a sleep, in the same extension or in another
        (``tests/realpi/test_differential_handler_sends.py``). With one that returns at once
        real Pi races (``docs/architecture.md``); the simulator settles the send."""
        preflights = self._preflights
        while preflights:
            preflights = self._preflights = [mark for mark in preflights if not mark.is_set()]
            if not preflights or not await preflights[0].wait_this_instant():
                return
            preflights = self._preflights

    # ================================================================= loop hooks
    async def _finish_turn(self, turn: CompletedTurn) -> bool:
        """The session's ``finishTurn`` (agent-session.js:580-591): the ``turn_end`` boundary,
        whose ``continue`` asks the loop for one more turn."""
        self._boundary_dispatched.add(identity(turn.message))
        return await self._runs.dispatch_turn_end(turn.message, turn.tool_results)

    async def _prepare_next_turn(self, turn: CompletedTurn) -> list[Message] | None:
        """``prepareNextTurnWithContext`` (agent-session.js:593-620): the mid-run threshold check
        before the next assistant request (AS:482-490), then, when an extension set the tools
        since the run's last request, the prompt's changed sections as a system message (the
        loop declares the tools with it); ``None`` when the tools did not change."""
        await self._compaction.before_next_turn()
        if not self._loadout_changed:
            return None
        self._loadout_changed = False
        patch = self._tools.sections_patch(self.session_manager.build_session_projection().messages)
        return [] if patch is None else [patch]

    async def _stream_assistant(self, signal: AbortSignal, emit: StreamEmit) -> Message:
        """``streamAssistantResponse`` (agent-loop.js:265-330) with Pi's request projection:
        ``convertToLlm`` of the session's projection, the request through pi-ai
        (:mod:`.provider`), ``message_start`` when the headers are in and ``message_update`` per
        delta (through ``emit``), and ``thinkingLevel`` recorded on the final message."""
        model = self.model
        assert model is not None
        messages = self.session_manager.build_session_projection().messages
        runner = self._runner()
        has_context = runner.has_handlers("context")
        has_with_system = runner.has_handlers("context_with_system")
        if has_context or has_with_system:
            # ``transformContext`` (sdk.js:276-282, pi-agent-core agent-loop.js:268-270): the
            # ``context`` then the ``context_with_system`` handlers may replace what this
            # request sends; the session keeps its messages. Without a handler the messages
            # are what they are (Pi copies them).
            if has_context:
                self.trace.emit("event", "context", messages=len(messages))
            if has_with_system:
                self.trace.emit("event", "context_with_system", messages=len(messages))
            messages = await runner.emit_context(messages)
            await self.settle_preflights()
        llm = self._llm_conversion.convert(messages)
        # pi-ai clamps max_tokens with its own estimate of the request (3.5 chars/token), in
        # the provider's streamSimple (buildBaseOptions, api/simple-options.js:36); a user
        # message it cannot measure fails the request there (``setup_error``).
        setup_error: str | None = None
        max_tokens: int | None = None
        try:
            max_tokens = clamp_max_tokens(model, lambda: self._request_estimate.estimate(messages))
        except JsTypeError as error:
            setup_error = str(error)
        reasoning = self.thinking_level if (model.reasoning and self.thinking_level != "off") else None

        def on_event(event: dict[str, Any], partial: Message) -> Awaitable[None] | None:
            # The agent's handling of the event for the stream to await, or None when it is done
            # (:data:`.model_service.OnStreamEvent`): not a coroutine of its own per stream
            # event (issue 16).
            kind = event["type"]
            if kind == "start":
                return emit({"type": "message_start", "message": dict(partial)})
            if kind in ("done", "error"):
                return None
            runner = self.runner
            if runner is not None and not runner.has_handlers("message_update"):
                # All the agent's listener (:meth:`_handle_agent_event`) does with a delta no
                # extension handles, without making its event and two coroutines to get there
                # (the agent's emitter does nothing else with a ``message_update``): one per
                # streamed delta, 46 a scenario (issue 16).
                self._emit_update(partial, event)
                return None
            # The partial message itself, not a copy of it as ``message_start``'s: nothing keeps
            # a ``message_update``'s message past the event (the RPC event takes its ``usage``,
            # a handler's event a copy made at its call, ``bridged_copy``), and the stream waits
            # for the event before it changes the message again (a copy per streamed delta,
            # issue 16).
            return emit({"type": "message_update", "assistantMessageEvent": event, "message": partial})

        message = await self.service.call(
            "agent",
            model,
            llm,
            max_tokens=max_tokens,
            reasoning=reasoning,
            signal=signal,
            on_event=on_event,
            setup_error=setup_error,
            hooks=self._provider_hooks,
        )
        message["thinkingLevel"] = reasoning or "off"
        return message

    # ================================================================= tools (:mod:`.session_tools`)
    def active_tool_names(self) -> list[str]:
        """``pi.getActiveTools()`` (:meth:`.session_tools.SessionTools.active_tool_names`)."""
        return self._tools.active_tool_names()

    def set_active_tools(self, tool_names: list[str]) -> None:
        """``pi.setActiveTools`` (:meth:`.session_tools.SessionTools.set_active_tools`)."""
        self._tools.set_active_tools(tool_names)

    def restore_tools_from_transcript(self) -> None:
        """``_restoreToolsFromTranscript`` (:meth:`.session_tools.SessionTools.restore_tools_from_transcript`)."""
        self._tools.restore_tools_from_transcript()

    def mark_loadout_changed(self) -> None:
        """A tool registered after loading (:meth:`.session_tools.SessionTools.mark_loadout_changed`)."""
        self._tools.mark_loadout_changed()

    def all_tools(self) -> list[ToolInfo]:
        """``pi.getAllTools()`` (:meth:`.session_tools.SessionTools.all_tools`)."""
        return self._tools.all_tools()

    def declare_turn_tools(self, pending: list[Message], *, lazy_clock: bool = False) -> list[Message]:
        """``declareToolChanges`` before a later turn (:meth:`.session_tools.SessionTools.declare_turn_tools`)."""
        return self._tools.declare_turn_tools(pending, lazy_clock=lazy_clock)

    def tool_declarations(self) -> list[dict[str, Any]]:
        """``context.tools`` as declarations (:meth:`.session_tools.SessionTools.tool_declarations`)."""
        return self._tools.tool_declarations()

    async def execute_nested_tool(
        self, parent: str, name: str, args: Any, signal: AbortSignal | None
    ) -> ToolCallOutcome:
        """``ctx.execute_tool`` (:meth:`.session_tools.SessionTools.execute_nested_tool`)."""
        return await self._tools.execute_nested_tool(parent, name, args, signal)

    def system_prompt(self) -> str:
        """``getSystemPrompt()`` (:meth:`.session_tools.SessionTools.system_prompt`)."""
        return self._tools.system_prompt()

    # ================================================================= prompting (:mod:`.session_prompting`)
    async def prompt(
        self,
        text: str,
        *,
        source: Literal["interactive", "rpc", "extension"] = "rpc",
        streaming_behavior: Literal["steer", "followUp"] | None = None,
        expand_prompt_templates: bool = True,
        preflight: Callable[[str], None] | None = None,
        images: tuple[dict[str, Any], ...] = (),
    ) -> None:
        """``AgentSession.prompt`` (:meth:`.session_prompting.SessionPrompting.prompt`)."""
        await self._prompting.prompt(
            text,
            source=source,
            streaming_behavior=streaming_behavior,
            expand_prompt_templates=expand_prompt_templates,
            preflight=preflight,
            images=images,
        )

    def clear_queue(self) -> None:
        """``clearQueue`` (:meth:`.session_prompting.SessionPrompting.clear_queue`)."""
        self._prompting.clear_queue()

    def send_user_message(
        self, content: str | list[dict[str, Any]], deliver_as: str | None, expand_prompt_templates: bool
    ) -> None:
        """``pi.sendUserMessage`` (:meth:`.session_prompting.SessionPrompting.send_user_message`)."""
        self._prompting.send_user_message(content, deliver_as, expand_prompt_templates)

    async def send_user_message_settled(
        self, content: str | list[dict[str, Any]], deliver_as: str | None
    ) -> None:
        """``ReplacedSessionContext.sendUserMessage``
        (:meth:`.session_prompting.SessionPrompting.send_user_message_settled`)."""
        await self._prompting.send_user_message_settled(content, deliver_as)

    async def send_message_settled(
        self, message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None
    ) -> None:
        """``ReplacedSessionContext.sendMessage``
        (:meth:`.session_prompting.SessionPrompting.send_message_settled`)."""
        await self._prompting.send_message_settled(message, trigger_turn, deliver_as)

    def send_custom_message(
        self, message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None
    ) -> None:
        """``pi.sendMessage`` (:meth:`.session_prompting.SessionPrompting.send_custom_message`)."""
        self._prompting.send_custom_message(message, trigger_turn, deliver_as)

    async def user_bash(
        self, command: str, exclude_from_context: bool | None, output: str, exit_code: int, rpc_id: str
    ) -> dict[str, Any]:
        """RPC ``bash`` (:meth:`.session_prompting.SessionPrompting.user_bash`)."""
        return await self._prompting.user_bash(command, exclude_from_context, output, exit_code, rpc_id)

    def record_bash_result(
        self, command: str, result: dict[str, Any], exclude_from_context: bool | None
    ) -> None:
        """``recordBashResult`` (:meth:`.session_prompting.SessionPrompting.record_bash_result`)."""
        self._prompting.record_bash_result(command, result, exclude_from_context)

    # ================================================================= compaction (:mod:`.session_compaction`)
    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        """Manual compaction (:meth:`.session_compaction.SessionCompaction.compact`)."""
        return await self._compaction.compact(custom_instructions)

    # ================================================================= tree navigation (:mod:`.session_tree`)
    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:
        """``AgentSession.navigateTree`` (:meth:`.session_tree.SessionTree.navigate_tree`)."""
        return await self._tree.navigate_tree(
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    # ================================================================= control
    def abort_now(self) -> None:
        """The synchronous part of ``AgentSession.abort`` (AS:2082): flag the run, abort
        retry, compaction and the agent.

        JavaScript runs an ``async`` function synchronously up to its first ``await``, so a
        fire-and-forget ``ctx.abort()`` or ``ctx.compact()`` (which starts with
        ``await this.abort()``) has aborted the run *before* the handler that called it
        returns: a ``ctx.compact()`` from ``turn_end`` makes even a completed run settle
        with ``aborted: true`` (verified 9.1b, s02b/s02c). Callers that spawn the async
        part must call this first.
        """
        if self._is_agent_run_active:
            self._agent_run_abort_requested = True
        if self._retry_abort is not None:
            self._retry_abort.abort()
        if self._compaction_abort is not None:
            self._compaction_abort.abort()
        if self._auto_compaction_abort is not None:
            self._auto_compaction_abort.abort()
        if self._is_before_settle:
            self._abort_during_before_settle = True
        self.agent.abort()

    async def abort(self) -> None:
        """``AgentSession.abort``: abort run, retry and compaction, then wait for idle."""
        self.abort_now()
        await self.wait_for_idle()

    def request_abort(self) -> None:
        """``ctx.abort()``: fire-and-forget abort (the abort itself happens at once)."""
        self.abort_now()
        self._spawn(self.abort(), "ctx.abort")

    # ================================================================= model (:mod:`.session_model`)
    async def set_model(self, model: Model) -> None:
        """``AgentSession.setModel`` (:meth:`.session_model.SessionModel.set_model`)."""
        await self._models.set_model(model)

    def set_thinking_level(self, level: str, *, from_extension: bool = False) -> None:
        """``AgentSession.setThinkingLevel`` (:meth:`.session_model.SessionModel.set_thinking_level`)."""
        self._models.set_thinking_level(level, from_extension=from_extension)

    async def cycle_model(self) -> Model | None:
        """``AgentSession.cycleModel`` (:meth:`.session_model.SessionModel.cycle_model`)."""
        return await self._models.cycle_model()

    def cycle_thinking_level(self) -> str | None:
        """``AgentSession.cycleThinkingLevel`` (:meth:`.session_model.SessionModel.cycle_thinking_level`)."""
        return self._models.cycle_thinking_level()

    # ================================================================= context usage
    def get_context_usage(self) -> ContextUsage | None:
        """§9.21: null tokens after a compaction until a post-compaction reply has usage."""
        model = self.model
        if model is None or model.context_window <= 0:
            return None
        window = model.context_window
        projection = self.session_manager.build_session_projection()
        latest = self.session_manager.latest_compaction()
        if latest is not None:
            with_usage = {
                e.source["id"]
                for e in projection.entries
                if any(
                    m.get("role") == "assistant"
                    and m.get("stopReason") not in ("aborted", "error")
                    and calculate_context_tokens(m.get("usage")) > 0
                    for m in e.messages
                )
            }
            position = self.session_manager.branch_position(latest["id"])
            after = self.session_manager.branch_view()[position + 1 :]
            if not any(e["id"] in with_usage for e in after):
                return ContextUsage(tokens=None, context_window=window, percent=None)
        estimate = estimate_projected_context_tokens(
            projection,
            self.session_manager.branch_position,
            self.session_manager.latest_invalidating_position(),
        )
        # agent-session.js:3642: ``(estimate.tokens / contextWindow) * 100``, a JavaScript number: an
        # integral one reaches a Python extension as an ``int`` (JSON ``0``, not ``0.0``).
        if math.isnan(estimate.tokens):
            # A user text that is a number (estimateTokens' NaN): Pi's NaN crosses the bridge
            # as JSON null.
            return ContextUsage(tokens=None, context_window=window, percent=None)
        percent = estimate.tokens / window * 100
        return ContextUsage(
            tokens=int(estimate.tokens),
            context_window=window,
            percent=int(percent) if percent.is_integer() else percent,
        )


def _remove_plain(path: str) -> None:
    os.remove(path)
