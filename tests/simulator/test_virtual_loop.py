"""``start_eagerly`` (simulator/virtual_loop.py): an operation injected after a trace record runs
its first step at once, then goes on as a task, like Python 3.12's eager tasks."""

from __future__ import annotations

import asyncio

from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop, start_eagerly


def test_a_first_step_that_waits_on_a_pending_future_goes_on_when_it_resolves() -> None:
    """The future the first step yields is awaited again by the task that goes on with it:
    the flag its yield set must be taken back, as Task.__step does, or awaiting it raises
    "await wasn't used with future" (an abort injected during the summarizer's backoff did)."""
    loop = VirtualTimeEventLoop()
    steps: list[str] = []

    async def operation(future: asyncio.Future[str]) -> str:
        steps.append("first step")
        value = await future
        steps.append(f"resumed with {value}")
        return value

    async def main() -> str:
        future: asyncio.Future[str] = loop.create_future()
        task = start_eagerly(loop, operation(future), "injected")
        assert steps == ["first step"], "the first step ran before start_eagerly returned"
        loop.call_later(5, future.set_result, "done")
        return await task

    try:
        assert loop.run_until_complete(main()) == "done"
    finally:
        loop.close()
    assert steps == ["first step", "resumed with done"]


def test_a_first_step_that_finishes_at_once_is_a_finished_task() -> None:
    loop = VirtualTimeEventLoop()

    async def operation() -> int:
        return 7

    async def main() -> int:
        return await start_eagerly(loop, operation(), "injected")

    try:
        assert loop.run_until_complete(main()) == 7
    finally:
        loop.close()


def test_a_virtual_loop_opens_no_descriptor_and_still_takes_threadsafe_calls() -> None:
    """No self-pipe (``VirtualTimeEventLoop._make_self_pipe``): making and closing a loop opens
    and leaves no descriptor, a ``call_soon_threadsafe`` callback still runs, and the loop
    closes cleanly."""
    import os  # noqa: PLC0415

    before = sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    loop = VirtualTimeEventLoop()
    during = sorted(os.listdir("/proc/self/fd")) if before is not None else None
    seen: list[str] = []

    async def main() -> None:
        loop.call_soon_threadsafe(seen.append, "called")
        await asyncio.sleep(1)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert seen == ["called"]
    assert loop.is_closed() and loop.time() == 1
    if before is not None:
        assert during == before
