"""Differential exploration: each seed's case on the simulator and on real Pi, compared whole.

:func:`explore_differential_seed` is the per-seed work of ``explore --target pi`` for a Python
implementation, a pure function of ``(seed, settings)`` like the simulator's
:func:`~pi_continuity_harness.explore.engine.explore_seed`, so it runs in any worker. It plays
the seed's case twice, with the implementation under test and with no extension (Pi's own
summarizer), each on both targets (:func:`~pi_continuity_harness.targets.differential.play_both`),
and fails on the first difference the ledger does not name. A failure is minimised with delta
debugging over the case's actions (every candidate is played on both targets again and must
differ in the same channel) and written as a scenario YAML and a ``.feature`` that replays it on
both targets (``When it runs on the simulator and on real Pi`` / ``Then both targets observe
the same``).
"""

from __future__ import annotations

import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.differential.generate import DiffCase, differential_case
from pi_continuity_harness.explore.shrink import ddmin
from pi_continuity_harness.rules import HOST_TAG
from pi_continuity_harness.scenario.document import dump_scenario
from pi_continuity_harness.targets import make_target
from pi_continuity_harness.targets.differential import BothRuns, play_both
from pi_continuity_harness.targets.target import Target

__all__ = [
    "COMMANDS",
    "DIFFERENTIAL_TAGS",
    "DiffRun",
    "differential_feature",
    "explore_differential_seed",
    "run_differential",
]

#: The extension commands each system's implementation offers to the generated cases.
COMMANDS: dict[str, tuple[str, ...]] = {
    "pi-session-continuity": ("/continuity status", "/continuity checkpoint"),
    "pi-blitz-handoff": ("/sh help", "/sh cancel", "/sh start"),
}
#: Tags of a differential regression feature: it tests Pi's own behaviour (the host), on both
#: targets from any suite run (skipped, with the reason, where real Pi is not installed).
DIFFERENTIAL_TAGS = ("differential", HOST_TAG)
#: The invariant a differential failure breaks.
TARGETS_AGREE = "targets_agree"


@dataclass
class DiffRun:
    """One case played on both targets: the first channel that differs, if any."""

    case: DiffCase
    runs: BothRuns
    seconds: float

    @property
    def channel(self) -> str | None:
        unexplained = self.runs.unexplained
        return unexplained[0].channel if unexplained else None

    def message(self) -> str:
        unexplained = self.runs.unexplained
        if not unexplained:
            return ""
        first = unexplained[0]
        return f"{first.channel} differs: " + " | ".join(first.detail[:6])


def _maker(implementation: str, system: str) -> Any:
    def make(name: str, workdir: Path) -> Target:
        return make_target("sim" if name == "sim" else "pi", implementation, workdir, seed=0, system=system)

    return make


