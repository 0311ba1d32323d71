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

Then it plays the seed's case of the system's explorer plug-in (the case ``explore --target
sim`` checks: synthesis faults, settings, restarts, crashes, model switches, planted
artifacts), without what only the simulator can do (:func:`~.onpi.real_pi_case`), with the
implementation on both targets, compared the same way (:func:`system_case`, :func:`_plays`).
Until then the continuity paths of the simulator were judged by real Pi only where the suite
looked; the first such runs (7 December 2026) found differences in the comparison, the
simulator, the simulator's target and the reference (docs/exploration-and-mutants.md, "The
system's case too"). A failure there is minimised with the plug-in's shrinking plan, every
candidate played on both targets and kept while the same channel differs first. A system case
in a mode real Pi cannot be observed in (``print``, ``json``, ``tui``) is not played, nor a
system's whose plug-in says why its cases cannot agree on both targets
(``ExplorerPlugin.not_compared_on_both_targets``: blitz handoff's wall-clock timers), and the
seed's cost says so (``systemCase``).
"""

from __future__ import annotations

import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.differential.generate import differential_case
from pi_continuity_harness.explore.differential.onpi import real_pi_case
from pi_continuity_harness.explore.plugin import Violation
from pi_continuity_harness.explore.plugins import plugin_named
from pi_continuity_harness.explore.runner import CaseResult
from pi_continuity_harness.explore.shrink import ddmin, minimise
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
    "system_case",
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
    """One case played on both targets: the first channel that differs, if any. The case is a
    :class:`DiffCase` or a case of the system's explorer plug-in (:func:`system_case`)."""

    case: Any
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

    def result(self, implementation: str, channel: str | None) -> CaseResult:
        """The run as the shrinker reads one (:func:`~..shrink.minimise`): failing
        :data:`TARGETS_AGREE` only while ``channel`` is the first that differs."""
        failed = self.channel is not None and self.channel == channel
        return CaseResult(
            case=self.case,
            implementation=implementation,
            violations=[Violation(TARGETS_AGREE, self.message(), None)] if failed else [],
            harness_errors=[],
            operations_run=len(self.case.operations),
            liveness="not applicable (differential)",
            healed=self.case.scenario(),
            first_healed_operation=None,
            trace_source="",
            seconds=self.seconds,
        )


def _maker(implementation: str, system: str) -> Any:
    def make(name: str, workdir: Path) -> Target:
        return make_target("sim" if name == "sim" else "pi", implementation, workdir, seed=0, system=system)

    return make


def run_differential(case: Any, *, implementation: str, system: str, workdir: Path) -> DiffRun:
    """Play ``case`` (a :class:`DiffCase` or a plug-in's case) on both targets under
    ``workdir`` (emptied first)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    runs = play_both(case.scenario(), workdir, make=_maker(implementation, system))
    return DiffRun(case, runs, time.perf_counter() - started)


def system_case(system: str, seed: int, steps: int) -> Any:
    """The seed's case of the system's explorer plug-in, as real Pi can play it."""
    return real_pi_case(plugin_named(system).case(seed, steps))


def _minimise_system_case(
    failure: DiffRun, *, implementation: str, system: str, workdir: Path, max_runs: int, max_seconds: float
) -> tuple[DiffRun, int]:
    """The plug-in's shrinking plan (:func:`~..shrink.minimise`), every candidate on both
    targets, kept while the same channel differs first."""
    channel = failure.channel
    best = failure

    def replay(candidate: Any) -> CaseResult:
        nonlocal best
        run = run_differential(candidate, implementation=implementation, system=system, workdir=workdir)
        result = run.result(implementation, channel)
        if result.failed:
            best = run  # ``minimise`` keeps exactly the candidates that fail so
        return result

    shrunk = minimise(
        plugin_named(system),
        failure.case,
        failure.result(implementation, channel),
        implementation=implementation,
        workdir=workdir,
        max_runs=max_runs,
        max_seconds=max_seconds,
        run=replay,
    )
    return best, shrunk.runs


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


#: A real-Pi scenario mode (``PiTarget.start``: Pi is driven over RPC).
_PLAYABLE_MODE = "rpc"


def _plays(seed: int, settings: Any) -> tuple[list[tuple[str, Any]], str | None]:
    """What the seed plays on both targets, in order: the host-behaviour case with the
    implementation (``x``) and with no extension (``n``), then the system's case (``s``) when
    it can agree on both targets and real Pi can play its mode; else why it is not played."""
    commands = COMMANDS.get(settings.system, ())
    plays: list[tuple[str, Any]] = [
        (label, differential_case(seed, settings.steps, with_extension=with_extension, commands=commands))
        for label, with_extension in (("x", True), ("n", False))
    ]
    reason = plugin_named(settings.system).not_compared_on_both_targets
    if reason is not None:
        return plays, f"not played: {reason}"
    case = system_case(settings.system, seed, settings.steps)
    mode = case.scenario().mode
    if mode != _PLAYABLE_MODE:
        return plays, f"not played: real Pi is driven over RPC, the case's mode is {mode}"
    return [*plays, ("s", case)], None


def explore_differential_seed(seed: int, settings: Any) -> Any:
    """The per-seed work of ``explore --target pi`` for a Python implementation (see the module
    docstring); ``settings`` is the engine's ``ExploreSettings``, the result its ``SeedReport``."""
    from pi_continuity_harness.explore.engine import SeedReport  # noqa: PLC0415  (engine imports this module)

    system = settings.system
    # Short directory names: real Pi's machine root is padded to a fixed length
    # (``scenario/layout.py``), so the run directory must leave room for the padding.
    workdir = Path(settings.work_root) / f"s{seed}"
    report: SeedReport | None = None
    total = 0.0
    plays, not_played = _plays(seed, settings)
    cost: dict[str, Any] = {"simSeconds": 0.0, "piSeconds": 0.0, "runs": 0}
    if not_played is not None:
        cost["systemCase"] = not_played
    operations = 0
    for label, case in plays:
        run = run_differential(
            case, implementation=settings.extension, system=system, workdir=workdir / label
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
                shrink = _minimise_system_case if label == "s" else _minimise
                final, runs = shrink(
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
            options=plays[0][1].describe(),
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
