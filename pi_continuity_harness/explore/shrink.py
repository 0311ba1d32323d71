"""Minimise a failing case: delta debugging, then the plug-in's shrinking plan, until nothing shrinks.

:func:`minimise` keeps a change only while the *same* invariant still fails first. It cuts the
fault phase after the failing operation (a run stops at the first violation, so later
operations never mattered; ``ExplorerPlugin.cut``), then runs the plug-in's plan round after
round: ``ddmin`` (Zeller's delta debugging) over a sequence (:class:`~.plugin.Reduce`), each
element turned into its simplest value (:class:`~.plugin.Simplify`, e.g. a faulty synthesis
reply into a valid one), entries deleted one at a time (:class:`~.plugin.DropEach`: filesystem
faults, crash and tamper rules) and single candidates (:class:`~.plugin.Attempt`: no competing
extension, no planted artifacts). It stops when a round shrinks nothing or the budget is spent.
Every candidate is a full deterministic run, so the result replays exactly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, assert_never

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.plugin import Attempt, Case, DropEach, ExplorerPlugin, Reduce, Simplify
from pi_continuity_harness.explore.runner import CaseResult, run_case

__all__ = ["MinimisedCase", "ddmin", "minimise"]

T = TypeVar("T")

#: Rounds of the plan at most (a round that shrinks nothing ends it earlier).
ROUNDS = 3


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool], *, budget: Callable[[], bool]) -> list[T]:
    """The smallest sublist (1-minimal within ``budget``) for which ``fails`` still holds."""
    current = list(items)
    granularity = 2
    while len(current) >= 2 and budget():
        size = math.ceil(len(current) / granularity)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        reduced = False
        for index in range(len(chunks)):
            complement = [x for j, chunk in enumerate(chunks) if j != index for x in chunk]
            if not budget():
                break
            if fails(complement):
                current = complement
                granularity = max(granularity - 1, 2)
                reduced = True
                break
        if not reduced:
            if granularity >= len(current):
                break
            granularity = min(len(current), granularity * 2)
    if len(current) == 1 and budget() and fails([]):
        return []
    return current


@dataclass
class MinimisedCase:
    case: Any
    result: CaseResult
    runs: int
    seconds: float


def minimise(
    plugin: ExplorerPlugin[Any],
    case: Case,
    failure: CaseResult,
    *,
    implementation: str | ExtensionFactory,
    workdir: str | Path,
    max_runs: int = 400,
    max_seconds: float = 120.0,
    run: Callable[[Any], CaseResult] | None = None,
) -> MinimisedCase:
    """Shrink ``case`` while its first violation keeps the invariant name of ``failure``.

    ``run`` plays a candidate (default: :func:`~.runner.run_case` on the simulated host; the
    real-Pi explorer passes its own)."""
    first = failure.first
    assert first is not None, "only a failing case can be minimised"
    target = first.invariant
    started = time.perf_counter()
    runs = 0
    best = failure

    def budget() -> bool:
        return runs < max_runs and time.perf_counter() - started < max_seconds

    def check(candidate: Case) -> CaseResult | None:
        nonlocal runs
        runs += 1
        try:
            if run is not None:
                result = run(candidate)
            else:
                result = run_case(plugin, candidate, implementation=implementation, workdir=workdir)
        except Exception:  # a candidate the harness cannot run is not a smaller failure
            return None
        violation = result.first
        if violation is not None and violation.invariant == target and not result.harness_errors:
            return result
        return None

    # Operations after the failing one never ran: cut them (and the liveness phase, unless
    # liveness itself failed).
    done = failure.operations_run
    current: Any = case
    if failure.first_healed_operation is None or done <= len(case.operations):
        current = plugin.cut(case, done)
    verified = check(current)
    if verified is None:
        current = case
    else:
        best = verified

    def attempt(candidate: Any) -> bool:
        nonlocal current, best
        result = check(candidate)
        if result is None:
            return False
        current, best = candidate, result
        return True

    def reduce(name: str) -> None:
        ddmin(
            getattr(current, name),
            lambda items: attempt(current.without(**{name: tuple(items)})),
            budget=budget,
        )

    def simplify(name: str, simplest: object) -> None:
        for index, item in enumerate(getattr(current, name)):
            if budget() and item != simplest:
                items = getattr(current, name)
                attempt(current.without(**{name: (*items[:index], simplest, *items[index + 1 :])}))
        trimmed = list(getattr(current, name))
        while trimmed and trimmed[-1] == simplest:
            trimmed.pop()
        if len(trimmed) != len(getattr(current, name)) and budget():
            attempt(current.without(**{name: tuple(trimmed)}))

    def drop_each(name: str) -> None:
        for index in reversed(range(len(getattr(current, name)))):
            if budget():
                items = getattr(current, name)
                attempt(current.without(**{name: items[:index] + items[index + 1 :]}))

    for _round in range(ROUNDS):
        before = plugin.size(current)
        for step in plugin.shrink_plan:
            match step:
                case Reduce(field=name):
                    reduce(name)
                case Simplify(field=name, simplest=simplest):
                    simplify(name, simplest)
                case DropEach(field=name):
                    drop_each(name)
                case Attempt(candidate=make):
                    smaller = make(current) if budget() else None
                    if smaller is not None:
                        attempt(smaller)
                case _:
                    assert_never(step)
        if plugin.size(current) == before or not budget():
            break
    return MinimisedCase(current, best, runs, time.perf_counter() - started)
