"""Mutants of deferral, the reminder, the emergency and automatic initiation (reference: Deferral,
reminder and emergency)."""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import unicodedata
import uuid
from datetime import UTC, datetime
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, patched
from pi_continuity_harness.reference.blitz import messages
from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text, remove_exact
from pi_continuity_harness.reference.blitz.constants import (
    AUTO_BUDGET_ENTRY,
    EMERGENCY_INSTRUCTION,
    EMERGENCY_TYPE,
)
from pi_continuity_harness.reference.blitz.paths import recovery_file_name, utc_file_timestamp
from pi_continuity_harness.reference.blitz.recovery import CaptureWindow
from pi_continuity_harness.reference.blitz.templates import resolve_template, role_default

#: The reference's wiring module (the package's ``extension`` name is its factory function).
_WIRING = importlib.import_module("pi_continuity_harness.reference.blitz.wiring")


@mutant("H27c", how="the recovery snapshot reverses the prompts", invariant="captured_prompts_kept_in_order")
class DeferredPromptsReversed(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.reverse()
            request.capture.flush()
        return result


@mutant("H27b", how="captured prompts are dropped", invariant="captured_prompts_kept_in_order")
class DeferredPromptsDropped(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.clear()
            if request.capture.path:
                remove_exact(request.capture.path)
        return result


@mutant(
    "H27a",
    how="prompts typed while the model streams (steer/follow-up) pass through",
    invariant="prompts_captured_when_due",
)
class StreamingInputNotCaptured(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        if event.streaming_behavior is not None:
            return None
        return super().on_input(event, ctx)


@mutant(
    "H27a",
    how="only interactive prompts are captured; RPC prompts pass through",
    invariant="prompts_captured_when_due",
)
class RpcInputsPassThrough(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        if event.source == "rpc":
            return None
        return super().on_input(event, ctx)


@mutant("H49a", how="the reminder repeats at every boundary", invariant="one_reminder_per_request")
class ReminderRepeats(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        super().check_reminder(ctx)
        if request is not None and request.reminded and not request.escalated and not request.submitted:
            request.reminded = False


@mutant("H50", how="no emergency instruction", invariant="emergency_once_at_90_percent")
class NoEmergency(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        if self.request is not None:
            self.request.escalated = True
        super().on_turn_end(event, ctx)


@mutant("H58", how="the automatic budget never runs out", invariant="automatic_initiation_budget")
class AutomaticBudgetUnlimited(Mutant):
    def spend_budget(self, attempts: int) -> None:
        super().spend_budget(0)


@mutant(
    "H57",
    how="an errored or aborted turn counts as completed (automatic request, budget, emergency)",
    unreachable="the blitz explorer scripts no errored or aborted turn",
)
class FailedTurnCounts(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        super().on_turn_end(dataclasses.replace(event, outcome="completed"), ctx)


@mutant("H54", how="automatic initiation is on by default", invariant="automatic_initiation_budget")
class AutomaticOnByDefault(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not self.settings.automatic_session_handoff:
            self.settings = self.settings.model_copy(update={"automatic_session_handoff": True})


_ONE_RUN = "a fixed text or the order of one start's messages (the features check it)"
_NO_COMPACTION = (
    "automatic_request_when_due sees the request missing after a compaction and a reload, but an"
    " explored seed seldom has both with the budget spent before them: seed 555 is the first (the kill"
    " matrix explores 60)"
)


class _CaptureMutant(Mutant):
    capture_class: type[CaptureWindow] = CaptureWindow

    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        return self.capture_class(self.recovery_dir(), session_id, now)


@mutant(
    "H45",
    how="a recovery file is written as soon as capture starts, even with no prompt",
    unreachable=_ONE_RUN,
)
class RecoveryWrittenEmpty(Mutant):
    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        window = super().new_capture(session_id, now)
        window.path = os.path.join(window.directory, recovery_file_name(now, session_id))
        atomic_write_text(window.path, "")
        return window


class _SecondsCapture(CaptureWindow):
    def flush(self) -> None:
        if self.path is None and self.prompts:
            stamp = datetime.fromtimestamp(self.started_at, tz=UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
            self.path = os.path.join(self.directory, f"{stamp}-{self.session_id}.md")
        super().flush()


@mutant(
    "H46a",
    how="the recovery file's timestamp has no milliseconds",
    invariant="recovery_files_named_as_specified",
)
class RecoveryNameSeconds(_CaptureMutant):
    capture_class = _SecondsCapture


class _RenumberedCapture(CaptureWindow):
    def flush(self) -> None:
        if not self.prompts:
            return
        if self.path is None:
            self.path = os.path.join(self.directory, recovery_file_name(self.started_at, self.session_id))
        text = "\n\n".join(f"--- Prompt {n} ---\n{p}" for n, p in enumerate(self.prompts, 1)) + "\n"
        atomic_write_text(self.path, text)


@mutant("H47", how="the boundaries read '--- Prompt N ---'", unreachable=_ONE_RUN)
class BoundaryRenamed(_CaptureMutant):
    capture_class = _RenumberedCapture


@mutant("H49b", how="the reminder comes at the first boundary, whatever the delay", unreachable=_ONE_RUN)
class ReminderWithoutDelay(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        if request is not None and request.reminder_started_at is not None:
            request.reminder_started_at -= 100_000
        super().check_reminder(ctx)


@mutant(
    "H52c",
    how="at 90% without a request the emergency instruction is sent anyway",
    invariant="reminder_only_while_request_waits",
)
class EmergencyWithoutRequest(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        percent = self.context_percent(ctx)
        if event.outcome == "completed" and self.request is None and percent is not None and percent >= 90:
            message = {
                "customType": "pi-blitz-handoff-emergency",
                "content": EMERGENCY_INSTRUCTION,
                "display": True,
            }
            self.pi.send_message(message, deliver_as="steer")
            return
        super().on_turn_end(event, ctx)


@mutant(
    "H55",
    how="a zero automatic threshold does not disable automatic initiation",
    invariant="automatic_initiation_budget",
)
class ZeroThresholdAutomatic(Mutant):
    def automatic_due(self, percent: float) -> bool:
        settings = self.settings
        if settings.automatic_session_handoff and settings.automatic_session_handoff_percent == 0:
            if self.cleaning or self.in_settings or self.automatic_attempts >= 1:
                return False
            return percent >= 70
        return super().automatic_due(percent)


@mutant(
    "H56a",
    how="the automatic threshold is five points higher than set",
    invariant="automatic_request_when_due",
)
class AutomaticThresholdRaised(Mutant):
    def automatic_due(self, percent: float) -> bool:
        return super().automatic_due(percent - 5)


@mutant("H59", how="the automatic budget is forgotten on reload", unreachable=_ONE_RUN)
class BudgetForgottenOnReload(Mutant):
    def restore_budget(self, ctx: Any) -> None:
        self.automatic_attempts = 0


@mutant(
    "H60a",
    how="a manual compaction does not reset the automatic budget",
    invariant="automatic_request_when_due",
)
class BudgetKeptAfterCompaction(Mutant):
    def spend_budget(self, attempts: int) -> None:
        if attempts == 0:
            return
        super().spend_budget(attempts)


@mutant(
    "H15",
    how="the automatic request is a follow-up, after the run's final answer",
    invariant="automatic_request_when_due",
)
class AutomaticAsFollowUp(Mutant):
    def start_automatic(self, ctx: Any) -> None:
        pi = self.pi

        def send_message(message: Any, **options: Any) -> None:
            if options.get("deliver_as") == "steer":
                options = {**options, "deliver_as": "followUp"}
            pi.send_message(message, **options)

        self.pi = Proxy(pi, send_message=send_message)
        try:
            super().start_automatic(ctx)
        finally:
            self.pi = pi


@mutant("H56b", how="the automatic request aborts the running turn", unreachable=_ONE_RUN)
class AutomaticAbortsTurn(Mutant):
    def start_automatic(self, ctx: Any) -> None:
        ctx.abort()
        super().start_automatic(ctx)


@mutant(
    "H53",
    how="the emergency level follows criticalWarningPercent instead of the fixed 90%",
    invariant="emergency_once_at_90_percent",
)
class EmergencyAtCritical(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        with patched(_WIRING, "EMERGENCY_PERCENT", self.settings.critical_warning_percent):
            super().on_turn_end(event, ctx)


@mutant(
    "H61",
    how="the automatic budget resets when a compaction starts, even one that fails",
    invariant="automatic_initiation_budget",
)
class FailedCompactionResetsBudget(Mutant):
    def register(self) -> None:
        super().register()

        def on_before_compact(_event: Any, _ctx: Any) -> None:
            if self.automatic_attempts:
                self.spend_budget(0)

        self.pi.on("session_before_compact", on_before_compact)


@mutant(
    "H52a",
    how="a submitted (Finished) handoff is escalated too",
    unreachable="emergency_once_at_90_percent flags missing and repeated emergencies, not one after a Finish",
)
class SubmittedEscalated(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        request = self.request
        if request is None or not request.submitted:
            super().on_turn_end(event, ctx)
            return
        phase = request.phase
        request.phase = "writing"
        try:
            super().on_turn_end(event, ctx)
        finally:
            if request.phase == "writing":
                request.phase = phase


@mutant(
    "H52b",
    how="a cancelled handoff is still escalated at 90%",
    invariant="reminder_only_while_request_waits",
)
class CancelledEscalated(Mutant):
    cancelled: Any = None

    async def cancel(self, ctx: Any) -> None:
        if self.request is not None and self.request.active:
            self.cancelled = self.request
        await super().cancel(ctx)

    def on_turn_end(self, event: Any, ctx: Any) -> None:
        super().on_turn_end(event, ctx)
        old = self.cancelled
        percent = self.context_percent(ctx)
        if old is not None and not old.escalated and percent is not None and percent >= 90:
            old.escalated = True
            self.pi.send_message(
                {"customType": EMERGENCY_TYPE, "content": EMERGENCY_INSTRUCTION, "display": True},
                deliver_as="steer",
            )


@mutant(
    "H62",
    how="an automatic request uses the shipped Call template, not the selected one",
    invariant="project_call_template_used",
)
class AutomaticUsesDefaultCall(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        request = super().start_request(ctx, route)
        if route == "automatic":
            shipped = resolve_template("call", role_default("call"), self.managed().templates, None)
            request.call_text = messages.call_instruction(shipped.text)
        return request


@mutant(
    "H22",
    how="with deferral from Writing, prompts are captured from the request on",
    invariant="user_operation_blocked_while_protected",
)
class WritingCapturesFromRequest(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        request = super().start_request(ctx, route)
        if request.capture is None:
            request.capture = self.new_capture(request.source_session_id, self.now())
        return request


@mutant(
    "H58",
    "H95a",
    how="the final automatic attempt waits for a fixed 90 %, whatever criticalWarningPercent says (an outside "
    "mutant; the features set no other critical level)",
    invariant="automatic_request_when_due",
)
class FinalAttemptAtFixed90(Mutant):
    def automatic_due(self, percent: float) -> bool:
        if (
            self.automatic_attempts == 1
            and self.settings.automatic_enabled
            and not (self.cleaning or self.in_settings)
        ):
            return percent >= 90.0
        return super().automatic_due(percent)


@mutant(
    "H105a",
    how="the context warning needs a use strictly above contextWarningPercent: a turn at exactly 60 % shows "
    "none (an outside mutant)",
    unreachable="no invariant counts warnings",
)
class WarningStrictlyAbove(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        at_threshold = self.context_percent(ctx) == self.settings.context_warning_percent
        if not (at_threshold and not self.warned):
            super().on_turn_end(event, ctx)
            return
        self.warned = True  # as if shown: the turn at exactly the threshold passes in silence
        try:
            super().on_turn_end(event, ctx)
        finally:
            self.warned = False


@mutant("H105a", how="the context warning repeats at every turn", unreachable="no invariant counts warnings")
class WarningRepeats(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        self.warned = False
        super().on_turn_end(event, ctx)


class _Emergency(Mutant):
    """Calls :meth:`after_emergency` right after the turn that sent the emergency."""

    def after_emergency(self, request: Any, ctx: Any) -> None:
        raise NotImplementedError

    def on_turn_end(self, event: Any, ctx: Any) -> None:
        request = self.request
        before = request is not None and request.escalated
        super().on_turn_end(event, ctx)
        if request is not None and request.escalated and not before:
            self.after_emergency(request, ctx)


@mutant(
    "H51",
    how="the emergency leaves the pending reminder due",
    invariant="reminder_only_while_request_waits",
)
class EmergencyKeepsReminder(_Emergency):
    def after_emergency(self, request: Any, ctx: Any) -> None:
        request.reminded = False


@mutant(
    "H137",
    how="the emergency also aborts the running turn",
    unreachable="no invariant reads aborted runs around the emergency",
)
class EmergencyAborts(_Emergency):
    def after_emergency(self, request: Any, ctx: Any) -> None:
        ctx.abort()


@mutant(
    "H105b",
    how="the critical warning is shown once only",
    unreachable="no invariant counts warnings",
)
class CriticalWarnedOnce(Mutant):
    critical_said = False

    def on_settled(self, event: Any, ctx: Any) -> None:
        percent = self.context_percent(ctx)
        critical = percent is not None and percent >= self.settings.critical_warning_percent
        if critical and self.critical_said:
            notify = ctx.ui.notify

            def quiet(message: str, notify_type: str = "info") -> None:
                if "critical" not in message:
                    notify(message, notify_type)

            ctx = Proxy(ctx, ui=Proxy(ctx.ui, notify=quiet))
        self.critical_said = self.critical_said or critical
        super().on_settled(event, ctx)


@mutant(
    "H136",
    how="the deferred prompts are also sent in the receiver's first prompt",
    unreachable="captured_prompts_kept_in_order reads the dossier and the recovery file, not the bootstrap",
)
class DeferredAlsoInBootstrap(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        prompts = list(request.capture.prompts) if request is not None and request.capture is not None else []
        original = messages.bootstrap_prompt

        def with_prompts(*args: Any, **kwargs: Any) -> str:
            text = original(*args, **kwargs)
            return text + ("\n\nDeferred prompts:\n" + "\n".join(prompts) if prompts else "")

        with patched(messages, "bootstrap_prompt", with_prompts):
            await super().cutover(token, ctx)


@mutant(
    "H46b",
    how="each captured prompt also gets a recovery file of its own",
    unreachable="captured_prompts_kept_in_order reads the window's own recovery file",
)
class RecoveryFilePerPrompt(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        capture = request.capture if request is not None else None
        if capture is not None and capture.path and len(capture.prompts) > 1:
            extra = capture.path[: -len(".md")] + f"-{len(capture.prompts)}.md"
            atomic_write_text(extra, capture.prompts[-1])
        return result


@mutant(
    "H60b",
    how="only a manual compaction resets the automatic budget (a threshold or overflow one does not)",
    unreachable="the explorer's compactions are manual",
)
class ThresholdCompactionKeepsBudget(Mutant):
    def register(self) -> None:
        pi = self.pi
        original_on = pi.on

        def on(event: str, handler: Any) -> Any:
            if event != "session_compact":
                return original_on(event, handler)

            def manual_only(compact: Any, ctx: Any) -> Any:
                return handler(compact, ctx) if getattr(compact, "reason", None) == "manual" else None

            return original_on(event, manual_only)

        self.pi = Proxy(pi, on=on)
        try:
            super().register()
        finally:
            self.pi = pi


@mutant(
    "H17",
    how="an early template request does not start the reminder clock",
    unreachable="reminder_only_after_delay accepts a missing reminder",
)
class EarlyGetStartsNoClock(Mutant):
    async def tool_get(self, *args: Any, **kwargs: Any) -> Any:
        request = self.request
        early = request is not None and request.active and not request.call_dispatched
        result = await super().tool_get(*args, **kwargs)
        if early and request is not None and request.retrieved_at is not None:
            request.reminder_started_at = None
        return result


@mutant(
    "H49c",
    how="the reminder issues a new Finish ID (the one the template request returned goes stale)",
    unreachable=(
        "valid_finish_accepted would see the returned ID rejected, but the explorer's reminders come before the"
        " template response (only its slow replies, which precede the GET, let the delay pass): 300 seeds, none"
    ),
)
class ReminderRegeneratesId(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        before = request is not None and request.reminded
        super().check_reminder(ctx)
        if request is not None and request.reminded and not before and request.finish_id is not None:
            request.finish_id = str(uuid.uuid4())


class _RunningTotalCapture(CaptureWindow):
    """Each boundary's M is the count at the time its prompt was captured (1 of 1, 2 of 2)."""

    def flush(self) -> None:
        if not self.prompts:
            return
        if self.path is None:
            self.path = os.path.join(self.directory, recovery_file_name(self.started_at, self.session_id))
        text = "\n\n".join(f"--- Deferred Prompt {n} of {n} ---\n{p}" for n, p in enumerate(self.prompts, 1))
        atomic_write_text(self.path, text + "\n")


@mutant(
    "H47",
    how="each boundary's M is the count when its prompt was captured ('1 of 1', '2 of 2')",
    unreachable=_ONE_RUN,
)
class BoundaryTotalIsRunningCount(_CaptureMutant):
    capture_class = _RunningTotalCapture


@mutant(
    "H36",
    how="the deferred prompts are written over the dossier instead of appended to it",
    unreachable="the explorer's receiver checks no dossier content",
)
class DeferredOverwriteDossier(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if (
            request is not None
            and request.phase == "finished"
            and request.capture
            and request.capture.prompts
        ):
            with open(request.dossier, "w", encoding="utf-8"):
                pass  # truncated: the append below leaves only the deferred prompts
        await super().cutover(token, ctx)


@mutant(
    "H51",
    how="the emergency issues a new Finish ID: the one the template response gave goes stale",
    invariant="valid_finish_accepted",
)
class EmergencyRegeneratesId(_Emergency):
    def after_emergency(self, request: Any, ctx: Any) -> None:
        if request.finish_id is not None:
            request.finish_id = str(uuid.uuid4())


@mutant(
    "H59",
    how="a reload restores the budget from the first budget entry of the session, not the latest",
    unreachable=(
        "40 seeds never reloaded between a second automatic attempt and a turn at the critical level"
        " (automatic_initiation_budget would count the third request)"
    ),
)
class BudgetRestoredFromFirstEntry(Mutant):
    def restore_budget(self, ctx: Any) -> None:
        self.automatic_attempts = 0
        for entry in ctx.session_manager.get_entries():
            data = entry.get("data") if entry.get("customType") == AUTO_BUDGET_ENTRY else None
            if (
                entry.get("type") == "custom"
                and isinstance(data, dict)
                and isinstance(data.get("attempts"), int)
            ):
                self.automatic_attempts = data["attempts"]
                return


@mutant(
    "H60a",
    how="a compaction resets the budget in memory only: no session entry, so a reload brings it back",
    unreachable=_NO_COMPACTION,
)
class CompactionResetNotPersisted(Mutant):
    def spend_budget(self, attempts: int) -> None:
        if attempts == 0:
            self.automatic_attempts = 0
            return
        super().spend_budget(attempts)


@mutant(
    "H53",
    how="the emergency needs use strictly above 90% (> instead of >=)",
    invariant="emergency_once_at_90_percent",
)
class EmergencyStrictlyAbove(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        request = self.request
        if request is None or request.escalated or self.context_percent(ctx) != 90.0:
            super().on_turn_end(event, ctx)
            return
        request.escalated = True  # taken as already escalated for this turn only
        try:
            super().on_turn_end(event, ctx)
        finally:
            request.escalated = False


@mutant(
    "H56a",
    how="automatic attempts need use strictly above their threshold (> instead of >=)",
    invariant="automatic_request_when_due",
)
class AutomaticStrictlyAbove(Mutant):
    def automatic_due(self, percent: float) -> bool:
        settings = self.settings
        level = (settings.automatic_session_handoff_percent, settings.critical_warning_percent)
        if self.automatic_attempts < 2 and percent == level[self.automatic_attempts]:
            return False
        return super().automatic_due(percent)


@mutant(
    "H27b",
    how="captured prompts are stripped of the whitespace around them",
    invariant="captured_prompts_kept_in_order",
)
class CapturedPromptStripped(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        return super().on_input(dataclasses.replace(event, text=event.text.strip()), ctx)


@mutant(
    "H17",
    how="an early GET starts the reminder clock at the request, not at the GET",
    unreachable="one_reminder_per_request bounds the reminders per request, not when the first one is due",
)
class ReminderClockFromRequest(Mutant):
    """A plausible slip: the clock is "started" at the early GET with the request's own time."""

    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        early = request is not None and request.reminder_started_at is None
        result = await super().tool_get(call_id, params, signal, ctx)
        if early and request is not None and request.reminder_started_at is not None:
            request.reminder_started_at = request.requested_at
        return result


# ---------------------------------------------------------------- a third independent round
@mutant(
    "H46a",
    how="the recovery file name keeps underscores and dots of the session id",
    invariant="recovery_files_named_as_specified",
)
class SessionComponentKeepsUnderscore(Mutant):
    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        window = super().new_capture(session_id, now)
        kept = re.sub(r"[^A-Za-z0-9_.-]", "-", session_id)
        window.path = os.path.join(window.directory, f"{utc_file_timestamp(now)}-{kept}.md")
        return window


@mutant(
    "H27b", how="captured prompts are normalised to Unicode NFC", invariant="captured_prompts_kept_in_order"
)
class CapturedPromptNfc(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        return super().on_input(
            dataclasses.replace(event, text=unicodedata.normalize("NFC", event.text)), ctx
        )


@mutant(
    "H27b",
    how="captured prompts have their CRLF line ends turned into LF",
    invariant="captured_prompts_kept_in_order",
)
class CapturedPromptNewlinesNormalised(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        return super().on_input(dataclasses.replace(event, text=event.text.replace("\r\n", "\n")), ctx)


@mutant(
    "H49a",
    how="a repeated template request restarts the reminder clock",
    unreachable="one_reminder_per_request bounds the reminders from above only",
)
class RepeatedGetRestartsReminder(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        repeated = request is not None and request.active and request.finish_id is not None
        result = await super().tool_get(call_id, params, signal, ctx)
        if repeated and request is not None and not request.reminded:
            request.reminder_started_at = self.now()
        return result


@mutant(
    "H49a",
    how="the reminder is sent once per extension instance: a later request of the session gets none",
    unreachable="one_reminder_per_request bounds the reminders from above only",
)
class ReminderOncePerRuntime(Mutant):
    spent = False

    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        if self.spent and request is not None:
            request.reminded = True
        super().check_reminder(ctx)
        if request is not None and request.reminded:
            self.spent = True


@mutant(
    "H50",
    how="the emergency is sent once per extension instance: a later request of the session is never escalated",
    invariant="emergency_once_at_90_percent",
)
class EmergencyOncePerRuntime(Mutant):
    spent = False

    def on_turn_end(self, event: Any, ctx: Any) -> None:
        request = self.request
        if self.spent and request is not None:
            request.escalated = True
        super().on_turn_end(event, ctx)
        if request is not None and request.escalated:
            self.spent = True


@mutant(
    "H50",
    how="the emergency instruction is queued as a follow-up (after the run), not as steering",
    invariant="emergency_once_at_90_percent",
)
class EmergencyAsFollowUp(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        pi = self.pi

        def send_message(message: Any, **options: Any) -> Any:
            if isinstance(message, dict) and message.get("customType") == EMERGENCY_TYPE:
                options = {**options, "deliver_as": "followUp"}
            return pi.send_message(message, **options)

        self.pi = Proxy(pi, send_message=send_message)
        try:
            super().on_turn_end(event, ctx)
        finally:
            self.pi = pi


# ---------------------------------------------------------------- the fourth independent round
class _FollowUpPi(Proxy):
    """``pi`` whose steering custom messages are queued as follow-ups instead."""

    def send_message(self, message: Any, **options: Any) -> Any:
        if options.get("deliver_as") == "steer":
            options["deliver_as"] = "followUp"
        return self._inner.send_message(message, **options)


@mutant(
    "H49c",
    how="a reminder due while the model works is queued as a follow-up: one more turn after the writer's last",
    unreachable=(
        "no invariant reads when a reminder reaches the model (captured_prompts_kept_in_order fails at seed 25"
        " only through a consequence of the extra turn)"
    ),
)
class ReminderAsFollowUp(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        pi = self.pi
        self.pi = _FollowUpPi(pi)
        try:
            super().check_reminder(ctx)
        finally:
            self.pi = pi


@mutant(
    "H49a",
    how="the reminder still comes after the Finish was accepted",
    unreachable="the explorer's writer is never slow after its Finish",
)
class ReminderAfterFinish(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        if request is None or request.phase != "finished":
            super().check_reminder(ctx)
            return
        request.phase = "writing"  # not submitted, for reminder_due
        try:
            super().check_reminder(ctx)
        finally:
            request.phase = "finished"


@mutant(
    "H62",
    how="an automatic request captures prompts from the request, whatever deferPromptsFrom says",
    unreachable="no invariant reads when capture starts",
)
class AutomaticDefersFromRequest(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        request = super().start_request(ctx, route)
        if route == "automatic" and request.capture is None:
            request.defer_mode = "request"
            request.capture = self.new_capture(request.source_session_id, request.requested_at)
            self.refresh(ctx)
        return request


@mutant(
    "H102a",
    how="prompts are captured into the managed recovery directory, not the configured one",
    unreachable="the explorer never configures recoveryDirectory",
)
class CaptureIgnoresRecoveryDirectory(Mutant):
    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        return CaptureWindow(self.managed().recovery, session_id, now)
