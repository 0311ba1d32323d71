"""``render_timeline``: one readable line per trace record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario.timeline import render_record, render_timeline
from pi_continuity_harness.simulator.simulation import read_exchanges

from .helpers import base, long_text, run


def test_one_line_per_record_with_time_kind_name_and_fields() -> None:
    records = [
        {
            "seq": 0,
            "t": 12,
            "kind": "event",
            "name": "session_before_compact",
            "reason": "threshold",
            "willRetry": False,
        },
        {
            "seq": 1,
            "t": 12,
            "kind": "op",
            "name": "prompt",
            "phase": "end",
            "ok": True,
            "disposition": "started",
        },
        {"seq": 2, "t": 1500, "kind": "session", "name": "agent_start"},
        {
            "seq": 3,
            "t": 1500,
            "kind": "ui",
            "name": "notify",
            "message": "two words\nand a line",
            "notifyType": "info",
        },
    ]
    assert render_timeline(records).splitlines() == [
        "t=12ms     event    session_before_compact reason=threshold willRetry=false",
        "t=12ms     op       prompt end ok=true disposition=started",
        "t=1500ms   session  agent_start",
        't=1500ms   ui       notify message="two words\\\\nand a line" notifyType=info',
    ]
    assert render_timeline([]) == ""


def test_long_values_are_shortened() -> None:
    line = render_record(
        {"t": 0, "kind": "model", "name": "request", "lastUser": "x" * 500, "tools": ["a"] * 50}
    )
    assert len(line) < 250 and "…" in line


def test_a_whole_trace_renders_deterministically(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={"agent": [{"text": long_text("a1")}, {"text": long_text("a2"), "context_tokens": 17010}]},
    )
    first = run(tmp_path, scenario, sub="a")
    second = run(tmp_path, scenario, sub="b")
    text = render_timeline(first.host.trace.records)
    assert text == render_timeline(second.host.trace.records)
    assert len(text.splitlines()) == len(first.host.trace.records)
    assert any(line.split()[1:3] == ["session", "compaction_start"] for line in text.splitlines())


def test_every_model_call_is_kept_in_full_and_the_timeline_shows_it(tmp_path: Path) -> None:
    """Issue 12 item 7: the trace keeps 80 characters of the last user message; ``requests/``
    keeps the whole request and reply of every call, and the timeline can show them."""
    prompt = "describe the schema " + long_text("p")
    result = run(
        tmp_path,
        base(model={"agent": [{"text": "first answer " + long_text("a")}]}, operations=[{"prompt": prompt}]),
    )
    [record] = [r for r in result.host.trace.records if r["kind"] == "model" and r["name"] == "request"]
    assert record["file"] == "requests/agent-0000.json" and len(record["lastUser"]) == 80
    exchanges = read_exchanges(result.workdir)
    exchange = exchanges[("agent", 0)]
    assert json.loads((result.workdir / record["file"]).read_text()) == exchange
    [request] = result.host.service.requests
    assert exchange["request"] == request.to_json()
    assert exchange["request"]["messages"][-1]["content"][0]["text"] == prompt
    assert exchange["reply"]["content"][0]["text"].startswith("first answer ")
    assert exchange["reply"]["stopReason"] == "stop"
    timeline = render_timeline(result.host.trace.records, exchanges)
    assert f"| [user] {prompt.splitlines()[0]}" in timeline  # the whole prompt, not 80 characters
    assert "| system: You are a coding assistant" in timeline
    assert "| [assistant stopReason stop, totalTokens " in timeline
    assert not [line for line in timeline.splitlines() if line.endswith(" ")]  # diffs cleanly
    assert render_timeline(result.host.trace.records) == "".join(
        render_record(r) + "\n" for r in result.host.trace.records
    )


def test_simulate_requests_prints_the_full_texts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "overflow-retry.yaml"
    assert main(["simulate", str(example), "--workdir", str(tmp_path / "run"), "--requests"]) == 0
    out = capsys.readouterr().out
    assert "file=requests/agent-0000.json" in out and "| system: You are a coding assistant" in out
    assert sorted(p.name for p in (tmp_path / "run" / "requests").iterdir())[0] == "agent-0000.json"
