"""``pi-continuity-harness rules``: every rule of a system, what checks it, what breaks it.

For each rule of the system's catalogue (``pi_continuity_harness/rules/*.yaml``) it lists the
feature scenarios tagged ``@rule-<id>``, the explorer invariants that declare it and the
mutants that break it; a static rule names its static check (and, where no mutant can exist,
why). Exit status 0 only when every rule has a check and a mutant and nothing names a rule the
catalogue does not know (docs/rules.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._console import terminal_console
from pi_continuity_harness.commands._paths import check_file
from pi_continuity_harness.explore.plugins import PLUGINS
from pi_continuity_harness.features.inventory import scenarios as feature_scenarios
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.rules import (
    CoverageReport,
    InvariantRef,
    MutantRef,
    RuleCatalogueError,
    compute_coverage,
    load_catalogue,
    systems,
)
from pi_continuity_harness.scenario.implementations import implementation_system

__all__ = ["coverage_of", "invariant_refs", "mutant_refs", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rules",
        help="list every rule of a system with the scenarios, invariants and mutants that cover it",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--system",
        choices=systems(),
        action="append",
        help="the system whose rules to list (repeatable; default: every system)",
    )
    parser.add_argument("--json", type=Path, dest="json_path", help="write the coverage as JSON here")
    parser.add_argument(
        "--problems", action="store_true", help="list only the rules with a problem (and every error)"
    )
    parser.set_defaults(func=main)


def invariant_refs(system: str) -> list[InvariantRef]:
    """The explorer invariants of ``system`` with the rules they declare."""
    plugin = PLUGINS.get(system)
    if plugin is None:
        return []
    return [InvariantRef(system, spec.name, tuple(spec.rules)) for spec in plugin.invariants]


def mutant_refs(system: str) -> list[MutantRef]:
    """The mutants of ``system`` (those of the reference that implements it) and their rules."""
    out = []
    for mutant in MUTANTS.values():
        if implementation_system(mutant.reference).name == system:
            out.append(MutantRef(system, mutant.name, tuple(mutant.rules)))
    return out


def coverage_of(system: str) -> CoverageReport:
    """The coverage of ``system``'s catalogue by the suite, the explorer and the mutants."""
    return compute_coverage(
        load_catalogue(system), feature_scenarios(system), invariant_refs(system), mutant_refs(system)
    )


def main(args: argparse.Namespace) -> int:
    console = terminal_console(200)  # the tables' width when not on a terminal
    chosen = args.system or list(systems())
    # Every path check of the other commands, before the tables: a file where a directory
    # belongs, or a loop of links, was a traceback after them.
    check_file("--json", args.json_path)
    try:
        reports = [coverage_of(system) for system in chosen]
    except RuleCatalogueError as error:
        raise UsageError(str(error)) from None
    for report in reports:
        console.print(render_coverage(report, problems_only=args.problems))
        for problem in report.errors:
            console.print(f"[bold red]error[/] {escape(problem)}")
        totals = report.totals()
        console.print(
            f"{report.system}: {totals['rules']} rules ({totals['static']} static); "
            f"{totals['checked_by_feature_or_invariant']} checked by a feature or an invariant "
            f"({totals['checked_by_feature']} by a feature, {totals['checked_by_invariant']} by an "
            f"invariant), {totals['checked_statically']} by a static check; {totals['with_mutant']} "
            f"broken by a mutant; {totals['unchecked_with_reason']} unchecked with a reason "
            f"({totals['unit_only']} of them unit-only); "
            f"{totals['rules'] - totals['without_problem']} with a problem; "
            f"{len(report.errors)} errors"
        )
    if args.json_path is not None:
        data = {"ok": all(r.ok for r in reports), "systems": [r.to_json() for r in reports]}
        args.json_path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"coverage written to {args.json_path}")
    return 0 if all(report.ok for report in reports) else 1


def render_coverage(report: CoverageReport, *, problems_only: bool = False) -> Table:
    """One row per rule: what checks it (scenarios, invariants, static check) and what breaks it."""
    table = Table(title=f"Rules of {report.system}", show_lines=False)
    table.add_column("rule", no_wrap=True)
    table.add_column("section", no_wrap=True)
    table.add_column("kind")
    table.add_column("scenarios", overflow="fold")
    table.add_column("invariants", overflow="fold")
    table.add_column("mutants", overflow="fold")
    table.add_column("status", overflow="fold")
    for entry in report.rules:
        if problems_only and entry.ok:
            continue
        scenarios = f"{len(entry.scenarios)}: {_names(entry.scenarios)}" if entry.scenarios else "—"
        if entry.rule.kind == "static":
            scenarios = f"static check {entry.rule.check or '(none)'}" + (
                f"; {scenarios}" if entry.scenarios else ""
            )
        mutants = ", ".join(entry.mutants) or (
            f"none: {entry.rule.no_mutant}" if entry.rule.no_mutant else "—"
        )
        status = "[green]ok[/]" if entry.ok else "[bold red]" + escape("; ".join(entry.problems)) + "[/]"
        if entry.unchecked:
            unit = f" (unit test {entry.rule.unit})" if entry.rule.unit else ""
            status = "[yellow]unchecked: " + escape(f"{entry.rule.unchecked}{unit}") + "[/]"
        table.add_row(
            entry.rule.id,
            entry.rule.section,
            entry.rule.kind,
            escape(scenarios),
            ", ".join(entry.invariants) or "—",
            escape(mutants),
            status,
        )
    return table


def _names(labels: list[str], limit: int = 2) -> str:
    names = [label.split(" :: ", 1)[-1] for label in labels]
    shown = "; ".join(names[:limit])
    return shown + (f"; +{len(names) - limit}" if len(names) > limit else "")
