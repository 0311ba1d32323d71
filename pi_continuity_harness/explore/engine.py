"""One explorer for every system: a seed end to end, and many seeds in parallel.

:func:`explore_seed` expands a seed with the system's plug-in (:mod:`.plugins`), runs it with
every invariant (:mod:`.runner`), optionally runs it again to check determinism (the trace
bytes must be identical), and minimises a failure (:mod:`.shrink`) and writes it out
(:mod:`.regression`). It returns a :class:`SeedReport` of plain data, a pure function of the seed and the
:class:`ExploreSettings`: it runs in this process, in a local process pool (``--jobs``) or on a
Dask cluster (``--scheduler``), all through :mod:`.executor` (:func:`explore_seeds`), and
becomes JSON.
:func:`summarise` adds the reports up (throughput, failures, liveness, and what the plug-in
adds, such as the cost of persistent faults). Nothing here prints: the ``explore`` command
renders the reports.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.executor import InProcessExecutor, WorkPool, open_pool, run_tasks
from pi_continuity_harness.explore.plugins import plugin_named
from pi_continuity_harness.explore.regression import write_failure
from pi_continuity_harness.explore.runner import CaseResult, run_case
from pi_continuity_harness.explore.shrink import minimise
from pi_continuity_harness.features.collector_tuning import tune_for_scenarios
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.trace import first_difference

__all__ = [
    "MAX_JOBS",
    "MAX_SEEDS",
    "MAX_STEPS",
    "ExploreSettings",
    "SeedReport",
    "explore_seed",
    "explore_seeds",
    "summarise",
]

#: The most seeds one exploration runs (``explore --seeds``, ``mutants --explore-seeds``): ten
#: times the largest run the docs show (100,000 on a Dask cluster), and far more than a day of
#: any machine. Each seed's report is kept for the summary and the JSON; before the bound,
#: ``--seeds 100000000000000`` was a MemoryError at once.
MAX_SEEDS = 1_000_000
#: The most fault-phase operations per seed (``explore --steps``, ``mutants --explore-steps``):
#: 25 times the default. A seed's case is generated whole and its run keeps every record, so
#: time and memory grow faster than the steps (one seed, 2 CPUs: 400 steps 1.8 s and 106 MB,
#: 1,000 steps 11 s and 190 MB, 2,000 steps 65 s and 390 MB); before the bound,
#: ``--steps 1000000000000`` grew until the machine ran out of memory.
MAX_STEPS = 1_000
#: The most local worker processes (``explore --jobs``, ``mutants --jobs``): each is a Python
#: process of its own (100-300 MB), and a count above the machine's cores only waits; more
#: work than one machine goes to a Dask cluster (``--scheduler``). Before the bound, ``--jobs
#: 100000`` started a process per pending seed.
MAX_JOBS = 64


@dataclass
class SeedReport:
    """What one seed did (plain data: it crosses process boundaries and becomes JSON)."""

    seed: int
    options: str
    swarm: dict[str, Any]
    ok: bool
    operations: int
    records: int
    seconds: float
    liveness: str
    violation: dict[str, Any] | None = None
    harness_errors: list[str] = field(default_factory=list)
    cost: dict[str, Any] = field(default_factory=dict)
    determinism: str | None = None
    minimised: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ExploreSettings:
    """How every seed of one exploration runs (plain data: it crosses process boundaries)."""

    steps: int
    #: The implementation under test (``--extension``).
    extension: str
    #: Its system, whose plug-in generates, checks and shrinks.
    system: str
    #: Where failures are written (None: not written).
    out_dir: str | None
    #: Where each seed's run directory goes (a passing seed's is removed).
    work_root: str
    check_determinism: bool = False
    minimise_failures: bool = True
    #: Overrides of every case's budget (``--budget-ops``, ``--budget-virtual-seconds``).
    budget: BudgetOverride | None = None
    #: ``sim``: the simulated host with the plug-in's invariants; ``pi``: real Pi, differentially
    #: against the simulator (:mod:`.differential`).
    target: str = "sim"


def explore_seed(seed: int, settings: ExploreSettings) -> SeedReport:
    """Expand ``seed`` with the system's plug-in, run it with every invariant, and handle a failure."""
    if settings.target == "pi":
        # Real Pi only when asked for: a Python implementation is played on both targets and
        # compared; one the simulator cannot run (TypeScript) is explored on real Pi alone.
        from pi_continuity_harness.explore.differential import onpi, runner  # noqa: PLC0415

        on_pi_only = settings.extension.endswith((".ts", ".mts", ".js", ".mjs"))
        explore = onpi.explore_on_pi_seed if on_pi_only else runner.explore_differential_seed
        report: SeedReport = explore(seed, settings)
        return report
    plugin = plugin_named(settings.system)
    extension = settings.extension
    case = plugin.case(seed, settings.steps)
    workdir = Path(settings.work_root) / f"seed-{seed}"
    # A passing seed's directory is removed: its request files (several MB) are written only
    # when the seed's directory is kept (below).
    result = run_case(
        plugin, case, implementation=extension, workdir=workdir, budget=settings.budget, requests=False
    )
    last: CaseResult | None = result  # the run whose files the seed's directory holds
    report = SeedReport(
        seed=seed,
        options=case.describe(),
        swarm=case.options_json(),
        ok=not result.failed,
        operations=result.operations_run,
        records=result.records,
        seconds=round(result.seconds, 4),
        liveness=result.liveness,
        violation=result.first.to_json() if result.first else None,
        harness_errors=result.harness_errors,
        cost=result.metrics,
    )
    if settings.check_determinism:
        again = run_case(
            plugin, case, implementation=extension, workdir=workdir, budget=settings.budget, requests=False
        )
        last = again
        difference = first_difference(result.trace, again.trace)
        report.determinism = "identical" if difference is None else difference
        if difference is not None:
            report.ok = False
    if result.failed and result.first is not None and settings.out_dir is not None:
        if settings.minimise_failures:
            # Its runs write their request files into the directory themselves.
            shrunk = minimise(
                plugin, case, result, implementation=extension, workdir=workdir, run_budget=settings.budget
            )
            last = None
            final_case, final, runs, seconds = shrunk.case, shrunk.result, shrunk.runs, shrunk.seconds
        else:
            final_case, final, runs, seconds = case, result, 0, 0.0
        report.minimised = write_failure(
            plugin,
            Path(settings.out_dir),
            final_case,
            final,
            extension=extension,
            original=len(case.operations),
        )
        report.minimised.update(runs=runs, seconds=round(seconds, 3))
    if report.ok:
        shutil.rmtree(workdir, ignore_errors=True)
    elif last is not None:
        last.write_requests()
    return report


