"""Mutants of the rules that need an operation running while a command is held (branch
``blitz-concurrent``): a start or a late template request during a held cancellation cleanup,
``/sh cancel`` once the native cutover is invoked, the sender's late settlement after the
receiver's bootstrap turn, and the defer mode of a request (reference: Protection, Cutover,
Transfer sequences 4 and 7)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant
from pi_continuity_harness.reference.blitz.state import BlitzRequest, Route


@mutant(
    "H79",
    how="a start during a running cancellation cleanup is accepted",
    unreachable="the blitz explorer starts nothing while a cancel waits for the turn to settle",
)
class StartDuringCleanup(Mutant):
    def start_request(self, ctx: object, route: Route) -> BlitzRequest:
        cleaning, self.cleaning = self.cleaning, False
        try:
            return super().start_request(ctx, route)  # type: ignore[arg-type]
        finally:
            self.cleaning = cleaning


@mutant(
    "H63",
    how="/sh cancel during the native switch cancels the request and removes the dossier",
    unreachable="the blitz explorer runs no command while the native switch is in progress",
)
class CancelDuringCutover(Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None and request.phase == "cutover":
            request.phase = "finished"  # the invoked cutover is treated as still cancellable
        await super().cancel(ctx)
