"""What an event handler sends Pi is settled before the event's next handler runs, but only
while no time passes: ``pi.send_user_message`` is not awaited by Pi (agent-session.js:2879), so
an ``input`` handler that waits lets the next handler, and the run, go on before the message is
queued. Real Pi does the same (``tests/realpi/test_differential_handler_sends.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.virtual_loop import InstantMark, VirtualTimeEventLoop

from .helpers import base, run

#: A reply that calls ``bash`` once, then two more replies.
_REPLIES: list[dict[str, Any]] = [
    {"text": "calling", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}, "id": "c1"}]},
    {"text": "DONE"},
    {"text": "AFTER"},
]


def _pending_seen(
    tmp_path: Path,
    input_wait: float | None,
    event: str = "turn_end",
    replies: list[dict[str, Any]] = _REPLIES,
) -> list[bool]:
    """What the second ``event`` handler's ``has_pending_messages()`` said, each time."""
    seen: list[bool] = []

    def extension(pi: ExtensionAPI) -> None:
        sent: list[bool] = []

        def first(event: Any, ctx: Any) -> None:
            if not sent:
                sent.append(True)
                pi.send_user_message("a follow-up from a handler", deliver_as="followUp")

        def second(event: Any, ctx: Any) -> None:
            seen.append(ctx.has_pending_messages())

        async def on_input(event: Any, ctx: Any) -> None:
            assert input_wait is not None
            await asyncio.sleep(input_wait)

        if input_wait is not None:
            pi.on("input", on_input)
        pi.on(event, first)
        pi.on(event, second)

    run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    return seen


def test_a_message_a_handler_sends_is_pending_for_the_events_next_handler(tmp_path: Path) -> None:
    assert _pending_seen(tmp_path, input_wait=None) == [True, True, False]


def test_a_message_a_tool_call_handler_sends_is_pending_for_the_next_tool_call_handler(
    tmp_path: Path,
) -> None:
    """``emitToolCall`` awaits each handler (runner.js:970-985)."""
    assert _pending_seen(tmp_path, input_wait=None, event="tool_call") == [True]


def test_a_message_a_user_bash_handler_sends_during_a_run_is_pending_for_the_next_handler(
    tmp_path: Path,
) -> None:
    """``emitUserBash`` awaits each handler (runner.js:986-1013); the bash runs while the model's
    reply is held, so the follow-up is queued."""
    during = [{"bash": {"command": "printf hi", "output": "hi"}}]
    replies = [{"text": "reply", "during": during}, {"text": "DONE"}, {"text": "AFTER"}]
    assert _pending_seen(tmp_path, input_wait=None, event="user_bash", replies=replies) == [True]


def test_an_input_handler_that_returns_at_once_still_lets_it_be_pending(tmp_path: Path) -> None:
    """One of real Pi's two outcomes, which depend on how the bridge's lines reach Pi
    (``tests/realpi/test_differential_handler_sends.py``): the simulator takes this one."""
    assert _pending_seen(tmp_path, input_wait=0) == [True, True, False]


def test_an_input_handler_that_waits_lets_the_next_handler_run_first(tmp_path: Path) -> None:
    """The follow-up is queued a virtual second later, after the run; a third turn answers it."""
    assert _pending_seen(tmp_path, input_wait=1.0) == [False, False, False]


# ----------------------------------------------------------------------------- InstantMark
def _on_virtual_loop(main: Any) -> Any:
    loop = VirtualTimeEventLoop()
    try:
        return loop.run_until_complete(main(loop))
    finally:
        loop.close()


def test_a_mark_set_in_the_same_instant_is_seen() -> None:
    async def main(loop: VirtualTimeEventLoop) -> tuple[bool, float]:
        mark = InstantMark()

        async def soon() -> None:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            mark.set()

        task = loop.create_task(soon())
        seen = await mark.wait_this_instant()
        await task
        return seen, loop.time()

    assert _on_virtual_loop(main) == (True, 0.0)


def test_a_mark_set_after_the_clock_moves_is_not_waited_for() -> None:
    async def main(loop: VirtualTimeEventLoop) -> tuple[bool, float, bool, float]:
        mark = InstantMark()

        async def later() -> None:
            await asyncio.sleep(5)
            mark.set()

        task = loop.create_task(later())
        seen, at = await mark.wait_this_instant(), loop.time()
        await task
        return seen, at, mark.is_set(), loop.time()

    assert _on_virtual_loop(main) == (False, 0.0, True, 5.0)


def test_a_mark_nothing_will_set_ends_the_wait_instead_of_stalling() -> None:
    async def main(loop: VirtualTimeEventLoop) -> bool:
        return await InstantMark().wait_this_instant()

    assert _on_virtual_loop(main) is False


def test_a_mark_needs_the_virtual_loop() -> None:
    async def main() -> bool:
        return await InstantMark().wait_this_instant()

    with pytest.raises(TypeError, match="VirtualTimeEventLoop"):
        asyncio.run(main())
