"""Where independent tasks run: this process, a local process pool, or a Dask cluster.

Exploration (one task per seed), differential exploration and the mutant kill matrix (one
task per mutant) each run many tasks that are pure functions of their arguments. They run
through one code path, :func:`run_tasks`, on a :class:`WorkPool`, which wraps a
:class:`concurrent.futures.Executor`:

* ``jobs == 1``, no scheduler: :class:`InProcessExecutor`, each task when it is submitted;
* ``jobs > 1``: :class:`concurrent.futures.ProcessPoolExecutor`;
* ``scheduler="tcp://HOST:PORT"``: Dask distributed (``pip install
  'pi-continuity-harness[scale]'``), through ``Client.get_executor()``, Dask's own
  ``concurrent.futures`` interface. Dask reschedules a task whose worker died; the scheduler
  logs that as a ``remove-worker`` event on its ``all`` topic, naming the tasks that were
  processing on the worker (``processing-tasks``) and the finished results that were lost with
  it (``lost-computed-tasks``); :meth:`WorkPool.retried` reads those events, so a report can
  say which tasks ran again.

Results come back in the order the tasks were given (each as soon as it and every task
before it finished), so a report is the same whatever ran it.

``ctypes``, ``multiprocessing`` and ``concurrent.futures.process`` are imported by the code
that starts a pool or a pool's child, not with this module: a run in this process (the
default) used none of them, and importing them was 0.3 % of a 10-seed exploration (issue 16).

A Dask worker runs a task in one of its threads, next to its own event loop thread, and a
simulation changes process-wide state while it runs (the working directory, ``time.time``,
``os.urandom``, audit hooks): run in a worker's thread, it stalled the worker's messages to the
scheduler and would draw the worker's random ids from the simulation's seeded source. So on
Dask every task runs in a child process of the worker (:func:`_in_child_process`: one per
worker thread, started once and reused), as it does in a local process pool.

Every worker must run this copy of the harness, and the same implementation under test: a
seed is a pure function of its arguments *and of the code that runs it*, and a worker with
another revision gave its seeds other verdicts, silently, in a report that claims to be the
local run's. :func:`.fingerprint.fingerprint` names both by the bytes of their sources;
:func:`open_pool` asks every worker for its own (``Client.run``) and refuses a cluster where one
differs, and each task checks it again on its worker (one that joined later).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.explore.fingerprint import MISSING, fingerprint, harness_fingerprint

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "InProcessExecutor",
    "SchedulerError",
    "WorkPool",
    "harness_fingerprint",
    "open_pool",
    "run_tasks",
    "scheduler_problem",
]

T = TypeVar("T")
R = TypeVar("R")


class SchedulerError(HarnessError, RuntimeError):
    """The Dask scheduler cannot be used (not installed, not reachable)."""


def _mismatch(where: str, theirs: str, ours: str) -> str:
    if theirs.partition("; ")[0] != ours.partition("; ")[0]:
        return (
            f"the Dask worker {where} runs another copy of the harness ({theirs}; this one: {ours}); "
            "every worker needs the same version and sources (pip install the same revision on "
            "every machine), or its seeds would be judged by other code"
        )
    own = theirs.partition("; ")[2]
    if own.endswith(MISSING):
        return (
            f"the Dask worker {where} cannot load the implementation under test ({own}); make it "
            "importable on every worker (install it there, or put its directory on the worker's "
            "PYTHONPATH) with the same sources as here"
        )
    return (
        f"the Dask worker {where} has another copy of the implementation under test ({theirs}; "
        f"this one: {ours}); every worker needs the same sources of it, importable the same way, "
        "or its seeds would be judged by other code"
    )


class InProcessExecutor(Executor):
    """Runs each task in this process when it is submitted (``--jobs 1``): the same interface,
    no pickling, and tracebacks that point at the code."""

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        future: Future[R] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # the future carries it, as a pool's would
            if not isinstance(error, Exception):
                raise
            future.set_exception(error)
        return future


class WorkPool:
    """An executor, how many tasks it runs at once, and (on Dask) the client behind it."""

    def __init__(
        self, executor: Executor, *, slots: int, client: Any = None, implementation: str | None = None
    ) -> None:
        self.executor = executor
        #: Tasks that run at the same time (the submission window is twice that).
        self.slots = max(1, slots)
        self.client = client
        self._prefix = f"pch-{uuid.uuid4().hex[:12]}-"
        self._keys: dict[str, str] = {}
        self._implementation = implementation
        self._fingerprint = fingerprint(implementation) if client is not None else ""

    @property
    def where(self) -> str:
        if self.client is not None:
            return f"Dask scheduler {self.client.scheduler.address} ({self.slots} worker thread(s))"
        if isinstance(self.executor, InProcessExecutor):
            return "this process"
        return f"{self.slots} local processes"

    def submit(self, name: str, fn: Callable[..., R], /, *args: Any) -> Future[R]:
        """Run ``fn(*args)``; ``name`` identifies the task in :meth:`retried`."""
        if self.client is None:
            return self.executor.submit(fn, *args)
        key = self._prefix + name
        self._keys[key] = name
        return self.executor.submit(
            partial(_on_worker, self._fingerprint, self._implementation, fn), *args, key=key
        )

    def retried(self) -> list[str]:
        """The names of the tasks Dask ran again because a worker died (empty off Dask)."""
        if self.client is None:
            return []
        names: set[str] = set()
        for _time, event in self.client.get_events("all"):
            if isinstance(event, dict) and event.get("action") == "remove-worker":
                for key in (*event.get("processing-tasks", ()), *event.get("lost-computed-tasks", ())):
                    if key in self._keys:
                        names.add(self._keys[key])
        return sorted(names)


_CHILDREN: dict[str, ProcessPoolExecutor] = {}
_CHILDREN_LOCK = threading.Lock()

#: ``prctl(2)``'s option that makes the kernel signal a process when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """A child's initializer: it is killed when the worker that started it dies.

    Without it, a worker killed mid-task (Dask reschedules the task on another worker) left
    its child running the task on, orphaned, writing into the same seed directory that the
    rescheduled run was clearing: ``OSError: [Errno 39] Directory not empty:
    .../seed-18/requests`` in ``test_a_worker_killed_mid_run_loses_no_seed``. The kernel's
    parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``) stops the child at once; a parent
    that died before the call is seen by the parent id. Elsewhere a thread watches the parent
    id instead (it only reads ``os.getppid`` and sleeps, touching nothing of a simulation).
    """
    if sys.platform.startswith("linux"):
        import ctypes.util  # noqa: PLC0415 (only in a pool's child: see the module docstring)

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="watch-parent").start()
    if os.getppid() != parent:
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        threading.Event().wait(0.2)
    os._exit(1)


def _on_worker(expected: str, implementation: str | None, fn: Callable[..., R], *args: Any) -> R:
    """A task on a Dask worker: refused (:class:`SchedulerError`, which the command reports as
    one line) when the worker runs another copy of the harness, or of the implementation under
    test, than the client, else :func:`_in_child_process`. :func:`open_pool` checked the
    workers there were; this one may have joined since."""
    ours = fingerprint(implementation)
    if ours != expected:
        where = "here"
        try:
            from distributed import get_worker  # noqa: PLC0415 (optional extra)

            where = str(get_worker().address)
        except (ImportError, ValueError):
            pass
        raise SchedulerError(_mismatch(where, ours, expected))
    return _in_child_process(fn, *args)


def _in_child_process(fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)`` in a child process of this (Dask worker) process: see the module docstring.
    The children are spawned (never forked from a process with threads) once per worker and
    reused; a child that died is replaced and the task run again once."""
    import multiprocessing  # noqa: PLC0415 (only with a pool: see the module docstring)
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

    for attempt in (1, 2):
        with _CHILDREN_LOCK:
            pool = _CHILDREN.get("pool")
            if pool is None:
                try:
                    from distributed import get_worker  # noqa: PLC0415 (optional extra)

                    threads = get_worker().state.nthreads
                except (ImportError, ValueError):
                    threads = 1
                pool = ProcessPoolExecutor(
                    max_workers=threads,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_die_with_parent,
                    initargs=(os.getpid(),),
                )
                _CHILDREN["pool"] = pool
        try:
            return pool.submit(fn, *args).result()
        except BrokenProcessPool:
            with _CHILDREN_LOCK:
                if _CHILDREN.get("pool") is pool:
                    del _CHILDREN["pool"]
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _dask_executor(client: Any) -> Executor:
    """``client.get_executor()``, letting each task be named (its Dask key) so a worker's loss
    can be traced back to it."""
    from distributed.cfexecutor import ClientExecutor  # noqa: PLC0415 (optional extra)

    class NamedClientExecutor(ClientExecutor):
        _allowed_kwargs = ClientExecutor._allowed_kwargs | {"key"}

    executor: Executor = NamedClientExecutor(client, pure=False)  # type: ignore[no-untyped-call]
    return executor


