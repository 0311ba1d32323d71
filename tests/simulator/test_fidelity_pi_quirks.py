"""Fidelity of the simulated host to real Pi 1.6: one test per behaviour of pi-host-1.6.md §9.

Each test reproduces a live observation of ``pi-host-1.6-verified.md`` (the binding
precisions of §9) or ``psc-lifecycle-on-real-pi.md`` ("Consequences"), with the setup the
live checks used (windows 20,000 / 40,000, ``maxTokens`` 1000, ``reserveTokens`` 4000,
``keepRecentTokens`` 100; see ``helpers.base``), and asserts the exact event order, counts
and texts observed there. The sequences are the RPC view (session events), as the live
checks recorded them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario.transcript import COMPACTION_SUMMARY_PREFIX
from pi_continuity_harness.simulator.agent_session import (
    BUSY_WITHOUT_BEHAVIOR,
    PROMPT_DURING_COMPACTION,
)
from pi_continuity_harness.simulator.compaction import SUMMARIZATION_SYSTEM_PROMPT
from pi_continuity_harness.simulator.messages import estimate_tokens
from pi_continuity_harness.simulator.system_prompt import render_system_prompt

from . import probe_extension
from .helpers import (
    agent_requests,
    base,
    entries,
    event_records,
    labels,
    long_text,
    projection,
    run,
    run_all,
    session_entries,
    session_records,
)

OVERFLOW_400 = {"status": 400, "message": "This request exceeds the context window of the model."}


def two_prompts(second: dict[str, Any], *more_ops: Any, first_text: str = "hello one") -> dict[str, Any]:
    """Prompt 1 with a long answer (something to summarise), prompt 2 answered by ``second``."""
    return base(
        operations=[{"prompt": first_text}, {"prompt": "hello two"}, *more_ops],
        model={"agent": [{"text": long_text("answer one")}, second]},
    )


def after(labels_: list[str], marker: str, occurrence: int = 1) -> list[str]:
    """The labels from the ``occurrence``-th ``marker`` on."""
    seen = 0
    for index, label in enumerate(labels_):
        if label == marker:
            seen += 1
            if seen == occurrence:
                return labels_[index:]
    raise AssertionError(f"{marker!r} (occurrence {occurrence}) not in {labels_}")


def op_end(result: Any, index: int) -> Any:
    return result.operations[index]


class Log:
    """What an extension saw, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    def add(self, name: str, value: Any = None) -> None:
        self.items.append((name, value))

    def values(self, name: str) -> list[Any]:
        return [v for n, v in self.items if n == name]

    def names(self) -> list[str]:
        return [n for n, _ in self.items]


def usage_json(usage: Any) -> Any:
    return (
        None
        if usage is None
        else {"tokens": usage.tokens, "contextWindow": usage.context_window, "percent": usage.percent}
    )


# ================================================================== §9.1 manual compaction


def test_9_1_manual_compaction_aborts_the_running_turn_first(tmp_path: Path) -> None:
    """s01/s11f: compact while a reply streams → the run is aborted and settles first."""
    scenario = base(
        operations=[{"prompt": "hello one"}, {"prompt": "hello two"}],
        model={
            "agent": [
                {"text": long_text("answer one")},
                {
                    "text": "answer two",
                    "latency_ms": 50,
                    "during": [{"compact": {"custom_instructions": "focus"}}],
                },
            ]
        },
    )
    result = run(tmp_path, scenario)
    seq = after(labels(result), "message_end:user", 2)
    assert seq == [
        "message_end:user",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
        "compaction_start",
        "compaction_end",
    ]
    assistant = session_records(result, "message_end")[-1]
    assert assistant["stopReason"] == "aborted"
    assert session_records(result, "agent_end")[-1]["willRetry"] is False
    assert session_records(result, "agent_settled")[-1]["aborted"] is True
    assert session_records(result, "compaction_start")[-1]["reason"] == "manual"
    end = session_records(result, "compaction_end")[-1]
    assert (end["reason"], end["aborted"]) == ("manual", False)
    # The aborted assistant entry is persisted, then compacted.
    types = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in entries(result)]
    assert types[-2:] == ["assistant", "compaction"]
    assert entries(result)[-2]["message"]["stopReason"] == "aborted"
    # The summarizer saw the custom instructions.
    summary_requests = [r for r in result.host.service.requests if r.kind == "summary"]
    assert summary_requests and all(
        "Additional focus: focus" in r.messages[0]["content"][0]["text"] for r in summary_requests
    )


def test_9_1_manual_compaction_from_turn_end_aborts_a_completed_run(tmp_path: Path) -> None:
    """s02b: ``ctx.compact()`` in a ``turn_end`` handler aborts even a completed ``stop`` run."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        def turn_end(event: Any, ctx: Any) -> None:
            if event.message.get("content") and "answer two" in json.dumps(event.message["content"]):
                log.add("compact_called", {"idle": ctx.is_idle()})
                ctx.compact(
                    on_complete=lambda r: log.add("onComplete", r["summary"]),
                    on_error=lambda e: log.add("onError", str(e)),
                )
                log.add("compact_returned")

        pi.on("turn_end", turn_end)

    scenario = two_prompts({"text": "answer two"})
    result = run(tmp_path, scenario, ext)
    assert log.names() == ["compact_called", "compact_returned", "onComplete"]
    assert log.values("compact_called") == [{"idle": False}]
    seq = after(labels(result), "message_end:assistant", 2)
    assert seq[:6] == [
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
        "compaction_start",
        "compaction_end",
    ]
    assert session_records(result, "agent_settled")[-1]["aborted"] is True
    assert len(agent_requests(result)) == 2


def test_9_1_manual_compaction_from_turn_end_of_a_tool_turn_opens_an_empty_aborted_turn(
    tmp_path: Path,
) -> None:
    """s02c: after the tool result Pi still opens turn 2, which yields an empty aborted reply, no request."""

    def ext(pi: ExtensionAPI) -> None:
        def turn_end(event: Any, ctx: Any) -> None:
            if event.message.get("stopReason") == "toolUse":
                ctx.compact()

        pi.on("turn_end", turn_end)

    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = two_prompts({"text": long_text("using a tool"), "tool_calls": [tool]})
    scenario["model"]["agent"].append({"text": "never requested"})
    result = run(tmp_path, scenario, ext)
    assert len(agent_requests(result)) == 2
    roles = [
        e["message"]["role"] + ":" + e["message"].get("stopReason", "")
        if e["type"] == "message"
        else e["type"]
        for e in entries(result)
    ]
    assert roles[-4:] == ["assistant:toolUse", "toolResult:", "assistant:aborted", "compaction"]
    seq = after(labels(result), "message_end:toolResult")
    assert seq == [
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
        "compaction_start",
        "compaction_end",
    ]
    assert session_records(result, "agent_settled")[-1]["aborted"] is True


def test_9_1_manual_compaction_emits_compaction_start_even_when_nothing_to_compact(tmp_path: Path) -> None:
    """s02a and s01: "Nothing to compact" and "Already compacted" still start a compaction."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: log.add("before_compact"))
        pi.on(
            "session_compact_failed",
            lambda e, c: log.add(
                "failed",
                {
                    "reason": e.reason,
                    "aborted": e.aborted,
                    "fromExtension": e.from_extension,
                    "errorMessage": e.error_message,
                },
            ),
        )

    scenario = base(
        operations=[
            {"compact": None},
            {"prompt": "hello one"},
            {"prompt": "hello two"},
            {"compact": None},
            {"compact": None},
        ],
        model={"agent": [{"text": long_text("answer one")}, {"text": long_text("answer two")}]},
    )
    result = run(tmp_path, scenario, ext)
    ops = result.operations
    assert (ops[0].ok, ops[0].error) == (False, "Nothing to compact (session too small)")
    assert ops[3].ok is True
    assert (ops[4].ok, ops[4].error) == (False, "Already compacted")
    starts = session_records(result, "compaction_start")
    ends = session_records(result, "compaction_end")
    assert [s["reason"] for s in starts] == ["manual"] * 3
    assert [e.get("errorMessage") for e in ends] == [
        "Compaction failed: Nothing to compact (session too small)",
        None,
        "Compaction failed: Already compacted",
    ]
    assert all(e["aborted"] is False for e in ends)
    # The hook is called only for the compaction that can run.
    assert log.names().count("before_compact") == 1
    assert log.values("failed") == [
        {
            "reason": "manual",
            "aborted": False,
            "fromExtension": False,
            "errorMessage": "Compaction failed: Nothing to compact (session too small)",
        },
        {
            "reason": "manual",
            "aborted": False,
            "fromExtension": False,
            "errorMessage": "Compaction failed: Already compacted",
        },
    ]
    # Idle: the initial abort emits no agent_settled.
    first = labels(result, "session", "op")
    assert first[: first.index("session:compaction_end") + 1] == [
        "op:compact",
        "session:compaction_start",
        "session:compaction_end",
    ]


def test_9_1_manual_compaction_ignores_enabled_false(tmp_path: Path) -> None:
    """s02d: ``enabled: false`` stops automatic compaction only."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "session_before_compact", lambda e, c: seen.append((e.reason, e.preparation.settings.to_json()))
        )

    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 17010}, {"compact": None})
    scenario["settings"]["project"]["compaction"]["enabled"] = False
    result = run(tmp_path, scenario, ext)
    assert [r["reason"] for r in session_records(result, "compaction_start")] == ["manual"]
    assert result.operations[2].ok is True
    assert seen == [("manual", {"enabled": False, "reserveTokens": 4000, "keepRecentTokens": 100})]


# ================================================================== §9.2 threshold


@pytest.mark.parametrize(("tokens", "compacts"), [(16000, False), (16001, True)])
def test_9_2_threshold_is_strict_at_exactly_window_minus_reserve(
    tmp_path: Path, tokens: int, compacts: bool
) -> None:
    """s11a: window 20000, reserve 4000: 16000 → nothing, 16001 → ``compaction_start{threshold}``."""
    result = run(tmp_path, two_prompts({"text": long_text("answer two"), "context_tokens": tokens}))
    starts = session_records(result, "compaction_start")
    assert [s["reason"] for s in starts] == (["threshold"] if compacts else [])


def test_ctx_abort_in_a_before_compact_handler_aborts_the_auto_compaction(tmp_path: Path) -> None:
    """``ctx.abort()`` (``agent-session.js:2925-2930``: ``void this.abort()``) calls
    ``AgentSession.abort`` (:2082-2087), whose ``abortCompaction`` (:2465-2467) aborts the
    auto-compaction's controller, the ``signal`` every ``session_before_compact`` handler got. So
    a handler that returned first sees its signal abort afterwards, and Pi commits nothing:
    ``compaction_end {aborted: true}``, no compaction entry, ``agent_settled {aborted: true}``
    (compared on real Pi 1.6.0 through the smoke scenario of rule P110b)."""
    seen: list[bool] = []

    def ext(pi: ExtensionAPI) -> None:
        def first(event: Any, ctx: Any) -> dict[str, Any]:
            event.signal.add_listener(lambda: seen.append(True))
            return {}

        def second(event: Any, ctx: Any) -> None:
            ctx.abort()

        pi.on("session_before_compact", first)
        pi.on("session_before_compact", second)

    result = run(tmp_path, two_prompts({"text": long_text("answer two"), "context_tokens": 16001}), ext)
    end = session_records(result, "compaction_end")[-1]
    assert (end["reason"], end["aborted"]) == ("threshold", True)
    assert seen == [True]
    assert not [e for e in entries(result) if e["type"] == "compaction"]
    assert session_records(result, "agent_settled")[-1]["aborted"] is True


def test_9_2_threshold_checked_mid_run_between_tool_turns(tmp_path: Path) -> None:
    """s2: checked after the tool turn's ``turn_end``, before the next ``turn_start``;
    ``ctx.signal`` is set.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> None:
            seen.append(
                (
                    event.reason,
                    event.will_retry,
                    ctx.signal is not None and not ctx.signal.aborted,
                    ctx.is_idle(),
                )
            )

        pi.on("session_before_compact", before)

    scenario = two_prompts(
        {
            "text": long_text("running a tool"),
            "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}],
            "context_tokens": 17500,
        }
    )
    scenario["model"]["agent"].append({"text": "FINAL-TEXT-OF-ORIGINAL-RUN"})
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result), "message_end:toolResult")
    assert seq == [
        "message_end:toolResult",
        "turn_end",
        "compaction_start",
        "compaction_end",
        "turn_start",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert seen == [("threshold", False, True, False)]
    # One run: a single agent_start for the prompt.
    assert labels(result).count("agent_start") == 2


def test_9_2_threshold_not_checked_after_a_final_turn_end(tmp_path: Path) -> None:
    """Not after every ``turn_end``: a run that ends without another request is checked post-run only."""
    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 17010})
    result = run(tmp_path, scenario)
    seq = after(labels(result), "message_end:assistant", 2)
    assert seq == [
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]


