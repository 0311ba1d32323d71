"""Benchmark: size and render time of the HTML report of the whole suite.

Not a test: it reports figures (this machine is shared and noisy: CPU time is the steadier
number). Runs the suite once per implementation on the simulator (default: both systems'
references), then renders its page with every timeline, failing ones only, and none::

    python bench/bench_report.py                          # reference and blitz on the simulator
    python bench/bench_report.py --extensions reference --out /tmp/pages

Prints per implementation and mode the page's bytes, wall and CPU seconds, and how many charts
it drew in how much CPU time.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.report import chart, run_page, views, write_html


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--extensions", default="reference,blitz", help="comma-separated implementations")
    parser.add_argument("--out", type=Path, default=None, help="keep the pages in this directory")
    args = parser.parse_args()

    spent = {"n": 0, "cpu": 0.0}
    original = chart.render_chart

    def timed(*a: Any, **k: Any) -> str:
        started = time.process_time()
        try:
            return original(*a, **k)
        finally:
            spent["n"] += 1
            spent["cpu"] += time.process_time() - started

    views.render_chart = timed  # type: ignore[assignment]
    started = time.process_time()
    chart.render_chart(chart_warmup(), "warmup")  # the first chart (imports)
    print(f"first chart (imports and font cache): {time.process_time() - started:.2f} s CPU")
    for extension in [e.strip() for e in args.extensions.split(",") if e.strip()]:
        with tempfile.TemporaryDirectory(prefix="bench-report-") as workdir:
            run = run_suite(target="sim", extension=extension, workdir=Path(workdir))
            record = run.record()
            for mode in ("all", "failed", "none"):
                spent.update(n=0, cpu=0.0)
                wall, cpu = time.perf_counter(), time.process_time()
                html = run_page.render_run(record, timelines=mode)  # type: ignore[arg-type]
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if args.out is not None:
                    write_html(args.out / f"{extension}-{mode}.html", html)
                print(
                    f"{extension}: {len(record['assertions'])} scenarios, timelines={mode}: "
                    f"{len(html.encode('utf-8')):,} bytes in {wall:.2f} s wall, {cpu:.2f} s CPU; "
                    f"{spent['n']} charts in {spent['cpu']:.2f} s CPU"
                )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


def chart_warmup() -> Any:
    from pi_continuity_harness.report.curve import Curve, Sample  # noqa: PLC0415

    return Curve(samples=[Sample(1, 1000)], windows=[(0, 2000)], last_x=1)


if __name__ == "__main__":
    raise SystemExit(main())
