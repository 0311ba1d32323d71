"""The blitz handoff plug-in of the explorer (:mod:`.plugin`): cases, invariants, shrinking."""

from typing import Any

from pi_continuity_harness.explore.blitz.invariants import BLITZ_INVARIANTS, BlitzChecker, run_checker
from pi_continuity_harness.explore.blitz.observed import OBSERVED_INVARIANTS
from pi_continuity_harness.explore.blitz.plugin import PLUGIN, BlitzPlugin
from pi_continuity_harness.explore.observed import ObservedChecker


def observed_checker(scenario: Any) -> ObservedChecker:
    """The invariants real Pi lets be observed, on a run of ``scenario`` (the entry point of
    ``pi_continuity_harness.observed_checkers``)."""
    return ObservedChecker(scenario, OBSERVED_INVARIANTS)


__all__ = [
    "BLITZ_INVARIANTS",
    "OBSERVED_INVARIANTS",
    "PLUGIN",
    "BlitzChecker",
    "BlitzPlugin",
    "observed_checker",
    "run_checker",
]
