"""Mutants of the widget, cancellation and protection (reference: Status, cancellation and recovery)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact


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