def test_9_2_threshold_checked_after_agent_end(tmp_path: Path) -> None:
    """s1: post-run threshold compaction comes after ``agent_end``; ``ctx.signal`` is undefined there."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> None:
            prep = event.preparation
            seen.append(
                {
                    "reason": event.reason,
                    "willRetry": event.will_retry,
                    "signal": ctx.signal,
                    "tokensBefore": prep.tokens_before,
                    "messagesToSummarize": len(prep.messages_to_summarize),
                    "turnPrefixMessages": len(prep.turn_prefix_messages),
                    "isSplitTurn": prep.is_split_turn,
                    "firstKept": prep.first_kept_entry_id == ctx.session_manager.get_leaf_id(),
                    "usage": usage_json(ctx.get_context_usage()),
                }
            )

        pi.on("session_before_compact", before)

    result = run(tmp_path, two_prompts({"text": long_text("answer two"), "context_tokens": 17010}), ext)
    assert seen == [
        {
            "reason": "threshold",
            "willRetry": False,
            "signal": None,
            "tokensBefore": 17010,
            "messagesToSummarize": 2,
            "turnPrefixMessages": 1,
            "isSplitTurn": True,
            "firstKept": True,
            "usage": {"tokens": 17010, "contextWindow": 20000, "percent": 85.05},
        }
    ]
    seq = after(labels(result), "agent_end", 2)
    assert seq == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]


def test_9_2_threshold_checked_before_a_new_prompt_after_input_before_agent_start(tmp_path: Path) -> None:
    """s6b: a switch to a smaller window makes the next prompt compact first:
    after ``input``, before ``agent_start``.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "session_before_compact",
            lambda e, c: seen.append((e.reason, c.signal, e.preparation.tokens_before)),
        )

    scenario = base(
        active_model="fake/fake-big",
        operations=[
            {"prompt": "hello one"},
            {"prompt": "hello two"},
            {"set_model": "fake/fake-model"},
            {"prompt": "hello three"},
        ],
        model={
            "agent": [
                {"text": long_text("answer one")},
                {"text": long_text("answer two"), "context_tokens": 17010},
                {"text": "answer three"},
            ]
        },
    )
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result, "session", "event", "op"), "op:prompt", 3)
    assert seq[:7] == [
        "op:prompt",
        "event:input",
        "session:compaction_start",
        "event:session_before_compact",
        "event:session_compact",  # observed always: real Pi always has the observer loaded
        "session:compaction_end",
        "event:agent_start",
    ]
    assert seen == [("threshold", None, 17010)]
    assert result.operations[3].disposition == "started"


# ================================================================== §9.3 small sessions


def test_9_3_small_sessions_skip_auto_compaction_silently(tmp_path: Path) -> None:
    """s03a: default ``keepRecentTokens`` (20000), tiny texts, usage above the threshold: nothing at all."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: log.add("before_compact"))
        pi.on("session_compact_failed", lambda e, c: log.add("failed"))

    scenario = base(
        operations=[{"prompt": "hello one"}, {"prompt": "hello two"}, {"compact": None}],
        model={"agent": [{"text": "ok", "context_tokens": 17010}, {"text": "ok", "context_tokens": 18010}]},
    )
    scenario["settings"]["project"] = {"compaction": {"reserveTokens": 4000}}
    result = run(tmp_path, scenario, ext)
    prompts = labels(result)[
        : labels(result).index("agent_settled", labels(result).index("agent_settled") + 1) + 1
    ]
    assert "compaction_start" not in prompts and "compaction_end" not in prompts
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [False, False]
    # Only the manual compaction reaches the hook stage, and it fails for the same reason.
    assert result.operations[2].error == "Nothing to compact (session too small)"
    assert log.names() == ["failed"]


# ================================================================== §9.4 overflow


def test_9_4_silent_overflow_on_stop_above_window_compacts_without_retry(tmp_path: Path) -> None:
    """s04a: ``stop`` with input 25000 > 20000 → ``overflow``, ``willRetry:
    false``, no retry, no context edit.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "session_before_compact",
            lambda e, c: seen.append(
                (e.reason, e.will_retry, e.preparation.tokens_before, usage_json(c.get_context_usage()))
            ),
        )

    scenario = two_prompts({"text": long_text("answer two"), "usage": {"input": 25000, "output": 10}})
    scenario["model"]["agent"].append({"text": "never requested"})
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result), "message_end:assistant", 2)
    assert seq == [
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]
    end = session_records(result, "compaction_end")[-1]
    assert (end["reason"], end["aborted"], end["willRetry"]) == ("overflow", False, False)
    assert end["result"]["tokensBefore"] == 25010
    assert seen == [("overflow", False, 25010, {"tokens": 25010, "contextWindow": 20000, "percent": 125.05})]
    assert "entry_appended" not in labels(result)
    assert len(agent_requests(result)) == 2
    # The overflowing assistant entry is kept: it is the first kept entry.
    compaction = entries(result)[-1]
    assert compaction["type"] == "compaction"
    assert compaction["firstKeptEntryId"] == entries(result)[-2]["id"]


def test_9_4_length_stop_triggers_overflow_recovery_with_context_edit_and_one_retry(tmp_path: Path) -> None:
    """s04b:
    ``length`` with output 10 < maxTokens 1000 → omit, compact (willRetry), retry with no new user message.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: seen.append((e.reason, e.will_retry)))
        pi.on("session_compact", lambda e, c: seen.append(("compact", e.reason, e.will_retry)))

    scenario = two_prompts(
        {"text": long_text("truncated"), "finish": "length", "usage": {"input": 1500, "output": 10}}
    )
    scenario["operations"][1] = {"prompt": {"text": "hello two", "chars": 800}}
    scenario["model"]["agent"].append({"text": "RETRY-OK"})
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result), "message_end:assistant", 2)
    assert seq == [
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "entry_appended",
        "compaction_start",
        "compaction_end",
        "agent_start",
        "turn_start",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert session_records(result, "agent_end")[1]["willRetry"] is False
    edit = session_records(result, "entry_appended")[0]
    length_entry = next(
        e for e in entries(result) if e["type"] == "message" and e["message"].get("stopReason") == "length"
    )
    assert (edit["entryType"], edit["targetId"]) == ("context_edit", length_entry["id"])
    context_edit = next(e for e in entries(result) if e["type"] == "context_edit")
    assert context_edit["replacement"] is None
    end = session_records(result, "compaction_end")[0]
    assert (end["reason"], end["willRetry"]) == ("overflow", True)
    assert seen == [("overflow", True), ("compact", "overflow", True)]
    # No new user message. With a prompt above keepRecentTokens the cut moves onto the omitted
    # failed reply, the prompt is summarised, and the retry request is ``[system, summary]`` (s3a).
    users = [e for e in entries(result) if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(users) == 2
    compaction = next(e for e in entries(result) if e["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == length_entry["id"]
    retry = agent_requests(result)[-1]
    assert [m["role"] for m in retry.messages] == ["user"]
    assert retry.messages[0]["content"][0]["text"].startswith(COMPACTION_SUMMARY_PREFIX)
    assert session_records(result, "message_end")[-1]["text"] == "RETRY-OK"


@pytest.mark.parametrize(
    ("failure", "text"),
    [
        (
            {"error": OVERFLOW_400},
            "Context overflow recovery failed after one compact-and-retry attempt. "
            "Try reducing context or switching to a larger-context model.",
        ),
        (
            {"text": long_text("truncated"), "finish": "length", "usage": {"input": 1500, "output": 10}},
            "Truncated response recovery failed after one compact-and-retry attempt.",
        ),
    ],
    ids=["overflow", "length"],
)
def test_9_4_second_overflow_in_the_same_chain_fails_with_pi_text(
    tmp_path: Path, failure: dict[str, Any], text: str
) -> None:
    """s04c/s04d: the retry fails the same way → a bare ``compaction_end`` with Pi's text, no second hook."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: log.add("before_compact", e.reason))
        pi.on(
            "session_compact_failed",
            lambda e, c: log.add(
                "failed", (e.reason, e.error_message, e.aborted, e.will_retry, e.from_extension)
            ),
        )

    scenario = two_prompts(failure)
    scenario["model"]["agent"].extend([failure, {"text": "never requested"}])
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result), "compaction_end")
    assert seq == [
        "compaction_end",
        "agent_start",
        "turn_start",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "compaction_end",
        "agent_settled",
    ]
    assert labels(result).count("compaction_start") == 1
    final = session_records(result, "compaction_end")[-1]
    assert final == {
        **final,
        "reason": "overflow",
        "aborted": False,
        "willRetry": False,
        "errorMessage": text,
    }
    assert "result" not in final
    assert log.values("before_compact") == ["overflow"]
    assert log.values("failed") == [("overflow", text, False, False, False)]
    assert session_records(result, "agent_settled")[-1]["aborted"] is False
    # The second failed reply is not omitted: one context edit in all.
    assert sum(1 for e in entries(result) if e["type"] == "context_edit") == 1
    assert len(agent_requests(result)) == 3


def test_9_4_a_successful_tool_call_resets_the_recovery_budget(tmp_path: Path) -> None:
    """s04f:
    overflow → compact+retry → the retry makes tool calls → overflow again → a second full recovery.
    """
    tool = {"name": "bash", "arguments": {"command": "echo " + "x" * 400}, "result": "x\n"}
    scenario = two_prompts({"error": OVERFLOW_400})
    scenario["model"]["agent"].extend(
        [
            {"text": "tool one", "tool_calls": [tool]},
            {"text": "tool two", "tool_calls": [tool]},
            {"error": OVERFLOW_400},
            {"text": "SECOND-RETRY-OK"},
        ]
    )
    result = run(tmp_path, scenario)
    starts = session_records(result, "compaction_start")
    ends = session_records(result, "compaction_end")
    assert [(s["reason"]) for s in starts] == ["overflow", "overflow"]
    assert [(e["reason"], e["willRetry"], e.get("errorMessage")) for e in ends] == [
        ("overflow", True, None),
        ("overflow", True, None),
    ]
    assert session_records(result, "message_end")[-1]["text"] == "SECOND-RETRY-OK"
    assert labels(result).count("agent_start") == 4  # prompt 1, prompt 2, retry 1, retry 2
    assert labels(result).count("agent_settled") == 2


def test_9_4_recovery_gives_up_silently_when_nothing_is_left_to_summarise(tmp_path: Path) -> None:
    """s04e: the recovery is allowed again, omits the reply, finds nothing to summarise:
    no events, no retry.
    """
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: log.add("before_compact"))
        pi.on("session_compact_failed", lambda e, c: log.add("failed"))

    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = two_prompts({"error": OVERFLOW_400})
    scenario["model"]["agent"].extend(
        [{"text": "tool", "tool_calls": [tool]}, {"error": OVERFLOW_400}, {"text": "never"}]
    )
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result), "agent_end", 3)
    assert seq == ["agent_end", "entry_appended", "agent_settled"]
    assert labels(result).count("compaction_start") == 1
    assert labels(result).count("compaction_end") == 1
    assert log.names() == ["before_compact"]
    assert session_records(result, "agent_settled")[-1]["aborted"] is False
    assert len(agent_requests(result)) == 4
    # The failed reply is omitted from the context.
    failed = [
        e for e in entries(result) if e["type"] == "message" and e["message"].get("stopReason") == "error"
    ][-1]
    projected = {p.source["id"]: p.messages for p in projection(result).entries}
    assert projected[failed["id"]] == []


# ================================================================== §9.5 agent_end


