"""The status widget above the editor: texts and times, rendered from recorded moments.

Rendering never advances a recorded time: ``Wait Time`` runs from the request to the
successful GET, ``Handoff Time`` from the successful GET to the successful recipient turn
(or now, while it runs). Lines are short plain text, so any width and theme can show them.
"""

from __future__ import annotations

from pi_continuity_harness.reference.blitz.state import BlitzRequest

__all__ = ["cancelled_lines", "failed_lines", "finished_lines", "format_duration", "request_lines"]


def format_duration(seconds: float) -> str:
    total = max(0, int(seconds))
    minutes, secs = divmod(total, 60)
    return f"{minutes}:{secs:02d}"


def _detail(parts: list[str]) -> str:
    return " · ".join(parts)


def request_lines(request: BlitzRequest, now: float) -> list[str]:
    deferred = [f"Inputs deferred ({request.capture.count})"] if request.capture is not None else []
    if request.phase == "requested":
        return [
            "Waiting for Session Handoff",
            _detail([f"Wait Time {format_duration(now - request.requested_at)}", *deferred, "/sh cancel"]),
        ]
    started = request.retrieved_at if request.retrieved_at is not None else now
    wait = format_duration(started - request.requested_at)
    if request.phase == "writing":
        return [
            "Writing Session Handoff",
            _detail(
                [
                    f"Wait Time {wait}",
                    f"Handoff Time {format_duration(now - started)}",
                    *deferred,
                    "/sh cancel",
                ]
            ),
        ]
    return finished_lines(wait, format_duration(now - started))


def finished_lines(wait: str, handoff: str) -> list[str]:
    return ["Session Handoff Finished", _detail([f"Wait Time {wait}", f"Handoff Time {handoff}"])]


def failed_lines(reason: str) -> list[str]:
    return ["Session Handoff Failed", reason]


def cancelled_lines() -> list[str]:
    return ["Session Handoff Cancelled"]
