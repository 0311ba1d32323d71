"""``pi-continuity-harness mutants``: prove the suite and the explorer by killing mutants.

Runs the conformance suite (simulator) and the explorer against every mutant of the references
in :mod:`pi_continuity_harness.mutants.catalogue`, each in its own processes, plus each
reference the mutants change as a control, and prints the kill matrix: mutant × named
assertion, and an ``explore`` column. ``mutants list`` prints the catalogue. Exit status 0 only
when every mutant is killed by the features *and* by exploration, and every control survives
both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._budget import add_budget_arguments, budget_override
from pi_continuity_harness.commands._console import terminal_console
from pi_continuity_harness.commands._listing import refuse_ignored_options, remember_run_options
from pi_continuity_harness.commands._paths import check_file
from pi_continuity_harness.commands.explore import check_count, check_scheduler
from pi_continuity_harness.explore.engine import MAX_JOBS, MAX_SEEDS, MAX_STEPS
from pi_continuity_harness.explore.executor import SchedulerError, open_pool
from pi_continuity_harness.features.suite import write_atomically
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.matrix import MutantOutcome, run_matrix

__all__ = ["register", "render_matrix"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mutants",
        help=SUMMARIES["mutants"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "action", nargs="?", choices=("run", "list"), default="run", help="run (default) or list"
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the kill matrix as JSON here")
    parser.add_argument(
        "--jobs", type=int, default=2, help=f"mutants run at the same time (default 2, at most {MAX_JOBS})"
    )
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the mutants on this Dask scheduler's workers instead of --jobs local processes",
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these mutants")
    parser.add_argument(
        "--sample",
        type=int,
        metavar="K",
        help="every K-th mutant in name order, plus the canary: a fixed, repeatable subset for a "
        "time-boxed gate (CI); the whole matrix is the release job",
    )
    parser.add_argument(
        "--explore-seeds",
        type=int,
        default=60,
        help=f"explorer seeds per mutant (default 60, at most {MAX_SEEDS:,}; 0: skip)",
    )
    parser.add_argument(
        "--explore-steps",
        type=int,
        default=40,
        help=f"explorer steps per seed (default 40, at most {MAX_STEPS:,})",
    )
    parser.add_argument("--no-control", action="store_true", help="do not run the references as controls")
    add_budget_arguments(parser)
    remember_run_options(parser, keep=set())
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    console = terminal_console(160)  # the tables' width when not on a terminal
    if args.action == "list":
        refuse_ignored_options(args, "'mutants list'")
        table = Table(title=f"{len(MUTANTS)} mutants of the reference", show_lines=False)
        table.add_column("mutant", no_wrap=True)
        table.add_column("rule it breaks")
        table.add_column("how")
        for mutant in MUTANTS.values():
            table.add_row(mutant.name + (" (canary)" if mutant.canary else ""), mutant.rule, mutant.how)
        console.print(table)
        return 0
    names = list(MUTANTS)
    if args.only:
        unknown = [n for n in args.only if n not in MUTANTS]
        if unknown:
            raise UsageError(f"--only: unknown mutant(s) {', '.join(unknown)} (see 'mutants list')")
        names = [n for n in names if n in args.only]
    if args.sample is not None:
        if args.sample < 1:
            raise UsageError(f"--sample must be at least 1 (got {args.sample})")
        chosen = set(sorted(names)[:: args.sample]) | {n for n in names if MUTANTS[n].canary}
        names = [n for n in names if n in chosen]
    check_count("--jobs", args.jobs, most=MAX_JOBS)
    check_scheduler(args.scheduler)
    check_file("--json", args.json_path)
    # The bounds of explore's --seeds and --steps (each mutant's exploration runs explore with
    # them): before, a value beyond them failed in every mutant's explorer, after its suite.
    check_count("--explore-seeds", args.explore_seeds, least=0, most=MAX_SEEDS)
    check_count("--explore-steps", args.explore_steps, most=MAX_STEPS)

    def progress(outcome: MutantOutcome) -> None:
        verdict = "ok" if outcome.ok else "[bold red]NOT OK[/]"
        explored = outcome.exploration
        console.print(
            f"{outcome.name:<40} {verdict:<6} features: {len(outcome.killed_by):>3} scenario(s)"
            f" / {len(outcome.killed_by_assertions)} assertion(s); explore: "
            + (
                f"{explored['invariant']} (seed {explored['seed']})"
                if explored
                else ("survived" if outcome.explorable else "n/a (the explorer cannot reach its rule)")
            )
            + (f"  suite error: {outcome.suite_error}" if outcome.suite_error else "")
            + (f"  explore error: {outcome.exploration_error}" if outcome.exploration_error else "")
            + f"  ({outcome.seconds:.1f}s)"
        )

    try:
        with open_pool(jobs=args.jobs, scheduler=args.scheduler) as pool:
            console.print(f"running on {pool.where}")
            outcomes = run_matrix(
                names,
                jobs=args.jobs,
                explore_seeds=args.explore_seeds,
                explore_steps=args.explore_steps,
                control=not args.no_control,
                on_outcome=progress,
                pool=pool,
                budget=budget_override(args),
            )
            retried = pool.retried()
    except SchedulerError as error:
        raise UsageError(str(error)) from None
    if retried:
        console.print(f"run again after their worker was lost: {', '.join(retried)}")
    for renderable in render_matrix(outcomes):
        console.print(renderable)
    mutants = [o for o in outcomes if not o.control]
    survivors = [o.name for o in mutants if not o.killed]
    explorable = [o for o in mutants if o.explorable]
    explore_survivors = (
        [o.name for o in explorable if not o.killed_by_exploration] if args.explore_seeds else []
    )
    controls = [o for o in outcomes if o.control]
    if args.json_path is not None:
        payload = {
            "mutants": [o.to_json() for o in mutants],
            "controls": [o.to_json() for o in controls],
            "exploreSeeds": args.explore_seeds,
            "exploreSteps": args.explore_steps,
            "retried": retried,
        }
        write_atomically(args.json_path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        console.print(f"kill matrix written to {args.json_path}")
    killed = len(mutants) - len(survivors)
    console.print(
        f"{killed}/{len(mutants)} mutants killed by the features; "
        + (
            f"{len(explorable) - len(explore_survivors)}/{len(explorable)} explorable by exploration "
            f"({args.explore_seeds} seeds; {len(mutants) - len(explorable)} judged by the features alone)"
            if args.explore_seeds
            else "exploration skipped"
        )
    )
    problems = []
    if survivors:
        problems.append(f"survived the features: {', '.join(survivors)}")
    if explore_survivors:
        problems.append(f"survived exploration: {', '.join(explore_survivors)}")
    for control in controls:
        if not control.ok:
            problems.append(
                f"the control {control.name} did not pass: "
                + ", ".join(control.killed_by[:5] or [str(control.exploration or control.suite_error)])
            )
    errors = [o.name for o in outcomes if o.suite_error or o.exploration_error]
    if errors:
        problems.append(f"could not run: {', '.join(errors)}")
    if not args.explore_seeds:
        problems.append("exploration was skipped (--explore-seeds 0): the explore column proves nothing")
    for problem in problems:
        console.print(f"[bold red]{problem}[/]")
    return 1 if problems else 0


def render_matrix(outcomes: list[MutantOutcome]) -> list[Any]:
    """The kill matrix (mutant × named assertion, plus explore) and the assertion legend.

    One character per assertion (``●`` killed by a scenario of it, ``·`` not), numbered by
    two header lines of digits, so the whole matrix fits a terminal and a CI log.
    """
    assertions: list[str] = []
    for outcome in outcomes:
        for name in outcome.killed_by_assertions:
            if name not in assertions:
                assertions.append(name)
    assertions.sort()
    labels = {
        o.name: o.name + (" (control)" if o.control else "") + (" (canary)" if o.canary else "")
        for o in outcomes
    }
    width = max([len(label) for label in labels.values()] + [len("mutant")])
    numbers = [f"{index:>2}" for index in range(1, len(assertions) + 1)]
    lines = [
        "Kill matrix: ● = a scenario of that assertion failed against the mutant (legend below)",
        " " * width + "  " + "".join(n[0] for n in numbers),
        "mutant".ljust(width) + "  " + "".join(n[1] for n in numbers) + "  explore",
    ]
    for outcome in outcomes:
        cells = "".join("●" if name in outcome.killed_by_assertions else "·" for name in assertions)
        explored = outcome.exploration
        explore = (
            f"● {explored['invariant']} (seed {explored['seed']})"
            if explored
            else ("error" if outcome.exploration_error else ("·" if outcome.explorable else "n/a"))
        )
        lines.append(f"{labels[outcome.name].ljust(width)}  {cells}  {explore}")
    legend = Table(title="Assertions", show_header=False, show_lines=False)
    legend.add_column("#", justify="right")
    legend.add_column("assertion")
    for index, name in enumerate(assertions, start=1):
        legend.add_row(str(index), name)
    return [Text("\n".join(lines)), legend]
