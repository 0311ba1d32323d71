"""A single-threaded asyncio event loop whose time is virtual.

The simulated host is ``async`` like Pi itself (handlers, model calls and dialogs are
awaited), and concurrency matters: a command can run while ``session_before_compact`` is
waiting for synthesis. Running it on a stock loop would make sleeps real and interleavings
depend on the wall clock. This loop never blocks: when nothing is ready it jumps virtual
time to the next timer, and when nothing is ready *and* no timer is pending, everything is
waiting on something that will never come, which is reported as a stall instead of hanging.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Mapping
from typing import Any

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.errors import SimulatorError

__all__ = ["SimulationStalledError", "VirtualTimeEventLoop", "sleep_unless_aborted"]


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
    """Accepts registrations (the loop's self-pipe) but never waits on real I/O."""

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
    """``asyncio.sleep(60)`` returns at once, with ``loop.time()`` 60 seconds later."""

    def __init__(self) -> None:
        self._virtual_now = 0.0
        super().__init__(selector=_VirtualSelector(self))

    def time(self) -> float:
        return self._virtual_now

    def _advance(self, seconds: float) -> None:
        self._virtual_now += seconds


async def sleep_unless_aborted(seconds: float, signal: AbortSignal | None) -> None:
    """Sleep ``seconds`` (virtual time), returning early when ``signal`` aborts."""
    if signal is None:
        await asyncio.sleep(seconds)
        return
    sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    aborted = asyncio.ensure_future(signal.wait())
    await asyncio.wait([sleeper, aborted], return_when=asyncio.FIRST_COMPLETED)
    sleeper.cancel()
    aborted.cancel()
