"""Invariants read from what a target observes, for exploration on real Pi.

The simulator's checkers (``continuity.invariants``, ``blitz.invariants``) watch the trace: every
effect as it happens, the implementation's own file operations and API calls, the live host state.
A real Pi process shows less: after each operation, the session entries, the events an RPC client
and an extension see, the model requests, the UI traffic and the files on disk
(:class:`~pi_continuity_harness.targets.Observation`). An :class:`ObservedInvariant` checks one
rule from those observations only and declares which it needs (:data:`OBSERVATIONS`); exploring a
TypeScript implementation on real Pi (``explore --target pi --extension ext.ts``) checks, after
every operation, every invariant whose needs the target's observations meet.

Each system's plug-in offers its observed invariants (``ExplorerPlugin.observed_invariants``);
they carry the name of the trace invariant whose rule they check where there is one, restricted to
what can be observed, and the same rule ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.operations import Operation

__all__ = [
    "OBSERVATIONS",
    "OBSERVED_CHECKERS_GROUP",
    "REAL_PI_OBSERVATIONS",
    "ObservedInvariant",
    "ObservedRun",
    "check_observed",
]

#: Entry-point group of each system's observed invariants (a callable returning them), which the
#: real-Pi target's ``run_checked`` loads by the system's name.
OBSERVED_CHECKERS_GROUP = "pi_continuity_harness.observed_checkers"

#: What a target may observe, by name.
OBSERVATIONS: dict[str, str] = {
    "entries": "the session entries (get_entries, the session files)",
    "files": "the files on disk after each operation",
    "requests": "the model requests, whole",
    "extension_events": "the events only extensions see, in order (the observer extension)",
    "session_events": "the session events an RPC client sees, in order",
    "ui": "notifications, statuses, widgets and dialogs",
    "operations": "each operation and what the RPC client learnt from it",
    "trace": "every effect as it happens (the implementation's file operations and API calls, "
    "the host's live state): the simulator's trace",
}
#: What a real Pi 1.6 process shows of a TypeScript implementation.
REAL_PI_OBSERVATIONS = frozenset(OBSERVATIONS) - {"trace"}


@dataclass
class ObservedRun:
    """A run as observed so far: the scenario, the operations performed and their outcomes, and
    the latest observation (any object with :class:`~pi_continuity_harness.targets.Observation`'s
    fields)."""

    scenario: Scenario
    observation: Any
    operations: list[tuple[Operation, Any]] = field(default_factory=list)
    #: Per invariant, what it already reported (a violation is reported once).
    reported: dict[str, set[str]] = field(default_factory=dict)
    #: Per invariant, what it keeps from one operation to the next (a file's bytes before the
    #: operation, say: an observation is only the state after it).
    kept: dict[str, Any] = field(default_factory=dict)

    @property
    def project_dir(self) -> Path:
        return Path(self.observation.project_dir)

    @property
    def agent_dir(self) -> Path:
        return Path(self.observation.agent_dir)

    def entries_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.observation.entries if e.get("type") == kind]


@dataclass(frozen=True)
class ObservedInvariant:
    """One rule checked from observations: its name, what it states, the rules it checks, what
    it needs to see (:data:`OBSERVATIONS`) and the check (the problems it finds in a run)."""

    name: str
    doc: str
    rules: tuple[str, ...]
    needs: frozenset[str]
    check: Callable[[ObservedRun], Iterable[str]]


def check_observed(
    invariants: Iterable[ObservedInvariant], run: ObservedRun, available: frozenset[str]
) -> Iterator[tuple[str, str]]:
    """``(invariant, problem)`` for every new problem of every invariant ``available`` allows."""
    for invariant in invariants:
        if not invariant.needs <= available:
            continue
        seen = run.reported.setdefault(invariant.name, set())
        for problem in invariant.check(run):
            if problem not in seen:
                seen.add(problem)
                yield invariant.name, problem


class ObservedChecker:
    """A system's observed invariants on one run of ``scenario``: after every operation,
    :meth:`after_operation` checks every invariant ``available`` allows on the new observation
    and returns the problems not reported before (what the real-Pi target's ``run_checked`` and
    the real-Pi explorer call)."""

    def __init__(
        self,
        scenario: Scenario,
        invariants: Iterable[ObservedInvariant],
        available: frozenset[str] = REAL_PI_OBSERVATIONS,
    ) -> None:
        self.scenario = scenario
        self.available = available
        self._all = tuple(invariants)
        self._run: ObservedRun | None = None

    @property
    def invariants(self) -> frozenset[str]:
        """The invariants checked here (their needs met)."""
        return frozenset(i.name for i in self._all if i.needs <= self.available)

    def unchecked(self) -> dict[str, frozenset[str]]:
        """The invariants not checked here, with the observations they miss."""
        return {i.name: i.needs - self.available for i in self._all if not i.needs <= self.available}

    def after_operation(
        self, observation: Any, operation: Operation | None = None, outcome: Any = None
    ) -> list[tuple[str, str]]:
        if self._run is None:
            self._run = ObservedRun(self.scenario, observation)
        self._run.observation = observation
        if operation is not None:
            self._run.operations.append((operation, outcome))
        return list(check_observed(self._all, self._run, self.available))
