"""The simulator's wall clock and its event loop's clock move together (``determinism.VirtualClock``).

Every ``Date.now()`` / ``time.time()`` read hands out a fresh millisecond (Pi compares
timestamps, so equal ones would be an accident of simulation). Before, the loop's clock stood
still while the wall clock ran one millisecond ahead per read, so a duration measured across a
virtual wait came out short by that lead: blitz showed "Handoff Time 0:04" for a 5 s receiver
turn. On a real machine Pi's ``Date.now()``, ``performance.now()`` and its timers advance
together (pi-ai ``dist/utils/event-stream.js:89-90,117``); now a read ahead of the loop moves
the loop's clock to it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.determinism import EPOCH_MS, VirtualClock
from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop

from .helpers import base, run


def _on_a_virtual_loop(body: Any) -> Any:
    loop = VirtualTimeEventLoop()
    clock = VirtualClock(loop)
    try:
        return loop.run_until_complete(body(loop, clock))
    finally:
        loop.close()


def test_a_five_second_wait_after_many_reads_measures_exactly_5000_ms() -> None:
    async def body(loop: VirtualTimeEventLoop, clock: VirtualClock) -> int:
        for _ in range(250):
            clock.now_ms()
        before = clock.now_ms()
        await asyncio.sleep(5)
        return clock.now_ms() - before

    assert _on_a_virtual_loop(body) == 5000


def test_every_read_is_a_fresh_millisecond_and_the_loop_is_never_behind_it() -> None:
    """The strict increase is kept (Pi's ``assistant.timestamp <= compaction.timestamp``), and
    the loop's clock is moved to each timestamp handed out ahead of it: a trace record or a timer
    scheduled after a read is not earlier than the read."""

    async def body(loop: VirtualTimeEventLoop, clock: VirtualClock) -> list[tuple[int, int]]:
        pairs = []
        for _ in range(50):
            pairs.append((clock.now_ms(), EPOCH_MS + clock.loop_ms()))
        await asyncio.sleep(0.01)
        pairs.append((clock.now_ms(), EPOCH_MS + clock.loop_ms()))
        return pairs

    pairs = _on_a_virtual_loop(body)
    stamps = [stamp for stamp, _ in pairs]
    assert stamps == sorted(set(stamps)), "timestamps repeat or go back"
    assert stamps[:50] == list(range(EPOCH_MS, EPOCH_MS + 50))
    assert stamps[-1] == EPOCH_MS + 49 + 10  # the 10 ms sleep started after the 50th read
    assert all(stamp == loop_now for stamp, loop_now in pairs), pairs


def test_reading_the_current_time_hands_out_no_timestamp() -> None:
    """A file's modification time (``current_ms``) is the wall time now and moves neither the
    next ``Date.now()`` nor the loop's clock (every later id and timestamp would shift)."""

    async def body(loop: VirtualTimeEventLoop, clock: VirtualClock) -> tuple[int, int, float, int]:
        for _ in range(20):
            last = clock.now_ms()
        loop_before = loop.time()
        current = clock.current_ms()
        clock.current_ms()
        return last, current, loop.time() - loop_before, clock.now_ms()

    last, current, moved, following = _on_a_virtual_loop(body)
    assert current == last
    assert moved == 0
    assert following == last + 1


def _sleeper(measured: list[int]):  # type: ignore[no-untyped-def]
    def ext(pi: ExtensionAPI) -> None:
        async def start(_event: Any, _ctx: Any) -> None:
            for _ in range(300):
                time.time()
            before = time.time_ns() // 1_000_000
            await asyncio.sleep(5)
            measured.append(time.time_ns() // 1_000_000 - before)

        pi.on("session_start", start)

    return ext


def test_an_extension_measures_its_five_second_sleep_as_5000_ms_after_many_clock_reads(
    tmp_path: Path,
) -> None:
    """The host wires the clock to its loop: what blitz's Handoff Time measures across a model
    call's latency, an extension measures across its own ``asyncio.sleep`` (a ``setTimeout``)."""
    measured: list[int] = []
    run(tmp_path, base(operations=[{"prompt": "hi"}]), _sleeper(measured))
    assert measured == [5000]
