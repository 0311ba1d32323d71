"""``pi-continuity-harness explore``: seeded random walks over the host with the system's invariants.

The implementation's system chooses the explorer plug-in (Pi Session Continuity, or blitz
handoff). Each seed expands into options (printed, VOPR style) and a concrete scenario, which
runs operation by operation on the simulated host with every invariant checked after every
effect and operation (blitz handoff: after every operation those a prefix of the run can break,
the rest once the run is over), and the run stops at the operation that broke one; for Pi
Session Continuity the
faults then heal and the next threshold compaction must commit (liveness). A failing seed is
minimised and written under ``--out`` as a scenario YAML, its trace and a ``.feature``
regression; the line printed for it shows the exact ``replay`` command.

Seeds run in parallel with ``--jobs`` (a local process pool), or on a Dask cluster with
``--scheduler tcp://HOST:PORT`` (the ``scale`` extra; workers started with ``dask worker
ADDRESS --nthreads 1``); either way the report lists the seeds in order, and a seed whose
worker died is run again and named as retried. ``--check-determinism`` runs every seed twice
and fails on the first difference of the trace bytes. Exit status 0 only when every seed
passed.

``--target pi`` explores on real Pi 1.6. A Python implementation: each seed's host-behaviour case
(``explore/differential``) plays on the simulator and on real Pi, with the implementation and
with no extension (so Pi's own summarizer runs), then its case of the system (the one the
simulator explores, without the faults only the simulator can inject; not in print or json
mode), with the implementation, all compared with no tolerance; the first difference is
minimised into a scenario and a ``.feature`` that replays it on both targets. A TypeScript
implementation (``--extension ext.ts``, ``--system`` naming its system) plays the system's cases
on real Pi alone with every invariant real Pi's observations allow checked after each
operation (``--list-invariants --target pi`` lists them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._budget import add_budget_arguments, budget_override
from pi_continuity_harness.commands._listing import refuse_ignored_options, remember_run_options
from pi_continuity_harness.commands._paths import (
    check_directory,
    check_distinct,
    check_file,
    typescript_inputs,
)
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.explore.engine import (
    MAX_JOBS,
    MAX_SEEDS,
    MAX_STEPS,
    ExploreSettings,
    SeedReport,
    explore_seeds,
    summarise,
)
from pi_continuity_harness.explore.executor import SchedulerError, WorkPool, open_pool, scheduler_problem
from pi_continuity_harness.explore.plugins import plugin_named
from pi_continuity_harness.explore.runner import scratch_root
from pi_continuity_harness.features.preflight import check_implementation, check_target
from pi_continuity_harness.scenario.atomic_write import write_atomically
from pi_continuity_harness.scenario.implementations import (
    SESSION_CONTINUITY,
    SYSTEMS,
    ImplementationError,
    implementation_system,
)
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
from pi_continuity_harness.scenario.run_lock import hold_run_directory

__all__ = ["check_count", "check_scheduler", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explore",
        help=SUMMARIES["explore"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--seeds", type=int, default=20, help=f"how many seeds (default 20, at most {MAX_SEEDS:,})"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=40,
        help=f"fault-phase operations per seed (default 40, at most {MAX_STEPS:,})",
    )
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help=f"worker processes (default 1: in this process; at most {MAX_JOBS})",
    )
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the seeds on this Dask scheduler's workers instead (needs the 'scale' extra)",
    )
    parser.add_argument(
        "--extension", default="reference", help="implementation under test (default reference)"
    )
    parser.add_argument(
        "--system",
        choices=sorted(SYSTEMS),
        help="the system a TypeScript implementation implements (default: pi-session-continuity)",
    )
    parser.add_argument(
        "--target",
        choices=("sim", "pi"),
        default="sim",
        help=(
            "sim (default): the simulated host with the system's invariants; pi: real Pi 1.6, each seed "
            "played on the simulator and on real Pi (its host case with the implementation and with no "
            "extension, then its system case) and compared with no tolerance"
        ),
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write every seed's report as JSON here")
    add_html_option(parser, "the exploration (seeds, failures, minimised scenarios and replay commands)")
    parser.add_argument("--out", type=Path, default=Path("explore-out"), help="where failures are written")
    parser.add_argument(
        "--check-determinism", action="store_true", help="run every seed twice; fail on any trace difference"
    )
    parser.add_argument("--no-minimise", action="store_true", help="write failures as found, unminimised")
    parser.add_argument(
        "--max-failures", type=int, default=0, help="stop after this many failing seeds (default 0: never)"
    )
    parser.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    parser.add_argument("--list-invariants", action="store_true", help="print the invariants and exit")
    add_budget_arguments(parser, wall=False)
    remember_run_options(parser, keep={"list_invariants", "extension", "system", "target"})
    parser.set_defaults(func=main)


def check_count(option: str, value: int, *, least: int = 1, most: int | None = None) -> None:
    """``value`` of ``option`` is at least ``least`` and (``most`` given) at most ``most``: a count
    too large for the machine is refused now, not found by a MemoryError or an exhausted machine."""
    if value < least:
        raise UsageError(f"{option} must be at least {least} (got {value})")
    if most is not None and value > most:
        raise UsageError(f"{option} must be at most {most:,} (got {value})")


def check_scheduler(address: str | None) -> None:
    """``--scheduler`` is a Dask scheduler's address (None: not given), checked before the pool
    opens (``explore``, ``mutants``): Dask tried a wrong one for a minute, then a traceback."""
    problem = None if address is None else scheduler_problem(address)
    if problem is not None:
        raise UsageError(f"--scheduler {address}: {problem}")


def _validate(args: argparse.Namespace) -> None:
    check_count("--seeds", args.seeds, most=MAX_SEEDS)
    check_count("--steps", args.steps, most=MAX_STEPS)
    check_count("--jobs", args.jobs, most=MAX_JOBS)
    check_scheduler(args.scheduler)
    if args.seed_start < 0:
        raise UsageError(f"--seed-start must not be negative (got {args.seed_start})")
    if args.scheduler is not None and args.jobs != 1:
        raise UsageError("--jobs and --scheduler exclude each other (the workers are the jobs)")
    if args.max_failures < 0:
        raise UsageError(f"--max-failures must not be negative (got {args.max_failures})")
    check_file("--json", args.json_path)
    check_directory("--out", args.out)
    check_distinct(
        {"--json": args.json_path, "--html": args.html, "--out": args.out},
        inputs=typescript_inputs([args.extension]),
    )
    if args.target == "pi" and args.check_determinism:
        raise UsageError("--check-determinism: real Pi is not deterministic; it applies to --target sim")
    _check_system_option(args)
    check_target(args.target)
    check_implementation(args.target, args.extension, system=args.system)
    check_html(args.html)


def _check_system_option(args: argparse.Namespace) -> None:
    """``--system`` names a TypeScript implementation's system; a Python one declares its own.
    Checked for ``--list-invariants`` too: before, ``--list-invariants --system
    pi-blitz-handoff`` printed the reference's (Pi Session Continuity's) invariants, exit 0."""
    if args.system is not None and not _is_typescript(args.extension):
        raise UsageError("--system: only for a TypeScript implementation (a Python one declares its system)")


def _is_typescript(extension: str) -> bool:
    return extension.endswith((".ts", ".mts", ".js", ".mjs"))


def _system(args: argparse.Namespace) -> str:
    """The system explored: a Python implementation declares it; a TypeScript one is named by
    ``--system`` (default Pi Session Continuity)."""
    if _is_typescript(args.extension):
        return str(args.system or SESSION_CONTINUITY.name)
    try:
        return implementation_system(args.extension).name
    except ImplementationError as error:
        raise UsageError(str(error)) from None


def main(args: argparse.Namespace) -> int:
    if args.list_invariants:
        refuse_ignored_options(args, "--list-invariants")
        _check_system_option(args)
        plugin = plugin_named(_system(args))
        if args.target == "pi":
            for observed in plugin.observed_invariants():
                rules = f" [{', '.join(observed.rules)}]" if observed.rules else ""
                print(
                    f"{observed.name}{rules} (needs {', '.join(sorted(observed.needs))})\n    {observed.doc}"
                )
            return 0
        for spec in plugin.describe():
            rules = f" [{', '.join(spec.rules)}]" if spec.rules else ""
            print(f"{spec.name}{rules}\n    {spec.doc}")
        return 0
    _validate(args)
    with hold_run_directory(args.out):
        try:
            with open_pool(jobs=args.jobs, scheduler=args.scheduler, implementation=args.extension) as pool:
                return _explore(args, pool)
        except SchedulerError as error:
            raise UsageError(str(error)) from None


def _explore(args: argparse.Namespace, pool: WorkPool) -> int:
    """Explore, holding ``--out`` (a second explorer writing there is refused)."""
    system = _system(args)
    seeds = range(args.seed_start, args.seed_start + args.seeds)
    work_root = str(make_owned_directory("pch-explore-", scratch_root()))
    out_dir = str(args.out.resolve())
    print(
        f"pi-continuity-harness explore ({system}, target {args.target}): {args.extension}, "
        f"seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}), {args.steps} steps each, on {pool.where}"
        + (", checking determinism" if args.check_determinism else ""),
        flush=True,
    )
    started = time.perf_counter()
    reports: list[SeedReport] = []
    failures = 0
    settings = ExploreSettings(
        steps=args.steps,
        extension=args.extension,
        system=system,
        out_dir=out_dir,
        work_root=work_root,
        check_determinism=args.check_determinism,
        minimise_failures=not args.no_minimise,
        budget=budget_override(args),
        target=args.target,
    )
    runs = explore_seeds(seeds, settings, pool=pool)
    try:
        for report in runs:
            reports.append(report)
            failures += 0 if report.ok else 1
            _print_report(report, len(reports), len(seeds), quiet=args.quiet)
            if args.max_failures and failures >= args.max_failures:
                break
    finally:
        runs.close()
        wall = time.perf_counter() - started
        keep = any(not r.ok for r in reports)
        if not keep:
            remove_owned(work_root)
    summary = summarise(system, reports, wall, args.target)
    summary["retriedSeeds"] = [int(name.removeprefix("seed-")) for name in pool.retried()]
    _print_summary(summary, work_root if keep else None)
    payload = {
        "implementation": args.extension,
        "system": system,
        "steps": args.steps,
        "summary": summary,
        "seeds": [r.to_json() for r in reports],
    }
    if args.json_path is not None:
        write_atomically(args.json_path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json_path}")
    if args.html is not None:
        from pi_continuity_harness.report import render_explore  # noqa: PLC0415  (the report extra)

        write_html_report(args.html, lambda: render_explore(payload))
    return 0 if failures == 0 else 1


def _print_report(report: SeedReport, index: int, total: int, *, quiet: bool) -> None:
    head = f"[{index:>4}/{total}] seed {report.seed:<6}"
    cost = f"; {_cost(report.cost)}" if report.cost else ""
    if report.ok:
        if not quiet:
            print(
                f"{head} ok     {report.operations:>4} ops {report.seconds:6.2f}s liveness {report.liveness}"
                f"{cost}  | {report.options.split(': ', 1)[-1]}",
                flush=True,
            )
        return
    print(f"{head} FAILED {report.operations:>4} ops {report.seconds:6.2f}s{cost}", flush=True)
    print(f"         options: {report.options}")
    if report.violation:
        v = report.violation
        where = f" (operation {v.get('operation')})" if v.get("operation") is not None else ""
        print(f"         {v['invariant']}{where}: {v['message']}")
    for error in report.harness_errors[:3]:
        print(f"         harness error: {error}")
    if report.determinism not in (None, "identical"):
        print(f"         NOT DETERMINISTIC: {report.determinism}")
    minimised = report.minimised
    if minimised:
        print(
            f"         minimised {minimised['operationsBefore']} -> {minimised['operationsAfter']} operations in "
            f"{minimised.get('runs', 0)} runs ({minimised.get('seconds', 0)} s): {minimised['yaml']}"
        )
        print(f"         feature: {minimised['feature']}")
        print(f"         replay:  {minimised['replay']}")
    sys.stdout.flush()


def _cost(cost: dict[str, Any]) -> str:
    """One seed's cost: on real Pi, the seconds each target took; else, per failing check point,
    synthesis attempts / failure notifications / failed postmortems."""
    if "piSeconds" in cost:
        sim = f"sim {cost['simSeconds']}s, " if "simSeconds" in cost else ""
        return f"{sim}pi {cost['piSeconds']}s"
    failing = int(cost.get("failing", 0))
    if not failing:
        return "no failing check point"
    parts = [
        str(cost.get(key, {}).get("perFailingCheckPoint", 0))
        for key in ("synthesisAttempts", "failureNotifications", "failedPostmortems")
    ]
    return f"{failing} failing check point(s), each {'/'.join(parts)} (synthesis/notices/postmortems)"


def _print_summary(summary: dict[str, Any], kept: str | None) -> None:
    print(
        f"explored {summary['seeds']} seeds, {summary['operations']} operations in {summary['wallSeconds']} s: "
        f"{summary['operationsPerSecond']} operations/s, {summary['seedsPerSecond']} seeds/s"
    )
    print(f"liveness: {', '.join(f'{k} {v}' for k, v in summary['liveness'].items())}")
    if summary.get("medianTimeRatio") is not None:
        print(
            f"simulator {summary['simSeconds']} s, real Pi {summary['piSeconds']} s over "
            f"{summary['runsPerTarget']} runs per target; median time ratio real/sim {summary['medianTimeRatio']}x"
        )
        for reason, count in summary.get("systemCasesNotPlayed", {}).items():
            print(f"system case of {count} seed(s) {reason}")
    cost = summary.get("faultCost")
    if cost is not None:
        print(
            f"persistent-fault cost: {cost['failingCheckPoints']} failing check points; per failing check point "
            f"{cost['synthesisAttemptsPerFailingCheckPoint']} synthesis attempts (max "
            f"{cost['maxSynthesisAttemptsInOneCheckPoint']}), {cost['failureNotificationsPerFailingCheckPoint']} "
            "failure notifications, "
            f"{cost['failedPostmortemsPerFailingCheckPoint']} failed postmortems"
        )
    protection = summary.get("protection")
    if protection is not None:

        def judged(side: str) -> str:
            kinds = protection.get(side) or {}
            detail = ", ".join(f"{kind} {count}" for kind, count in kinds.items())
            return f"{sum(kinds.values())}" + (f" ({detail})" if detail else "")

        print(
            "user operations judged by the protection invariant: inside a handoff's protected "
            f"window {judged('inside')}, outside it {judged('outside')}"
        )
    if summary.get("retriedSeeds"):
        print(
            "seeds run again after their worker was lost: "
            + ", ".join(str(seed) for seed in summary["retriedSeeds"])
        )
    failing = summary["failingSeeds"]
    if failing:
        print(f"FAILED: {len(failing)} seed(s): {', '.join(str(s) for s in failing)}")
        print(f"violations: {', '.join(f'{k} ×{v}' for k, v in summary['violations'].items())}")
        if kept:
            print(f"failing runs kept in {kept}")
    else:
        print("all seeds passed")
