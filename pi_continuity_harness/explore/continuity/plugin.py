"""Pi Session Continuity's explorer plug-in: swarm cases, the spec's invariants, liveness, shrinking.

* Cases (:mod:`.generate`): a seed's swarm options, machine, fault-phase operations with the
  replies they script, faults, and a fixed liveness phase. A seed whose machine plants
  same-session artifacts first asks the engine for the id of the session it will create.
* Invariants (:mod:`.invariants`): checked after every effect and operation.
* Liveness: once the faults heal, valid settings are restored (and Pi restarted, but only when
  it is down or its live settings are not the case's own, so an implementation stuck in memory
  cannot hide behind a fresh start) and the next threshold compaction must commit a valid
  Brief. It applies only where a Brief can commit at all: a trusted project, and no competitor
  that takes every compaction away.
* Shrinking: operations (ddmin), faulty synthesis replies turned valid, synthesis and agent
  replies (ddmin), filesystem faults, crash and tamper rules one at a time, then the competitor
  and the planted artifacts.
* Cost: per failing check point, synthesis attempts, failure notifications and failed
  postmortems (psc-lifecycle consequence 6), summed over the seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pi_continuity_harness.explore.continuity.generate import KEEP_RECENT, MAIN, ExploreCase, generate_case
from pi_continuity_harness.explore.continuity.invariants import InvariantChecker, invariant_specs, run_checker
from pi_continuity_harness.explore.continuity.observed import OBSERVED_INVARIANTS
from pi_continuity_harness.explore.observed import ObservedInvariant
from pi_continuity_harness.explore.plugin import (
    Attempt,
    DropEach,
    ExplorerPlugin,
    InvariantSpec,
    LivenessPhase,
    Reduce,
    Simplify,
)
from pi_continuity_harness.explore.runner import first_session_id
from pi_continuity_harness.scenario.implementations import SESSION_CONTINUITY
from pi_continuity_harness.scenario.model_script import SynthesisReply
from pi_continuity_harness.scenario.operations import Operation, RestartOp
from pi_continuity_harness.simulator.simulation import Simulation

__all__ = ["PLUGIN", "ContinuityPlugin", "case_for_seed", "liveness_operations"]


def case_for_seed(seed: int, steps: int) -> ExploreCase:
    """The case ``seed`` expands to, with planted same-session artifacts in its session."""
    probe = generate_case(seed, 0)
    session_id = first_session_id(seed) if probe.options.planted else None
    return generate_case(seed, steps, session_id=session_id)


def _needs_restart(simulation: Simulation, case: ExploreCase) -> bool:
    """Whether the liveness phase must restore the settings and restart Pi first.

    Only when Pi is down, or its live native settings for the main model are not the case's
    own: otherwise the liveness phase runs in the same process, so an implementation whose
    in-memory state got stuck during the fault phase cannot hide behind a fresh start.
    """
    host = simulation.host
    runtime = host.runtime
    if runtime is None or host.crashed or not host.running or not case.options.config_hands_off:
        return True  # the extension reads its config at startup: a corrected one needs a restart
    model = host.catalog.find_full(MAIN)
    try:
        live = runtime.settings.get_compaction_settings(model)
    except Exception:  # invalid settings: restore and restart
        return True
    wanted = (True, case.options.reserve, KEEP_RECENT)
    return (live.enabled, live.reserve_tokens, live.keep_recent_tokens) != wanted


def liveness_operations(case: ExploreCase, restart: bool) -> tuple[Operation, ...]:
    """The liveness phase: with ``restart``, restore the settings (and a config that cannot hand
    off) and restart Pi first; without, only what follows the restart."""
    if restart:
        return case.liveness
    cut = next(i for i, op in enumerate(case.liveness) if isinstance(op, RestartOp))
    return case.liveness[cut + 1 :]


def _without_competitor(case: ExploreCase) -> ExploreCase | None:
    if len(case.base.get("extensions", [])) <= 1:
        return None
    base = {**case.base, "extensions": [{"implementation": True}]}
    return case.without(base=base, options=dataclasses.replace(case.options, competitor=None))


def _without_planted(case: ExploreCase) -> ExploreCase | None:
    if not case.markers:
        return None
    files = {k: v for k, v in case.base["files"].items() if "PLANTED" not in str(v)}
    return case.without(base={**case.base, "files": files}, markers=())


class ContinuityPlugin(ExplorerPlugin[ExploreCase]):
    """The ``pi-session-continuity`` plug-in (see the module docstring)."""

    system = SESSION_CONTINUITY.name
    feature_tags = ("rules", "needs-trace-faults")
    shrink_plan = (
        Reduce("operations"),
        Simplify("synthesis", SynthesisReply()),
        Reduce("synthesis"),
        Reduce("agent"),
        DropEach("fs"),
        DropEach("crash"),
        DropEach("tamper"),
        Attempt(_without_competitor),
        Attempt(_without_planted),
    )

    @property
    def invariants(self) -> tuple[InvariantSpec, ...]:
        return invariant_specs()

    def observed_invariants(self) -> tuple[ObservedInvariant, ...]:
        return OBSERVED_INVARIANTS

    def case(self, seed: int, steps: int) -> ExploreCase:
        return case_for_seed(seed, steps)

    def checker(self, simulation: Simulation) -> InvariantChecker:
        return run_checker(simulation)

    def liveness_phase(self, simulation: Simulation, case: ExploreCase) -> LivenessPhase | None:
        if not case.liveness:
            return None
        restart = _needs_restart(simulation, case)
        why = (
            "untrusted project"
            if case.base.get("trust") == "never"
            else f"competitor {case.options.competitor}"
        )
        return LivenessPhase(
            operations=liveness_operations(case, restart),
            replies={"agent": case.liveness_agent, "extension": ()},
            applies=case.liveness_applies,
            why_not=why,
        )

    def cut(self, case: ExploreCase, done: int) -> ExploreCase:
        return case.without(operations=case.operations[:done], liveness=(), liveness_agent=())

    def size(self, case: ExploreCase) -> int:
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

    def summarise(self, metrics: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """What persistent faults cost over all seeds, per failing check point."""
        failing_points = sum(int(m.get("failing", 0)) for m in metrics)

        def total(key: str) -> int:
            return sum(int(m.get(key, {}).get("total", 0)) for m in metrics)

        def per_point(key: str) -> float:
            return round(total(key) / failing_points, 2) if failing_points else 0.0

        return {
            "faultCost": {
                "failingCheckPoints": failing_points,
                "synthesisAttemptsPerFailingCheckPoint": per_point("synthesisAttempts"),
                "failureNotificationsPerFailingCheckPoint": per_point("failureNotifications"),
                "failedPostmortemsPerFailingCheckPoint": per_point("failedPostmortems"),
                "maxSynthesisAttemptsInOneCheckPoint": max(
                    (int(m.get("synthesisAttempts", {}).get("max", 0)) for m in metrics), default=0
                ),
            }
        }


PLUGIN = ContinuityPlugin()
