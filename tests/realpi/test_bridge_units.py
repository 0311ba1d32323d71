"""The bridge and the PiTarget helpers without Pi: the Python side speaks the protocol over pipes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from realpi.bridge_driver import CTX, EXTENSIONS, Bridge

from pi_continuity_harness.api import NotInitializedError, PiError, StaleContextError
from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import (
    AgentBeforeSettleEvent,
    BeforeCompactResult,
    CompactionResult,
    ContextEvent,
    ContextWithSystemEvent,
    InputResult,
    ResourcesDiscoverEvent,
    SessionBeforeCompactEvent,
    ToolExecutionEndEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    UserBashEvent,
)
from pi_continuity_harness.scenario.faults import FsFault
from pi_continuity_harness.scenario.fs_monitor import FilesystemMonitor
from pi_continuity_harness.scenario.model_script import (
    ModelOutcome,
    ModelRequest,
    ModelScript,
    Reply,
    SynthesisReply,
    Usage,
)
from pi_continuity_harness.scenario.operations import AbortOp, DialogAnswer, Operation
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.targets.realpi import (
    AnswerRules,
    FakeModelServer,
    PiRpcProcess,
    PiTarget,
    normalise_session_event,
)
from pi_continuity_harness.targets.realpi.bridge_runtime import _replay_counters
from pi_continuity_harness.targets.realpi.wire import (
    BridgeCallError,
    Connection,
    GenericEvent,
    PiCallError,
    build_event,
    result_to_wire,
    unwrap_reply,
)
from pi_continuity_harness.targets.target import HeldOutcome, OperationOutcome, Target

# ----------------------------------------------------------------------------- helpers


def test_normalise_session_events() -> None:
    assert normalise_session_event({"type": "message_update", "usage": {}}) is None
    assert normalise_session_event({"type": "queue_update", "steering": [], "followUp": ["a", "b"]}) == {
        "type": "queue_update",
        "steering": 0,
        "followUp": 2,
    }
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "x" * 100}],
        "stopReason": "stop",
        "usage": {"totalTokens": 7},
    }
    assert normalise_session_event({"type": "message_end", "message": message}) == {
        "type": "message_end",
        "role": "assistant",
        "stopReason": "stop",
        "totalTokens": 7,
        "text": "x" * 80,
    }
    edit = {"type": "context_edit", "id": "e1", "targetId": "t1"}
    assert normalise_session_event({"type": "entry_appended", "entry": edit}) == {
        "type": "entry_appended",
        "entryType": "context_edit",
        "id": "e1",
        "targetId": "t1",
    }
    end = normalise_session_event(
        {
            "type": "compaction_end",
            "reason": "manual",
            "aborted": False,
            "willRetry": False,
            "result": {"summary": "S"},
        }
    )
    assert end is not None and end["result"]["summaryChars"] == 1


def test_answer_rules_follow_pick_answer() -> None:
    rules = AnswerRules([DialogAnswer(input="80", when="percent"), DialogAnswer(confirm=True)])
    assert rules({"method": "confirm", "title": "Go", "message": "Proceed?"}) == DialogAnswer(confirm=True)
    assert rules({"method": "input", "title": "Trigger percent", "placeholder": "75"}) == DialogAnswer(
        input="80", when="percent"
    )
    assert rules({"method": "select", "title": "Other", "options": ["a"]}) is None
    assert [r.get("answer") for r in rules.records] == [
        {"confirm": True},
        {"input": "80", "when": "percent"},
        None,
    ]
    # A scenario error cancels at once (not None: a timed dialog would be left to Pi's timer).
    rules.set([DialogAnswer(select="/zzz/")])
    assert rules({"method": "select", "title": "Pick", "options": ["a", "b"], "timeout": 300}) == {
        "cancelled": True
    }
    assert rules.take_errors() == ["select 'Pick': '/zzz/' matches none of ['a', 'b']"]
    rules.set([DialogAnswer(input="x")])
    assert rules({"method": "confirm", "title": "C", "message": "", "timeout": 300}) == {"cancelled": True}
    assert "next scripted answer is 'input'" in rules.take_errors()[0]


class _Stdin(io.BytesIO):
    def close(self) -> None:  # keep what was written readable
        pass


class _Proc:
    """What :class:`PiRpcProcess` writes to (``_proc.stdin``), without a process."""

    def __init__(self) -> None:
        self.stdin = _Stdin()
        self.pid = 0

    def poll(self) -> int:
        return 0

    def lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdin.getvalue().splitlines()]


@pytest.mark.parametrize("scripted", [False, True])
def test_an_unanswered_timed_dialog_is_left_to_pis_timer(scripted: bool) -> None:
    """Pi 1.6 gives a dialog asked with a truthy ``timeout`` its default when its timer fires
    (``dist/modes/rpc/rpc-mode.js:69-74``): the client sends no response for one it has no
    answer for, with the :class:`AnswerRules` of a scenario or the FIFO alike, and records it
    without one. An untimed (or ``timeout: 0``) unanswered dialog, and a scenario error's, are
    cancelled at once, as before."""
    proc = PiRpcProcess(["pi"])
    fake = _Proc()
    proc._proc = fake  # type: ignore[assignment]
    rules = AnswerRules()
    if scripted:
        proc.set_dialog_answerer(rules)
    requests = [
        {"type": "extension_ui_request", "id": "t", "method": "confirm", "title": "T", "timeout": 400},
        {"type": "extension_ui_request", "id": "z", "method": "confirm", "title": "Z", "timeout": 0},
        {"type": "extension_ui_request", "id": "u", "method": "select", "title": "U", "options": ["a"]},
    ]
    for request in requests:
        proc._dispatch(request)
    if scripted:  # a positional input answer for a timed confirm: a mismatch, cancelled at once
        rules.set([DialogAnswer(input="x")])
        requests.append({**requests[0], "id": "m", "title": "M"})
        proc._dispatch(requests[-1])
    cancelled = {"type": "extension_ui_response", "cancelled": True}
    expected = [{**cancelled, "id": rid} for rid in ["z", "u"] + (["m"] if scripted else [])]
    assert fake.lines() == expected
    assert [(d.request["id"], d.response) for d in proc.dialogs] == [
        (r["id"], None if r["id"] == "t" else {**cancelled, "id": r["id"]}) for r in requests
    ]
    if scripted:
        assert [r["title"] for r in rules.records] == ["T", "Z", "U", "M"]
        assert all("answer" not in r for r in rules.records)
        assert "next scripted answer is 'input'" in rules.take_errors()[0]


def test_results_in_pis_json_shape() -> None:
    compaction = CompactionResult(summary="S", first_kept_entry_id="k", tokens_before=5, details={"a": 1})
    assert result_to_wire(BeforeCompactResult(compaction=compaction)) == {
        "compaction": {"summary": "S", "firstKeptEntryId": "k", "tokensBefore": 5, "details": {"a": 1}}
    }
    assert result_to_wire(BeforeCompactResult(cancel=True)) == {"cancel": True}
    assert result_to_wire(BeforeCompactResult()) == {}  # truthy in JS: replaces an earlier result
    assert result_to_wire(InputResult("transform", "t")) == {"action": "transform", "text": "t"}
    assert result_to_wire(None) is None
    assert result_to_wire({"cancel": True}) == {"cancel": True}


def test_a_lone_surrogate_crosses_the_wire_escaped_and_the_connection_stays_open() -> None:
    """A str may hold a lone surrogate, which UTF-8 cannot encode: the line escapes it (JSON's
    ``\\ud800``, which ``JSON.parse`` reads as that surrogate). The UnicodeEncodeError was a
    ValueError inside ``send``'s ``except``: the connection was marked closed and every later
    call raised "Pi has exited"."""
    written = io.BytesIO()
    conn = Connection(io.BytesIO(), written)
    conn.send({"type": "call", "args": ["lone \ud800", "é"]})
    conn.send({"type": "call", "args": ["next"]})
    assert not conn.closed
    first, second = written.getvalue().splitlines()
    assert first == b'{"type":"call","args":["lone \\ud800","\\u00e9"]}'
    assert json.loads(first)["args"] == ["lone \ud800", "é"]
    assert second == b'{"type":"call","args":["next"]}'


def test_events_become_the_simulators_dataclasses() -> None:
    signals: dict[str, AbortSignal] = {}

    def signal_from(ref: Any) -> AbortSignal | None:
        return signals.setdefault(ref["$signal"], AbortSignal()) if ref else None

    event = build_event(
        {
            "type": "session_before_compact",
            "reason": "threshold",
            "willRetry": False,
            "preparation": {
                "firstKeptEntryId": "k",
                "messagesToSummarize": [{"role": "user"}],
                "turnPrefixMessages": [],
                "isSplitTurn": True,
                "tokensBefore": 17010,
                "fileOps": {"read": ["b", "a"], "written": [], "edited": []},
                "settings": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100},
            },
            "branchEntries": [],
            "signal": {"$signal": "s1", "aborted": False},
        },
        signal_from,
    )
    assert isinstance(event, SessionBeforeCompactEvent)
    assert event.preparation.settings.reserve_tokens == 4000
    assert event.preparation.file_ops["read"] == ["a", "b"]
    assert event.signal is signals["s1"]
    update = build_event(
        {
            "type": "tool_execution_update",
            "toolCallId": "c",
            "toolName": "bash",
            "partialResult": {"content": []},
        },
        signal_from,
    )
    assert update == ToolExecutionUpdateEvent(
        tool_call_id="c", tool_name="bash", args={}, partial_result={"content": []}
    )
    settle = build_event(
        {
            "type": "agent_before_settle",
            "outcome": "error",
            "entries": [{"type": "custom"}],
            "continue": True,
        },
        signal_from,
    )
    assert settle == AgentBeforeSettleEvent(outcome="error", entries=[{"type": "custom"}], continue_=True)
    end = build_event(
        {"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "result": {}, "isError": False},
        signal_from,
    )
    assert isinstance(end, ToolExecutionEndEvent) and end.duration_ms is None
    timed = build_event(
        {"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "durationMs": 7}, signal_from
    )
    assert isinstance(timed, ToolExecutionEndEvent) and timed.duration_ms == 7
    turn = build_event(
        {
            "type": "turn_end",
            "turnIndex": 2,
            "message": {"role": "assistant"},
            "toolResults": [],
            "messageEntryId": "m",
            "toolResultEntryIds": [],
            "outcome": "completed",
            "entries": [{"type": "custom"}],
            "continue": True,
        },
        signal_from,
    )
    assert isinstance(turn, TurnEndEvent)
    assert (turn.turn_index, turn.entries, turn.continue_) == (2, [{"type": "custom"}], True)
    context = build_event({"type": "context", "messages": [{"role": "user", "content": "u"}]}, signal_from)
    assert context == ContextEvent(messages=[{"role": "user", "content": "u"}])
    discover = build_event({"type": "resources_discover", "cwd": "/p", "reason": "reload"}, signal_from)
    assert discover == ResourcesDiscoverEvent(cwd="/p", reason="reload")
    system = build_event(
        {"type": "context_with_system", "messages": [{"role": "system", "content": ""}]}, signal_from
    )
    assert system == ContextWithSystemEvent(messages=[{"role": "system", "content": ""}])
    bash = build_event(
        {"type": "user_bash", "command": "ls", "excludeFromContext": False, "cwd": "/p"}, signal_from
    )
    assert bash == UserBashEvent(command="ls", exclude_from_context=False, cwd="/p")
    generic = build_event({"type": "a_later_event", "excludeFromContext": True}, signal_from)
    assert isinstance(generic, GenericEvent) and generic.exclude_from_context is True


def test_fake_server_extend_appends_by_kind() -> None:
    server = FakeModelServer(ModelScript(agent=(Reply(text="a"),)))
    server.extend("agent", [Reply(text="b")])
    server.extend("extension", [SynthesisReply(kind="empty")])
    assert [r.text for r in server.script.agent] == ["a", "b"]
    assert server.script.extension[0].kind == "empty"
    with pytest.raises(TypeError):
        server.extend("summary", [SynthesisReply()])


def test_fs_fault_counters_continue_across_pi_processes(tmp_path: Path) -> None:
    """A new bridge process replays the ``fs`` records of the earlier ones, so ``occurrence``
    counts every matching operation of the run, as across simulated restarts."""
    project = str(tmp_path / "project")
    fault = FsFault.model_validate(
        {"op": "write", "path": "$PROJECT/out/*", "occurrence": 2, "errno": "ENOSPC"}
    )

    def monitor() -> FilesystemMonitor:
        return FilesystemMonitor(str(tmp_path), {"$PROJECT": project}, Trace(lambda: 0, ""), (fault,))

    records = tmp_path / "records.jsonl"
    earlier = [
        {"kind": "fs", "name": "read", "path": f"{project}/out/one.txt"},  # another op: not counted
        {"kind": "fs", "name": "write", "path": f"{project}/out/one.txt"},
        {"kind": "fault", "name": "fs", "op": "write", "path": f"{project}/out/one.txt"},
    ]
    records.write_text("".join(json.dumps(r) + "\n" for r in earlier), encoding="utf-8")
    fresh = monitor()
    fresh.observe("write", f"{project}/out/two.txt")  # the first matching write of a new run
    replayed = monitor()
    _replay_counters(replayed, str(records))
    with pytest.raises(OSError, match="No space left on device"):
        replayed.observe("write", f"{project}/out/two.txt")
    replayed.observe("write", f"{project}/out/three.txt")  # times=1: fired once


# ----------------------------------------------------------------------------- protocol


@pytest.fixture(params=["fresh", "zygote"])
def bridge(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bridge]:
    """The bridge as a fresh ``python -m`` process and forked by a zygote (bridge_zygote.py)."""
    zygote = request.getfixturevalue("zygote") if request.param == "zygote" else None
    b = Bridge("probe_ext:extension", tmp_path, zygote=zygote)
    try:
        yield b
    finally:
        b.kill()


def test_bridge_loads_serves_events_and_goes_stale(bridge: Bridge) -> None:
    loaded = bridge.request({"type": "load", "inst": 1})
    assert loaded["type"] == "result"
    handlers = loaded["value"]["handlers"]
    assert [h[0] for h in handlers] == [
        "session_start",
        "session_before_compact",
        "session_compact",
        "model_select",
    ]
    assert [c[0] for c in loaded["value"]["commands"]] == [
        "probe-ask",
        "probe-held",
        "probe-timed",
        "probe-unanswered",
        "probe-stale",
        "probe-write",
        "probe-info",
        "probe-pause",
    ]

    started = bridge.request(
        {
            "type": "event",
            "inst": 1,
            "handler": 0,
            "event": {"type": "session_start", "reason": "startup"},
            "ctx": CTX,
        }
    )
    assert started == {"type": "result", "id": started["id"], "value": None, "undefined": True}
    [status] = bridge.calls
    assert (status["target"], status["method"], status["args"], status["noreply"]) == (
        "ui",
        "setStatus",
        ["probe", "started:startup"],
        True,
    )

    # A second load (reload): the first instance's ctx and pi are stale, the new ctx is live.
    bridge.calls.clear()
    bridge.request({"type": "load", "inst": 2})
    done = bridge.request(
        {
            "type": "command",
            "inst": 2,
            "name": "probe-stale",
            "args": "",
            "ctx": {**CTX, "id": "c2", "inst": 2},
        },
        answer={"isIdle": True},
    )
    assert done["type"] == "result"
    notify = [c for c in bridge.calls if c["method"] == "notify"]
    assert notify[0]["args"] == ["stale: ctx:stale pi:stale current:ok", "info"]
    assert bridge.close() == 0


def test_bridge_reports_handler_errors_with_pis_text(bridge: Bridge) -> None:
    bridge.request({"type": "load", "inst": 1})
    # model_select handler reads event.model.full_id: a null model raises AttributeError.
    failed = bridge.request(
        {
            "type": "event",
            "inst": 1,
            "handler": 3,
            "event": {"type": "model_select", "model": None},
            "ctx": CTX,
        }
    )
    assert failed["type"] == "error" and "full_id" in failed["error"]
    assert bridge.close() == 0


def test_action_methods_raise_while_loading(tmp_path: Path) -> None:
    b = Bridge("probe_loading:extension", tmp_path)
    try:
        loaded = b.request({"type": "load", "inst": 1})
        assert loaded["type"] == "result"
        assert loaded["value"]["commands"] == [
            [
                "loading-error",
                "Extension runtime not initialized. Action methods cannot be called during extension loading.",
            ]
        ]
    finally:
        b.close()


def test_pi_target_satisfies_the_target_protocol(tmp_path: Path) -> None:
    bridged = PiTarget("probe_ext:extension", tmp_path / "a")
    direct = PiTarget(str(EXTENSIONS / "dialogs.ts"), tmp_path / "b")
    assert isinstance(bridged, Target)
    assert bridged.implementation == "probe_ext:extension" and bridged.bridged and not direct.bridged
    assert "fs-faults" in bridged.capabilities() and "fs-faults" not in direct.capabilities()
    assert "virtual-time" not in bridged.capabilities() and "trace-faults" not in bridged.capabilities()


def test_a_held_calls_operations_name_the_operation_running_when_it_arrived(tmp_path: Path) -> None:
    """Pi answers ``abort`` only once idle (``dist/modes/rpc/rpc-mode.js:353-355``,
    ``dist/core/agent-session.js:2082-2093``), after ``agent_settled`` went out
    (``agent-session.js:742-765``), so the main thread may record the running operation before
    the abort a held call ran returns. The held outcome still names that operation, as the
    simulator does (differential seed 178: 4 on real Pi, 3 on the simulator)."""
    target = PiTarget("reference", tmp_path / "pi", install=False)
    target._outcomes.append(OperationOutcome("prompt", True, disposition="started"))  # operation 0 done
    ran: list[Operation] = []

    def run_while_the_main_thread_settles(op: Operation, *, during: bool) -> OperationOutcome:
        assert during
        ran.append(op)
        target._outcomes.append(OperationOutcome("prompt", True, disposition="started"))  # operation 1
        return OperationOutcome("abort", True)

    target._run = run_while_the_main_thread_settles  # type: ignore[method-assign]
    request = ModelRequest(kind="agent", index=1, model="fake/main", system_prompt=None, messages=[])
    held = ModelOutcome(
        text="never",
        thinking=None,
        tool_calls=(),
        stop_reason="stop",
        usage=Usage(),
        error=None,
        latency_ms=0,
        during=(AbortOp(),),
    )
    target._on_hold(request, held)
    assert ran == [AbortOp()]
    assert target._held == [HeldOutcome("agent#1", 1, OperationOutcome("abort", True))]


def test_a_reply_error_is_raised_by_its_kind() -> None:
    """``bridge.ts`` ``handleCall``: an Error Pi's API threw (kind ``error``) is the API's
    ``PiError`` and still a ``BridgeCallError``; the bridge's own failure (kind ``bridge``) is
    no ``PiError``; stale and not-initialized keep their classes. The message is Pi's."""
    raised: dict[str, BaseException] = {}
    for kind in ("error", "bridge", "stale", "notInitialized"):
        with pytest.raises(Exception) as caught:
            unwrap_reply({"type": "reply", "id": "1", "error": f"said {kind}", "kind": kind})
        raised[kind] = caught.value
    assert type(raised["error"]) is PiCallError and str(raised["error"]) == "said error"
    assert isinstance(raised["error"], PiError) and isinstance(raised["error"], BridgeCallError)
    assert type(raised["bridge"]) is BridgeCallError and not isinstance(raised["bridge"], PiError)
    assert type(raised["stale"]) is StaleContextError
    assert type(raised["notInitialized"]) is NotInitializedError
    assert unwrap_reply({"type": "reply", "id": "1", "value": 3}) == 3
