"""Extension events Pi raises from inside a run that a Python extension sees through the bridge,
dispatched by the simulator at the same point with the same fields (``AgentSession``); the
differential twins on real Pi are ``tests/realpi/test_differential_<event>.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult
from pi_continuity_harness.scenario.observed import OBSERVABLE_EVENTS
from pi_continuity_harness.simulator.agent_session import _RUN_EVENTS
from pi_continuity_harness.simulator.runner import _restore_system_messages

from .helpers import agent_requests, base, entries, event_records, run, session_records

BASH = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
TOOL_EVENTS = ("tool_execution_start", "tool_execution_update", "tool_result", "tool_execution_end")


def test_a_running_tools_partial_results_reach_extensions_between_its_start_and_its_result(
    tmp_path: Path,
) -> None:
    """agent-session.js:1026-1034: every ``tool_execution_update`` goes to the extensions with
    the call's id, name, arguments and partial result, after ``tool_execution_start`` and before
    ``tool_result`` (pi-agent-core awaits the updates first, agent-loop.js:568-581); a copy per
    handler call, its return value ignored, a raising handler an ``extension_error``."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def record(event: Any, ctx: Any) -> Any:
            if event.type == "tool_execution_update":
                seen.append(
                    (event.type, event.tool_call_id, event.tool_name, event.args, dict(event.partial_result))
                )
                event.partial_result["content"] = ["changed in place"]
                return {"content": []}
            seen.append((event.type,))
            return None

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError(f"failed at {len(event.partial_result['content'])}")

        for name in TOOL_EVENTS:
            pi.on(name, record)
        pi.on("tool_execution_update", fail)

    result = run(
        tmp_path,
        base(
            model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
            operations=[{"prompt": "hello"}],
        ),
        extension,
    )
    update = ("tool_execution_update", "c1", "bash", {"command": "echo hi"})
    assert seen == [
        ("tool_execution_start",),
        (*update, {"content": []}),
        (*update, {"content": [{"type": "text", "text": "hi\n"}], "details": {}}),
        ("tool_result",),
        ("tool_execution_end",),
    ]
    errors = [(r["event"], r["error"]) for r in session_records(result, "extension_error")]
    assert errors == [("tool_execution_update", "failed at 0"), ("tool_execution_update", "failed at 1")]
    assert len(event_records(result, "tool_execution_update")) == 2


def test_a_tool_update_no_extension_listens_to_is_not_dispatched(tmp_path: Path) -> None:
    """With no handler, Pi's ``emit`` runs nothing; the simulator does no dispatch work for it
    (no trace record)."""
    result = run(
        tmp_path,
        base(
            model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
            operations=[{"prompt": "hello"}],
        ),
    )
    assert event_records(result, "tool_execution_update") == []
    assert len(session_records(result, "tool_execution_end")) == 1


def test_tool_execution_end_carries_the_virtual_duration_of_a_call_that_ran(tmp_path: Path) -> None:
    """pi-agent-core agent-loop.js:565-596, 645-668 and agent-session.js:1036-1045: an executed
    call's ``durationMs`` (here 2.5 s of virtual time in the tool) reaches the extensions and is
    the tool result message's; a call refused before it runs has none."""
    seen: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        await asyncio.sleep(2.5)
        return ToolResult(content=[{"type": "text", "text": "slept"}])

    def extension(pi: ExtensionAPI) -> None:
        pi.register_tool(
            ToolDefinition(
                name="nap",
                label="Nap",
                description="Sleeps.",
                parameters={"type": "object", "properties": {}},
                execute=execute,
            )
        )
        pi.on("tool_execution_end", lambda event, ctx: seen.append((event.tool_name, event.duration_ms)))

    calls = [
        {"name": "nap", "arguments": {}, "id": "n1"},
        {"name": "no_such_tool", "arguments": {}, "id": "x"},
    ]
    scenario = base(
        model={"agent": [{"text": "t", "tool_calls": calls}, {"text": "DONE"}]}, operations=[{"prompt": "go"}]
    )
    result = run(tmp_path, scenario, extension)
    assert seen == [("no_such_tool", None), ("nap", 2500)]
    durations = [
        e["message"].get("durationMs")
        for e in entries(result)
        if e.get("message", {}).get("role") == "toolResult"
    ]
    assert durations == [2500, None]


