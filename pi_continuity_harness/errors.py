"""The harness's exceptions: one root, one branch per package family.

Every error the harness raises on its own account derives from :class:`HarnessError`, so a
caller (the CLI, a test, a user's script) can catch the harness's errors without catching an
extension's. Each package family has its branch, and each concrete error keeps the builtin
base it always had (``ValueError``, ``RuntimeError``) so code that caught those still does:

=================  =========================================================================
branch             raised by
=================  =========================================================================
ApiError           the extension API itself: a stale ``pi``/``ctx``, an action during loading,
                   an aborted signal, any other Error Pi's API throws (``PiError``) (``api``)
ScenarioError      what a run is given: an invalid scenario, a path that leaves the run, an
                   implementation that does not load, a work directory the harness will not
                   empty (``scenario``)
SimulatorError     the simulated Pi host: a prompt Pi rejects, an invalid setting, a process
                   that does not start, a stalled run (``simulator``)
TargetError        a target: one that cannot run here or does not start, the real-Pi RPC
                   client, the bridge, the installer (``targets``)
ReportError        the HTML report: its optional libraries (the ``report`` extra) are not
                   installed, or a file it was given cannot be read (``report``)
=================  =========================================================================

Not here, on purpose: the command line's ``UsageError`` (``commands``: it derives from
:class:`HarnessError` but lives with the CLI, which the library never imports); two
control-flow signals that are ``BaseException`` so an extension's ``except Exception`` cannot
swallow them (``scenario.trace.SimulatedCrash``, ``scenario.operations.DialogAnswerMismatchError``);
and the references' own errors, which belong to the products they implement (an extension
imports nothing of the harness but its API).
"""

from __future__ import annotations

__all__ = ["ApiError", "HarnessError", "ReportError", "ScenarioError", "SimulatorError", "TargetError"]


class HarnessError(Exception):
    """Root of every error the harness raises on its own account."""


class ApiError(HarnessError):
    """The extension API refused a call (the Python form of an error Pi's API throws)."""


class ScenarioError(HarnessError, ValueError):
    """A scenario, or something a run is given, that cannot be used; the message names the field
    (and the file, when read from one)."""


class SimulatorError(HarnessError):
    """The simulated Pi host refused or failed to do something."""


class TargetError(HarnessError):
    """A target could not do what the steps asked."""


class ReportError(HarnessError):
    """The HTML report cannot be made: the ``report`` extra is missing, or an input is unreadable."""
