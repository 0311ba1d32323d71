"""A reply's tool calls run at once (Pi's default parallel mode, ``executeToolCallsParallel``,
pi-agent-core agent-loop.js:414-461): every prepared call starts before any ends, each ends
(``tool_execution_end``) when it finishes, and the result messages keep call order. Real Pi
does the same (``tests/realpi/test_differential_parallel_tools.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult

from .helpers import base, entries, run


def _tools(pi: ExtensionAPI, ends: list[str], **executes: Any) -> None:
    for name, execute in executes.items():
        pi.register_tool(
            ToolDefinition(
                name=name,
                label=name,
                description="A probe tool.",
                parameters={"type": "object", "properties": {}},
                execute=execute,
            )
        )
    pi.on("tool_execution_end", lambda event, ctx: ends.append(event.tool_call_id))


def _text(text: str) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": text}])


async def _slow(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
    await asyncio.sleep(0.5)
    return _text("slow")


async def _fast(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
    return _text("fast")


async def _stopper(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
    ctx.abort()
    return _text("stopped")


def _play(tmp_path: Path, names: list[str], ends: list[str], extra: Any = None) -> list[tuple[str, str]]:
    def extension(pi: ExtensionAPI) -> None:
        _tools(pi, ends, slow=_slow, fast=_fast, stopper=_stopper)
        if extra is not None:
            extra(pi)

    calls = [{"name": name, "arguments": {}, "id": f"c{n}"} for n, name in enumerate(names, 1)]
    replies = [{"text": "calling", "tool_calls": calls}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "go"}]), extension)
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    return [(m["toolCallId"], m["content"][0]["text"]) for m in found]


def test_a_call_that_waits_ends_after_a_call_started_after_it(tmp_path: Path) -> None:
    ends: list[str] = []
    results = _play(tmp_path, ["slow", "fast", "slow"], ends)
    assert ends == ["c2", "c1", "c3"]
    assert results == [("c1", "slow"), ("c2", "fast"), ("c3", "slow")]


def test_calls_that_do_not_wait_end_in_call_order(tmp_path: Path) -> None:
    ends: list[str] = []
    assert _play(tmp_path, ["fast", "fast"], ends) == [("c1", "fast"), ("c2", "fast")]
    assert ends == ["c1", "c2"]


def test_a_call_that_aborts_the_run_does_not_stop_a_call_already_started(tmp_path: Path) -> None:
    ends: list[str] = []
    assert _play(tmp_path, ["stopper", "fast"], ends) == [("c1", "stopped"), ("c2", "fast")]
    assert ends == ["c1", "c2"]


def test_a_run_aborted_while_the_calls_are_prepared_runs_none_of_them(tmp_path: Path) -> None:
    """A ``tool_call`` handler aborts the run at the second call's preparation: that call ends
    there (``prepareToolCall`` looks at the signal after the handlers, agent-loop.js:505-510),
    and the first, prepared before, ends as it would start (each call checks the signal as it
    starts, :435-441), so neither runs and the second ends first."""
    ends: list[str] = []

    def abort_on_last(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            if event.tool_call_id == "c2":
                ctx.abort()

        pi.on("tool_call", handler)

    results = _play(tmp_path, ["slow", "fast"], ends, abort_on_last)
    assert results == [("c1", "Operation aborted"), ("c2", "Operation aborted")]
    assert ends == ["c2", "c1"]


def test_a_crash_while_calls_run_stops_the_calls_still_running(tmp_path: Path) -> None:
    """The process dies after the fast call's end while the slow one waits: nothing of the slow
    call happens after the crash (its task is cancelled with the process), not even while the
    restarted host's reply takes longer than the slow call's wait: no record, and no file the
    slow tool would have written once its wait was over."""

    async def slow_writer(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        await asyncio.sleep(0.5)
        (Path(ctx.cwd) / "after-the-wait.txt").write_text("written by a dead process")
        return _text("slow")

    def extension(pi: ExtensionAPI) -> None:
        _tools(pi, [], slow=slow_writer, fast=_fast)

    calls = [{"name": "slow", "arguments": {}, "id": "c1"}, {"name": "fast", "arguments": {}, "id": "c2"}]
    scenario = base(
        model={"agent": [{"text": "calling", "tool_calls": calls}, {"text": "DONE", "latency_ms": 2000}]},
        operations=[{"prompt": "go"}, "restart", {"prompt": "again"}],
    )
    scenario["faults"] = {"crash": [{"after": {"kind": "session", "name": "tool_execution_end"}}]}
    result = run(tmp_path, scenario, extension)
    trace = result.host.trace.records
    crash = next(i for i, r in enumerate(trace) if r["kind"] == "host" and r["name"] == "crash")
    assert (trace[crash - 2]["kind"], trace[crash - 2]["toolName"]) == ("session", "fast")
    restart = next(i for i, r in enumerate(trace) if r["kind"] == "op" and r["name"] == "restart")
    assert crash + 1 == restart
    assert not [r for r in trace if r["name"] == "tool_execution_end" and r.get("toolName") == "slow"]
    assert [r["name"] for r in trace[-2:]] == ["session_shutdown", "quit"]
    assert not list(tmp_path.rglob("after-the-wait.txt"))