def test_9_5_extension_agent_end_has_no_will_retry(tmp_path: Path) -> None:
    """The extension payload is ``{messages}``;
    the RPC ``agent_end`` adds ``willRetry`` (auto-retry only, E2).
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "agent_end",
            lambda e, c: seen.append(
                sorted(vars(e)) if hasattr(e, "__dict__") else sorted(e.__dataclass_fields__)
            ),
        )

    scenario = base(
        operations=[{"prompt": "hello"}],
        model={
            "agent": [
                {"error": {"status": 503, "message": "Service Unavailable", "type": "server_error"}},
                {"text": "ok"},
            ]
        },
    )
    result = run(tmp_path, scenario, ext)
    assert seen == [["messages"], ["messages"]]
    assert [r["willRetry"] for r in session_records(result, "agent_end")] == [True, False]


# ================================================================== §9.6 combining results


def compaction_hook(name: str, log: Log, behaviour: str) -> Any:
    """An extension whose ``session_before_compact`` does ``behaviour`` and logs what it sees."""

    def factory(pi: ExtensionAPI) -> None:
        count = {"n": 0}

        def before(event: Any, ctx: Any) -> Any:
            count["n"] += 1
            log.add(f"{name}:before_compact")
            if behaviour == "cancel":
                return {"cancel": True}
            if behaviour == "empty":
                return {}
            if behaviour == "throw":
                raise RuntimeError(f"boom from {name}")
            if behaviour == "compaction":
                return {
                    "compaction": {
                        "summary": f"SUMMARY-{name}-{count['n']}",
                        "firstKeptEntryId": event.preparation.first_kept_entry_id,
                        "tokensBefore": event.preparation.tokens_before,
                        "details": {"by": name},
                    }
                }
            return None

        pi.on("session_before_compact", before)
        pi.on(
            "session_compact",
            lambda e, c: log.add(f"{name}:compact", (e.compaction_entry["summary"], e.from_extension)),
        )
        pi.on(
            "session_compact_failed",
            lambda e, c: log.add(f"{name}:failed", (e.aborted, e.error_message, e.from_extension)),
        )

    return factory


def manual(*extra: Any) -> dict[str, Any]:
    return two_prompts({"text": long_text("answer two")}, {"compact": None}, *extra)


def test_9_6_last_truthy_result_wins_so_empty_object_discards_an_earlier_compaction(tmp_path: Path) -> None:
    """s05i (-e A -e B): A returns a compaction, B returns ``{}`` → Pi's default (split-turn) summary."""
    log = Log()
    result = run_all(
        tmp_path, manual(), compaction_hook("A", log, "compaction"), compaction_hook("B", log, "empty")
    )
    assert log.names()[:2] == ["A:before_compact", "B:before_compact"]
    assert log.values("A:compact") == [
        ("SUMMARY-1\n\n---\n\n**Turn Context (split turn):**\n\nSUMMARY-2", False)
    ]
    compaction = session_entries(result)[-1]
    assert compaction["fromHook"] is False
    assert compaction["details"] == {"readFiles": [], "modifiedFiles": []}
    assert len([r for r in result.host.service.requests if r.kind == "summary"]) == 2


def test_9_6_undefined_does_not_override_and_order_is_load_order(tmp_path: Path) -> None:
    """s05v/s05iv: a later ``None`` keeps A's result; with B loaded first, A (the last truthy) wins."""
    log = Log()
    result = run_all(
        tmp_path, manual(), compaction_hook("A", log, "compaction"), compaction_hook("B", log, "none")
    )
    assert log.values("A:compact") == [("SUMMARY-A-1", True)]
    log2 = Log()
    result2 = run_all(
        tmp_path,
        manual(),
        compaction_hook("B", log2, "compaction"),
        compaction_hook("A", log2, "compaction"),
        sub="run2",
    )
    assert log2.names() == ["B:before_compact", "A:before_compact", "B:compact", "A:compact"]
    assert log2.values("B:compact") == [("SUMMARY-A-1", True)]
    assert session_entries(result2)[-1]["details"] == {"by": "A"}
    assert session_entries(result)[-1]["fromHook"] is True


@pytest.mark.parametrize("first", ["cancel", "empty"])
def test_9_6_first_cancel_stops_dispatch_and_every_extension_gets_compact_failed(
    tmp_path: Path, first: str
) -> None:
    """s05ii/s05vi: A cancels → B is not called; ``compaction_end{aborted}``; failed event to A and B.

    Consequence 7: the manual ``compact`` then fails with "Compaction cancelled".
    """
    log = Log()
    second = "compaction" if first == "cancel" else "cancel"
    result = run_all(tmp_path, manual(), compaction_hook("A", log, first), compaction_hook("B", log, second))
    expected_calls = ["A:before_compact"] if first == "cancel" else ["A:before_compact", "B:before_compact"]
    assert [n for n in log.names() if n.endswith("before_compact")] == expected_calls
    end = session_records(result, "compaction_end")[-1]
    assert (end["reason"], end["aborted"], "errorMessage" in end) == ("manual", True, False)
    assert (result.operations[2].ok, result.operations[2].error) == (False, "Compaction cancelled")
    assert log.values("A:failed") == [(True, None, False)]
    assert log.values("B:failed") == [(True, None, False)]
    assert not any(e["type"] == "compaction" for e in entries(result))


def test_9_6_throw_does_not_cancel(tmp_path: Path) -> None:
    """s05iii: A throws → ``extension_error``, B's result is used;
    a lone thrower gets Pi's default summary.
    """
    log = Log()
    result = run_all(
        tmp_path, manual(), compaction_hook("A", log, "throw"), compaction_hook("B", log, "compaction")
    )
    seq = after(labels(result), "compaction_start")
    assert seq[:3] == ["compaction_start", "extension_error", "compaction_end"]
    error = session_records(result, "extension_error")[0]
    assert (error["event"], error["error"]) == ("session_before_compact", "boom from A")
    assert log.values("B:compact") == [("SUMMARY-B-1", True)]
    assert session_entries(result)[-1]["details"] == {"by": "B"}
    log2 = Log()
    result2 = run(tmp_path, manual(), compaction_hook("A", log2, "throw"), sub="single")
    assert session_records(result2, "compaction_end")[-1]["aborted"] is False
    assert log2.values("A:compact")[0][1] is False
    assert session_entries(result2)[-1]["fromHook"] is False


def test_9_6_cancel_on_threshold_keeps_the_run_and_reports_aborted(tmp_path: Path) -> None:
    """s4a:
    a threshold cancel → ``compaction_end{aborted:true}`` (no errorMessage, no result), the run settles normally.
    """
    log = Log()
    result = run(
        tmp_path,
        two_prompts({"text": long_text("answer two"), "context_tokens": 17010}),
        compaction_hook("A", log, "cancel"),
    )
    seq = after(labels(result), "agent_end", 2)
    assert seq == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]
    end = session_records(result, "compaction_end")[-1]
    assert end == {**end, "reason": "threshold", "aborted": True, "willRetry": False}
    assert "errorMessage" not in end and "result" not in end
    assert session_records(result, "agent_settled")[-1]["aborted"] is False
    assert log.values("A:failed") == [(True, None, False)]
    assert "extension_error" not in labels(result)


# ================================================================== §9.7 / §9.8 stored verbatim


