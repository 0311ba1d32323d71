"""What a ``turn_end`` handler returns, on the simulator alone: Pi 1.6 runs ``turn_end`` as a run
boundary (agent-session.js:546-579, runner.js:772-818), its drafts appended and its ``continue``
one more context-only turn (agent-session.js:580-591, pi-agent-core agent-loop.js:184-207).
``tests/realpi/test_differential_turn_end_boundary.py`` compares it with real Pi."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import agent_requests, base, entries, event_records, run, session_records

NUDGE = {"type": "custom_message", "customType": "nudge", "content": "go on", "display": True}
BASH = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
BAD_REQUEST = {"status": 400, "message": "Bad request", "type": "invalid_request_error"}


def _turn_end(answers: dict[int, Any], seen: list[Any]) -> Any:
    """An extension whose ``turn_end`` handler answers its n-th call with ``answers[n]`` (after
    recording the event), and whose second handler records what it sees."""

    def extension(pi: ExtensionAPI) -> None:
        calls = [0]

        def turn_end(event: Any, ctx: Any) -> Any:
            calls[0] += 1
            seen.append((calls[0], event.turn_index, event.outcome, event.entries, event.continue_))
            return answers.get(calls[0])

        pi.on("turn_end", turn_end)
        pi.on("turn_end", lambda event, ctx: seen.append(("second", event.entries, event.continue_)))

    return extension


def test_turn_end_drafts_are_appended_and_a_continue_runs_one_more_context_only_turn(tmp_path: Path) -> None:
    """The second handler sees the first's drafts and ``continue``; the drafts become entries
    (``entry_appended``) before the turn's own ``turn_end`` is over, and the loop, which would
    stop, runs one more turn from them (no new user message); that turn's boundary starts again
    from no drafts."""
    seen: list[Any] = []
    state = {"type": "custom", "customType": "state", "data": {"n": 1}}
    answers = {1: {"entries": [state, NUDGE], "continue": True}}
    scenario = base(model={"agent": [{"text": "first"}, {"text": "second"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _turn_end(answers, seen))
    assert seen == [
        (1, 0, "completed", [], False),
        ("second", [state, NUDGE], True),
        (2, 1, "completed", [], False),
        ("second", [], False),
    ]
    assert len(agent_requests(result)) == 2
    tail = [(e["type"], e.get("customType") or e.get("message", {}).get("role")) for e in entries(result)]
    assert tail[-5:] == [
        ("message", "user"),
        ("message", "assistant"),
        ("custom", "state"),
        ("custom_message", "nudge"),
        ("message", "assistant"),
    ]
    assert [r["entryType"] for r in session_records(result, "entry_appended")] == ["custom", "custom_message"]
    assert [r["turnIndex"] for r in event_records(result, "turn_start")] == [0, 1]
    assert len(session_records(result, "agent_settled")) == 1


def test_a_turn_end_continue_adds_no_turn_while_tool_calls_remain(tmp_path: Path) -> None:
    """agent-loop.js:184-193: a ``continue`` from a turn whose tool calls go on is dropped; the
    loop's own next turn is the only one.

    It kills a loop that owes a turn for every ``continue`` (``explicit_continuation =
    finish_turn(...) or explicit_continuation`` without the clearing: 3 requests). Deleting
    only the clearing (:191-193) is an equivalent change, here as in Pi: the inner loop goes
    on, and the next turn's ``finishTurn`` decision overwrites ``explicitContinuation``."""
    seen: list[Any] = []
    scenario = base(
        model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
        operations=[{"prompt": "one"}],
    )
    result = run(tmp_path, scenario, _turn_end({1: {"continue": True}}, seen))
    assert len(agent_requests(result)) == 2
    assert [r["turnIndex"] for r in event_records(result, "turn_start")] == [0, 1]
    assert session_records(result, "extension_error") == []


def test_a_turn_end_continue_the_context_cannot_follow_is_a_boundary_error(tmp_path: Path) -> None:
    """agent-session.js:574-577: after an assistant reply with nothing queued, a ``continue`` is a
    ``<boundary>`` error and the run stops."""
    seen: list[Any] = []
    scenario = base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _turn_end({1: {"continue": True}}, seen))
    [error] = session_records(result, "extension_error")
    assert (error["extensionPath"], error["event"], error["error"]) == (
        "<boundary>",
        "turn_end",
        "turn_end requested continuation without runnable model context",
    )
    assert len(agent_requests(result)) == 1


def test_an_invalid_turn_end_draft_drops_every_draft_and_the_continue(tmp_path: Path) -> None:
    """runner.js:772-818: a draft the preview refuses is an ``extension_error`` "Invalid boundary
    entries: ..." after each later handler too; nothing is appended and the run stops."""
    seen: list[Any] = []
    bad = {"type": "context_edit", "targetId": "nope", "replacement": None}
    scenario = base(model={"agent": [{"text": "first"}, {"text": "second"}]}, operations=[{"prompt": "one"}])
    result = run(tmp_path, scenario, _turn_end({1: {"entries": [NUDGE, bad], "continue": True}}, seen))
    errors = [r["error"] for r in session_records(result, "extension_error")]
    assert errors == ["Invalid boundary entries: Entry nope not found"] * 2
    assert session_records(result, "entry_appended") == []
    assert len(agent_requests(result)) == 1


def test_a_failed_turns_continue_is_ignored_but_its_drafts_are_appended(tmp_path: Path) -> None:
    """agent-loop.js:146-158: an ``error`` reply ends the run whatever ``finishTurn`` answers; the
    boundary still appends the drafts (agent-session.js:573)."""
    seen: list[Any] = []
    scenario = base(
        model={"agent": [{"error": BAD_REQUEST}, {"text": "never"}]}, operations=[{"prompt": "one"}]
    )
    result = run(tmp_path, scenario, _turn_end({1: {"entries": [NUDGE], "continue": True}}, seen))
    assert seen[0] == (1, 0, "error", [], False)
    assert [r["entryType"] for r in session_records(result, "entry_appended")] == ["custom_message"]
    assert len(agent_requests(result)) == 1