def scheduler_problem(address: str) -> str | None:
    """Why ``address`` is no Dask scheduler address (``tcp://HOST:PORT``; ``tls://`` too, and
    ``HOST:PORT`` is tcp, as Dask reads them), or None. Checked before the pool opens: Dask
    itself tried ``--scheduler garbage`` for a minute, then raised a ValueError that was a
    traceback (``missing port number in address 'garbage'``)."""
    scheme, separator, rest = address.rpartition("://")
    if separator and scheme not in ("tcp", "tls"):
        return f"unknown protocol {scheme!r} (tcp://HOST:PORT or tls://HOST:PORT)"
    try:
        parts = urlsplit(f"tcp://{rest}")
        port = parts.port
    except ValueError:
        return "the port is not a number from 1 to 65535 (tcp://HOST:PORT)"
    if not parts.hostname or rest != parts.netloc or "@" in rest:
        return "not an address (tcp://HOST:PORT)"
    if port is None or port == 0:
        return "no port (tcp://HOST:PORT; 8786 is Dask's default)"
    return None


@contextmanager
def open_pool(
    *, jobs: int = 1, scheduler: str | None = None, implementation: str | None = None
) -> Iterator[WorkPool]:
    """A :class:`WorkPool`: Dask when ``scheduler`` is an address, else local (see the module).
    ``implementation``: the spec of the implementation under test, which every Dask worker must
    hold as the client does (None: only the harness's own implementations run)."""
    if scheduler is None:
        if jobs == 1:
            yield WorkPool(InProcessExecutor(), slots=1)
            return
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 (see the module docstring)

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            yield WorkPool(pool, slots=jobs)
        return
    try:
        import distributed  # noqa: PLC0415 (optional extra)
    except ImportError:
        raise SchedulerError(
            "--scheduler needs Dask distributed: pip install 'pi-continuity-harness[scale]'"
        ) from None
    problem = scheduler_problem(scheduler)
    if problem is not None:
        raise SchedulerError(f"--scheduler {scheduler}: {problem}")
    try:
        client_class: Any = distributed.Client  # untyped
        client = client_class(scheduler, timeout=30, set_as_default=False)
    except (OSError, ValueError) as error:  # not reachable; an address Dask cannot parse
        raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from None
    try:
        _check_workers(client, implementation)
        threads = sum(client.nthreads().values())
        yield WorkPool(
            _dask_executor(client), slots=max(1, threads), client=client, implementation=implementation
        )
    finally:
        client.close()


