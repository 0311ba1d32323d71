"""The blitz handoff explorer plug-in: random sessions, the handoff invariants, shrinking.

* Cases (:mod:`.generate`): handoff settings and a sequence of user actions with the model's
  behaviours, drawn from the seed.
* Invariants (:mod:`.invariants`): read from what the run leaves behind, once it is over.
* No liveness phase: every scripted behaviour is one a model may have, so there is nothing to
  heal; a handoff the model completes is already judged by the invariants.
* Shrinking: the operations, then the agent replies (ddmin each), until nothing shrinks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pi_continuity_harness.explore.blitz.generate import BlitzCase, blitz_case
from pi_continuity_harness.explore.blitz.invariants import BlitzChecker, invariant_specs, run_checker
from pi_continuity_harness.explore.blitz.observed import OBSERVED_INVARIANTS
from pi_continuity_harness.explore.observed import ObservedInvariant
from pi_continuity_harness.explore.plugin import ExplorerPlugin, InvariantSpec, Reduce
from pi_continuity_harness.scenario.implementations import BLITZ_HANDOFF
from pi_continuity_harness.simulator.simulation import Simulation

__all__ = ["PLUGIN", "BlitzPlugin"]


class BlitzPlugin(ExplorerPlugin[BlitzCase]):
    """The ``pi-blitz-handoff`` plug-in (see the module docstring)."""

    system = BLITZ_HANDOFF.name
    feature_tags = ("blitz", "needs-trace-faults")
    not_compared_on_both_targets = (
        "its cases run the handoff's wall-clock timers (readinessRetrySeconds of 1 s and more, the "
        "Wait Time and Handoff Time the widget shows), which real Pi reads from the machine's clock "
        "and the simulator from its virtual one: the first runs of seeds 0-17 on both targets "
        "(7 December 2026) differed in a reminder real Pi sent after a 1 s retry (seed 15) and in "
        "the widget's times (seeds 2, 7, 11)"
    )
    shrink_plan = (Reduce("operations"), Reduce("agent"))

    @property
    def invariants(self) -> tuple[InvariantSpec, ...]:
        return invariant_specs()

    def observed_invariants(self) -> tuple[ObservedInvariant, ...]:
        return OBSERVED_INVARIANTS

    def case(self, seed: int, steps: int) -> BlitzCase:
        return blitz_case(seed, steps)

    def checker(self, simulation: Simulation) -> BlitzChecker:
        return run_checker(simulation)

    def size(self, case: BlitzCase) -> int:
        return len(case.operations) + len(case.agent)

    def summarise(self, metrics: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The user operations the protection invariant judged over all finished seeds, inside
        the window and outside it, by kind (``BlitzChecker.metrics``); nothing when no seed ran
        it (a TypeScript implementation observed on real Pi)."""
        total: dict[str, dict[str, int]] = {"inside": {}, "outside": {}}
        judged = [seed["protection"] for seed in metrics if "protection" in seed]
        if not judged:
            return {}  # no seed ran the invariant (real Pi observes; the invariant reads the trace)
        for counts in judged:
            for side, kinds in dict(counts).items():
                for kind, count in dict(kinds).items():
                    total[side][kind] = total[side].get(kind, 0) + int(count)
        return {"protection": {side: dict(sorted(kinds.items())) for side, kinds in total.items()}}


PLUGIN = BlitzPlugin()
