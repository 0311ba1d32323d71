"""Observing a delivered turn, and the duties a sender hands to the receiving instance.

:class:`TurnTracker` follows one message the extension sent (the bootstrap prompt, or a
recovery file's prompts): it counts as *delivered* only when the user message with that
exact text entered the transcript (``message_end``; a void or rejected send is not a
delivery), and as *completed* only when that run then settles neither aborted nor ending
in an error. The first settlement after delivery decides; a later success cannot heal a
failure. Nothing inspects what the model did (no stop-reason or tool-error veto beyond
error/abort, no ingestion check).

:class:`ReceiverDuty` crosses the session replacement. Pi re-runs the factory for the new
session but does not re-evaluate the module, so a module-level registry (keyed by the
source session file, unique per machine) is how the old instance tells the new one what
to watch for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReceiverDuty", "TurnTracker", "claim_duty", "register_duty"]


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


@dataclass
class TurnTracker:
    """One sent message's fate: delivered? completed?"""

    text: str
    on_completed: Callable[[Any], None]
    on_failed: Callable[[Any, str], None]
    delivered: bool = False
    decided: bool = False
    last_stop: str | None = None

    def on_message_end(self, message: dict[str, Any]) -> None:
        if self.decided:
            return
        role = message.get("role")
        if role == "user" and not self.delivered and _text_of(message) == self.text:
            self.delivered = True
        elif role == "assistant" and self.delivered:
            self.last_stop = str(message.get("stopReason"))

    def on_settled(self, aborted: bool, ctx: Any) -> None:
        """Decide at the first settlement after delivery; callbacks get the settling ``ctx``."""
        if self.decided or not self.delivered:
            return
        self.decided = True
        if aborted or self.last_stop == "aborted":
            self.on_failed(ctx, "the turn was aborted")
        elif self.last_stop == "error":
            self.on_failed(ctx, "the turn ended with an error")
        else:
            self.on_completed(ctx)


@dataclass
class ReceiverDuty:
    """What the receiving instance must do about the bootstrap turn."""

    source_session_file: str
    bootstrap: str
    recovery_file: str | None
    wait_time: str
    retrieved_at: float
    notes: list[str] = field(default_factory=list)


_DUTIES: dict[str, ReceiverDuty] = {}


def register_duty(duty: ReceiverDuty) -> None:
    _DUTIES[duty.source_session_file] = duty


def claim_duty(previous_session_file: str | None) -> ReceiverDuty | None:
    if not previous_session_file:
        return None
    return _DUTIES.pop(previous_session_file, None)
