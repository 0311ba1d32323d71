"""The Pi Session Continuity plug-in of the explorer (:mod:`.plugin`): swarm cases, the spec's
invariants (:mod:`.invariants`), liveness, shrinking."""

from pi_continuity_harness.explore.continuity.invariants import INVARIANTS, InvariantChecker, run_checker
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, ContinuityPlugin

__all__ = ["INVARIANTS", "PLUGIN", "ContinuityPlugin", "InvariantChecker", "run_checker"]
