"""``pi-continuity-harness compare``: the suite on the simulator and on real Pi, side by side.

Runs the conformance suite (or a ``--tags`` / ``-k`` selection) on both targets, each scenario
in ``<workdir>/sim/<scenario>`` and ``<workdir>/pi/<scenario>``, then reads the normalised
observation record each scenario left there (``observation.json``, written by the ``world``
fixture) and reports, per scenario: the two outcomes, the differences between the two
records channel by channel (event order per channel, session entries, the session file's
shape, artifacts, messages), each marked *explained* when a known difference
(:mod:`~pi_continuity_harness.targets.known_differences`) accounts for it, and the time
ratio real/simulated.

Exit status 0 only when no scenario differs in outcome and every difference is explained.
A scenario the real-Pi target skips for a capability it lacks (``@needs-...``) is listed as
not comparable, not as a difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pi_continuity_harness import PI_VERSION
from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._output import STATUS_STYLE, pi_version_option, progress_printer
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.commands._suite_setup import (
    SuiteSetup,
    add_workers_option,
    check_workers,
    internal_error_message,
    no_scenario_error,
)
from pi_continuity_harness.features.pytest_plugin import observation_path
from pi_continuity_harness.features.scratch import scratch_directory
from pi_continuity_harness.features.suite import ScenarioResult, SuiteRun, run_suite, write_atomically
from pi_continuity_harness.scenario.option_values import seed
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
from pi_continuity_harness.targets.comparison import Difference, Neutraliser, diff_records
from pi_continuity_harness.targets.known_differences import KNOWN_DIFFERENCES, UNCOMPARED, neutralisers

__all__ = ["TEMP_PREFIX", "CompareReport", "ScenarioComparison", "compare_runs", "compare_suites", "register"]

#: The prefix of the temporary directory a comparison runs in without ``--workdir``. Short on
#: purpose: real Pi's run directories go under ``<it>/pi/`` and may have at most 126 characters
#: (``scenario/layout.py``), and the suite's longest scenario directory name has 80; the old
#: ``pi-continuity-harness-compare-`` made ``/tmp/pi-continuity-harness-compare-XXXXXXXX/pi``
#: 46 characters, one too many, so the README's ``compare --json compare.json`` exited 2.
TEMP_PREFIX = "pch-compare-"


@dataclass
class ScenarioComparison:
    """One scenario on both targets."""

    nodeid: str
    name: str
    assertion: str
    sim_status: str
    pi_status: str
    sim_seconds: float | None = None
    pi_seconds: float | None = None
    differences: list[Difference] = field(default_factory=list)
    note: str = ""

    #: Why one target skipped it for a capability it lacks (``needs ...``), if so.
    capability_skip: str = ""
    #: Where each target's observation record is (``sim``, ``pi``), when it wrote one.
    observations: dict[str, str] = field(default_factory=dict)

    @property
    def comparable(self) -> bool:
        """Both targets ran it (neither skipped it, both have it)."""
        statuses = (self.sim_status, self.pi_status)
        return "skipped" not in statuses and "missing" not in statuses

    @property
    def outcome_differs(self) -> bool:
        """Different outcomes, unless one target lacks a capability the scenario needs."""
        return self.sim_status != self.pi_status and not self.capability_skip

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if not d.explained]

    @property
    def explained(self) -> list[Difference]:
        return [d for d in self.differences if d.explained]

    @property
    def ratio(self) -> float | None:
        if not self.sim_seconds or self.pi_seconds is None or not self.comparable:
            return None
        return self.pi_seconds / self.sim_seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "scenario": self.name,
            "assertion": self.assertion,
            "sim": self.sim_status,
            "pi": self.pi_status,
            "comparable": self.comparable,
            "capability_skip": self.capability_skip or None,
            "outcome_differs": self.outcome_differs,
            "sim_seconds": self.sim_seconds,
            "pi_seconds": self.pi_seconds,
            "time_ratio": None if self.ratio is None else round(self.ratio, 2),
            "note": self.note,
            "observations": self.observations,
            "differences": [d.to_json() for d in self.differences],
        }


@dataclass
class CompareReport:
    sim: SuiteRun
    pi: SuiteRun
    scenarios: list[ScenarioComparison]
    workdir: Path
    #: False when ``workdir`` was a temporary directory removed after a clean comparison.
    kept: bool = True

    @property
    def compared(self) -> list[ScenarioComparison]:
        return [s for s in self.scenarios if s.comparable]

    @property
    def outcome_differences(self) -> list[ScenarioComparison]:
        return [s for s in self.scenarios if s.outcome_differs]

    def explained_count(self) -> int:
        return sum(len(s.explained) for s in self.compared)

    def unexplained_count(self) -> int:
        return sum(len(s.unexplained) for s in self.compared)

    def median_ratio(self) -> float | None:
        ratios = [s.ratio for s in self.compared if s.ratio is not None]
        return statistics.median(ratios) if ratios else None

    @property
    def ok(self) -> bool:
        complete = not self.sim.internal_error and not self.pi.internal_error
        return (
            complete
            and bool(self.compared)
            and not self.outcome_differences
            and self.unexplained_count() == 0
        )

    def summary(self) -> dict[str, Any]:
        median = self.median_ratio()
        return {
            "scenarios": len(self.scenarios),
            "compared": len(self.compared),
            "not_comparable": len(self.scenarios) - len(self.compared),
            "identical": sum(1 for s in self.compared if not s.differences and not s.outcome_differs),
            "outcome_differences": len(self.outcome_differences),
            "explained_differences": self.explained_count(),
            "unexplained_differences": self.unexplained_count(),
            "median_time_ratio": None if median is None else round(median, 2),
            "sim_seconds": round(self.sim.seconds, 2),
            "pi_seconds": round(self.pi.seconds, 2),
            "ok": self.ok,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "workdir": str(self.workdir),
            "workdir_kept": self.kept,
            "implementation": self.sim.implementation,
            "environment": {"sim": self.sim.environment, "pi": self.pi.environment},
            "summary": self.summary(),
            "known_differences": [{"id": k.id, "reason": k.reason} for k in KNOWN_DIFFERENCES],
            "uncompared": [
                {"id": u.id, "where": u.where, "placeholder": u.placeholder, "reason": u.reason}
                for u in UNCOMPARED
            ],
            "scenarios": [s.to_json() for s in self.scenarios],
        }


def _observation(root: Path, result: ScenarioResult) -> Path:
    return observation_path(root, result.nodeid.split("::")[-1] if result.nodeid else result.name)


def _record(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def compare_runs(
    sim: SuiteRun, pi: SuiteRun, workdir: Path, known: list[tuple[str, Neutraliser]] | None = None
) -> CompareReport:
    """Pair the two runs' scenarios (by test id) and diff their observation records; ``known``
    are the ledger's neutralisers (default: ``known_differences``)."""
    by_id = {r.nodeid or r.name: r for r in pi.results}
    scenarios: list[ScenarioComparison] = []
    known = neutralisers() if known is None else known
    for sim_result in sim.results:
        key = sim_result.nodeid or sim_result.name
        pi_result = by_id.pop(key, None)
        item = ScenarioComparison(
            nodeid=key,
            name=sim_result.name,
            assertion=sim_result.assertion,
            sim_status=sim_result.status,
            pi_status=pi_result.status if pi_result else "missing",
        )
        scenarios.append(item)
        if pi_result is None:
            item.note = "not run on real Pi"
            continue
        for skipped in (sim_result, pi_result):
            if skipped.status == "skipped" and skipped.detail.startswith("needs "):
                item.capability_skip = skipped.detail
        paths = {
            "sim": _observation(workdir / "sim", sim_result),
            "pi": _observation(workdir / "pi", pi_result),
        }
        item.observations = {target: str(path) for target, path in paths.items() if path.is_file()}
        if not item.comparable:
            item.note = item.capability_skip or pi_result.detail or sim_result.detail
            continue
        sim_record = _record(paths["sim"])
        pi_record = _record(paths["pi"])
        item.sim_seconds = (sim_record or {}).get("seconds") or sim_result.duration_s
        item.pi_seconds = (pi_record or {}).get("seconds") or pi_result.duration_s
        if item.outcome_differs:
            item.note = (
                f"sim: {sim_result.detail[:200]}" if sim_result.detail else f"pi: {pi_result.detail[:200]}"
            )
        if sim_record is None or pi_record is None:
            item.note = item.note or "no observation record"
            continue
        if not sim_record.get("started") or not pi_record.get("started"):
            if sim_record.get("started") != pi_record.get("started"):
                item.differences.append(
                    Difference(
                        "started",
                        [f"sim started: {sim_record.get('started')}, pi: {pi_record.get('started')}"],
                    )
                )
            continue
        item.differences = diff_records(sim_record, pi_record, known)
    for key, pi_result in by_id.items():
        scenarios.append(
            ScenarioComparison(
                key,
                pi_result.name,
                pi_result.assertion,
                "missing",
                pi_result.status,
                note="not run on the simulator",
            )
        )
    return CompareReport(sim, pi, scenarios, workdir)


