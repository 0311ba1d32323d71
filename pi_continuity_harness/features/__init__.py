"""The conformance suite: Gherkin features, the step library, the oracle and the pytest plugin.

``SUITE_DIR`` is the directory to hand to pytest; :mod:`.suite` runs it programmatically. The
steps drive a :class:`~pi_continuity_harness.targets.Target` and read what it observes; they
judge artifacts with :mod:`.oracle`, the suite's own reading of the spec.
"""

from pathlib import Path

__all__ = ["SUITE_DIR"]

SUITE_DIR = Path(__file__).resolve().parent
