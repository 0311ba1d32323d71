"""Mutants of the fault and private paths (reference: Transfer sequence 4 and 6, Deferral,
Status, the public interface): a failed or aborted GET, the recovery file's replacement, the
private cutover bridge, the extension's reading of the dossier, its dialogs and its colours."""

from __future__ import annotations

import os
import uuid
from typing import Any

from pi_continuity_harness.api import ToolResult
from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, with_ui
from pi_continuity_harness.reference.blitz import status
from pi_continuity_harness.reference.blitz.paths import recovery_file_name
from pi_continuity_harness.reference.blitz.recovery import CaptureWindow, format_deferred

_NO_GET_FAULT = "the explorer neither aborts nor fails a GET while it executes"


def _failed_get(instance: Mutant, result: Any) -> bool:
    """The GET just returned an error for the active request, before any retrieval."""
    request = instance.request
    return bool(result.is_error) and request is not None and request.active and request.finish_id is None


@mutant(
    "H25a",
    how="a failed or aborted GET starts Writing capture",
    invariant="user_operation_blocked_while_protected",
)
class FailedGetStartsCapture(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if _failed_get(self, result) and request is not None and request.capture is None:
            request.capture = self.new_capture(request.source_session_id, self.now())
        return result


@mutant(
    "H25b", how="a failed or aborted GET still issues a live Finish ID", invariant="prompts_captured_when_due"
)
class FailedGetAuthorisesFinish(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if _failed_get(self, result) and request is not None:
            request.finish_id = str(uuid.uuid4())
            text = f"{result.content[0]['text']} Finish ID: {request.finish_id}"
            result = ToolResult(
                content=[{"type": "text", "text": text}], details=result.details, is_error=True
            )
        return result


@mutant("H25c", how="an aborted GET forgets the reservation it made", unreachable=_NO_GET_FAULT)
class AbortedReservationForgotten(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if signal is not None and signal.aborted and _failed_get(self, result) and request is not None:
            request.reservation_owned = False
        return result


@mutant(
    "H35",
    how="Finish reads the dossier to check that it is not empty",
    unreachable="the explorer's invariants do not read the implementation's file reads",
)
class FinishReadsDossier(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.finish_id is not None and os.path.isfile(request.dossier):
            with open(request.dossier, encoding="utf-8") as handle:
                if not handle.read().strip():
                    return ToolResult(
                        content=[{"type": "text", "text": "Rejected: the dossier is empty."}], is_error=True
                    )
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant(
    "H33c",
    how="the cutover bridge accepts any token once Finish was accepted",
    unreachable="the explorer runs no private /sh __cutover command",
)
class CutoverBridgeUncorrelated(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if request is not None and request.phase == "finished":
            request.cutover_token = token or "any"
            token = request.cutover_token
        await super().cutover(token, ctx)


class _InPlaceCapture(CaptureWindow):
    """The snapshot written over the recovery file in place (truncate, then write)."""

    def flush(self) -> None:
        if not self.prompts:
            return
        if self.path is None:
            self.path = os.path.join(self.directory, recovery_file_name(self.started_at, self.session_id))
        try:
            os.makedirs(self.directory, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(format_deferred(self.prompts))
            self.last_error = None
        except OSError as error:
            self.last_error = f"{self.path}: {error.strerror or error}"


@mutant(
    "H48",
    how="the recovery file is rewritten in place (truncated, then written)",
    unreachable="the explorer crashes at operation boundaries, never inside a file replacement",
)
class RecoveryWrittenInPlace(Mutant):
    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        return _InPlaceCapture(self.recovery_dir(), session_id, now)


@mutant(
    "H139",
    how="/sh asks for setting values in a multi-line editor overlay instead of Pi's input dialog",
    unreachable=(
        "the explorer answers /sh settings only with invalid values, refused whichever dialog asks; "
        "no invariant reads a dialog's kind"
    ),
)
class SettingsValueInEditor(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        editor = ctx.ui.editor

        async def input_as_editor(title: str, placeholder: str | None = None, **_options: Any) -> str | None:
            answer: str | None = await editor(title, placeholder)
            return answer

        await super().run(args, with_ui(ctx, input=input_as_editor))


@mutant(
    "H64c",
    how="the Waiting line is drawn without a colour",
    unreachable="the explorer reads no widget colours",
)
class WaitingLineUncoloured(Mutant):
    def refresh(self, ctx: Any) -> None:
        if self.request is not None and self.request.active:
            self.show(ctx, status.request_lines(self.request, self.now()))


@mutant(
    "H48",
    how="a recovery file that cannot be written is not reported",
    unreachable="the explorer makes no write in the recovery directory fail",
)
class RecoveryWriteErrorSilent(Mutant):
    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        window = super().new_capture(session_id, now)
        flush = window.flush

        def silent() -> None:
            flush()
            window.last_error = None

        window.flush = silent  # type: ignore[method-assign]
        return window
