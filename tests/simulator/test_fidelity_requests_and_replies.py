"""Fidelity of what the simulated host sends to the model and keeps of its replies (issue 11).

Each test is named after one quirk of pi-ai 1.6 or Pi 1.6, cites the file and line of the shipped
package (``PA`` = ``@earendil-works/pi-ai/dist``, ``AC`` = ``pi-agent-core/dist``, ``CA`` =
``pi-coding-agent/dist``, ``AS`` = ``CA core/agent-session.js``) and asserts what real Pi was
observed to do (``/work/scratch/fidelity/FINDINGS.md``; each is also played on both targets by
``tests/realpi/test_differential_requests.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.model_script import HttpError, format_http_error
from pi_continuity_harness.simulator.provider import request_body, transform_messages

from .helpers import base, labels, long_text, records, run, session_entries, session_records

OVERFLOW = {"status": 400, "message": "Your input exceeds the context window of this model"}
SERVER_ERROR = {"status": 500, "message": "Internal server error", "type": "server_error"}
SERVER_ERROR_TEXT = '500: {"message":"Internal server error","type":"server_error","param":null,"code":null}'
FIRST = {"text": long_text("answer one", 800), "usage": {"input": 1000, "output": 10}}
MODEL = Model("fake", "fake-model", 20000, 1000)


def wire(result: Any, kind: str = "agent") -> list[list[dict[str, Any]]]:
    """Each request's wire messages (system prompt left out), as the provider received them."""
    return [r.body["messages"][1:] for r in result.host.service.requests if r.kind == kind]


def roles_and_texts(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    def text(m: dict[str, Any]) -> Any:
        content = m.get("content")
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content)
        return content

    return [(m["role"], text(m)) for m in messages]


def assistant_entries(result: Any) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in session_entries(result)
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]


# ============================================================ PA transform-messages.js:169-180
def test_an_aborted_reply_is_not_sent_again(tmp_path: Path) -> None:
    """Abort, then prompt: the aborted reply is persisted but left out of every later request."""
    scenario = base(
        model={
            "agent": [
                {"text": "answer one"},
                {"text": "never", "during": ["abort"]},
                {"text": "answer three"},
            ]
        },
        operations=[{"prompt": "first"}, {"prompt": "second"}, {"prompt": "third"}],
    )
    result = run(tmp_path, scenario)
    assert roles_and_texts(wire(result)[-1]) == [
        ("user", "first"),
        ("assistant", "answer one"),
        ("user", "second"),
        ("user", "third"),
    ]
    aborted = assistant_entries(result)[1]
    assert (aborted["stopReason"], aborted["errorMessage"], aborted["content"]) == (
        "aborted",
        "Request aborted",
        [],
    )


SUMMARY_USER = "The conversation history before this point was compacted into the following summary:"


@pytest.mark.parametrize(
    ("replies", "more_ops", "last_request"),
    [
        # Two overflows: the second failed reply is not omitted by recovery, only dropped here.
        (
            [{"error": OVERFLOW}, {"error": OVERFLOW}],
            [],
            [("user", SUMMARY_USER), ("assistant", FIRST["text"]), ("user", "two"), ("user", "three")],
        ),
        # The retry budget is spent: the last error stays in the session, not in the request.
        (
            [{"error": SERVER_ERROR}, {"error": SERVER_ERROR}],
            [],
            [("user", "one"), ("assistant", FIRST["text"]), ("user", "two"), ("user", "three")],
        ),
    ],
    ids=["two-overflows", "retry-budget-spent"],
)
def test_a_failed_reply_is_not_sent_again(
    tmp_path: Path, replies: list[Any], more_ops: list[Any], last_request: list[tuple[str, str]]
) -> None:
    scenario = base(
        model={"agent": [FIRST, *replies, {"text": "after"}], "summary": [{"text": "S1"}]},
        operations=[{"prompt": "one"}, {"prompt": "two"}, *more_ops, {"prompt": "three"}],
    )
    result = run(tmp_path, scenario)
    last = [
        (role, (text or "")[: len(want)])
        for (role, text), (_, want) in zip(roles_and_texts(wire(result)[-1]), last_request, strict=True)
    ]
    assert last == last_request
    assert [m["stopReason"] for m in assistant_entries(result)].count("error") == len(replies)


