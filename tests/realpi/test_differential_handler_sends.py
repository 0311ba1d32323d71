"""Differential: what an event handler sends Pi is queued before the event's next handler runs,
real Pi 1.6 against the simulator, unless an ``input`` handler waits.

Pi's runner awaits each handler (``await handler(event, ctx)``, runner.js:832); a Python
handler is a round trip through the bridge, which writes the handler's ``send_user_message``
before its reply, on one connection Pi reads in order (``bridge.ts`` ``onData``). So the next
handler's ``ctx.has_pending_messages()`` already counts the message. The simulator settles the
sends after each handler (``ExtensionRunner.emit``'s ``between_handlers``), and now after each
``tool_call`` handler too (``SessionTools.prepare_tool``; ``emitToolCall`` awaits each one,
runner.js:970-985): before, the next ``tool_call`` handler saw no pending message (the
``tool_call`` test failed).

An ``input`` handler that awaits something lets Pi go on: Pi does not await the send
(agent-session.js:2879), so the next handler runs, and the turn goes on, before the message is
queued; in the same extension too, as the bridge runs each event in a task of its own. Before,
the simulator settled the send whatever it waited for (the last two tests failed on it); it now
settles it only while no time passes (``InstantMark``, ``simulator/virtual_loop.py``).

Not compared: a Python ``input`` handler that returns at once, in the same extension or in
another. The ``input`` reply and the next handler's ``has_pending_messages`` call reach Pi
through the bridge at about the same time; when both lines come in one read, Pi answers the
call before the reply's continuation queues the message. Real Pi 1.6.0 said True when idle and
False in a full test run (``tool_call`` and ``agent_end``); the simulator says True.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
state = {"sent": False}


def extension(pi):
    INPUT

    def first(event, ctx):
        if not state["sent"]:
            state["sent"] = True
            pi.send_user_message("a follow-up from a handler", deliver_as="followUp")

    def second(event, ctx):
        ctx.ui.notify(f"EVENT pending={ctx.has_pending_messages()}", "info")

    pi.on("EVENT", first)
    pi.on("EVENT", second)
"""


#: A reply that calls ``bash`` once, then two more replies.
_REPLIES = [
    {"text": "calling", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}, "id": "c1"}]},
    {"text": "DONE"},
    {"text": "AFTER"},
]


def _pending(observation: Observation) -> list[str]:
    """What the second handler saw, one notification per event."""
    return [text for text, _level in observation.notifications]


@pytest.mark.parametrize("event", ["tool_call", "tool_execution_end", "message_end", "turn_end", "agent_end"])
def test_a_message_a_handler_sends_is_pending_for_the_events_next_handler(
    targets: Targets, python_extension: Callable[[str, str], str], event: str
) -> None:
    source = _EXTENSION.replace("EVENT", event).replace("INPUT", "pass")
    spec = python_extension(f"handler_sends_{event}_probe", source)
    real, sim = play(targets, scenario({"agent": _REPLIES}), [{"prompt": "hello"}], spec)

    seen = _pending(real)
    assert seen[0] == f"{event} pending=True", seen  # real Pi: queued before the next handler
    if event not in ("tool_call", "tool_execution_end"):  # (one call: the only one of these)
        assert seen[-1] == f"{event} pending=False", seen  # ... and none once it was delivered
    assert _pending(sim) == seen
    assert_equivalent(real, sim)


#: An ``input`` handler that awaits a sleep of 3 s: in the extension's body (``INPUT``), or as an
#: extension of its own. With 1 s, real Pi's two turns once took longer than the sleep in a full
#: test run on 2 busy cores (7 December 2026): the follow-up was queued during the run.
_WAITS = """async def on_input(event, ctx):
        await asyncio.sleep(3.0)

    pi.on("input", on_input)"""
_WAITING_INPUT_HANDLER = f"import asyncio\n\n\ndef extension(pi):\n    {_WAITS}\n"


@pytest.mark.parametrize("where", ["same_extension", "other_extension"])
def test_a_message_whose_input_handler_waits_is_not_pending_for_the_next_handler(
    targets: Targets, python_extension: Callable[[str, str], str], where: str
) -> None:
    """The ``input`` handler sleeps 3 s, far longer than the two turns the fake model answers
    at once; Pi queues the follow-up when it returns, after the run, and a third turn answers it."""
    extensions: list[dict[str, object]] = [{"implementation": True}]
    if where == "same_extension":
        source = "import asyncio\n" + _EXTENSION.replace("INPUT", _WAITS)
    else:
        source = _EXTENSION.replace("INPUT", "pass")
        extensions.append(
            {"module": python_extension("handler_sends_waiting_input_probe", _WAITING_INPUT_HANDLER)}
        )
    spec = python_extension(f"handler_sends_waiting_{where}_probe", source.replace("EVENT", "turn_end"))
    sc = scenario({"agent": _REPLIES}, extensions=extensions)
    real, sim = play(targets, sc, [{"prompt": "hello"}], spec)

    assert _pending(real) == ["turn_end pending=False"] * 3
    assert _pending(sim) == _pending(real)
    assert_equivalent(real, sim)


def test_a_message_a_user_bash_handler_sends_during_a_run_is_pending_for_the_next_handler(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``emitUserBash`` awaits each handler too (runner.js:986-1013). The RPC ``bash`` runs while
    the model's reply is held, so Pi is streaming and queues the follow-up. Before, the
    simulator did not settle the sends between ``user_bash`` handlers (this test failed)."""
    spec = python_extension(
        "handler_sends_user_bash_probe", _EXTENSION.replace("EVENT", "user_bash").replace("INPUT", "pass")
    )
    during = [{"bash": {"command": "printf hi", "output": "hi"}}]
    replies = [{"text": "reply", "during": during}, {"text": "DONE"}, {"text": "AFTER"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "hello"}], spec)

    assert _pending(real) == ["user_bash pending=True"]
    assert _pending(sim) == _pending(real)
    assert_equivalent(real, sim)


_RAISES = """\
def extension(pi):
    def first(event, ctx):
        pi.send_user_message("a steer from a failing handler", deliver_as="steer")
        raise RuntimeError("boom")

    pi.on("tool_call", first)
"""


def test_a_message_a_failing_tool_call_handler_sent_is_queued_before_the_blocked_call_ends(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A ``tool_call`` handler that sends and then raises blocks the call (runner.js:970-985
    lets the error through; the loop turns it into the call's error result). The bridge writes
    the send before the error reply, so Pi queues the steer before the call ends; the simulator
    settles the sends in that ``except`` branch too (without it the steer came after the end).

    Not tested: the same for a ``user_bash`` handler, which the simulator also settles before
    the RPC ``bash`` fails. Its order is between an event and an RPC response, and the
    observation keeps no responses (``pi_target._DROPPED_EVENTS``)."""
    spec = python_extension("handler_sends_raising_tool_call_probe", _RAISES)
    real, sim = play(targets, scenario({"agent": _REPLIES}), [{"prompt": "hello"}], spec)

    def order(observation: Observation) -> list[str]:
        """The steer's queue update and the call's end, in stream order."""
        out = []
        for e in observation.rpc_events:
            if e["type"] == "queue_update" and e.get("steering"):
                out.append("queued")
            elif e["type"] == "tool_execution_end":
                out.append(f"ended isError={e['isError']}")
        return out

    assert order(real) == ["queued", "ended isError=True"]
    assert order(sim) == order(real)
    assert_equivalent(real, sim)
