"""The chart's SVG: the same bytes in any process, an id on every part, run text kept as text."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.report.chart import _nice_ticks, render_chart
from pi_continuity_harness.report.curve import Limits, curve_from_trace

RECORDS: list[dict[str, Any]] = [
    {"seq": 0, "t": 0, "kind": "op", "name": "prompt", "index": 0},
    {"seq": 1, "t": 0, "kind": "session", "name": "message_end", "role": "assistant", "totalTokens": 150_001},
    {"seq": 2, "t": 0, "kind": "session", "name": "compaction_start", "reason": "threshold"},
    {"seq": 3, "t": 0, "kind": "session", "name": "compaction_end", "reason": "threshold", "aborted": False,
     "result": {"tokensBefore": 150_001, "estimatedTokensAfter": 3_000}},
    {"seq": 4, "t": 0, "kind": "event", "name": "model_select", "model": "$x$ <script>alert(1)</script>",
     "previousModel": "fake/a", "contextWindow": 80_000},
    {"seq": 5, "t": 0, "kind": "op", "name": "<img src=x onerror=alert(1)>", "index": 1},
]  # fmt: skip
SCRIPT = (
    "import sys\n"
    "from tests.report.test_chart import RECORDS\n"
    "from pi_continuity_harness.report.chart import render_chart\n"
    "from pi_continuity_harness.report.curve import Limits, curve_from_trace\n"
    "sys.stdout.write(render_chart(curve_from_trace(RECORDS, Limits(200000, 50000)), 's1'))\n"
)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_same_bytes_in_two_processes_with_different_hash_seeds() -> None:
    outs = [
        subprocess.run(
            [sys.executable, "-c", SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    ]
    assert outs[0] == outs[1] and outs[0].startswith("<svg")
    assert "<dc:date>" not in outs[0] and "Matplotlib v" not in outs[0]
    assert outs[0] == render_chart(curve_from_trace(RECORDS, Limits(200_000, 50_000)), "s1")


def test_every_part_has_an_id_and_run_text_stays_text() -> None:
    svg = render_chart(curve_from_trace(RECORDS, Limits(200_000, 50_000)), "s1")
    for part in ("s1-chart", "s1-context", "s1-window", "s1-threshold", "s1-compaction-1-threshold-committed",
                 "s1-model-change-1"):  # fmt: skip
        assert f'id="{part}"' in svg, part
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg  # the operation's name, drawn as a tick label
    assert "width=" not in svg.split(">", 1)[0]  # sized by CSS through its viewBox


def test_the_y_ticks_are_nice_steps_from_zero_below_the_top() -> None:
    assert _nice_ticks(162_001.08) == [0, 50_000, 100_000, 150_000]
    assert _nice_ticks(216_000.0) == [0, 50_000, 100_000, 150_000, 200_000]
    assert _nice_ticks(1.08) == [0, 1]  # whole tokens: no labels that all read 0 or 1
    assert _nice_ticks(5.4) == [0, 2, 4]


@given(st.floats(min_value=1.0, max_value=1e9))
def test_the_y_ticks_take_at_most_five_intervals_of_a_nice_step(top: float) -> None:
    ticks = _nice_ticks(top)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert ticks[0] == 0 and 2 <= len(ticks) <= 6 and ticks[-1] <= top * (1 + 1e-9)
    assert any(math.isclose(mantissa, m) for m in (1, 2, 2.5, 5, 10)), step
    assert ticks[-1] + step > top * (1 - 1e-9)  # no nice tick left out below the top


def test_a_crash_or_restart_breaks_the_curve_and_each_event_is_a_line() -> None:
    records: list[dict[str, Any]] = [
        {"seq": 0, "t": 0, "kind": "op", "name": "prompt", "index": 0},
        {"seq": 1, "t": 0, "kind": "session", "name": "message_end", "role": "assistant", "totalTokens": 40_000},
        {"seq": 2, "t": 0, "kind": "op", "name": "restart", "index": 1},
        {"seq": 3, "t": 0, "kind": "host", "name": "start", "resume": True},
        {"seq": 4, "t": 0, "kind": "op", "name": "prompt", "index": 2},
        {"seq": 5, "t": 0, "kind": "session", "name": "message_end", "role": "assistant", "totalTokens": 60_000},
    ]  # fmt: skip
    curve = curve_from_trace(records, Limits(200_000, 50_000))
    assert curve.breaks and any(m.kind == "restart" for m in curve.markers)
    svg = render_chart(curve, "s9")
    context = re.search(r'<g id="s9-context"><path d="([^"]+)"', svg)
    assert context is not None and context.group(1).count("M") == 2  # two pieces, no line across the gap
    assert re.search(r'<g id="s9-restart-1"><path d="M[\d.]+ [\d.]+V[\d.]+" [^>]*stroke-dasharray=', svg)


def test_drawing_a_chart_imports_no_plotting_library() -> None:
    """The report draws its charts without a plotting library (``report/chart.py``)."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("sys.stdout.write(", "import sys as s; s.stdout.write(str(sorted("
                                              "m for m in s.modules if m.startswith('matplotlib')))); (")],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout  # fmt: skip
    assert out.startswith("[]")
