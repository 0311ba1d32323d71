"""Mutants of the rules that need an operation running while a command is held (branch
``blitz-concurrent``): a start or a late template request during a held cancellation cleanup,
``/sh cancel`` once the native cutover is invoked, the sender's late settlement after the
receiver's bootstrap turn, the defer mode of a request, a tree navigation during a held
cancellation cleanup, and a start while the /sh settings menu is open (reference: Protection,
Cutover, Transfer sequences 4 and 7, Settings: no overlap)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, with_new_session
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
    "H87c",
    how="a start while /sh settings is open is accepted",
    unreachable="the blitz explorer starts nothing while a settings dialog is open",
)
class StartDuringSettings(Mutant):
    def start_request(self, ctx: object, route: Route) -> BlitzRequest:
        in_settings, self.in_settings = self.in_settings, False
        try:
            return super().start_request(ctx, route)  # type: ignore[arg-type]
        finally:
            self.in_settings = in_settings


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


@mutant(
    "H43",
    how="the sender's late settlement, after the receiver's bootstrap turn, reports the transfer completed",
    unreachable="the blitz explorer scripts no failing receiver turn",
)
class SenderSettlementOverwritesOutcome(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        async def new_session(parent_session: Any = None, with_session: Any = None) -> Any:
            receiver: dict[str, Any] = {}

            async def kept(new_ctx: Any) -> None:
                receiver["ctx"] = new_ctx
                if with_session is not None:
                    await with_session(new_ctx)

            result = await ctx.new_session(parent_session=parent_session, with_session=kept)
            if not result.get("cancelled") and "ctx" in receiver:
                # the sender settles after the receiver's turn and claims the outcome
                receiver["ctx"].ui.notify("Session Handoff completed.", "info")
            return result

        await super().cutover(token, with_new_session(ctx, new_session))


@mutant(
    "H24",
    how="the defer mode is read once per runtime: a mode saved between requests misses the next request",
    unreachable="the blitz explorer edits no settings between requests",
)
class DeferModeFixedPerRuntime(Mutant):
    loaded_mode: Any = None

    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.loaded_mode = self.settings.defer_prompts_from

    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        mode = self.loaded_mode
        if mode is not None and mode != request.defer_mode:
            request.defer_mode = mode
            now = request.requested_at
            request.capture = self.new_capture(request.source_session_id, now) if mode == "request" else None
        return request


@mutant(
    "H77b",
    how="a fork is no longer blocked while a handoff is active",
    invariant="user_operation_blocked_while_protected",
)
class ForkUnguarded(Mutant):
    def guard(self, ctx: Any, what: str) -> Any:
        if what == "Forking":
            return None
        return super().guard(ctx, what)


@mutant(
    "H78",
    how="tree navigation during a running cancellation cleanup is no longer blocked",
    unreachable="the blitz explorer navigates no session tree",
)
class TreeUnguardedDuringCleanup(Mutant):
    def guard(self, ctx: Any, what: str) -> Any:
        if what == "Tree navigation":
            return None
        return super().guard(ctx, what)
