"""The ``--budget-*`` options every command that runs scenarios takes (``scenario/budget.py``)."""

from __future__ import annotations

import argparse
from typing import Any

from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.option_values import positive_seconds, positive_whole

__all__ = ["add_budget_arguments", "budget_args", "budget_override", "with_budget"]


def add_budget_arguments(parser: Any, *, wall: bool = True) -> None:
    """``--budget-ops``, ``--budget-virtual-seconds`` and (``wall``) ``--budget-wall-seconds``."""
    parser.add_argument(
        "--budget-ops",
        type=positive_whole,
        metavar="N",
        help="simulator: host operations (trace records and event-loop steps) a scenario may use "
        "(default: the scenario's, else 50000)",
    )
    parser.add_argument(
        "--budget-virtual-seconds",
        type=positive_seconds,
        metavar="S",
        help="simulator: virtual seconds a scenario may last (default: the scenario's, else 86400)",
    )
    if wall:
        parser.add_argument(
            "--budget-wall-seconds",
            type=positive_seconds,
            metavar="S",
            help="real Pi: wall-clock seconds a scenario may last (default: the scenario's, else 600)",
        )


def budget_override(args: argparse.Namespace) -> BudgetOverride | None:
    """The overrides given on the command line (None: none)."""
    override = BudgetOverride(
        operations=getattr(args, "budget_ops", None),
        virtual_seconds=getattr(args, "budget_virtual_seconds", None),
        wall_seconds=getattr(args, "budget_wall_seconds", None),
    )
    return None if override.empty else override


def with_budget(scenario: Scenario, args: argparse.Namespace) -> Scenario:
    override = budget_override(args)
    if override is None:
        return scenario
    return scenario.model_copy(update={"budget": override.apply(scenario.budget)})


def budget_args(override: BudgetOverride | None, *, wall: bool = True) -> list[str]:
    """The overrides as options of another command (or of the suite's pytest plugin)."""
    return [] if override is None else override.cli_args(wall=wall)
