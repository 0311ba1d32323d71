"""One seed, end to end: expand, run, check determinism, minimise, write the regression.

:func:`explore_seed` is what the ``explore`` command runs per seed, in the same process or in
a worker of a ``ProcessPoolExecutor``; it returns a :class:`SeedReport` of plain data. A
failure is minimised (:mod:`.shrink`) and written under the output directory as

* ``<name>.yaml``: the healed, minimised scenario (``pi-continuity-harness replay`` runs it);
* ``<name>.trace.jsonl``: its trace, which ``replay --expect-trace`` reproduces byte for byte
  when run in the same work directory (paths inside Briefs are absolute, so their hashes are);
* ``<name>.feature``: a Gherkin regression that replays the file and asserts the invariant.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands._simulation import first_difference
from pi_continuity_harness.explore.generate import ExploreCase
from pi_continuity_harness.explore.invariants import INVARIANTS, Violation
from pi_continuity_harness.explore.runner import CaseResult, case_for_seed, run_case
from pi_continuity_harness.explore.shrink import minimise
from pi_continuity_harness.scenario.document import Scenario, dump_scenario
from pi_continuity_harness.simulator.simulation import simulate

__all__ = ["SeedReport", "explore_seed", "feature_text", "write_failure"]


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


def explore_seed(
    seed: int,
    steps: int,
    extension: str,
    *,
    out_dir: str | None,
    work_root: str,
    check_determinism: bool = False,
    minimise_failures: bool = True,
) -> SeedReport:
    """Expand ``seed``, run it with every invariant, and handle a failure."""
    case = case_for_seed(seed, steps)
    workdir = Path(work_root) / f"seed-{seed}"
    result = run_case(case, implementation=extension, workdir=workdir)
    report = SeedReport(
        seed=seed,
        options=case.options.describe(),
        swarm=case.options.to_json(),
        ok=not result.failed,
        operations=result.operations_run,
        records=result.records,
        seconds=round(result.seconds, 4),
        liveness=result.liveness,
        violation=result.first.to_json() if result.first else None,
        harness_errors=result.harness_errors,
        cost=result.cost(),
    )
    if check_determinism:
        again = run_case(case, implementation=extension, workdir=workdir)
        difference = first_difference(result.trace, again.trace)
        report.determinism = "identical" if difference is None else difference
        if difference is not None:
            report.ok = False
    if result.failed and result.first is not None and out_dir is not None:
        if minimise_failures:
            shrunk = minimise(case, result, implementation=extension, workdir=workdir)
            final_case, final, runs, seconds = shrunk.case, shrunk.result, shrunk.runs, shrunk.seconds
        else:
            final_case, final, runs, seconds = case, result, 0, 0.0
        report.minimised = write_failure(
            Path(out_dir), final_case, final, extension=extension, original=len(case.operations)
        )
        report.minimised.update(runs=runs, seconds=round(seconds, 3))
    if report.ok:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _name(case: ExploreCase, violation: Violation) -> str:
    return f"{case.name}-{violation.invariant.replace('_', '-')}"


def write_failure(
    out_dir: Path, case: ExploreCase, result: CaseResult, *, extension: str, original: int
) -> dict[str, Any]:
    """Write the scenario, its trace and a regression feature; return their paths."""
    violation = result.first
    assert violation is not None
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    name = _name(case, violation)
    boundary = result.first_healed_operation if violation.invariant == "liveness" else None
    description = (
        f"Found by pi-continuity-harness explore against {extension} (seed {case.seed}), minimised from "
        f"{original} to {len(case.operations)} fault-phase operations. First violation: {violation}."
        + (
            f" Faults healed before operation {boundary} (the liveness phase)."
            if boundary is not None
            else ""
        )
    )
    scenario = result.healed.model_copy(update={"name": name, "description": description})
    yaml_path = out_dir / f"{name}.yaml"
    yaml_path.write_text(dump_scenario(scenario), encoding="utf-8")
    workdir = out_dir / "runs" / name
    trace_path = out_dir / f"{name}.trace.jsonl"
    first = simulate(scenario, workdir=workdir, implementation=extension).trace_text()
    trace_path.write_text(first, encoding="utf-8")
    second = simulate(scenario, workdir=workdir, implementation=extension).trace_text()
    feature_path = out_dir / f"{name}.feature"
    feature_path.write_text(
        feature_text(name, scenario, violation, yaml_path.name, boundary), encoding="utf-8"
    )
    command = (
        f"pi-continuity-harness replay {yaml_path} --workdir {workdir} --expect-trace {trace_path} "
        f"--extension {extension}"
    )
    return {
        "name": name,
        "invariant": violation.invariant,
        "message": violation.message,
        "operationsBefore": original,
        "operationsAfter": len(scenario.operations),
        "yaml": str(yaml_path),
        "feature": str(feature_path),
        "trace": str(trace_path),
        "replay": command,
        "replayReproduces": first_difference(first, second) is None,
    }


def feature_text(
    name: str, scenario: Scenario, violation: Violation, file_name: str, boundary: int | None
) -> str:
    """A regression feature that replays ``file_name`` and asserts the violated invariant."""
    doc = INVARIANTS[violation.invariant].doc if violation.invariant in INVARIANTS else ""
    if violation.invariant == "liveness":
        doc = "the first threshold compaction after the faults heal commits a valid Brief (spec §5)."
    lines = [
        "@rules @needs-trace-faults",
        f"Feature: {name}",
        f"  Found by pi-continuity-harness explore and minimised to {len(scenario.operations)} operations.",
        f"  Invariant {violation.invariant}: {doc}",
        f"  First violation seen: {json.dumps(violation.message)[1:-1]}",
        "",
        f"  Scenario: {name} keeps {violation.invariant}",
        f'    Given the scenario file "{file_name}"',
        "    When its operations run",
    ]
    if boundary is not None:
        lines.append(f'    Then invariant "liveness" holds from operation {boundary}')
    else:
        lines.append(f'    Then invariant "{violation.invariant}" holds')
    lines.append("    And every invariant holds")
    return "\n".join(lines) + "\n"