def custom_result(first_kept: Any, *, omit_id: bool = False) -> Any:
    def factory(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> Any:
            compaction: dict[str, Any] = {
                "summary": "BADKEPT-main-1",
                "tokensBefore": 424242,
                "details": {"by": "main"},
            }
            if not omit_id:
                compaction["firstKeptEntryId"] = first_kept
            return {"compaction": compaction}

        pi.on("session_before_compact", before)

    return factory


def test_9_7_unknown_first_kept_entry_id_keeps_nothing_and_fields_are_stored_verbatim(tmp_path: Path) -> None:
    """s06a: ``firstKeptEntryId: "deadbeef"`` is stored;
    the next request is ``[system, summary, new user]``.
    """
    scenario = manual({"prompt": "hello three"})
    result = run(tmp_path, scenario, custom_result("deadbeef"))
    compaction = next(e for e in session_entries(result) if e["type"] == "compaction")
    assert {
        k: compaction[k] for k in ("summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook")
    } == {
        "summary": "BADKEPT-main-1",
        "firstKeptEntryId": "deadbeef",
        "tokensBefore": 424242,
        "details": {"by": "main"},
        "fromHook": True,
    }
    assert list(compaction)[-1] == "systemMessage"
    assert result.operations[2].data["firstKeptEntryId"] == "deadbeef"
    last = agent_requests(result)[-1]
    assert last.system_prompt
    assert [m["content"][0]["text"] for m in last.messages] == [
        COMPACTION_SUMMARY_PREFIX + "BADKEPT-main-1\n</summary>",
        "hello three",
    ]


def test_9_7_missing_first_kept_entry_id_is_the_entrys_own_id(tmp_path: Path) -> None:
    """s06b: a missing id becomes the compaction entry's own id, which keeps nothing."""
    result = run(tmp_path, manual({"prompt": "hello three"}), custom_result(None, omit_id=True))
    compaction = next(e for e in session_entries(result) if e["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == compaction["id"]
    assert [m["role"] for m in agent_requests(result)[-1].messages] == ["user", "user"]


def test_9_7_no_file_lists_are_appended_to_extension_summaries(tmp_path: Path) -> None:
    """Only Pi's own summary gets ``<read-files>``; an extension summary is stored as given."""
    read = {"name": "read", "arguments": {"path": "notes.md"}}
    scenario = two_prompts({"text": long_text("reading"), "tool_calls": [read]}, {"compact": None})
    scenario["files"] = {"notes.md": {"text": "some notes"}}
    scenario["model"]["agent"].append({"text": long_text("done reading")})
    result = run(tmp_path, scenario, custom_result("deadbeef"))
    assert (
        next(e for e in session_entries(result) if e["type"] == "compaction")["summary"] == "BADKEPT-main-1"
    )
    default = run(tmp_path, scenario, sub="default")
    summary = next(e for e in session_entries(default) if e["type"] == "compaction")["summary"]
    assert summary.endswith("\n\n<read-files>\nnotes.md\n</read-files>")


def test_9_8_file_field_is_fromHook(tmp_path: Path) -> None:
    """Pi-generated entries store ``"fromHook": false``; extension ones ``true``; no ``fromExtension`` key."""
    default = run(tmp_path, manual(), sub="default")
    custom = run(tmp_path, manual(), custom_result("deadbeef"), sub="custom")
    for result, expected in ((default, False), (custom, True)):
        line = next(
            line
            for line in result.session_files()[0].read_text().splitlines()
            if '"type":"compaction"' in line
        )
        assert f'"fromHook":{json.dumps(expected)}' in line
        assert "fromExtension" not in line
        assert session_records(result, "compaction_end")[-1]["result"]["fromExtension"] is expected


# ================================================================== §9.9 first equal summary


def test_9_9_session_compact_gets_the_first_entry_with_an_equal_summary(tmp_path: Path) -> None:
    """s11g:
    two compactions with the same summary text → ``session_compact`` gets the older entry both times.
    """
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> Any:
            return {
                "compaction": {
                    "summary": "SAME",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)
        pi.on("session_compact", lambda e, c: seen.append(e.compaction_entry["id"]))

    scenario = manual({"prompt": "hello three"}, {"compact": None})
    scenario["model"]["agent"].append({"text": long_text("answer three")})
    result = run(tmp_path, scenario, ext)
    ids = [e["id"] for e in session_entries(result) if e["type"] == "compaction"]
    assert len(ids) == 2 and ids[0] != ids[1]
    assert seen == [ids[0], ids[0]]


# ================================================================== §9.10 metadata cut point


def metadata_cut_scenario(*extra: Any) -> dict[str, Any]:
    """s11d: ``… user2, assistant2, custom, model_change, user3 (800 chars), assistant3 "ok"``."""
    return base(
        operations=[
            {"prompt": "hello one"},
            {"prompt": "hello two"},
            {"command": "/mark"},
            {"set_model": "fake/fake-model"},
            {"prompt": {"text": "hello three", "chars": 800}},
            *extra,
        ],
        model={
            "agent": [{"text": long_text("answer one")}, {"text": long_text("answer two")}, {"text": "ok"}]
        },
    )


def marking(pi: ExtensionAPI, seen: list[Any]) -> None:
    async def mark(args: str, ctx: Any) -> None:
        pi.append_entry("probe", {"n": 1})

    pi.register_command("mark", mark)

    def before(event: Any, ctx: Any) -> None:
        prep = event.preparation
        kept = ctx.session_manager.get_entry(prep.first_kept_entry_id)
        seen.append(
            (
                kept["type"],
                prep.is_split_turn,
                len(prep.turn_prefix_messages),
                len(prep.messages_to_summarize),
            )
        )

    pi.on("session_before_compact", before)


def test_9_10_first_kept_entry_can_be_a_metadata_entry_and_marks_split_turn(tmp_path: Path) -> None:
    """s11d: the cut moves back over model_change and custom → split turn with the previous turn as prefix."""
    seen: list[Any] = []
    scenario = metadata_cut_scenario({"compact": None})
    scenario["model"]["summary"] = [
        {"text": "SUMMARY-1", "usage": {"input": 300, "output": 20}},
        {"text": "SUMMARY-2", "usage": {"input": 100, "output": 5, "cache_read": 7}},
    ]
    result = run(tmp_path, scenario, lambda pi: marking(pi, seen))
    assert seen == [("custom", True, 2, 2)]
    # With Pi's default summarizer: two calls and the split-turn join, their usage combined.
    compaction = next(e for e in session_entries(result) if e["type"] == "compaction")
    assert compaction["summary"] == "SUMMARY-1\n\n---\n\n**Turn Context (split turn):**\n\nSUMMARY-2"
    assert compaction["usage"] == {
        "input": 400,
        "output": 25,
        "cacheRead": 7,
        "cacheWrite": 0,
        "reasoning": 0,
        "totalTokens": 432,
        "cost": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": 0,
            "totalFromProvider": False,
        },
    }
    requests = [r for r in result.host.service.requests if r.kind == "summary"]
    assert [r.system_prompt for r in requests] == [SUMMARIZATION_SYSTEM_PROMPT] * 2
    assert requests[0].messages[0]["content"][0]["text"].startswith("<conversation>\n[User]: hello one")
    assert requests[1].messages[0]["content"][0]["text"].startswith("# Conversation\n[User]: hello two")


def test_9_10_first_kept_entry_is_never_a_tool_result(tmp_path: Path) -> None:
    """A big tool result cannot be a cut point: the cut lands on the assistant that called the tool."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> None:
            seen.append(
                ctx.session_manager.get_entry(event.preparation.first_kept_entry_id)["message"]["role"]
            )

        pi.on("session_before_compact", before)

    tool = {"name": "bash", "arguments": {"command": "cat big"}, "result": "x" * 2000}
    scenario = two_prompts({"text": "calling", "tool_calls": [tool]}, {"compact": None})
    scenario["model"]["agent"].append({"text": "done"})
    run(tmp_path, scenario, ext)
    assert seen == ["assistant"]


# ================================================================== §9.11 context after compaction


def test_9_11_context_after_compaction_is_system_summary_kept_new(tmp_path: Path) -> None:
    """The next request is ``[system, summary, kept non-system entries…, new]``;
    system entries in the kept range drop.
    """

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> Any:
            first = ctx.session_manager.get_entries()[0][
                "id"
            ]  # model_change: the kept range holds the system entry
            return {"compaction": {"summary": "KEEP-ALL", "firstKeptEntryId": first, "tokensBefore": 5}}

        pi.on("session_before_compact", before)

    result = run(tmp_path, manual({"prompt": "hello three"}), ext)
    context = projection(result).messages
    roles = [m["role"] for m in context]
    assert roles == [
        "system",
        "compactionSummary",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert roles.count("system") == 1  # the persisted system message entry in the kept range is dropped
    compaction = next(e for e in session_entries(result) if e["type"] == "compaction")
    assert context[0] == compaction["systemMessage"]
    last = agent_requests(result)[-1]
    assert last.system_prompt == render_system_prompt(compaction["systemMessage"])
    texts = [m["content"][0]["text"] for m in last.messages]
    assert texts[0] == COMPACTION_SUMMARY_PREFIX + "KEEP-ALL\n</summary>"
    assert texts[1:] == [
        "hello one",
        long_text("answer one"),
        "hello two",
        long_text("answer two"),
        "hello three",
    ]


def test_9_11_repeated_compaction_passes_the_previous_summary(tmp_path: Path) -> None:
    """The second compaction re-summarises the kept messages with ``<previous-summary>`` and the update
    prompt.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: seen.append(e.preparation.previous_summary))

    scenario = manual({"prompt": "hello three"}, {"compact": None})
    scenario["model"]["agent"].append({"text": long_text("answer three")})
    result = run(tmp_path, scenario, ext)
    first = next(e for e in session_entries(result) if e["type"] == "compaction")["summary"]
    assert seen == [None, first]
    update = [r for r in result.host.service.requests if r.kind == "summary"][-2]
    text = update.messages[0]["content"][0]["text"]
    assert f"<previous-summary>\n{first}\n</previous-summary>" in text
    assert "NEW conversation messages to incorporate" in text


# ================================================================== §9.12 / §9.13 session file


def test_9_12_session_file_is_created_lazily_at_the_first_user_message(tmp_path: Path) -> None:
    """s07: the path is known at once;
    the file appears with the first user message, holding everything buffered.
    """
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        def exists(ctx: Any) -> bool:
            return os.path.exists(ctx.session_manager.get_session_file())

        pi.on(
            "session_start",
            lambda e, c: log.add("start", (c.session_manager.get_session_file() is not None, exists(c))),
        )

        async def app(args: str, ctx: Any) -> None:
            before = exists(ctx)
            pi.append_entry("probe", {"args": args})
            log.add("app", (before, exists(ctx)))

        pi.register_command("app", app)

        def message_end(event: Any, ctx: Any) -> None:
            log.add(f"message_end:{event.message['role']}", exists(ctx))

        pi.on("message_end", message_end)

    scenario = base(
        operations=[{"command": "/app one"}, {"set_model": "fake/fake-big"}, {"prompt": "hello"}],
        model={"agent": [{"text": "hi"}]},
    )
    result = run(tmp_path, scenario, ext)
    assert log.items == [
        ("start", (True, False)),
        ("app", (False, False)),
        ("message_end:system", False),
        ("message_end:user", False),  # handlers run before persistence
        ("message_end:assistant", True),
    ]
    lines = session_entries(result)
    kinds = [e["type"] if e["type"] != "message" else "message:" + e["message"]["role"] for e in lines]
    assert kinds == [
        "session",
        "model_change",
        "thinking_level_change",
        "custom",
        "model_change",
        "message:system",
        "message:user",
        "message:assistant",
    ]
    persisted = [(r["name"], r["persisted"]) for r in result.host.trace.records if r["kind"] == "entry"]
    assert persisted.index(("message", True)) == 5  # the user message flushed everything at once


def test_9_12_a_run_with_only_a_command_leaves_no_session_file(tmp_path: Path) -> None:
    """s07 (print run ``-p "/app"``): only custom entries → no file at all."""

    def ext(pi: ExtensionAPI) -> None:
        async def app(args: str, ctx: Any) -> None:
            pi.append_entry("probe")
            pi.set_session_name("named")

        pi.register_command("app", app)

    result = run(tmp_path, base(mode="print", operations=[{"command": "/app"}]), ext)
    assert result.session_files() == []
    assert all(not r["persisted"] for r in result.host.trace.records if r["kind"] == "entry")


def test_9_13_ids_and_file_names(tmp_path: Path) -> None:
    """Entry ids are 8 hex; the session id is a UUIDv7;
    the file is ``<ISO with dashes>_<id>.jsonl`` in the session dir.
    """
    result = run(tmp_path, base(operations=[{"prompt": "hello"}]))
    [file] = result.session_files()
    lines = session_entries(result)
    header = lines[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert (header["type"], header["version"]) == ("session", 3)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", header["id"])
    assert file.parent == Path(result.host.disk.session_dir)
    assert file.name == header["timestamp"].replace(":", "-").replace(".", "-") + f"_{header['id']}.jsonl"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["timestamp"])
    for entry in lines[1:]:
        assert re.fullmatch(r"[0-9a-f]{8}", entry["id"])
        assert list(entry)[:4] == ["type", "id", "parentId", "timestamp"]
    assert [e["parentId"] for e in lines[1:]] == [None] + [e["id"] for e in lines[1:-1]]


# ================================================================== §9.14 session_start / model_select


def test_9_14_session_start_reason_startup_on_resume_and_model_select_only_on_set(tmp_path: Path) -> None:
    """startup (also on resume), reload, new (+previousSessionFile); model_select only on a real set."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "session_start",
            lambda e, c: log.add("start", (e.reason, e.previous_session_file is not None, c.model.full_id)),
        )
        pi.on(
            "session_shutdown",
            lambda e, c: log.add("shutdown", (e.reason, e.target_session_file is not None)),
        )
        pi.on(
            "session_before_switch", lambda e, c: log.add("before_switch", (e.reason, e.target_session_file))
        )
        pi.on(
            "model_select",
            lambda e, c: log.add("model_select", (e.source, e.model.full_id, e.previous_model.full_id)),
        )

    scenario = base(
        operations=[
            {"prompt": "hello"},
            {"set_model": "fake/fake-big"},
            {"set_model": "fake/fake-big"},
            {"prompt": "on big"},
            {"restart": None},
            {"reload": None},
            {"new_session": None},
        ]
    )
    result = run(tmp_path, scenario, ext)
    assert log.items == [
        ("start", ("startup", False, "fake/fake-model")),
        ("model_select", ("set", "fake/fake-big", "fake/fake-model")),
        ("shutdown", ("quit", False)),
        ("start", ("startup", False, "fake/fake-big")),  # resumed: restored model, no model_select
        ("shutdown", ("reload", False)),
        ("start", ("reload", False, "fake/fake-big")),
        ("before_switch", ("new", None)),
        ("shutdown", ("new", True)),
        # A process restarted with ``--session <file>`` has no ``--model``: the new session gets
        # ``findInitialModel``'s first available model, not the one in use (main.js:650-770,
        # sdk.js:102-120; tests/realpi/test_differential_replacement_model.py).
        ("start", ("new", True, "fake/fake-model")),
        ("shutdown", ("quit", False)),
    ]
    assert [
        r.get("resume") is not None
        for r in result.host.trace.records
        if r["kind"] == "host" and r["name"] == "start"
    ] == [
        False,
        True,
    ]


# ================================================================== §9.16 sendUserMessage / sendMessage


def sending(pi: ExtensionAPI, log: Log) -> None:
    async def sum_(args: str, ctx: Any) -> None:
        mode, _, text = args.partition(" ")
        deliver = None if mode == "none" else mode
        try:
            pi.send_user_message(text, deliver_as=deliver)  # type: ignore[arg-type]
            log.add("sent", None)
        except Exception as error:  # pragma: no cover - Pi never throws here
            log.add("threw", str(error))

    pi.register_command("sum", sum_)
    pi.on("input", lambda e, c: log.add("input", (e.text, e.source, e.streaming_behavior)))


def test_9_16_send_user_message_while_busy_without_deliver_as_is_rejected_not_queued(tmp_path: Path) -> None:
    """s08a: ``input`` still fires; ``extension_error`` from ``<runtime>`` with Pi's text;
    nothing is queued.
    """
    log = Log()
    scenario = base(
        operations=[{"prompt": "hello"}],
        model={
            "agent": [{"text": "answer", "latency_ms": 50, "during": [{"command": "/sum none SUM-TEXT"}]}]
        },
    )
    result = run(tmp_path, scenario, lambda pi: sending(pi, log))
    assert log.items == [
        ("input", ("hello", "rpc", None)),
        ("sent", None),
        ("input", ("SUM-TEXT", "extension", None)),
    ]
    [error] = session_records(result, "extension_error")
    assert (error["extensionPath"], error["event"], error["error"]) == (
        "<runtime>",
        "send_user_message",
        BUSY_WITHOUT_BEHAVIOR,
    )
    assert len(agent_requests(result)) == 1
    assert "queue_update" not in labels(result)
    command_end = next(
        r
        for r in result.host.trace.records
        if r["kind"] == "op" and r["name"] == "command" and r.get("phase")
    )
    assert command_end["disposition"] == "handled"


def test_9_16_steer_and_follow_up_delivery_points(tmp_path: Path) -> None:
    """s08b:
    steer lands right after the tool result (request 2), followUp after the reply to it (request 3).
    """
    log = Log()
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = base(
        operations=[{"prompt": "hello"}],
        model={
            "agent": [
                {
                    "text": "calling",
                    "tool_calls": [tool],
                    "latency_ms": 50,
                    "during": [
                        {"command": "/sum followUp FOLLOWUP-TEXT"},
                        {"command": "/sum steer STEER-TEXT"},
                    ],
                },
                {"text": "REPLY-2"},
                {"text": "REPLY-3"},
            ]
        },
    )
    result = run(tmp_path, scenario, lambda pi: sending(pi, log))
    queue = [(r["steering"], r["followUp"]) for r in session_records(result, "queue_update")]
    assert queue[:2] == [(0, 1), (1, 1)]
    requests = agent_requests(result)
    assert len(requests) == 3
    texts = [
        [
            m["content"][0]["text"] if m["role"] != "assistant" else "A:" + m["content"][0]["text"]
            for m in r.messages
        ]
        for r in requests
    ]
    assert texts[1] == ["hello", "A:calling", "hi\n", "STEER-TEXT"]
    assert texts[2] == ["hello", "A:calling", "hi\n", "STEER-TEXT", "A:REPLY-2", "FOLLOWUP-TEXT"]
    assert labels(result).count("agent_start") == 1
    assert [r["turnIndex"] for r in event_records(result, "turn_start")] == [0, 1, 2]


def test_9_16_send_user_message_when_idle_starts_a_run_at_once(tmp_path: Path) -> None:
    """s08c: idle, no ``deliverAs`` → a run starts with the message."""
    log = Log()
    result = run(tmp_path, base(operations=[{"command": "/sum none NOW"}]), lambda pi: sending(pi, log))
    assert log.values("input") == [("NOW", "extension", None)]
    assert agent_requests(result)[0].messages[0]["content"][0]["text"] == "NOW"


def test_9_16_send_message_delivery_points(tmp_path: Path) -> None:
    """s12m: ``triggerTurn:false`` after the turn; default steer before request 2;
    followUp into request 3; nextTurn with the next prompt.
    """

    def ext(pi: ExtensionAPI) -> None:
        async def msgs(args: str, ctx: Any) -> None:
            pi.send_message({"customType": "t", "content": "NOTRIGGER"}, trigger_turn=False)
            pi.send_message({"customType": "t", "content": "DEFAULTSTEER"})
            pi.send_message({"customType": "t", "content": "FOLLOWUPMSG"}, deliver_as="followUp")
            pi.send_message({"customType": "t", "content": "NEXTTURN"}, deliver_as="nextTurn")

        pi.register_command("msgs", msgs)

    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = base(
        operations=[{"prompt": "hello"}, {"prompt": "second"}],
        model={
            "agent": [
                {"text": "calling", "tool_calls": [tool], "latency_ms": 50, "during": [{"command": "/msgs"}]},
                {"text": "REPLY-2"},
                {"text": "REPLY-3"},
                {"text": "REPLY-4"},
            ]
        },
    )
    result = run(tmp_path, scenario, ext)

    def texts(request: Any) -> list[str]:
        out = []
        for m in request.messages:
            content = m["content"]
            out.append(content if isinstance(content, str) else (content[0]["text"] if content else ""))
        return out

    requests = agent_requests(result)
    assert texts(requests[1])[-2:] == ["NOTRIGGER", "DEFAULTSTEER"]
    assert texts(requests[2])[-2:] == ["REPLY-2", "FOLLOWUPMSG"]
    assert "NEXTTURN" not in texts(requests[2])
    assert texts(requests[3])[-2:] == ["second", "NEXTTURN"]
    seq = labels(result)
    first_turn_end = seq.index("turn_end")
    assert seq[first_turn_end : first_turn_end + 3] == ["turn_end", "message_end:custom", "turn_start"]


# ================================================================== §9.17 busy period


def test_9_17_is_idle_false_during_compaction(tmp_path: Path) -> None:
    """``isIdle()`` is false inside every ``session_before_compact`` (manual, threshold, overflow)."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: seen.append((e.reason, c.is_idle())))

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010},
        {"prompt": "three"},
        {"compact": None},
        {"prompt": {"text": "four", "chars": 800}},
    )
    scenario["model"]["agent"].extend(
        [{"text": long_text("answer three")}, {"error": OVERFLOW_400}, {"text": "retried"}]
    )
    run(tmp_path, scenario, ext)
    assert seen == [("threshold", False), ("manual", False), ("overflow", False)]