def _check_workers(client: Any, implementation: str | None) -> None:
    """Refuse a cluster whose workers do not all run this copy of the harness and of the
    implementation under test (see the module docstring); a worker too old to answer (its
    harness has no :func:`.fingerprint.fingerprint`) is another copy too."""
    ours = fingerprint(implementation)
    try:
        theirs: dict[str, str] = client.run(fingerprint, implementation)
    except Exception as error:  # a worker without this function: its unpickling error, re-raised here
        raise SchedulerError(
            _mismatch("(one of them)", f"it cannot run this harness's check: {error}", ours)
        ) from None
    for address in sorted(theirs):
        if theirs[address] != ours:
            raise SchedulerError(_mismatch(address, theirs[address], ours))


def run_tasks(
    pool: WorkPool,
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    name: Callable[[T], str] = str,
) -> Generator[R, None, None]:
    """``fn(item)`` for every item on ``pool``, with at most twice its slots submitted and not
    finished at a time; results in the order of ``items`` (a finished task waits for those
    before it, the pool does not). Closing the generator cancels what has not started."""
    queue = deque(items)  # popleft: a list's pop(0) copied the rest, quadratic in the seeds
    window = 1 if isinstance(pool.executor, InProcessExecutor) else pool.slots * 2
    pending: list[Future[R]] = []
    try:
        while queue or pending:
            running = sum(1 for future in pending if not future.done())
            while queue and running < window:
                item = queue.popleft()
                pending.append(pool.submit(name(item), fn, item))
                running += 1
            if not pending[0].done():
                wait([f for f in pending if not f.done()], return_when=FIRST_COMPLETED)
            while pending and pending[0].done():
                yield pending.pop(0).result()
    finally:
        for future in pending:
            future.cancel()
