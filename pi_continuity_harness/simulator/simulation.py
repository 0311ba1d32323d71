"""Run a scenario on the simulated host: the one entry point for a simulation.

:func:`simulate` lays out a work directory, starts a simulated Pi process with the
scenario's extensions (the implementation under test in its place), runs the operations
in order (each until the host is quiet again, as an RPC client waits for
``agent_settled``), quits, and writes ``trace.jsonl``. Everything runs inside the virtual
event loop, with virtual time and seeded randomness, and with the filesystem monitor
active, so the same scenario and seed give byte-identical outputs.

The work directory is laid out by ``scenario.workspace.prepare_workdir``, which empties only
a directory a previous run created. The machine (``agent/``, ``project/``, ``sessions/``,
``tmp/``) lives in a directory inside it that the host sees as a fixed virtual root
(``virtual_root.py``), so the run gives the same bytes in any directory; ``trace.jsonl`` sits
beside it. The implementation under test is resolved, and its
system (which decides how the scripted model answers the extension's own model calls) looked
up, in ``scenario.implementations``: the same registry the real-Pi target asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import AGENT_DIR_ENV, CONFIG_DIR_NAME, ExtensionFactory
from pi_continuity_harness.scenario.budget import Budget
from pi_continuity_harness.scenario.competitors import competitor
from pi_continuity_harness.scenario.confine import confined_tempdir
from pi_continuity_harness.scenario.document import Scenario, ScenarioError
from pi_continuity_harness.scenario.fs_monitor import activate_monitor
from pi_continuity_harness.scenario.identity_memo import forget_runs
from pi_continuity_harness.scenario.implementations import (
    DEFAULT_IMPLEMENTATION,
    ImplementationError,
    declared_system,
    resolve_implementation,
)
from pi_continuity_harness.scenario.json_text import TextMemo, dumps_indented
from pi_continuity_harness.scenario.model_script import ExtensionReplies
from pi_continuity_harness.scenario.operations import Operation, operation_name
from pi_continuity_harness.scenario.run_lock import LOCK_NAME
from pi_continuity_harness.scenario.timeline import render_record
from pi_continuity_harness.scenario.trace import SimulatedCrash
from pi_continuity_harness.scenario.workspace import RUN_MARKER, make_dir, prepare_files, prepare_workdir
from pi_continuity_harness.simulator.determinism import deterministic_environment
from pi_continuity_harness.simulator.host import OperationResult, ProcessStartError, SimHost
from pi_continuity_harness.simulator.meter import BudgetExceeded, BudgetExceededError, Meter
from pi_continuity_harness.simulator.model_service import exchange_file
from pi_continuity_harness.simulator.virtual_root import MACHINE_DIR_NAME, VirtualRoot, disk_path

__all__ = [
    "RUN_ENTRIES",
    "Simulation",
    "SimulationResult",
    "project_cwd",
    "read_exchanges",
    "simulate",
    "write_exchanges",
]

#: What a run writes at the top of its run directory: the trace, the model exchanges, the
#: machine, the run marker and the lock. A command's own output may not be one of them (or
#: inside one): the run would replace it, or it the run's.
RUN_ENTRIES = ("trace.jsonl", "requests", MACHINE_DIR_NAME, RUN_MARKER, LOCK_NAME)


@dataclass
class SimulationResult:
    scenario: Scenario
    seed: int
    implementation: str
    #: The run directory on disk (``trace.jsonl``, the machine's directory).
    workdir: Path
    host: SimHost
    operations: list[OperationResult] = field(default_factory=list)
    #: Why the host saw the run's real directory instead of the fixed virtual root (then the
    #: outputs replay byte for byte only in the same directory); None when it saw the root.
    note: str | None = None
    #: The report of the budget the run exceeded (it was stopped there); None when it did not.
    over_budget: str | None = None

    @property
    def trace_path(self) -> Path:
        return self.workdir / "trace.jsonl"

    @property
    def machine_dir(self) -> Path:
        """The machine's files on disk (what the host sees as ``$WORK``)."""
        return Path(self.host.disk.workdir)

    def trace_text(self) -> str:
        return self.host.trace.to_jsonl()

    def write_requests(self) -> None:
        """Write ``requests/*.json`` into the run directory (see :meth:`Simulation.finish`);
        the same bytes whenever it is called once the run has finished."""
        write_exchanges(self.workdir, self.host.service.exchanges)

    def write_trace(self) -> None:
        """Write ``trace.jsonl`` into the run directory (see :meth:`Simulation.finish`); the
        same bytes whenever it is called once the run has finished."""
        self.trace_path.write_text(self.trace_text(), encoding="utf-8")

    def deferred_writer(self) -> Callable[[], None]:
        """What :meth:`write_trace` and :meth:`write_requests` do, for later: it holds the run
        directory, the trace and the exchanges, not the host (a writer kept until a session
        ends must not keep every scenario's host alive)."""
        workdir, trace_path = self.workdir, self.trace_path
        trace, exchanges = self.host.trace, self.host.service.exchanges

        def write() -> None:
            trace_path.write_text(trace.to_jsonl(), encoding="utf-8")
            write_exchanges(workdir, exchanges)

        return write

    def session_files(self) -> list[Path]:
        """The session files, on disk."""
        return sorted(Path(self.host.disk.session_dir).glob("*.jsonl"))

    def project_files(self) -> list[Path]:
        """The project's files, on disk."""
        root = Path(self.host.disk.project_dir)
        return sorted(p for p in root.rglob("*") if p.is_file())

    def output_files(self) -> dict[str, bytes]:
        """Every file the run produced: the machine's by their path below ``$WORK``
        (``sessions/...``, ``project/...``), the run's own (``trace.jsonl``) by name."""
        out: dict[str, bytes] = {}
        machine = self.machine_dir
        for path in sorted(self.workdir.rglob("*")):
            if not path.is_file() or path.name in (RUN_MARKER, LOCK_NAME):
                continue
            base = machine if path.is_relative_to(machine) else self.workdir
            out[str(path.relative_to(base))] = path.read_bytes()
        return dict(sorted(out.items()))