def run_differential(case: DiffCase, *, implementation: str, system: str, workdir: Path) -> DiffRun:
    """Play ``case`` on both targets under ``workdir`` (emptied first)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    runs = play_both(case.scenario(), workdir, make=_maker(implementation, system))
    return DiffRun(case, runs, time.perf_counter() - started)


def _minimise(
    failure: DiffRun, *, implementation: str, system: str, workdir: Path, max_runs: int, max_seconds: float
) -> tuple[DiffRun, int]:
    """ddmin over the actions while the same channel still differs first."""
    channel = failure.channel
    best = failure
    runs = 0
    started = time.perf_counter()

    def budget() -> bool:
        return runs < max_runs and time.perf_counter() - started < max_seconds

    def fails(actions: list[Any]) -> bool:
        nonlocal runs, best
        runs += 1
        candidate = best.case.without(actions=tuple(actions))
        result = run_differential(candidate, implementation=implementation, system=system, workdir=workdir)
        if result.channel == channel:
            best = result
            return True
        return False

    ddmin(list(failure.case.actions), fails, budget=budget)
    return best, runs


def differential_feature(name: str, yaml_name: str, message: str, extension: str) -> str:
    """A regression feature that replays ``yaml_name`` on both targets and wants them to agree."""
    return "\n".join(
        [
            " ".join(f"@{tag}" for tag in DIFFERENTIAL_TAGS),
            f"Feature: {name}",
            "  Found by pi-continuity-harness explore --target pi: the simulator and real Pi 1.6",
            f"  observed this scenario differently ({extension}).",
            f"  First difference seen: {message[:300]}",
            "",
            f"  Scenario: {name} plays the same on both targets",
            f'    Given the scenario file "{yaml_name}"',
            "    When it runs on the simulator and on real Pi",
            "    Then both targets observe the same",
            "",
        ]
    )


def replay_command(feature_path: Path, extension: str) -> str:
    """The command that replays a minimised differential feature: ``--target`` makes pytest
    collect a ``.feature`` file (``pytest_collect_file``), and the scenario plays on both targets
    whichever it names (``tests/realpi/test_differential_feature_replay.py``)."""
    return shlex.join(["pytest", str(feature_path), "--target", "pi", "--extension", extension])


def _write_failure(run: DiffRun, out_dir: Path, extension: str, original: int) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    channel = run.channel or "started"
    name = f"{run.case.name}-{channel.replace('_', '-')}"
    scenario = run.case.scenario().model_copy(update={"name": name})
    yaml_path = out_dir / f"{name}.yaml"
    yaml_path.write_text(dump_scenario(scenario), encoding="utf-8")
    feature_path = out_dir / f"{name}.feature"
    feature_path.write_text(
        differential_feature(name, yaml_path.name, run.message(), extension), encoding="utf-8"
    )
    return {
        "name": name,
        "invariant": TARGETS_AGREE,
        "message": run.message(),
        "operationsBefore": original,
        "operationsAfter": len(run.case.operations),
        "yaml": str(yaml_path),
        "feature": str(feature_path),
        "replay": replay_command(feature_path, extension),
    }


def explore_differential_seed(seed: int, settings: Any) -> Any:
    """The per-seed work of ``explore --target pi`` for a Python implementation (see the module
    docstring); ``settings`` is the engine's ``ExploreSettings``, the result its ``SeedReport``."""
    from pi_continuity_harness.explore.engine import SeedReport  # noqa: PLC0415  (engine imports this module)

    system = settings.system
    commands = COMMANDS.get(system, ())
    # Short directory names: real Pi's machine root is padded to a fixed length
    # (``scenario/layout.py``), so the run directory must leave room for the padding.
    workdir = Path(settings.work_root) / f"s{seed}"
    report: SeedReport | None = None
    total = 0.0
    cost: dict[str, Any] = {"simSeconds": 0.0, "piSeconds": 0.0, "runs": 0}
    operations = 0
    for with_extension in (True, False):
        case = differential_case(seed, settings.steps, with_extension=with_extension, commands=commands)
        run = run_differential(
            case,
            implementation=settings.extension,
            system=system,
            workdir=workdir / ("x" if with_extension else "n"),
        )
        total += run.seconds
        operations += len(case.operations)
        cost["simSeconds"] += run.runs.seconds.get("sim", 0.0)
        cost["piSeconds"] += run.runs.seconds.get("pi", 0.0)
        cost["runs"] += 1
        if run.channel is None:
            continue
        report = SeedReport(
            seed=seed,
            options=case.describe(),
            swarm=case.options_json(),
            ok=False,
            operations=operations,
            records=0,
            seconds=round(total, 4),
            liveness="not applicable (differential)",
            violation={"invariant": TARGETS_AGREE, "message": run.message(), "operation": None, "seq": None},
            cost=cost,
        )
        if settings.out_dir is not None:
            final, runs = run, 0
            minimising = time.perf_counter()
            if settings.minimise_failures:
                final, runs = _minimise(
                    run,
                    implementation=settings.extension,
                    system=system,
                    workdir=workdir / "m",
                    max_runs=40,
                    max_seconds=900.0,
                )
            report.minimised = _write_failure(
                final, Path(settings.out_dir), settings.extension, len(case.operations)
            )
            # (as ``engine.explore_seed`` reports a minimisation: without ``seconds`` the summary
            # printed "(0 s)" after minutes of real-Pi runs)
            report.minimised.update(runs=runs, seconds=round(time.perf_counter() - minimising, 3))
        break
    if report is None:
        report = SeedReport(
            seed=seed,
            options=differential_case(
                seed, settings.steps, with_extension=True, commands=commands
            ).describe(),
            swarm={"seed": seed},
            ok=True,
            operations=operations,
            records=0,
            seconds=round(total, 4),
            liveness="not applicable (differential)",
            cost=cost,
        )
        shutil.rmtree(workdir, ignore_errors=True)
    cost["simSeconds"] = round(cost["simSeconds"], 3)
    cost["piSeconds"] = round(cost["piSeconds"], 3)
    return report
