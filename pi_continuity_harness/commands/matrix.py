"""``pi-continuity-harness matrix``: the suite against several real Pi releases, side by side.

For each release of ``--pi-versions`` (oldest first) it installs Pi beside the other cached
releases (or reuses it), runs the suite on ``--target pi`` for each ``--extension``, and prints
a progress line per release. Then one table per implementation: named assertion x Pi release
(passed / failed / skipped), every scenario that did not pass with its reason, the seconds per
release, and the lowest release on which everything that can run passes
(:mod:`pi_continuity_harness.features.matrix`). ``--json`` and ``--report`` carry the same matrix.

Exit status 0 only when nothing failed on any release; 2 for bad input (an unsupported or
unknown release, a release given twice), before anything is installed or run.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from pi_continuity_harness import PI_VERSION
from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._output import STATUS_STYLE, progress_printer
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._paths import (
    check_directory,
    check_distinct,
    check_file,
    typescript_inputs,
)
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.commands._suite_setup import add_workers_option, check_workers
from pi_continuity_harness.features.matrix import (
    PiVersionMatrix,
    assertion_cell,
    group_by_assertion,
    notes,
    run_matrix,
)
from pi_continuity_harness.features.preflight import check_implementation
from pi_continuity_harness.features.suite import RECORD_FILES, ScenarioResult, SuiteRun
from pi_continuity_harness.scenario.option_values import seed
from pi_continuity_harness.scenario.run_lock import hold_run_directory
from pi_continuity_harness.targets.realpi.install import (
    SUPPORTED_PI_VERSIONS,
    PiInstallError,
    UnsupportedPiVersionError,
    check_pi_version,
    install_pi,
)

__all__ = ["parse_pi_versions", "register", "render_table"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "matrix",
        help=SUMMARIES["matrix"],
        description=(
            "Run the conformance suite on real Pi once per release of --pi-versions and per "
            "--extension, and print one table per implementation: named assertion x Pi version "
            "(passed / failed / skipped with the reason), the time per release, and the lowest "
            "release on which everything that can run passes. Exit 0 only when nothing failed."
        ),
    )
    parser.add_argument(
        "--pi-versions",
        default=",".join(SUPPORTED_PI_VERSIONS),
        help=f"comma-separated Pi releases (default and supported: {','.join(SUPPORTED_PI_VERSIONS)})",
    )
    parser.add_argument(
        "--extension",
        action="append",
        dest="extensions",
        help="implementation: module:factory, a registered name, or path/to/ext.ts; repeat for "
        "several (default: reference)",
    )
    parser.add_argument(
        "--system",
        choices=("pi-session-continuity", "pi-blitz-handoff"),
        help="the system a TypeScript --extension implements (default pi-session-continuity)",
    )
    parser.add_argument("--tags", help="pytest marker expression over feature tags, e.g. 'smoke'")
    parser.add_argument("-k", dest="keyword", help="pytest keyword expression over scenario test names")
    parser.add_argument("--seed", type=seed, default=0, help="seed of every run (default 0)")
    add_workers_option(parser, "each release's scenarios")
    parser.add_argument(
        "--workdir", type=Path, help="keep every scenario's machine under DIR/<implementation>/<version>"
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the matrix as JSON here")
    parser.add_argument(
        "--report", type=Path, help="write the validation record (Markdown and JSON) of the matrix into DIR"
    )
    add_html_option(parser, "the matrix (the assertion x Pi version grid of each implementation)")
    parser.add_argument("--verbose", action="store_true", help="also a line per scenario")
    parser.set_defaults(func=main)


def parse_pi_versions(text: str) -> list[str]:
    """``--pi-versions``: every release supported, none twice, at least one."""
    given = [part.strip() for part in text.split(",") if part.strip()]
    if not given:
        raise UsageError(f"--pi-versions: no version given (supported: {', '.join(SUPPORTED_PI_VERSIONS)})")
    versions: list[str] = []
    for raw in given:
        try:
            version = check_pi_version(raw)
        except UnsupportedPiVersionError as error:
            raise UsageError(f"--pi-versions: {error}") from None
        if version in versions:
            raise UsageError(f"--pi-versions: {version} is given twice")
        versions.append(version)
    return versions


def main(args: argparse.Namespace) -> int:
    console = output_console()
    versions = parse_pi_versions(args.pi_versions)
    check_workers(args.workers)
    extensions: list[str] = args.extensions or ["reference"]
    if len(set(extensions)) != len(extensions):
        raise UsageError("--extension: an implementation is given twice")
    for extension in extensions:
        if extension.endswith(".ts") and not Path(extension).is_file():
            raise UsageError(f"--extension {extension}: no such TypeScript file")
    # The setup checks of run and compare (commands/_suite_setup.py), before anything installs:
    # every output path, each implementation resolves and loads (a Python factory on the
    # simulator: the same code runs in the real-Pi bridge), and the run directory's lock.
    check_file("--json", args.json_path)
    check_html(args.html)
    check_directory("--report", args.report)
    check_directory("--workdir", args.workdir)
    check_distinct(
        {"--json": args.json_path, "--html": args.html, "--report": args.report, "--workdir": args.workdir},
        inputs=typescript_inputs(extensions),
        writes={"--report": RECORD_FILES},
    )
    for extension in extensions:
        if not extension.endswith(".ts") and not extension.startswith("pkg:"):  # Python: same code on both
            check_implementation("sim", extension, system=args.system)

    def install(version: str) -> dict[str, Any]:
        try:
            installation = install_pi(version=version)
        except PiInstallError as error:
            raise UsageError(f"Pi {version}: {error}") from None
        state = "reused" if installation.cached else "installed"
        console.print(f"Pi {version}: {state} ({installation.pi_package_dir})", markup=False)
        return {"state": state, "package_dir": str(installation.pi_package_dir)}

    def on_version(matrix: PiVersionMatrix, version: str, run: SuiteRun) -> None:
        counts = run.counts()
        failed = counts["failed"] + counts["error"]
        style = "bold red" if failed else "green"
        console.print(
            f"Pi {version} · {escape(matrix.implementation)}: [{style}]{counts['passed']} passed, "
            f"{failed} failed[/], {counts['skipped']} skipped in {run.seconds:.1f} s"
        )

    printer = progress_printer(console, quiet=not args.verbose)

    def on_result(impl: str, version: str, result: ScenarioResult, index: int, total: int) -> None:
        printer(result, index, total)

    with contextlib.ExitStack() as stack:
        if args.workdir is not None:
            stack.enter_context(hold_run_directory(args.workdir))
        run = run_matrix(
            pi_versions=versions,
            extensions=extensions,
            tags=args.tags,
            keyword=args.keyword,
            seed=args.seed,
            system=args.system,
            workdir=args.workdir,
            install=install,
            on_version=on_version,
            on_result=on_result if args.verbose else None,
            workers=args.workers,
        )
    for matrix in run.implementations:
        console.print(f"\n[bold]Pi version matrix — {escape(matrix.implementation)} ({matrix.system})[/]")
        console.print(render_table(matrix))
        for line in notes(matrix):
            console.print(f"  {line}", markup=False, highlight=False)
        lowest = matrix.lowest_passing_version
        console.print(
            f"{escape(matrix.implementation)}: lowest Pi version on which everything that can run passes: "
            + (f"[bold]{lowest}[/]" if lowest else "[bold red]none[/] (the newest release tested fails)")
        )
        for version in matrix.pi_versions:
            missing = matrix.capability_skips(version)
            if missing:
                console.print(f"  Pi {version} lacks (scenarios skipped): {', '.join(missing)}", markup=False)
        supported = matrix.minimum_supported_version
        console.print(
            f"{escape(matrix.implementation)}: minimum supported Pi version (passes, none of its own "
            f"scenarios skipped for a missing host capability): [bold]{supported or 'none'}[/]"
        )
    console.print(f"(the simulator models Pi {PI_VERSION})")
    if args.json_path is not None:
        run.write_json(args.json_path)
        console.print(f"matrix written to {args.json_path}")
    if args.report is not None:
        md, js = run.write_report(args.report)
        console.print(f"validation record written to {md} and {js}")
    if args.html is not None:
        from pi_continuity_harness.report import render_matrix  # noqa: PLC0415  (the report extra)

        write_html_report(
            args.html,
            lambda: render_matrix(run.to_json()),
            lambda text: console.print(text, markup=False, highlight=False, soft_wrap=True),
        )
    if run.workdir is not None and args.workdir is None:
        console.print(f"scenario machines kept for inspection in {run.workdir}", markup=False)
    return 0 if run.ok else 1


def render_table(matrix: PiVersionMatrix) -> Table:
    """One row per named assertion, one column per Pi release: passed/total (failed, skipped)."""
    table = Table(caption="cells: passed/total scenarios of the named assertion on each Pi release")
    table.add_column("assertion", no_wrap=True)
    for version in matrix.pi_versions:
        table.add_column(version, justify="center")
    for assertion, rows in group_by_assertion(matrix.rows).items():
        cells = []
        for version in matrix.pi_versions:
            status, text = assertion_cell(rows, version)
            cells.append(f"[{STATUS_STYLE[status]}]{escape(text)}[/]")
        table.add_row(escape(assertion), *cells)
    totals = []
    for version in matrix.pi_versions:
        seconds = matrix.seconds_per_version.get(version, 0.0)
        mark = "[green]pass[/]" if matrix.passes(version) else "[bold red]FAIL[/]"
        totals.append(f"{mark} {seconds:.0f} s")
    table.add_section()
    table.add_row("[bold]release[/]", *totals)
    return table