THINKING_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
    {"id": "fake/fake-think", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
]


def test_a_changed_thinking_level_reaches_extensions_before_the_switchs_model_select(tmp_path: Path) -> None:
    """agent-session.js:2219-2238: a change of the clamped level hands the extensions
    ``thinking_level_select`` (level, previous level), unawaited but called at once, so before the
    same ``setModel``'s ``model_select`` (:2134-2136); none when the level stays; a raising handler
    is an ``extension_error``, a return value changes nothing."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def level(event: Any, ctx: Any) -> Any:
            seen.append((event.type, event.level, event.previous_level, pi.get_thinking_level()))
            return {"level": "minimal"}

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError(f"failed at {event.level}")

        pi.on("thinking_level_select", level)
        pi.on("thinking_level_select", fail)
        pi.on("model_select", lambda event, ctx: seen.append(("model_select", event.model.id)))

    scenario = base(
        models=THINKING_MODELS,
        settings={"project": {"defaultThinkingLevel": "high"}},
        operations=[
            {"set_model": "fake/fake-think"},
            {"set_model": "fake/fake-think"},
            {"set_model": "fake/fake-model"},
        ],
    )
    result = run(tmp_path, scenario, extension)
    assert seen == [
        ("thinking_level_select", "high", "off", "high"),
        ("model_select", "fake-think"),
        ("thinking_level_select", "off", "high", "off"),
        ("model_select", "fake-model"),
    ]
    errors = [(r["event"], r["error"]) for r in session_records(result, "extension_error")]
    assert errors == [("thinking_level_select", "failed at high"), ("thinking_level_select", "failed at off")]
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high", "off"]


def test_a_thinking_level_change_no_extension_listens_to_is_not_dispatched(tmp_path: Path) -> None:
    scenario = base(
        models=THINKING_MODELS,
        settings={"project": {"defaultThinkingLevel": "high"}},
        operations=[{"set_model": "fake/fake-think"}],
    )
    result = run(tmp_path, scenario)
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high"]
    assert event_records(result, "thinking_level_select") == []


def _before_settle(answers: dict[int, Any], seen: list[Any], *, abort: bool = False) -> Any:
    """An extension whose ``agent_before_settle`` handler answers its n-th call with
    ``answers[n]`` (after recording the event), and whose second handler records what it sees."""

    def extension(pi: ExtensionAPI) -> None:
        calls = [0]

        def settle(event: Any, ctx: Any) -> Any:
            calls[0] += 1
            seen.append((calls[0], event.outcome, event.entries, event.continue_))
            if abort:
                ctx.abort()
            return answers.get(calls[0])

        pi.on("agent_before_settle", settle)
        pi.on(
            "agent_before_settle", lambda event, ctx: seen.append(("second", event.entries, event.continue_))
        )

    return extension


NUDGE = {"type": "custom_message", "customType": "nudge", "content": "go on", "display": True}


def test_before_settle_drafts_are_appended_and_a_continue_runs_one_more_turn(tmp_path: Path) -> None:
    """agent-session.js:1639-1662: the second handler sees the first's drafts and ``continue``;
    the drafts become entries (``entry_appended``), and the run goes on from them; the next
    boundary starts again from no drafts."""
    seen: list[Any] = []
    state = {"type": "custom", "customType": "state", "data": {"n": 1}}
    answers = {1: {"entries": [state, NUDGE], "continue": True}}
    scenario = base(model={"agent": [{"text": "first"}, {"text": "second"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _before_settle(answers, seen))
    assert seen == [
        (1, "completed", [], False),
        ("second", [state, NUDGE], True),
        (2, "completed", [], False),
        ("second", [], False),
    ]
    assert len(agent_requests(result)) == 2
    tail = [(e["type"], e.get("customType") or e.get("message", {}).get("role")) for e in entries(result)][
        -5:
    ]
    assert tail == [
        ("message", "user"),
        ("message", "assistant"),
        ("custom", "state"),
        ("custom_message", "nudge"),
        ("message", "assistant"),
    ]
    appended = [r["entryType"] for r in session_records(result, "entry_appended")]
    assert appended == ["custom", "custom_message"]
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [False]


def test_an_invalid_before_settle_draft_drops_every_draft_and_the_continue(tmp_path: Path) -> None:
    """runner.js:772-818: a draft the preview refuses is an ``extension_error`` "Invalid boundary
    entries: ..." after each later handler too; then nothing is appended and the run settles."""
    seen: list[Any] = []
    bad = {"type": "context_edit", "targetId": "nope", "replacement": None}
    answers = {1: {"entries": [NUDGE, bad], "continue": True}}
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _before_settle(answers, seen))
    errors = [r["error"] for r in session_records(result, "extension_error")]
    assert errors == ["Invalid boundary entries: Entry nope not found"] * 2
    assert session_records(result, "entry_appended") == []
    assert len(agent_requests(result)) == 1


