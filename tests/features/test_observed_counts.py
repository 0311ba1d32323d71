"""A step's mark (``steps/common.py``: ``current_mark``) counts what an observation would hold
without making one on the simulator (``SimTarget.observed_counts``): the counts are the lengths
of the observation made at the same moment, in every step of both systems' suites and after
Pi stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import CrashOp, PromptOp
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import ObservedCounts


@pytest.mark.slow
@pytest.mark.parametrize("extension", ["reference", "blitz"])
def test_every_marks_counts_are_the_lengths_of_the_observation_made_then(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, extension: str
) -> None:
    counted: list[tuple[ObservedCounts, ObservedCounts]] = []
    original = World.observed_counts

    def checked(self: World) -> ObservedCounts:
        counts = original(self)
        counted.append((counts, ObservedCounts.of(self.start().observe())))
        return counts

    monkeypatch.setattr(World, "observed_counts", checked)
    run = run_suite(target="sim", extension=extension, workdir=tmp_path / "runs")
    assert run.results and all(r.status in ("passed", "skipped") for r in run.results)
    assert len(counted) > 100
    assert [fresh for _, fresh in counted] == [counts for counts, _ in counted]


def _target(tmp_path: Path) -> SimTarget:
    target = SimTarget("reference", tmp_path / "run")
    scenario = parse_scenario(
        {"name": "counts", "model": {"agent": [{"text": "one"}, {"text": "two"}]}}, "counts"
    )
    target.start(scenario)
    return target


def test_the_counts_are_the_observations_lengths_while_pi_runs_and_after_it_stopped(
    tmp_path: Path,
) -> None:
    target = _target(tmp_path)
    assert target.observed_counts() == ObservedCounts.of(target.observe())
    target.perform(PromptOp.model_validate({"prompt": {"text": "hello"}}))
    counts = target.observed_counts()
    assert counts == ObservedCounts.of(target.observe())
    assert counts is not None and counts.session_events > 0 and counts.model_requests == 1
    target.close()
    # Pi quit after writing its session file: only the observation reads its entries.
    assert target.simulation.host.runtime is None
    assert target.simulation.host.last_session_file
    assert target.observed_counts() is None
    world = World(name="counts", make_target=lambda: target)
    world.target = target
    assert world.observed_counts() == ObservedCounts.of(target.observe())


def test_a_crashed_pis_counts_are_the_observations_lengths(tmp_path: Path) -> None:
    target = _target(tmp_path)
    target.perform(PromptOp.model_validate({"prompt": {"text": "hello"}}))
    target.perform(CrashOp.model_validate({"crash": {}}))
    # A crashed Pi answers nothing: only the observation reads what it left (its session file).
    assert target.observed_counts() is None
    world = World(name="counts", make_target=lambda: target)
    world.target = target
    assert world.observed_counts() == ObservedCounts.of(target.observe())
    target.close()
