"""Run one case incrementally on the simulated host, with every invariant checked.

:func:`run_case` starts a :class:`~pi_continuity_harness.simulator.simulation.Simulation` of
the case's scenario with the plug-in's checker attached, and performs the fault-phase
operations one at a time, stopping after the first that breaks an invariant. Then, when the
plug-in has a liveness phase, the faults *heal*: the model script is cut to the replies
already used (the phase's replies answer every later request), filesystem faults are capped
at the times they already fired, and crash, inject and tamper rules that have not fired are
dropped (``SimHost.heal_faults``). The phase runs, and the plug-in's checker judges whether
the system made progress. Last, the checker sees the end of the run.

Healing only removes what the run has not used yet, so the *healed scenario* — the case's
scenario with the script cut to what was consumed and the faults to what fired — replays the
very same run from a file: ``pi-continuity-harness replay`` reproduces its trace byte for
byte. That is the scenario a failure is written out as.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.plugin import (
    LOAD_FAILURE,
    WITHIN_BUDGET,
    Case,
    Checker,
    ExplorerPlugin,
    Violation,
)
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.faults import FaultPlan
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import Operation
from pi_continuity_harness.scenario.owned_dirs import owned_temporary_directory
from pi_continuity_harness.simulator.determinism import EPOCH_MS, SeededRandom
from pi_continuity_harness.simulator.host import ProcessStartError
from pi_continuity_harness.simulator.meter import BudgetExceededError
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult

__all__ = ["CaseResult", "first_session_id", "probe_session_id", "run_case", "scratch_root"]


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

    case: Any
    implementation: str
    violations: list[Violation]
    harness_errors: list[str]
    operations_run: int
    liveness: str
    healed: Scenario
    first_healed_operation: int | None
    #: The trace (JSON lines), or what makes it when it is first read (:attr:`trace`).
    trace_source: str | Callable[[], str]
    seconds: float
    records: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    #: Writes the run's ``requests/*.json`` when ``run_case`` was told not to (None: written).
    _write_requests: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def trace(self) -> str:
        """The run's trace as JSON lines, encoded when first read (``explore`` never reads a
        passing seed's, unless it checks determinism)."""
        if not isinstance(self.trace_source, str):
            self.trace_source = self.trace_source()
        return self.trace_source

    def write_requests(self) -> None:
        """Write the run's ``requests/*.json`` and ``trace.jsonl`` into its directory, if they
        are not there yet (``run_case(..., requests=False)``): for a run whose directory is kept."""
        if self._write_requests is not None:
            self._write_requests()
            self._write_requests = None

    @property
    def failed(self) -> bool:
        return bool(self.violations or self.harness_errors)

    @property
    def first(self) -> Violation | None:
        return self.violations[0] if self.violations else None


def first_session_id(seed: int) -> str:
    """The id of the first session a run with ``seed`` creates (it depends on the seed only).

    It is the run's first random draw: the new session's UUIDv7 at the virtual clock's first
    millisecond (``SessionManager``, ``session_manager.py:270``; nothing draws before it). Said
    here without starting a host, which cost every blitz seed (and every planted continuity
    seed) a whole simulated start, 2-3 % of an exploration (issue 16);
    :func:`probe_session_id` starts one, and ``tests/explore/test_first_session_id.py`` checks
    that the two agree."""
    return SeededRandom(seed).uuid7(EPOCH_MS)


def probe_session_id(seed: int) -> str:
    """:func:`first_session_id` as a started host says it (a run of an extension that does nothing)."""
    with owned_temporary_directory("pch-session-id-", scratch_root()) as directory:
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


