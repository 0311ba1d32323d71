"""The one active handoff request and its phases (process-local, never persisted).

``requested`` → (successful GET) ``writing`` → (valid Finish) ``finished`` → (private
command invoked ``new_session``) ``cutover``. A cancel, a failure, a reload or a session
replacement ends the request; a late callback holding a request that is no longer
``BlitzHandoff.request`` (identity) belongs to a request that is gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pi_continuity_harness.reference.blitz.recovery import CaptureWindow
from pi_continuity_harness.reference.blitz.templates import ResolvedTemplate

__all__ = ["BlitzHandoffError", "BlitzRequest", "FinishCheck", "Phase", "Route", "check_finish"]


class BlitzHandoffError(RuntimeError):
    """A start that cannot proceed; the message is shown to the user (or the model)."""


Phase = Literal["requested", "writing", "finished", "cutover"]
Route = Literal["command", "model", "automatic"]


@dataclass
class BlitzRequest:
    route: Route
    requested_at: float
    defer_mode: Literal["request", "writing"]
    call_text: str
    handoff_template: ResolvedTemplate
    dossier: str
    source_session_id: str
    source_session_file: str
    phase: Phase = "requested"
    call_dispatched: bool = False
    reservation_owned: bool = False
    finish_id: str | None = None
    retrieved_at: float | None = None
    reminder_started_at: float | None = None
    reminded: bool = False
    escalated: bool = False
    capture: CaptureWindow | None = None
    cutover_token: str | None = None

    @property
    def active(self) -> bool:
        return self.phase in ("requested", "writing", "finished")

    @property
    def submitted(self) -> bool:
        return self.phase in ("finished", "cutover")

    def reminder_due(self, now: float, delay_seconds: int) -> bool:
        return (
            not self.reminded
            and not self.submitted
            and self.reminder_started_at is not None
            and now - self.reminder_started_at >= delay_seconds
        )


@dataclass(frozen=True)
class FinishCheck:
    ok: bool
    message: str


def check_finish(request: BlitzRequest | None, finish_id: object) -> FinishCheck:
    """Finish is accepted once, for the active request, with its exact returned ID."""
    if request is None or not request.active:
        return FinishCheck(False, "Rejected: there is no active Session Handoff request.")
    if request.finish_id is None:
        return FinishCheck(
            False,
            "Rejected: the handoff template was not retrieved. Call session_handoff_get_template({}) first.",
        )
    if request.submitted:
        return FinishCheck(False, "Rejected: this Session Handoff was already finished (duplicate Finish).")
    if not isinstance(finish_id, str) or finish_id != request.finish_id:
        return FinishCheck(
            False, "Rejected: stale or unknown Finish ID. Use the exact Finish ID of the current template."
        )
    return FinishCheck(True, "accepted")