def differential_times(costs: list[dict[str, Any]]) -> dict[str, Any]:
    """Seconds on each target over the seeds of ``explore --target pi``, and the median of each
    seed's ratio real/simulated."""
    ratios = sorted(c["piSeconds"] / c["simSeconds"] for c in costs if c.get("simSeconds"))
    middle = len(ratios) // 2
    median = (
        (ratios[middle] if len(ratios) % 2 else (ratios[middle - 1] + ratios[middle]) / 2) if ratios else None
    )
    return {
        "simSeconds": round(sum(c.get("simSeconds", 0.0) for c in costs), 2),
        "piSeconds": round(sum(c.get("piSeconds", 0.0) for c in costs), 2),
        "runsPerTarget": sum(c.get("runs", 0) for c in costs),
        "medianTimeRatio": None if median is None else round(median, 1),
        # Seeds whose system case was not played, by why (``differential.runner._plays``).
        "systemCasesNotPlayed": dict(
            sorted(Counter(c["systemCase"] for c in costs if "systemCase" in c).items())
        ),
    }


def explore_seeds(
    seeds: Sequence[int], settings: ExploreSettings, *, jobs: int = 1, pool: WorkPool | None = None
) -> Generator[SeedReport, None, None]:
    """:func:`explore_seed` for every seed on ``pool`` (None: a local pool of ``jobs``: 1 runs
    in this process), the reports in seed order. Closing the generator cancels what is queued."""
    if pool is None:
        with open_pool(jobs=jobs) as local:
            yield from explore_seeds(seeds, settings, pool=local)
        return
    # Seeds run here: the collector tuned as for the suite's scenarios (``collector_tuning``:
    # the process's objects frozen, the youngest generation collected every ``YOUNGEST_THRESHOLD`` allocations),
    # and put back when the seeds are done. What a seed gives does not depend on when the
    # collector runs (its report is the same in a worker process of another history); the
    # collections of a Pi Session Continuity exploration took 0.26 of 4.6 CPU-s, 0.19 so.
    restore = tune_for_scenarios() if isinstance(pool.executor, InProcessExecutor) else None
    try:
        yield from run_tasks(
            pool, partial(explore_seed, settings=settings), seeds, name=lambda seed: f"seed-{seed}"
        )
    finally:
        if restore is not None:
            restore()


def summarise(system: str, reports: list[SeedReport], wall: float, target: str = "sim") -> dict[str, Any]:
    """Throughput, failures, liveness and what the plug-in adds up, over all seeds (on real Pi:
    the time each target took, and the median ratio real/simulated per seed)."""
    operations = sum(r.operations for r in reports)
    violations = Counter(str(r.violation["invariant"]) for r in reports if r.violation)
    summary: dict[str, Any] = {
        "seeds": len(reports),
        "failingSeeds": [r.seed for r in reports if not r.ok],
        "violations": dict(violations),
        "operations": operations,
        "wallSeconds": round(wall, 3),
        "runSeconds": round(sum(r.seconds for r in reports), 3),
        "operationsPerSecond": round(operations / wall, 1) if wall else 0.0,
        "seedsPerSecond": round(len(reports) / wall, 2) if wall else 0.0,
        "liveness": dict(Counter(r.liveness.split(" (")[0] for r in reports)),
    }
    if target == "pi":
        summary.update(differential_times([r.cost for r in reports]))
    else:
        summary.update(plugin_named(system).summarise([r.cost for r in reports]))
    summary["cpus"] = os.cpu_count()
    return summary