def _healed_scenario(
    simulation: Simulation, operations: tuple[Operation, ...], plan: FaultPlan | None
) -> Scenario:
    """The run's scenario with the script cut to the replies used and the faults to those that
    fired (``plan``: the faults as they stood when they healed), and the operations that ran."""
    service = simulation.host.service
    base = simulation.result.scenario
    script = base.model.model_copy(
        update={
            "agent": tuple(r for r in service.used("agent") if isinstance(r, Reply)),
            "summary": tuple(r for r in service.used("summary") if isinstance(r, Reply)),
            "extension": tuple(r for r in service.used("extension") if isinstance(r, SynthesisReply)),
        }
    )
    faults = plan if plan is not None else simulation.host.fired_faults()
    return base.model_copy(update={"model": script, "faults": faults, "operations": operations})


def run_case(
    plugin: ExplorerPlugin[Any],
    case: Case,
    *,
    implementation: str | ExtensionFactory,
    workdir: str | Path,
    budget: BudgetOverride | None = None,
    requests: bool = True,
) -> CaseResult:
    """Run ``case``; stop after the operation that broke the first invariant, or where the run
    exceeded its budget (``budget`` overrides the scenario's: ``--budget-ops`` ...).

    ``requests=False``: the run directory gets no ``requests/*.json`` and no ``trace.jsonl``
    until :meth:`CaseResult.write_requests` (``explore`` removes a passing seed's directory, so
    it writes them only for a run it keeps); everything else the run writes is the same."""
    started = time.perf_counter()
    scenario = case.scenario(operations=case.operations)
    if budget is not None:
        scenario = scenario.model_copy(update={"budget": budget.apply(scenario.budget)})
    simulation = Simulation(scenario, workdir=workdir, implementation=implementation)
    checker: Checker = plugin.checker(simulation)
    ran: list[Operation] = []
    boundary: int | None = None
    healed: Scenario | None = None
    plan: FaultPlan | None = None
    status = "not reached"

    def over_budget(error: BudgetExceededError) -> bool:
        checker.violations.append(Violation(WITHIN_BUDGET, error.report, operation=len(ran)))
        return False

    def perform(op: Operation) -> bool:
        checker.before_operation(op)
        try:
            simulation.perform(op)
        except BudgetExceededError as error:
            ran.append(op)
            return over_budget(error)
        checker.after_operation()
        ran.append(op)
        return checker.ok

    try:
        try:
            simulation.start()
        except ProcessStartError as error:
            checker.violations.append(Violation(LOAD_FAILURE, f"Pi refused to start: {error}"))
        except BudgetExceededError as error:
            over_budget(error)
        checker.after_operation()
        going = checker.ok
        for op in case.operations:
            if not going:
                break
            going = perform(op)
        phase = plugin.liveness_phase(simulation, case) if going else None
        if going and phase is None:
            status = "none (no liveness phase)"
        elif phase is not None:
            plan = simulation.host.fired_faults()
            simulation.host.heal_faults()
            for kind, replies in phase.replies.items():
                simulation.host.service.replace_unused(kind, replies)
            boundary = len(ran)
            for op in phase.operations:
                if not going:
                    break
                going = perform(op)
            if going:
                if not phase.applies:
                    status = f"not applicable ({phase.why_not})"
                else:
                    status = "ok" if checker.check_liveness(boundary) is None else "failed"
        if going:
            checker.finish()
        healed = _healed_scenario(simulation, tuple(ran), plan)
    finally:
        result = simulation.finish(requests=requests, trace=requests)
    assert healed is not None
    return CaseResult(
        case=case,
        implementation=result.implementation,
        violations=list(checker.violations),
        harness_errors=list(checker.harness_errors),
        operations_run=len(ran),
        liveness=status,
        healed=healed,
        first_healed_operation=boundary,
        trace_source=result.trace_text if not requests else result.trace_text(),
        seconds=time.perf_counter() - started,
        records=len(result.host.trace.records),
        metrics=checker.metrics(),
        _write_requests=None if requests else functools.partial(_write_files, result),
    )


def _write_files(result: SimulationResult) -> None:
    """The files ``run_case(..., requests=False)`` left unwritten: trace and requests."""
    result.write_trace()
    result.write_requests()
