"""Issue 16: a trace's JSON lines are encoded once, and still follow every record emitted."""

from __future__ import annotations

from pi_continuity_harness.scenario.trace import Trace, dumps_record


def test_the_jsonl_text_follows_records_emitted_after_it_was_read() -> None:
    trace = Trace(loop_ms=lambda: 7, workdir="/w")
    trace.emit("host", "start", path="/w/a")
    first = trace.to_jsonl()
    assert first == "".join(dumps_record(r) + "\n" for r in trace.records)
    trace.emit("host", "stop", ok=True)
    second = trace.to_jsonl()
    assert second.startswith(first)
    assert second == "".join(dumps_record(r) + "\n" for r in trace.records)
    assert second.count("\n") == 2 and '"path":"$WORK/a"' in second


def test_a_replaced_record_list_is_encoded_again() -> None:
    trace = Trace(loop_ms=lambda: 0, workdir="/w")
    trace.emit("host", "a")
    trace.emit("host", "b")
    trace.to_jsonl()
    trace.records = trace.records[:1]
    assert trace.to_jsonl() == dumps_record(trace.records[0]) + "\n"