def test_9_17_wait_for_idle_right_after_send_user_message_returns_before_the_run(tmp_path: Path) -> None:
    """s12w: ``sendUserMessage`` then ``await ctx.waitForIdle()`` → idle, no ``agent_start`` yet."""
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        starts = {"n": 0}
        pi.on("agent_start", lambda e, c: starts.__setitem__("n", starts["n"] + 1))

        async def sumwait(args: str, ctx: Any) -> None:
            pi.send_user_message("go")
            await ctx.wait_for_idle()
            log.add("after_wait", (starts["n"], ctx.is_idle()))

        pi.register_command("sumwait", sumwait)

    result = run(tmp_path, base(operations=[{"command": "/sumwait"}]), ext)
    assert log.values("after_wait") == [(0, True)]
    assert labels(result).count("agent_start") == 1


def test_9_17_busy_from_start_run_until_agent_settled(tmp_path: Path) -> None:
    """``isIdle()`` is false from ``before_agent_start`` (inside ``_startRun``) to ``agent_settled``
    handlers.
    """
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        for name in ("input", "before_agent_start", "agent_end", "agent_settled"):
            pi.on(name, lambda e, c, n=name: seen.append((n, c.is_idle())))

    run(tmp_path, base(operations=[{"prompt": "hello"}]), ext)
    assert seen == [
        ("input", True),
        ("before_agent_start", False),
        ("agent_end", False),
        ("agent_settled", True),
    ]


# ================================================================== §9.18 print mode


def dialogs(pi: ExtensionAPI, log: Log) -> None:
    async def ui(args: str, ctx: Any) -> None:
        confirm = await ctx.ui.confirm("Sure?", "Really?")
        select = await ctx.ui.select("Pick", ["a", "b"])
        text = await ctx.ui.input("Value", "placeholder")
        ctx.ui.notify("hello", "info")
        ctx.ui.set_status("k", "v")
        log.add(
            "ui", {"hasUI": ctx.has_ui, "mode": ctx.mode, "confirm": confirm, "select": select, "input": text}
        )

    pi.register_command("ui", ui)


@pytest.mark.parametrize("mode", ["print", "json"])
def test_9_18_print_mode_has_no_ui(tmp_path: Path, mode: str) -> None:
    """``pi -p "/ui"``: no UI; dialogs return ``false``/``undefined`` and consume no answer;
    notify is silent.
    """
    log = Log()
    scenario = base(mode=mode, operations=[{"command": {"text": "/ui", "answers": [{"confirm": True}]}}])
    result = run(tmp_path, scenario, lambda pi: dialogs(pi, log))
    assert log.values("ui") == [
        {"hasUI": False, "mode": mode, "confirm": False, "select": None, "input": None}
    ]
    # Nothing is shown: the only ui records are the harness's notes of the dialogs the
    # extension tried to open without a UI (``noUI``); notify and set_status leave none.
    attempts = [r for r in result.host.trace.records if r["kind"] == "ui"]
    assert [(r["name"], r.get("noUI")) for r in attempts] == [
        ("confirm", True),
        ("select", True),
        ("input", True),
    ]
    assert result.operations[0].data == {"unusedAnswers": 1}


def test_9_18_rpc_mode_cancelled_dialogs_give_the_same_values_with_ui(tmp_path: Path) -> None:
    log = Log()
    answers = [{"cancel": True}, {"cancel": True}, {"cancel": True}]
    result = run(
        tmp_path,
        base(operations=[{"command": {"text": "/ui", "answers": answers}}]),
        lambda pi: dialogs(pi, log),
    )
    assert log.values("ui") == [
        {"hasUI": True, "mode": "rpc", "confirm": False, "select": None, "input": None}
    ]
    assert [r["name"] for r in result.host.trace.records if r["kind"] == "ui"] == [
        "confirm",
        "select",
        "input",
        "notify",
        "set_status",
    ]


# ================================================================== §9.19 settings


def settings_probe(pi: ExtensionAPI, log: Log) -> None:
    pi.on(
        "session_start",
        lambda e, c: log.add(
            "start", (e.reason, (pi.get_settings().get("compaction") or {}).get("reserveTokens"))
        ),
    )
    pi.on(
        "session_before_compact",
        lambda e, c: log.add(
            "before_compact", (e.preparation.settings.reserve_tokens, e.preparation.tokens_before)
        ),
    )

    async def show(args: str, ctx: Any) -> None:
        log.add("settings", (pi.get_settings().get("compaction") or {}).get("reserveTokens"))

    pi.register_command("show", show)


def test_9_19_settings_are_not_hot_reloaded(tmp_path: Path) -> None:
    """s09: an edit to ``.pi/settings.json`` is invisible until ``reload``;
    the next prompt then compacts pre-prompt.
    """
    log = Log()
    edit = {
        "edit_file": {
            "path": ".pi/settings.json",
            "json": {"compaction": {"reserveTokens": 10000}},
            "merge_json": True,
        }
    }
    scenario = base(
        operations=[
            {"prompt": "hello one"},
            edit,
            {"command": "/show"},
            {"prompt": "hello two"},
            {"reload": None},
            {"prompt": "hello three"},
        ],
        model={
            "agent": [
                {"text": long_text("answer one")},
                {"text": long_text("answer two"), "context_tokens": 12010},
                {"text": "three"},
            ]
        },
    )
    result = run(tmp_path, scenario, lambda pi: settings_probe(pi, log))
    assert log.items == [
        ("start", ("startup", 4000)),
        ("settings", 4000),
        ("start", ("reload", 10000)),
        ("before_compact", (10000, 12010)),
    ]
    seq = after(labels(result, "session", "op"), "op:prompt", 3)
    assert seq[:3] == ["op:prompt", "session:compaction_start", "session:compaction_end"]


def test_9_19_new_session_applies_edited_settings(tmp_path: Path) -> None:
    """s09: after ``new_session`` the new runtime reads the files again."""
    log = Log()
    edit = {
        "edit_file": {
            "path": ".pi/settings.json",
            "json": {"compaction": {"reserveTokens": 10000}},
            "merge_json": True,
        }
    }
    run(tmp_path, base(operations=[edit, {"new_session": None}]), lambda pi: settings_probe(pi, log))
    assert log.values("start") == [("startup", 4000), ("new", 10000)]


def test_9_19_invalid_settings_reject_the_next_prompt_but_are_swallowed_after_a_run(tmp_path: Path) -> None:
    """s15b/c: ``reserveTokens: -5``:
    the first prompt settles normally, the next prompt and ``compact`` are rejected.
    """
    text = "Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer."
    scenario = base(operations=[{"prompt": "hello one"}, {"prompt": "hello two"}, {"compact": None}])
    scenario["settings"]["project"]["compaction"]["reserveTokens"] = -5
    result = run(tmp_path, scenario)
    ops = result.operations
    assert (ops[0].ok, ops[0].disposition) == (True, "started")
    assert (ops[1].ok, ops[1].error, ops[1].disposition) == (False, text, None)
    assert (ops[2].ok, ops[2].error) == (False, text)
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [False]
    assert labels(result).count("agent_start") == 1
    # Manual compaction fails inside its try block: compaction_start, compaction_end with the text.
    assert session_records(result, "compaction_end")[-1]["errorMessage"] == f"Compaction failed: {text}"


def test_9_19_invalid_settings_fail_a_run_at_its_mid_run_check_with_an_error_reply(tmp_path: Path) -> None:
    """The first prompt has no pre-prompt check; its mid-run check (before the request after a tool
    turn) throws inside the agent loop, which ends the run with ``handleRunFailure``'s error reply:
    empty text, the run's model, the validation message (agent.js:368).
    """
    text = "Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer."
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = base(
        operations=[{"prompt": "hello"}],
        model={"agent": [{"text": "calling", "tool_calls": [tool]}, {"text": "never requested"}]},
    )
    scenario["settings"]["project"]["compaction"]["reserveTokens"] = -5
    result = run(tmp_path, scenario)
    failure = session_entries(result)[-1]["message"]
    assert failure == {
        **failure,
        "role": "assistant",
        "content": [{"type": "text", "text": ""}],
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "stopReason": "error",
        "errorMessage": text,
    }
    assert len(agent_requests(result)) == 1
    assert after(labels(result), "message_end:toolResult") == [
        "message_end:toolResult",
        "turn_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert session_records(result, "agent_settled")[-1]["aborted"] is False


def test_9_19_model_overrides_are_per_model(tmp_path: Path) -> None:
    """s15a: ``modelOverrides["fake/fake-model"].reserveTokens: 10000`` → a 12010 reply compacts."""
    log = Log()
    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 12010})
    scenario["settings"]["project"]["compaction"]["modelOverrides"] = {
        "fake/fake-model": {"reserveTokens": 10000}
    }
    run(tmp_path, scenario, lambda pi: settings_probe(pi, log))
    assert log.values("before_compact") == [(10000, 12010)]


# ================================================================== §9.20 trust


def trust_probe(pi: ExtensionAPI, log: Log) -> None:
    pi.on(
        "session_start",
        lambda e, c: log.add("trust", (c.is_project_trusted(), pi.get_settings().get("compaction"))),
    )


