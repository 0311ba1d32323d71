"""Mutants of deferral, the reminder, the emergency and automatic initiation (reference: Deferral,
reminder and emergency)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact


@mutant("H27c", how="the recovery snapshot reverses the prompts", invariant="captured_prompts_kept_in_order")
class DeferredPromptsReversed(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.reverse()
            request.capture.flush()
        return result


@mutant("H27b", how="captured prompts are dropped", invariant="captured_prompts_kept_in_order")
class DeferredPromptsDropped(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.clear()
            if request.capture.path:
                remove_exact(request.capture.path)
        return result


@mutant("H49a", how="the reminder repeats at every boundary", invariant="one_reminder_per_request")
class ReminderRepeats(Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        super().check_reminder(ctx)
        if request is not None and request.reminded and not request.escalated and not request.submitted:
            request.reminded = False


@mutant("H50", how="no emergency instruction", invariant="emergency_once_at_90_percent")
class NoEmergency(Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        if self.request is not None:
            self.request.escalated = True
        super().on_turn_end(event, ctx)


@mutant("H58", how="the automatic budget never runs out", invariant="automatic_initiation_budget")
class AutomaticBudgetUnlimited(Mutant):
    def spend_budget(self, attempts: int) -> None:
        super().spend_budget(0)


@mutant("H54", how="automatic initiation is on by default", invariant="automatic_initiation_budget")
class AutomaticOnByDefault(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not self.settings.automatic_session_handoff:
            self.settings = self.settings.model_copy(update={"automatic_session_handoff": True})
