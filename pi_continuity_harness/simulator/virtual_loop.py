"""A single-threaded asyncio event loop whose time is virtual.

The simulated host is ``async`` like Pi itself (handlers, model calls and dialogs are
awaited), and concurrency matters: a command can run while ``session_before_compact`` is
waiting for synthesis. Running it on a stock loop would make sleeps real and interleavings
depend on the wall clock. This loop never blocks: when nothing is ready it jumps virtual
time to the next timer, and when nothing is ready *and* no timer is pending, everything is
waiting on something that will never come, which is reported as a stall instead of hanging.
Before either, it wakes what waits for the end of the current instant (``InstantMark``): work
JavaScript would not wait for once time has to pass.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine, Mapping
from typing import Any

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.meter import Meter

__all__ = [
    "InstantMark",
    "SimulationStalledError",
    "VirtualTimeEventLoop",
    "sleep_unless_aborted",
    "start_eagerly",
]


class SimulationStalledError(SimulatorError, RuntimeError):
    """Every task is waiting and no timer is pending: the simulation cannot progress."""


class _KeyMap(Mapping[Any, selectors.SelectorKey]):
    def __init__(self, keys: dict[int, selectors.SelectorKey]) -> None:
        self._keys = keys

    def __getitem__(self, fileobj: Any) -> selectors.SelectorKey:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        return self._keys[fd]

    def __iter__(self) -> Any:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class _VirtualSelector(selectors.BaseSelector):
    """Accepts registrations but never waits on real I/O (the loop makes no self-pipe for it,
    ``VirtualTimeEventLoop._make_self_pipe``)."""

    def __init__(self, loop: VirtualTimeEventLoop) -> None:
        self._loop = loop
        self._keys: dict[int, selectors.SelectorKey] = {}

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        key = selectors.SelectorKey(fileobj, fd, events, data)
        self._keys[fd] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        return self._keys.pop(fd)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        self.unregister(fileobj)
        return self.register(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if (timeout is None or timeout > 0) and self._loop._end_instant():
            return []  # a waiter of this instant woke: the loop runs it before the clock moves
        if timeout is None:
            raise SimulationStalledError(
                "the simulation stalled: every task is waiting and no timer is pending"
            )
        if timeout > 0:
            self._loop._advance(timeout)
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return _KeyMap(self._keys)

    def close(self) -> None:
        self._keys.clear()


class VirtualTimeEventLoop(asyncio.SelectorEventLoop):
    """``asyncio.sleep(60)`` returns at once, with ``loop.time()`` 60 seconds later.

    With a ``meter`` (``meter.py``), every step and every jump of the clock is charged to the
    scenario's budget; a budget that runs out raises out of ``run_until_complete``.
    """

    def __init__(self, meter: Meter | None = None) -> None:
        self._virtual_now = 0.0
        #: ``round(time() * 1000)``, kept with the clock (:meth:`time_ms`).
        self._virtual_ms = 0
        self.meter = meter
        #: Futures to resolve when nothing is left to run at the current time (:meth:`end_of_instant`).
        self._instant_waiters: list[asyncio.Future[None]] = []
        super().__init__(selector=_VirtualSelector(self))

    def _make_self_pipe(self) -> None:
        """No self-pipe: it wakes a selector that waits on real I/O from another thread
        (``call_soon_threadsafe``), and :class:`_VirtualSelector` never waits, nor reads it (its
        ``select`` returns nothing). Making a socket pair for every host and closing it at the
        end was a twentieth of starting and stopping a simulated host (issue 16); asyncio's
        ``_write_to_self`` does nothing without one (``_csock`` None), as it does once closed."""
        self._ssock = self._csock = None

    def _close_self_pipe(self) -> None:
        """Nothing to close (:meth:`_make_self_pipe`)."""

    def time(self) -> float:
        return self._virtual_now

    def time_ms(self) -> int:
        """``round(time() * 1000)``: the loop's time in milliseconds, which every trace record
        reads (``VirtualClock.loop_ms``). Worked out when the clock moves (:meth:`catch_up`,
        :meth:`_advance`) rather than at each of the 32,000 reads of a suite run (issue 16):
        the clock moves at a thirtieth of them."""
        return self._virtual_ms

    def catch_up(self, ms: int) -> None:
        """Move the clock to ``ms`` milliseconds (never back): the work of the current step
        took that long. ``VirtualClock.now_ms`` calls it when it hands out a timestamp ahead of the loop's
        time (``determinism.py``), so the wall clock never leads the loop's: timers and
        ``loop.time()`` read later agree with ``Date.now()``, as on a real machine.

        Not charged to the meter's virtual seconds: no timer is reached, and each read happens
        inside a step or a trace record that is charged as an operation; the next jump to a
        timer is checked against the budget from the moved clock.

        The clock is set to ``ms / 1000`` seconds, and :meth:`time_ms` to ``ms`` itself, which
        is ``round(ms / 1000 * 1000)`` (the error of the two roundings is far below half a
        millisecond at any time a run reaches): without that ``round``, dear at each of the
        6,000 timestamps of a suite run (issue 16)."""
        seconds = ms / 1000
        if seconds > self._virtual_now:
            self._virtual_now = seconds
            self._virtual_ms = ms

    def end_of_instant(self) -> asyncio.Future[None]:
        """A future resolved when nothing is left to run at the current time, before the clock
        moves to the next timer (or the loop finds every task waiting): what a wait that must
        not outlast the current instant awaits beside the thing it waits for
        (:meth:`InstantMark.wait_this_instant`)."""
        waiter: asyncio.Future[None] = self.create_future()
        self._instant_waiters.append(waiter)
        return waiter

    def _end_instant(self) -> bool:
        """Resolve the waiters of the instant that ends; False when none was waiting."""
        waiters, self._instant_waiters = self._instant_waiters, []
        woke = False
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
                woke = True
        return woke

    def _advance(self, seconds: float) -> None:
        if self.meter is not None:
            self.meter.advance_to(self._virtual_now + seconds)
        self._virtual_now += seconds
        self._virtual_ms = round(self._virtual_now * 1000)

    def _run_once(self) -> None:
        if self.meter is not None:
            self.meter.charge()
        super()._run_once()  # type: ignore[misc]


class InstantMark:
    """A one-time mark (set once, never cleared) that can be awaited for the current instant
    only: :meth:`wait_this_instant` returns when the mark is set, or when the loop would move
    its clock first.

    Why: JavaScript never waits for a promise it did not await. What an extension starts and
    does not await (``pi.sendUserMessage``) runs on its own, and its effects reach Pi before
    Pi goes on only when they take no time: microtasks, and a round trip on a bridge that
    answers in order. The simulator settles such work at the points where it reaches Pi first
    (``AgentSession.settle_preflights``), but only while no time passes. A round trip that waits
    (an ``input`` handler that sleeps) lets Pi go on, and the work ends later
    (``tests/realpi/test_differential_handler_sends.py``).

    Like :class:`asyncio.Event` it wakes its waiters by resolving their futures, so a waiter
    resumes in the same loop step as an ``Event`` waiter would.
    """

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[None]] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if self._set:
            return
        self._set = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait_this_instant(self) -> bool:
        """Whether the mark was set before the running loop (a :class:`VirtualTimeEventLoop`)
        moved its clock, or found every task waiting."""
        if self._set:
            return True
        loop = asyncio.get_running_loop()
        if not isinstance(loop, VirtualTimeEventLoop):
            raise TypeError(
                f"InstantMark needs the simulator's VirtualTimeEventLoop, not {type(loop).__name__}"
            )
        waiter = loop.end_of_instant()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            self._waiters.remove(waiter)
        return self._set


async def sleep_unless_aborted(seconds: float, signal: AbortSignal | None) -> None:
    """Sleep ``seconds`` (virtual time), returning early when ``signal`` aborts."""
    if signal is None:
        await asyncio.sleep(seconds)
        return
    # The running loop's tasks, as ``asyncio.ensure_future`` of each coroutine makes them,
    # without its tests of what it was given and its look-up of the loop (each).
    loop = asyncio.get_running_loop()
    sleeper = loop.create_task(asyncio.sleep(seconds))
    aborted = loop.create_task(signal.wait())
    # ``asyncio.wait([sleeper, aborted], return_when=FIRST_COMPLETED)`` without its sets and
    # its own coroutine (a sixth of this function's time, issue 16): the same done callback on
    # both tasks (it resolves the waiter once), taken off both when the wait ends, however it ends.
    waiter: asyncio.Future[None] = loop.create_future()

    def on_completion(_task: asyncio.Future[Any]) -> None:
        if not waiter.done():
            waiter.set_result(None)

    sleeper.add_done_callback(on_completion)
    aborted.add_done_callback(on_completion)
    try:
        await waiter
    finally:
        sleeper.remove_done_callback(on_completion)
        aborted.remove_done_callback(on_completion)
    sleeper.cancel()
    aborted.cancel()


def start_eagerly(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], name: str
) -> asyncio.Task[Any]:
    """Run ``coro`` *now*, synchronously, until it first waits on something, then go on with it
    as a task (``asyncio.eager_task_factory`` of Python 3.12, for 3.11).

    An operation injected after a trace record must act right there (an ``abort`` sets its
    signals before the code that wrote the record takes another step); a plain task would start
    only when the current one next waits, which in the simulator can be many records later.
    Inside the first step ``asyncio.current_task()`` is still the caller's task. An exception of
    the first step is raised by the returned task.
    """
    try:
        waiting = coro.send(None)
    except StopIteration as stop:
        return loop.create_task(_value(stop.value), name=name)
    except BaseException as error:
        return loop.create_task(_raise(error), name=name)
    return loop.create_task(_go_on(coro, waiting), name=name)


async def _value(value: Any) -> Any:
    return value


async def _raise(error: BaseException) -> Any:
    raise error


async def _go_on(coro: Coroutine[Any, Any, Any], waiting: Any) -> Any:
    """Drive ``coro`` from where :func:`start_eagerly` left it, as ``asyncio.Task`` would."""
    while True:
        cancelled: BaseException | None = None
        try:
            if waiting is None:  # a bare ``yield`` (``asyncio.sleep(0)``)
                await asyncio.sleep(0)
            else:
                # What Task.__step does with a yielded future: the flag set by the yield inside
                # ``coro`` is taken back, or awaiting the still-pending future here raises
                # "await wasn't used with future" (the C future iterator reads it as "already
                # yielded").
                waiting._asyncio_future_blocking = False
                await waiting
        except asyncio.CancelledError as error:
            if waiting is None or not waiting.done():
                cancelled = error  # this task was cancelled while the future was not
        except BaseException:  # the future failed: ``coro`` sees it when it resumes
            pass
        try:
            waiting = coro.throw(cancelled) if cancelled is not None else coro.send(None)
        except StopIteration as stop:
            return stop.value
