"""``pi-continuity-harness simulate SCENARIO``: run one scenario on the simulated Pi host.

The run goes into ``--workdir`` (default ``sim-out/<scenario>-<seed>``, emptied first when
it is a previous run's directory), the trace into ``<workdir>/trace.jsonl`` (and a copy at
``--trace``), and the full text of every model request and reply into
``<workdir>/requests/<kind>-<index>.json``. It prints a short summary, with ``--timeline``
the whole trace as a readable timeline, and with ``--requests`` the timeline with every
request and reply in full. A malformed scenario exits with status 2 and ``file: field: reason``;
so, before the run, does an output (``--trace``, ``--html``) at the scenario, at the other
output, or at a file the run writes in its directory (``trace.jsonl``, ``requests/``, the
machine), and a scenario inside the run directory, which the run empties first.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._budget import add_budget_arguments, with_budget
from pi_continuity_harness.commands._paths import check_file
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.commands._simulation import (
    DEFAULT_IMPLEMENTATION,
    check_paths,
    default_workdir,
    load,
    prepared,
    run,
    summary,
)
from pi_continuity_harness.scenario.option_values import seed
from pi_continuity_harness.scenario.timeline import render_timeline
from pi_continuity_harness.simulator.simulation import read_exchanges

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help=SUMMARIES["simulate"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario file (YAML or JSON)")
    parser.add_argument("--seed", type=seed, default=None, help="seed (default: the scenario's)")
    parser.add_argument("--trace", metavar="PATH", default=None, help="also copy trace.jsonl here")
    parser.add_argument(
        "--workdir", metavar="DIR", default=None, help="run directory (default sim-out/<name>-<seed>)"
    )
    parser.add_argument(
        "--extension",
        metavar="SPEC",
        default=DEFAULT_IMPLEMENTATION,
        help=f"implementation under test: a registered name or module:factory (default {DEFAULT_IMPLEMENTATION})",
    )
    parser.add_argument("--timeline", action="store_true", help="print the trace as a timeline")
    add_html_option(parser, "the run (context chart, artifacts, notifications, timeline)")
    parser.add_argument(
        "--requests",
        action="store_true",
        help="print the timeline with every model request and reply in full (implies --timeline)",
    )
    add_budget_arguments(parser, wall=False)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    check_html(args.html)
    scenario = with_budget(load(args.scenario), args)
    workdir = Path(args.workdir) if args.workdir else default_workdir("", scenario, args.seed)
    trace = Path(args.trace) if args.trace else None
    check_file("--trace", trace)
    check_paths(
        workdir,
        outputs={"--trace": trace, "--html": args.html},
        inputs=[("the scenario", Path(args.scenario))],
    )
    with prepared(scenario, args.scenario, workdir, args.extension):
        result = run(
            scenario, source=args.scenario, workdir=workdir, seed=args.seed, extension=args.extension
        )
        if args.trace:
            target = Path(args.trace)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(result.trace_path, target)
            except OSError as error:
                raise UsageError(f"--trace {args.trace}: {error.strerror or error}") from None
        print(summary(result), end="")
        print(f"trace    {result.trace_path}" + (f" (copied to {args.trace})" if args.trace else ""))
        if args.timeline or args.requests:
            print()
            exchanges = read_exchanges(result.workdir) if args.requests else None
            print(render_timeline(result.host.trace.records, exchanges), end="")
        if args.html is not None:
            from pi_continuity_harness.report import render_simulate  # noqa: PLC0415  (the report extra)

            operations = [
                {"name": o.name, "ok": o.ok, "error": o.error, "disposition": o.disposition}
                for o in result.operations
            ]
            write_html_report(
                args.html,
                lambda: render_simulate(
                    Path(args.scenario),
                    result.workdir,
                    implementation=result.implementation,
                    operations=operations,
                ),
            )
    if result.over_budget:
        print(f"BUDGET EXCEEDED: {result.over_budget}", end="", file=sys.stderr)
        return 1
    return 0