def test_a_failed_reply_with_partial_text_is_not_sent_again(tmp_path: Path) -> None:
    """The failed reply holds text here, so only pi-ai's filter (not the empty-message skip of
    ``convertMessages``) keeps it out of the next request."""
    scenario = base(
        model={
            "agent": [
                {"text": "partial reply", "stream": {"upto": 7, "then": "error", "error": "boom"}},
                {"text": "ok"},
            ]
        },
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    result = run(tmp_path, scenario)
    assert assistant_entries(result)[0]["content"] == [{"type": "text", "text": "partial"}]
    assert roles_and_texts(wire(result)[-1]) == [("user", "one"), ("user", "two")]


def test_an_orphaned_tool_call_gets_a_synthetic_result() -> None:
    """PA transform-messages.js:147-166: a tool call without a result before the next user
    message gets ``"No result provided"`` (seen live after a crash during ``bash``)."""
    call = {"type": "toolCall", "id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 5"}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1},
        {
            "role": "assistant",
            "content": [call],
            "api": "openai-completions",
            "provider": "fake",
            "model": "fake-model",
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {"role": "user", "content": [{"type": "text", "text": "are you there"}], "timestamp": 3},
    ]
    body = request_body(MODEL, messages)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_sleep",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command":"sleep 5"}'},
                }
            ],
        },
        {"role": "tool", "content": "No result provided", "tool_call_id": "call_sleep"},
        {"role": "user", "content": [{"type": "text", "text": "are you there"}]},
    ]
    assert [m["role"] for m in transform_messages(messages, MODEL)] == [
        "user",
        "assistant",
        "toolResult",
        "user",
    ]


# ====================================================== PA openai-completions.js:958-965,1047-1055
def test_blank_replies_are_not_sent_again(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [{"text": "   \n "}, {"text": ""}, {"text": "something"}]},
        operations=[
            {"prompt": "whitespace please"},
            {"prompt": "empty please"},
            {"prompt": "then something"},
        ],
    )
    result = run(tmp_path, scenario)
    assert roles_and_texts(wire(result)[-1]) == [
        ("user", "whitespace please"),
        ("user", "empty please"),
        ("user", "then something"),
    ]
    kept = assistant_entries(result)
    assert kept[0]["content"] == [{"type": "text", "text": "   \n "}] and kept[1]["content"] == []


# ============================================= PA transform-messages.js:86-104, openai-completions.js:966-1003
def test_thinking_goes_back_as_reasoning_content_to_the_same_model_only(tmp_path: Path) -> None:
    scenario = base(
        model={
            "agent": [{"text": "thought answer", "thinking": "I think hard."}, {"text": "b"}, {"text": "c"}]
        },
        operations=[{"prompt": "a"}, {"prompt": "b"}, {"set_model": "fake/fake-big"}, {"prompt": "c"}],
    )
    result = run(tmp_path, scenario)
    same, other = wire(result)[1][1], wire(result)[2][1]
    assert same == {"role": "assistant", "content": "thought answer", "reasoning_content": "I think hard."}
    assert other == {"role": "assistant", "content": "thought answer"}
    assert assistant_entries(result)[0]["content"][0] == {
        "type": "thinking",
        "thinking": "I think hard.",
        "thinkingSignature": "reasoning_content",
    }


# ============================================================ PA openai-completions.js:152-500
def test_a_reply_is_persisted_with_pis_fields_in_pis_order(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [{"text": "answer", "usage": {"input": 1000, "output": 10}}]},
        operations=[{"prompt": "x"}],
    )
    [message] = assistant_entries(run(tmp_path, scenario))
    assert list(message) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
        "responseId",
        "rawStopReason",
        "durationMs",
        "thinkingLevel",
    ]
    assert message["usage"] == {
        "input": 1000,
        "output": 10,
        "cacheRead": 0,
        "cacheWrite": 0,
        "reasoning": 0,
        "totalTokens": 1010,
        "cost": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 0,
            "totalFromProvider": False,
        },
    }
    assert (message["responseId"], message["rawStopReason"], message["thinkingLevel"]) == (
        "chatcmpl-fake-0",
        "stop",
        "off",
    )


