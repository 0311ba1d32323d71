"""Exploring an implementation on real Pi alone: ``explore --target pi --extension ext.ts``.

A TypeScript implementation cannot run in the simulator, so there is nothing to compare: each
seed expands with the system's plug-in (the same cases as on the simulator, without the faults only
the simulator can inject: filesystem faults, crash and tamper rules at trace records; and without
a liveness phase, since nothing heals on real Pi) and plays on a real Pi process through the
real-Pi target's ``run_checked``, which checks, after every operation, every invariant the real
target's observations allow (``explore.observed``). A failure is minimised with the plug-in's
shrinking plan (every candidate a real-Pi run) and written as a scenario YAML and a ``.feature``
that replays it on real Pi (``Given the scenario file`` / ``When its operations run`` / ``Then
invariant "..." holds``).
"""

from __future__ import annotations

import shlex
import shutil
import time
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.plugin import ExplorerPlugin, Violation
from pi_continuity_harness.explore.plugins import plugin_named
from pi_continuity_harness.explore.runner import CaseResult
from pi_continuity_harness.explore.shrink import minimise
from pi_continuity_harness.scenario.document import dump_scenario
from pi_continuity_harness.targets import make_target

__all__ = ["ON_PI_TAGS", "explore_on_pi_seed", "run_on_pi"]

#: Tags of a regression found on real Pi: it replays with the observed checker (real Pi only).
ON_PI_TAGS = ("needs-observed-checker",)


def real_pi_case(case: Any) -> Any:
    """``case`` without what only the simulator can do (trace-level faults, healing)."""
    changes: dict[str, Any] = {}
    for name in ("fs", "crash", "tamper", "liveness"):
        if hasattr(case, name):
            changes[name] = ()
    return case.without(**changes) if changes else case


def run_on_pi(case: Any, *, implementation: str, system: str, workdir: Path) -> CaseResult:
    """Play ``case`` on real Pi with the observed invariants; stop at the first violation."""
    shutil.rmtree(workdir, ignore_errors=True)
    started = time.perf_counter()
    target = make_target("pi", implementation, workdir, system=system)
    try:
        checked = target.run_checked(case.scenario(operations=case.operations))
    finally:
        target.close()
    violations = [_violation(name, seen) for name, seen in checked.violations]
    return CaseResult(
        case=case,
        implementation=implementation,
        violations=violations,
        harness_errors=list(checked.harness_errors),
        operations_run=len(case.operations) if not violations else _operation(violations[0]) + 1,
        liveness="not applicable (real Pi)",
        healed=case.scenario(operations=case.operations),
        first_healed_operation=None,
        trace_source="",
        seconds=time.perf_counter() - started,
    )


def _violation(name: str, seen: str) -> Violation:
    """A violation from ``run_checked``'s ``(name, "<name> (operation N): problem")``."""
    operation = None
    rest = seen.removeprefix(name)
    if rest.startswith(" (operation "):
        number, _, rest = rest[len(" (operation ") :].partition(")")
        operation = int(number) if number.isdigit() else None
    return Violation(name, rest.removeprefix(": ").strip(), operation)


def _operation(violation: Violation) -> int:
    return violation.operation if violation.operation is not None else -1


def feature_text(
    plugin: ExplorerPlugin[Any], name: str, violation: Violation, yaml_name: str, extension: str
) -> str:
    spec = plugin.observed_invariant(violation.invariant)
    doc = spec.doc if spec is not None else ""
    tags = [t for t in plugin.feature_tags if t != "needs-trace-faults"] + list(ON_PI_TAGS)
    return "\n".join(
        [
            " ".join(f"@{tag}" for tag in tags),
            f"Feature: {name}",
            f"  Found by pi-continuity-harness explore --target pi against {extension}.",
            f"  Invariant {violation.invariant}: {doc[:400]}",
            f"  First violation seen: {violation.message[:300]}",
            "",
            f"  Scenario: {name} keeps {violation.invariant}",
            f'    Given the scenario file "{yaml_name}"',
            "    When its operations run",
            f'    Then invariant "{violation.invariant}" holds',
            "    And every invariant holds",
            "",
        ]
    )


def explore_on_pi_seed(seed: int, settings: Any) -> Any:
    """The per-seed work of ``explore --target pi`` for an implementation the simulator cannot
    run (a TypeScript file), a pure function of ``(seed, settings)``; returns the engine's
    ``SeedReport``."""
    from pi_continuity_harness.explore.engine import SeedReport  # noqa: PLC0415  (engine imports this module)

    plugin = plugin_named(settings.system)
    case = real_pi_case(plugin.case(seed, settings.steps))
    workdir = Path(settings.work_root) / f"seed-{seed}"
    result = run_on_pi(
        case, implementation=settings.extension, system=settings.system, workdir=workdir / "run"
    )
    report = SeedReport(
        seed=seed,
        options=case.describe(),
        swarm=case.options_json(),
        ok=not result.failed,
        operations=result.operations_run,
        records=0,
        seconds=round(result.seconds, 4),
        liveness=result.liveness,
        violation=result.first.to_json() if result.first else None,
        harness_errors=result.harness_errors,
        cost={"piSeconds": round(result.seconds, 3)},
    )
    if result.failed and result.first is not None and settings.out_dir is not None:
        final_case, final = case, result
        runs = 0
        if settings.minimise_failures:

            def replay(candidate: Any) -> CaseResult:
                return run_on_pi(
                    candidate,
                    implementation=settings.extension,
                    system=settings.system,
                    workdir=workdir / "shrink",
                )

            shrunk = minimise(
                plugin,
                case,
                result,
                implementation=settings.extension,
                workdir=workdir / "shrink",
                max_runs=40,
                max_seconds=900.0,
                run=replay,
            )
            final_case, final, runs = shrunk.case, shrunk.result, shrunk.runs
        report.minimised = _write(
            plugin, Path(settings.out_dir), final_case, final, settings.extension, len(case.operations)
        )
        report.minimised["runs"] = runs
    if report.ok:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _write(
    plugin: ExplorerPlugin[Any], out_dir: Path, case: Any, result: CaseResult, extension: str, original: int
) -> dict[str, Any]:
    violation = result.first
    assert violation is not None
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"{case.name}-{violation.invariant.replace('_', '-')}-on-pi"
    scenario = case.scenario(operations=case.operations).model_copy(update={"name": name})
    yaml_path = out_dir / f"{name}.yaml"
    yaml_path.write_text(dump_scenario(scenario), encoding="utf-8")
    feature_path = out_dir / f"{name}.feature"
    feature_path.write_text(
        feature_text(plugin, name, violation, yaml_path.name, extension), encoding="utf-8"
    )
    return {
        "name": name,
        "invariant": violation.invariant,
        "message": violation.message,
        "operationsBefore": original,
        "operationsAfter": len(case.operations),
        "yaml": str(yaml_path),
        "feature": str(feature_path),
        "replay": shlex.join(["pytest", str(feature_path), "--target", "pi", "--extension", extension]),
    }
