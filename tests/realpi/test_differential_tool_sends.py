"""Differential: what a Python tool sends Pi before it returns, real Pi 1.6 against the simulator.

``pi.send_user_message`` (and ``pi.send_message``) is fire-and-forget in Python: the bridge
writes the call on its one connection to Pi at once, and the tool's reply after it, and Pi reads
that connection line by line, in order (``bridge.ts`` ``onData``). So Pi has queued the message
(``queue_update``, agent-session.js ``_queueFollowUp``/``_queueSteer``) before the call's result
comes back and its ``tool_execution_end`` is emitted, even when the tool returns right after the
send.

Before, the simulator let the tool's result through first: the send's queue decision came after
the call's end, its result message and the turn's end. The first two tests failed on it; the
third (a custom message, whose send the simulator queues at the call) passed before and pins it.
The fourth pins the exception: with a Python ``input`` handler, Pi awaits that handler's round
trip and ends the call first, as the simulator's unsettled send does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import asyncio

from pi_continuity_harness.api import ToolDefinition, ToolResult

api = {}


async def follower(call_id, params, signal, ctx):
    api["pi"].send_user_message("a follow-up from a tool", deliver_as="followUp")
    return ToolResult(content=[{"type": "text", "text": "followed"}])


async def steerer(call_id, params, signal, ctx):
    await asyncio.sleep(0.3)
    api["pi"].send_user_message("a steer from a tool", deliver_as="steer")
    await asyncio.sleep(0.3)
    return ToolResult(content=[{"type": "text", "text": "steered"}])


async def later(call_id, params, signal, ctx):
    await asyncio.sleep(1.2)
    return ToolResult(content=[{"type": "text", "text": f"pending: {ctx.has_pending_messages()}"}])


async def noter(call_id, params, signal, ctx):
    note = {"customType": "note", "content": "a note from a tool", "display": True}
    api["pi"].send_message(note, deliver_as="steer")
    return ToolResult(content=[{"type": "text", "text": "noted"}])


def extension(pi):
    api["pi"] = pi
    for name, execute in (("follower", follower), ("steerer", steerer), ("later", later), ("noter", noter)):
        pi.register_tool(ToolDefinition(name, name, "A probe tool.", {"type": "object", "properties": {}}, execute))
"""


def _events(observation: Observation) -> list[tuple[str, Any]]:
    """Each queue update (steering and follow-up texts) and tool end, in stream order."""
    out: list[tuple[str, Any]] = []
    for e in observation.rpc_events:
        if e["type"] == "queue_update":
            out.append(("queue", [*e.get("steering", []), *e.get("followUp", [])]))
        elif e["type"] == "tool_execution_end":
            out.append(("end", e["toolCallId"]))
    return out


def _play(
    targets: Targets, spec: str, calls: list[dict[str, Any]], *, done_latency_ms: int = 0
) -> tuple[Observation, Observation]:
    replies = [
        {"text": "calling", "tool_calls": calls},
        {"text": "DONE", **({"latency_ms": done_latency_ms} if done_latency_ms else {})},
        {"text": "AFTER"},
        {"text": "MORE"},
    ]
    return play(targets, scenario({"agent": replies}), [{"prompt": "hello"}], spec)


def test_a_follow_up_a_tool_sends_before_it_returns_is_queued_before_the_calls_end(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("tool_sends_follow_up_probe", _EXTENSION)
    real, sim = _play(targets, spec, [{"name": "follower", "arguments": {}, "id": "c1"}])

    assert _events(real)[:2] == [("queue", ["a follow-up from a tool"]), ("end", "c1")]
    assert _events(sim) == _events(real)
    assert_equivalent(real, sim)


def test_messages_tools_send_while_others_run_are_queued_in_the_order_sent(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The last call sends a follow-up and returns at once, the second a steer 0.3 s in, while
    the first runs for 1.2 s: each message is queued before its own call ends, in the order
    sent."""
    spec = python_extension("tool_sends_while_running_probe", _EXTENSION)
    calls = [
        {"name": "later", "arguments": {}, "id": "c1"},
        {"name": "steerer", "arguments": {}, "id": "c2"},
        {"name": "follower", "arguments": {}, "id": "c3"},
    ]
    real, sim = _play(targets, spec, calls)

    assert _events(real)[:5] == [
        ("queue", ["a follow-up from a tool"]),
        ("end", "c3"),
        ("queue", ["a steer from a tool", "a follow-up from a tool"]),
        ("end", "c2"),
        ("end", "c1"),
    ]
    assert _events(sim) == _events(real)
    assert_equivalent(real, sim)


def test_a_custom_message_a_tool_sends_before_it_returns_is_queued_before_the_calls_end(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("tool_sends_custom_probe", _EXTENSION)
    real, sim = _play(targets, spec, [{"name": "noter", "arguments": {}, "id": "c1"}])

    def after_the_call(observation: Observation) -> list[str]:
        """The roles of the messages started after the call's end."""
        types = [e["type"] for e in observation.rpc_events]
        end = types.index("tool_execution_end")
        return [e["message"]["role"] for e in observation.rpc_events[end:] if e["type"] == "message_start"]

    # Real Pi: no queue update for a custom message; it is delivered as the next turn starts.
    assert _events(real) == [("end", "c1")]
    assert after_the_call(real) == ["toolResult", "custom", "assistant"]
    assert after_the_call(sim) == after_the_call(real)
    assert _events(sim) == _events(real)
    assert_equivalent(real, sim)


_WITH_INPUT_HANDLER = _EXTENSION.replace(
    'def extension(pi):\n    api["pi"] = pi\n',
    'def extension(pi):\n    api["pi"] = pi\n    pi.on("input", lambda event, ctx: None)\n',
)


def test_with_a_python_input_handler_the_call_ends_before_its_follow_up_is_queued(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A Python ``input`` handler puts a bridge round trip into the send's preparation
    (``_runInputHandlers``, agent-session.js:1745): Pi reads the tool's reply meanwhile, so the
    call ends first (seen in every run). Compared on the RPC stream only: where the ``input``
    event falls among the turn's events differs (``docs/architecture.md``). The reply after the
    call takes 1 s: with none, on a loaded machine the turn ended before the round trip did, so
    Pi sent the follow-up as a new prompt and queued nothing (seen once, in a full run beside two
    explorations)."""
    assert _WITH_INPUT_HANDLER != _EXTENSION
    spec = python_extension("tool_sends_input_handler_probe", _WITH_INPUT_HANDLER)
    calls = [{"name": "follower", "arguments": {}, "id": "c1"}]
    real, sim = _play(targets, spec, calls, done_latency_ms=1_000)

    assert _events(real)[:2] == [("end", "c1"), ("queue", ["a follow-up from a tool"])]
    assert _events(sim) == _events(real)
