"""``render_timeline``: one readable line per trace record."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.scenario.timeline import render_record, render_timeline

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
