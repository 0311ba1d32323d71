"""Held model calls: ``during`` operations run while a call is open; aborts resolve it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.model_service import HELD_CALL_GRACE_SECONDS

from .helpers import base, labels, long_text, run, session_records


def model_records(result: Any) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "model"]


def test_latency_is_virtual_time(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        base(operations=[{"prompt": "hi"}], model={"agent": [{"text": "slow", "latency_ms": 90000}]}),
    )
    request, reply = model_records(result)
    assert reply["t"] - request["t"] == 90000


def test_during_operations_run_while_the_call_is_held(tmp_path: Path) -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def note(args: str, ctx: Any) -> None:
            seen.append((args, ctx.is_idle(), ctx.signal is not None))

        pi.register_command("note", note)

    scenario = base(
        operations=[{"prompt": "hi"}],
        model={"agent": [{"text": "reply", "latency_ms": 10, "during": [{"command": "/note busy"}]}]},
    )
    result = run(tmp_path, scenario, ext)
    assert seen == [("busy", False, True)]
    held = next(r for r in model_records(result) if r["name"] == "held")
    assert (held["caller"], held["operations"]) == ("agent", 1)
    command = [r for r in result.host.trace.records if r["kind"] == "op" and r["name"] == "command"]
    assert command[0]["during"] is True and command[1]["disposition"] == "handled"
    order = labels(result, "op", "model")
    assert order.index("op:command:end") < order.index("model:reply")
    assert session_records(result, "message_end")[-1]["text"] == "reply"


def test_abort_while_held_resolves_the_call_aborted(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "hi"}, {"prompt": "again"}],
        model={"agent": [{"text": "never", "latency_ms": 5000, "during": ["abort"]}, {"text": "second"}]},
    )
    result = run(tmp_path, scenario)
    reply = next(r for r in model_records(result) if r["name"] == "reply")
    assert (reply["stopReason"], reply["errorMessage"]) == ("aborted", "Request aborted")
    assert reply["t"] < 5000  # released at the abort, not after the latency
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [True, False]
    abort_end = next(
        r for r in result.host.trace.records if r["kind"] == "op" and r["name"] == "abort" and r.get("phase")
    )
    assert abort_end["ok"] is True
    # The scripted reply was used by the aborted call; the next prompt gets the next one.
    assert session_records(result, "message_end")[-1]["text"] == "second"


def test_a_held_call_without_a_signal_is_released_after_the_grace_period(tmp_path: Path) -> None:
    """The hook calls ``complete()`` without the signal; the held ``abort`` waits for it → released after the grace."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            reply = await ctx.model_registry.complete(ctx.model, {"messages": []})
            seen.append(reply["stopReason"])
            return {
                "compaction": {
                    "summary": "LATE",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)

    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={
            "agent": [{"text": long_text("a1")}, {"text": long_text("a2"), "context_tokens": 17010}],
            "extension": [{"kind": "valid", "during": ["abort"]}],
        },
    )
    result = run(tmp_path, scenario, ext)
    assert seen == ["stop"]
    released = next(r for r in model_records(result) if r["name"] == "released")
    assert released["reason"] == "grace elapsed"
    assert released["t"] >= HELD_CALL_GRACE_SECONDS * 1000
    # The result came back after the abort: Pi discards it.
    end = session_records(result, "compaction_end")[-1]
    assert end["aborted"] is True
    failed = [
        r for r in result.host.trace.records if r["kind"] == "event" and r["name"] == "session_compact_failed"
    ]
    assert failed[0]["fromExtension"] is True


def test_requests_are_numbered_per_kind_and_outlive_restarts(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"restart": None}, {"prompt": "two"}],
        model={"agent": [{"text": "first"}, {"text": "second"}]},
    )
    result = run(tmp_path, scenario)
    assert [(r.kind, r.index) for r in result.host.service.requests] == [("agent", 0), ("agent", 1)]
    assert session_records(result, "message_end")[-1]["text"] == "second"