@pytest.mark.parametrize(
    ("trust", "approve", "project", "expected"),
    [
        ("ask", None, True, False),  # s16: Pi's default in non-interactive modes
        ("ask", True, True, True),  # --approve
        ("ask", None, False, True),  # no protected resources
        ("always", None, True, True),
        ("never", None, True, False),
        ("always", False, True, False),  # --no-approve wins
        ("ask", False, False, False),
    ],
)
def test_9_20_trust_rules(
    tmp_path: Path, trust: str, approve: bool | None, project: bool, expected: bool
) -> None:
    """Project settings are read only when trusted;
    ``.pi/settings.json`` makes the project trust-requiring.
    """
    log = Log()
    scenario = base(trust=trust, approve=approve)
    compaction = {"reserveTokens": 1234}
    scenario["settings"] = {"project": {"compaction": compaction}} if project else {"global": {}}
    run(tmp_path, scenario, lambda pi: trust_probe(pi, log))
    assert log.values("trust") == [(expected, compaction if expected and project else None)]


def test_9_20_any_protected_resource_requires_trust(tmp_path: Path) -> None:
    log = Log()
    scenario = base(trust="ask", files={".pi/extensions": {"directory": True}})
    scenario["settings"] = {"global": {}}
    run(tmp_path, scenario, lambda pi: trust_probe(pi, log))
    assert log.values("trust") == [(False, None)]


# ================================================================== §9.21 context usage


def test_9_21_context_usage_is_null_after_compaction_until_next_reply(tmp_path: Path) -> None:
    """``{tokens: null}`` in ``session_compact`` and ``agent_settled`` after compaction;
    a number after the next reply.
    """
    log = Log()

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_compact", lambda e, c: log.add("compact", usage_json(c.get_context_usage())))
        pi.on("agent_settled", lambda e, c: log.add("settled", usage_json(c.get_context_usage())))
        pi.on("input", lambda e, c: log.add("input", usage_json(c.get_context_usage())))

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010}, {"prompt": "hello three"}
    )
    scenario["model"]["agent"].append({"text": "three", "context_tokens": 510})
    run(tmp_path, scenario, ext)
    null = {"tokens": None, "contextWindow": 20000, "percent": None}
    assert log.values("compact") == [null]
    assert log.values("settled")[1:] == [null, {"tokens": 510, "contextWindow": 20000, "percent": 2.55}]
    # Before the compaction: last usage plus chars/4 of the trailing prompt (1010-style estimate).
    first_settled_tokens = log.values("settled")[0]["tokens"]
    assert log.values("input")[1] == {
        "tokens": first_settled_tokens,
        "contextWindow": 20000,
        "percent": first_settled_tokens / 20000 * 100,
    }
    assert log.values("input")[2] == null


