"""The Pi Session Continuity plug-in of the explorer (:mod:`.plugin`): swarm cases, the spec's
invariants (:mod:`.invariants`), liveness, shrinking."""

from typing import Any

from pi_continuity_harness.explore.continuity.invariants import INVARIANTS, InvariantChecker, run_checker
from pi_continuity_harness.explore.continuity.observed import OBSERVED_INVARIANTS
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, ContinuityPlugin
from pi_continuity_harness.explore.observed import ObservedChecker


def observed_checker(scenario: Any) -> ObservedChecker:
    """The invariants real Pi lets be observed, on a run of ``scenario`` (the entry point of
    ``pi_continuity_harness.observed_checkers``)."""
    return ObservedChecker(scenario, OBSERVED_INVARIANTS)


__all__ = [
    "INVARIANTS",
    "OBSERVED_INVARIANTS",
    "PLUGIN",
    "ContinuityPlugin",
    "InvariantChecker",
    "observed_checker",
    "run_checker",
]
