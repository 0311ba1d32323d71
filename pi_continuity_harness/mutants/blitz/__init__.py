"""Mutants of the pi-blitz-handoff reference: each breaks the catalogue rules it declares, each must
be killed by the features and, where the explorer can reach the rule, by exploration.

:mod:`.base` holds the registry and the base class; the mutants live by the reference's
sections: :mod:`.interface`, :mod:`.transfer`, :mod:`.deferral`, :mod:`.cancel`,
:mod:`.recovery`, :mod:`.settings`, :mod:`.managed`, :mod:`.templates`, :mod:`.concurrent`
(rules that need an operation running while a command is held) and :mod:`.faults` (the fault
and private paths). :data:`BLITZ_MUTANTS` maps each mutant's name to the rules it breaks, how,
the spec that loads it and what exploration should find; ``catalogue`` adds them to the kill
matrix.
"""

from __future__ import annotations

from pi_continuity_harness.mutants.blitz import (
    cancel,
    concurrent,
    deferral,
    faults,
    interface,
    managed,
    recovery,
    settings,
    templates,
    transfer,
)
from pi_continuity_harness.mutants.blitz.base import BLITZ_MUTANTS, SYSTEM, BlitzMutant, blitz_mutant_names

__all__ = ["BLITZ_MUTANTS", "SYSTEM", "BlitzMutant", "blitz_mutant_names", "modules"]

#: The modules that hold mutants (importing them registers the mutants).
modules = (interface, transfer, deferral, cancel, recovery, settings, managed, templates, concurrent, faults)
