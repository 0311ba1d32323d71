"""Seeded exploration of the simulated host, one engine for every system.

The engine is system-agnostic: :mod:`.runner` runs a case operation by operation with the
invariants checked after every effect (and a liveness phase once faults heal), :mod:`.shrink`
minimises a failure, :mod:`.regression` writes it as a scenario, its trace and a ``.feature``,
and :mod:`.engine` runs seeds (in parallel with ``jobs``), checks determinism and adds the
reports up. A system plugs in with an :class:`~.plugin.ExplorerPlugin` (:mod:`.plugin`): its
cases, its invariants (each with the rule ids it checks), its liveness phase and its shrinking
plan. :mod:`.plugins` says which plug-in explores which system:

* :mod:`.continuity`: Pi Session Continuity (swarm cases, the spec's invariants, liveness);
* :mod:`.blitz`: pi-blitz-handoff (random handoff sessions, the handoff invariants).

``pi-continuity-harness explore`` is the command line (:mod:`pi_continuity_harness.commands.explore`).
Nothing here needs ``hypothesis``; the stateful Hypothesis test reuses the continuity invariants.
"""

from pi_continuity_harness.explore.engine import SeedReport, explore_seed, explore_seeds, summarise
from pi_continuity_harness.explore.plugin import (
    LIVENESS,
    LOAD_FAILURE,
    WITHIN_BUDGET,
    ExplorerPlugin,
    InvariantSpec,
    Violation,
)
from pi_continuity_harness.explore.plugins import PLUGINS, plugin_for, plugin_named
from pi_continuity_harness.explore.runner import CaseResult, first_session_id, run_case, scratch_root
from pi_continuity_harness.explore.shrink import ddmin, minimise

__all__ = [
    "LIVENESS",
    "LOAD_FAILURE",
    "PLUGINS",
    "WITHIN_BUDGET",
    "CaseResult",
    "ExplorerPlugin",
    "InvariantSpec",
    "SeedReport",
    "Violation",
    "ddmin",
    "explore_seed",
    "explore_seeds",
    "first_session_id",
    "minimise",
    "plugin_for",
    "plugin_named",
    "run_case",
    "scratch_root",
    "summarise",
]
