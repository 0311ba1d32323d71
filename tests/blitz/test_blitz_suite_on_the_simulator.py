"""The pi-blitz-handoff features, run against the handoff reference on the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite

HANDOFF = "pi_continuity_harness.reference.blitz:extension"


@pytest.mark.slow
def test_every_handoff_scenario_passes_against_the_handoff_reference(tmp_path: Path) -> None:
    run = run_suite(target="sim", extension=HANDOFF, tags="blitz", workdir=tmp_path / "runs")
    own = [r for r in run.results if r.system == "pi-blitz-handoff"]
    problems = [f"{r.assertion} :: {r.name}: {r.status} {r.detail}" for r in own if r.status != "passed"]
    assert own and not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_other_systems_features_are_not_run_against_it(tmp_path: Path) -> None:
    everything = run_suite(target="sim", extension=HANDOFF, workdir=tmp_path / "all")
    assert everything.results and {r.system for r in everything.results} == {"pi-blitz-handoff"}
    # `smoke` selects the blitz smoke set only: none of Pi Session Continuity's 13 smoke features.
    smoke_only = run_suite(target="sim", extension=HANDOFF, tags="smoke", workdir=tmp_path / "smoke")
    assert {r.system for r in smoke_only.results} == {"pi-blitz-handoff"}
    assert sorted(r.assertion for r in smoke_only.results) == [
        "cancel-removes-only-the-owned-reservation",
        "dossier-retained-when-deletion-is-off",
        "finish-rejects-stale-and-duplicate-ids",
        "get-returns-a-stable-snapshot",
        "model-start-is-one-of-three-routes",
        "prompts-deferred-from-writing-are-kept-in-order",
        "recover-executes-then-deletes-after-a-completed-turn",
        "sh-start-transfers-to-a-parent-linked-session",
    ]
    assert all(r.status == "passed" for r in smoke_only.results)
