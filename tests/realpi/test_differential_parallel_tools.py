"""Differential: a reply's tool calls run at once, real Pi 1.6 against the simulator.

Pi's default tool execution is parallel (``executeToolCallsParallel``, pi-agent-core
agent-loop.js:414-461): after every call's ``tool_execution_start`` and preparation, it starts
every prepared call (``Promise.all(finalizedCalls.map(entry => entry()))``, :450), each checking
the abort signal as it starts, and emits each ``tool_execution_end`` when that call finishes; the
result messages follow in call order. The bridge runs each Python tool call in a task of its own
(``bridge_runtime`` ``_serve``), so a Python tool that waits lets the next one run. The waits
differ by 0.3 s or more, so a busy machine does not reorder what they order.

Before, the simulator ran the prepared calls one after the other: a call that waited half a
second still ended before the next began, and a call that aborted the run ended the calls after
it with "Operation aborted" before they started. Six of the eight tests failed on it (the ends
in call order, the second call not run, an end handler's wait holding the next call, the nested
calls one tool's after the other's); the abort while the calls are prepared, and two nested
calls one tool makes at once, it already did as Pi does, and the concurrent calls must keep
doing them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import asyncio

from pi_continuity_harness.api import ToolDefinition, ToolResult


async def slow(call_id, params, signal, ctx):
    await asyncio.sleep(0.5)
    return ToolResult(content=[{"type": "text", "text": "slow"}])


async def fast(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "fast"}])


async def stopper(call_id, params, signal, ctx):
    ctx.abort()
    return ToolResult(content=[{"type": "text", "text": "stopped"}])


async def aborts_later(call_id, params, signal, ctx):
    await asyncio.sleep(0.3)
    ctx.abort()
    return ToolResult(content=[{"type": "text", "text": "aborted it"}])


async def ends_later(call_id, params, signal, ctx):
    await asyncio.sleep(0.9)
    return ToolResult(content=[{"type": "text", "text": f"signal aborted: {signal.aborted}"}])


async def nests_after_a_wait(call_id, params, signal, ctx):
    await asyncio.sleep(0.4)
    out = await ctx.execute_tool("nests_a_read", {})
    return ToolResult(content=[{"type": "text", "text": "nested: " + out.result["content"][0]["text"]}])


async def nests_a_read(call_id, params, signal, ctx):
    await asyncio.sleep(1.0)
    inner = await ctx.execute_tool("read", {"path": "missing.txt"})
    return ToolResult(content=[{"type": "text", "text": f"read failed: {inner.is_error}"}])


async def nests_two_at_once(call_id, params, signal, ctx):
    outs = await asyncio.gather(ctx.execute_tool("slow", {}), ctx.execute_tool("fast", {}))
    texts = [out.result["content"][0]["text"] for out in outs]
    return ToolResult(content=[{"type": "text", "text": " then ".join(texts)}])


def extension(pi):
    def abort_at_c9(event, ctx):
        if event.tool_call_id == "c9":
            ctx.abort()

    pi.on("tool_call", abort_at_c9)

    async def hold_c7(event, ctx):
        if event.tool_call_id == "c7":
            await asyncio.sleep(0.5)
            return {"content": [{"type": "text", "text": "held"}]}
        return None

    pi.on("tool_result", hold_c7)

    async def hold_end_of_c5(event, ctx):
        if event.tool_call_id == "c5":
            await asyncio.sleep(0.8)

    pi.on("tool_execution_end", hold_end_of_c5)
    tools = {
        "slow": slow,
        "fast": fast,
        "stopper": stopper,
        "aborts_later": aborts_later,
        "ends_later": ends_later,
        "nests_after_a_wait": nests_after_a_wait,
        "nests_a_read": nests_a_read,
        "nests_two_at_once": nests_two_at_once,
    }
    for name, execute in tools.items():
        pi.register_tool(
            ToolDefinition(
                name=name,
                label=name,
                description="A probe tool.",
                parameters={"type": "object", "properties": {}},
                execute=execute,
            )
        )
"""


def _ends(observation: Observation) -> list[tuple[str, str]]:
    return [
        (e["toolCallId"], e["result"]["content"][0]["text"])
        for e in observation.rpc_events
        if e["type"] == "tool_execution_end"
    ]


def _results(observation: Observation) -> list[tuple[str, str]]:
    return [
        (e["message"]["toolCallId"], e["message"]["content"][0]["text"])
        for e in observation.entries
        if e.get("message", {}).get("role") == "toolResult"
    ]


def _play(
    targets: Targets,
    python_extension: Callable[[str, str], str],
    probe: str,
    calls: list[tuple[str, str]],
    *,
    prompts: tuple[str, ...] = ("hello",),
    replies: tuple[str, ...] = ("DONE",),
) -> tuple[Observation, Observation]:
    """Real Pi's and the simulator's observations of one reply calling ``calls`` (tool name, call
    id), with the extension above loaded as module ``probe``."""
    spec = python_extension(probe, _EXTENSION)
    tool_calls = [{"name": name, "arguments": {}, "id": call_id} for name, call_id in calls]
    agent = [{"text": "calling", "tool_calls": tool_calls}, *({"text": text} for text in replies)]
    return play(targets, scenario({"agent": agent}), [{"prompt": text} for text in prompts], spec)


def _assert_simulated_alike(
    real: Observation, sim: Observation, view: Callable[[Observation], object] = _ends
) -> None:
    """The simulator's ends (or ``view``) and result messages are real Pi's (the readable
    difference first), then every channel is."""
    assert view(sim) == view(real) and _results(sim) == _results(real)
    assert_equivalent(real, sim)


