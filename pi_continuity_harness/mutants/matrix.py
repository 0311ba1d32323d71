"""The kill matrix: the conformance suite and the explorer against every mutant.

Every mutant runs in its own processes, from its own scratch directory (mutants patch
reference modules when their factory runs and never restore them):

* the suite on the simulator, ``python -m pi_continuity_harness.cli run --extension <mutant>
  --json <file> --quiet``: a mutant is *killed by* every scenario that failed. A mutant that
  declares the catalogue rules it breaks runs only the scenarios that prove them (``--tags
  "rule-A or rule-B"``) plus a fixed sample of its system's core scenarios
  (:data:`SAMPLE_RULES`), so the matrix stays fast as mutants grow;
* the explorer, ``python -m pi_continuity_harness.cli explore --extension <mutant> --seeds N
  --max-failures 1 --no-minimise``: killed when any seed breaks an invariant. A mutant that does
  not load, or that only breaks the checker, is an error, never a kill (it would otherwise be
  "killed" by every scenario and every seed). A mutant whose rule the explorer cannot reach
  (``explorable`` false, with the reason in its catalogue entry) is judged by the features alone.

The implementation the mutants change (the PSC reference, the handoff reference, or both)
runs the same way as a control row: it must survive both, or the matrix means nothing.

Mutants run ``--jobs`` at a time in local processes, or on a Dask cluster (``--scheduler``),
through the explorer's :mod:`~pi_continuity_harness.explore.executor`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.executor import WorkPool, open_pool, run_tasks
from pi_continuity_harness.explore.plugin import LOAD_FAILURE
from pi_continuity_harness.explore.runner import scratch_root
from pi_continuity_harness.mutants.catalogue import MUTANTS, Mutant
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.owned_dirs import owned_temporary_directory

__all__ = ["SAMPLE_RULES", "MutantOutcome", "controls_for", "run_matrix", "run_mutant", "suite_tags"]

#: Per reference a mutant changes, the rules whose scenarios every mutant of it also runs: a small
#: sample of the core flow, beside the scenarios of the mutant's own rules.
SAMPLE_RULES: dict[str, tuple[str, ...]] = {
    "blitz": ("H11a", "H22", "H29a", "H71a"),
}


@dataclass
class MutantOutcome:
    """What the suite and the explorer did to one mutant (or to the control)."""

    name: str
    rule: str
    how: str
    spec: str
    canary: bool = False
    control: bool = False
    explorable: bool = True
    #: The tag expression of the scenarios run (None: the whole suite).
    tags: str | None = None
    killed_by: list[str] = field(default_factory=list)
    killed_by_assertions: list[str] = field(default_factory=list)
    suite_error: str | None = None
    exploration: dict[str, Any] | None = None
    exploration_error: str | None = None
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        return bool(self.killed_by)

    @property
    def killed_by_exploration(self) -> bool:
        return self.exploration is not None

    @property
    def ok(self) -> bool:
        """A mutant must die twice; the control must survive both."""
        if self.suite_error or self.exploration_error:
            return False
        if self.control:
            return not self.killed and not self.killed_by_exploration
        return self.killed and (self.killed_by_exploration or not self.explorable)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rule": self.rule,
            "how": self.how,
            "canary": self.canary,
            "control": self.control,
            "killed": self.killed,
            "killed_by": self.killed_by,
            "killed_by_assertions": self.killed_by_assertions,
            "killed_by_exploration": self.killed_by_exploration,
            "explorable": self.explorable,
            "tags": self.tags,
            "exploration": self.exploration,
            "suite_error": self.suite_error,
            "exploration_error": self.exploration_error,
            "seconds": round(self.seconds, 2),
        }


def _run_cli(
    what: str, args: list[str], scratch: Path, timeout: float
) -> tuple[dict[str, Any] | None, str | None]:
    """Run ``pi-continuity-harness <args> --json <file>`` from ``scratch``; its JSON, or why not.

    ``PCH_SCRATCH`` and ``TMPDIR`` point into ``scratch`` too: the explorers keep their work
    directories (of a failing seed, which every mutant has; the handoff explorer of every run),
    and they must go when ``scratch`` does, not stay on the RAM disk or in /tmp."""
    results = scratch / f"{args[0]}.json"
    command = [sys.executable, "-m", "pi_continuity_harness.cli", *args, "--json", str(results)]
    env = {**os.environ, "PCH_SCRATCH": str(scratch), "TMPDIR": str(scratch)}
    try:
        process = subprocess.run(
            command, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"{what} timed out after {timeout:.0f} s"
    if not results.exists():
        return None, f"{what} wrote no results (exit {process.returncode}): {process.stderr.strip()[-400:]}"
    data: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    return data, None


def suite_tags(mutant: Mutant) -> str | None:
    """The scenarios a mutant runs: those of its rules and its reference's sample (None: all)."""
    if not mutant.rules:
        return None
    rules = dict.fromkeys([*mutant.rules, *SAMPLE_RULES.get(mutant.reference, ())])
    return " or ".join(f"rule-{rule}" for rule in rules)


