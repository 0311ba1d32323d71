"""The blitz handoff plug-in of the explorer (:mod:`.plugin`): cases, invariants, shrinking."""

from pi_continuity_harness.explore.blitz.invariants import BLITZ_INVARIANTS, BlitzChecker, run_checker
from pi_continuity_harness.explore.blitz.plugin import PLUGIN, BlitzPlugin

__all__ = ["BLITZ_INVARIANTS", "PLUGIN", "BlitzChecker", "BlitzPlugin", "run_checker"]
