"""A run of the session, from its start to ``agent_settled`` (§9.5, 9.17, 9.24).

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that drives a run, held by
:class:`SessionRuns` for its :class:`~.agent_session.AgentSession` (whose run flags, retry
counter and pending messages it reads and changes):

* ``_startRun`` (agent-session.js:1496-1552): busy from here to ``agent_settled``; the loop
  goes on while the post-run step or the ``agent_before_settle`` boundary asks for it;
* ``_prepareRun`` (:1553-1603): the pre-prompt compaction check (§9.2, third point), the
  prompt's sections, ``before_agent_start``, the trigger, the tools declared;
* ``_handlePostAgentRun`` (:1604-1638): retry (``_isRetryableError``/``_prepareRetry``/
  ``_finishCancelledRetry``, :3149-3160, :3183-3237, with the failed reply hidden by
  ``_omitRecoveryAttempt``, :906-935), then the compaction check;
* the boundaries: ``turn_end`` (``_dispatchTurnEndBoundary``, :546-579) and
  ``agent_before_settle`` (``_runBeforeSettleBoundary``, :1639-1662), their drafts committed
  and their ``continue`` checked (:629-707), whether ``agent_end`` will retry
  (``_willRetryAfterAgentEnd``, :862-876), and ``agent_settled`` with what was deferred
  meanwhile (``_emitAgentSettled``, :742-767).

The loop itself is :mod:`.agent_loop`'s (pi-agent-core's agent-loop.js).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import (
    AgentBeforeSettleEvent,
    AgentSettledEvent,
    BeforeAgentStartEvent,
    TurnEndEvent,
    js_truthy,
)
from pi_continuity_harness.scenario.observed import event_summary
from pi_continuity_harness.simulator.agent_loop import AgentEvent
from pi_continuity_harness.simulator.boundary import (
    apply_boundary_drafts,
    boundary_can_continue,
    preview_boundary_drafts,
)
from pi_continuity_harness.simulator.messages import UNDEFINED, Message, user_message
from pi_continuity_harness.simulator.overflow import is_context_overflow, is_retryable_error
from pi_continuity_harness.simulator.provider import clamp_thinking_level
from pi_continuity_harness.simulator.session_shared import PromptRejectedError, Trigger
from pi_continuity_harness.simulator.system_prompt import system_message
from pi_continuity_harness.simulator.tool_declarations import declare_tool_changes
from pi_continuity_harness.simulator.virtual_loop import sleep_unless_aborted

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["SessionRuns"]


class SessionRuns:
    """The run job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    async def dispatch_turn_end(self, message: Message, tool_results: list[Message]) -> bool:
        """``_dispatchTurnEndBoundary`` (agent-session.js:546-579); ``True``: a handler asked for
        one more turn and the context can go on.

        Without a ``turn_end`` handler nothing is dispatched (only the trace records the event,
        as the real-Pi observer does). With one, an assistant message whose entry is not found
        is a ``<boundary>`` error and no dispatch; else the handlers run through
        :meth:`ExtensionRunner.emit_boundary` as ``agent_before_settle``'s do (each sees the
        drafts and ``continue`` the earlier ones returned, the drafts previewed after each), the
        drafts are appended (``entry_appended`` each), and a ``continue`` the context cannot
        follow is a ``<boundary>`` error "turn_end requested continuation without runnable
        model context"."""
        s = self._session
        outcome: Literal["completed", "aborted", "error"] = (
            "aborted"
            if message.get("stopReason") == "aborted"
            else "error"
            if message.get("stopReason") == "error"
            else "completed"
        )
        # ``_lastActivityOutcome`` (agent-session.js:547-548), which ``agent_before_settle`` reports.
        s._last_activity_outcome = outcome
        runner = s._runner()
        message_entry_id = s._find_entry_id(message)
        turn_index = s._turn_index
        tool_result_entry_ids = [i for i in (s._find_entry_id(r) for r in tool_results) if i]

        def make_event(entries: Any, go_on: Any) -> TurnEndEvent:
            return TurnEndEvent(
                turn_index=turn_index,
                message=message,
                tool_results=tool_results,
                message_entry_id=message_entry_id,
                tool_result_entry_ids=tool_result_entry_ids,
                outcome=outcome,
                entries=entries,
                continue_=go_on,
            )

        if not runner.has_handlers("turn_end"):
            await s.dispatch(make_event([], False))
            return False
        s.trace.emit("event", "turn_end", **event_summary(make_event([], False)))
        if message_entry_id is None:
            runner.emit_error(
                "<boundary>", "turn_end", "turn_end could not resolve the persisted assistant entry ID"
            )
            return False
        result = await runner.emit_boundary(
            "turn_end",
            make_event,
            lambda entries: preview_boundary_drafts(s.session_manager, entries),
        )
        await s.settle_preflights()
        self._commit_boundary_drafts(result.entries)
        if js_truthy(result.continue_) and not self._boundary_can_continue("turn_end"):
            runner.emit_error(
                "<boundary>", "turn_end", "turn_end requested continuation without runnable model context"
            )
            return False
        return js_truthy(result.continue_)

    def will_retry_after_agent_end(self, event: AgentEvent) -> bool:
        s = self._session
        if s._agent_run_abort_requested:
            return False
        retry = s.settings.get_retry_settings()
        if not retry["enabled"] or s._retry_attempt >= retry["maxRetries"]:
            return False
        for message in reversed(event["messages"]):
            if message.get("role") == "assistant":
                return self._is_retryable(message)
        return False

    async def start_run(self, trigger: Trigger, on_started: Callable[[], Any] | None = None) -> None:
        s = self._session
        s._is_agent_run_active = True
        s._agent_run_abort_requested = False
        try:
            messages = await self._prepare_run(trigger)
        except BaseException:
            s._is_agent_run_active = False
            s._prompting.flush_pending_bash()
            s._prompting.flush_pending_custom()
            s._resolve_idle_waiters()
            raise
        s._prompting.flush_pending_bash()
        s._prompting.flush_pending_custom()
        if on_started is not None:
            on_started()
        self._record_thinking_level()
        try:
            await s.agent.prompt(messages)
            while not s._agent_run_abort_requested:
                if await self._handle_post_agent_run():
                    if s._abort_requested():
                        break
                    await s.agent.continue_()
                    continue
                if s._agent_run_abort_requested or not await self._run_before_settle_boundary():
                    break
                if s._abort_requested():
                    break
                await s.agent.continue_()
        finally:
            self._finish_cancelled_retry_if_aborted()
            s._prompting.flush_pending_bash()
            s._prompting.flush_pending_custom()
            await self._emit_agent_settled()

    def _record_thinking_level(self) -> None:
        """``_recordSelection`` as a run starts (agent-session.js:1517, :323-367): when the
        branch's last ``thinking_level_change``, clamped to the model, is not the level in force,
        the level in force is appended, so a resume restores it (Pi #11451: tree navigation can
        leave the last change on another branch). Its model half records only virtual models
        (:336-347), which the harness has none of. Found by differential exploration (seed
        9717: ``set_model`` turned thinking off, tree navigation went back before it, and real
        Pi recorded ``off`` before the next prompt)."""
        s = self._session
        recorded = s.session_manager.branch_thinking_entry()
        if recorded is None or clamp_thinking_level(s.model, recorded) == s.thinking_level:
            return
        s.session_manager.append_thinking_level_change(s.thinking_level)

    def _finish_cancelled_retry_if_aborted(self) -> None:
        s = self._session
        if s._agent_run_abort_requested and s._retry_attempt > 0:
            attempt, s._retry_attempt = s._retry_attempt, 0
            s._emit("auto_retry_end", success=False, attempt=attempt, finalError="Retry cancelled")

    async def _prepare_run(self, trigger: Trigger) -> list[Message]:
        """Pre-prompt compaction check (§9.2, third point), then ``before_agent_start``."""
        s = self._session
        last = s._find_last_assistant()
        if last is not None:
            await s._compaction.check(last, skip_aborted_check=False)
        messages: list[Message] = []
        transcript = s.session_manager.build_session_projection().messages
        tools = s._tools.prompt_extension_tools()
        s.prompt_tools_seen = s.prompt_tools_seen or bool(tools)
        s._loadout_changed = False
        if not any(m.get("role") == "system" for m in transcript):
            # Pi's structured system prompt: sections plus the tools' declarations (§ system_prompt.py).
            messages.append(
                system_message(
                    s.cwd,
                    s.service.clock.now_ms(),
                    s.package_dir,
                    **s._tools.prompt_inputs(tools),
                )
            )
        elif (
            s.skills_seen or s.prompt_tools_seen or s.prompt_files_seen or s.active_tools.explicit is not None
        ):
            # The sections that changed since the transcript's system messages, as a patch
            # (``_preparePromptAndToolLoadout``, agent-session.js:1394-1400): skills an extension
            # added or a reload dropped (``resources_discover``, :mod:`.resources`), an extension
            # tool with a ``promptSnippet`` registered or gone (the ``tools`` section,
            # :func:`.system_prompt.prompt_sections`), context files, ``SYSTEM.md`` or
            # ``APPEND_SYSTEM.md`` read at a reload (:mod:`.context_files`). Only these can make
            # the simulated sections differ, so a session that never had any skips the walk of
            # its transcript.
            patch = s._tools.sections_patch(transcript)
            if patch is not None:
                messages.append(patch)
        runner = s._runner()
        if runner.has_handlers("before_agent_start"):
            active_before = s._tools.active_tool_names()
            definitions_before = list(runner.tools())
            await s.dispatch(
                BeforeAgentStartEvent(
                    message_type=trigger.message_type,
                    # ``{...trigger}`` (runner.js:1147): an undefined prompt reaches a Python
                    # handler as a missing key, None.
                    prompt=None if trigger.prompt is UNDEFINED else trigger.prompt,
                    system_prompt=s._tools.system_prompt(),
                    message=trigger.message,
                )
            )
            s._loadout_changed = False
            if s._tools.active_tool_names() != active_before:
                messages = s._tools.prompt_after_handlers(messages, transcript, tools, definitions_before)
        if trigger.message_type == "custom":
            assert trigger.message is not None
            messages.append(trigger.message)
        else:
            message = user_message(trigger.prompt, s.service.clock.now_ms())
            # The text block, then the images (agent-session.js:1578-1581).
            message["content"] = [*message["content"], *(dict(i) for i in trigger.images)]
            messages.append(message)
        messages.extend(s._pending_next_turn)
        s._pending_next_turn = []
        # The executable tools become declarations on the run's system message (or a new one):
        # declareToolChanges, pi-agent-core dist/agent-loop.js:49, :224-250.
        return declare_tool_changes(
            s.session_manager.build_session_projection().messages,
            messages,
            s._tools.tool_declarations(),
            s.service.clock.now_ms(),
        )

    async def _handle_post_agent_run(self) -> bool:
        s = self._session
        message = s._last_assistant
        s._last_assistant = None
        if s._agent_run_abort_requested:
            return False
        if message is None:
            return s.agent.has_queued_messages()
        if self._is_retryable(message) and await self._prepare_retry(message):
            return not s._abort_requested()
        if s._abort_requested():
            return False
        if message.get("stopReason") == "error" and s._retry_attempt > 0:
            s._emit(
                "auto_retry_end",
                success=False,
                attempt=s._retry_attempt,
                finalError=message.get("errorMessage"),
            )
            s._retry_attempt = 0
        if await s._compaction.check(message):
            return not s._agent_run_abort_requested
        return not s._agent_run_abort_requested and s.agent.has_queued_messages()

    async def _run_before_settle_boundary(self) -> bool:
        """``_runBeforeSettleBoundary`` (agent-session.js:1639-1662): without an
        ``agent_before_settle`` handler, go on only for queued messages. With one, the handlers
        run (:meth:`ExtensionRunner.emit_boundary`: ``outcome`` is the last turn's), their drafts
        are appended (``entry_appended`` each) and held custom messages delivered; an abort
        meanwhile settles; else the run goes on when a handler asked to (or messages are
        queued) and the context can, and a handler's ``continue`` the context cannot follow is
        a ``<boundary>`` error."""
        s = self._session
        runner = s._runner()
        if not runner.has_handlers("agent_before_settle"):
            return s.agent.has_queued_messages()
        s._is_before_settle = True
        s._abort_during_before_settle = False
        try:
            outcome = s._last_activity_outcome
            s.trace.emit("event", "agent_before_settle", outcome=outcome)
            result = await runner.emit_boundary(
                "agent_before_settle",
                lambda entries, go_on: AgentBeforeSettleEvent(
                    outcome=outcome, entries=entries, continue_=go_on
                ),
                lambda entries: preview_boundary_drafts(s.session_manager, entries),
            )
            await s.settle_preflights()
            self._commit_boundary_drafts(result.entries)
            s._prompting.flush_pending_custom()
            can_continue = self._boundary_can_continue("agent_before_settle")
            if s._abort_during_before_settle:
                return False
            should_continue = js_truthy(result.continue_) or s.agent.has_queued_messages()
            if should_continue and not can_continue:
                if js_truthy(result.continue_):
                    runner.emit_error(
                        "<boundary>",
                        "agent_before_settle",
                        "agent_before_settle requested continuation without runnable model context",
                    )
                return False
            return should_continue
        finally:
            s._is_before_settle = False

    def _commit_boundary_drafts(self, drafts: Any) -> None:
        """``_commitBoundaryDrafts`` (agent-session.js:694-699): the drafts appended to the
        session, the agent's messages rebuilt from it, then an ``entry_appended`` per entry."""
        s = self._session
        appended = apply_boundary_drafts(s.session_manager, drafts)
        s._refresh_finalized_context()
        for entry in appended:
            s._emit(
                "entry_appended",
                rpc={"type": "entry_appended", "entry": entry},
                entryType=entry["type"],
                id=entry["id"],
            )

    def _boundary_can_continue(self, boundary: str) -> bool:
        """``_buildBoundaryContext([], boundary).canContinue`` (agent-session.js:674-693)."""
        s = self._session
        return boundary_can_continue(
            s.session_manager.branch_preview(),
            pending_custom=bool(s._pending_custom),
            has_queued_messages=s.agent.has_queued_messages(),
            boundary=boundary,
        )

    async def _emit_agent_settled(self) -> None:
        s = self._session
        s._is_agent_run_active = False
        s._is_emitting_settled = True
        try:
            aborted = s._agent_run_abort_requested
            await s.dispatch(AgentSettledEvent(aborted=aborted))
            s._emit("agent_settled", aborted=aborted)
        finally:
            s._is_emitting_settled = False
        deferred, s._deferred_settled = s._deferred_settled, []
        try:
            for action in deferred:
                try:
                    await action()
                except PromptRejectedError as error:
                    s._runner().emit_error("<runtime>", "send_user_message", str(error))
        finally:
            s._resolve_idle_waiters()

    def _is_retryable(self, message: Message) -> bool:
        s = self._session
        model = s._model_for_message(message) or s.model
        window = model.context_window if model else 0
        if is_context_overflow(message, window):
            return False
        return is_retryable_error(message)

    async def _prepare_retry(self, message: Message) -> bool:
        s = self._session
        retry = s.settings.get_retry_settings()
        if not retry["enabled"]:
            return False
        s._retry_attempt += 1
        if s._retry_attempt > retry["maxRetries"]:
            s._retry_attempt -= 1
            return False
        delay_ms = min(retry["baseDelayMs"] * 2 ** (s._retry_attempt - 1), retry["maxAgentDelayMs"])
        s._emit(
            "auto_retry_start",
            attempt=s._retry_attempt,
            maxAttempts=retry["maxRetries"],
            delayMs=delay_ms,
            errorMessage=message.get("errorMessage") or "Unknown error",
        )
        self.omit_recovery_attempt(message)
        controller = AbortController()
        s._retry_abort = controller
        try:
            await sleep_unless_aborted(delay_ms / 1000, controller.signal)
            if controller.signal.aborted:
                self._finish_cancelled_retry_if_aborted()
                return False
        finally:
            s._retry_abort = None
        return True

    def omit_recovery_attempt(self, message: Message) -> None:
        """``_omitRecoveryAttempt``: persistently hide a failed reply and its tool results."""
        s = self._session
        call_ids = {b["id"] for b in message.get("content") or [] if b.get("type") == "toolCall"}
        entry_id = s._find_entry_id(message)
        messages = s.agent.messages
        index = next(
            (
                i
                for i, m in enumerate(messages)
                if m is message or (entry_id and s._find_entry_id(m) == entry_id)
            ),
            -1,
        )
        results: list[Message] = []
        for m in messages[index + 1 :] if index >= 0 else []:
            if m.get("role") == "assistant":
                break
            if m.get("role") == "toolResult" and m.get("toolCallId") in call_ids:
                results.append(m)
        for target in [message, *results]:
            target_id = s._find_entry_id(target)
            if not target_id:
                continue
            edit_id = s.session_manager.append_context_edit(target_id, None)
            entry = s.session_manager.get_entry(edit_id)
            s._emit(
                "entry_appended",
                rpc={"type": "entry_appended", "entry": entry},
                entryType="context_edit",
                id=edit_id,
                targetId=target_id,
            )
        s._refresh_finalized_context()
