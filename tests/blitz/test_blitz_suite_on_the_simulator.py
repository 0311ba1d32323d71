"""The pi-blitz-handoff features, run against the handoff reference on the simulator."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.features.suite import run_suite

HANDOFF = "pi_continuity_harness.reference.blitz:extension"


def test_every_handoff_scenario_passes_against_the_handoff_reference(tmp_path: Path) -> None:
    run = run_suite(target="sim", extension=HANDOFF, tags="blitz", workdir=tmp_path / "runs")
    own = [r for r in run.results if r.system == "pi-blitz-handoff"]
    problems = [f"{r.assertion} :: {r.name}: {r.status} {r.detail}" for r in own if r.status != "passed"]
    assert own and not problems, "\n".join(problems)


def test_the_other_systems_features_are_not_run_against_it(tmp_path: Path) -> None:
    everything = run_suite(target="sim", extension=HANDOFF, workdir=tmp_path / "all")
    assert everything.results and {r.system for r in everything.results} == {"pi-blitz-handoff"}
    smoke_only = run_suite(target="sim", extension=HANDOFF, tags="smoke", workdir=tmp_path / "smoke")
    assert smoke_only.results == []
