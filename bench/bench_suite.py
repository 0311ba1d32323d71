"""Benchmark: wall time of the conformance suite per target, and per scenario.

Not a test: it reports figures (this machine is shared and noisy, so compare ratios taken
in one run). Usage::

    python bench/bench_suite.py                 # simulator only
    python bench/bench_suite.py --targets sim,pi --extension reference

Prints, per target, the whole suite's wall time and the median, p90 and max time of one
scenario; with both targets, the median of the per-scenario ratios real/simulated.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pi_continuity_harness.features.suite import run_suite


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--targets", default="sim", help="comma-separated: sim, pi")
    parser.add_argument("--extension", default="reference")
    parser.add_argument("--tags", default=None)
    args = parser.parse_args()
    per_target: dict[str, dict[str, float]] = {}
    for target in [t.strip() for t in args.targets.split(",") if t.strip()]:
        with tempfile.TemporaryDirectory(prefix=f"bench-{target}-") as workdir:
            # The simulator as `pi-continuity-harness run` drives it (its own temporary directory,
            # records of failed scenarios only), as bench_speed.py does; real Pi into this one.
            where = None if target == "sim" else Path(workdir)
            started = time.perf_counter()
            run = run_suite(target=target, extension=args.extension, tags=args.tags, workdir=where)
            wall = time.perf_counter() - started
        durations = {f"{r.assertion} :: {r.name}": r.duration_s for r in run.results if r.status == "passed"}
        per_target[target] = durations
        values = list(durations.values())
        counts = run.counts()
        print(
            f"{target}: {len(run.results)} scenarios ({counts['passed']} passed, {counts['failed']} failed, "
            f"{counts['skipped']} skipped) in {wall:.2f} s wall; per scenario median "
            f"{statistics.median(values) * 1000:.1f} ms, p90 {_quantile(values, 0.9) * 1000:.1f} ms, "
            f"max {max(values) * 1000:.1f} ms"
        )
    if "sim" in per_target and "pi" in per_target:
        common = sorted(set(per_target["sim"]) & set(per_target["pi"]))
        ratios = [
            per_target["pi"][name] / per_target["sim"][name] for name in common if per_target["sim"][name] > 0
        ]
        print(
            f"real/simulated per-scenario time ratio over {len(ratios)} scenarios: median "
            f"{statistics.median(ratios):.0f}x, min {min(ratios):.0f}x, max {max(ratios):.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
