"""SimTarget: the conformance suite against the simulated Pi 1.6 host.

It runs any Python extension factory (the reference by default) in a
:class:`~pi_continuity_harness.simulator.simulation.Simulation` and reads observations from
its trace, so it sees exactly what an RPC client plus the observer extension see on real
Pi, and a little more (the trace itself, for reports).

It also plays a scenario file with a system's :class:`RunChecker` watching
(:meth:`SimTarget.run_checked`): the checker is attached before Pi starts, so it sees every
trace record as it is written. Checkers are plug-ins: the factory for a system is the entry
point of that name in :data:`~.target.RUN_CHECKERS_GROUP` (the explorer registers its own).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from pi_continuity_harness import PI_VERSION, __version__
from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.implementations import (
    System,
    declared_system,
    entry_points_of,
    resolve_implementation,
    system_named,
)
from pi_continuity_harness.scenario.model_script import Reply, RequestKind, SynthesisReply
from pi_continuity_harness.scenario.operations import Operation
from pi_continuity_harness.scenario.workspace import as_path, path_of
from pi_continuity_harness.simulator.host import ProcessStartError
from pi_continuity_harness.simulator.meter import BudgetExceededError
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.simulator.virtual_root import disk_path as _disk_path
from pi_continuity_harness.targets.sim_trace import TraceReading, restore_paths
from pi_continuity_harness.targets.target import (
    CAPABILITIES,
    RUN_CHECKERS_GROUP,
    CheckedRun,
    HeldOutcome,
    Observation,
    ObservedCounts,
    ObservedRequest,
    OperationOutcome,
    TargetBudgetError,
    TargetStartError,
    TargetUnavailableError,
)

__all__ = ["RunChecker", "RunCheckerFactory", "SimTarget", "load_run_checker"]


class RunChecker(Protocol):
    """A system's invariants watching a simulated run (the explorer's checker, for example).

    The factory attaches it to the simulation before Pi starts; :meth:`after_operation` is also
    called once right after the start."""

    @property
    def invariants(self) -> frozenset[str]:
        """Every invariant name it checks (``liveness`` and the load check included)."""

    def before_operation(self, op: Operation) -> None: ...

    def after_operation(self) -> None: ...

    def finish(self) -> None:
        """The run is over (Pi still up): check what only the whole run can show."""

    def found(self) -> list[tuple[str, str]]:
        """``(invariant, what was seen)`` per violation so far, in order."""

    def errors(self) -> list[str]:
        """The checker's own failures."""

    def liveness(self, first_healed_operation: int) -> str | None:
        """Why the run made no progress after the faults healed before that operation; None if it did."""


RunCheckerFactory = Callable[[Simulation], RunChecker]


def load_run_checker(system: str) -> RunCheckerFactory:
    """The run checker factory registered for ``system`` (entry point of :data:`RUN_CHECKERS_GROUP`)."""
    points = entry_points_of(RUN_CHECKERS_GROUP)
    if system not in points:
        raise TargetUnavailableError(f"no run checker is registered for {system} ({RUN_CHECKERS_GROUP})")
    factory: RunCheckerFactory = points[system].load()
    return factory


