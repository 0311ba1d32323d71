"""``pi-continuity-harness run``: the conformance suite, with a table of the named assertions.

Exit status 0 only when no scenario failed (skips are allowed, each with its reason).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections import OrderedDict
from pathlib import Path

from rich.table import Table

from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._output import STATUS_STYLE, progress_printer
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.features.suite import ScenarioResult, SuiteRun, run_suite

__all__ = ["register", "render_table"]

_STYLE = STATUS_STYLE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the conformance suite and print the named assertions",
        description=(
            "Run the Gherkin conformance suite against an implementation on the simulator (default) "
            "or on a real Pi 1.6 process, and print one row per scenario, grouped by named assertion."
        ),
    )
    parser.add_argument("--target", choices=("sim", "pi"), default="sim", help="sim (default) or pi")
    parser.add_argument(
        "--extension",
        default="reference",
        help="implementation: module:factory, a registered name (default: reference), or path/to/ext.ts",
    )
    parser.add_argument(
        "--system",
        choices=("pi-session-continuity", "pi-blitz-handoff"),
        help="the system the implementation implements (default: what its factory declares; "
        "needed for a TypeScript file)",
    )
    parser.add_argument("--tags", help="pytest marker expression over feature tags, e.g. 'smoke'")
    parser.add_argument("-k", dest="keyword", help="pytest keyword expression over scenario test names")
    parser.add_argument("--seed", type=int, default=0, help="seed of every simulated run (default 0)")
    parser.add_argument("--workdir", type=Path, help="keep each scenario's machine under this directory")
    parser.add_argument("--json", type=Path, dest="json_path", help="write the results as JSON here")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--cucumber", type=Path, help="write Cucumber JSON here")
    parser.add_argument(
        "--report", type=Path, help="write the validation record (Markdown and JSON) into DIR"
    )
    add_html_option(parser, "the run (summary, assertions, each scenario's steps, context chart and Briefs)")
    parser.add_argument(
        "--html-timelines",
        choices=("all", "failed", "none"),
        default="all",
        help="whose trace timelines and kept model requests the HTML report holds (default all)",
    )
    parser.add_argument(
        "--allure",
        type=Path,
        metavar="DIR",
        help="write Allure results into DIR, one per scenario with its steps (needs the 'allure' extra)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines, only the table")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    console = output_console()
    if args.target == "pi" and args.extension.endswith(".ts") and not Path(args.extension).is_file():
        raise UsageError(f"--extension {args.extension}: no such TypeScript file")
    for option in ("json_path", "junit", "cucumber"):
        path = getattr(args, option)
        if path is not None and path.exists() and path.is_dir():
            raise UsageError(f"--{option.replace('_path', '')} {path}: is a directory")
    check_html(args.html)
    extra_args = ["--system", args.system] if args.system else []
    if args.allure is not None:
        extra_args.append(f"--alluredir={_allure_dir(args.allure)}")

    progress = progress_printer(console, quiet=args.quiet)

    run = run_suite(
        target=args.target,
        extension=args.extension,
        tags=args.tags,
        keyword=args.keyword,
        seed=args.seed,
        workdir=args.workdir,
        junit=args.junit,
        cucumber=args.cucumber,
        extra_args=extra_args,
        on_result=progress,
    )
    console.print(render_table(run))
    if args.json_path is not None:
        run.write_json(args.json_path)
        console.print(f"results written to {args.json_path}")
    if args.report is not None:
        md, js = run.write_report(args.report)
        console.print(f"validation record written to {md} and {js}")
    if args.html is not None:
        from pi_continuity_harness.report import render_run  # noqa: PLC0415  (the report extra)

        write_html_report(
            args.html,
            lambda: render_run(run.record(), timelines=args.html_timelines),
            lambda text: console.print(text, markup=False),
        )
    if not run.results:
        console.print("[bold red]no scenario ran[/] (check --tags / -k, or the collection errors above)")
        return 1
    return 0 if run.ok else 1


def _allure_dir(path: Path) -> Path:
    """``--allure DIR``, refused before the run when it cannot be written or the plugin (the
    ``allure`` extra: allure-pytest-bdd, loaded by pytest through its entry point) is missing."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"--allure {path}: exists and is not a directory")
    if importlib.util.find_spec("allure_pytest_bdd") is None:
        raise UsageError(
            "--allure needs the 'allure' extra (allure-pytest-bdd not installed): "
            "python -m pip install 'pi-continuity-harness[allure]'"
        )
    return path.resolve()


def render_table(run: SuiteRun) -> Table:
    """One row per named assertion, with its scenarios' outcome; failures and skips explained."""
    groups: OrderedDict[tuple[str, str], list[ScenarioResult]] = OrderedDict()
    for result in run.results:
        groups.setdefault((result.system, result.assertion), []).append(result)
    counts = run.counts()
    systems = sorted({system for system, _ in groups})
    table = Table(
        title=(
            f"Pi Continuity Harness — {run.implementation} on {run.target}: "
            f"{counts['passed']} passed, {counts['failed'] + counts['error']} failed, "
            f"{counts['skipped']} skipped in {run.seconds:.1f}s"
        ),
        caption=f"system: {systems[0]}" if len(systems) == 1 else None,
        show_lines=False,
    )
    many_systems = len(systems) > 1
    if many_systems:
        table.add_column("system")
    table.add_column("group")
    table.add_column("assertion", no_wrap=True)
    table.add_column("status")
    table.add_column("scenarios", justify="right")
    table.add_column("seconds", justify="right")
    table.add_column("detail", overflow="ellipsis")
    for (system, assertion), results in groups.items():
        statuses = {r.status for r in results}
        if statuses & {"failed", "error"}:
            status = "failed"
        elif statuses == {"skipped"}:
            status = "skipped"
        else:
            status = "passed"
        details = [
            f"{r.name}: {(r.detail.splitlines() or [r.status])[0][:160]}"
            for r in results
            if r.status != "passed"
        ]
        passed = sum(1 for r in results if r.status == "passed")
        group = results[0].feature_file.replace("\\", "/").split("/")[-2:-1] or [""]
        table.add_row(
            *([system] if many_systems else []),
            group[0],
            assertion,
            f"[{_STYLE[status]}]{status}[/]",
            f"{passed}/{len(results)}",
            f"{sum(r.duration_s for r in results):.2f}",
            "\n".join(details),
        )
    return table
