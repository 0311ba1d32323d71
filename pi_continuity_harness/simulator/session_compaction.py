"""Compaction, the job of the session that decides when and how to summarise (§9.1-9.4, 9.9).

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that compacts, held by
:class:`SessionCompaction` for its :class:`~.agent_session.AgentSession` (whose state it
reads and changes: the abort controllers the session's ``is_compacting`` and ``abort`` look
at, the overflow-recovery flag its event handling clears):

* the threshold check before the next assistant request (``_compactBeforeNextAssistantResponse``,
  agent-session.js:477-490) and after a run (``_checkCompaction``, :2496-2625: overflow first,
  then the threshold);
* automatic compaction (``_runAutoCompaction``, :2626-2757) and manual ``compact()``
  (:2335-2464: aborts the run first, ``compaction_start`` even when it then fails);
* ``session_before_compact`` (an extension's compaction or cancel), Pi's own summarizer
  (``_runDefaultCompaction``, :2311-2315; core/compaction/compaction.js) with pi-ai's
  ``retryAssistantCall`` and Pi's callbacks (``_summarizationRetryCallbacks``, :3161-3182),
  the entry appended verbatim and ``session_compact`` with the first entry whose summary
  equals the new one (§9.9), ``session_compact_failed`` (``_emitSessionCompactFailed``, :720-724).

What to summarise is :mod:`.compaction`'s (a port of core/compaction/compaction.js).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    CompactionReason,
    CompactionResult,
    SessionBeforeCompactEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
)
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    Prepared,
    calculate_context_tokens,
    combine_usage,
    compute_file_lists,
    estimate_context_tokens,
    estimate_messages_tokens,
    estimate_projected_context_tokens,
    format_file_operations,
    prepare_compaction,
    should_compact,
    summary_request_text,
    turn_prefix_request_text,
)
from pi_continuity_harness.simulator.messages import (
    Message,
    absent_if_none,
    estimate_request_context_tokens,
    user_message,
)
from pi_continuity_harness.simulator.overflow import (
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
)
from pi_continuity_harness.simulator.session_manager import ms_of_iso
from pi_continuity_harness.simulator.session_shared import PiThrewError, clamp_max_tokens, signal_aborted
from pi_continuity_harness.simulator.virtual_loop import sleep_unless_aborted

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["LENGTH_RECOVERY_FAILED", "OVERFLOW_RECOVERY_FAILED", "SessionCompaction"]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or "
    "switching to a larger-context model."
)


LENGTH_RECOVERY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


class _CancelledError(Exception):
    """Internal: a compaction was cancelled by an extension or aborted."""


class _ExtensionCancelledError(_CancelledError):
    """Internal: a ``session_before_compact`` handler returned ``{cancel: true}``.

    Pi ends such a compaction as aborted (no error message), like an abort of its signal.
    """


class SessionCompaction:
    """The compaction job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    async def check(self, message: Message, *, skip_aborted_check: bool = True) -> bool:
        """``_checkCompaction`` (AS:2496-2615): overflow first, then the threshold."""
        s = self._session
        settings = s.settings.get_compaction_settings(s.model)
        if not settings.enabled:
            return False
        if skip_aborted_check and message.get("stopReason") == "aborted":
            return False
        message_model = s._model_for_message(message)
        same_model = message_model is not None
        limits = message_model or s.model
        window = limits.context_window if limits is not None else 0
        latest = s.session_manager.latest_compaction()
        if latest is not None and message.get("timestamp", 0) <= ms_of_iso(latest["timestamp"]):
            return False
        manager = s.session_manager
        projection = manager.build_session_projection()
        entry_id = s._find_entry_id(message)
        # From the newest entry back: the message checked is almost always the last one, and
        # the search from the first entry made every check walk the whole context (an id is
        # one entry's, so the answer is the same either way). Loops, not generator
        # expressions: this runs after every assistant message (issue 16).
        projected = entry_id is None
        if not projected:
            for projected_entry in reversed(projection.entries):
                if projected_entry.source["id"] == entry_id:
                    for m in projected_entry.messages:
                        if m.get("role") == "assistant":
                            projected = True
                            break
                    if projected:
                        break
        position = manager.branch_position(entry_id) if entry_id else -1
        # What follows the checked message on the branch: almost always nothing.
        after = manager.branch_view()[position + 1 :] if position >= 0 else []
        has_post_edit = False
        latest_edit: dict[str, Any] | None = None
        compacted_after = False
        for e in after:
            kind = e.get("type")
            if kind == "context_edit":
                has_post_edit = True
                if e.get("targetId") == entry_id:
                    latest_edit = e
            elif kind == "compaction":
                compacted_after = True
        retained = entry_id is None or (
            not compacted_after and (latest_edit is None or latest_edit.get("replacement") is not None)
        )
        usage_matches = projected and not has_post_edit
        explicit_overflow = message.get("stopReason") == "error" and is_context_overflow(message, 0)
        context_overflow = same_model and (
            (explicit_overflow and retained) or (usage_matches and is_context_overflow(message, window))
        )
        recoverable = (
            same_model
            and projected
            and message_model is not None
            and is_recoverable_length(message, message_model.max_tokens)
        )
        if context_overflow or recoverable:
            will_retry = message.get("stopReason") != "stop"
            if not will_retry:
                # §9.4: a completed reply above the window is a *silent overflow*: compact, no retry.
                return await self.run_auto("overflow", False)
            if s._overflow_recovery_attempted:
                text = OVERFLOW_RECOVERY_FAILED if context_overflow else LENGTH_RECOVERY_FAILED
                s._emit(
                    "compaction_end", reason="overflow", aborted=False, willRetry=False, errorMessage=text
                )
                await self._emit_compact_failed("overflow", text, aborted=False, from_extension=False)
                return False
            s._overflow_recovery_attempted = True
            s._runs.omit_recovery_attempt(message)
            return await self.run_auto("overflow", True)
        has_edits = False
        for projected_entry in projection.entries:
            if projected_entry.source.get("type") == "context_edit":
                has_edits = True
                break
        direct = calculate_context_tokens(message.get("usage"))
        if has_edits:
            tokens = estimate_projected_context_tokens(
                projection,
                manager.branch_position,
                manager.latest_invalidating_position(),
            ).tokens
        elif message.get("stopReason") == "error" or direct == 0:
            estimate = estimate_context_tokens(s.agent.messages)
            if estimate.last_usage_index is not None and latest is not None:
                usage_message = s.agent.messages[estimate.last_usage_index]
                stamp = usage_message.get("timestamp", 0)
                if usage_message.get("role") == "assistant" and stamp <= ms_of_iso(latest["timestamp"]):
                    return False
            tokens = estimate.tokens
        else:
            tokens = direct
        if should_compact(tokens, window, settings):
            return await self.run_auto("threshold", False)
        return False

    async def before_next_turn(self) -> None:
        """Mid-run threshold check, before the next assistant request (AS:482-490)."""
        s = self._session
        model = s.model
        if model is None or model.context_window <= 0:
            return
        projection = s.session_manager.build_session_projection()
        settings = s.settings.get_compaction_settings(model)
        estimate = estimate_projected_context_tokens(
            projection,
            s.session_manager.branch_position,
            s.session_manager.latest_invalidating_position(),
        )
        if should_compact(estimate.tokens, model.context_window, settings):
            await self.run_auto("threshold", False)
        s.agent.messages = list(s.session_manager.build_session_projection().messages)

    def _prepare(self, settings: Any) -> Prepared | None:
        s = self._session
        projection = s.session_manager.build_session_projection()
        tokens_before = estimate_projected_context_tokens(
            projection,
            s.session_manager.branch_position,
            s.session_manager.latest_invalidating_position(),
        ).tokens
        # A NaN estimate (a user text that is a number after the last usage) is Pi's too: the
        # entry keeps it and its session file line holds null, as JSON.stringify writes it
        # (``session_manager.dumps_entry``).
        return prepare_compaction(
            s.session_manager.branch_view(), projection, settings, cast(int, tokens_before)
        )

    async def run_auto(self, reason: CompactionReason, will_retry: bool) -> bool:
        """``_runAutoCompaction`` (AS:2626-2754)."""
        s = self._session
        model = s.model
        settings = s.settings.get_compaction_settings(model)
        controller: AbortController | None = None
        started = False
        from_extension = False
        try:
            if model is None:
                return False
            prepared = self._prepare(settings)
            if prepared is None:
                # §9.3 / verified 9.4e: silent give-up, no events at all.
                s.trace.emit("host", "compaction_skipped", reason=reason, why="nothing to summarise")
                return False
            controller = AbortController()
            s._auto_compaction_abort = controller
            started = True
            s._emit("compaction_start", reason=reason)
            controller.signal.throw_if_aborted()
            # Real Pi always has a handler here (the observer extension); with none loaded the
            # event is still observed, and the result is Pi's own summarizer, as without handlers.
            compaction = await self._extension_compaction(
                prepared, None, reason, will_retry, controller.signal
            )
            from_extension = compaction is not None
            controller.signal.throw_if_aborted()
            if compaction is None:
                compaction = await self._run_default_compaction(
                    prepared, model, None, controller.signal, reason
                )
            controller.signal.throw_if_aborted()
            await self._commit_compaction(compaction, from_extension, reason, will_retry)
            if will_retry:
                return True
            return s.agent.has_queued_messages()
        except Exception as error:
            aborted = (controller is not None and controller.signal.aborted) or isinstance(
                error, _ExtensionCancelledError
            )
            if started:
                message = str(error) or "compaction failed"
                error_message = (
                    None
                    if aborted
                    else (
                        f"Context overflow recovery failed: {message}"
                        if reason == "overflow"
                        else f"Auto-compaction failed: {message}"
                    )
                )
                s._emit(
                    "compaction_end",
                    reason=reason,
                    aborted=aborted,
                    willRetry=False,
                    errorMessage=error_message,
                )
                await self._emit_compact_failed(
                    reason, error_message, aborted=aborted, from_extension=from_extension
                )
            return False
        finally:
            if s._auto_compaction_abort is controller:
                s._auto_compaction_abort = None
            s._resolve_idle_waiters()

    async def _append_and_announce(
        self, compaction: CompactionResult, from_extension: bool, reason: CompactionReason, will_retry: bool
    ) -> int | None:
        """Append the entry verbatim (§9.7), rebuild context, emit ``session_compact`` with the
        first entry whose summary equals the new one (§9.9, Pi's lookup quirk). Shared by
        automatic and manual compaction; returns ``estimatedTokensAfter``."""
        s = self._session
        s.session_manager.append_compaction(
            compaction.summary,
            compaction.first_kept_entry_id,
            compaction.tokens_before,
            absent_if_none(compaction.details),
            from_extension,
            absent_if_none(compaction.usage),
        )
        s._refresh_finalized_context()
        estimated_after = estimate_messages_tokens(s.session_manager.build_session_projection().messages)
        saved = next(
            (
                e
                for e in s.session_manager.get_entries()
                if e.get("type") == "compaction" and e.get("summary") == compaction.summary
            ),
            None,
        )
        if saved is not None:
            await s.dispatch(
                SessionCompactEvent(
                    compaction_entry=saved,
                    from_extension=from_extension,
                    reason=reason,
                    will_retry=will_retry,
                )
            )
        # A NaN estimate (a kept user text that is a number) is JSON null on real Pi.
        return None if math.isnan(estimated_after) else int(estimated_after)

    async def _commit_compaction(
        self, compaction: CompactionResult, from_extension: bool, reason: CompactionReason, will_retry: bool
    ) -> None:
        """Automatic compaction's commit: append and announce, then ``compaction_end``."""
        s = self._session
        after = await self._append_and_announce(compaction, from_extension, reason, will_retry)
        result = dataclasses.replace(compaction, estimated_tokens_after=after).to_json()
        s._emit(
            "compaction_end",
            rpc={
                "type": "compaction_end",
                "reason": reason,
                "result": result,
                "aborted": False,
                "willRetry": will_retry,
            },
            reason=reason,
            aborted=False,
            willRetry=will_retry,
            result=_compaction_end_result(compaction, after, from_extension),
        )

    async def _emit_compact_failed(
        self, reason: CompactionReason, error_message: str | None, *, aborted: bool, from_extension: bool
    ) -> None:
        s = self._session
        await s.dispatch(
            SessionCompactFailedEvent(
                reason=reason,
                error_message=error_message,
                aborted=aborted,
                will_retry=False,
                from_extension=from_extension,
            )
        )

    async def _run_default_compaction(
        self,
        prepared: Prepared,
        model: Model,
        custom_instructions: str | None,
        signal: AbortSignal,
        reason: CompactionReason,
    ) -> CompactionResult:
        """Pi's own summarizer (AS:2311-2315, C:477-542): one call, two for a split turn, each
        retried by ``retryAssistantCall`` with the ``settings.retry`` budget; fails on
        length/error/tool calls."""
        s = self._session
        p = prepared.preparation
        reasoning = s.thinking_level if (model.reasoning and s.thinking_level != "off") else None

        async def summarise(text: str, label: str) -> tuple[str, dict[str, Any]]:
            messages = [user_message(text, s.service.clock.now_ms())]
            # pi-ai clamps a summary's max_tokens too (streamSimple -> buildBaseOptions,
            # simple-options.js:31-36): the model's output limit, fitted to the window.
            estimate = estimate_request_context_tokens(
                [{"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT, "timestamp": 0}, *messages]
            )

            async def produce() -> Message:
                return await s.service.call(
                    "summary",
                    model,
                    messages,
                    system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
                    max_tokens=clamp_max_tokens(model, estimate),
                    reasoning=reasoning,
                    signal=signal,
                    hooks=s._summary_hooks,
                )

            reply = await self._retry_summarization(produce, signal, reason)
            stop = reply.get("stopReason")
            if stop == "aborted":
                raise _CancelledError("Compaction cancelled")
            if stop == "error":
                raise RuntimeError(f"{label} failed: {reply.get('errorMessage') or 'Unknown error'}")
            if stop == "length":
                raise RuntimeError(
                    f"{label} failed: generation hit the token cap and the summary is incomplete"
                )
            if any(b.get("type") == "toolCall" for b in reply.get("content") or []):
                raise RuntimeError(f"{label} attempted to call a tool")
            return content_text(reply.get("content")), reply.get("usage") or {}

        if p.is_split_turn and p.turn_prefix_messages:
            history = p.previous_summary or "No prior history."
            history_usage = None
            if p.messages_to_summarize:
                history, history_usage = await summarise(
                    summary_request_text(
                        p.messages_to_summarize,
                        previous_summary=p.previous_summary,
                        custom_instructions=custom_instructions,
                    ),
                    "Summarization",
                )
            prefix, usage = await summarise(
                turn_prefix_request_text(p.turn_prefix_messages, custom_instructions=custom_instructions),
                "Turn prefix summarization",
            )
            summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"
            usage = combine_usage(history_usage, usage) if history_usage is not None else usage
        else:
            summary, usage = await summarise(
                summary_request_text(
                    p.messages_to_summarize,
                    previous_summary=p.previous_summary,
                    custom_instructions=custom_instructions,
                ),
                "Summarization",
            )
        read_files, modified_files = compute_file_lists(prepared.file_ops)
        summary += format_file_operations(read_files, modified_files)
        return CompactionResult(
            summary=summary,
            first_kept_entry_id=p.first_kept_entry_id,
            tokens_before=p.tokens_before,
            usage=usage,
            details={"readFiles": read_files, "modifiedFiles": modified_files},
        )

    async def _retry_summarization(
        self, produce: Callable[[], Awaitable[Message]], signal: AbortSignal, reason: CompactionReason
    ) -> Message:
        """pi-ai ``retryAssistantCall`` (``utils/retry.js:166-209``) with the session's
        ``settings.retry`` and Pi's callbacks (AS:3161-3181): a retryable error is retried up to
        ``maxRetries`` times after ``baseDelayMs * 2^(attempt-1)`` (at most ``maxAgentDelayMs``),
        announced by ``summarization_retry_scheduled`` and ``summarization_retry_attempt_start``
        (``source: compaction`` and the reason), ended by one ``summarization_retry_finished``
        when a retry was scheduled. An abort during the backoff returns the last error as an
        aborted reply; an aborted reply is never retried. Its own counter, unlike the agent's
        retry, and no context-overflow exclusion (``isRetryableAssistantError`` only)."""
        s = self._session
        retry = s.settings.get_retry_settings()
        max_attempts = retry["maxRetries"] if retry["enabled"] else 0
        attempt = 0
        retried = False
        while True:
            response = await produce()
            stop = response.get("stopReason")
            if stop != "error" or attempt >= max_attempts or not is_retryable_error(response):
                if retried:
                    s._emit("summarization_retry_finished")
                return response
            attempt += 1
            retried = True
            error = response.get("errorMessage") or "Unknown error"
            delay_ms = min(retry["baseDelayMs"] * 2 ** (attempt - 1), retry["maxAgentDelayMs"])
            s._emit(
                "summarization_retry_scheduled",
                attempt=attempt,
                maxAttempts=max_attempts,
                delayMs=delay_ms,
                errorMessage=error,
            )
            await sleep_unless_aborted(delay_ms / 1000, signal)
            if signal_aborted(signal):
                s._emit("summarization_retry_finished")
                aborted = {k: v for k, v in response.items() if k != "errorMessage"}
                aborted["stopReason"] = "aborted"
                return aborted
            s._emit("summarization_retry_attempt_start", source="compaction", reason=reason)

    async def _extension_compaction(
        self,
        prepared: Prepared,
        custom_instructions: str | None,
        reason: CompactionReason,
        will_retry: bool,
        signal: AbortSignal,
    ) -> CompactionResult | None:
        """``session_before_compact`` for either path: an extension's compaction, or None for Pi's.

        Raises :class:`_ExtensionCancelledError` when a handler cancels (AS:2648-2665 automatic, AS:2358-2375 manual).
        """
        s = self._session
        extension_result = await s.dispatch(
            SessionBeforeCompactEvent(
                preparation=prepared.preparation,
                branch_entries=s.session_manager.get_branch(),
                custom_instructions=custom_instructions,
                reason=reason,
                will_retry=will_retry,
                signal=signal,
            )
        )
        if not isinstance(extension_result, BeforeCompactResult):
            return None
        if extension_result.cancel:
            raise _ExtensionCancelledError("Compaction cancelled")
        return extension_result.compaction

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any]:
        """Manual compaction (AS:2335-2461); raises :class:`PiThrewError` with Pi's message."""
        s = self._session
        await s.abort()
        controller = AbortController()
        s._compaction_abort = controller
        s._emit("compaction_start", reason="manual")
        from_extension = False
        try:
            model = s.model
            if model is None:
                raise RuntimeError("No model selected.")
            settings = s.settings.get_compaction_settings(model)
            prepared = self._prepare(settings)
            if prepared is None:
                branch = s.session_manager.branch_view()
                if branch and branch[-1].get("type") == "compaction":
                    raise RuntimeError("Already compacted")
                raise RuntimeError("Nothing to compact (session too small)")
            compaction = await self._extension_compaction(
                prepared, custom_instructions, "manual", False, controller.signal
            )
            from_extension = compaction is not None
            if compaction is None:
                compaction = await self._run_default_compaction(
                    prepared, model, custom_instructions, controller.signal, "manual"
                )
            if controller.signal.aborted:
                raise _CancelledError("Compaction cancelled")
            estimated_after = await self._append_and_announce(compaction, from_extension, "manual", False)
            result = dataclasses.replace(compaction, estimated_tokens_after=estimated_after).to_json()
            s._compaction_abort = None
            s._resolve_idle_waiters()
            s._emit(
                "compaction_end",
                rpc={
                    "type": "compaction_end",
                    "reason": "manual",
                    "result": result,
                    "aborted": False,
                    "willRetry": False,
                },
                reason="manual",
                aborted=False,
                willRetry=False,
                result=_compaction_end_result(compaction, estimated_after, from_extension),
            )
            return result
        except Exception as error:
            # An invalid compaction setting throws inside the try block too (AS:2346), so it
            # ends like any failure: ``compaction_end{errorMessage: "Compaction failed: Invalid
            # compaction.…"}`` and ``session_compact_failed``, then the bare message (s15c).
            message = str(error)
            aborted = controller.signal.aborted or isinstance(error, _ExtensionCancelledError)
            error_message = None if aborted else f"Compaction failed: {message}"
            s._compaction_abort = None
            s._resolve_idle_waiters()
            s._emit(
                "compaction_end",
                reason="manual",
                aborted=aborted,
                willRetry=False,
                errorMessage=error_message,
            )
            await self._emit_compact_failed(
                "manual", error_message, aborted=aborted, from_extension=from_extension
            )
            raise PiThrewError(message) from error
        finally:
            s._compaction_abort = None
            s._resolve_idle_waiters()


def _compaction_end_result(
    compaction: CompactionResult, estimated_after: int | None, from_extension: bool
) -> dict[str, Any]:
    """The ``result`` of a successful ``compaction_end`` as the trace records it."""
    return {
        "firstKeptEntryId": compaction.first_kept_entry_id,
        "tokensBefore": compaction.tokens_before,
        "estimatedTokensAfter": estimated_after,
        "fromExtension": from_extension,
        "summaryChars": len(compaction.summary) if isinstance(compaction.summary, str) else None,
    }