def compare_suites(
    *,
    extension: str = "reference",
    tags: str | None = None,
    keyword: str | None = None,
    seed: int = 0,
    workdir: Path | None = None,
    features: Path | None = None,
    on_result: Callable[[str, ScenarioResult, int, int], None] | None = None,
    pi_version: str | None = None,
    workers: int = 0,
) -> CompareReport:
    """Run the suite (or the feature files under ``features``) on the simulator, then on real
    Pi (``pi_version``, default the pinned release), and compare. Without ``workdir`` both runs
    go to a temporary directory ``pch-compare-*`` (:data:`TEMP_PREFIX`), removed when the
    comparison is clean and kept (``CompareReport.kept``) when it is not. It goes where ``run``
    puts a simulated run (``features/scratch.py``: the RAM disk unless the user chose a place):
    in the system's temporary directory, on a disk, the reference's ``fsync`` calls made the
    simulated scenarios 1.5x slower than ``run`` ran them (median 28 against 18 ms, both with
    every record written), and the real/sim ratio a measure of the disk.

    ``workers`` > 0 runs real Pi's scenarios in that many pytest-xdist processes (``compare -n
    N``; the same results as a serial run, see :func:`run_suite`). A scenario on real Pi spends
    most of its time waiting for Pi (starting a process takes about 0.5 s of Node, and the
    bridge's Python, for every start and restart; measured: 38 CPU-s in 75 s of wall for the
    smoke features), so parallel scenarios use the machine better even on 2 cores. The
    simulator's run stays serial: it takes seconds, less than the workers would take to start.
    Only the real/simulated time ratios change with it (real Pi's scenarios share the CPU)."""
    temporary = workdir is None
    root = (workdir or make_owned_directory(TEMP_PREFIX, scratch_directory())).resolve()
    runs: dict[str, SuiteRun] = {}
    try:
        for target in ("sim", "pi"):

            def progress(result: ScenarioResult, index: int, total: int, target: str = target) -> None:
                if on_result is not None:
                    on_result(target, result, index, total)

            runs[target] = run_suite(
                target=target,
                extension=extension,
                tags=tags,
                keyword=keyword,
                seed=seed,
                workdir=root / target,
                features=features,
                on_result=progress,
                pi_version=pi_version if target == "pi" else None,
                workers=workers if target == "pi" else 0,
            )
            if runs[target].interrupted:
                raise KeyboardInterrupt  # pytest caught the interrupt: the comparison stops too
    except BaseException:
        if temporary:
            remove_owned(root)
        raise
    report = compare_runs(runs["sim"], runs["pi"], root)
    if temporary and (report.ok or not report.scenarios):
        remove_owned(root)
        report.kept = False
    return report


