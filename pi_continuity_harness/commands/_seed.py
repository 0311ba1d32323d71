"""The ``--seed`` option of the commands that run scenarios (``simulate``, ``replay``, ``run``,
``compare``, ``matrix``): a whole number, not negative, as a scenario's ``seed``.

Python's ``random.Random(-n)`` is seeded as ``random.Random(n)``: a negative seed would replay
another seed's run under its own name (``explore --seed-start`` refuses one for this reason).
"""

from __future__ import annotations

import argparse

__all__ = ["seed"]


def seed(text: str) -> int:
    """``--seed``'s value (argparse ``type``): refused, naming it, unless a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: must not be negative (seed -n would give the run of seed n)"
        )
    return value
