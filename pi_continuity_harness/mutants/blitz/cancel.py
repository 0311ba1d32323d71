"""Mutants of the widget, cancellation and protection (reference: Status, cancellation and recovery)."""

from __future__ import annotations

import importlib
import os
from typing import Any, ClassVar

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, patched, with_ui
from pi_continuity_harness.reference.blitz import status
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact
from pi_continuity_harness.reference.blitz.paths import dossier_path
from pi_continuity_harness.reference.blitz.recovery import format_deferred


@mutant("H76a", how="cancel deletes the recovery file", invariant="captured_prompts_kept_in_order")
class CancelDeletesRecovery(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        await super().cancel(ctx)
        if request is not None and request.capture is not None and request.capture.path:
            remove_exact(request.capture.path)


@mutant(
    "H76a",
    how="the cancel message no longer names the kept recovery file (an outside mutant; the features checked "
    "the file, not that the user is told where it is)",
    unreachable="no invariant reads the cancel message",
)
class CancelKeepsRecoveryUnnamed(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        path = request.capture.path if request is not None and request.capture is not None else None
        if not path:
            await super().cancel(ctx)
            return
        named = f" Deferred prompts are kept in {path} (/sh recover)."
        await super().cancel(
            with_ui(ctx, notify=lambda message, *a: ctx.ui.notify(message.replace(named, ""), *a))
        )


@mutant("H72a", how="cancel removes whatever file is there", invariant="foreign_files_untouched")
class CancelRemovesForeignFile(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None:
            request.reservation_owned = True
        await super().cancel(ctx)


_ONE_RUN = "a fixed text or the order of one start's messages (the features check it)"


@mutant("H65", how="a cancel leaves the widget as it was", unreachable=_ONE_RUN)
class CancelKeepsWidget(Mutant):
    def show(self, ctx: Any, lines: list[str] | None) -> None:
        if lines == status.cancelled_lines():
            return
        super().show(ctx, lines)


@mutant("H71a", how="a cancel leaves the owned reservation", unreachable=_ONE_RUN)
class CancelKeepsReservation(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None:
            request.reservation_owned = False
        await super().cancel(ctx)


@mutant(
    "H72b",
    how="a leftover file at the dossier path is overwritten by the reservation",
    invariant="foreign_files_untouched",
)
class LeftoverOverwritten(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        dossier = dossier_path(ctx.cwd, ctx.session_manager.get_session_id())
        if os.path.lexists(dossier) and (self.request is None or not self.request.active):
            os.remove(dossier)
        return super().start_request(ctx, route)


@mutant("H75", how="a cancel announces itself before the cleanup and again after it", unreachable=_ONE_RUN)
class CancelTwoNotes(Mutant):
    async def cancel(self, ctx: Any) -> None:
        if self.request is not None and self.request.active:
            ctx.ui.notify("Cancelling the Session Handoff...", "info")
        await super().cancel(ctx)


@mutant(
    "H74",
    how="a cancel during a running turn aborts it instead of waiting for it",
    unreachable="the explorer cancels only between operations, when the source is idle",
)
class CancelAbortsRunningWork(Mutant):
    async def cancel(self, ctx: Any) -> None:
        if self.request is not None and self.request.active and not ctx.is_idle():
            ctx.abort()
        await super().cancel(ctx)


@mutant(
    "H76b",
    how="captured prompts are replayed to the model after a cancel",
    unreachable="captured_prompts_kept_in_order accepts captured prompts delivered after the capture",
)
class CancelReplaysCaptured(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        await super().cancel(ctx)
        if request is not None and request.capture is not None:
            for prompt in list(request.capture.prompts):
                self.pi.send_user_message(prompt, deliver_as="followUp")


@mutant("H80a", how="an active request survives a reload", invariant="explicit_start_makes_request")
class RequestSurvivesReload(Mutant):
    """Keeps the active request where a TypeScript extension would keep it across a reload: in
    the Pi process (``globalThis``). A simulated Pi process is a run, so the request is kept per
    run (its project directory) and forgotten at the process's first session (``reason:
    "startup"``). A class attribute kept it per Python process instead: an explorer worker
    carried a request from one seed's run into the next seed's, so a seed's verdict depended on
    the seeds its worker had run before it."""

    carried: ClassVar[dict[str, Any]] = {}

    def register(self) -> None:
        def forget(event: Any, ctx: Any) -> None:
            if event.reason == "startup":
                RequestSurvivesReload.carried.pop(ctx.cwd, None)

        self.pi.on("session_start", forget)  # before the reference's own, which loads
        super().register()

    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.cwd = ctx.cwd
        carried = RequestSurvivesReload.carried.get(ctx.cwd)
        if carried is not None and self.request is None:
            self.request = carried

    def on_input(self, event: Any, ctx: Any) -> Any:
        RequestSurvivesReload.carried[ctx.cwd] = (
            self.request if self.request is not None and self.request.active else None
        )
        return super().on_input(event, ctx)

    async def tool_get(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().tool_get(*args, **kwargs)
        RequestSurvivesReload.carried[self.cwd] = self.request
        return result


@mutant(
    "H80b", how="a partial dossier is removed when the extension loads", invariant="foreign_files_untouched"
)
class PartialDossierRemovedOnLoad(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        path = dossier_path(ctx.cwd, ctx.session_manager.get_session_id())
        if os.path.isfile(path):
            os.remove(path)


@mutant(
    "H77c",
    how="a compaction is not blocked while the handoff is written",
    invariant="user_operation_blocked_while_protected",
)
class CompactionNotBlocked(Mutant):
    def guard(self, ctx: Any, what: str) -> Any:
        return None if what == "Compaction" else super().guard(ctx, what)


@mutant(
    "H77a",
    how="a session switch is not blocked while the handoff is written",
    invariant="user_operation_blocked_while_protected",
)
class SwitchNotBlocked(Mutant):
    def guard(self, ctx: Any, what: str) -> Any:
        return None if what == "Switching sessions" else super().guard(ctx, what)


@mutant(
    "H77a",
    how="only a new session is blocked while the handoff is written; resuming another session is not",
    invariant="user_operation_blocked_while_protected",
)
class ResumeNotBlocked(Mutant):
    def on_before_switch(self, event: Any, ctx: Any) -> Any:
        return None if event.reason == "resume" else super().on_before_switch(event, ctx)


class _CancelledRevived(Mutant):
    """Keeps the cancelled request; :meth:`revive` makes it current again."""

    cancelled: Any = None

    async def cancel(self, ctx: Any) -> None:
        if self.request is not None and self.request.active:
            self.cancelled = self.request
        await super().cancel(ctx)

    def revive(self) -> None:
        if self.request is None and self.cancelled is not None:
            self.request, self.cancelled = self.cancelled, None


@mutant(
    "H70a",
    how="a cancel leaves the Finish ID valid",
    invariant="finish_only_with_returned_id",
)
class CancelKeepsFinishId(_CancelledRevived):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        self.revive()
        return await super().tool_finish(*args, **kwargs)


@mutant(
    "H70c",
    how="a GET after a cancel revives the cancelled request",
    invariant="reminder_only_while_request_waits",
)
class CancelKeepsRetrieval(_CancelledRevived):
    async def tool_get(self, *args: Any, **kwargs: Any) -> Any:
        self.revive()
        return await super().tool_get(*args, **kwargs)


@mutant(
    "H70b",
    how="the reminder of a cancelled request still comes",
    invariant="reminder_only_while_request_waits",
)
class CancelKeepsReminder(Mutant):
    kept: Any = None

    async def cancel(self, ctx: Any) -> None:
        if self.request is not None and self.request.active:
            self.kept = self.request
        await super().cancel(ctx)

    def check_reminder(self, ctx: Any) -> None:
        if self.request is None and self.kept is not None:
            self.request = self.kept
            try:
                super().check_reminder(ctx)
            finally:
                self.request = None
            return
        super().check_reminder(ctx)


@mutant(
    "H73",
    how="a reservation that is already gone is reported as a failed removal",
    unreachable="the explorer's writer never deletes its reservation",
)
class MissingReservationReported(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        owned = request is not None and request.active and request.reservation_owned
        if owned and request is not None and not os.path.lexists(request.dossier):
            ctx.ui.notify(f"Could not remove {request.dossier}: it does not exist.", "error")
        await super().cancel(ctx)


@mutant(
    "H77e",
    how="a new session is blocked from the request on, before the template is retrieved",
    invariant="user_operation_blocked_while_protected",
)
class ProtectedFromRequest(Mutant):
    def protected(self) -> bool:
        request = self.request
        return super().protected() or (request is not None and request.active)


@mutant(
    "H66",
    how="the Finished widget is not cleared by the next ordinary input",
    unreachable="no invariant reads the widget after the switch",
)
class FinishedWidgetStays(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        self.finished_widget = False
        return super().on_input(event, ctx)


@mutant(
    "H138",
    how="an aborted run cancels the handoff",
    invariant="user_operation_blocked_while_protected",
)
class AbortCancels(Mutant):
    def on_settled(self, event: Any, ctx: Any) -> None:
        super().on_settled(event, ctx)
        request = self.request
        if event.aborted and request is not None and request.active:
            if request.reservation_owned and os.path.isfile(request.dossier):
                os.remove(request.dossier)
            self.request = None
            self.show(ctx, None)


@mutant(
    "H71b",
    how="a cancel after the accepted Finish keeps the dossier when deleteHandoffAfterReading is off",
    unreachable="the blitz explorer cancels no submitted request before its switch",
)
class CancelAfterFinishKeepsDossier(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None and request.submitted and not self.settings.delete_handoff_after_reading:
            request.reservation_owned = False
        await super().cancel(ctx)


_WIRING = importlib.import_module("pi_continuity_harness.reference.blitz.wiring")
_NO_REMOVE_FAULT = "the explorer makes no removal of the reservation fail"


@mutant(
    "H75",
    how="a reservation that cannot be removed is announced as removed (a false success)",
    unreachable=_NO_REMOVE_FAULT,
)
class CancelFalseSuccess(Mutant):
    async def cancel(self, ctx: Any) -> None:
        def remove(path: str) -> str | None:
            remove_exact(path)
            return None

        with patched(_WIRING, "remove_exact", remove):
            await super().cancel(ctx)


@mutant("H73", how="a failed removal at cancel is reported without the path", unreachable=_NO_REMOVE_FAULT)
class CancelErrorWithoutPath(Mutant):
    async def cancel(self, ctx: Any) -> None:
        def remove(path: str) -> str | None:
            return None if remove_exact(path) is None else "the reservation could not be removed"

        with patched(_WIRING, "remove_exact", remove):
            await super().cancel(ctx)


@mutant(
    "H65",
    how="a failed transfer leaves the widget as it was (Session Handoff Finished)",
    unreachable="the explorer never removes a session file, so no transfer fails",
)
class FailureKeepsWidget(Mutant):
    def fail(self, ctx: Any, request: Any, reason: str, *, keep: bool = False) -> None:
        super().fail(with_ui(ctx, set_widget=lambda *_a, **_k: None), request, reason, keep=keep)


@mutant(
    "H76b",
    how="a cancel hands the captured prompts back to the model, wrapped in their boundaries",
    unreachable="captured_prompts_kept_in_order accepts captured prompts delivered after the capture",
)
class CancelReplaysPrompts(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        await super().cancel(ctx)
        capture = request.capture if request is not None else None
        if self.request is None and capture is not None and capture.prompts:
            self.pi.send_user_message(format_deferred(capture.prompts))


# ---------------------------------------------------------------- a third independent round
@mutant(
    "H71a",
    how="a cancel removes the owned reservation at once, then waits for the turn (whose write recreates it)",
    unreachable="the explorer cancels only between operations, when the source is idle",
)
class CancelRemovesBeforeSettlement(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None and request.active and request.reservation_owned and not ctx.is_idle():
            error = remove_exact(request.dossier)
            request.reservation_owned = error is not None
        await super().cancel(ctx)


@mutant(
    "H77a",
    how="with deferral from Request, nothing is protected until the template was retrieved",
    invariant="user_operation_blocked_while_protected",
)
class RequestModeWaitUnprotected(Mutant):
    def protected(self) -> bool:
        request = self.request
        if request is not None and request.active and request.phase == "requested" and not self.cleaning:
            return False
        return super().protected()
