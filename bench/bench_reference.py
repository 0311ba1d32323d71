"""Benchmark: the reference's ``session_before_compact`` for a ~100 KB Brief on the simulator.

Measures wall time (``time.perf_counter``; the simulator virtualises ``time.time`` but not
``perf_counter``) from the moment Pi dispatches ``session_before_compact`` to the moment the
handler returns its result, broken into the pipeline's phases through the reference's
optional timing hook (:func:`pi_continuity_harness.reference.psc.lifecycle.set_timing_observer`):

* ``synthesis``: the scripted ``complete()`` call (a ``raw`` reply of ~100 KB valid Brief body);
* ``validation``: heading/authority checks, freshness-rule insertion, frontmatter, serialization,
  and the pre-write validation of the whole text;
* ``write``: the atomic write (temp file, fsync, rename, directory fsync) and its fsync count;
* ``reread``: the exact re-read and its validation;
* ``hash``: SHA-256 of the re-read bytes.

Each sample is one full simulation (two ordinary turns, then a threshold crossing), so the
first write of a session also creates the session's artifact directories (one extra fsync
per directory created). Run: ``python bench/bench_reference.py [--runs N] [--kib K]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.reference.psc import extension as reference_extension
from pi_continuity_harness.reference.psc.constants import MANDATORY_HEADINGS
from pi_continuity_harness.reference.psc.lifecycle import set_timing_observer
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator import simulate

PHASES = ("synthesis", "validation", "write", "reread", "hash")


def big_body(target_bytes: int) -> str:
    """A valid Continuity Brief body of about ``target_bytes`` UTF-8 bytes."""
    filled = [h for h in MANDATORY_HEADINGS if h not in ("# Continuity Brief", "## Current State")]
    per_section = max(1, target_bytes // len(filled))
    line = "- Observed state of the work: module parser.py, test test_parser.py, step finished; "
    parts: list[str] = []
    for heading in MANDATORY_HEADINGS:
        parts.append(heading)
        parts.append("")
        if heading in filled:
            body = []
            size = 0
            n = 0
            while size < per_section:
                text = f"{line}item {n}."
                body.append(text)
                size += len(text) + 1
                n += 1
            parts.extend(body)
            parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def filler(label: str, chars: int = 4_000) -> str:
    return (f"{label}: " + "work " * (chars // 5 + 1))[:chars]


def timed_factory(samples: list[float]) -> Any:
    """The reference factory, with its ``session_before_compact`` handler timed end to end."""

    def factory(pi: ExtensionAPI) -> None:
        original_on = pi.on

        def on(event: str, handler: Any) -> Any:
            if event != "session_before_compact":
                return original_on(event, handler)

            async def timed(ev: Any, ctx: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await handler(ev, ctx)
                finally:
                    samples.append(time.perf_counter() - started)

            return original_on(event, timed)

        pi.on = on  # type: ignore[method-assign]
        reference_extension(pi)

    return factory


def one_run(
    workdir: Path, body: str, hook_samples: list[float], phases: dict[str, list[float]], fsyncs: list[int]
) -> None:
    agent = [
        {"text": filler("reply 1"), "context_tokens": 5_000},
        {"text": filler("reply 2"), "context_tokens": 10_000},
        {"text": filler("reply 3"), "context_tokens": 150_001},
    ]
    data = {
        "name": "bench",
        "models": [{"id": "fake/fake-model", "context_window": 200_000}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 50_000, "keepRecentTokens": 2_000}}
        },
        "model": {"agent": agent, "extension": [{"kind": "raw", "text": body}]},
        "operations": [{"prompt": filler(f"task {n}")} for n in (1, 2, 3)],
    }

    def observe(phase: str, seconds: float, info: Any) -> None:
        phases[phase].append(seconds)
        if phase == "write":
            fsyncs.append(int(info["fsyncs"]))

    previous = set_timing_observer(observe)
    try:
        result = simulate(parse_scenario(data), workdir=workdir, implementation=timed_factory(hook_samples))
    finally:
        set_timing_observer(previous)
    compactions = [r for r in result.host.trace.records if r["kind"] == "entry" and r["name"] == "compaction"]
    if len(compactions) != 1:
        raise SystemExit("the benchmark run did not commit exactly one compaction")


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    median = statistics.median(values)
    return f"median {median * 1000:8.3f} ms   p95 {p95 * 1000:8.3f} ms   min {ordered[0] * 1000:8.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--kib", type=int, default=100)
    args = parser.parse_args()
    body = big_body(args.kib * 1024)
    hook: list[float] = []
    phases: dict[str, list[float]] = defaultdict(list)
    fsyncs: list[int] = []
    with tempfile.TemporaryDirectory(prefix="psc-bench-") as tmp:
        for n in range(args.runs + 1):
            samples_hook: list[float] = []
            samples_phases: dict[str, list[float]] = defaultdict(list)
            samples_fsyncs: list[int] = []
            one_run(Path(tmp) / f"run{n}", body, samples_hook, samples_phases, samples_fsyncs)
            if n == 0:
                continue  # warm-up (imports, caches)
            hook.extend(samples_hook)
            for phase, values in samples_phases.items():
                phases[phase].extend(values)
            fsyncs.extend(samples_fsyncs)
    print(f"Brief body: {len(body.encode('utf-8')):,} bytes; runs: {args.runs}")
    print(f"{'session_before_compact':24} {ms(hook)}")
    for phase in PHASES:
        print(f"  {phase:22} {ms(phases[phase])}")
    accounted = sum(statistics.median(phases[p]) for p in PHASES)
    print(f"  {'(other: prompt, notify)':22} median {(statistics.median(hook) - accounted) * 1000:8.3f} ms")
    print(f"write-path fsyncs per Brief: {sorted(set(fsyncs))} (file + directory, + 1 per directory created)")


if __name__ == "__main__":
    main()
