"""The Target seam: what the conformance steps drive, and its two implementations.

Audience: the step library and harness users. A :class:`Target` is started from a
:class:`~pi_continuity_harness.scenario.Scenario`, driven one operation at a time, and
observed in one normalised shape (:class:`Observation`) on either target:

* :mod:`.sim` — :class:`~.sim.SimTarget`, the simulated Pi 1.6 host (``simulator``);
* :mod:`.realpi` — ``PiTarget``, a real Pi process over RPC (1.6.0 by default, or another
  supported release), with the bridge that hosts a Python extension inside it, the fake model
  server, the RPC client, the installer and what each release lacks (``realpi.versions``). It
  imports only the extension API and the scenario language, never the simulated host.

:func:`make_target` builds either by name (the real-Pi modules load only when asked for).
:mod:`.comparison` and :mod:`.known_differences` compare what the two targets observed
(``pi-continuity-harness compare``); :func:`play_both` plays one scenario on both and compares
(``explore --target pi``, and the regression features it writes). Capabilities are data
(:data:`CAPABILITIES`): a feature tagged ``@needs-<capability>`` is skipped, with the reason, on a target without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.errors import TargetError
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.targets.differential import BothRuns, play_both
from pi_continuity_harness.targets.target import (
    CAPABILITIES,
    CheckedRun,
    Observation,
    ObservedCounts,
    ObservedRequest,
    OperationOutcome,
    Target,
    TargetBudgetError,
    TargetStartError,
    TargetUnavailableError,
)

__all__ = [
    "CAPABILITIES",
    "BothRuns",
    "CheckedRun",
    "Observation",
    "ObservedCounts",
    "ObservedRequest",
    "OperationOutcome",
    "Target",
    "TargetBudgetError",
    "TargetError",
    "TargetName",
    "TargetStartError",
    "TargetUnavailableError",
    "make_target",
    "play_both",
]

TargetName = Literal["sim", "pi"]


def make_target(
    name: TargetName,
    implementation: str | ExtensionFactory,
    workdir: str | Path,
    *,
    seed: int | None = None,
    system: str | None = None,
    budget: BudgetOverride | None = None,
    pi_version: str | None = None,
) -> Target:
    """A fresh, unstarted target: ``sim`` (with ``seed``) or ``pi`` (a real Pi process of
    ``pi_version``, default the pinned 1.6.0; the simulator models 1.6.0 only).

    ``system`` names the system the implementation implements when it cannot say so itself (a
    TypeScript file); by default a Python factory's own declaration counts."""
    if name == "sim":
        from pi_continuity_harness.targets.sim import SimTarget  # noqa: PLC0415  (loads the simulator)

        return SimTarget(implementation, workdir, seed=seed, system=system, budget=budget)
    from pi_continuity_harness.targets.realpi import PiTarget  # noqa: PLC0415  (loads only when asked for)

    return PiTarget(implementation, workdir, system=system, budget=budget, pi_version=pi_version)
