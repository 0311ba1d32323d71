"""The explorer's seeds, runs and invariants against the reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_continuity_harness.explore.continuity.generate import ACTIONS, case_json, generate_case
from pi_continuity_harness.explore.continuity.invariants import INVARIANTS, describe_invariants
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.scenario.document import dump_scenario, load_scenario
from pi_continuity_harness.scenario.model_script import SynthesisReply
from pi_continuity_harness.simulator.simulation import simulate


def test_a_seed_always_expands_to_the_same_case() -> None:
    assert case_json(generate_case(7, 30)) == case_json(generate_case(7, 30))
    assert case_json(generate_case(7, 30)) != case_json(generate_case(8, 30))


def test_seeds_draw_their_own_swarm_options() -> None:
    options = [generate_case(seed, 0).options for seed in range(40)]
    assert len({o.window for o in options}) > 1
    assert len({o.synthesis_fault_rate for o in options}) > 1
    assert any(o.competitor for o in options) and any(o.competitor is None for o in options)
    assert any(o.fs_faults for o in options) and any(not o.fs_faults for o in options)
    assert all(set(o.weights) == set(ACTIONS) for o in options)
    assert "seed 3:" in options[3].describe()


def test_faults_are_data_whose_simplest_value_is_no_fault() -> None:
    case = generate_case(11, 40)
    assert all(isinstance(reply, SynthesisReply) for reply in case.synthesis)
    assert SynthesisReply() == SynthesisReply(kind="valid")
    assert not case.synthesis or case.synthesis[-1] != SynthesisReply(), (
        "trailing no-fault replies are trimmed"
    )


def test_every_invariant_is_documented_and_cites_the_spec() -> None:
    names = [name for name, _ in describe_invariants()]
    assert len(names) >= 25 and names[-1] == "liveness"
    assert names[:-1] == list(INVARIANTS)
    for name, doc in describe_invariants():
        assert re.search(r"spec §\d+|§\d+", doc), f"{name} does not cite the spec: {doc}"
    table = (Path(__file__).resolve().parents[2] / "docs" / "exploration-and-mutants.md").read_text("utf-8")
    assert not [name for name in names if f"`{name}`" not in table], "invariants missing from the docs"


@pytest.mark.parametrize("seed", [0, 1, 5, 12, 21, 29])
def test_the_reference_keeps_every_invariant(seed: int, tmp_path: Path) -> None:
    case = case_for_seed(seed, 30)
    result = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "run")
    assert not result.failed, [str(v) for v in result.violations] + result.harness_errors
    assert result.liveness == "ok" or result.liveness.startswith("not applicable")


def test_the_healed_scenario_replays_the_run_byte_for_byte(tmp_path: Path) -> None:
    case = case_for_seed(12, 30)
    workdir = tmp_path / "run"
    result = run_case(PLUGIN, case, implementation="reference", workdir=workdir)
    path = tmp_path / "healed.yaml"
    path.write_text(dump_scenario(result.healed), encoding="utf-8")
    replayed = simulate(load_scenario(path), workdir=workdir)
    assert replayed.trace_text() == result.trace


def test_a_run_is_deterministic(tmp_path: Path) -> None:
    case = case_for_seed(3, 25)
    first = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "run").trace
    second = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "run").trace
    assert first == second


def test_fault_cost_is_reported_per_failing_check_point(tmp_path: Path) -> None:
    costs = [
        run_case(
            PLUGIN, case_for_seed(seed, 30), implementation="reference", workdir=tmp_path / "run"
        ).metrics
        for seed in (1, 5, 19)
    ]
    assert any(c["failing"] for c in costs)
    for cost in costs:
        assert cost["synthesisAttempts"]["max"] <= 1, "a check point must never loop on synthesis"
