"""The ``--seed`` option of the commands that run scenarios (``simulate``, ``replay``, ``run``,
``compare``, ``matrix``): a whole number, not negative, as a scenario's ``seed``.

Python's ``random.Random(-n)`` is seeded as ``random.Random(n)``: a negative seed would replay
another seed's run under its own name (``explore --seed-start`` refuses one for this reason).
"""

from __future__ import annotations

from pi_continuity_harness.commands._budget import whole_number

__all__ = ["seed"]

#: ``--seed``'s value (argparse ``type``): refused, naming it, unless a whole number >= 0.
seed = whole_number(0, "seed -n would give the run of seed n")
