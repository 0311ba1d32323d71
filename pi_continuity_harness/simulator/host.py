"""The simulated Pi machine and its process: directories, model, UI, trace, faults, host tasks.

A :class:`SimHost` is one *machine*: its directories, the scripted model (which outlives
Pi, like the fake server), the UI hub (like an RPC client) and the trace. It runs one Pi
*process* at a time; each process holds one :class:`Runtime` (Pi's ``AgentSessionRuntime``:
settings, session, extension instances), replaced on reload and new session, rebuilt on
restart, and gone after a crash (nothing more happens; files stay exactly as they are).

This module keeps what the machine itself does: the host tasks and :meth:`SimHost.quiesce`
(the RPC client waiting for every response), the host's own file operations (session lines,
built-in tools' reads and writes, untraced by the monitor), crashes and the fault plan's
triggers, a held call's or dialog's ``during`` operations, ``ctx.shutdown()`` as each mode acts
on it (rpc-mode.js:275-279, 609-613; interactive-mode.js:3117-3121, 3739-3743), the budget
report and the virtual file times. Its other jobs each have a module, the host keeping one-line
delegates for their public names:

* :mod:`.host_runtimes`: start, reload, new session, fork, quit (``AgentSessionRuntime``,
  agent-session-runtime.js; ``AgentSession.reload``, agent-session.js:3104-3141);
* :mod:`.host_bindings`: each runtime's extension runner and what its ``pi``/``ctx`` calls
  reach (``_bindExtensionCore``, agent-session.js:2848-2975);
* :mod:`.host_operations`: a scenario operation as an RPC client sends it (rpc-mode.js:312-587);
* :mod:`.host_shared`: :class:`Runtime`, :class:`OperationResult`, :class:`ProcessStartError`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, Literal

from pi_continuity_harness.api.extension_api import ExtensionFactory, Mode, Model
from pi_continuity_harness.scenario.budget import Budget
from pi_continuity_harness.scenario.faults import FaultPlan
from pi_continuity_harness.scenario.fs_monitor import FilesystemMonitor
from pi_continuity_harness.scenario.layout import pi_package_path
from pi_continuity_harness.scenario.model_script import (
    PLAIN_REPLIES,
    ExtensionReplies,
    ModelRequest,
    ModelScript,
)
from pi_continuity_harness.scenario.observed import summary_files
from pi_continuity_harness.scenario.operations import (
    Operation,
)
from pi_continuity_harness.scenario.trace import SimulatedCrash, Trace
from pi_continuity_harness.scenario.workspace import HostPaths, write_file
from pi_continuity_harness.simulator.agent_session import PromptRejectedError
from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.host_operations import HostOperations
from pi_continuity_harness.simulator.host_runtimes import HostRuntimes
from pi_continuity_harness.simulator.host_shared import OperationResult, ProcessStartError, Runtime
from pi_continuity_harness.simulator.json_copy import EventCopies
from pi_continuity_harness.simulator.meter import Meter
from pi_continuity_harness.simulator.model_service import ModelCatalog, ScriptedModelService
from pi_continuity_harness.simulator.ui import UIHub
from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop, start_eagerly
from pi_continuity_harness.simulator.virtual_root import disk_path

__all__ = ["HostPaths", "OperationResult", "ProcessStartError", "Runtime", "SimHost"]


class SimHost:
    """One simulated machine running (at most) one Pi process."""

    def __init__(
        self,
        *,
        workdir: str,
        seed: int,
        models: list[Model],
        active_model: str,
        script: ModelScript,
        extensions: list[tuple[str, ExtensionFactory]],
        mode: Mode = "rpc",
        approve: bool | None = None,
        thinking_level: str = "off",
        unauthenticated_providers: frozenset[str] = frozenset(),
        faults: FaultPlan | None = None,
        replies: ExtensionReplies = PLAIN_REPLIES,
        disk_workdir: str | None = None,
        budget: Budget | None = None,
        session_id: str | None = None,
        persist_sessions: bool = True,
    ) -> None:
        #: The machine's directories as the host and its extensions see them.
        self.paths = HostPaths.under(workdir)
        #: The same directories on disk (``disk_workdir``: where ``workdir``, a virtual root,
        #: leads; see ``virtual_root.py``), for readers outside the simulation.
        self.disk = HostPaths.under(disk_workdir or workdir)
        #: The Pi package directory Pi names in its system prompt (``scenario/layout.py``).
        self.package_dir = pi_package_path(self.paths.workdir)
        #: The scenario's budget, charged by the event loop and by every trace record.
        self.meter = Meter(budget or Budget())
        #: False: ``--no-session`` (``SessionManager.inMemory``, session-manager.js:1385): no
        #: session file, and every new session is in memory too.
        self.persist_sessions = persist_sessions
        self.loop = VirtualTimeEventLoop(self.meter)
        self.clock = VirtualClock(self.loop)
        self.rng = SeededRandom(seed)
        aliases = (self.disk.workdir,) if self.disk.workdir != self.paths.workdir else ()
        self.trace = Trace(self.clock.loop_ms, self.paths.workdir, aliases=aliases)
        self.trace.before_emit.append(self.meter.charge)
        #: The operations running now, outermost first (``(index, name)``; None for ``during``).
        self.running_operations: list[tuple[int | None, str]] = []
        #: The operations job (:mod:`.host_operations`).
        self._operations = HostOperations(self)
        #: The runtimes job (:mod:`.host_runtimes`): start, reload, new session, fork, quit.
        self._runtimes = HostRuntimes(self)
        self.ui = UIHub(self.trace)
        self.ui.hold = self._run_dialog_during
        self.ui.track = self._track
        self.catalog = ModelCatalog(models, unauthenticated_providers)
        self.service = ScriptedModelService(
            script,
            self.trace,
            self.clock,
            self.catalog,
            replies=replies,
            run_during=self._run_during,
            root=self.paths.workdir,
        )
        self.active_model = active_model
        self.extensions = extensions
        self.mode: Mode = mode
        self.approve = approve
        self.thinking_level = thinking_level
        #: The scenario's level: what ``--thinking`` says when the process starts a new session.
        self.scenario_thinking_level = thinking_level
        #: The running process's ``--model`` and ``--thinking`` (None: not on its command line),
        #: set by each start (:meth:`.host_runtimes.HostRuntimes.start`).
        self.cli_model: str | None = None
        self.cli_thinking: str | None = None
        faults = faults or FaultPlan()
        self.faults = faults
        self.monitor = FilesystemMonitor(
            workdir=self.paths.workdir,
            placeholders={
                "$PROJECT": self.paths.project_dir,
                "$AGENT": self.paths.agent_dir,
                "$SESSIONS": self.paths.session_dir,
            },
            trace=self.trace,
            faults=faults.fs,
            on_crash=self.mark_crashed,
            aliases={alias: self.paths.workdir for alias in aliases},
            on_changed=self._file_changed,
        )
        #: Files whose content changed since the last operation boundary -> the virtual time
        #: of the change (see :meth:`stamp_changed_files`).
        self._changed_files: dict[str, int] = {}
        self.runtime: Runtime | None = None
        self.crashed = False
        #: The top-level operation running now, and what each held call's operations did:
        #: ``(request "<kind>#<index>", top-level operation, result)``.
        self.current_operation = 0
        self.held_outcomes: list[tuple[str, int, OperationResult]] = []
        #: Every session event as Pi's RPC mode writes it, across processes, when recording
        #: (``None``: not recorded; the target that compares observations turns it on).
        self.rpc_events: list[dict[str, Any]] | None = None
        self._rpc_copies = EventCopies()
        self.running = False
        self.last_session_file: str | None = None
        #: The last ``previousSessionFile`` a ``session_start`` of this process named (``switch_session``).
        self.previous_session_file: str | None = None
        #: Every session file a runtime of the run started in, in the order of its first start,
        #: across restarts (``switch_session: {to: N}``; the real-Pi target reads the observer's
        #: ``harness_session_file`` lines of the whole run).
        self.session_files: list[str] = []
        #: ``--session-id`` of the first start (``scenario/session_id.py``); a restart resumes by file.
        self._first_session_id = session_id
        self._tasks: set[asyncio.Task[Any]] = set()
        self._task_errors: list[BaseException] = []
        self._shutdown_requested_at: int | None = None
        self._crash_rules = [(rule, self.trace.on(rule.after, self._crash_trigger)) for rule in faults.crash]
        self._inject_rules = [
            (rule, self.trace.on(rule.after, self._inject_trigger(rule.operations))) for rule in faults.inject
        ]
        self._tamper_rules = [
            (rule, self.trace.on(rule.after, self._tamper_trigger(rule.path, rule.action)))
            for rule in faults.tamper
        ]

    # ================================================================= faults
    def fired_faults(self) -> FaultPlan:
        """The faults that fired so far: the plan that replays this run's faults exactly
        (filesystem faults capped at the times they fired; rules that never fired dropped)."""
        return FaultPlan(
            fs=self.monitor.fired_faults(),
            crash=tuple(rule for rule, trigger in self._crash_rules if trigger.fired),
            inject=tuple(rule for rule, trigger in self._inject_rules if trigger.fired),
            tamper=tuple(rule for rule, trigger in self._tamper_rules if trigger.fired),
        )

    def heal_faults(self) -> None:
        """From now on no fault fires: filesystem faults stay capped at what already fired, and
        crash, inject and tamper rules that have not fired never will."""
        self.monitor.heal()
        self.trace.disarm()

    # ================================================================= budget
    def still_running(self) -> list[str]:
        """What the host was doing (for a budget report), in a deterministic order."""
        out = []
        for index, name in self.running_operations:
            out.append(f"operation {index} {name}" if index is not None else f"operation {name} (during)")
        tasks = sorted(task.get_name() for task in self._tasks if not task.done())
        if tasks:
            out.append("host tasks: " + ", ".join(tasks))
        runtime = self.runtime
        if runtime is not None:
            session = runtime.session
            state = [
                label
                for label, on in (("streaming", session.is_streaming), ("compacting", session.is_compacting))
                if on
            ]
            if session.pending_message_count:
                state.append(f"{session.pending_message_count} queued messages")
            if state:
                out.append("Pi: " + ", ".join(state))
        return out or ["nothing (the host was between steps)"]

    # ================================================================= plumbing
    def spawn(self, coro: Coroutine[Any, Any, Any], label: str) -> asyncio.Task[Any]:
        task = self.loop.create_task(coro, name=label)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _track(self, task: asyncio.Task[Any]) -> None:
        """Make a task started elsewhere a host task (:meth:`quiesce` waits for it)."""
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, SimulatedCrash):
            self.mark_crashed()
        elif error is not None:
            self._task_errors.append(error)

    async def quiesce(self) -> None:
        """Wait until no host task is left (fire-and-forget prompts, ``ctx.compact()``)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))
        if self._task_errors:
            error = self._task_errors.pop(0)
            self._task_errors.clear()
            raise error

    def host_io(self) -> _HostIO:
        return _HostIO(self.monitor)

    def _write_session(self, path: str, text: str, mode: str) -> None:
        """Pi's write of session lines (``appendFileSync``/``writeFileSync``): ``mode`` ``"a"``
        appends, ``"x"`` creates a new file, ``"w"`` replaces the content.

        Through :func:`.workspace.write_file` (``os.open`` and ``os.write``, the flags and errors
        of ``open(path, mode)``): a text-mode ``open`` made an append of a 4.5 kB line take 20 us
        of CPU time where this takes 10 (1,557 writes in a run of the Pi Session Continuity
        suite, issue 16). The file is opened by its disk spelling (:func:`.virtual_root.disk_path`:
        the same file without the walk through ``/proc``, at every line Pi appends), the host's
        spelling only when that fails, so any error is as before."""
        if self.crashed:
            raise SimulatedCrash("the process is dead")
        with self.host_io():
            # The directory is made only when it is missing: every entry Pi appends comes here,
            # and ``makedirs`` on the existing directory (a stat, a refused mkdir, an exception)
            # was 2 % of an exploration (issue 16). A missing directory, or a file in its place,
            # takes the ``makedirs`` path as before, so the outcome and any error are the same.
            try:
                write_file(path, text, mode, on_disk=disk_path(path))
            except (FileNotFoundError, NotADirectoryError):  # only ``open`` raises these
                os.makedirs(os.path.dirname(path), exist_ok=True)
                write_file(path, text, mode)

    def _confine_tool(self, op: str, path: str) -> None:
        """A built-in tool's file stays in the run, as an extension's must (``FilesystemMonitor
        .confine``): a path outside it is refused with ``EACCES`` and an ``fs:refused`` record,
        and the tool fails as Pi's does on an unwritable path. The scenario loader refuses a
        scripted call's literal path outside the project (``model_script.ScriptedToolCall``);
        this also covers a path the model took from the run (``{{match:...}}``) and links.
        Real Pi would touch the path: the one deliberate difference, since nothing a scenario
        says may touch a file outside its run."""
        self.monitor.confine(op, path if os.path.isabs(path) else os.path.join(os.getcwd(), path))

    def _tool_write(self, path: str, content: str) -> None:
        """The native ``write`` tool: Pi writes the file (an effect the trace records)."""
        self._confine_tool("tool_write", path)
        with self.host_io():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
        self.trace.emit("fs", "tool_write", path=path, chars=len(content))

    def _tool_read(self, path: str) -> bytes:
        """The native ``read`` and ``edit`` tools' file read: Pi reads the file (``read.js``,
        ``edit.js``), not the extension. Recorded as ``tool_read`` like ``tool_write``, so a
        ``read`` record is always the extension's own, as on real Pi, where only the Python
        extension's file operations are observed. Bytes, as Node's ``readFile``: the tools
        decode them (a CRLF stays a CRLF; Python's text mode made it LF)."""
        self._confine_tool("tool_read", path)
        with self.host_io(), open(path, "rb") as handle:
            data = handle.read()
        self.trace.emit("fs", "tool_read", path=path, chars=len(data.decode("utf-8", errors="replace")))
        return data

    def _tool_remove(self, path: str) -> None:
        """``rm`` run by the native ``bash`` tool: Pi's child process removes the file."""
        self._confine_tool("tool_remove", path)
        with self.host_io():
            os.remove(path)
        self.trace.emit("fs", "tool_remove", path=path)

    def _summary_files(self, summary: str) -> list[str]:
        """The ``summaryFiles`` witness (``scenario/observed.py``): read as the host, so the
        monitor neither records nor faults it. The project is walked by its disk spelling
        (:func:`.virtual_root.disk_path`: the same files, without the walk through ``/proc`` at
        every directory listed and file read, at every compaction), and the files found are
        named as the host sees them."""
        root = self.paths.project_dir
        on_disk = disk_path(root)
        with self.host_io():
            found = summary_files(on_disk, summary)
        if on_disk == root:
            return found
        return [root + path[len(on_disk) :] for path in found]

    def _on_entry(self, entry: dict[str, Any], persisted: bool) -> None:
        self.trace.emit("entry", str(entry.get("type")), id=entry.get("id"), persisted=persisted)

    def mark_crashed(self) -> None:
        if self.crashed:
            return
        self.trace.emit("host", "crash")
        self.service.drop_in_flight()
        self.crashed = True
        self.running = False
        self.trace.frozen = True
        self.monitor.frozen = True
        current = asyncio.current_task(self.loop)
        for task in list(self._tasks):
            if task is not current:
                task.cancel()

    def _crash_trigger(self, record: dict[str, Any]) -> None:
        self.trace.emit("fault", "crash", after=f"{record['kind']}:{record['name']}")
        self.mark_crashed()
        raise SimulatedCrash(f"crash after {record['kind']}:{record['name']}")

    def _inject_trigger(self, operations: tuple[Operation, ...]) -> Callable[[dict[str, Any]], None]:
        def fire(record: dict[str, Any]) -> None:
            self.trace.emit(
                "fault", "inject", after=f"{record['kind']}:{record['name']}", operations=len(operations)
            )

            async def run() -> None:
                for op in operations:
                    await self.run_operation(op, during=True)

            # Right after the record: the operations start before the code that wrote it takes
            # another step (an abort's signals are set at once), and go on as a host task.
            self._track(start_eagerly(self.loop, run(), "injected"))
            if self.crashed:  # an injected crash: the code that wrote the record dies with Pi
                raise SimulatedCrash(f"crash injected after {record['kind']}:{record['name']}")

        return fire

    def _tamper_trigger(self, pattern: str, action: str) -> Callable[[dict[str, Any]], None]:
        def fire(record: dict[str, Any]) -> None:
            changed = self.monitor.tamper(pattern, action)
            self.trace.emit(
                "fault", "tamper", after=f"{record['kind']}:{record['name']}", action=action, paths=changed
            )

        return fire

    async def _run_during(self, operations: tuple[Operation, ...], request: ModelRequest) -> None:
        """Run a held call's ``during`` operations as a host task.

        The task is tracked like any other host task, so :meth:`quiesce` waits for it: an
        RPC client that sent ``compact`` while a reply streamed waits for the ``compact``
        response too, even when the held call was released (aborted) long before.
        """
        task = asyncio.current_task()
        if task is not None and task not in self._tasks:
            self._tasks.add(task)
            task.add_done_callback(self._task_done)
        label = f"{request.kind}#{request.index}"
        # The operation running when the call arrived (what the real target records too,
        # ``targets/realpi/pi_target.py`` ``_on_hold``), counted before any of them runs.
        operation = self.current_operation
        for op in operations:
            result = await self.run_operation(op, during=True)
            self.held_outcomes.append((label, operation, result))

    async def _run_dialog_during(self, operations: tuple[Operation, ...], method: str) -> None:
        """Run a dialog answer's ``during`` operations while the dialog is open (the extension
        awaits its answer meanwhile), and record their outcomes as a held call's are, under
        ``dialog:<method>`` (what PiTarget records from its RPC client's answer thread)."""
        operation = self.current_operation
        for op in operations:
            result = await self.run_operation(op, during=True)
            self.held_outcomes.append((f"dialog:{method}", operation, result))

    def _thinking_level_changed(self, level: str) -> None:
        """The session changed the thinking level (a model switch): the level a later runtime
        starts with and ``pi.getThinkingLevel()`` answers."""
        self.thinking_level = level

    def record_rpc(self, event: dict[str, Any]) -> None:
        """Keep a session event as RPC writes it (a JSON copy, :class:`.json_copy.EventCopies`:
        the objects it names change later). A crashed Pi writes nothing more: its stdout ends with
        the process, while the simulated code it was running still unwinds (``finally`` blocks
        emit ``agent_settled``, say)."""
        if self.rpc_events is not None and not self.crashed:
            self.rpc_events.append(self._rpc_copies.copy(event))

    def record_rpc_update(self, usage: Any, delta: Any) -> None:
        """:meth:`record_rpc` of a streamed delta's ``message_update`` (``{"type", "usage",
        "assistantMessageEvent"}``), copied without making the event first
        (:meth:`.json_copy.EventCopies.update`)."""
        if self.rpc_events is not None and not self.crashed:
            self.rpc_events.append(self._rpc_copies.update(usage, delta))

    def _request_shutdown(self) -> None:
        """``ctx.shutdown()``: noted now, carried out when Pi's mode would (:meth:`settle`)."""
        if self._shutdown_requested_at is None:
            self._shutdown_requested_at = len(self.trace.records)
        self.trace.emit("host", "shutdown_requested", mode=self.mode)

    def _shutdown_due(self) -> bool:
        """Whether Pi 1.6 quits now for an earlier ``ctx.shutdown()``, the host being settled.

        RPC mode quits as soon as no command is active and the session is idle
        (rpc-mode.js:609-613, 275-279): here, once the operation and all it started have
        settled. Interactive mode quits only at the next ``agent_settled`` after the request
        (interactive-mode.js:3117-3121, 3739-3743). Print and json mode never act on it.
        """
        since = self._shutdown_requested_at
        if since is None or not self.running or self.crashed:
            return False
        if self.mode == "rpc":
            return True
        if self.mode == "tui":
            return any(
                r["kind"] == "session" and r["name"] == "agent_settled" for r in self.trace.records[since:]
            )
        return False

    async def settle(self) -> None:
        """:meth:`quiesce`, then quit if an extension asked to and Pi would now."""
        await self.quiesce()
        if self._shutdown_due():
            self._shutdown_requested_at = None
            await self.stop()
            await self.quiesce()

    # ================================================================= lifecycle (:mod:`.host_runtimes`)
    async def start(self, session_file: str | None = None) -> None:
        """Start a Pi process: a new session, or ``--session <file>`` to resume one."""
        await self._runtimes.start(session_file)

    async def stop(self) -> None:
        """Quit (stdin EOF): ``session_shutdown{quit}``, then the process ends."""
        await self._runtimes.stop()

    async def restart(self) -> None:
        await self._runtimes.restart()

    async def reload(self) -> None:
        await self._runtimes.reload()

    async def new_session(
        self,
        *,
        parent_session: str | None = None,
        with_session: Callable[[Any], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        return await self._runtimes.new_session(parent_session=parent_session, with_session=with_session)

    def fork_messages(self) -> list[dict[str, str]]:
        """RPC ``get_fork_messages``: every user message entry with text, in file order."""
        return self._runtimes.fork_messages()

    async def fork(
        self,
        entry_id: str,
        position: Literal["before", "at"] = "before",
        *,
        with_session: Callable[[Any], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """RPC ``fork`` (position ``before``) or ``clone`` (position ``at``, the leaf), ``ctx.fork``."""
        return await self._runtimes.fork(entry_id, position, with_session=with_session)

    async def switch_session(
        self, session_path: str, *, with_session: Callable[[Any], Awaitable[None]] | None = None
    ) -> dict[str, Any]:
        """RPC ``switch_session``: resume ``session_path`` in this process."""
        return await self._runtimes.switch_session(session_path, with_session=with_session)

    def _require_runtime(self) -> Runtime:
        if self.runtime is None or not self.running:
            raise PromptRejectedError("Pi is not running")
        return self.runtime

    # ================================================================= operations
    async def run_operation(
        self, op: Operation, *, index: int | None = None, during: bool = False
    ) -> OperationResult:
        """Run one operation the way an RPC client would, and record its outcome
        (:meth:`.host_operations.HostOperations.run_operation`)."""
        return await self._operations.run_operation(op, index=index, during=during)

    def _file_changed(self, path: str) -> None:
        self._changed_files[path] = self.clock.current_ms()

    def stamp_laid_out_files(self, files: Iterable[str]) -> None:
        """Give every file laid out before Pi starts (``files``: what ``prepare_files`` wrote,
        the scenario's ``files`` and the settings the harness writes, which in the fresh
        machine are all its files) the virtual start time as its modification and access time,
        as :meth:`stamp_changed_files` does for the files changed while the run goes: blitz's
        ``/sh recover`` lists a recovery file the scenario placed with its date, which was the
        real minute of the run (found in stop 28: the same scenario and seed gave another trace
        a minute later). Links are not followed. The files are stamped as changed files are
        (:meth:`_file_changed`, then :meth:`stamp_changed_files`), at the clock's start.

        The list comes from the layout rather than from walking the machine (``os.walk``, a
        directory listing per directory, was a twentieth of starting a host, issue 16): the
        run directory was emptied and the machine made anew just before, so nothing else is
        there (``tests/simulator/test_virtual_file_times.py`` checks every laid-out file)."""
        with self.host_io():
            for path in files:
                self._file_changed(path)
        self.stamp_changed_files()

    def stamp_changed_files(self) -> None:
        """Give every file changed since the last call the virtual time of its change as its
        modification (and access) time.

        Extension code reads modification times: blitz's ``/sh recover`` lists each recovery
        file with its date (reference: "top-level recovery Markdown files/dates"). The real
        clock there made the simulator's dialogs, hence its traces, depend on the minute a run
        started: same seed, different bytes. Pi itself reads no modification time on this
        path, and ``Date.now()`` is already virtual (``determinism.VirtualClock``), so the
        simulated filesystem's clock is the same clock. Files are stamped at operation
        boundaries (before and after each operation) rather than at each write, since a file
        opened for writing is written (and its real time set) until it is closed. A path that
        no longer exists (a temporary file renamed into place) is skipped; symbolic links are
        not followed (a link never leads a stamp outside the run). Each file is stamped by its
        disk spelling (:func:`.virtual_root.disk_path`: the same file, without the walk through
        ``/proc``; five files a scenario).
        """
        if not self._changed_files:
            return
        with self.host_io():
            for path, ms in self._changed_files.items():
                ns = ms * 1_000_000
                try:
                    os.utime(disk_path(path), ns=(ns, ns), follow_symlinks=False)
                except OSError:
                    continue
        self._changed_files.clear()


class _HostIO:
    """Marks file operations as the host's own, so the monitor neither traces nor faults them."""

    def __init__(self, monitor: FilesystemMonitor) -> None:
        self.monitor = monitor

    def __enter__(self) -> None:
        self.monitor.host_io += 1

    def __exit__(self, *exc: object) -> None:
        self.monitor.host_io -= 1
