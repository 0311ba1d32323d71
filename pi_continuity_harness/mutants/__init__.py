"""Mutants of the reference implementation, one spec rule broken each, and the kill matrix.

:mod:`.catalogue` holds the mutants; :mod:`.matrix` runs the conformance suite and the
explorer against each (every mutant in its own process) and builds the kill matrix.
"""

from pi_continuity_harness.mutants.catalogue import CANARY, MUTANTS, Mutant, spec_for

__all__ = ["CANARY", "MUTANTS", "Mutant", "spec_for"]
