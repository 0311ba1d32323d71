"""The ``--budget-*`` options every command that runs scenarios takes (``scenario/budget.py``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.document import Scenario

__all__ = ["add_budget_arguments", "budget_args", "budget_override", "whole_number", "with_budget"]


def whole_number(least: int, why: str = "") -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least ``least``, else one error naming the
    value (and ``why``, when given); shared by ``--budget-ops`` and ``--seed``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            bound = "must not be negative" if least == 0 else f"must be at least {least}"
            raise argparse.ArgumentTypeError(f"{text!r}: {bound}" + (f" ({why})" if why else ""))
        return value

    return parse


_positive_int = whole_number(1)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be greater than 0")
    return value


def add_budget_arguments(parser: Any, *, wall: bool = True) -> None:
    """``--budget-ops``, ``--budget-virtual-seconds`` and (``wall``) ``--budget-wall-seconds``."""
    parser.add_argument(
        "--budget-ops",
        type=_positive_int,
        metavar="N",
        help="simulator: host operations (trace records and event-loop steps) a scenario may use "
        "(default: the scenario's, else 50000)",
    )
    parser.add_argument(
        "--budget-virtual-seconds",
        type=_positive_float,
        metavar="S",
        help="simulator: virtual seconds a scenario may last (default: the scenario's, else 86400)",
    )
    if wall:
        parser.add_argument(
            "--budget-wall-seconds",
            type=_positive_float,
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
