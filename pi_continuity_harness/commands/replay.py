"""``pi-continuity-harness replay SCENARIO``: re-run a scenario and check it replays exactly.

A run is a function of the scenario, the seed and the implementation, so replaying is
running again. With ``--expect-trace`` the new trace is compared byte for byte with a
recorded one (for example a CI artifact); the first differing record is reported and the
exit status is 1. Without ``--seed`` the run takes the seed the recorded trace names in its first record
(``host:scenario``), and without ``--extension`` its implementation when that is an installed
one or the harness's own (a mutant); another ``module:factory`` is only named, not imported
on a trace's word.
The timeline of the new run is printed (``--quiet``: the verdict only).
Only scenario files are accepted: a trace names its scenario but does not contain it. The
scenario and the recorded trace must not be inside the run directory, which the run empties
first (exit status 2 before the run).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._budget import add_budget_arguments, with_budget
from pi_continuity_harness.commands._simulation import (
    DEFAULT_IMPLEMENTATION,
    check_paths,
    default_workdir,
    first_difference,
    load,
    prepared,
    run,
)
from pi_continuity_harness.scenario.document import ScenarioError, read_text_file
from pi_continuity_harness.scenario.implementations import ENTRY_POINT_GROUP, entry_points_of
from pi_continuity_harness.scenario.option_values import seed
from pi_continuity_harness.scenario.timeline import render_timeline
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.simulator.simulation import read_exchanges

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help=SUMMARIES["replay"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario file (YAML or JSON), not a trace")
    parser.add_argument(
        "--seed", type=seed, default=None, help="seed (default: the recorded trace's, else the scenario's)"
    )
    parser.add_argument(
        "--expect-trace", metavar="TRACE", default=None, help="trace.jsonl the run must reproduce"
    )
    parser.add_argument(
        "--workdir", metavar="DIR", default=None, help="run directory (default sim-out/replay-<name>-<seed>)"
    )
    parser.add_argument(
        "--extension",
        metavar="SPEC",
        default=None,
        help=f"implementation under test (default: the recorded trace's, else {DEFAULT_IMPLEMENTATION})",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the verdict, not the timeline")
    parser.add_argument(
        "--requests", action="store_true", help="the timeline with every model request and reply in full"
    )
    add_budget_arguments(parser, wall=False)
    parser.set_defaults(func=main)


#: The largest ``--expect-trace`` read: 256 MiB. A trace record is a line of fields (requests and
#: replies go to their own files, the trace keeps 80 characters of a prompt), so even a run that
#: spends the default budget of 50,000 host operations writes far less; a bigger file is no
#: trace of a run, and reading it whole would only use memory.
MAX_TRACE_BYTES = 256 * 1024 * 1024


def _not_a_trace(text: str) -> str | None:
    """Why ``text`` is not a ``trace.jsonl`` (``"line N: ..."``), or None: every line is a JSON
    object with the ``kind`` and ``name`` every trace record has, and there is at least one.
    Before, another file (a session file, a scenario) ran the replay and reported ``DIFFERS``
    (exit 1), as if the run had changed (issue 16's eighth pass)."""
    lines = jsonl_lines(text)  # a record may hold a raw U+2028, which splitlines would cut
    if not any(line.strip() for line in lines):
        return "is empty: a trace starts with its host:scenario record"
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            return f"line {number}: not JSON ({error}): is it the run's trace.jsonl?"
        except RecursionError:
            return f"line {number}: not JSON (nested too deeply to read): is it the run's trace.jsonl?"
        if not isinstance(record, dict) or not {"kind", "name"} <= set(record):
            return f"line {number}: not a trace record (a JSON object with kind and name): is it the run's trace.jsonl?"
    return None


def _recorded_run(text: str) -> tuple[int | None, str | None]:
    """The seed and the implementation a trace's first record names (``host:scenario``, written
    by every run before anything else), each None when absent.

    Why: the seed is the other half of a run, and a replay of a CI artifact without it ran the
    scenario's own seed and reported ``DIFFERS`` at record 0 (``$.seed: expected 7, actual
    11``); the implementation likewise (a mutant's failure replayed against the reference)."""
    first = next((line for line in jsonl_lines(text) if line.strip()), "")
    record = json.loads(first)  # checked by _not_a_trace
    if record.get("kind") != "host" or record.get("name") != "scenario":
        return None, None
    seed = record.get("seed")
    implementation = record.get("implementation")
    return (
        seed if type(seed) is int and seed >= 0 else None,
        implementation if isinstance(implementation, str) and implementation else None,
    )


def _harness_implementation(spec: str) -> bool:
    """Whether ``spec`` names an installed implementation (an entry point: the references, the
    null implementations, an installed package's) or one of the harness's own modules (a
    mutant): code already on this machine by choice, which a trace may pick. Any other
    ``module:factory`` a trace names would be imported and run on the trace's word."""
    return spec in entry_points_of(ENTRY_POINT_GROUP) or spec.startswith("pi_continuity_harness.")


def _take_recorded_run(args: argparse.Namespace, expected: str, scenario_seed: int) -> None:
    """``--seed`` and ``--extension``, where not given, from the recorded trace; a line says
    which, when that differs from the run without them (the scenario's seed, the reference)."""
    recorded_seed, recorded_implementation = _recorded_run(expected)
    taken = []
    if args.seed is None and recorded_seed is not None:
        args.seed = recorded_seed
        if recorded_seed != scenario_seed:
            taken.append(f"seed {recorded_seed}")
    if args.extension is None and recorded_implementation is not None:
        if _harness_implementation(recorded_implementation):
            args.extension = recorded_implementation
            if recorded_implementation != DEFAULT_IMPLEMENTATION:
                taken.append(f"implementation {recorded_implementation}")
        else:
            # A trace is data, perhaps downloaded: the code it names is run only when asked for.
            print(
                f"{args.expect_trace} was recorded with the implementation {recorded_implementation}: "
                f"give --extension {shlex.quote(recorded_implementation)} to replay it with that one"
            )
    if taken:
        print(f"replaying with the {' and the '.join(taken)} that {args.expect_trace} records")


def main(args: argparse.Namespace) -> int:
    if args.scenario.endswith(".jsonl"):
        raise UsageError(
            f"{args.scenario}: replay takes the scenario file; pass the trace with --expect-trace"
        )
    expected: str | None = None
    if args.expect_trace is not None:
        try:  # bounded, and never blocked by a FIFO or read forever from a device
            expected = read_text_file(args.expect_trace, "trace", limit=MAX_TRACE_BYTES)
        except ScenarioError as error:
            raise UsageError(f"--expect-trace {error}") from None
        problem = _not_a_trace(expected)
        if problem is not None:
            raise UsageError(f"--expect-trace {args.expect_trace}: {problem}")
    scenario = with_budget(load(args.scenario), args)
    if expected is not None:
        _take_recorded_run(args, expected, scenario.seed)
    if args.extension is None:
        args.extension = DEFAULT_IMPLEMENTATION
    workdir = Path(args.workdir) if args.workdir else default_workdir("replay-", scenario, args.seed)
    expect_trace = Path(args.expect_trace) if args.expect_trace is not None else None
    check_paths(
        workdir, outputs={}, inputs=[("the scenario", Path(args.scenario)), ("--expect-trace", expect_trace)]
    )
    with prepared(scenario, args.scenario, workdir, args.extension):
        result = run(
            scenario, source=args.scenario, workdir=workdir, seed=args.seed, extension=args.extension
        )
        if not args.quiet:
            exchanges = read_exchanges(result.workdir) if args.requests else None
            print(render_timeline(result.host.trace.records, exchanges), end="")
        actual = result.trace_path.read_text(encoding="utf-8")
    # A run stopped by its budget still replays (it stops at the same record), but it failed.
    failed = 0
    if result.over_budget:
        print(f"BUDGET EXCEEDED: {result.over_budget}", end="", file=sys.stderr)
        failed = 1
    if expected is None:
        print(f"replayed {scenario.name} (seed {result.seed}): {len(result.host.trace.records)} records")
        return failed
    difference = first_difference(expected, actual)
    if difference is None:
        print(f"replay matches {args.expect_trace}: {len(result.host.trace.records)} records, byte-identical")
        return failed
    print(f"replay DIFFERS from {args.expect_trace}: {difference}")
    return 1
