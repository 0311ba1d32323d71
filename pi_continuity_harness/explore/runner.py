"""Run one case incrementally on the simulated host, with every invariant checked.

:func:`run_case` starts a :class:`~pi_continuity_harness.simulator.simulation.Simulation`
of the case's scenario, attaches an :class:`~.invariants.InvariantChecker`, and performs the
fault-phase operations one at a time. Then it *heals*: the model script is cut to the replies
already used (so every later synthesis is a valid default and every later agent reply is one
of the liveness phase's), filesystem faults are capped at the times they already fired, and
crash and tamper rules that have not fired are dropped. Then the liveness phase runs and the
first threshold check point after it must commit a valid Brief.

Healing only removes what the run has not used yet, so the *healed scenario* — the case's
data with the script cut to what was consumed and the faults cut to what fired — replays the
very same run from a file: ``pi-continuity-harness replay`` reproduces its trace byte for
byte. That is the scenario a failure is written out as.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.generate import KEEP_RECENT, MAIN, ExploreCase, generate_case
from pi_continuity_harness.explore.invariants import LOAD_FAILURE, CheckPoint, InvariantChecker, Violation
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.faults import FaultPlan
from pi_continuity_harness.scenario.model_script import ModelScript, Reply, SynthesisReply
from pi_continuity_harness.simulator.host import ProcessStartError
from pi_continuity_harness.simulator.simulation import Simulation

__all__ = [
    "LOAD_FAILURE",
    "CaseResult",
    "case_for_seed",
    "first_session_id",
    "liveness_operations",
    "run_case",
    "scratch_root",
]


def scratch_root() -> str | None:
    """Where scratch runs go: ``$PCH_SCRATCH``, else a RAM disk (``/dev/shm``) when there is a
    writable one (the reference fsyncs every write and every directory), else the system default."""
    for root in (os.environ.get("PCH_SCRATCH"), "/dev/shm"):
        if root and os.path.isdir(root) and os.access(root, os.W_OK):
            return root
    return None


@dataclass
class CaseResult:
    """What one run of a case showed."""

    case: ExploreCase
    implementation: str
    violations: list[Violation]
    harness_errors: list[str]
    operations_run: int
    liveness: str
    checkpoints: list[CheckPoint]
    healed: Scenario
    first_healed_operation: int | None
    trace: str
    seconds: float
    records: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.violations or self.harness_errors)

    @property
    def first(self) -> Violation | None:
        return self.violations[0] if self.violations else None

    def cost(self) -> dict[str, Any]:
        """What failing check points cost: synthesis attempts, failure notifications and failed
        postmortems per check point that did not commit (psc-lifecycle consequence 6)."""
        failing = [c for c in self.checkpoints if c.outcome in ("cancelled", "failed")]
        out: dict[str, Any] = {"checkPoints": len(self.checkpoints), "failing": len(failing)}
        for key, attr in (
            ("synthesisAttempts", "synthesis_requests"),
            ("failureNotifications", "failure_notifications"),
            ("failedPostmortems", "failed_postmortems"),
        ):
            values = [int(getattr(c, attr)) for c in failing]
            out[key] = {
                "total": sum(values),
                "max": max(values, default=0),
                "perFailingCheckPoint": round(sum(values) / len(values), 2) if values else 0.0,
            }
        return out


def first_session_id(seed: int) -> str:
    """The id of the first session a run with ``seed`` creates (it depends on the seed only)."""
    with tempfile.TemporaryDirectory(prefix="pch-session-id-", dir=scratch_root()) as directory:
        scenario = Scenario(name="session-id-probe", seed=seed)
        simulation = Simulation(scenario, workdir=Path(directory) / "run", implementation=_noop)
        try:
            simulation.start()
            runtime = simulation.host.runtime
            assert runtime is not None
            return str(runtime.session_manager.get_session_id())
        finally:
            simulation.finish()


def _noop(pi: Any) -> None:
    """An extension that does nothing (the session-id probe loads it instead of anything real)."""


def case_for_seed(seed: int, steps: int) -> ExploreCase:
    """The case ``seed`` expands to, with planted same-session artifacts in its session."""
    probe = generate_case(seed, 0)
    session_id = first_session_id(seed) if probe.options.planted else None
    return generate_case(seed, steps, session_id=session_id)


def _fired(simulation: Simulation, case: ExploreCase) -> FaultPlan:
    """The faults that fired so far, filesystem faults capped at the times they fired."""
    host = simulation.host
    fs = tuple(c.fault.model_copy(update={"times": c.fired}) for c in host.monitor._counters if c.fired)
    triggers = host.trace._triggers
    crash = tuple(rule for rule, trig in zip(case.crash, triggers, strict=False) if trig.fired)
    tamper_triggers = triggers[len(case.crash) :]
    tamper = tuple(rule for rule, trig in zip(case.tamper, tamper_triggers, strict=False) if trig.fired)
    return FaultPlan(fs=fs, crash=crash, tamper=tamper)


def _frozen(
    simulation: Simulation, case: ExploreCase, operations: tuple[Any, ...], plan: FaultPlan | None
) -> Scenario:
    """The case's scenario with the script cut to what was used and faults to what fired
    (``plan``: the faults as they stood when they healed)."""
    service = simulation.host.service
    agent = tuple(r for r in service._queues["agent"][: service._cursors["agent"]] if isinstance(r, Reply))
    extension = tuple(
        r
        for r in service._queues["extension"][: service._cursors["extension"]]
        if isinstance(r, SynthesisReply)
    )
    base = simulation.result.scenario
    return base.model_copy(
        update={
            "model": ModelScript(agent=agent, extension=extension),
            "faults": plan if plan is not None else _fired(simulation, case),
            "operations": operations,
        }
    )


def _heal(simulation: Simulation, case: ExploreCase) -> FaultPlan:
    """Faults heal: no more faulty replies or filesystem faults, no pending crash or tamper.

    Returns the faults that fired before healing (nothing fires after it)."""
    plan = _fired(simulation, case)
    host = simulation.host
    service = host.service
    service._queues["agent"] = [*service._queues["agent"][: service._cursors["agent"]], *case.liveness_agent]
    service._queues["extension"] = service._queues["extension"][: service._cursors["extension"]]
    counters = []
    for counter in host.monitor._counters:
        if counter.fired:
            counter.fault = counter.fault.model_copy(update={"times": counter.fired})
            counters.append(counter)
    host.monitor._counters = counters
    for trigger in host.trace._triggers:
        trigger.fired = True
    return plan


def _needs_restart(simulation: Simulation, case: ExploreCase) -> bool:
    """Whether the liveness phase must restore the settings and restart Pi first.

    Only when Pi is down, or its live native settings for the main model are not the case's
    own: otherwise the liveness phase runs in the same process, so an implementation whose
    in-memory state got stuck during the fault phase cannot hide behind a fresh start.
    """
    host = simulation.host
    runtime = host.runtime
    if runtime is None or host.crashed or not host.running:
        return True
    model = host.catalog.find_full(MAIN)
    try:
        live = runtime.settings.get_compaction_settings(model)
    except Exception:  # invalid settings: restore and restart
        return True
    wanted = (True, case.options.reserve, KEEP_RECENT)
    return (live.enabled, live.reserve_tokens, live.keep_recent_tokens) != wanted


def liveness_operations(case: ExploreCase, restart: bool) -> tuple[Any, ...]:
    """The liveness phase: with ``restart``, restore the settings file and restart Pi first."""
    return case.liveness if restart else case.liveness[2:]


def run_case(
    case: ExploreCase,
    *,
    implementation: str | ExtensionFactory = "reference",
    workdir: str | Path,
) -> CaseResult:
    """Run ``case``; stop after the operation that broke the first invariant."""
    started = time.perf_counter()
    scenario = case.scenario(operations=case.operations)
    simulation = Simulation(scenario, workdir=workdir, implementation=implementation)
    checker = InvariantChecker(simulation, markers=case.markers)
    ran: list[Any] = []
    boundary: int | None = None
    healed: Scenario | None = None
    plan: FaultPlan | None = None
    status = "not reached"

    def perform(op: Any) -> bool:
        checker.before_operation(op)
        simulation.perform(op)
        checker.after_operation()
        ran.append(op)
        return checker.ok

    try:
        try:
            simulation.start()
        except ProcessStartError as error:
            checker.violations.append(Violation(LOAD_FAILURE, f"Pi refused to start: {error}"))
        checker.after_operation()
        going = checker.ok
        for op in case.operations:
            if not going:
                break
            going = perform(op)
        if going and case.liveness:
            restart = _needs_restart(simulation, case)
            plan = _heal(simulation, case)
            boundary = len(ran)
            for op in liveness_operations(case, restart):
                if not going:
                    break
                going = perform(op)
            if going:
                if not case.liveness_applies:
                    why = (
                        "untrusted project"
                        if case.base.get("trust") == "never"
                        else f"competitor {case.options.competitor}"
                    )
                    status = f"not applicable ({why})"
                else:
                    status = "ok" if checker.check_liveness(boundary) is None else "failed"
        healed = _frozen(simulation, case, tuple(ran), plan)
    finally:
        result = simulation.finish()
    assert healed is not None
    return CaseResult(
        case=case,
        implementation=result.implementation,
        violations=list(checker.violations),
        harness_errors=list(checker.harness_errors),
        operations_run=len(ran),
        liveness=status,
        checkpoints=list(checker.checkpoints),
        healed=healed,
        first_healed_operation=boundary,
        trace=result.trace_text(),
        seconds=time.perf_counter() - started,
        records=len(result.host.trace.records),
    )
