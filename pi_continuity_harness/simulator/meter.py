"""The simulated host's budget meter: stops a runaway scenario deterministically.

A scenario's :class:`~pi_continuity_harness.scenario.budget.Budget` bounds the host
operations it may use (every trace record and every event-loop step) and its virtual time.
The meter is charged by the trace (before each record) and by the event loop (before each
step, and before the clock jumps to the next timer). When a budget runs out it raises
:class:`BudgetExceeded`, a ``BaseException`` so that an extension's ``except Exception`` cannot
swallow it; the simulation then stops the host and reports :class:`BudgetExceededError` with the
budget and what was still running. Both counts are deterministic: a replay stops at the same
record.
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.scenario.budget import Budget

__all__ = ["BudgetExceeded", "BudgetExceededError", "Meter"]


class BudgetExceeded(BaseException):
    """A budget ran out inside the simulated host (unwinds it; never caught by extensions)."""

    def __init__(self, budget: str, limit: float, used: float) -> None:
        super().__init__(f"{budget} budget exceeded")
        self.budget = budget
        self.limit = limit
        self.used = used

    def describe(self) -> str:
        if self.budget == "operations":
            return (
                f"the budget of {self.limit:,.0f} host operations (trace records and event-loop steps) "
                "ran out"
            )
        return (
            f"the budget of {self.limit:g} virtual seconds ran out "
            f"(the next timer was due at {self.used:g} s)"
        )


class BudgetExceededError(SimulatorError, RuntimeError):
    """A simulated scenario exceeded its budget; ``report`` names it and what was still running."""

    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


@dataclass
class Meter:
    """Counts what a simulation uses against its budget."""

    budget: Budget
    operations: int = 0
    #: The first budget that ran out (every later charge raises it again).
    exceeded: BudgetExceeded | None = None
    #: While the host is stopped after a budget ran out, nothing is charged.
    suspended: bool = False

    def charge(self) -> None:
        """One host operation (a trace record or an event-loop step)."""
        if self.suspended:
            return
        if self.exceeded is not None:
            raise self._again(self.exceeded)
        self.operations += 1
        if self.operations > self.budget.operations:
            self.exceeded = BudgetExceeded("operations", self.budget.operations, self.operations)
            raise self._again(self.exceeded)

    def advance_to(self, seconds: float) -> None:
        """The virtual clock is about to jump to ``seconds``."""
        if self.suspended:
            return
        if self.exceeded is not None:
            raise self._again(self.exceeded)
        if seconds > self.budget.virtual_seconds:
            self.exceeded = BudgetExceeded("virtual_seconds", self.budget.virtual_seconds, seconds)
            raise self._again(self.exceeded)

    @staticmethod
    def _again(exceeded: BudgetExceeded) -> BudgetExceeded:
        return BudgetExceeded(exceeded.budget, exceeded.limit, exceeded.used)
