"""Seeded exploration of the simulated host with the spec's invariants checked throughout.

* :mod:`.generate`: a seed expands (``random.Random(seed)``) into swarm options and a concrete
  case: machine, fault-phase operations and replies, faults, and a fixed liveness phase;
* :mod:`.invariants`: the spec's invariants as named functions, checked on every trace record
  and after every operation by an :class:`~.invariants.InvariantChecker`;
* :mod:`.runner`: runs a case incrementally, heals the faults, checks liveness, and yields the
  healed scenario that replays the run;
* :mod:`.shrink`: delta debugging of a failing case;
* :mod:`.engine`: one seed end to end, and the files a failure is written as.

``pi-continuity-harness explore`` is the command line (:mod:`pi_continuity_harness.commands.explore`).
Nothing here needs ``hypothesis``; the stateful Hypothesis test reuses the invariants.
"""

from pi_continuity_harness.explore.engine import SeedReport, explore_seed
from pi_continuity_harness.explore.generate import ExploreCase, SwarmOptions, generate_case
from pi_continuity_harness.explore.invariants import (
    INVARIANTS,
    InvariantChecker,
    Violation,
    describe_invariants,
)
from pi_continuity_harness.explore.runner import CaseResult, case_for_seed, run_case
from pi_continuity_harness.explore.shrink import minimise

__all__ = [
    "INVARIANTS",
    "CaseResult",
    "ExploreCase",
    "InvariantChecker",
    "SeedReport",
    "SwarmOptions",
    "Violation",
    "case_for_seed",
    "describe_invariants",
    "explore_seed",
    "generate_case",
    "minimise",
    "run_case",
]
