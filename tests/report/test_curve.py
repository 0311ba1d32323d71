"""The chart's data: which records become samples, compactions, markers, window and threshold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_continuity_harness.report.curve import Limits, curve_from_observation, curve_from_trace
from pi_continuity_harness.report.data import initial_limits, load_artifacts, read_jsonl
from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.simulator.simulation import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LIMITS = Limits(200_000, 50_000, "test", "test")


def rec(seq: int, kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "t": seq, "kind": kind, "name": name, **fields}


def test_samples_compactions_and_markers_from_trace_records() -> None:
    records = [
        rec(0, "op", "prompt", index=0),
        rec(1, "session", "message_end", role="user", text="hi"),
        rec(2, "session", "message_end", role="assistant", stopReason="stop", totalTokens=150_001),
        rec(3, "session", "compaction_start", reason="threshold"),
        rec(4, "event", "session_before_compact", preparation={"settings": {"reserveTokens": 40_000}}),
        rec(5, "session", "compaction_end", reason="threshold", aborted=False,
            result={"tokensBefore": 150_001, "estimatedTokensAfter": 3_900, "fromExtension": True}),
        rec(6, "op", "set_model", index=1),
        rec(7, "event", "model_select", model="fake/small", previousModel="fake/fake-model", contextWindow=80_000),
        rec(8, "op", "abort", during="synthesis"),
        rec(9, "session", "agent_settled", aborted=True),
        rec(10, "session", "compaction_start", reason="overflow"),
        rec(11, "session", "compaction_end", reason="overflow", aborted=True),
        rec(12, "session", "compaction_start", reason="manual"),
        rec(13, "session", "compaction_end", reason="manual", aborted=False, errorMessage="Compaction failed: x"),
        rec(14, "session", "compaction_start", reason="threshold"),
        rec(15, "host", "crash"),
        rec(16, "host", "start", resume=True),
    ]  # fmt: skip
    curve = curve_from_trace(records, LIMITS)
    assert [s.tokens for s in curve.samples] == [150_001]
    assert [(c.reason, c.outcome) for c in curve.compactions] == [
        ("threshold", "committed"),
        ("overflow", "cancelled"),
        ("manual", "failed"),
        ("threshold", "interrupted"),
    ]
    first = curve.compactions[0]
    assert (first.tokens_before, first.tokens_after, first.from_extension) == (150_001, 3_900, True)
    assert [m.kind for m in curve.markers] == [
        "model-change",
        "abort",
        "crash",
        "restart",
    ]  # one abort, not two
    assert curve.windows[0] == (0, 200_000) and curve.windows[-1][1] == 80_000
    assert curve.thresholds()[0] == (0, 150_000) and curve.thresholds()[-1][1] == 80_000 - 40_000
    assert [label for _, label in curve.ticks] == ["#0 prompt", "#1 set_model"]


def test_a_reply_without_usage_is_no_sample() -> None:
    records = [rec(0, "session", "message_end", role="assistant", stopReason="error", totalTokens=0)]
    assert curve_from_trace(records, LIMITS).samples == []


def test_the_runtime_record_wins_over_what_the_caller_guessed() -> None:
    curve = curve_from_trace([rec(0, "host", "runtime", contextWindow=32_000, reserveTokens=4_000)], LIMITS)
    assert curve.windows == [(0, 32_000)] and curve.thresholds() == [(0, 28_000)]
    assert curve.limits.window_source == curve.limits.reserve_source == "trace (host runtime record)"


def test_the_trace_says_which_window_and_reserve_are_in_force(tmp_path: Path) -> None:
    """The ``host runtime`` record carries the window of the session's model and its
    ``compaction.reserveTokens`` (examples/model-change.yaml: 40,000 and 4,000)."""
    scenario = load_scenario(EXAMPLES / "model-change.yaml")
    result = simulate(scenario, workdir=tmp_path / "run")
    [runtime] = [r for r in result.host.trace.records if r["kind"] == "host" and r["name"] == "runtime"]
    assert (runtime["contextWindow"], runtime["reserveTokens"]) == (40_000, 4_000)
    assert scenario.active.context_window == 40_000
    curve = curve_from_trace(result.host.trace.records, initial_limits(None))
    assert curve.thresholds()[0] == (0, 36_000)
    assert [m.kind for m in curve.markers] == ["model-change"]


def test_the_observation_draws_the_trace_s_curve(small_run: dict[str, Any]) -> None:
    """Real Pi has no trace: its observation.json must give the same samples, compactions and
    model changes as the simulator's trace of the same scenario."""
    checked = 0
    for result in small_run["record"]["assertions"]:
        workdir = Path(result["observed"]["workdir"])
        observation = json.loads((workdir / "observation.json").read_text(encoding="utf-8"))
        limits = initial_limits(workdir, None, load_artifacts(workdir))
        a = curve_from_trace(read_jsonl(workdir / "trace.jsonl"), limits)
        b = curve_from_observation(observation, limits)
        assert [s.tokens for s in a.samples] == [s.tokens for s in b.samples]
        assert [(c.reason, c.outcome, c.tokens_before, c.tokens_after) for c in a.compactions] == [
            (c.reason, c.outcome, c.tokens_before, c.tokens_after) for c in b.compactions
        ]
        assert [m.text for m in a.markers if m.kind == "model-change"] == [
            m.text for m in b.markers if m.kind == "model-change"
        ]
        assert a.thresholds()[-1][1] == b.thresholds()[-1][1]
        checked += bool(a.compactions)
    assert checked >= 2


def test_the_limits_of_a_real_pi_run_come_from_its_models_json(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(
        json.dumps({"providers": {"fake": {"models": [{"id": "a", "contextWindow": 90_000},
                                                       {"id": "b", "contextWindow": 30_000}]}}}),
        encoding="utf-8",
    )  # fmt: skip
    (agent / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 9_000}}), encoding="utf-8"
    )
    limits = initial_limits(tmp_path)
    assert (limits.window, limits.reserve) == (90_000, 9_000)  # no session yet: Pi's first model
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s.jsonl").write_text(
        json.dumps({"type": "model_change", "provider": "fake", "modelId": "b"}) + "\n", encoding="utf-8"
    )
    assert initial_limits(tmp_path).window == 30_000
    assert initial_limits(tmp_path / "nothing-here").window_source.startswith("assumed")
