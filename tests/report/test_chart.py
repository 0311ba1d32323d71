"""The chart's SVG: the same bytes in any process, an id on every part, run text kept as text."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from pi_continuity_harness.report.chart import render_chart
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
