"""Exploration invariants and mutants of pi-blitz-handoff: the reference survives, each mutant dies.

Every mutant must be killed by the blitz handoff features and by exploration (the invariant that
states its rule). The blitz explorer is the same engine as the continuity one, so a failure is
shrunk, checked for determinism and written as a scenario, a trace and a regression feature.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from mutants.batched_kills import BatchedKills, assert_killed

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.explore.blitz import BLITZ_INVARIANTS, PLUGIN
from pi_continuity_harness.explore.blitz.invariants import _Run
from pi_continuity_harness.explore.blitz.invariants import _settings as _explored_settings
from pi_continuity_harness.explore.engine import ExploreSettings, explore_seeds, summarise
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.explore.shrink import minimise
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS, blitz_mutant_names
from pi_continuity_harness.scenario.operations import EditFileOp, ReloadOp
from pi_continuity_harness.simulator.simulation import Simulation

SEEDS = list(range(24))
STEPS = 12
#: A mutant's run stops at the first invariant it breaks: since the explorer draws user sessions
#: during handoffs (H77a), a Finish rejected as ending the request (H31b) is caught first by
#: ``user_operation_blocked_while_protected`` on several seeds, and by its own invariant first on
#: seed 30. The search stops at the kill, so only such a mutant takes longer.
KILL_SEEDS = 120
KILL_STEPS = 40
#: The invariant that must catch each mutant the explorer can reach (any seed up to KILL_SEEDS).
EXPLORATION_KILLS = {m.name: m.invariant for m in BLITZ_MUTANTS.values() if m.invariant is not None}
FOREIGN_ID = BLITZ_MUTANTS["blitz_finish_accepts_foreign_id"].spec
NAMES = [invariant.__name__ for invariant, _rules in BLITZ_INVARIANTS]


def _settings(extension: str, work_root: Path) -> ExploreSettings:
    return ExploreSettings(
        steps=STEPS, extension=extension, system=PLUGIN.system, out_dir=None, work_root=str(work_root)
    )


def test_the_exploration_invariants_include_the_four_handoff_rules_and_name_their_rule_ids() -> None:
    assert {
        "captured_prompts_kept_in_order",
        "dossier_kept_until_receiver_turn",
        "one_active_request",
        "finish_only_with_returned_id",
    } <= set(NAMES)
    assert set(EXPLORATION_KILLS.values()) <= set(NAMES)
    for spec in PLUGIN.invariants:
        assert all(rule.startswith("H") for rule in spec.rules), spec


def test_every_mutant_names_its_exploration_kill_or_why_there_is_none() -> None:
    for mutant in BLITZ_MUTANTS.values():
        assert (mutant.invariant in NAMES) if mutant.invariant else mutant.unreachable, mutant


def test_the_reference_survives_exploration(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    reports = list(explore_seeds(SEEDS, _settings("blitz", work), jobs=1))
    assert [r.violation for r in reports if not r.ok] == []
    assert summarise(PLUGIN.system, reports, 1.0)["seedsPerSecond"] > 0
    assert not list(work.iterdir()), "passing seeds leave no work directory behind"


def test_exploration_reaches_every_protected_operation_inside_and_outside_the_window(tmp_path: Path) -> None:
    """A passing run says little unless the protection invariant judged something: over 30 seeds
    the reference meets a new session, a resume, a fork and a compaction both inside a handoff's
    protected window (blocked) and outside it (through), and the summary adds up the seeds'
    counts. Before the explorer's sessions could compact, no compaction reached its hook."""
    settings = ExploreSettings(
        steps=KILL_STEPS, extension="blitz", system=PLUGIN.system, out_dir=None, work_root=str(tmp_path)
    )
    reports = list(explore_seeds(range(30), settings, jobs=1))
    assert all(r.ok for r in reports)
    protection = summarise(PLUGIN.system, reports, 1.0)["protection"]
    kinds = {"compact", "fork", "new_session", "switch_session"}
    assert set(protection["inside"]) == set(protection["outside"]) == kinds, protection
    assert all(count > 0 for side in protection.values() for count in side.values()), protection
    for side in ("inside", "outside"):
        for kind in kinds:
            assert protection[side][kind] == sum(
                r.cost.get("protection", {}).get(side, {}).get(kind, 0) for r in reports
            )


def test_exploration_keeps_only_the_work_directories_of_failing_seeds(tmp_path: Path) -> None:
    reports = list(explore_seeds([0, 1, 2, 3], _settings(FOREIGN_ID, tmp_path), jobs=1))
    kept = {r.seed: (tmp_path / f"seed-{r.seed}").is_dir() for r in reports}
    assert any(not r.ok for r in reports)
    assert kept == {r.seed: not r.ok for r in reports}


@pytest.mark.parametrize(("name", "invariant"), sorted(EXPLORATION_KILLS.items()))
def test_exploration_kills_the_mutant(tmp_path: Path, name: str, invariant: str) -> None:
    found: set[str] = set()
    for seed in range(KILL_SEEDS):
        result = run_case(
            PLUGIN,
            PLUGIN.case(seed, KILL_STEPS),
            implementation=BLITZ_MUTANTS[name].spec,
            workdir=tmp_path / f"s{seed}",
            requests=False,  # as ``explore`` runs a seed: its verdict is the same without the files
        )
        found |= {v.invariant for v in result.violations}
        if invariant in found:
            return
    pytest.fail(f"{name}: {KILL_SEEDS} seeds found {sorted(found) or 'nothing'}, not {invariant}")


#: (rule, mutant, a seed where exploration (40 steps) kills it, the invariant that must report it): the
#: checks that require what the spec requires (a valid Finish accepted, an automatic request when
#: due, a cancelled Finish ID refused, a prompt after a successful GET captured, a user session,
#: resume, fork or compaction blocked while a handoff is protected and from the request on in
#: request mode, a navigation let through before the boundary, the automatic budget kept by a
#: failed compaction), each shown able to fail.
REQUIRED = [
    ("H15", "blitz_automatic_as_follow_up", 26, "automatic_request_when_due"),
    ("H27a", "blitz_streaming_input_not_captured", 2, "prompts_captured_when_due"),
    ("H31b", "blitz_rejected_finish_ends_request", 30, "valid_finish_accepted"),
    ("H77a", "blitz_switch_not_blocked", 4, "user_operation_blocked_while_protected"),
    ("H77a", "blitz_resume_not_blocked", 4, "user_operation_blocked_while_protected"),
    ("H77a", "blitz_request_mode_wait_unprotected", 11, "user_operation_blocked_while_protected"),
    ("H77b", "blitz_fork_unguarded", 7, "user_operation_blocked_while_protected"),
    ("H77c", "blitz_compaction_not_blocked", 3, "user_operation_blocked_while_protected"),
    ("H77d", "blitz_submitted_unprotected", 7, "user_operation_blocked_while_protected"),
    ("H77e", "blitz_protected_from_request", 4, "user_operation_blocked_while_protected"),
    ("H138", "blitz_abort_cancels", 6, "user_operation_blocked_while_protected"),
    ("H25a", "blitz_failed_get_starts_capture", 4, "user_operation_blocked_while_protected"),
    ("H121", "blitz_chain_counted_in_memory", 14, "receiver_link_follows_chain_limit"),
    ("H61", "blitz_failed_compaction_resets_budget", 30, "automatic_initiation_budget"),
    ("H60a", "blitz_budget_kept_after_compaction", 30, "automatic_request_when_due"),
    ("H60a", "blitz_compaction_reset_not_persisted", 555, "automatic_request_when_due"),
    ("H56a", "blitz_automatic_threshold_raised", 1, "automatic_request_when_due"),
    ("H56a", "blitz_automatic_strictly_above", 1, "automatic_request_when_due"),
    ("H70a", "blitz_cancel_keeps_finish_id", 7, "finish_only_with_returned_id"),
    ("H8", "blitz_go_dialog_before_cutover", 2, "dialog_only_for_a_command"),
    ("H31a", "blitz_rejected_finish_switches", 2, "switch_only_after_accepted_finish"),
]


@pytest.mark.parametrize(
    ("rule", "name", "seed", "invariant"), REQUIRED, ids=[f"{r[0]}-{r[1]}" for r in REQUIRED]
)
def test_the_invariant_of_the_rule_fails_on_its_mutant(
    tmp_path: Path, rule: str, name: str, seed: int, invariant: str
) -> None:
    assert rule in BLITZ_MUTANTS[name].rules
    assert any(rule in rules for function, rules in BLITZ_INVARIANTS if function.__name__ == invariant)
    spec = BLITZ_MUTANTS[name].spec
    case = PLUGIN.case(seed, KILL_STEPS)
    result = run_case(PLUGIN, case, implementation=spec, workdir=tmp_path / "m", requests=False)
    assert invariant in {v.invariant for v in result.violations}, result.violations
    reference = run_case(PLUGIN, case, implementation="blitz", workdir=tmp_path / "r", requests=False)
    assert reference.violations == []


#: Seed 11 of ``cancel_replays_prompts`` (H76b, 40 steps): its ``/sh cancel`` hands the two
#: captured prompts back as one user message ("deferred 11-1" and "please hand this session off
#: now (11-12)"), the next ``/sh start`` sends a Call and a turn at 90% brings the emergency.
REPLAY_SEED = 11


def test_prompts_handed_back_at_a_cancel_are_not_a_reminder(tmp_path: Path) -> None:
    """A replayed prompt that mentions the handoff is no reminder, and does not turn the next
    request's Call into one: what the extension sends while ``/sh cancel`` runs is set aside by
    the operation that produced it (the trace), not by what it says. The reading by position
    alone took the replay for a reminder, the next Call (not first any more) for a second one
    and the emergency, which then followed no known request, for a third: the mutant was killed
    by ``one_reminder_per_request`` and ``emergency_once_at_90_percent``, neither its rule."""
    case = PLUGIN.case(REPLAY_SEED, KILL_STEPS)
    scenario = case.scenario(operations=case.operations)
    spec = BLITZ_MUTANTS["blitz_cancel_replays_prompts"].spec
    simulation = Simulation(scenario, workdir=tmp_path / "m", implementation=spec)
    try:
        simulation.start()
        for op in case.operations:
            simulation.perform(op)
        run = _Run(simulation, _explored_settings(scenario))
        replays = [
            seq
            for seq, item in run.transcript()
            if item.kind == "extension"
            and "Deferred Prompt" in item.text
            and "hand this session off" in item.text
        ]
        assert replays, f"seed {REPLAY_SEED} no longer replays a prompt that mentions the handoff"
        kinds = [(seq, message.kind) for seq, _epoch, message in run.handoff_messages()]
        assert not [seq for seq, _kind in kinds if seq in replays], kinds
        assert "reminder" not in {kind for _seq, kind in kinds}, kinds
        assert "emergency" in {kind for _seq, kind in kinds}, kinds
    finally:
        simulation.finish(requests=False, trace=False)
    result = run_case(PLUGIN, case, implementation=spec, workdir=tmp_path / "r", requests=False)
    found = {v.invariant for v in result.violations}
    assert not found & {"one_reminder_per_request", "emergency_once_at_90_percent"}, result.violations


KILL_TEST = "test_the_scenarios_of_its_rules_kill_the_mutant"


def _rule_tags(name: str) -> list[str]:
    return [f"rule-{rule}" for rule in BLITZ_MUTANTS[name].rules]


@pytest.fixture(scope="module")
def kills(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> BatchedKills:
    return BatchedKills(
        request.session,
        tmp_path_factory.mktemp("kills"),
        KILL_TEST,
        lambda name: (BLITZ_MUTANTS[name].spec, _rule_tags(name)),
        reset=False,
    )


@pytest.mark.parametrize("name", blitz_mutant_names())
def test_the_scenarios_of_its_rules_kill_the_mutant(kills: BatchedKills, name: str) -> None:
    assert_killed(kills, name, tuple(BLITZ_MUTANTS[name].rules))


def test_a_blitz_failure_is_shrunk_checked_and_written_as_a_regression_that_replays(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    replay_feature: Callable[[Path, str], subprocess.CompletedProcess[str]],
) -> None:
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))  # the failing run is kept: keep it here
    out = tmp_path / "out"
    report = tmp_path / "explore.json"
    argv = ["explore", "--extension", FOREIGN_ID, "--seeds", "4", "--steps", str(STEPS), "--jobs", "2"]
    code = cli(
        [*argv, "--check-determinism", "--max-failures", "1", "--out", str(out), "--json", str(report)]
    )
    assert code == 1
    printed = capsys.readouterr().out
    assert "(pi-blitz-handoff, target sim)" in printed and "replay:" in printed
    data = json.loads(report.read_text(encoding="utf-8"))
    failing = next(seed for seed in data["seeds"] if not seed["ok"])
    assert failing["determinism"] == "identical"
    assert failing["violation"]["invariant"] == "finish_only_with_returned_id"
    minimised = failing["minimised"]
    assert minimised["operationsAfter"] < minimised["operationsBefore"], "the failure was shrunk"
    assert minimised["replayReproduces"]
    # With --jobs 2 a seed already running when the first failure lands may fail (and be written) too.
    features = sorted(out.glob("*.feature"))
    assert 1 <= len(features) <= 2
    feature = features[0]
    text = feature.read_text(encoding="utf-8")
    assert (
        text.startswith("@blitz @needs-trace-faults") and 'invariant "finish_only_with_returned_id"' in text
    )

    against_mutant = replay_feature(feature, FOREIGN_ID)
    assert against_mutant.returncode == 1, against_mutant.stdout[-2000:]
    assert "finish_only_with_returned_id" in against_mutant.stdout
    against_reference = replay_feature(feature, "blitz")
    assert against_reference.returncode == 0, against_reference.stdout[-2000:]


def test_a_minimised_case_keeps_the_config_write_and_the_reload_that_loads_it(tmp_path: Path) -> None:
    """The invariants read the settings the case writes (``config.json``), and the extension
    runs with them only after the reload that follows the write. Minimisation dropped that
    reload: seed 1 of ``blitz_automatic_threshold_raised`` shrank from 54 operations to the
    write and one prompt, a case in which the extension runs with the defaults (automatic off)
    while ``automatic_request_when_due`` expects the written automatic request, so the reference
    failed it too: a regression that accused any implementation. ``BlitzCase.setup`` keeps the
    write and its reload first."""
    spec = BLITZ_MUTANTS["blitz_automatic_threshold_raised"].spec
    case = PLUGIN.case(1, KILL_STEPS)
    assert case.setup == 2
    failure = run_case(PLUGIN, case, implementation=spec, workdir=tmp_path / "f", requests=False)
    assert failure.first is not None and failure.first.invariant == "automatic_request_when_due"
    small = minimise(PLUGIN, case, failure, implementation=spec, workdir=tmp_path / "m").case
    assert len(small.operations) < len(case.operations)
    assert isinstance(small.operations[0], EditFileOp) and isinstance(small.operations[1], ReloadOp)
    again = run_case(PLUGIN, small, implementation=spec, workdir=tmp_path / "again", requests=False)
    assert again.first is not None and again.first.invariant == "automatic_request_when_due"
    reference = run_case(PLUGIN, small, implementation="blitz", workdir=tmp_path / "r", requests=False)
    assert reference.violations == []
