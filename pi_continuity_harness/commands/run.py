"""``pi-continuity-harness run``: the conformance suite, with a table of the named assertions.

Exit status 0 only when no scenario failed (skips are allowed, each with its reason); with
``--null-check``, only when nothing but ``@host`` scenarios passed; 2 for a mistake in what the
run was given, found before any scenario ran (:mod:`._suite_setup`). ``--by-rule`` adds a table
of the catalogue's rules, each passed, failed or not run; ``--rules`` runs only the scenarios
that prove the rules named.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections import OrderedDict
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._budget import add_budget_arguments, budget_args, budget_override
from pi_continuity_harness.commands._output import STATUS_STYLE, pi_version_option, progress_printer, shorten
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._report import add_html_option, check_html, write_html_report
from pi_continuity_harness.commands._suite_setup import (
    SuiteSetup,
    add_workers_option,
    check_workers,
    internal_error_message,
    no_scenario_error,
    print_kept,
)
from pi_continuity_harness.features.scratch import make_temporary_directory
from pi_continuity_harness.features.suite import RULE_STATUSES, ScenarioResult, SuiteRun, run_suite
from pi_continuity_harness.rules import catalogue_for_rule, rule_tag
from pi_continuity_harness.scenario.option_values import seed
from pi_continuity_harness.scenario.owned_dirs import remove_owned

__all__ = ["register", "render_table"]

_STYLE = STATUS_STYLE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help=SUMMARIES["run"],
        description=(
            "Run the Gherkin conformance suite against an implementation on the simulator (default, "
            "it models Pi 1.6.0) or on a real Pi process (--target pi, 1.6.0 or --pi-version), and "
            "print one row per scenario, grouped by named assertion."
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
    parser.add_argument(
        "--pi-version",
        help="with --target pi: the real Pi release to drive (default: the pinned one; install it first "
        "with install-pi --pi-version V)",
    )
    parser.add_argument(
        "--features",
        type=Path,
        metavar="PATH",
        help="run these feature files (a file or a directory) instead of the suite, with the stock "
        "steps and those of a conftest.py beside them",
    )
    parser.add_argument("--tags", help="pytest marker expression over feature tags, e.g. 'smoke'")
    parser.add_argument(
        "--rules",
        nargs="+",
        metavar="ID",
        help="only the scenarios that prove these catalogue rules (tagged @rule-<ID>)",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        help="a scenario's or an assertion's name exactly as printed, or a pytest keyword expression",
    )
    parser.add_argument("--seed", type=seed, default=0, help="seed of every simulated run (default 0)")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep each scenario's machine under this directory (default: a temporary directory, "
        "removed after a passing run)",
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the results as JSON here")
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument("--cucumber", type=Path, help="write Cucumber JSON here")
    parser.add_argument(
        "--report", type=Path, help="write the validation record (Markdown and JSON) into DIR"
    )
    add_workers_option(parser, "the scenarios")
    parser.add_argument(
        "--by-rule",
        action="store_true",
        help="also print, per rule of the catalogue, whether the implementation passed, failed or did not run it",
    )
    parser.add_argument(
        "--null-check",
        action="store_true",
        help="the implementation is expected to do nothing: exit 0 only when every scenario it passes "
        "is tagged @host (a verdict without evidence otherwise)",
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
    add_budget_arguments(parser)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    check_workers(args.workers)
    console = output_console()
    check_html(args.html)
    extra_args = ["--system", args.system] if args.system else []
    if args.allure is not None:
        extra_args.append(f"--alluredir={_allure_dir(args.allure)}")
    tags = args.tags
    if args.rules:
        unknown = [rule for rule in args.rules if catalogue_for_rule(rule) is None]
        if unknown:
            raise UsageError(f"--rules: {', '.join(unknown)}: no such rule in any catalogue")
        selection = " or ".join(rule_tag(rule) for rule in args.rules)
        tags = f"({tags}) and ({selection})" if tags else selection
    pi_version = pi_version_option(args.pi_version, args.target)
    # The page reads each scenario's machine (trace, Briefs, settings): without --workdir they
    # stay in a temporary directory until the page is written, removed then if the run passed.
    page_workdir = (
        make_temporary_directory("pi-continuity-harness-run-", args.target)
        if args.html is not None and args.workdir is None
        else None
    )
    outcome = {"passed": False, "keep": False}
    try:
        _run(args, console, tags, extra_args, pi_version, page_workdir, outcome)
    finally:
        if page_workdir is not None and not outcome["keep"]:
            remove_owned(page_workdir)
    return 0 if outcome["passed"] else 1


def _run(
    args: argparse.Namespace,
    console: Console,
    tags: str | None,
    extra_args: list[str],
    pi_version: str | None,
    page_workdir: Path | None,
    outcome: dict[str, bool],
) -> None:
    """The run, its outputs and its page. ``outcome``: whether it passed (and the null check,
    if asked), and whether its machines are kept (a failing run's are)."""
    setup = SuiteSetup(
        targets=(args.target,),
        extension=args.extension,
        system=args.system,
        features=args.features,
        workdir=args.workdir or page_workdir,
        files={"--json": args.json_path, "--junit": args.junit, "--cucumber": args.cucumber},
        directories={"--report": args.report, "--allure": args.allure},
        html=args.html,
        pi_version=pi_version,
    )
    with setup.checked():
        progress = progress_printer(console, quiet=args.quiet)
        run = run_suite(
            target=args.target,
            extension=args.extension,
            tags=tags,
            keyword=args.keyword,
            seed=args.seed,
            workdir=setup.workdir,
            junit=args.junit,
            cucumber=args.cucumber,
            features=args.features,
            extra_args=(extra_args + budget_args(budget_override(args))) or None,
            on_result=progress,
            workers=args.workers,
            pi_version=pi_version,
        )
    if run.interrupted:
        # pytest caught the interrupt (Ctrl-C, or SIGTERM through cli.main): stop as interrupted,
        # naming the machines of what failed before it. Not the exit status alone: pytest
        # returns the same INTERRUPTED for errors during collection (a usage error now).
        print_kept(console, run, quiet=True)
        raise KeyboardInterrupt
    if run.internal_error:
        # Not "no scenario runs": pytest-xdist's controller, say, stopped on a worker it did not
        # understand (issue 16's `run -n`). What was reported is shown; the run failed.
        if run.results:
            console.print(render_table(run))
        print_kept(console, run, quiet=args.quiet)
        print(internal_error_message("run", len(run.results)), file=sys.stderr)
        return
    if not run.results:
        raise no_scenario_error(tags, args.keyword, args.features)
    console.print(render_table(run))
    if args.by_rule:
        console.print(render_rules(run))
    outcome["keep"] = not run.ok
    if page_workdir is not None and run.ok:
        run.kept = False  # removed once the page is written
    print_kept(console, run, quiet=args.quiet)
    if args.json_path is not None:
        run.write_json(args.json_path)
        console.print(f"results written to {escape(str(args.json_path))}")
    if args.report is not None:
        md, js = run.write_report(args.report)
        console.print(f"validation record written to {escape(str(md))} and {escape(str(js))}")
    if args.html is not None:
        from pi_continuity_harness.report import render_run  # noqa: PLC0415  (the report extra)

        write_html_report(
            args.html,
            lambda: render_run(run.record(), timelines=args.html_timelines),
            lambda text: console.print(text, markup=False),
        )
    outcome["passed"] = _null_check(console, run) == 0 if args.null_check else run.ok


def _null_check(console: Console, run: SuiteRun) -> int:
    """An implementation that does nothing may pass only ``@host`` scenarios (issue 10 item 4)."""
    without = run.passed_without_evidence()
    host = sum(1 for r in run.results if r.status == "passed" and r.host)
    if without:
        console.print(
            f"[bold red]{len(without)} scenarios passed for {run.implementation} without being tagged @host[/] "
            "(each is a verdict without evidence):"
        )
        for result in without:
            console.print(f"  {escape(result.assertion)} :: {escape(result.name)} ({result.feature_file})")
        return 1
    console.print(f"null check: {host} @host scenarios passed, no other scenario passed")
    return 0


def render_rules(run: SuiteRun) -> Table:
    """One row per catalogue rule: passed, failed or not run, and the scenarios that prove it."""
    verdicts = run.by_rule()
    counts = {status: sum(1 for v in verdicts if v.status == status) for status in RULE_STATUSES}
    table = Table(
        title=(
            f"Rules — {run.implementation} on {run.target}: {counts['passed']} met, {counts['failed']} broken, "
            f"{counts['not run']} not run, {counts['unchecked']} unchecked"
        ),
        show_lines=False,
    )
    table.add_column("rule", no_wrap=True)
    table.add_column("section", no_wrap=True)
    table.add_column("status")
    table.add_column("scenarios", overflow="fold")
    table.add_column("rule text", overflow="ellipsis", max_width=70)
    styles = {"passed": "green", "failed": "bold red", "not run": "yellow", "unchecked": "magenta"}
    for verdict in verdicts:
        failing = [name for name, status in verdict.scenarios if status in ("failed", "error")]
        shown = failing or [name for name, _ in verdict.scenarios]
        table.add_row(
            verdict.rule,
            verdict.section,
            f"[{styles[verdict.status]}]{verdict.status}[/]",
            escape("; ".join(shown[:3]) + (f"; +{len(shown) - 3}" if len(shown) > 3 else ""))
            or (escape(f"unchecked: {verdict.why}") if verdict.why else "—"),
            escape(verdict.text),
        )
    return table


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
            f"{r.name}: {shorten((r.detail.splitlines() or [r.status])[0], 160)}"
            for r in results
            if r.status != "passed"
        ]
        passed = sum(1 for r in results if r.status == "passed")
        group = results[0].feature_file.replace("\\", "/").split("/")[-2:-1] or [""]
        table.add_row(
            *([system] if many_systems else []),
            escape(group[0]),
            escape(assertion),
            f"[{_STYLE[status]}]{status}[/]",
            f"{passed}/{len(results)}",
            f"{sum(r.duration_s for r in results):.2f}",
            # Scenario names (an outline's example values) and failure details (an
            # implementation's own messages) are text, never rich markup: '[/gpt-4o]' must print.
            escape("\n".join(details)),
        )
    return table