# ====================================================================== CLI
def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=SUMMARIES["compare"],
        description=(
            "Run the conformance suite on the simulator and on a real Pi 1.6 process, then report per "
            "scenario the two outcomes, the differences between the two normalised observations "
            "(explained or not) and the time ratio real/simulated. Exit 0 only when no scenario "
            "differs in outcome and every difference is explained."
        ),
    )
    parser.add_argument(
        "--extension",
        default="reference",
        help="implementation: module:factory or a registered name (default: reference)",
    )
    parser.add_argument(
        "--pi-version", help="the real Pi release to compare the simulator with (default: the pinned one)"
    )
    parser.add_argument(
        "--features",
        type=Path,
        metavar="PATH",
        help="compare these feature files (a file or a directory) instead of the suite, with the stock "
        "steps and those of a conftest.py beside them",
    )
    parser.add_argument("--tags", help="pytest marker expression over feature tags, e.g. 'smoke'")
    parser.add_argument(
        "-k",
        dest="keyword",
        help="a scenario's or an assertion's name exactly as printed, or a pytest keyword expression",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of every simulated run (default 0)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep both runs under this directory (<dir>/sim, <dir>/pi; default: a temporary "
        "directory, removed when the comparison is clean)",
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the full report as JSON here")
    add_html_option(parser, "the comparison (each scenario's two observations side by side)")
    add_workers_option(parser, "real Pi's scenarios (the simulator's run stays serial)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    console = output_console()
    if args.extension.endswith(".ts"):
        raise UsageError(
            "--extension: compare runs one implementation on both targets; a .ts file cannot run on the simulator"
        )
    check_html(args.html)
    check_workers(args.workers)
    pi_version = pi_version_option(args.pi_version, "pi")
    # The page reads both runs' observations: without --workdir they stay in a temporary
    # directory until the page is written, removed then if the comparison is clean.
    page_workdir = (
        make_owned_directory(TEMP_PREFIX, scratch_directory())
        if args.html is not None and args.workdir is None
        else None
    )
    outcome = {"keep": False}
    try:
        return _compare(args, console, pi_version, page_workdir, outcome)
    finally:
        if page_workdir is not None and not outcome["keep"]:
            remove_owned(page_workdir)


def _compare(
    args: argparse.Namespace,
    console: Console,
    pi_version: str | None,
    page_workdir: Path | None,
    outcome: dict[str, bool],
) -> int:
    """The comparison, its outputs and its page; ``outcome["keep"]``: its runs are kept."""
    workdir = args.workdir or page_workdir
    setup = SuiteSetup(
        targets=("sim", "pi"),
        extension=args.extension,
        features=args.features,
        workdir=workdir,
        files={"--json": args.json_path},
        html=args.html,
        pi_version=pi_version,
    )
    printers = {
        target: progress_printer(console, quiet=args.quiet, prefix=f"{target:>3} ")
        for target in ("sim", "pi")
    }

    def progress(target: str, result: ScenarioResult, index: int, total: int) -> None:
        printers[target](result, index, total)

    with setup.checked():
        report = compare_suites(
            extension=args.extension,
            tags=args.tags,
            keyword=args.keyword,
            seed=args.seed,
            workdir=workdir,
            features=args.features,
            on_result=progress,
            pi_version=pi_version,
            workers=args.workers,
        )
    broken = [(target, run) for target, run in (("sim", report.sim), ("pi", report.pi)) if run.internal_error]
    if broken:
        # Not "no scenario runs", and no verdict on a comparison of runs pytest did not finish.
        for target, run in broken:
            print(f"{internal_error_message('compare', len(run.results))} (target {target})", file=sys.stderr)
        if report.kept:
            console.print(
                f"both runs are kept in {report.workdir}", markup=False, highlight=False, soft_wrap=True
            )
        outcome["keep"] = report.kept
        return 1
    if not report.scenarios:
        raise no_scenario_error(args.tags, args.keyword, args.features)
    outcome["keep"] = not report.ok
    if page_workdir is not None and report.ok:
        report.kept = False  # removed once the page is written
    console.print(render_table(report))
    for item in report.compared:
        for difference in item.unexplained:
            console.print(f"[bold red]UNEXPLAINED[/] {escape(item.name)} :: {difference.channel}")
            for line in difference.detail:
                console.print(f"    {line}", markup=False)
    for item in report.outcome_differences:
        console.print(
            f"[bold red]OUTCOME[/] {item.name}: sim {item.sim_status}, pi {item.pi_status} {item.note}",
            markup=False,
        )
    summary = report.summary()
    ratio = summary["median_time_ratio"]
    verdict = "no unexplained difference" if report.ok else "UNEXPLAINED DIFFERENCES"
    console.print(
        f"{summary['compared']} scenarios compared ({summary['not_comparable']} not comparable), "
        f"{summary['identical']} identical; {summary['explained_differences']} explained and "
        f"{summary['unexplained_differences']} unexplained differences; "
        f"{summary['outcome_differences']} outcome differences; median time ratio real/sim "
        f"{'n/a' if ratio is None else f'{ratio:.1f}x'}: {verdict}"
    )
    if pi_version is not None and pi_version != PI_VERSION:
        from pi_continuity_harness.targets.realpi.versions import profile_for  # noqa: PLC0415

        lacks = ", ".join(sorted(profile_for(pi_version).lacks)) or "nothing"
        console.print(
            f"the simulator models Pi {PI_VERSION}; Pi {pi_version} lacks: {lacks} "
            "(targets/realpi/versions.py), so differences in those behaviours are expected",
            markup=False,
        )
    if report.kept and not report.ok:
        console.print(
            f"both runs are kept in {report.workdir}", markup=False, highlight=False, soft_wrap=True
        )
    if args.json_path is not None:
        write_atomically(args.json_path, json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        console.print(f"report written to {escape(str(args.json_path))}")
    if args.html is not None:
        from pi_continuity_harness.report import render_compare  # noqa: PLC0415  (the report extra)

        write_html_report(
            args.html,
            lambda: render_compare(report.to_json()),
            lambda text: console.print(text, markup=False),
        )
    return 0 if report.ok else 1


def render_table(report: CompareReport) -> Table:
    summary = report.summary()
    table = Table(
        title=(
            f"Simulator vs real Pi — {report.sim.implementation}: {summary['compared']} compared, "
            f"{summary['explained_differences']} explained / {summary['unexplained_differences']} unexplained "
            f"differences, {summary['outcome_differences']} outcome differences"
        )
    )
    table.add_column("assertion", no_wrap=True)
    table.add_column("scenario")
    table.add_column("sim")
    table.add_column("pi")
    table.add_column("differences")
    table.add_column("real/sim", justify="right")
    for item in report.scenarios:
        if item.outcome_differs:
            differences = "[bold red]outcome differs[/]"
        elif not item.comparable:
            differences = "[dim]not comparable[/]"
        elif item.unexplained:
            channels = ", ".join(d.channel for d in item.unexplained)
            differences = f"[bold red]{len(item.unexplained)} unexplained[/] ({channels})"
        elif item.differences:
            ids = sorted({k for d in item.differences for k in d.explained_by})
            differences = f"[green]{len(item.differences)} explained[/] ({', '.join(ids)})"
        else:
            differences = "[green]identical[/]"
        sim_style, pi_style = STATUS_STYLE.get(item.sim_status, ""), STATUS_STYLE.get(item.pi_status, "")
        table.add_row(
            escape(item.assertion),
            escape(item.name),
            f"[{sim_style}]{item.sim_status}[/]" if sim_style else item.sim_status,
            f"[{pi_style}]{item.pi_status}[/]" if pi_style else item.pi_status,
            differences,
            "" if item.ratio is None else f"{item.ratio:.0f}x",
        )
    return table