def test_a_call_that_waits_ends_after_the_calls_started_after_it_and_results_keep_call_order(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    real, sim = _play(targets, python_extension, "parallel_probe", [("slow", "c1"), ("fast", "c2")])

    # Real Pi: the fast call ends first; the result messages are in call order.
    assert _ends(real) == [("c2", "fast"), ("c1", "slow")]
    assert _results(real) == [("c1", "slow"), ("c2", "fast")]
    _assert_simulated_alike(real, sim)


def test_a_call_that_aborts_the_run_does_not_stop_the_calls_already_started(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    real, sim = _play(targets, python_extension, "parallel_abort_probe", [("stopper", "c1"), ("fast", "c2")])

    # Real Pi: both calls ran (the second had started when the first aborted the run).
    assert _results(real) == [("c1", "stopped"), ("c2", "fast")]
    _assert_simulated_alike(real, sim)


def test_a_run_aborted_while_the_calls_are_prepared_runs_none_of_them(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The ``tool_call`` handler aborts at the second call (id ``c9``): it ends at
    its preparation (agent-loop.js:505-510), the first as it would start (:435-441)."""
    real, sim = _play(
        targets, python_extension, "parallel_prepare_abort_probe", [("slow", "c1"), ("fast", "c9")]
    )

    aborted = "Operation aborted"
    assert _ends(real) == [("c9", aborted), ("c1", aborted)]
    assert _results(real) == [("c1", aborted), ("c9", aborted)]
    _assert_simulated_alike(real, sim)


def test_a_tool_result_handler_that_waits_holds_only_its_own_call(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The ``tool_result`` handler waits for the first call (id ``c7``) only: Pi runs it inside
    that call's finalisation (``finalizeExecutedToolCall``, agent-loop.js:445), so the second call
    finishes and ends meanwhile."""
    real, sim = _play(targets, python_extension, "parallel_handler_probe", [("fast", "c7"), ("fast", "c8")])

    assert _ends(real) == [("c8", "fast"), ("c7", "held")]
    assert _results(real) == [("c7", "held"), ("c8", "fast")]
    _assert_simulated_alike(real, sim)


def test_a_call_that_aborts_the_run_while_another_runs_leaves_it_running_with_an_aborted_signal(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The second call aborts the run 0.3 s in; the first, started before, runs on to its end and
    sees its signal aborted (Pi hands every call the run's signal and does not stop a running
    tool); the next prompt starts a new run."""
    real, sim = _play(
        targets,
        python_extension,
        "parallel_late_abort_probe",
        [("ends_later", "c1"), ("aborts_later", "c2")],
        prompts=("hello", "next"),
        replies=("DONE", "AGAIN"),
    )

    assert _ends(real) == [("c2", "aborted it"), ("c1", "signal aborted: True")]
    _assert_simulated_alike(real, sim)


def test_nested_calls_of_calls_running_at_once_interleave_as_their_tools_wait(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """Two calls that each call another tool (``ctx.execute_tool``) after a wait: the nested
    calls start and end as the waits order them, each id under its own parent (``c2/1``,
    ``c2/1/1``), and the outer calls end when their nested calls have."""
    real, sim = _play(
        targets,
        python_extension,
        "parallel_nested_probe",
        [("nests_a_read", "c1"), ("nests_after_a_wait", "c2")],
    )

    def events(observation: Observation) -> list[tuple[str, str]]:
        return [
            (e["type"].removeprefix("tool_execution_"), e["toolCallId"])
            for e in observation.rpc_events
            if e["type"] in ("tool_execution_start", "tool_execution_end")
        ]

    assert events(real) == [
        ("start", "c1"),
        ("start", "c2"),
        ("start", "c2/1"),
        ("start", "c1/1"),
        ("end", "c1/1"),
        ("end", "c1"),
        ("start", "c2/1/1"),
        ("end", "c2/1/1"),
        ("end", "c2/1"),
        ("end", "c2"),
    ]
    assert _results(real) == [("c1", "read failed: True"), ("c2", "nested: read failed: True")]
    _assert_simulated_alike(real, sim, events)


def test_nested_calls_one_tool_makes_at_once_run_at_once(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A tool that awaits two ``ctx.execute_tool`` calls together (``asyncio.gather``): Pi runs
    them at once (no tool is ``sequential``, nested-tool-calls.js:112-122), so the one that does
    not wait ends first; each is numbered in the order it was made (``c1/1``, ``c1/2``)."""
    real, sim = _play(
        targets, python_extension, "parallel_nested_gather_probe", [("nests_two_at_once", "c1")]
    )

    def ends(observation: Observation) -> list[str]:
        return [e["toolCallId"] for e in observation.rpc_events if e["type"] == "tool_execution_end"]

    assert ends(real) == ["c1/2", "c1/1", "c1"]
    assert _results(real) == [("c1", "slow then fast")]
    _assert_simulated_alike(real, sim, ends)


def test_a_tool_execution_end_handler_that_waits_delays_only_its_own_calls_end(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The ``tool_execution_end`` handler waits 0.8 s for the first call (id ``c5``), which does
    not wait itself: Pi hands the event to the extensions before its RPC clients
    (``_handleAgentEvent``) inside that call's own ``entry()`` (agent-loop.js:445-446), so the
    second call, which waits 0.5 s, ends first on the RPC stream."""
    real, sim = _play(
        targets, python_extension, "parallel_end_handler_probe", [("fast", "c5"), ("slow", "c6")]
    )

    assert _ends(real) == [("c6", "slow"), ("c5", "fast")]
    assert _results(real) == [("c5", "fast"), ("c6", "slow")]
    _assert_simulated_alike(real, sim)
