"""The subcommands of ``pi-continuity-harness``, one module each.

Every module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit status). :mod:`pi_continuity_harness.cli` lists them.

:data:`USAGE_ERRORS` are the errors the command line reports as one line with exit status 2:
a bad argument or input file (:class:`UsageError`), a setup mistake found before any scenario
ran (``SetupError``), a run directory in use or unusable (``RunDirectoryError``), and pytest
refusing the suite's arguments (``SuiteUsageError``).
"""

from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.features.preflight import SetupError
from pi_continuity_harness.features.suite import SuiteUsageError
from pi_continuity_harness.scenario.implementations import search_current_directory
from pi_continuity_harness.scenario.run_lock import RunDirectoryError

__all__ = ["USAGE_ERRORS", "UsageError", "search_current_directory"]


class UsageError(HarnessError):
    """A problem with the command line or an input file: exit status 2, this message."""


USAGE_ERRORS: tuple[type[Exception], ...] = (UsageError, SetupError, RunDirectoryError, SuiteUsageError)
