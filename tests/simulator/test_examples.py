"""The example scenarios under ``examples/`` run (with the probe extension) and show what they say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.simulator.simulation import SimulationResult

from . import probe_extension
from .helpers import (
    EXAMPLE_NAMES,
    EXAMPLES,
    agent_requests,
    event_records,
    labels,
    run_example,
    session_records,
)


def compactions(result: SimulationResult) -> list[tuple[Any, ...]]:
    return [
        (r["reason"], r["aborted"], r.get("errorMessage")) for r in session_records(result, "compaction_end")
    ]


def test_the_expected_examples_exist() -> None:
    assert EXAMPLE_NAMES == [
        "abort-during-synthesis",
        "crash-and-restart",
        "manual-compaction",
        "model-change",
        "overflow-retry",
        "reload",
        "threshold-compaction",
    ]
    for path in EXAMPLES.glob("*.yaml"):
        assert path.read_text(encoding="utf-8").startswith("# "), f"{path.name} starts with a comment"


def test_threshold_compaction(tmp_path: Path) -> None:
    result = run_example("threshold-compaction", tmp_path)
    assert compactions(result) == [("threshold", False, None)]
    assert labels(result).count("agent_settled") == 2 and labels(result).count("agent_start") == 3
    assert session_records(result, "message_end")[-1]["text"] == "continuing after the handoff"


def test_overflow_retry(tmp_path: Path) -> None:
    result = run_example("overflow-retry", tmp_path)
    assert compactions(result) == [("overflow", False, None)]
    assert session_records(result, "compaction_end")[0]["willRetry"] is True
    assert session_records(result, "entry_appended")[0]["entryType"] == "context_edit"
    assert (
        agent_requests(result)[-1].messages[-1]["content"][0]["text"].startswith("The conversation history")
    )
    assert session_records(result, "message_end")[-1]["text"] == "RETRY-ANSWER: migration written."


def test_manual_compaction(tmp_path: Path) -> None:
    result = run_example("manual-compaction", tmp_path)
    assert [(o.name, o.ok, o.error) for o in result.operations] == [
        ("prompt", True, None),
        ("prompt", True, None),
        ("compact", True, None),
        ("compact", False, "Already compacted"),
        ("command", True, None),
    ]
    assert compactions(result) == [
        ("manual", False, None),
        ("manual", False, "Compaction failed: Already compacted"),
    ]
    before = event_records(result, "session_before_compact")[0]
    assert before["customInstructions"] == "Focus on the loader refactoring."
    assert before["preparation"]["settings"]["enabled"] is False
    assert [n.message for n in result.host.ui.notifications] == [
        "probe: compaction manual failed (aborted=False)",
        "probe: confirm=True section=summary args=status",
    ]


def test_reload(tmp_path: Path) -> None:
    result = run_example("reload", tmp_path)
    assert [r["reason"] for r in event_records(result, "session_start")] == ["startup", "reload"]
    [before] = event_records(result, "session_before_compact")
    assert before["preparation"]["settings"]["reserveTokens"] == 10000
    seq = labels(result, "op", "session")
    last_prompt = len(seq) - 1 - seq[::-1].index("op:prompt")
    assert seq[last_prompt + 1] == "session:compaction_start"


def test_model_change(tmp_path: Path) -> None:
    result = run_example("model-change", tmp_path)
    [select] = event_records(result, "model_select")
    assert (select["source"], select["contextWindow"]) == ("set", 20000)
    assert compactions(result) == [("threshold", False, None)]
    texts = [r.get("text", "") for r in session_records(result, "message_end")][-4:]
    assert texts[:2] == ["hello three", "answer three"]
    assert texts[2].startswith(probe_extension.CONTINUATION_MARKER)


def test_abort_during_synthesis(tmp_path: Path) -> None:
    result = run_example("abort-during-synthesis", tmp_path)
    assert compactions(result) == [("threshold", True, None), ("threshold", False, None)]
    assert [r["aborted"] for r in session_records(result, "agent_settled")] == [False, True, False]
    replies = [
        r
        for r in result.host.trace.records
        if r["kind"] == "model" and r["name"] == "reply" and r["caller"] == "extension"
    ]
    assert [r["stopReason"] for r in replies] == ["aborted", "stop"]
    assert [n.notify_type for n in result.host.ui.notifications] == ["error", "warning"]


def test_crash_and_restart(tmp_path: Path) -> None:
    result = run_example("crash-and-restart", tmp_path)
    assert [(o.name, o.ok) for o in result.operations] == [
        ("prompt", True),
        ("prompt", False),
        ("restart", True),
        ("prompt", True),
    ]
    assert [r["reason"] for r in event_records(result, "session_start")] == ["startup", "startup"]
    assert "session_compact" not in [r["name"] for r in result.host.trace.records if r["kind"] == "event"]
    assert len(result.session_files()) == 1
    last = agent_requests(result)[-1]
    assert last.messages[0]["content"][0]["text"].startswith(
        "The conversation history before this point was compacted"
    )
    # The Brief the probe wrote before the crash is on disk.
    assert (Path(result.host.paths.project_dir) / ".pi" / "probe" / "brief-1.md").exists()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples_are_implementation_agnostic(name: str) -> None:
    """No example names an implementation: the one under test is chosen at run time."""
    scenario = load_scenario(EXAMPLES / f"{name}.yaml")
    assert [e.implementation for e in scenario.extensions] == [True]
