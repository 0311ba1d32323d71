"""Benchmark of the simulated Pi host: a long session with periodic compaction.

Not a test. Run it from the repository root::

    /work/venv/bin/python bench/bench_simulator.py                 # 1,000 → 10,000 turns
    /work/venv/bin/python bench/bench_simulator.py --turns 2000 --extension none --profile

The session alternates user prompts and tool turns: every prompt is answered by a ``bash``
tool call and then a text reply (two turns). The model reports Pi's own chars/4 estimate
as usage, so the context grows until Pi's threshold (window 20,000, reserve 4,000,
keepRecentTokens 2,000) fires a post-run compaction, about every 60 prompts. With the
probe extension each compaction synthesises a Brief through ``model_registry.complete``,
writes it to disk and sends a followUp continuation (an extra run); with ``none`` Pi's
default summarizer runs.

**Operation** = one trace record: every effect the simulated host produces and records
(an extension event dispatched, a session event as RPC would stream it, a model request
or reply, a session entry appended, a UI call, a filesystem effect). ops/s is trace
records per second of wall time, timed without tracemalloc; peak memory is measured in a
second run under ``tracemalloc`` (which slows Python down, so it is not timed).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from simulator import probe_extension  # noqa: E402  (tests/simulator/probe_extension.py)

from pi_continuity_harness.scenario import parse_scenario  # noqa: E402
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult, simulate  # noqa: E402

FILLER = " The work continues with more detail about the parser, the tests and the build."


def scenario(turns: int) -> dict[str, Any]:
    prompts = max(1, turns // 2)
    agent: list[dict[str, Any]] = []
    for i in range(prompts + prompts // 10 + 10):  # spare replies for continuation runs
        agent.append(
            {
                "text": f"step {i}: checking",
                "tool_calls": [{"name": "bash", "arguments": {"command": f"echo {i}"}, "result": f"{i}\n"}],
            }
        )
        agent.append({"text": f"step {i} done." + FILLER * 4})
    return {
        "name": "bench",
        "seed": 1,
        "models": [{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 2000}}
        },
        "model": {"agent": agent},
        "operations": [{"prompt": {"text": f"prompt {i}:" + FILLER}} for i in range(prompts)],
    }


def implementation(name: str) -> Any:
    if name == "probe":
        return probe_extension.extension

    def none(pi: Any) -> None:
        """No extension: Pi's default summarizer compacts."""

    return none


def run_once(turns: int, extension: str) -> tuple[SimulationResult, float]:
    data = scenario(turns)
    parsed = parse_scenario(data)
    with tempfile.TemporaryDirectory(prefix="pi-bench-") as tmp:
        gc.collect()
        started = time.perf_counter()
        result = simulate(parsed, workdir=Path(tmp) / "run", implementation=implementation(extension))
        elapsed = time.perf_counter() - started
    return result, elapsed


def deciles(turns: int, extension: str, *, collector: bool) -> tuple[float, float]:
    """ops/s over the first and the last tenth of one run's operations.

    Comparing runs of different sizes is sensitive to machine load; within one run, a
    per-turn cost that grows with the session shows as a slower last tenth. With
    ``collector=False`` CPython's cyclic GC is off, isolating the simulator's own work: a
    full collection traverses the whole live heap (the run keeps its trace, entries and
    requests for observation), so one landing in the last tenth weighs on it.
    """
    parsed = parse_scenario(scenario(turns))
    if not collector:
        gc.disable()
    with tempfile.TemporaryDirectory(prefix="pi-bench-") as tmp:
        simulation = Simulation(parsed, workdir=Path(tmp) / "run", implementation=implementation(extension))
        simulation.start()
        marks = [(time.perf_counter(), len(simulation.host.trace.records))]
        for op in parsed.operations:
            simulation.perform(op)
            marks.append((time.perf_counter(), len(simulation.host.trace.records)))
        simulation.finish()
    gc.enable()
    tenth = max(1, len(marks) // 10)

    def rate(a: tuple[float, int], b: tuple[float, int]) -> float:
        return (b[1] - a[1]) / (b[0] - a[0])

    return rate(marks[0], marks[tenth]), rate(marks[-1 - tenth], marks[-1])


def counts(result: SimulationResult) -> dict[str, int]:
    records = result.host.trace.records
    return {
        "records": len(records),
        "turns": sum(1 for r in records if r["kind"] == "session" and r["name"] == "turn_start"),
        "model_calls": sum(1 for r in records if r["kind"] == "model" and r["name"] == "request"),
        "events": sum(1 for r in records if r["kind"] == "event"),
        "compactions": sum(1 for r in records if r["kind"] == "session" and r["name"] == "compaction_end"),
    }


def peak_mib(turns: int, extension: str) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        result, _ = run_once(turns, extension)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak / (1024 * 1024)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, nargs="*", default=[1000, 2000, 5000, 10000])
    parser.add_argument("--extension", choices=["probe", "none"], default="probe")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest run, print the top 25")
    args = parser.parse_args(argv)

    rows = []
    for turns in args.turns:
        result, seconds = run_once(turns, args.extension)
        c = counts(result)
        memory = float("nan") if args.no_memory else peak_mib(turns, args.extension)
        rows.append((turns, c, seconds, memory))
        del result
    _, base_counts, base_seconds, base_memory = rows[0]
    print(f"extension: {args.extension}   operation = one trace record")
    header = (
        f"{'turns':>7} {'actual':>7} {'compact':>7} {'model':>7} {'events':>8} {'ops':>9} "
        f"{'seconds':>8} {'ops/s':>9} {'peak MiB':>9} {'time x':>7} {'mem x':>7} {'per-turn x':>10}"
    )
    print(header)
    print("-" * len(header))
    for turns, c, seconds, memory in rows:
        scale = c["turns"] / base_counts["turns"]
        time_ratio = seconds / base_seconds
        print(
            f"{turns:>7} {c['turns']:>7} {c['compactions']:>7} {c['model_calls']:>7} {c['events']:>8} "
            f"{c['records']:>9} {seconds:>8.2f} {c['records'] / seconds:>9.0f} {memory:>9.1f} "
            f"{time_ratio:>7.2f} {memory / base_memory:>7.2f} {time_ratio / scale:>10.2f}"
        )
    print(
        "time x / mem x: ratio to the first row; per-turn x: time ratio divided by the turn ratio (1.0 = linear)"
    )
    for collector in (True, False):
        first, last = deciles(max(args.turns), args.extension, collector=collector)
        print(
            f"within the {max(args.turns)}-turn run (cyclic GC {'on' if collector else 'off'}): "
            f"first tenth {first:.0f} ops/s, last tenth {last:.0f} ops/s (last/first {last / first:.2f})"
        )

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run_once(max(args.turns), args.extension)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
