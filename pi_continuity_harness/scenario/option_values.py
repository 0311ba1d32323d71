"""Command-line values that stand for a scenario's fields (``--seed``, ``--budget-*``), checked
as strictly as the fields themselves, for every command line that takes them: the harness's own
(``commands``) and the pytest plugin's (``features.pytest_plugin``), which before took any
``int``/``float`` (``--seed -1`` ran seed 1: ``random.Random(-n)`` is ``random.Random(n)``;
``--budget-virtual-seconds inf`` meant no limit, which a scenario's ``budget:`` refuses).

Each is an argparse ``type``: a bad value is one error naming it (argparse adds the option).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["positive_seconds", "positive_whole", "seed", "whole_number"]


def whole_number(least: int, why: str = "") -> Callable[[str], int]:
    """A whole number of at least ``least``, else one error naming the value (and ``why``)."""

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


def positive_seconds(text: str) -> float:
    """A finite number of seconds greater than 0 (a scenario's ``budget`` seconds: ``inf`` and
    ``nan`` are no JSON numbers, so a scenario cannot hold them either)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of seconds")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be greater than 0")
    return value


#: ``--seed`` (a scenario's ``seed``): a whole number >= 0. Python's ``random.Random(-n)`` is
#: seeded as ``random.Random(n)``: a negative seed would replay another seed's run under its own
#: name (``explore --seed-start`` refuses one for this reason).
seed = whole_number(0, "seed -n would give the run of seed n")
#: A count of at least 1 (``--budget-ops``, ``import-session``'s ``--context-window``/``--max-tokens``).
positive_whole = whole_number(1)
