"""Mutants of the transfer sequence (reference: Transfer sequence 1-7): starts, the Call, GET,
Finish, the cutover and the receiver."""

from __future__ import annotations

import os
import uuid
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, with_new_session
from pi_continuity_harness.reference.blitz.state import BlitzRequest, Route


@mutant("H29a", how="accepts any ID", invariant="finish_only_with_returned_id")
class FinishAcceptsForeignId(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.finish_id is not None and not request.submitted:
            params = {**params, "id": request.finish_id}
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant("H29b", how="a second Finish is accepted again", invariant="finish_only_with_returned_id")
class FinishAcceptedTwice(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.phase == "finished" and params.get("id") == request.finish_id:
            request.phase = "writing"
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant("H13", how="a second start replaces the first", invariant="one_active_request")
class SecondRequestReplacesFirst(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        self.request = None
        return super().start_request(ctx, route)


@mutant("H20", how="each GET issues a new Finish ID", invariant="one_active_request")
class GetIssuesNewIds(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.finish_id is not None:
            old = request.finish_id
            request.finish_id = str(uuid.uuid4())
            text = result.content[0]["text"].replace(old, request.finish_id)
            result = type(result)(
                content=[{"type": "text", "text": text}], details=result.details, is_error=result.is_error
            )
        return result


@mutant("H44a", how="the dossier is deleted at cutover", invariant="dossier_kept_until_receiver_turn")
class DossierDeletedAtCutover(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        dossier = request.dossier if request is not None else None
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            if dossier and os.path.exists(dossier):
                os.remove(dossier)
            return await original(**options)

        await super().cutover(token, with_new_session(ctx, new_session))


@mutant("H38", how="the new session has no parent link", invariant="receiver_link_follows_chain_limit")
class NoParentLink(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            return await original(**{**options, "parent_session": None})

        await super().cutover(token, with_new_session(ctx, new_session))


@mutant("H40b", how="the receiver is always told to delete", invariant="dossier_retained_when_deletion_off")
class DeletionSettingIgnored(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.settings = self.settings.model_copy(update={"delete_handoff_after_reading": True})


@mutant(
    "H41b", "H84b", how="recovery is deleted right after sending", invariant="captured_prompts_kept_in_order"
)
class RecoveryDeletedBeforeCompletion(Mutant):
    def on_message_end(self, event: Any) -> None:
        super().on_message_end(event)
        for tracker in list(self.trackers):
            if tracker.delivered and not tracker.decided:
                tracker.decided = True
                tracker.on_completed(_NullCtx())


class _NullCtx:
    class ui:  # noqa: N801
        @staticmethod
        def notify(*_: Any) -> None:
            return None

        @staticmethod
        def set_widget(*_: Any, **__: Any) -> None:
            return None


@mutant("H16", how="the Call is sent again after GET", invariant="one_active_request")
class CallRepeatedAfterEarlyGet(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.route == "model":
            request.call_dispatched = False
        return result
