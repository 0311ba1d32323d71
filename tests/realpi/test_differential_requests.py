"""Differential fidelity of requests and replies (issue 11): each case on both targets, compared
whole (:mod:`pi_continuity_harness.targets.comparison`, no tolerance), with the behaviour itself
asserted on real Pi. The simulator's side of each is a fidelity test in
``tests/simulator/test_fidelity_requests_and_replies.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import TypeAdapter
from test_differential_fidelity import FIRST, LONG, OVERFLOW, PASSIVE, assert_equivalent, play, scenario

from pi_continuity_harness.scenario.operations import Operation, normalise_operation_input
from pi_continuity_harness.targets.realpi import PiTarget
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import Observation, OperationOutcome

pytestmark = pytest.mark.realpi

Targets = Callable[..., PiTarget | SimTarget]
_OPS: TypeAdapter[Any] = TypeAdapter(Operation)
SERVER_ERROR = {"status": 500, "message": "Internal server error", "type": "server_error"}


def last_agent_messages(observation: Observation) -> list[tuple[str, Any]]:
    body = observation.requests("agent")[-1].request.body
    assert body is not None
    out = []
    for message in body["messages"][1:]:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        out.append((message["role"], content))
    return out


def assistants(observation: Observation) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in observation.entries
        if e.get("type") == "message" and e["message"].get("role") == "assistant"
    ]


def test_an_aborted_reply_is_not_sent_again(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": "answer one"}, {"text": "never", "during": ["abort"]}, {"text": "three"}]}
    )
    real, sim = play(targets, sc, [{"prompt": "first"}, {"prompt": "second"}, {"prompt": "third"}])
    assert last_agent_messages(real) == [
        ("user", "first"),
        ("assistant", "answer one"),
        ("user", "second"),
        ("user", "third"),
    ]
    assert assistants(real)[1]["errorMessage"] == "Request aborted"
    assert_equivalent(real, sim)


def test_partly_streamed_text_is_kept_in_the_aborted_reply(targets: Targets) -> None:
    text = "Partial answer that was cut off mid-sentence"
    sc = scenario({"agent": [{"text": text, "stream": {"upto": 36, "then": "abort"}}, {"text": "three"}]})
    real, sim = play(targets, sc, [{"prompt": "second"}, {"prompt": "third"}])
    aborted = assistants(real)[0]
    assert (aborted["content"], aborted["errorMessage"]) == (
        [{"type": "text", "text": text[:36]}],
        "Request was aborted",
    )
    assert last_agent_messages(real) == [("user", "second"), ("user", "third")]
    assert [h.outcome.name for h in real.held_operations] == ["abort"]
    assert_equivalent(real, sim)


@pytest.mark.parametrize(
    "replies",
    [[{"error": OVERFLOW}, {"error": OVERFLOW}], [{"error": SERVER_ERROR}, {"error": SERVER_ERROR}]],
    ids=["two-overflows", "retry-budget-spent"],
)
def test_a_failed_reply_is_not_sent_again(targets: Targets, replies: list[Any]) -> None:
    sc = scenario({"agent": [FIRST, *replies, {"text": "after"}], "summary": [{"text": "S1"}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two"}, {"prompt": "three"}])
    assert last_agent_messages(real)[-2:] == [("user", "two"), ("user", "three")]
    assert_equivalent(real, sim)


def test_a_failed_reply_with_partial_text_is_not_sent_again(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": "partial reply", "stream": {"upto": 7, "then": "error", "error": "boom"}},
                {"text": "ok"},
            ]
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}])
    assert assistants(real)[0]["content"] == [{"type": "text", "text": "partial"}]
    assert last_agent_messages(real) == [("user", "one"), ("user", "two")]
    assert_equivalent(real, sim)


def test_a_dropped_stream_is_retried(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": "Partial text then the socket closes", "stream": {"upto": 12, "then": "drop"}},
                {"text": "RETRY-OK"},
            ]
        }
    )
    real, sim = play(targets, sc, [{"prompt": "go"}])
    assert assistants(real)[0]["errorMessage"] == "Stream ended without finish_reason"
    assert [e["type"] for e in real.session_events if e["type"].startswith("auto_retry")] == [
        "auto_retry_start",
        "auto_retry_end",
    ]
    assert_equivalent(real, sim)


def test_blank_replies_are_not_sent_again(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "   \n "}, {"text": ""}, {"text": "something"}]})
    real, sim = play(
        targets,
        sc,
        [{"prompt": "whitespace please"}, {"prompt": "empty please"}, {"prompt": "then something"}],
    )
    assert last_agent_messages(real) == [
        ("user", "whitespace please"),
        ("user", "empty please"),
        ("user", "then something"),
    ]
    assert_equivalent(real, sim)


def test_thinking_goes_back_as_reasoning_content_to_the_same_model_only(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": "thought answer", "thinking": "I think hard."}, {"text": "b"}, {"text": "c"}]}
    )
    real, sim = play(
        targets, sc, [{"prompt": "a"}, {"prompt": "b"}, {"set_model": "fake/fake-big"}, {"prompt": "c"}]
    )
    bodies = [r.request.body for r in real.requests("agent")]
    assert bodies[1] is not None and bodies[1]["messages"][2]["reasoning_content"] == "I think hard."
    assert bodies[2] is not None and "reasoning_content" not in bodies[2]["messages"][2]
    assert_equivalent(real, sim)


def test_tool_results_have_pis_shape(targets: Targets) -> None:
    """Every executed call runs alone in its turn: Pi executes a reply's calls in parallel and
    emits each ``tool_execution_end`` when its call finishes (agent-loop.js:414-461), so the order
    of two executed calls' ends depends on how fast the real process runs, which no simulator can
    know. ``nope`` shares ``read``'s turn: an unknown tool's call ends while it is prepared,
    before any call executes, whatever the speed."""
    bash = [{"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}]
    calls = [
        {"name": "read", "arguments": {"path": "missing.txt"}, "id": "c2"},
        {"name": "nope", "arguments": {}, "id": "c4"},
    ]
    write = [{"name": "write", "arguments": {"path": "out.txt", "content": "x"}, "id": "c3"}]
    sc = scenario(
        {
            "agent": [
                {"text": "bash", "tool_calls": bash},
                {"text": "tools", "tool_calls": calls},
                {"text": "write", "tool_calls": write},
                {"text": "done"},
            ]
        }
    )
    real, sim = play(targets, sc, [{"prompt": "go"}])
    results = [
        e["message"]
        for e in real.entries
        if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]
    assert [r["toolCallId"] for r in results] == ["c1", "c2", "c4", "c3"]
    assert ["details" in r for r in results] == [False, True, True, False]
    assert ["durationMs" in r for r in results] == [True, True, False, True]
    assert_equivalent(real, sim)


def test_the_summary_request_max_tokens_is_clamped_to_the_window(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": "ack big", "usage": {"input": 1000, "output": 10}},
                {"text": "ack small", "usage": {"input": 1100, "output": 10}},
            ]
        }
    )
    real, sim = play(
        targets, sc, [{"prompt": {"text": "first", "chars": 60000}}, {"prompt": "second " + LONG}, "compact"]
    )
    assert [r.request.max_tokens for r in real.requests("summary")] == [1]
    assert_equivalent(real, sim)


# ====================================================================== summarizer retry
def threshold(summary: list[Any]) -> Any:
    return scenario(
        {"agent": [FIRST, {"text": LONG, "usage": {"input": 16000, "output": 10}}], "summary": summary}
    )


def retry_types(observation: Observation) -> list[str]:
    return [
        e["type"]
        for e in observation.session_events
        if e["type"].startswith(("summarization_retry", "compaction"))
    ]


def test_the_summarizer_retries_a_500_at_the_threshold(targets: Targets) -> None:
    real, sim = play(
        targets,
        threshold([{"error": SERVER_ERROR}, {"text": "AFTER-RETRY"}]),
        [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}],
    )
    assert retry_types(real) == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    assert real.entries_of("compaction")[0]["summary"].startswith("AFTER-RETRY")
    assert_equivalent(real, sim)


def test_manual_compaction_commits_after_one_summarizer_500(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST], "summary": [{"error": SERVER_ERROR}, {"text": "S2"}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"])
    assert real.operations[-1].ok
    assert_equivalent(real, sim)


def test_the_summarizer_does_not_retry_a_400(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST], "summary": [{"error": {"status": 400, "message": "bad request"}}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"])
    assert retry_types(real) == ["compaction_start", "compaction_end"]
    assert_equivalent(real, sim)


def test_overflow_recovery_retries_its_summary_too(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [FIRST, {"error": OVERFLOW}, {"text": "RETRY-OK"}],
            "summary": [{"error": SERVER_ERROR}, {"text": "S"}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two"}])
    attempt = [e for e in real.session_events if e["type"] == "summarization_retry_attempt_start"]
    assert attempt == [
        {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "overflow"}
    ]
    assert_equivalent(real, sim)


# ====================================================================== held calls
def test_operations_during_a_held_call_are_observed(targets: Targets) -> None:
    during = [{"prompt": "interrupting"}, {"prompt": {"text": "later", "streaming_behavior": "followUp"}}]
    sc = scenario({"agent": [{"text": "slow", "during": during}, {"text": "next"}]})
    real, sim = play(targets, sc, [{"prompt": "first"}])
    assert [(h.request, h.outcome.ok, h.outcome.disposition) for h in real.held_operations] == [
        ("agent#0", False, None),
        ("agent#0", True, "queued"),
    ]
    assert_equivalent(real, sim)


def test_a_held_abort_is_recorded_before_its_operation_ends_and_names_it(targets: Targets) -> None:
    """Pi answers ``abort`` only once idle (``dist/modes/rpc/rpc-mode.js:353-355``,
    ``dist/core/agent-session.js:2082-2093``), after ``agent_settled`` went out
    (``agent-session.js:742-765``), so the operation the held call ran during could be recorded
    as done before the abort returned: differential seed 178 (4 on real Pi, 3 on the simulator)
    was that race, and the held outcome's operation is counted before its operations run. Since
    differential seed 11213 the target also waits, after every operation, until each held reply's
    operations have returned and its request has ended (``PiTarget._wait_for_held_replies``): the
    held abort is already recorded when its operation's outcome is, and names operation 1."""
    sc = scenario(
        {"agent": [{"text": "answer one"}, {"text": "never", "during": ["abort"]}, {"text": "three"}]}
    )
    ops = [
        _OPS.validate_python(normalise_operation_input({"prompt": text}))
        for text in ("first", "second", "third")
    ]
    real_target = targets("pi", PASSIVE)
    assert isinstance(real_target, PiTarget)
    held_when_recorded: list[int] = []
    perform = real_target.perform

    def perform_and_look(op: Operation) -> OperationOutcome:
        outcome = perform(op)
        held_when_recorded.append(len(real_target._held))
        return outcome

    real_target.perform = perform_and_look  # type: ignore[method-assign]
    real_target.start(sc)
    for op in ops:
        real_target.perform(op)
    real = real_target.observe()
    sim_target = targets("sim", PASSIVE)
    sim_target.start(sc)
    for op in ops:
        sim_target.perform(op)
    sim = sim_target.observe()
    assert held_when_recorded == [0, 1, 1]
    assert [(h.request, h.operation, h.outcome.name) for h in real.held_operations] == [
        ("agent#1", 1, "abort")
    ]
    assert_equivalent(real, sim)