def test_a_before_settle_continue_the_context_cannot_follow_is_a_boundary_error(tmp_path: Path) -> None:
    seen: list[Any] = []
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _before_settle({1: {"continue": True}}, seen))
    [error] = session_records(result, "extension_error")
    assert (error["extensionPath"], error["error"]) == (
        "<boundary>",
        "agent_before_settle requested continuation without runnable model context",
    )
    assert len(agent_requests(result)) == 1


def test_an_abort_during_before_settle_keeps_the_drafts_and_settles(tmp_path: Path) -> None:
    """``abort()`` while the boundary runs (agent-session.js:2089-2090): the drafts are still
    appended, the run does not go on and settles aborted."""
    seen: list[Any] = []
    answers = {1: {"entries": [NUDGE], "continue": True}}
    scenario = base(model={"agent": [{"text": "first"}, {"text": "second"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _before_settle(answers, seen, abort=True))
    assert [r["entryType"] for r in session_records(result, "entry_appended")] == ["custom_message"]
    assert len(agent_requests(result)) == 1
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [True]


def test_before_settle_without_a_handler_goes_on_only_for_queued_messages(tmp_path: Path) -> None:
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario)
    assert event_records(result, "agent_before_settle") == []
    assert len(agent_requests(result)) == 1


def test_a_context_handlers_messages_are_what_the_model_gets_and_the_session_keeps_its_own(
    tmp_path: Path,
) -> None:
    """sdk.js:276-282, runner.js:1014-1048: before each request the handlers see the
    conversation without system messages; a returned ``messages`` is what the model gets (the
    system prompt kept), an in-place change or a raise changes nothing, the session keeps all."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def context(event: Any, ctx: Any) -> Any:
            seen.append([m["role"] for m in event.messages])
            if len(seen) == 2:
                return {"messages": [event.messages[-1]]}
            event.messages.clear()
            return None

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError("context failed")

        pi.on("context", context)
        pi.on("context", fail)

    scenario = base(
        model={"agent": [{"text": "first"}, {"text": "second"}]},
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    result = run(tmp_path, scenario, extension)
    assert seen == [["user"], ["user", "assistant", "user"]]
    first, second = agent_requests(result)
    assert [m["role"] for m in first.messages] == [m["role"] for m in second.messages] == ["user"]
    assert second.system_prompt == first.system_prompt
    assert second.messages[0]["content"] == [{"type": "text", "text": "two"}]
    assert [r["error"] for r in session_records(result, "extension_error")] == ["context failed"] * 2
    roles = [e["message"]["role"] for e in entries(result) if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]


def test_a_context_result_keeps_pis_system_messages_in_place_only_when_it_is_the_same_conversation() -> None:
    """runner.js:90-106 ``restoreSystemMessages``."""
    system = {"role": "system", "content": "", "sections": {"a": "A"}, "timestamp": 1}
    user = {"role": "user", "content": "u", "timestamp": 2}
    current = [system, user]
    assert _restore_system_messages(current, [user], [user]) is current
    copy = {**user}
    restored = _restore_system_messages(current, [user], [copy])
    assert restored[0]["role"] == "system" and restored[1:] == [copy]
    assert _restore_system_messages([user], [user], [copy]) == [copy]
    with pytest.raises(TypeError, match="returned is not iterable"):
        _restore_system_messages(current, [user], {"role": "user"})


def test_a_request_no_context_handler_listens_to_is_sent_as_projected(tmp_path: Path) -> None:
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario)
    assert event_records(result, "context") == []
    assert [m["role"] for m in agent_requests(result)[0].messages] == ["user"]


def test_context_with_system_handlers_see_the_context_phases_result_with_the_system_message(
    tmp_path: Path,
) -> None:
    """runner.js:1049-1077: after the ``context`` handlers, each ``context_with_system`` handler
    gets the whole transcript (Pi's leading system message first); its ``messages`` are sent as
    returned, an in-place change or a raise changes nothing; the session keeps all."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def context(event: Any, ctx: Any) -> Any:
            return {"messages": [event.messages[-1]]} if len(event.messages) > 1 else None

        def with_system(event: Any, ctx: Any) -> Any:
            seen.append([m["role"] for m in event.messages])
            if len(seen) == 2:
                return {"messages": [*event.messages, {"role": "user", "content": "added", "timestamp": 1}]}
            event.messages.clear()
            return None

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError("with system failed")

        pi.on("context", context)
        pi.on("context_with_system", with_system)
        pi.on("context_with_system", fail)

    scenario = base(
        model={"agent": [{"text": "first"}, {"text": "second"}]},
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    result = run(tmp_path, scenario, extension)
    assert seen == [["system", "user"], ["system", "user"]]
    first, second = agent_requests(result)
    assert [m["role"] for m in first.messages] == ["user"]
    assert [m["role"] for m in second.messages] == ["user", "user"]
    assert second.messages[1]["content"] == "added" and second.system_prompt == first.system_prompt
    assert [r["error"] for r in session_records(result, "extension_error")] == ["with system failed"] * 2
    assert len(event_records(result, "context_with_system")) == 2
    roles = [e["message"]["role"] for e in entries(result) if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]


def test_a_context_with_system_result_without_the_leading_system_message_is_sent_and_reported(
    tmp_path: Path,
) -> None:
    """runner.js:1060-1068: the result is used (the request has no system prompt and no tools)
    and an ``extension_error`` says the leading system message was removed. Without tools, the
    request is an extension's to the model (the fake server's ``classify_request``): it is
    answered from the extension script, not the agent script's "first"."""

    def extension(pi: ExtensionAPI) -> None:
        pi.on("context_with_system", lambda event, ctx: {"messages": event.messages[1:]})

    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, extension)
    [error] = session_records(result, "extension_error")
    assert (error["event"], error["error"].split(";")[0]) == (
        "context_with_system",
        "Handler removed the leading system message",
    )
    assert agent_requests(result) == []
    [request] = result.host.service.requests
    assert request.kind == "extension"
    assert request.system_prompt is None and request.tools == []
    assert result.host.service.used("agent") == []


def test_a_request_no_context_with_system_handler_listens_to_dispatches_nothing(tmp_path: Path) -> None:
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario)
    assert event_records(result, "context_with_system") == []
    assert [m["role"] for m in agent_requests(result)[0].messages] == ["user"]


AGENT_EVENTS = (
    "agent_start",
    "turn_start",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "turn_end",
    "agent_end",
)


def test_an_agent_event_is_left_undispatched_without_a_handler_only_when_it_is_not_observable(
    tmp_path: Path,
) -> None:
    """``AgentSession._handle_agent_event`` skips the extension step of an agent event without a
    handler unless it is one of ``_RUN_EVENTS``: every observable agent event is one (the trace
    records it with no handler), and with no extension the run's are recorded in order, the
    turns counted as with a handler."""
    assert OBSERVABLE_EVENTS.intersection(AGENT_EVENTS) <= _RUN_EVENTS
    scenario = base(
        model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
        operations=[{"prompt": "go"}],
    )
    result = run(tmp_path, scenario)
    recorded = [r["name"] for r in result.host.trace.records if r["kind"] == "event"]
    assert recorded == [
        "session_start",
        "input",
        "agent_start",
        "turn_start",
        "turn_end",
        "turn_start",
        "turn_end",
        "agent_end",
        "agent_settled",
        "session_shutdown",
    ]
    turns = event_records(result, "turn_start")
    assert [r["turnIndex"] for r in turns] == [0, 1]