def test_9_21_usage_before_compaction_is_last_usage_plus_chars4_of_trailing_messages(tmp_path: Path) -> None:
    """s01: ``/cmp`` during streaming saw 1013 = 1010 + ceil(9/4) for the user text "hello two"."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def usage(args: str, ctx: Any) -> None:
            seen.append(ctx.get_context_usage().tokens)

        pi.register_command("usage", usage)

    scenario = base(
        operations=[{"prompt": "hello one"}, {"prompt": "hello two"}],
        model={
            "agent": [
                {"text": "one", "context_tokens": 1010},
                {"text": "two", "latency_ms": 5, "during": [{"command": "/usage"}]},
            ]
        },
    )
    run(tmp_path, scenario, ext)
    assert seen == [1010 + 3]


# ================================================================== §9.22 handler errors


def test_9_22_handler_errors_never_stop_dispatch(tmp_path: Path) -> None:
    """A throwing handler is reported and the next handler (same or next extension) still runs."""
    log = Log()

    def a(pi: ExtensionAPI) -> None:
        def boom(e: Any, c: Any) -> None:
            raise ValueError("boom in A")

        pi.on("agent_end", boom)
        pi.on("agent_end", lambda e, c: log.add("A2"))

    def b(pi: ExtensionAPI) -> None:
        pi.on("agent_end", lambda e, c: log.add("B"))

    result = run_all(tmp_path, base(operations=[{"prompt": "hello"}]), a, b)
    assert log.names() == ["A2", "B"]
    [error] = session_records(result, "extension_error")
    assert (error["event"], error["error"]) == ("agent_end", "boom in A")
    assert session_records(result, "agent_settled")[0]["aborted"] is False


def test_9_22_a_tool_call_handler_error_blocks_the_tool(tmp_path: Path) -> None:
    """``tool_call`` is the exception: a throwing handler blocks the tool call (fail-safe)."""

    def ext(pi: ExtensionAPI) -> None:
        def guard(e: Any, c: Any) -> None:
            raise RuntimeError("guard failed")

        pi.on("tool_call", guard)

    tool = {"name": "write", "arguments": {"path": "out.txt", "content": "data"}}
    scenario = base(
        operations=[{"prompt": "write it"}],
        model={"agent": [{"text": "writing", "tool_calls": [tool]}, {"text": "done"}]},
    )
    result = run(tmp_path, scenario, ext)
    assert not (Path(result.host.paths.project_dir) / "out.txt").exists()
    tool_result = next(
        e for e in session_entries(result) if e["type"] == "message" and e["message"]["role"] == "toolResult"
    )
    assert tool_result["message"]["isError"] is True
    assert tool_result["message"]["content"][0]["text"] == "guard failed"


# ================================================================== §9.23 default summarizer


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            {"text": "partial", "finish": "length"},
            "Summarization failed: generation hit the token cap and the summary is incomplete",
        ),
        (
            {"text": "", "tool_calls": [{"name": "read", "arguments": {"path": "x"}}]},
            "Summarization attempted to call a tool",
        ),
    ],
    ids=["length", "tool_call"],
)
def test_9_23_default_summarizer_fails_on_length_or_tool_call(
    tmp_path: Path, reply: dict[str, Any], error: str
) -> None:
    """s11e: ``compact`` fails with Pi's text;
    ``compaction_end.errorMessage`` = "Compaction failed: " + it; one request.
    """
    scenario = base(
        operations=[
            {"prompt": {"text": "hello one", "chars": 800}},
            {"prompt": {"text": "hello two", "chars": 800}},
            {"compact": None},
        ],
        model={"agent": [{"text": "one"}, {"text": "two"}], "summary": [reply]},
    )
    result = run(tmp_path, scenario)
    assert (result.operations[2].ok, result.operations[2].error) == (False, error)
    assert session_records(result, "compaction_end")[-1]["errorMessage"] == f"Compaction failed: {error}"
    assert len([r for r in result.host.service.requests if r.kind == "summary"]) == 1


# ================================================================== §9.24 retry before compaction


def test_9_24_retryable_errors_retried_before_compaction_check(tmp_path: Path) -> None:
    """s13: a 503 then a 17010 reply:
    auto-retry (with the failed attempt omitted) first, then threshold compaction.
    """
    unavailable = {"status": 503, "message": "Service Unavailable", "type": "server_error"}
    scenario = two_prompts({"error": unavailable})
    scenario["settings"]["global"] = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000}}
    scenario["model"]["agent"].append({"text": long_text("answer two"), "context_tokens": 17010})
    result = run(tmp_path, scenario)
    seq = after(labels(result), "agent_end", 2)
    assert seq == [
        "agent_end",
        "auto_retry_start",
        "entry_appended",
        "agent_start",
        "turn_start",
        "message_end:assistant",
        "auto_retry_end",
        "turn_end",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]
    assert session_records(result, "agent_end")[1]["willRetry"] is True
    start = session_records(result, "auto_retry_start")[0]
    assert (start["attempt"], start["maxAttempts"], start["delayMs"]) == (1, 3, 2000)
    assert (
        start["errorMessage"]
        == '503: {"message":"Service Unavailable","type":"server_error","param":null,"code":null}'
    )


def test_9_24_retries_back_off_exponentially_and_give_up_after_three(tmp_path: Path) -> None:
    """s13:
    4×503 → attempts 1..3 with 2000/4000/8000 ms, then ``auto_retry_end{success:false, attempt:3}`` at 14 s.
    """
    unavailable = {"error": {"status": 503, "message": "Service Unavailable", "type": "server_error"}}
    scenario = base(operations=[{"prompt": "hello"}], model={"agent": [unavailable] * 4})
    scenario["settings"]["global"] = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000}}
    result = run(tmp_path, scenario)
    starts = session_records(result, "auto_retry_start")
    assert [(s["attempt"], s["delayMs"]) for s in starts] == [(1, 2000), (2, 4000), (3, 8000)]
    [end] = session_records(result, "auto_retry_end")
    assert (end["success"], end["attempt"]) == (False, 3)
    assert end["t"] >= 14000
    assert labels(result)[-1] == "agent_settled"


def test_9_24_overflow_errors_are_never_auto_retried(tmp_path: Path) -> None:
    scenario = two_prompts({"error": OVERFLOW_400})
    scenario["settings"]["global"] = {"retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000}}
    scenario["model"]["agent"].append({"text": "retried"})
    result = run(tmp_path, scenario)
    assert "auto_retry_start" not in labels(result)
    assert session_records(result, "agent_end")[1]["willRetry"] is False


# ================================================================== psc-lifecycle consequences


def test_follow_up_from_session_compact_lands_as_new_run_after_post_run_compaction(tmp_path: Path) -> None:
    """Consequence 3 (s1): post-run → a new low-level run whose first message is the continuation;
    one ``agent_settled``.
    """
    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 17010})
    scenario["model"]["agent"].append({"text": "CONTINUED-AFTER-HANDOFF"})
    result = run(tmp_path, scenario, probe_extension.extension)
    seq = after(labels(result), "agent_end", 2)
    assert seq == [
        "agent_end",
        "compaction_start",
        "queue_update",
        "compaction_end",
        "agent_start",
        "turn_start",
        "queue_update",
        "message_end:user",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert [(q["steering"], q["followUp"]) for q in session_records(result, "queue_update")] == [
        (0, 1),
        (0, 0),
    ]
    assert session_records(result, "message_end")[-2]["text"].startswith(probe_extension.CONTINUATION_MARKER)
    input_events = event_records(result, "input")
    assert (input_events[-1]["source"], input_events[-1]["streamingBehavior"]) == ("extension", "followUp")
    assert "extension_error" not in labels(result)
    # The 4th request: [summary, kept assistant, continuation].
    request = agent_requests(result)[-1]
    assert [m["role"] for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[0]["content"][0]["text"].startswith(
        COMPACTION_SUMMARY_PREFIX + "PROBE-SUMMARY 1 threshold"
    )


def test_follow_up_from_session_compact_lands_after_the_run_final_reply_after_mid_run_compaction(
    tmp_path: Path,
) -> None:
    """Consequence 3 (s2/s2b): mid-run → the continuation waits until the model stops calling tools."""
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = two_prompts(
        {"text": long_text("running a tool"), "tool_calls": [tool], "context_tokens": 17500}
    )
    scenario["model"]["agent"].extend(
        [
            {"text": "tool B", "tool_calls": [tool]},
            {"text": "tool C", "tool_calls": [tool]},
            {"text": "FINAL-TEXT-OF-ORIGINAL-RUN"},
            {"text": "CONTINUED"},
        ]
    )
    result = run(tmp_path, scenario, probe_extension.extension)
    kinds = []
    for e in entries(result)[
        entries(result).index(next(e for e in entries(result) if e["type"] == "compaction")) - 2 :
    ]:
        if e["type"] == "message":
            text = e["message"]["content"][0]["text"] if e["message"]["content"] else ""
            kinds.append(f"{e['message']['role']}:{text[:14]}")
        else:
            kinds.append(e["type"])
    assert kinds == [
        "assistant:running a tool",
        "toolResult:hi\n",
        "compaction",
        "assistant:tool B",
        "toolResult:hi\n",
        "assistant:tool C",
        "toolResult:hi\n",
        "assistant:FINAL-TEXT-OF-",
        "user:" + probe_extension.CONTINUATION_MARKER[:14],
        "assistant:CONTINUED",
    ]
    assert labels(result).count("agent_start") == 2
    assert [r["turnIndex"] for r in event_records(result, "turn_start")][1:] == [0, 1, 2, 3, 4]
    # The request after the compaction does not carry the continuation yet.
    after_compaction = agent_requests(result)[2]
    assert [m["role"] for m in after_compaction.messages] == ["user", "assistant", "toolResult"]


def test_follow_up_from_session_compact_lands_after_the_users_prompt_is_answered_after_pre_prompt_compaction(
    tmp_path: Path,
) -> None:
    """Consequence 3 (s8a, E1):
    pre-prompt → the user's prompt and its answer first, the continuation as an extra turn.
    """

    def ext(pi: ExtensionAPI) -> None:
        probe_extension.extension(pi)
        state = {"cancel": True}

        def first_cancel(event: Any, ctx: Any) -> Any:
            if state["cancel"]:
                state["cancel"] = False
                return {"cancel": True}
            return None

        pi.on("session_before_compact", first_cancel)

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010}, {"prompt": "hello three"}
    )
    scenario["model"]["agent"].extend([{"text": "answer three"}, {"text": "CONTINUED"}])
    result = run(tmp_path, scenario, ext)
    seq = after(labels(result, "session", "event", "op"), "op:prompt", 3)
    body = [label for label in seq if label.startswith(("session:", "op:")) and "queue_update" not in label]
    assert body[:12] == [
        "op:prompt",
        "session:compaction_start",
        "session:compaction_end",
        "session:agent_start",
        "session:turn_start",
        "session:message_end:user",
        "session:message_end:assistant",
        "session:turn_end",
        "session:turn_start",
        "session:message_end:user",
        "session:message_end:assistant",
        "session:turn_end",
    ]
    texts = [r.get("text", "") for r in session_records(result, "message_end")][-4:]
    assert texts[0] == "hello three" and texts[1] == "answer three"
    assert texts[2].startswith(probe_extension.CONTINUATION_MARKER) and texts[3] == "CONTINUED"
    assert (
        labels(result).count("agent_start") == 3
    )  # prompt 1, prompt 2, prompt 3 (one run with the extra turn)


def test_send_user_message_during_manual_compaction_is_rejected_and_lost(tmp_path: Path) -> None:
    """Consequence 4: during manual compaction ``prompt()`` rejects; the message is lost, no run starts."""

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_compact", lambda e, c: pi.send_user_message("CONTINUE", deliver_as="followUp"))

    result = run(tmp_path, manual(), ext)
    [error] = session_records(result, "extension_error")
    assert (error["event"], error["error"]) == ("send_user_message", PROMPT_DURING_COMPACTION)
    assert labels(result).count("agent_start") == 2
    assert not any(r.get("text") == "CONTINUE" for r in event_records(result, "input"))


def test_consequence_1_a_synthesised_summary_is_stored_verbatim_and_is_what_the_model_sees(
    tmp_path: Path,
) -> None:
    """Consequence 1 (s1): synthesis through ``complete()`` inside the hook, disk write and re-read;
    Pi stores ``summary``, ``firstKeptEntryId``, ``tokensBefore`` and ``details`` verbatim,
    ``session_compact`` gets that entry, and the next request's summary is the disk bytes.
    """
    seen: list[Any] = []
    prepared: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            reply = await ctx.model_registry.complete(
                ctx.model, {"systemPrompt": "[SYNTH]", "messages": []}, max_tokens=500, signal=event.signal
            )
            path = Path(ctx.cwd) / "brief.md"
            path.write_text("---\nkind: brief\n---\n" + reply["content"][0]["text"], encoding="utf-8")
            disk = path.read_text(encoding="utf-8")
            prepared.append(event.preparation.first_kept_entry_id)
            return {
                "compaction": {
                    "summary": disk,
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": event.preparation.tokens_before,
                    "details": {"sha256": hashlib.sha256(disk.encode()).hexdigest()},
                }
            }

        pi.on("session_before_compact", before)
        pi.on("session_compact", lambda e, c: seen.append((e.compaction_entry["id"], e.from_extension)))

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010}, {"prompt": "hello three"}
    )
    scenario["model"]["agent"].append({"text": "three"})
    scenario["model"]["extension"] = [{"kind": "raw", "text": "THE-BRIEF"}]
    result = run(tmp_path, scenario, ext)
    disk = (Path(result.host.paths.project_dir) / "brief.md").read_text(encoding="utf-8")
    assert disk == "---\nkind: brief\n---\nTHE-BRIEF"
    [synthesis] = [r for r in result.host.service.requests if r.kind == "extension"]
    assert (synthesis.model, synthesis.max_tokens) == ("fake/fake-model", 500)
    [compaction] = [e for e in session_entries(result) if e["type"] == "compaction"]
    assert {k: compaction[k] for k in ("summary", "firstKeptEntryId", "tokensBefore", "details")} == {
        "summary": disk,
        "firstKeptEntryId": prepared[0],
        "tokensBefore": 17010,
        "details": {"sha256": hashlib.sha256(disk.encode()).hexdigest()},
    }
    assert compaction["fromHook"] is True
    assert seen == [(compaction["id"], True)]
    summary = agent_requests(result)[-1].messages[0]["content"][0]["text"]
    assert summary == COMPACTION_SUMMARY_PREFIX + disk + "\n</summary>"


def test_consequence_2_unique_summaries_give_session_compact_the_new_entry_each_time(tmp_path: Path) -> None:
    """Consequence 2, the other side of §9.9: with a unique summary per compaction, Pi's lookup by
    summary text hands ``session_compact`` the entry just appended, every time.
    """
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        count = {"n": 0}

        def before(event: Any, ctx: Any) -> Any:
            count["n"] += 1
            return {
                "compaction": {
                    "summary": f"BRIEF event-{count['n']}",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)
        pi.on("session_compact", lambda e, c: seen.append(e.compaction_entry["id"]))

    scenario = manual({"prompt": "hello three"}, {"compact": None})
    scenario["model"]["agent"].append({"text": long_text("answer three")})
    result = run(tmp_path, scenario, ext)
    ids = [e["id"] for e in session_entries(result) if e["type"] == "compaction"]
    assert len(ids) == 2 and seen == ids


@pytest.mark.parametrize("send", [False, True], ids=["nothing-sent", "continuation-sent"])
def test_consequence_5_overflow_compaction_retries_once_and_a_continuation_duplicates_the_turn(
    tmp_path: Path, send: bool
) -> None:
    """Consequence 5 (s3a/s3b): sending nothing from ``session_compact`` gives exactly one retry run;
    a continuation sent there runs after the retry as an extra turn (the duplicate the design forbids).
    """

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> Any:
            return {
                "compaction": {
                    "summary": "BRIEF",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": event.preparation.tokens_before,
                }
            }

        def on_compact(event: Any, ctx: Any) -> None:
            assert (event.reason, event.will_retry) == ("overflow", True)
            if send:
                pi.send_user_message("CONTINUE", deliver_as="followUp")

        pi.on("session_before_compact", before)
        pi.on("session_compact", on_compact)

    scenario = two_prompts({"error": OVERFLOW_400})
    scenario["model"]["agent"].extend([{"text": "RETRY-ANSWER"}, {"text": "EXTRA-ANSWER"}])
    result = run(tmp_path, scenario, ext)
    texts = [
        (e["message"]["role"], e["message"]["content"][0]["text"])
        for e in session_entries(result)
        if e["type"] == "message"
        and e["message"]["role"] in ("user", "assistant")
        and e["message"]["content"]
    ]
    retry = [("assistant", "RETRY-ANSWER")]
    duplicate = [("user", "CONTINUE"), ("assistant", "EXTRA-ANSWER")] if send else []
    assert texts[-len(retry + duplicate) :] == retry + duplicate
    assert sum(1 for role, _ in texts if role == "user") == (3 if send else 2)
    assert len(agent_requests(result)) == (4 if send else 3)
    assert labels(result).count("agent_start") == 3  # prompt 1, prompt 2, the one retry run
    assert "extension_error" not in labels(result)


def test_consequence_9_the_hook_blocks_the_loop_for_the_whole_synthesis_even_before_a_prompt(
    tmp_path: Path,
) -> None:
    """Consequence 9 (s8b, E1): a pre-prompt compaction whose synthesis takes 2 s holds the prompt:
    its run starts only when the hook has returned, and nothing runs in between.
    """

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            await ctx.model_registry.complete(
                ctx.model, {"messages": []}, max_tokens=500, signal=event.signal
            )
            return {
                "compaction": {
                    "summary": "BRIEF",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)

    scenario = base(
        active_model="fake/fake-big",
        operations=[
            {"prompt": "hello one"},
            {"prompt": "hello two"},
            {"set_model": "fake/fake-model"},
            {"prompt": "hello three"},
        ],
        model={
            "agent": [
                {"text": long_text("answer one")},
                {"text": long_text("answer two"), "context_tokens": 17010},
                {"text": "answer three"},
            ],
            "extension": [{"latency_ms": 2000}],
        },
    )
    result = run(tmp_path, scenario, ext)
    records = result.host.trace.records
    prompt = [r for r in records if r["kind"] == "op" and r["name"] == "prompt" and not r.get("phase")][-1]
    tail = [r for r in records[records.index(prompt) :] if r["kind"] in ("session", "model")]
    assert [(r["kind"], r["name"]) for r in tail[:5]] == [
        ("session", "compaction_start"),
        ("model", "request"),
        ("model", "reply"),
        ("session", "compaction_end"),
        ("session", "agent_start"),
    ]
    assert tail[4]["t"] - prompt["t"] >= 2000
    assert result.operations[3].disposition == "started"


def test_consequence_11_complete_sends_max_tokens_unclamped_while_pis_own_requests_are_clamped(
    tmp_path: Path,
) -> None:
    """Consequence 11 (E3, s10): near the window Pi clamps its own request's ``max_tokens`` (to 1
    here, E4), while ``complete(max_tokens=500)`` from the hook goes out as 500.
    """

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            await ctx.model_registry.complete(
                ctx.model, {"messages": []}, max_tokens=500, signal=event.signal
            )
            return {"cancel": True}

        pi.on("session_before_compact", before)

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010}, {"prompt": "hello three"}
    )
    scenario["model"]["agent"].append({"text": "three", "context_tokens": 17100})
    result = run(tmp_path, scenario, ext)
    extension = [r.max_tokens for r in result.host.service.requests if r.kind == "extension"]
    assert extension == [500, 500, 500]  # post-run, pre-prompt, post-run: all cancelled
    assert agent_requests(result)[-1].max_tokens == 1


def test_complete_with_reasoning_fits_max_tokens_into_the_window_as_stream_simple_does(
    tmp_path: Path,
) -> None:
    """An extension's ``complete`` with reasoning crosses the bridge as ``streamSimple``
    (bridge.ts, ``performRegistry``), whose ``buildBaseOptions`` clamps ``maxTokens`` to the
    window with pi-ai's estimate of the normalised context, the system prompt included
    (api/simple-options.js:13-23, 36; models.js:466-477): here 7,000 + 70,000 characters are
    2,000 + 20,000 tokens, so 40,000 - 22,000 - 4,096 = 13,904. Without reasoning it goes to
    ``complete`` unclamped. Differential exploration of the continuity cases found a long
    synthesis request sent as asked (seed 28: 14,336 where real Pi sent 3,079)."""

    def ext(pi: ExtensionAPI) -> None:
        async def ask(args: str, ctx: Any) -> None:
            question = {"role": "user", "content": [{"type": "text", "text": "q" * 70_000}]}
            lead = {"systemPrompt": "s" * 7_000, "messages": [question]}
            for context, reasoning in (
                (lead, "medium"),
                (lead, None),
                ({"messages": [question]}, "medium"),
                (lead, "off"),
            ):
                await ctx.model_registry.complete(ctx.model, context, max_tokens=20_000, reasoning=reasoning)

        pi.register_command("ask", ask)

    scenario = base(
        models=[{"id": "fake/thinker", "context_window": 40_000, "max_tokens": 30_000, "reasoning": True}],
        model={"extension": [{"text": "a"}] * 4},
        operations=[{"command": "/ask"}],
    )
    result = run(tmp_path, scenario, ext)
    extension = [r.max_tokens for r in result.host.service.requests if r.kind == "extension"]
    assert extension == [13_904, 20_000, 15_904, 20_000]


def test_consequence_14_a_continuation_carrying_the_brief_puts_it_in_the_context_twice(
    tmp_path: Path,
) -> None:
    """Consequence 14 (s1): the summary copy and the continuation copy both reach the model."""

    def ext(pi: ExtensionAPI) -> None:
        def before(event: Any, ctx: Any) -> Any:
            return {
                "compaction": {
                    "summary": "THE-BRIEF",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)
        pi.on(
            "session_compact",
            lambda e, c: pi.send_user_message(
                e.compaction_entry["summary"] + "\n\nGo on.", deliver_as="followUp"
            ),
        )

    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 17010})
    scenario["model"]["agent"].append({"text": "CONTINUED"})
    result = run(tmp_path, scenario, ext)
    request = agent_requests(result)[-1]
    texts = [m["content"][0]["text"] for m in request.messages]
    assert texts[0] == COMPACTION_SUMMARY_PREFIX + "THE-BRIEF\n</summary>"
    assert texts[-1] == "THE-BRIEF\n\nGo on."
    assert sum(text.count("THE-BRIEF") for text in texts) == 2


def synthesis_hook(log: Log, *, return_after_abort: bool = False) -> Any:
    def factory(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            reply = await ctx.model_registry.complete(
                ctx.model, {"systemPrompt": "[SYNTH]", "messages": []}, max_tokens=500, signal=event.signal
            )
            log.add("synth", (reply["stopReason"], reply.get("errorMessage"), event.signal.aborted))
            if reply["stopReason"] != "stop" and not return_after_abort:
                return {"cancel": True}
            return {
                "compaction": {
                    "summary": "LATE",
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)
        pi.on(
            "session_compact_failed",
            lambda e, c: log.add(
                "failed", (e.reason, e.aborted, e.will_retry, e.from_extension, e.error_message)
            ),
        )

    return factory


def test_complete_resolves_aborted_when_signal_aborts(tmp_path: Path) -> None:
    """Consequence 8 (s8a): abort during synthesis → ``complete()`` resolves ``aborted``;
    cancel → aborted compaction.
    """
    log = Log()
    scenario = two_prompts({"text": long_text("answer two"), "context_tokens": 17010})
    scenario["model"]["extension"] = [{"kind": "abort"}]
    result = run(tmp_path, scenario, synthesis_hook(log))
    assert log.values("synth") == [("aborted", "Request aborted", True)]
    assert log.values("failed") == [("threshold", True, False, False, None)]
    end = session_records(result, "compaction_end")[-1]
    assert end == {**end, "reason": "threshold", "aborted": True, "willRetry": False}
    assert "errorMessage" not in end and "result" not in end
    assert session_records(result, "agent_settled")[-1]["aborted"] is True
    assert not any(e["type"] == "compaction" for e in entries(result))
    assert after(labels(result), "compaction_start") == [
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]


def test_result_returned_after_abort_is_discarded(tmp_path: Path) -> None:
    """Consequence 8 (s8b): a result returned after the abort is discarded;
    ``fromExtension: true`` in the failure.
    """
    log = Log()
    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010}, {"prompt": "hello three"}
    )
    scenario["model"]["extension"] = [{"kind": "abort"}]
    scenario["model"]["agent"].append({"text": "three"})
    result = run(tmp_path, scenario, synthesis_hook(log, return_after_abort=True))
    assert log.values("failed")[0] == ("threshold", True, False, True, None)
    end = session_records(result, "compaction_end")[0]
    assert (end["aborted"], "result" in end) == (True, False)
    compactions = [e for e in session_entries(result) if e["type"] == "compaction"]
    # Only the later (pre-prompt) compaction is stored; the aborted one left no entry.
    assert len(compactions) == 1
    assert session_records(result, "compaction_start")[1]["reason"] == "threshold"
    seq = after(labels(result, "session", "op"), "op:prompt", 3)
    assert seq[:4] == [
        "op:prompt",
        "session:compaction_start",
        "session:compaction_end",
        "session:agent_start",
    ]


def test_cancelled_compaction_reinvokes_hook_at_every_later_check_point(tmp_path: Path) -> None:
    """Consequence 6 (s4): while usage stays above the threshold, every check point calls the hook again."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        state = {"phase": "idle"}
        pi.on("input", lambda e, c: state.__setitem__("phase", "pre-prompt"))
        pi.on("agent_start", lambda e, c: state.__setitem__("phase", "run"))
        pi.on("agent_end", lambda e, c: state.__setitem__("phase", "post-run"))

        def before(event: Any, ctx: Any) -> Any:
            where = (
                state["phase"] if state["phase"] != "run" else ("mid-run" if ctx.signal is not None else "?")
            )
            seen.append((event.reason, where))
            return {"cancel": True}

        pi.on("session_before_compact", before)

    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010},
        {"prompt": "hello three"},
        {"prompt": "tool please"},
    )
    scenario["model"]["agent"].extend(
        [
            {"text": "three", "context_tokens": 17100},
            {"text": "calling", "tool_calls": [tool], "context_tokens": 17200},
            {"text": "done", "context_tokens": 17300},
        ]
    )
    result = run(tmp_path, scenario, ext)
    assert seen == [
        ("threshold", "post-run"),
        ("threshold", "pre-prompt"),
        ("threshold", "post-run"),
        ("threshold", "pre-prompt"),
        ("threshold", "mid-run"),
        ("threshold", "post-run"),
    ]
    assert all(e["aborted"] for e in session_records(result, "compaction_end"))
    # Pi's own requests are clamped towards 1 output token near the window (E4).
    assert agent_requests(result)[-1].max_tokens == 1