def test_partly_streamed_text_is_kept_in_the_aborted_reply(tmp_path: Path) -> None:
    """openai-completions.js:454-466: an abort mid-stream ends the stream (``text_end``), then
    ``"Request was aborted"``; the streamed text is persisted, with ``responseId``, and never sent."""
    text = "Partial answer that was cut off mid-sentence"
    scenario = base(
        model={"agent": [{"text": text, "stream": {"upto": 36, "then": "abort"}}, {"text": "three"}]},
        operations=[{"prompt": "second"}, {"prompt": "third"}],
    )
    result = run(tmp_path, scenario)
    aborted = assistant_entries(result)[0]
    assert aborted["content"] == [{"type": "text", "text": text[:36]}]
    assert (aborted["stopReason"], aborted["errorMessage"], aborted["responseId"]) == (
        "aborted",
        "Request was aborted",
        "chatcmpl-fake-0",
    )
    assert "usage" in aborted and "reasoning" not in aborted["usage"]  # no usage chunk came
    assert roles_and_texts(wire(result)[-1]) == [("user", "second"), ("user", "third")]
    updates = (
        [
            e["assistantMessageEvent"]["type"]
            for e in result.host.rpc_events or []
            if e["type"] == "message_update"
        ]
        if result.host.rpc_events is not None
        else None
    )
    assert updates is None or updates[:3] == ["text_start", "text_delta", "text_end"]


def test_a_dropped_stream_is_retried_and_its_partial_text_never_sent(tmp_path: Path) -> None:
    """openai-completions.js:471-476: no finish reason reads ``Stream ended without
    finish_reason``, which ``ended without`` makes retryable (PA utils/retry.js)."""
    scenario = base(
        model={
            "agent": [
                {"text": "Partial text then the socket closes", "stream": {"upto": 12, "then": "drop"}},
                {"text": "RETRY-OK"},
            ]
        },
        operations=[{"prompt": "go"}],
    )
    result = run(tmp_path, scenario)
    failed = assistant_entries(result)[0]
    assert (failed["stopReason"], failed["errorMessage"]) == ("error", "Stream ended without finish_reason")
    assert failed["content"] == [{"type": "text", "text": "Partial text"}]
    assert "auto_retry_start" in labels(result) and roles_and_texts(wire(result)[-1]) == [("user", "go")]


def test_an_sse_error_after_partial_text_is_the_error_message(tmp_path: Path) -> None:
    scenario = base(
        model={
            "agent": [
                {"text": "Partial text", "stream": {"upto": 7, "then": "error", "error": "upstream boom"}}
            ]
        },
        operations=[{"prompt": "go"}],
    )
    result = run(tmp_path, scenario)
    failed = assistant_entries(result)[0]
    assert (failed["stopReason"], failed["errorMessage"], failed["content"]) == (
        "error",
        "upstream boom",
        [{"type": "text", "text": "Partial"}],
    )
    assert "auto_retry_start" not in labels(result)  # "upstream boom" is not retryable


