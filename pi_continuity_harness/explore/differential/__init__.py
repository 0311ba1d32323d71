"""Differential exploration: seeds played on the simulator and on real Pi, compared whole.

* :mod:`.generate`: a seed's host-behaviour case (actions with the replies they script).
* :mod:`.runner`: a seed on both targets, with and without the implementation under test; a
  difference minimised and written as a scenario and a feature that replays it on both targets.
"""

from pi_continuity_harness.explore.differential.generate import (
    ACTIONS,
    DiffAction,
    DiffCase,
    differential_case,
)
from pi_continuity_harness.explore.differential.runner import (
    COMMANDS,
    DiffRun,
    explore_differential_seed,
    run_differential,
)

__all__ = [
    "ACTIONS",
    "COMMANDS",
    "DiffAction",
    "DiffCase",
    "DiffRun",
    "differential_case",
    "explore_differential_seed",
    "run_differential",
]