def test_a_model_switch_applies_the_default_thinking_level(targets: Targets) -> None:
    """AS:2119-2136, 2268-2280: ``set_model`` takes ``defaultThinkingLevel`` (``off``) over the
    session's ``low``, for the same model too (found by differential exploration, seed 101)."""
    sc = scenario(
        {"agent": [{"text": "a"}, {"text": "b"}]},
        thinking_level="low",
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        ],
    )
    ops = [{"prompt": "a"}, {"set_model": "fake/fake-model"}, {"prompt": "b"}, {"set_model": "fake/fake-big"}]
    real, sim = play(targets, sc, ops)
    levels = [e["thinkingLevel"] for e in real.entries if e.get("type") == "thinking_level_change"]
    assert levels == ["low", "off"]
    assert_equivalent(real, sim)


def test_a_restart_before_the_session_file_exists_takes_the_default_thinking_level(targets: Targets) -> None:
    """CA core/sdk.js:121-143: a restart onto a file Pi never wrote starts a new session
    without ``--thinking``: ``defaultThinkingLevel`` (found by differential exploration, seed 147)."""
    sc = scenario(
        {"agent": [{"text": "a"}]},
        thinking_level="low",
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True}],
    )
    real, sim = play(targets, sc, [{"restart": {}}, {"prompt": "a"}])
    assert assistants(real)[0]["thinkingLevel"] == "off"
    assert_equivalent(real, sim)
