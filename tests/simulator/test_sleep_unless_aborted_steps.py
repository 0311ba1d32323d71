"""``sleep_unless_aborted`` waits for its sleep or its signal as ``asyncio.wait(...,
FIRST_COMPLETED)`` did, without that function's sets and coroutine: the same event-loop steps
(the budget meter counts them: a replay must stop at the same record), the same clock, the same
tasks left behind, whichever of the sleep, the abort or a cancellation of the waiting task
comes first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop, sleep_unless_aborted


async def _with_asyncio_wait(seconds: float, signal: AbortSignal | None) -> None:
    """The function as it was, on ``asyncio.wait``."""
    assert signal is not None
    sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    aborted = asyncio.ensure_future(signal.wait())
    await asyncio.wait([sleeper, aborted], return_when=asyncio.FIRST_COMPLETED)
    sleeper.cancel()
    aborted.cancel()


class _CountingLoop(VirtualTimeEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self.steps = 0

    def _run_once(self) -> None:
        self.steps += 1
        super()._run_once()


def _play(impl: Any, abort_at: int, cancel_at: int, delay: float) -> list[tuple[Any, ...]]:
    """Two tasks that note each loop step, and one that sleeps on a signal which is aborted
    (``abort_at``) or whose task is cancelled (``cancel_at``) at a given step, or neither."""
    loop = _CountingLoop()
    log: list[tuple[Any, ...]] = []

    async def ticker(name: str) -> None:
        for i in range(6):
            log.append((name, i, loop.steps, loop.time()))
            await asyncio.sleep(0)

    async def main() -> None:
        controller = AbortController()

        async def sleeper() -> None:
            try:
                await impl(delay, controller.signal)
                log.append(("slept", loop.steps, loop.time()))
            except asyncio.CancelledError:
                log.append(("cancelled", loop.steps, loop.time()))

        tasks = [asyncio.ensure_future(ticker("a")), asyncio.ensure_future(sleeper())]
        tasks.append(asyncio.ensure_future(ticker("b")))
        for i in range(6):
            if i == abort_at:
                controller.abort("x")
            if i == cancel_at:
                tasks[1].cancel()
            await asyncio.sleep(0)
        await asyncio.sleep(delay * 2)
        await asyncio.gather(*tasks, return_exceptions=True)
        for _ in range(4):
            await asyncio.sleep(0)
        left = [t for t in asyncio.all_tasks() if not t.done() and t is not asyncio.current_task()]
        log.append(("end", loop.steps, loop.time(), len(controller.signal._waiters), len(left)))
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return log


@pytest.mark.parametrize("delay", [0.0, 0.001, 0.5])
@pytest.mark.parametrize(
    ("abort_at", "cancel_at"), [(-1, -1), (0, -1), (2, -1), (-1, 0), (-1, 2), (1, 1), (3, 1)]
)
def test_the_same_steps_as_asyncio_wait(abort_at: int, cancel_at: int, delay: float) -> None:
    assert _play(sleep_unless_aborted, abort_at, cancel_at, delay) == _play(
        _with_asyncio_wait, abort_at, cancel_at, delay
    )