# ========================================================== AC agent-loop.js:568-670, bash.js:196-335
def test_tool_results_have_pis_shape(tmp_path: Path) -> None:
    calls = [
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"},
        {"name": "read", "arguments": {"path": "missing.txt"}, "id": "c2"},
        {"name": "write", "arguments": {"path": "out.txt", "content": "x"}, "id": "c3"},
        {"name": "nope", "arguments": {}, "id": "c4"},
    ]
    scenario = base(
        model={"agent": [{"text": "tools", "tool_calls": calls}, {"text": "done"}]},
        operations=[{"prompt": "go"}],
    )
    result = run(tmp_path, scenario)
    results = [
        e["message"]
        for e in session_entries(result)
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert [list(r) for r in results] == [
        ["role", "toolCallId", "toolName", "content", "isError", "durationMs", "timestamp"],
        ["role", "toolCallId", "toolName", "content", "details", "isError", "durationMs", "timestamp"],
        ["role", "toolCallId", "toolName", "content", "isError", "durationMs", "timestamp"],
        ["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"],  # not executed
    ]
    texts = [r["content"][0]["text"] for r in results]
    project = result.host.paths.project_dir
    assert texts == [
        "hi\n",
        f"ENOENT: no such file or directory, access '{project}/missing.txt'",
        "Successfully wrote to out.txt",
        "Tool nope not found",
    ]
    assert [r["isError"] for r in results] == [False, True, False, True]


# ============================================================ PA api/simple-options.js:13-36
def test_the_summary_request_max_tokens_is_clamped_to_the_window(tmp_path: Path) -> None:
    scenario = base(
        model={
            "agent": [
                {"text": "ack big", "usage": {"input": 1000, "output": 10}},
                {"text": "ack small", "usage": {"input": 1100, "output": 10}},
            ]
        },
        operations=[
            {"prompt": {"text": "first", "chars": 60000}},
            {"prompt": "second " + long_text("x", 800)},
            "compact",
        ],
    )
    result = run(tmp_path, scenario)
    [summary] = [r for r in result.host.service.requests if r.kind == "summary"]
    assert summary.max_tokens == 1  # 60,000 characters leave no room in a 20,000 window


# ============================================= PA utils/retry.js:166-209, AS:2311-2315, AS:3161-3181
def threshold_scenario(summary: list[Any], **settings: Any) -> dict[str, Any]:
    scenario = base(
        model={
            "agent": [FIRST, {"text": long_text("answer two", 800), "usage": {"input": 17000, "output": 10}}],
            "summary": summary,
        },
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    if settings:
        scenario["settings"]["global"] = {"retry": settings}
    return scenario


def retry_events(result: Any) -> list[dict[str, Any]]:
    names = (
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    )
    return [
        {k: v for k, v in r.items() if k not in ("seq", "t", "kind")}
        for r in records(result, "session")
        if r["name"] in (*names, "compaction_start", "compaction_end")
    ]


def test_the_summarizer_retries_a_500_at_the_threshold(tmp_path: Path) -> None:
    result = run(tmp_path, threshold_scenario([{"error": SERVER_ERROR}, {"text": "SUMMARY-AFTER-RETRY"}]))
    events = retry_events(result)
    assert [e["name"] for e in events] == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    assert events[1] == {
        "name": "summarization_retry_scheduled",
        "attempt": 1,
        "maxAttempts": 1,
        "delayMs": 100,
        "errorMessage": SERVER_ERROR_TEXT,
    }
    assert events[2] == {
        "name": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "threshold",
    }
    assert "errorMessage" not in events[-1] and events[-1]["result"]["summaryChars"] > 0
    [compaction] = [e for e in session_entries(result) if e["type"] == "compaction"]
    assert compaction["summary"].startswith("SUMMARY-AFTER-RETRY")


def test_the_summarizer_retry_budget_runs_out(tmp_path: Path) -> None:
    scenario = threshold_scenario([{"error": SERVER_ERROR}] * 3, enabled=True, maxRetries=2, baseDelayMs=100)
    result = run(tmp_path, scenario)
    events = retry_events(result)
    assert [(e["name"], e.get("delayMs")) for e in events[1:-1]] == [
        ("summarization_retry_scheduled", 100),
        ("summarization_retry_attempt_start", None),
        ("summarization_retry_scheduled", 200),
        ("summarization_retry_attempt_start", None),
        ("summarization_retry_finished", None),
    ]
    assert events[-1]["errorMessage"] == f"Auto-compaction failed: Summarization failed: {SERVER_ERROR_TEXT}"
    assert len([r for r in result.host.service.requests if r.kind == "summary"]) == 3


def test_manual_compaction_commits_after_one_summarizer_500(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [FIRST], "summary": [{"error": SERVER_ERROR}, {"text": "S2"}]},
        operations=[{"prompt": "one"}, "compact"],
    )
    result = run(tmp_path, scenario)
    assert result.operations[-1].ok
    assert [e["name"] for e in retry_events(result)][1:4] == [
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    ]
    assert retry_events(result)[2]["reason"] == "manual"


def test_an_abort_during_the_summarizer_backoff_cancels_the_compaction(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [FIRST], "summary": [{"error": SERVER_ERROR, "during": []}]},
        operations=[{"prompt": "one"}, "compact"],
        settings={"global": {"retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 3000}}},
    )
    scenario["settings"]["project"] = {
        "compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}
    }
    scenario["faults"] = {
        "inject": [
            {"after": {"kind": "session", "name": "summarization_retry_scheduled"}, "operations": ["abort"]}
        ]
    }
    result = run(tmp_path, scenario)
    names = [e["name"] for e in retry_events(result)]
    assert names == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_finished",
        "compaction_end",
    ]
    end = session_records(result, "compaction_end")[-1]
    assert end["aborted"] is True and "errorMessage" not in end
    assert (result.operations[-1].ok, result.operations[-1].error) == (False, "Compaction cancelled")


@pytest.mark.parametrize(
    ("error", "settings"),
    [
        ({"status": 400, "message": "bad request"}, {}),  # not retryable
        (SERVER_ERROR, {"enabled": False, "maxRetries": 1, "baseDelayMs": 100}),  # retry off
    ],
    ids=["400-not-retryable", "retry-disabled"],
)
def test_the_summarizer_fails_at_once_without_a_retryable_error(
    tmp_path: Path, error: dict[str, Any], settings: dict[str, Any]
) -> None:
    scenario = base(
        model={"agent": [FIRST], "summary": [{"error": error}]}, operations=[{"prompt": "one"}, "compact"]
    )
    if settings:
        scenario["settings"]["global"] = {"retry": settings}
    result = run(tmp_path, scenario)
    assert [e["name"] for e in retry_events(result)] == ["compaction_start", "compaction_end"]
    # One turn: a split turn, summarised as a turn prefix (C:729-748).
    text = format_http_error(HttpError.model_validate(error))
    assert result.operations[-1].error == f"Turn prefix summarization failed: {text}"


def test_overflow_recovery_retries_its_summary_too(tmp_path: Path) -> None:
    scenario = base(
        model={
            "agent": [FIRST, {"error": OVERFLOW}, {"text": "RETRY-OK"}],
            "summary": [{"error": SERVER_ERROR}, {"text": "S"}],
        },
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    result = run(tmp_path, scenario)
    events = retry_events(result)
    assert events[2] == {
        "name": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "overflow",
    }
    assert (
        events[-1]["willRetry"] is True and assistant_entries(result)[-1]["content"][0]["text"] == "RETRY-OK"
    )


# ============================================================ held calls (issue 11, item 5)
def test_a_plain_prompt_while_a_reply_streams_is_rejected_and_observed(tmp_path: Path) -> None:
    scenario = base(
        model={
            "agent": [
                {
                    "text": "slow",
                    "during": [
                        {"prompt": "interrupting"},
                        {"prompt": {"text": "later", "streaming_behavior": "followUp"}},
                    ],
                },
                {"text": "next"},
            ]
        },
        operations=[{"prompt": "first"}],
    )
    result = run(tmp_path, scenario)
    held = [(label, op, r.name, r.ok, r.error, r.disposition) for label, op, r in result.host.held_outcomes]
    assert held == [
        (
            "agent#0",
            0,
            "prompt",
            False,
            "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
            None,
        ),
        ("agent#0", 0, "prompt", True, None, "queued"),
    ]
    assert json.dumps(wire(result)[-1]).count("later") == 1


# ============================================================ AS:2119-2136, 2219-2238, 2268-2280
REASONING_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
    {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
]


def test_a_model_switch_applies_the_default_thinking_level(tmp_path: Path) -> None:
    """``setModel`` takes the settings' ``defaultThinkingLevel`` (the harness's ``off``) over the
    session's level, even for the same model, and records the change; a switch that changes
    nothing records nothing (found by differential exploration, seed 101)."""
    scenario = base(
        models=REASONING_MODELS,
        thinking_level="low",
        model={"agent": [{"text": "a"}, {"text": "b"}]},
        operations=[
            {"prompt": "a"},
            {"set_model": "fake/fake-model"},
            {"prompt": "b"},
            {"set_model": "fake/fake-big"},
        ],
    )
    result = run(tmp_path, scenario)
    levels = [e["thinkingLevel"] for e in session_entries(result) if e["type"] == "thinking_level_change"]
    assert levels == ["low", "off"]
    changed = [r for r in records(result) if r.get("name") == "thinking_level_changed"]
    assert [r.get("level") for r in changed] == ["off"]
    bodies = [r.body for r in result.host.service.requests if r.kind == "agent"]
    assert "reasoning_effort" in bodies[0] and "reasoning_effort" not in bodies[1]
    assert result.host.thinking_level == "off"


# ============================================================ CA core/sdk.js:121-143, 292-302
def test_a_restart_before_the_session_file_exists_takes_the_default_thinking_level(tmp_path: Path) -> None:
    """Restarted with ``--session`` on a file Pi never wrote (lazy files), Pi starts a new
    session without ``--thinking``: the level is the settings' ``defaultThinkingLevel``
    (the harness's ``off``), not the first process's ``low`` (found by differential exploration,
    seed 147)."""
    scenario = base(
        models=REASONING_MODELS,
        thinking_level="low",
        model={"agent": [{"text": "a"}]},
        operations=[{"restart": {}}, {"prompt": "a"}],
    )
    result = run(tmp_path, scenario)
    assert assistant_entries(result)[0]["thinkingLevel"] == "off"
    bodies = [r.body for r in result.host.service.requests if r.kind == "agent"]
    assert "reasoning_effort" not in bodies[0]
