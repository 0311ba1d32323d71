"""Unit tests of result combination and coercion (JS truthiness) and of the extension runner:
dispatch order, error isolation, loading, stale contexts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, NotInitializedError, StaleContextError
from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    InputEvent,
    SessionBeforeCompactEvent,
    SessionStartEvent,
    coerce_before_compact_result,
    coerce_before_switch_result,
    coerce_input_result,
    js_truthy,
)
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.simulator.runner import ExtensionRunner
from pi_continuity_harness.simulator.ui import UIHub

from .helpers import base, event_records, long_text, run, session_records


@pytest.mark.parametrize(
    ("value", "truthy"),
    [
        (None, False),
        (False, False),
        (0, False),
        (0.0, False),
        ("", False),
        ({}, True),
        ([], True),
        ("x", True),
        (1, True),
        (True, True),
    ],
)
def test_js_truthy(value: Any, truthy: bool) -> None:
    assert js_truthy(value) is truthy


def test_coerce_before_compact_result() -> None:
    assert coerce_before_compact_result(None) is None
    assert coerce_before_compact_result(0) is None
    assert coerce_before_compact_result({}) == BeforeCompactResult()
    assert coerce_before_compact_result([]) == BeforeCompactResult()
    assert coerce_before_compact_result({"cancel": 1}).cancel is True  # type: ignore[union-attr]
    assert coerce_before_compact_result({"cancel": 0}).cancel is False  # type: ignore[union-attr]
    parsed = coerce_before_compact_result({"compaction": {"summary": "S", "tokensBefore": "x"}})
    assert parsed is not None and parsed.compaction == CompactionResult(
        summary="S", first_kept_entry_id=None, tokens_before="x"
    )  # type: ignore[arg-type]
    direct = CompactionResult("S", "id", 1)
    assert coerce_before_compact_result({"compaction": direct}).compaction is direct  # type: ignore[union-attr]
    assert coerce_before_compact_result({"compaction": "nonsense"}).compaction is None  # type: ignore[union-attr]
    same = BeforeCompactResult(cancel=True)
    assert coerce_before_compact_result(same) is same


def test_coerce_switch_and_input_results() -> None:
    assert coerce_before_switch_result({"cancel": True}).cancel is True  # type: ignore[union-attr]
    assert coerce_before_switch_result("") is None
    assert coerce_input_result({"action": "transform", "text": "t"}).text == "t"  # type: ignore[union-attr]
    assert coerce_input_result({"action": "nope"}) is None
    assert coerce_input_result(None) is None


def new_runner() -> tuple[ExtensionRunner, list[tuple[str, str, str]]]:
    errors: list[tuple[str, str, str]] = []
    trace = Trace(lambda: 0, "")
    runner = ExtensionRunner(
        cwd="/p",
        mode="rpc",
        session_manager=None,
        model_registry=None,
        ui=UIHub(trace),
        on_error=lambda path, event, error: errors.append((path, event, error)),
        on_call=lambda *a: None,
    )
    return runner, errors


def compact_event() -> SessionBeforeCompactEvent:
    prep = CompactionPreparation("id", [], [], False, 0, None, {}, CompactionSettings(True, 1, 1))
    return SessionBeforeCompactEvent(prep, [], None, "manual", False, AbortController().signal)


def load(runner: ExtensionRunner, *factories: Any) -> list[tuple[str, str]]:
    return asyncio.run(runner.load([(f"ext{i}", f) for i, f in enumerate(factories)]))


def test_last_truthy_wins_first_cancel_stops_and_errors_are_isolated() -> None:
    runner, errors = new_runner()
    calls: list[str] = []

    def ext(name: str, value: Any) -> Any:
        def factory(pi: ExtensionAPI) -> None:
            def handler(e: Any, c: Any) -> Any:
                calls.append(name)
                if isinstance(value, Exception):
                    raise value
                return value

            pi.on("session_before_compact", handler)

        return factory

    load(
        runner,
        ext("a", {"compaction": {"summary": "A"}}),
        ext("b", RuntimeError("boom")),
        ext("c", None),
        ext("d", {}),
    )
    result = asyncio.run(runner.emit(compact_event()))
    assert calls == ["a", "b", "c", "d"]
    assert result == BeforeCompactResult()
    assert errors == [("ext1", "session_before_compact", "boom")]
    runner2, _ = new_runner()
    calls.clear()
    load(runner2, ext("a", {"cancel": True}), ext("b", {"compaction": {"summary": "B"}}))
    assert asyncio.run(runner2.emit(compact_event())) == BeforeCompactResult(cancel=True)
    assert calls == ["a"]


def test_handlers_run_in_load_then_registration_order_on_a_snapshot() -> None:
    runner, _ = new_runner()
    order: list[str] = []

    def first(pi: ExtensionAPI) -> None:
        def one(e: Any, c: Any) -> None:
            order.append("1a")
            pi.on("session_start", lambda e, c: order.append("late"))

        pi.on("session_start", one)
        unsubscribe = pi.on("session_start", lambda e, c: order.append("gone"))
        pi.on("session_start", lambda e, c: order.append("1b"))
        unsubscribe()

    def second(pi: ExtensionAPI) -> None:
        async def two(e: Any, c: Any) -> None:
            await asyncio.sleep(0)
            order.append("2")

        pi.on("session_start", two)

    load(runner, first, second)
    asyncio.run(runner.emit(SessionStartEvent(reason="startup")))
    assert order == ["1a", "1b", "2"]
    asyncio.run(runner.emit(SessionStartEvent(reason="startup")))
    assert order[3:] == ["1a", "1b", "late", "2"]


def test_a_handler_unsubscribed_by_an_earlier_one_of_the_same_dispatch_does_not_run() -> None:
    """On real Pi a Python handler is the bridge's Pi handler (``bridge.ts`` ``registerHandler``):
    Pi's per-dispatch snapshot keeps it, but after ``unsubscribe`` it answers ``undefined``
    without calling Python (``BridgeExtensionAPI.on``), so the unsubscribed one does not run
    even in the dispatch that unsubscribed it (the simulator used to run it there)."""
    runner, _ = new_runner()
    order: list[str] = []
    off: dict[str, Any] = {}

    def factory(pi: ExtensionAPI) -> None:
        def first(e: Any, c: Any) -> None:
            order.append("first")
            off["second"]()

        pi.on("session_start", first)
        off["second"] = pi.on("session_start", lambda e, c: order.append("second"))
        again = pi.on("session_start", lambda e, c: order.append("third"))
        again()
        again()  # twice is once

    load(runner, factory)
    asyncio.run(runner.emit(SessionStartEvent(reason="startup")))
    asyncio.run(runner.emit(SessionStartEvent(reason="startup")))
    assert order == ["first", "first"]
    assert runner.has_handlers("session_start")


def test_input_transforms_chain_and_handled_short_circuits() -> None:
    runner, _ = new_runner()
    seen: list[str] = []

    def a(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, c: {"action": "transform", "text": e.text + "+a"})

    def b(pi: ExtensionAPI) -> None:
        def handler(e: Any, c: Any) -> Any:
            seen.append(e.text)
            return {"action": "handled"} if e.text.startswith("stop") else None

        pi.on("input", handler)

    def c(pi: ExtensionAPI) -> None:
        pi.on("input", lambda e, ctx: seen.append("c:" + e.text))

    load(runner, a, b, c)
    result = asyncio.run(
        runner.emit_input(InputEvent(text="go", images=None, source="rpc", streaming_behavior=None))
    )
    assert (result.action, result.text) == ("transform", "go+a")
    assert seen == ["go+a", "c:go+a"]
    seen.clear()
    result = asyncio.run(
        runner.emit_input(InputEvent(text="stop", images=None, source="rpc", streaming_behavior=None))
    )
    assert result.action == "handled" and seen == ["stop+a"]


def test_duplicate_commands_become_numbered() -> None:
    runner, _ = new_runner()

    async def handler(args: str, ctx: Any) -> None:
        return None

    def ext(pi: ExtensionAPI) -> None:
        pi.register_command("psc", handler)

    load(runner, ext, ext)
    assert runner.command_names() == ["psc:1", "psc:2"]
    assert runner.get_command("psc") is None
    assert runner.get_command("psc:2") is not None


def test_action_methods_raise_during_loading_and_a_failing_factory_is_skipped() -> None:
    runner, errors = new_runner()
    seen: list[str] = []

    def eager(pi: ExtensionAPI) -> None:
        pi.on("session_start", lambda e, c: None)  # allowed during load
        try:
            pi.send_user_message("too early")
        except NotInitializedError as error:
            seen.append(str(error))

    def broken(pi: ExtensionAPI) -> None:
        raise ValueError("cannot load")

    async def asynchronous(pi: ExtensionAPI) -> None:
        await asyncio.sleep(0)
        pi.on("session_start", lambda e, c: None)

    failures = load(runner, eager, broken, asynchronous)
    assert seen == [
        "Extension runtime not initialized. Action methods cannot be called during extension loading."
    ]
    assert [r.path for r in runner.extensions] == ["ext0", "ext2"]
    # The runner returns load failures; the host decides (real Pi refuses to start on them).
    assert failures == [("ext1", "cannot load")]
    assert errors == []


def test_captured_ctx_and_pi_are_stale_after_reload(tmp_path: Path) -> None:
    captured: dict[str, Any] = {}
    outcomes: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def keep(args: str, ctx: Any) -> None:
            if "pi" not in captured:
                captured.update(pi=pi, ctx=ctx)
                return
            for name, action in (
                ("ctx.cwd", lambda: captured["ctx"].cwd),
                ("ctx.is_idle", captured["ctx"].is_idle),
                ("pi.get_settings", captured["pi"].get_settings),
                ("pi.on", lambda: captured["pi"].on("x", lambda e, c: None)),
            ):
                try:
                    action()
                    outcomes.append(f"{name}: ok")
                except StaleContextError as error:
                    outcomes.append(
                        f"{name}: stale"
                        if "stale after session replacement or reload" in str(error)
                        else str(error)
                    )
            outcomes.append(f"fresh: {ctx.is_idle()}")

        pi.register_command("keep", keep)

    result = run(
        tmp_path, base(operations=[{"command": "/keep"}, {"reload": None}, {"command": "/keep"}]), ext
    )
    assert outcomes == [
        "ctx.cwd: stale",
        "ctx.is_idle: stale",
        "pi.get_settings: stale",
        "pi.on: stale",
        "fresh: True",
    ]
    assert [r["reason"] for r in event_records(result, "session_start")] == ["startup", "reload"]


def test_reload_is_refused_while_streaming(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "hello"}],
        model={"agent": [{"text": "x", "latency_ms": 5, "during": [{"reload": None}]}]},
    )
    result = run(tmp_path, scenario)
    reload_end = next(
        r for r in result.host.trace.records if r["kind"] == "op" and r["name"] == "reload" and r.get("phase")
    )
    assert reload_end["error"] == "Wait for the current response to finish before reloading."
    assert session_records(result, "agent_settled")[0]["aborted"] is False


def test_reload_is_refused_while_compacting(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": long_text("one")}, {"prompt": long_text("two")}, {"compact": None}],
        model={"summary": [{"text": "S", "latency_ms": 5, "during": [{"reload": None}]}]},
    )
    result = run(tmp_path, scenario)
    reload_end = next(
        r for r in result.host.trace.records if r["kind"] == "op" and r["name"] == "reload" and r.get("phase")
    )
    assert reload_end["error"] == "Wait for compaction to finish before reloading."
    assert [o.ok for o in result.operations] == [True, True, True]
    assert [r["reason"] for r in event_records(result, "session_start")] == ["startup"]
