"""What one system plugs into the explorer: its cases, its invariants, its liveness, its shrinking.

The engine (:mod:`.runner`, :mod:`.shrink`, :mod:`.engine`, :mod:`.regression`) knows nothing
of any system. A :class:`ExplorerPlugin` declares, for one system:

* how a seed expands into a :class:`Case` (a machine, fault-phase operations, the model's
  replies and faults, all plain data whose simplest value is "no fault");
* the :class:`InvariantSpec` of every invariant (name, what it says, the rule ids of
  the rule catalogue it checks, ``pi_continuity_harness.rules``) and a :class:`Checker` that checks them on a running
  simulation, after every effect and operation or at the end of the run;
* an optional liveness phase (:class:`LivenessPhase`): once the faults heal, the system must
  make progress;
* how to shrink a failing case (:data:`ShrinkStep` s, run in order by :mod:`.shrink`);
* what its seeds cost, summed over a run (:meth:`ExplorerPlugin.summarise`).

The checker is also the system's *run checker* (``targets.sim.RunChecker``): the simulated
target replays a regression the explorer wrote with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, Self, TypeVar

from pi_continuity_harness.explore.observed import ObservedInvariant
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.model_script import Reply, RequestKind, SynthesisReply
from pi_continuity_harness.scenario.operations import Operation
from pi_continuity_harness.simulator.simulation import Simulation

__all__ = [
    "LIVENESS",
    "LOAD_FAILURE",
    "WITHIN_BUDGET",
    "Attempt",
    "Case",
    "CaseT",
    "Checker",
    "DropEach",
    "ExplorerPlugin",
    "InvariantSpec",
    "LivenessPhase",
    "Reduce",
    "ShrinkStep",
    "Simplify",
    "Violation",
]

#: The violation a run records when Pi refuses to start with the implementation (it did not load).
LOAD_FAILURE = "implementation_loads"
#: The pseudo-invariant of a run stopped by its budget (``scenario/budget.py``): a runaway.
WITHIN_BUDGET = "runs_within_budget"
#: The name of the liveness verdict (not an invariant of the fault phase).
LIVENESS = "liveness"


@dataclass(frozen=True)
class Violation:
    """One broken invariant: which, what was seen, and where in the run."""

    invariant: str
    message: str
    operation: int | None = None
    seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "message": self.message,
            "operation": self.operation,
            "seq": self.seq,
        }

    def __str__(self) -> str:
        where = f" (operation {self.operation})" if self.operation is not None else ""
        return f"{self.invariant}{where}: {self.message}"


@dataclass(frozen=True)
class InvariantSpec:
    """An invariant as a plug-in declares it: its name, what it states, and the rules it checks."""

    name: str
    doc: str
    #: Ids of the rules it checks, from the system's rule catalogue (``pi_continuity_harness.rules``:
    #: ``P67``, ``H29a``); ``pi-continuity-harness rules`` counts the invariant as their check.
    rules: tuple[str, ...] = ()


class Case(Protocol):
    """One seed's concrete run, as plain data (it crosses process boundaries)."""

    @property
    def seed(self) -> int: ...

    @property
    def name(self) -> str:
        """The name of the scenario it becomes (and of the files a failure is written as)."""

    @property
    def operations(self) -> tuple[Operation, ...]:
        """The fault phase."""

    def scenario(self, *, operations: tuple[Operation, ...] | None = None) -> Scenario:
        """The scenario a run starts from (its operations only for the record)."""

    def without(self, **changes: Any) -> Self:
        """A copy with some fields replaced (shrinking builds candidates with it)."""

    def describe(self) -> str:
        """The seed's options in one line (printed when it runs, VOPR style)."""

    def options_json(self) -> dict[str, Any]: ...


CaseT = TypeVar("CaseT", bound=Case)