class SimTarget:
    """The simulated host behind the Target seam."""

    name = "sim"

    def __init__(
        self,
        implementation: str | ExtensionFactory,
        workdir: str | Path,
        *,
        seed: int | None = None,
        system: str | None = None,
        budget: BudgetOverride | None = None,
    ) -> None:
        self._implementation = implementation
        self._workdir = as_path(workdir)
        self._seed = seed
        self._system = system
        self._budget = budget
        self._simulation: Simulation | None = None
        #: What ``observe()`` has read of the simulation's trace (``sim_trace.py``).
        self._reading: TraceReading | None = None
        #: The simulation's directories as ``observe()`` hands them out (see :meth:`_dirs`).
        self._observed_dirs: tuple[Path, Path, Path, Path] | None = None

    def _system_of_implementation(self) -> System:
        """``system`` when given, else what the implementation's factory declares."""
        if self._system is not None:
            return system_named(self._system)
        _name, factory = resolve_implementation(self._implementation)
        return declared_system(factory)

    @property
    def implementation(self) -> str:
        if isinstance(self._implementation, str):
            return self._implementation
        return f"{self._implementation.__module__}:{self._implementation.__qualname__}"

    @property
    def simulation(self) -> Simulation:
        if self._simulation is None:
            raise RuntimeError("the target has not been started")
        return self._simulation

    def capabilities(self) -> frozenset[str]:
        return frozenset(CAPABILITIES)

    def start(self, scenario: Scenario) -> None:
        """Start the simulation of ``scenario``."""
        self._start(scenario, None)

    def _start(self, scenario: Scenario, attach: Callable[[Simulation], None] | None) -> None:
        """Start the simulation; ``attach`` is handed it before Pi starts, so a run checker sees
        every trace record."""
        if self._budget is not None:
            scenario = scenario.model_copy(update={"budget": self._budget.apply(scenario.budget)})
        self._simulation = Simulation(
            scenario,
            workdir=self._workdir,
            seed=self._seed,
            implementation=self._implementation,
            replies=self._system_of_implementation().extension_replies if self._system else None,
        )
        self._simulation.host.rpc_events = []
        self._reading = None
        self._observed_dirs = None
        if attach is not None:
            attach(self._simulation)
        try:
            self._simulation.start()
        except ProcessStartError as error:
            self._simulation.finish()  # the process is gone: write the trace, release the loop
            raise TargetStartError(str(error)) from error
        except BudgetExceededError as error:
            self._simulation.finish()
            raise TargetBudgetError(error.report) from None

    def run_checked(self, scenario: Scenario) -> CheckedRun:
        """Play ``scenario``'s operations with the system's run checker watching every effect."""
        make_checker = load_run_checker(self._system_of_implementation().name)
        checker: RunChecker | None = None

        def attach(simulation: Simulation) -> None:
            nonlocal checker
            checker = make_checker(simulation)

        self._start(scenario, attach)
        assert checker is not None
        checker.after_operation()
        for op in scenario.operations:
            checker.before_operation(op)
            self.perform(op)
            checker.after_operation()
        checker.finish()
        return CheckedRun(
            invariants=checker.invariants,
            violations=tuple(checker.found()),
            harness_errors=tuple(checker.errors()),
            liveness=checker.liveness,
        )

    def perform(self, op: Operation) -> OperationOutcome:
        try:
            result = self.simulation.perform(op)
        except BudgetExceededError as error:
            raise TargetBudgetError(error.report) from None
        return OperationOutcome(result.name, result.ok, result.error, result.disposition)

    def script(self, kind: RequestKind, replies: Iterable[Reply | SynthesisReply]) -> None:
        self.simulation.host.service.extend(kind, list(replies))

    def disk_path(self, path: str) -> str:
        """``path``, one the host sees (below its virtual root), spelt on disk: the same file,
        reached without the walk through ``/proc/self/fd`` (``simulator/virtual_root.py``:
        ``disk_path``); any other path unchanged. For the world's reads of the project and the
        artifacts (``features/world.py``), which name the paths they found as the host does."""
        self.simulation.view.activate()
        return _disk_path(path)

    def project_dir(self) -> Path:
        # The host's fixed virtual root leads to this run's files once its view is active (see
        # observe() below).
        self.simulation.view.activate()
        return self._dirs()[0]

    def observe(self) -> Observation:
        # The observation's paths are the host's (its fixed virtual root, ``virtual_root.py``);
        # they lead to this run's files until another simulation in this process takes the root.
        self.simulation.view.activate()
        host = self.simulation.host
        paths = host.paths
        project_dir, agent_dir, session_dir, machine_dir = self._dirs()
        observation = Observation(
            target=self.name,
            project_dir=project_dir,
            agent_dir=agent_dir,
            session_dir=session_dir,
            machine_dir=machine_dir,
        )
        for outcome in self.simulation.result.operations:
            observation.operations.append(
                OperationOutcome(outcome.name, outcome.ok, outcome.error, outcome.disposition)
            )
        observation.rpc_events = list(host.rpc_events or [])
        observation.held_operations = [
            HeldOutcome(label, operation, OperationOutcome(r.name, r.ok, r.error, r.disposition))
            for label, operation, r in host.held_outcomes
        ]
        workdir = paths.workdir
        reading = self._reading
        if reading is None:
            reading = self._reading = TraceReading(workdir)
        reading.catch_up(host.trace.records)
        observation.session_events = list(reading.session_events)
        observation.extension_events = list(reading.extension_events)
        observation.dialogs = list(reading.dialogs)
        observation.fs_events = list(reading.fs_events)
        observation.command_output = list(reading.command_output)
        # As PiTarget reads them from RPC (``_observe_event``): the message and the status text
        # as strings (an extension may pass any JSON).
        observation.notifications = [(str(n.message), str(n.notify_type)) for n in host.ui.notifications]
        observation.statuses = {key: str(text) for key, text in host.ui.statuses.items()}
        observation.widgets = [restore_paths(dict(w), workdir) for w in host.ui.widget_updates]
        aborted = reading.aborted
        observation.model_requests = [
            ObservedRequest(req.kind, req.index, req, (req.kind, req.index) in aborted)
            for req in host.service.requests
        ]
        runtime = host.runtime
        if runtime is not None and host.running:
            for loaded in runtime.runner.extensions:
                observation.commands.setdefault(loaded.path, []).extend(loaded.commands)
        if runtime is not None and not host.crashed:
            manager = runtime.session_manager
            observation.entries = manager.get_entries()
            observation.session_id = manager.get_session_id()
            file = manager.get_session_file()
            observation.session_file = path_of(file) if file else None
        elif runtime is not None or host.last_session_file:
            # Pi is not running: what is left of its session is the file it wrote, as the
            # real-Pi target reads it (``PiTarget.observe``), and an in-memory session leaves no
            # entry. A crashed process's runtime stays, but answers nothing: read from it, the
            # simulator's observation kept entries no real-Pi observation can see (differential
            # exploration of the continuity cases, seed 18, 7 December 2026).
            file = (
                runtime.session_manager.get_session_file() if runtime is not None else host.last_session_file
            )
            observation.session_file = path_of(file) if file else None
            lines = observation.session_file_entries()
            observation.entries = lines[1:]
            known = runtime.session_manager.get_session_id() if runtime is not None else None
            observation.session_id = lines[0].get("id") if lines else known
        return observation

    def observed_counts(self) -> ObservedCounts | None:
        """``ObservedCounts.of(self.observe())`` without making the observation, or None when
        only the observation can tell (Pi stopped after writing a session file: its entries are
        read from that file).

        A step marks what was seen before its action (``features/steps/common.py``:
        ``current_mark``), and the action's operation makes that observation stale at once: a
        third of the observations of a suite run were made for a mark and thrown away, 0.8 % of
        the run's CPU time (issue 16). The counts are the lengths :meth:`observe` gives: the
        trace-derived events as its :class:`TraceReading` reads them (the same reading, caught
        up), the model requests, notifications and entries from the host as it takes them."""
        host = self.simulation.host
        runtime = host.runtime
        if runtime is not None and not host.crashed:
            entries = len(runtime.session_manager.get_entries())
        elif host.last_session_file or host.crashed:
            return None
        else:
            entries = 0
        reading = self._reading
        if reading is None:
            reading = self._reading = TraceReading(host.paths.workdir)
        reading.catch_up(host.trace.records)
        return ObservedCounts(
            len(reading.session_events),
            len(reading.extension_events),
            len(host.service.requests),
            entries,
            len(host.ui.notifications),
            len(reading.dialogs),
            len(reading.command_output),
        )

    def _dirs(self) -> tuple[Path, Path, Path, Path]:
        """The project, agent, session and machine directories as ``Path`` objects, made once per
        simulation: the host's directories never change (``SimHost.paths``, ``.disk``), a
        ``Path`` is immutable, and building the four anew was a third of each ``observe()``
        (three or four per scenario of the suite). The host's three are the same strings in
        every simulation (its fixed virtual root), so their ``Path`` objects are too
        (:func:`~.workspace.path_of`)."""
        dirs = self._observed_dirs
        if dirs is None:
            host = self.simulation.host
            paths = host.paths
            dirs = self._observed_dirs = (
                path_of(paths.project_dir),
                path_of(paths.agent_dir),
                path_of(paths.session_dir),
                Path(host.disk.workdir),
            )
        return dirs

    def versions(self) -> dict[str, str]:
        return {
            "harness": __version__,
            "host": f"pi-continuity-harness simulator (Pi {PI_VERSION} model)",
            "python": platform.python_version(),
            "os": platform.platform(),
        }

    def close(self) -> None:
        if self._simulation is not None and not self._simulation.finished:
            self._simulation.finish()

    def close_deferring_writes(self) -> Callable[[], None] | None:
        """Close, writing neither ``trace.jsonl`` nor ``requests/*.json``; return what writes
        them (the same bytes, ``Simulation.finish``), or None when there is nothing to write.

        For a scenario whose directory is removed unread when the run passes (a temporary run):
        encoding every model request was a tenth of a passing scenario's CPU time, encoding and
        writing the trace another 3 % (issue 16). The writer holds the run directory, the
        trace and the exchanges, not the host."""
        simulation = self._simulation
        if simulation is None or simulation.finished:
            return None
        return simulation.finish(requests=False, trace=False).deferred_writer()