def _suite(
    spec: str, scratch: Path, timeout: float, tags: str | None, budget: BudgetOverride | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    # No --workdir: the run's temporary directory goes under TMPDIR, the scratch, and a
    # temporary run writes only failed scenarios' observation records (nobody reads them here).
    args = ["run", "--extension", spec, "--quiet"]
    args += budget.cli_args() if budget is not None else []
    if tags is not None:
        args += ["--tags", tags]
    data, error = _run_cli("the suite", args, scratch, timeout)
    if data is None:
        return [], error
    return list(data.get("results") or []), None


def _explore(
    spec: str, scratch: Path, seeds: int, steps: int, timeout: float, budget: BudgetOverride | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    args = ["explore", "--extension", spec, "--seeds", str(seeds), "--steps", str(steps)]
    args += budget.cli_args(wall=False) if budget is not None else []
    args += ["--max-failures", "1", "--no-minimise", "--quiet", "--out", str(scratch / "explore-out")]
    data, error = _run_cli("exploration", args, scratch, timeout)
    if data is None:
        return None, error
    reports = data.get("seeds") or []
    for seed in reports:
        if not seed.get("ok"):
            violation = seed.get("violation") or {}
            invariant = violation.get("invariant")
            if invariant is None or invariant == LOAD_FAILURE:
                # Not a kill: the implementation did not load, or the checker itself broke.
                why = violation.get("message") or "; ".join(seed.get("harness_errors") or [])
                return None, f"seed {seed.get('seed')} broke no invariant: {why}"
            return {
                "seed": seed.get("seed"),
                "invariant": invariant,
                "message": violation.get("message"),
                "seedsRun": len(reports),
            }, None
    return None, None


def run_mutant(
    name: str,
    *,
    explore_seeds: int,
    explore_steps: int,
    timeout: float = 900.0,
    budget: BudgetOverride | None = None,
) -> MutantOutcome:
    """Run the suite and the explorer against one mutant (or a control: see :func:`controls_for`),
    every scenario with the same ``budget`` overrides."""
    started = time.perf_counter()
    if name not in MUTANTS:
        outcome = MutantOutcome(name, f"(control) the {name} implementation", "unchanged", name, control=True)
    else:
        mutant: Mutant = MUTANTS[name]
        outcome = MutantOutcome(
            mutant.name,
            mutant.rule,
            mutant.how,
            mutant.spec,
            canary=mutant.canary,
            explorable=mutant.explorable,
            tags=suite_tags(mutant),
        )
    with owned_temporary_directory(f"pch-mutant-{name}-", scratch_root()) as directory:
        scratch = Path(directory)
        results, outcome.suite_error = _suite(outcome.spec, scratch, timeout, outcome.tags, budget)
        failed = [r for r in results if r.get("status") in ("failed", "error")]
        outcome.killed_by = [f"{r.get('assertion')} :: {r.get('name')}" for r in failed]
        outcome.killed_by_assertions = sorted({str(r.get("assertion")) for r in failed})
        if explore_seeds > 0 and outcome.explorable:
            outcome.exploration, outcome.exploration_error = _explore(
                outcome.spec, scratch, explore_seeds, explore_steps, timeout, budget
            )
    outcome.seconds = time.perf_counter() - started
    return outcome


def controls_for(names: list[str]) -> list[str]:
    """The implementations the mutants ``names`` change, each once: the control rows."""
    return list(dict.fromkeys(MUTANTS[name].reference for name in names))


def run_matrix(
    names: list[str],
    *,
    jobs: int,
    explore_seeds: int,
    explore_steps: int,
    control: bool = True,
    on_outcome: Callable[[MutantOutcome], None] | None = None,
    budget: BudgetOverride | None = None,
    pool: WorkPool | None = None,
) -> list[MutantOutcome]:
    """Every mutant in ``names`` (and their controls first), in catalogue order, on ``pool``
    (None: a local pool of ``jobs`` processes; a Dask cluster with ``mutants --scheduler``)."""
    order = (controls_for(names) if control else []) + names
    if pool is None:
        with open_pool(jobs=jobs) as local:
            return run_matrix(
                names,
                jobs=jobs,
                explore_seeds=explore_seeds,
                explore_steps=explore_steps,
                control=control,
                on_outcome=on_outcome,
                pool=local,
                budget=budget,
            )
    outcomes: list[MutantOutcome] = []
    task = partial(run_mutant, explore_seeds=explore_seeds, explore_steps=explore_steps, budget=budget)
    for outcome in run_tasks(pool, task, order, name=lambda name: f"mutant-{name}"):
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes
