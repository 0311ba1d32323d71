"""Runaway scenarios end (issue 12 item 5): a deterministic budget per simulated scenario.

The case of the issue first: an implementation that sends every continuation twice kept the
simulated host compacting and continuing forever (``runaway_extension.py``). With a budget the
scenario fails, naming the budget and what was still running, at the same record on every run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario import dump_scenario, parse_scenario
from pi_continuity_harness.scenario.budget import DEFAULT_OPERATIONS, Budget, BudgetOverride
from pi_continuity_harness.simulator import simulate
from pi_continuity_harness.simulator.meter import BudgetExceededError
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.targets import TargetBudgetError
from pi_continuity_harness.targets.sim import SimTarget

from .helpers import base
from .runaway_extension import RUNAWAY_SPEC, runaway_scenario

SMALL = 3000


def test_a_runaway_implementation_fails_with_the_budget_named_and_what_still_ran(tmp_path: Path) -> None:
    scenario = parse_scenario(runaway_scenario(operations=SMALL))
    result = simulate(scenario, workdir=tmp_path / "run", implementation=RUNAWAY_SPEC)
    report = result.over_budget
    assert report is not None
    first, running, *rest = report.splitlines()
    assert first.startswith(
        "runaway: the budget of 3,000 host operations (trace records and event-loop steps)"
    )
    assert running.startswith("still running: operation 1 prompt (not settled yet)")
    assert "queued messages" in running
    assert rest[0] == "last trace records:" and len(rest[1:]) == 8
    last = result.host.trace.records[-1]
    assert (last["kind"], last["name"], last["budget"], last["limit"]) == (
        "host",
        "budget_exceeded",
        "operations",
        SMALL,
    )
    assert result.host.meter.operations == SMALL + 1
    # Deterministic: a second run stops at the very same record, with the same report.
    again = simulate(scenario, workdir=tmp_path / "again", implementation=RUNAWAY_SPEC)
    assert again.trace_text() == result.trace_text() and again.over_budget == report


def test_the_same_scenario_with_the_reference_ends_well_within_the_default_budget(tmp_path: Path) -> None:
    """The control: one continuation per compaction lets Pi go idle; the budget never fires."""
    result = simulate(parse_scenario(runaway_scenario()), workdir=tmp_path / "run")
    assert result.over_budget is None
    assert result.host.meter.operations < DEFAULT_OPERATIONS // 20


def test_virtual_time_has_a_budget_too(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [{"text": "slow", "latency_ms": 7_200_000}]},
        operations=[{"prompt": "take your time"}],
        budget={"virtual_seconds": 3600},
    )
    result = simulate(parse_scenario(scenario), workdir=tmp_path / "run", implementation="reference")
    assert result.over_budget is not None
    assert "the budget of 3600 virtual seconds ran out (the next timer was due at 7200" in result.over_budget
    assert "still running: operation 0 prompt (not settled yet)" in result.over_budget


def test_an_extension_cannot_swallow_the_budget(tmp_path: Path) -> None:
    def spinner(pi: Any) -> None:
        async def spin(args: str, ctx: Any) -> None:
            import asyncio  # noqa: PLC0415

            while True:
                try:
                    await asyncio.sleep(0)
                except Exception:  # an extension's broad handler must not hide the budget
                    continue

        pi.register_command("spin", spin)

    scenario = parse_scenario(
        base(operations=[{"command": "/spin"}, {"prompt": "after"}], budget={"operations": 500})
    )
    simulation = Simulation(scenario, workdir=tmp_path / "run", implementation=spinner)
    simulation.start()
    with pytest.raises(BudgetExceededError) as error:
        simulation.perform(scenario.operations[0])
    assert "still running: operation 0 command (not settled yet); operation 0 command" in error.value.report
    with pytest.raises(BudgetExceededError):  # the scenario is over
        simulation.perform(scenario.operations[1])
    result = simulation.finish()
    assert result.trace_path.read_text().splitlines()[-1].startswith('{"seq":')
    assert result.host.trace.records[-1]["name"] == "budget_exceeded"


def test_the_simulated_target_fails_the_scenario_with_a_target_error(tmp_path: Path) -> None:
    target = SimTarget(RUNAWAY_SPEC, tmp_path / "run", budget=BudgetOverride(operations=SMALL))
    scenario = parse_scenario(runaway_scenario())
    target.start(scenario)
    target.perform(scenario.operations[0])
    with pytest.raises(TargetBudgetError, match="the budget of 3,000 host operations"):
        target.perform(scenario.operations[1])
    target.close()


def test_simulate_and_replay_stop_at_the_budget_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    path = tmp_path / "runaway.yaml"
    path.write_text(dump_scenario(parse_scenario(runaway_scenario())), encoding="utf-8")
    spec = "simulator.runaway_extension:extension"
    common = ["--extension", spec, "--budget-ops", str(SMALL)]
    assert main(["simulate", str(path), "--workdir", str(tmp_path / "a"), *common]) == 1
    err = capsys.readouterr().err
    assert err.startswith("BUDGET EXCEEDED: runaway: the budget of 3,000 host operations")
    trace = tmp_path / "a" / "trace.jsonl"
    args = ["replay", str(path), "--expect-trace", str(trace), "--workdir", str(tmp_path / "b"), "--quiet"]
    assert main([*args, *common]) == 1
    captured = capsys.readouterr()
    assert "byte-identical" in captured.out and "BUDGET EXCEEDED" in captured.err


@pytest.mark.parametrize(
    ("flag", "value", "reason"),
    [("--budget-ops", "0", "must be at least 1"), ("--budget-virtual-seconds", "soon", "is not a number")],
)
def test_a_bad_budget_option_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, reason: str
) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "reload.yaml"
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", str(example), "--workdir", str(tmp_path / "run"), flag, value])
    assert exit_info.value.code == 2
    assert reason in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_bad_budget_in_a_scenario_names_the_field(tmp_path: Path) -> None:
    from pi_continuity_harness.scenario import ScenarioError  # noqa: PLC0415

    with pytest.raises(
        ScenarioError, match=r"budget\.operations: Input should be greater than or equal to 1"
    ):
        parse_scenario(base(budget={"operations": 0}), "bad.yaml")
    assert Budget().operations == DEFAULT_OPERATIONS


def test_the_explorer_stops_a_case_at_the_same_budget(tmp_path: Path) -> None:
    from pi_continuity_harness.explore import WITHIN_BUDGET  # noqa: PLC0415
    from pi_continuity_harness.explore.plugins import plugin_named  # noqa: PLC0415
    from pi_continuity_harness.explore.runner import run_case  # noqa: PLC0415

    plugin = plugin_named("pi-session-continuity")
    case = plugin.case(3, 10)
    result = run_case(
        plugin,
        case,
        implementation="reference",
        workdir=tmp_path / "run",
        budget=BudgetOverride(operations=150),
    )
    assert result.first is not None and result.first.invariant == WITHIN_BUDGET
    assert "the budget of 150 host operations" in result.first.message
    assert result.healed.budget.operations == 150  # the regression it writes keeps the budget


def test_the_mutant_matrix_passes_the_budget_to_the_suite_and_the_explorer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_continuity_harness.mutants import matrix  # noqa: PLC0415

    calls: list[list[str]] = []

    def fake(what: str, args: list[str], scratch: Path, timeout: float) -> tuple[None, str]:
        calls.append(args)
        return None, "not run"

    monkeypatch.setattr(matrix, "_run_cli", fake)
    budget = BudgetOverride(operations=123, virtual_seconds=4.5, wall_seconds=60)
    matrix.run_mutant("reference", explore_seeds=1, explore_steps=5, budget=budget)
    suite, explore = calls
    assert suite[-6:] == [
        "--budget-ops",
        "123",
        "--budget-virtual-seconds",
        "4.5",
        "--budget-wall-seconds",
        "60.0",
    ]
    assert "--budget-wall-seconds" not in explore and explore[explore.index("--budget-ops") + 1] == "123"


def test_the_suite_fails_each_scenario_over_budget_and_goes_on(tmp_path: Path) -> None:
    from pi_continuity_harness.features.suite import run_suite  # noqa: PLC0415

    run = run_suite(
        target="sim",
        keyword="singleflight or reloadstaleisinert",
        workdir=tmp_path / "runs",
        extra_args=["--budget-ops", "60"],
    )
    assert len(run.results) >= 2
    assert all(r.status == "failed" for r in run.results)
    assert all("the budget of 60 host operations" in r.detail for r in run.results)
