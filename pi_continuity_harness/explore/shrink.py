"""Minimise a failing case: delta debugging over operations, replies and faults.

:func:`minimise` keeps a change only while the *same* invariant still fails first. It cuts the
fault phase after the failing operation (a run stops at the first violation, so later
operations never mattered), then runs ``ddmin`` (Zeller's delta debugging) over the
operations, turns faulty synthesis replies back into valid ones (their simplest value), drops
replies the run no longer needs, and deletes filesystem faults, crash and tamper rules, the
competing extension and planted artifacts one at a time, repeating until nothing shrinks.
Every candidate is a full deterministic run, so the result replays exactly.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.generate import ExploreCase
from pi_continuity_harness.explore.runner import CaseResult, run_case
from pi_continuity_harness.scenario.model_script import SynthesisReply

__all__ = ["MinimisedCase", "ddmin", "minimise"]

T = TypeVar("T")


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
    case: ExploreCase
    result: CaseResult
    runs: int
    seconds: float


def minimise(
    case: ExploreCase,
    failure: CaseResult,
    *,
    implementation: str | ExtensionFactory,
    workdir: str | Path,
    max_runs: int = 400,
    max_seconds: float = 120.0,
) -> MinimisedCase:
    """Shrink ``case`` while its first violation keeps the invariant name of ``failure``."""
    first = failure.first
    assert first is not None, "only a failing case can be minimised"
    target = first.invariant
    started = time.perf_counter()
    runs = 0
    best = failure

    def budget() -> bool:
        return runs < max_runs and time.perf_counter() - started < max_seconds

    def check(candidate: ExploreCase) -> CaseResult | None:
        nonlocal runs
        runs += 1
        try:
            result = run_case(candidate, implementation=implementation, workdir=workdir)
        except Exception:  # a candidate the harness cannot run is not a smaller failure
            return None
        violation = result.first
        if violation is not None and violation.invariant == target and not result.harness_errors:
            return result
        return None

    # Operations after the failing one never ran: cut them (and the liveness phase, unless
    # liveness itself failed).
    done = failure.operations_run
    if failure.first_healed_operation is None or done <= len(case.operations):
        current = case.without(operations=case.operations[:done], liveness=(), liveness_agent=())
    else:
        current = case
    verified = check(current)
    if verified is None:
        current = case
    else:
        best = verified

    def attempt(candidate: ExploreCase) -> bool:
        nonlocal current, best
        result = check(candidate)
        if result is None:
            return False
        current, best = candidate, result
        return True

    for _round in range(3):
        before = _size(current)

        def ops_fail(ops: list[Any]) -> bool:
            return attempt(current.without(operations=tuple(ops)))

        ddmin(current.operations, ops_fail, budget=budget)
        for index, reply in enumerate(current.synthesis):
            if budget() and reply != SynthesisReply():
                replaced = (*current.synthesis[:index], SynthesisReply(), *current.synthesis[index + 1 :])
                attempt(current.without(synthesis=replaced))
        trimmed = list(current.synthesis)
        while trimmed and trimmed[-1] == SynthesisReply():
            trimmed.pop()
        if len(trimmed) != len(current.synthesis) and budget():
            attempt(current.without(synthesis=tuple(trimmed)))

        def synthesis_fail(replies: list[SynthesisReply]) -> bool:
            return attempt(current.without(synthesis=tuple(replies)))

        ddmin(current.synthesis, synthesis_fail, budget=budget)

        def agent_fail(replies: list[Any]) -> bool:
            return attempt(current.without(agent=tuple(replies)))

        ddmin(current.agent, agent_fail, budget=budget)
        for field_name in ("fs", "crash", "tamper"):
            items = getattr(current, field_name)
            for index in reversed(range(len(items))):
                if budget():
                    items = getattr(current, field_name)
                    attempt(current.without(**{field_name: items[:index] + items[index + 1 :]}))
        if budget() and len(current.base.get("extensions", [])) > 1:
            base = {**current.base, "extensions": [{"implementation": True}]}
            options = dataclasses.replace(current.options, competitor=None)
            attempt(current.without(base=base, options=options))
        if budget() and current.markers:
            base = {
                **current.base,
                "files": {k: v for k, v in current.base["files"].items() if "PLANTED" not in str(v)},
            }
            attempt(current.without(base=base, markers=()))
        if _size(current) == before or not budget():
            break
    return MinimisedCase(current, best, runs, time.perf_counter() - started)


def _size(case: ExploreCase) -> int:
    return (
        len(case.operations)
        + len(case.synthesis)
        + len(case.agent)
        + len(case.fs)
        + len(case.crash)
        + len(case.tamper)
        + len(case.base.get("extensions", []))
        + len(case.markers)
    )