class Checker(Protocol):
    """The invariants of one system, watching one simulation (created before Pi starts)."""

    violations: list[Violation]
    harness_errors: list[str]

    @property
    def ok(self) -> bool:
        """No violation and no checker failure so far."""

    @property
    def invariants(self) -> frozenset[str]: ...

    def before_operation(self, op: Operation) -> None: ...

    def after_operation(self) -> None: ...

    def finish(self) -> None:
        """The run is over (Pi still up): check what only the whole run can show."""

    def check_liveness(self, first_healed_operation: int) -> Violation | None:
        """The liveness verdict once faults healed before that operation (recorded if violated)."""

    def found(self) -> list[tuple[str, str]]: ...

    def errors(self) -> list[str]: ...

    def liveness(self, first_healed_operation: int) -> str | None: ...

    def metrics(self) -> dict[str, Any]:
        """What the run cost (plain data; summed over seeds by :meth:`ExplorerPlugin.summarise`)."""


@dataclass(frozen=True)
class LivenessPhase:
    """The operations run once every fault has healed, and the replies they are answered with."""

    operations: tuple[Operation, ...]
    #: Per request kind, the replies that replace every scripted reply not used yet.
    replies: dict[RequestKind, tuple[Reply | SynthesisReply, ...]] = field(default_factory=dict)
    #: Whether progress can be demanded at all (else the reason, reported as not applicable).
    applies: bool = True
    why_not: str = ""


@dataclass(frozen=True)
class Reduce:
    """Delta debugging (ddmin) over one sequence field of the case."""

    field: str


@dataclass(frozen=True)
class Simplify:
    """Replace each element of a sequence field by its simplest value, one at a time, then drop
    the simplest values at its end."""

    field: str
    simplest: object


@dataclass(frozen=True)
class DropEach:
    """Delete the entries of a sequence field one at a time, last first."""

    field: str


@dataclass(frozen=True)
class Attempt:
    """One candidate built from the current case (None: nothing to try)."""

    candidate: Callable[[Any], Any]


ShrinkStep = Reduce | Simplify | DropEach | Attempt


class ExplorerPlugin(ABC, Generic[CaseT]):
    """One system's part of the explorer (see the module docstring)."""

    #: The system's name (``scenario.implementations.System.name``).
    system: str
    #: Tags of the regression features written for a failure.
    feature_tags: tuple[str, ...]
    #: The shrinking plan, one round of it run until nothing shrinks.
    shrink_plan: tuple[ShrinkStep, ...]
    #: Why the system's cases are not played on both targets by differential exploration
    #: (``explore/differential/runner.py``), or None when they are: a case whose outcome
    #: depends on how much wall-clock time passes cannot agree with the simulator's virtual
    #: clock without a tolerance, and there is none.
    not_compared_on_both_targets: str | None = None

    @property
    @abstractmethod
    def invariants(self) -> tuple[InvariantSpec, ...]:
        """Every invariant, in the order they are reported (liveness included, if any)."""

    @abstractmethod
    def case(self, seed: int, steps: int) -> CaseT:
        """The case ``seed`` expands to, with ``steps`` fault-phase operations (deterministic)."""

    @abstractmethod
    def checker(self, simulation: Simulation) -> Checker:
        """The system's checker, attached to ``simulation`` before Pi starts."""

    def liveness_phase(self, simulation: Simulation, case: CaseT) -> LivenessPhase | None:
        """The phase run after the faults heal (None: this system has none)."""
        return None

    def cut(self, case: CaseT, done: int) -> CaseT:
        """``case`` without what never ran after its ``done``-th fault-phase operation."""
        return case.without(operations=case.operations[:done])

    @abstractmethod
    def size(self, case: CaseT) -> int:
        """How big a case is (shrinking stops when a round does not reduce it)."""

    def summarise(self, metrics: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """What the seeds' :meth:`Checker.metrics` add up to (empty: nothing to add)."""
        return {}

    def invariant(self, name: str) -> InvariantSpec | None:
        return next((spec for spec in self.invariants if spec.name == name), None)

    def observed_invariants(self) -> tuple[ObservedInvariant, ...]:
        """The invariants a target that shows only observations can check (real Pi, for a
        TypeScript implementation: ``explore.observed``); none by default."""
        return ()

    def observed_invariant(self, name: str) -> ObservedInvariant | None:
        return next((spec for spec in self.observed_invariants() if spec.name == name), None)

    def describe(self) -> Iterable[InvariantSpec]:
        """The invariants, for ``explore --list-invariants``."""
        return self.invariants
