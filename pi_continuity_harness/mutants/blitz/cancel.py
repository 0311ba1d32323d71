"""Mutants of the widget, cancellation and protection (reference: Status, cancellation and recovery)."""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant
from pi_continuity_harness.reference.blitz import status
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact
from pi_continuity_harness.reference.blitz.paths import dossier_path


@mutant("H76a", how="cancel deletes the recovery file", invariant="captured_prompts_kept_in_order")
class CancelDeletesRecovery(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        await super().cancel(ctx)
        if request is not None and request.capture is not None and request.capture.path:
            remove_exact(request.capture.path)


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
