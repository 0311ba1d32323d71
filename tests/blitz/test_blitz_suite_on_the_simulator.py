"""The pi-blitz-handoff features, run against the handoff reference on the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import SuiteRun, run_suite

HANDOFF = "pi_continuity_harness.reference.blitz:extension"


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    """The whole suite against the handoff reference: one run for the two tests that read it
    (each ran it, 34 s of the test command apiece)."""
    return run_suite(target="sim", extension=HANDOFF, workdir=tmp_path_factory.mktemp("all"))


@pytest.mark.slow
def test_every_handoff_scenario_passes_against_the_handoff_reference(everything: SuiteRun) -> None:
    own = [r for r in everything.results if r.system == "pi-blitz-handoff"]
    problems = [f"{r.assertion} :: {r.name}: {r.status} {r.detail}" for r in own if r.status != "passed"]
    assert own and not problems, "\n".join(problems)
    # Every one is tagged `blitz`, so `--tags blitz` selects them all.
    assert [r.name for r in own if "blitz" not in r.tags] == []


@pytest.mark.slow
def test_the_other_systems_features_are_not_run_against_it(everything: SuiteRun, tmp_path: Path) -> None:
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