class Simulation:
    """A scenario run one operation at a time (the simulator behind a step-driven target).

    ``start`` lays out the machine and starts Pi; ``perform`` runs one operation until the
    host is quiet; ``finish`` quits, writes the trace and closes the loop. Each call runs
    inside the virtual loop with the determinism patches and the filesystem monitor.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        workdir: str | Path,
        seed: int | None = None,
        implementation: str | ExtensionFactory = DEFAULT_IMPLEMENTATION,
        replies: ExtensionReplies | None = None,
    ) -> None:
        forget_runs()  # the memos of the last run's messages (scenario/identity_memo.py)
        impl_name, impl_factory = resolve_implementation(implementation)
        extensions: list[tuple[str, ExtensionFactory]] = []
        for index, ref in enumerate(scenario.extensions):
            if ref.implementation:
                extensions.append((impl_name, impl_factory))
            elif ref.competitor is not None:
                extensions.append((f"competitor:{ref.competitor}", competitor(ref.competitor)))
            elif ref.module is not None:
                try:
                    extensions.append(resolve_implementation(ref.module, where=f"extensions[{index}].module"))
                except ImplementationError as error:
                    raise ScenarioError(str(error)) from None
        root = prepare_workdir(workdir)
        #: The fixed root the host sees, and the machine's directory on disk.
        self.view = VirtualRoot(root)
        made = make_dir(self.view.disk_root)
        #: The machine's directory with every link resolved: what the filesystem monitor's
        #: work directory, the virtual root, resolves to while a step runs (``_run``). A
        #: directory ``mkdir`` just made in the resolved run directory (``prepare_workdir``
        #: returns it resolved) is its own real path: ``realpath`` would ``lstat`` each of its
        #: components to find so, at every scenario's start (issue 16). One that was there
        #: already (``make_dir`` went to ``makedirs``) may be a link: resolved as before.
        self._real_root = self.view.disk_root if made else os.path.realpath(self.view.disk_root)
        run_seed = scenario.seed if seed is None else seed
        self.host = SimHost(
            workdir=self.view.root,
            disk_workdir=self.view.disk_root,
            seed=run_seed,
            models=[m.to_model() for m in scenario.models],
            active_model=scenario.active.id,
            script=scenario.model,
            extensions=extensions,
            mode=scenario.mode,
            approve=scenario.approve,
            thinking_level=scenario.thinking_level,
            unauthenticated_providers=frozenset(
                m.id.partition("/")[0] for m in scenario.models if not m.auth
            ),
            faults=scenario.faults,
            session_id=scenario.session_id,
            replies=replies or declared_system(impl_factory).extension_replies,
            budget=scenario.budget,
            persist_sessions=scenario.session == "file",
        )
        with self.view.host_view():
            laid_out = prepare_files(
                self.host.paths,
                scenario,
                canonical=lambda p: self.view.to_virtual(os.path.realpath(p)),
                on_disk=disk_path,
            )
            tmp = os.path.join(self.host.paths.workdir, "tmp")
            make_dir(tmp, on_disk=disk_path(tmp))
            self.host.stamp_laid_out_files(laid_out)
        host = self.host
        #: What every step enters after the host's view (:meth:`_run`), in that order: made once
        #: rather than at each of a run's steps (each holds what it restores only from its
        #: ``__enter__`` to its ``__exit__``, and steps never nest: a running loop refuses to
        #: run again).
        self._step_contexts = (
            project_cwd(host.paths.project_dir),
            activate_monitor(host.monitor, self._real_root),
            deterministic_environment(host.clock, host.rng),
            agent_dir_environment(host.paths.agent_dir),
            confined_tempdir(tmp),
        )
        self.result = SimulationResult(scenario, run_seed, impl_name, root, self.host, note=self.view.note)
        self.host.trace.emit(
            "host",
            "scenario",
            scenario=scenario.name,
            seed=run_seed,
            implementation=impl_name,
            configDir=CONFIG_DIR_NAME,
        )
        self.finished = False
        self._step = "the start of Pi"

    def _run(self, coro: Any, step: str) -> Any:
        host = self.host
        self._step = step
        if self.result.over_budget is not None:
            coro.close()
            raise BudgetExceededError(self.result.over_budget)
        cwd, monitor, environment, agent_dir, tempdir = self._step_contexts
        with self.view.host_view(), cwd, monitor, environment, agent_dir, tempdir:
            try:
                return host.loop.run_until_complete(coro)
            except BudgetExceeded as exceeded:
                raise BudgetExceededError(self._stop_over_budget(exceeded)) from None

    def _stop_over_budget(self, exceeded: BudgetExceeded) -> str:
        """Stop the host where the budget ran out; the report names the budget, what was still
        running and the last trace records (also recorded as ``host:budget_exceeded``)."""
        host = self.host
        host.meter.suspended = True
        records = host.trace.records
        running = [f"{self._step} (not settled yet)", *host.still_running()]
        report = (
            f"{self.result.scenario.name}: {exceeded.describe()} at virtual time "
            f"{host.loop.time():g} s, after {len(records)} trace records and "
            f"{host.meter.operations:,} host operations.\n"
            f"still running: {'; '.join(running)}\n"
            "last trace records:\n" + "".join(f"  {render_record(r)}\n" for r in records[-8:])
        )
        host.trace.emit(
            "host", "budget_exceeded", budget=exceeded.budget, limit=exceeded.limit, running=running
        )
        host.running = False
        host.trace.frozen = True
        host.monitor.frozen = True
        _cancel_leftovers(host)
        self.result.over_budget = report
        return report

    def start(self) -> None:
        """Start Pi; raises :class:`ProcessStartError` when it refuses to (an extension failed to load)."""

        async def go() -> None:
            try:
                await self.host.start()
                await self.host.settle()
            except SimulatedCrash:
                self.host.mark_crashed()

        self._run(go(), "the start of Pi")

    def perform(self, op: Operation) -> OperationResult:
        """Run one operation and wait until the host is quiet again."""
        index = len(self.result.operations)

        async def go() -> OperationResult:
            outcome = await self.host.run_operation(op, index=index)
            try:
                await self.host.settle()
            except SimulatedCrash:
                self.host.mark_crashed()
            return outcome

        outcome: OperationResult = self._run(go(), f"operation {index} {operation_name(op)}")
        self.result.operations.append(outcome)
        return outcome

    def finish(self, *, requests: bool = True, trace: bool = True) -> SimulationResult:
        """Quit Pi (if it still runs), write ``trace.jsonl`` and release the loop.

        ``requests``: also write ``requests/*.json`` (every model exchange in full). A caller
        that removes a passing run's directory (``explore``) passes False and calls
        :meth:`SimulationResult.write_requests` only for a run it keeps: the files are several
        MB per run, and encoding them was the largest single cost of an explored seed.
        ``trace`` False: ``trace.jsonl`` likewise waits for :meth:`SimulationResult.write_trace`
        (encoding and writing the trace of a run whose directory is removed was 4 % of an
        exploration, issue 16)."""
        if self.finished:
            return self.result
        self.finished = True
        host = self.host

        async def go() -> None:
            if host.running and not host.crashed:
                await host.stop()
                await host.quiesce()

        try:
            if self.result.over_budget is None:
                self._run(go(), "quitting Pi")
        except BudgetExceededError:
            pass  # quitting ran out of budget too: ``result.over_budget`` says so
        finally:
            with self.view.host_view():
                _cancel_leftovers(host)
            host.loop.close()
            self.view.release()
        host.trace.frozen = False
        if trace:
            self.result.write_trace()
        if requests:
            self.result.write_requests()
        return self.result


def simulate(
    scenario: Scenario,
    *,
    workdir: str | Path,
    seed: int | None = None,
    implementation: str | ExtensionFactory = DEFAULT_IMPLEMENTATION,
) -> SimulationResult:
    """Run ``scenario`` with ``implementation`` and write the trace into ``workdir``."""
    simulation = Simulation(scenario, workdir=workdir, seed=seed, implementation=implementation)
    try:
        # A refused start is traced (``host:start_failed``); every operation then finds Pi not running.
        with contextlib.suppress(ProcessStartError):
            simulation.start()
        for op in scenario.operations:
            simulation.perform(op)
    except BudgetExceededError:
        pass  # the run stops there; ``result.over_budget`` says why
    finally:
        result = simulation.finish()
    return result


class project_cwd:  # noqa: N801  (used as a context manager)
    """The process working directory is the project while the simulated Pi runs, as for
    extensions in real Pi (which runs in the project directory); restored afterwards.

    A class rather than a ``contextlib`` generator, as the other contexts of
    :meth:`Simulation._run` (every step of a simulation enters them all; a generator's context
    costs four times a class's). The directory is entered with ``os.chdir`` straight away
    instead of after ``os.path.isdir``: ``chdir`` succeeds exactly on a directory it can enter,
    which ``isdir`` then finds too; when it fails, ``isdir`` says which of the two outcomes of
    before it was: no directory (not entered, as before) or a directory ``chdir`` refuses (its
    error, as before)."""

    __slots__ = ("_entered", "_previous", "_project_dir")

    def __init__(self, project_dir: str) -> None:
        self._project_dir = project_dir

    def __enter__(self) -> None:
        self._previous = os.getcwd()
        # Entered by its disk spelling (:func:`.virtual_root.disk_path`): the same directory,
        # which ``os.getcwd`` reports by its real path either way, without the walk through
        # ``/proc`` at every step (issue 16). When that fails, the host's spelling is entered
        # as before, and its outcome (an error naming it, or no directory) is the outcome.
        try:
            os.chdir(disk_path(self._project_dir))
            self._entered = True
            return
        except OSError:
            pass
        try:
            os.chdir(self._project_dir)
        except OSError:
            if os.path.isdir(self._project_dir):
                raise
            self._entered = False
        else:
            self._entered = True

    def __exit__(self, *exc: object) -> None:
        if self._entered:
            os.chdir(self._previous)


class agent_dir_environment:  # noqa: N801  (used as a context manager)
    """``PI_CODING_AGENT_DIR`` points at the machine's agent directory while Pi runs, as the
    real-Pi target sets it for the Pi process: ``get_agent_dir()`` answers from it. (A class,
    as :class:`project_cwd`.)"""

    __slots__ = ("_agent_dir", "_previous")

    def __init__(self, agent_dir: str) -> None:
        self._agent_dir = agent_dir

    def __enter__(self) -> None:
        self._previous = os.environ.get(AGENT_DIR_ENV)
        os.environ[AGENT_DIR_ENV] = self._agent_dir

    def __exit__(self, *exc: object) -> None:
        if self._previous is None:
            # ``os.environ.pop(AGENT_DIR_ENV, None)`` without its read of the value it drops (a
            # third of the exit's cost, at every step); ``unsetenv`` of a name already gone
            # changes nothing. (Not ``contextlib.suppress``: a context object at every step.)
            try:  # noqa: SIM105
                del os.environ[AGENT_DIR_ENV]
            except KeyError:
                pass
        else:
            os.environ[AGENT_DIR_ENV] = self._previous


def write_exchanges(run_dir: Path, exchanges: list[dict[str, Any]]) -> None:
    """``requests/<kind>-<index>.json``: the full text of every model request and its reply
    (the trace's ``model`` records name the file), one indented JSON document per call.

    Each message is encoded once (a :class:`~.json_text.TextMemo` shared by the files): a
    request re-sends the conversation's earlier messages, the same objects, and nothing
    changes them while the files are written. Encoding each again made writing a 2,000-turn
    session's requests 16.7 of its 33.7 profiled seconds (``bench/bench_simulator.py``)."""
    memo = TextMemo(indent=1, ensure_ascii=False)
    made: set[Path] = set()  # each directory made once, not once per file
    for exchange in exchanges:
        path = run_dir / exchange_file(exchange["kind"], exchange["index"])
        if path.parent not in made:
            path.parent.mkdir(exist_ok=True)
            made.add(path.parent)
        path.write_text(
            dumps_indented(exchange, indent=1, ensure_ascii=False, memo=memo) + "\n", encoding="utf-8"
        )


def read_exchanges(run_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The ``requests/`` files of a run, by (kind, index) (empty when there are none)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for path in sorted((run_dir / "requests").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[(str(data["kind"]), int(data["index"]))] = data
    return out


#: Event-loop steps the cancelled tasks of a finished run may take to unwind.
_CLEANUP_STEPS = 10_000


def _cancel_leftovers(host: SimHost) -> None:
    pending = [t for t in asyncio.all_tasks(host.loop) if not t.done()]
    for task in pending:
        task.cancel()
    if not pending:
        return
    # Unwinding is bounded too: a task that swallows its cancellation and goes on is left behind.
    saved, host.loop.meter = host.loop.meter, Meter(Budget(operations=_CLEANUP_STEPS))
    gathered = asyncio.gather(*pending, return_exceptions=True)
    try:
        while not gathered.done():
            try:
                host.loop.run_until_complete(gathered)
            except RuntimeError:
                # A run stopped by a budget can leave its ``run_until_complete`` callback
                # scheduled; it stops this run once. Go on until everything unwound.
                continue
    except BudgetExceeded:
        pass
    finally:
        host.loop.meter = saved
