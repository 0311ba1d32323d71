"""The ``--seed`` option of the commands that run scenarios (``simulate``, ``replay``, ``run``,
``compare``, ``matrix``): a whole number, not negative, as a scenario's ``seed``.

Python's ``random.Random(-n)`` is seeded as ``random.Random(n)``: a negative seed would replay
another seed's run under its own name (``explore --seed-start`` refuses one for this reason).
The check is ``scenario.option_values.seed``, which the pytest plugin's ``--seed`` uses too.
"""

from __future__ import annotations

from pi_continuity_harness.scenario.option_values import seed

__all__ = ["seed"]
