"""A scenario's budget: how much a run may do before it is stopped as a runaway.

An implementation that never lets Pi go idle (one that sends every continuation twice keeps
compacting and continuing forever) must fail its scenario, not hang the suite. Each target
stops a scenario that exceeds its budget, names the budget and says what was still running:

* the simulator counts **host operations** (every trace record and every step of its event
  loop, so a loop that writes records and one that only awaits are both caught) and **virtual
  seconds** (its clock: retries, latencies, held calls); both are deterministic, so a replay
  stops at the very same record;
* the real-Pi target has a **wall-clock** limit per scenario.

The defaults are generous: the longest explorer cases (40 operations with faults and a
liveness phase) use about 2,200 host operations and a few virtual seconds; a suite scenario a
few hundred. A scenario sets its own (``budget:``), and ``run``, ``simulate``, ``replay``,
``explore`` and ``mutants`` override it (``--budget-ops``, ``--budget-virtual-seconds``,
``--budget-wall-seconds``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pi_continuity_harness.scenario.numbers import Float, Int

__all__ = [
    "DEFAULT_OPERATIONS",
    "DEFAULT_VIRTUAL_SECONDS",
    "DEFAULT_WALL_SECONDS",
    "Budget",
    "BudgetOverride",
]

#: Host operations (trace records plus event-loop steps) a simulated scenario may use.
DEFAULT_OPERATIONS = 50_000
#: Virtual seconds a simulated scenario may last (one virtual day).
DEFAULT_VIRTUAL_SECONDS = 86_400.0
#: Wall-clock seconds a real-Pi scenario may last.
DEFAULT_WALL_SECONDS = 600.0


class Budget(BaseModel):
    """What one scenario may use (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operations: Int = Field(
        default=DEFAULT_OPERATIONS,
        ge=1,
        description="simulator: host operations (trace records and event-loop steps)",
    )
    virtual_seconds: Float = Field(
        default=DEFAULT_VIRTUAL_SECONDS, gt=0, description="simulator: seconds of virtual time"
    )
    wall_seconds: Float = Field(
        default=DEFAULT_WALL_SECONDS, gt=0, description="real Pi: wall-clock seconds per scenario"
    )


class BudgetOverride(BaseModel):
    """Command-line overrides of a scenario's budget (None: keep the scenario's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    operations: int | None = Field(default=None, ge=1)
    #: Finite, as a scenario's (whose JSON data cannot hold Infinity): no "no limit" by the back door.
    virtual_seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    wall_seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    def apply(self, budget: Budget) -> Budget:
        changes = {k: v for k, v in self.model_dump().items() if v is not None}
        return budget.model_copy(update=changes) if changes else budget

    @property
    def empty(self) -> bool:
        return all(v is None for v in self.model_dump().values())

    def cli_args(self, *, wall: bool = True) -> list[str]:
        """The same overrides as command-line options (``--budget-ops N`` ...)."""
        out: list[str] = []
        for flag, value in (
            ("--budget-ops", self.operations),
            ("--budget-virtual-seconds", self.virtual_seconds),
            ("--budget-wall-seconds", self.wall_seconds if wall else None),
        ):
            if value is not None:
                out += [flag, str(value)]
        return out