def test_overflow_tokens_before_is_the_chars4_estimate(tmp_path: Path) -> None:
    """Consequence 5 (s3a): the overflow hook's ``tokensBefore`` and usage are a small chars/4 estimate."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "session_before_compact",
            lambda e, c: seen.append((e.preparation.tokens_before, c.get_context_usage().tokens)),
        )

    scenario = two_prompts({"error": OVERFLOW_400})
    scenario["model"]["agent"].append({"text": "RETRY-ANSWER"})
    result = run(tmp_path, scenario, ext)
    # Recompute Pi's estimate independently: after the omission, no usage is trusted → chars/4 of the
    # context at the time of the hook (every entry before the compaction), system message included.
    lines = session_entries(result)
    lines = lines[: next(i for i, e in enumerate(lines) if e["type"] == "compaction")]
    hidden = {e["targetId"] for e in lines if e["type"] == "context_edit"}
    visible = [e["message"] for e in lines if e["type"] == "message" and e["id"] not in hidden]
    expected = sum(estimate_tokens(m) for m in visible)
    assert seen == [(expected, expected)]
    # Small: the two short turns plus Pi's system message (sections and tool schemas, ~1,200 tokens).
    assert 1200 < expected < 2000
    assert session_records(result, "compaction_end")[0]["result"]["tokensBefore"] == expected


def test_get_context_usage_null_inside_session_compact(tmp_path: Path) -> None:
    """Consequence 10, for every reason: ``session_compact`` sees ``tokens: null`` and ``percent: null``."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_compact", lambda e, c: seen.append((e.reason, usage_json(c.get_context_usage()))))

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010},
        {"prompt": "three"},
        {"compact": None},
        {"prompt": {"text": "four", "chars": 800}},
    )
    scenario["model"]["agent"].extend(
        [{"text": long_text("answer three")}, {"error": OVERFLOW_400}, {"text": "retried"}]
    )
    run(tmp_path, scenario, ext)
    null = {"tokens": None, "contextWindow": 20000, "percent": None}
    assert seen == [("threshold", null), ("manual", null), ("overflow", null)]


def test_model_select_uses_the_new_window_for_the_next_threshold(tmp_path: Path) -> None:
    """Consequence 12 (s6): after ``set_model`` to a 40000 window, 17010 does not compact and 36510 does."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on(
            "model_select",
            lambda e, c: seen.append(
                ("select", e.source, c.model.context_window, c.get_context_usage().context_window)
            ),
        )
        pi.on(
            "session_before_compact",
            lambda e, c: seen.append(("compact", e.preparation.tokens_before, c.model.context_window)),
        )

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 1010},
        {"set_model": "fake/fake-big"},
        {"prompt": "three"},
        {"prompt": "four"},
    )
    scenario["model"]["agent"].extend(
        [
            {"text": long_text("three"), "context_tokens": 17010},
            {"text": long_text("four"), "context_tokens": 36510},
        ]
    )
    result = run(tmp_path, scenario, ext)
    assert seen == [("select", "set", 40000, 40000), ("compact", 36510, 40000)]
    synth = [r for r in result.host.service.requests if r.kind == "summary"]
    assert {r.model for r in synth} == {"fake/fake-big"}


def test_9_16_send_user_message_skips_command_dispatch_unless_expand_prompt_templates(tmp_path: Path) -> None:
    """``sendUserMessage("/mark")`` goes to the model as text; with ``expandPromptTemplates`` it runs the command."""
    ran: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def mark(args: str, ctx: Any) -> None:
            ran.append(args)

        async def send(args: str, ctx: Any) -> None:
            pi.send_user_message("/mark " + args, expand_prompt_templates=args == "expand")

        pi.register_command("mark", mark)
        pi.register_command("send", send)

    result = run(tmp_path, base(operations=[{"command": "/send plain"}, {"command": "/send expand"}]), ext)
    assert ran == ["expand"]
    assert [r.messages[-1]["content"][0]["text"] for r in agent_requests(result)] == ["/mark plain"]


def test_9_17_messages_sent_during_agent_settled_wait_for_every_settled_handler(tmp_path: Path) -> None:
    """A ``sendUserMessage`` from an ``agent_settled`` handler starts its run after all settled handlers."""
    order: list[str] = []

    def a(pi: ExtensionAPI) -> None:
        def settled(event: Any, ctx: Any) -> None:
            order.append("A:settled")
            if order.count("A:settled") == 1:
                pi.send_user_message("from settled")

        pi.on("agent_settled", settled)
        pi.on("agent_start", lambda e, c: order.append("A:agent_start"))

    def b(pi: ExtensionAPI) -> None:
        pi.on("agent_settled", lambda e, c: order.append("B:settled"))

    result = run_all(tmp_path, base(operations=[{"prompt": "hello"}]), a, b)
    assert order == ["A:agent_start", "A:settled", "B:settled", "A:agent_start", "A:settled", "B:settled"]
    assert "extension_error" not in labels(result)
    assert agent_requests(result)[-1].messages[-1]["content"][0]["text"] == "from settled"


def test_context_values_inside_handlers(tmp_path: Path) -> None:
    """psc-lifecycle §5: what ``ctx`` reports in ``session_start``, ``session_compact`` and ``model_select``.

    Consequence 15: in RPC mode ``has_ui`` is true and ``mode`` is "rpc"; the project is trusted.
    """
    seen: dict[str, Any] = {}

    def ext(pi: ExtensionAPI) -> None:
        def snapshot(name: str, ctx: Any) -> None:
            manager = ctx.session_manager
            leaf = manager.get_leaf_entry()
            seen[name] = {
                "usage": usage_json(ctx.get_context_usage()),
                "window": ctx.model.context_window,
                "trusted": ctx.is_project_trusted(),
                "hasUI": ctx.has_ui,
                "mode": ctx.mode,
                "leaf": leaf["type"] if leaf else None,
                "idle": ctx.is_idle(),
                "signal": ctx.signal,
                "pending": ctx.has_pending_messages(),
            }

        pi.on("session_start", lambda e, c: snapshot("session_start", c))
        pi.on("session_compact", lambda e, c: snapshot("session_compact", c))
        pi.on("model_select", lambda e, c: snapshot("model_select", c))

    scenario = two_prompts(
        {"text": long_text("answer two"), "context_tokens": 17010},
        {"prompt": "three"},
        {"set_model": "fake/fake-big"},
    )
    scenario["model"]["agent"].append({"text": "three", "context_tokens": 1010})
    run(tmp_path, scenario, ext)
    common = {"trusted": True, "hasUI": True, "mode": "rpc", "signal": None, "pending": False}
    assert seen["session_start"] == {
        **common,
        "usage": {"tokens": 0, "contextWindow": 20000, "percent": 0.0},
        "window": 20000,
        "leaf": "thinking_level_change",
        "idle": True,
    }
    assert seen["session_compact"] == {
        **common,
        "usage": {"tokens": None, "contextWindow": 20000, "percent": None},
        "window": 20000,
        "leaf": "compaction",
        "idle": False,
    }
    assert seen["model_select"] == {
        **common,
        "usage": {"tokens": 1010, "contextWindow": 40000, "percent": pytest.approx(2.525)},
        "window": 40000,
        "leaf": "model_change",
        "idle": True,
    }


def test_9_15_slash_compact_goes_to_the_model_outside_the_tui(tmp_path: Path) -> None:
    """s11b: over RPC, ``/compact`` is not a command: the model receives the text."""
    result = run(tmp_path, base(operations=[{"prompt": "/compact"}]))
    assert result.operations[0].disposition == "started"
    assert agent_requests(result)[0].messages[-1]["content"][0]["text"] == "/compact"
    assert "compaction_start" not in labels(result)
