"""Exploration invariants and mutants of pi-blitz-handoff: the reference survives, each mutant dies.

Every mutant must be killed by the handoff features and by exploration (the invariant that
states its rule).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.explore.handoff import HANDOFF_INVARIANTS, explore_handoff, explore_handoff_seed
from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.mutants import handoff as mutants
from pi_continuity_harness.reference.handoff import extension

SEEDS = range(24)
STEPS = 12
KILL_SEEDS = 60
KILL_STEPS = 40
#: The invariant that must catch each mutant (any seed up to KILL_SEEDS).
EXPLORATION_KILLS = {
    "handoff_finish_accepts_foreign_id": "finish_only_with_returned_id",
    "handoff_finish_accepted_twice": "finish_only_with_returned_id",
    "handoff_second_request_replaces_first": "one_active_request",
    "handoff_get_issues_new_ids": "one_active_request",
    "handoff_call_repeated_after_early_get": "one_active_request",
    "handoff_deferred_prompts_reversed": "captured_prompts_kept_in_order",
    "handoff_deferred_prompts_dropped": "captured_prompts_kept_in_order",
    "handoff_cancel_deletes_recovery": "captured_prompts_kept_in_order",
    "handoff_recovery_deleted_before_completion": "captured_prompts_kept_in_order",
    "handoff_dossier_deleted_at_cutover": "dossier_kept_until_receiver_turn",
    "handoff_no_parent_link": "receiver_link_follows_chain_limit",
    "handoff_chain_limit_ignored": "receiver_link_follows_chain_limit",
    "handoff_reminder_repeats": "one_reminder_per_request",
    "handoff_no_emergency": "emergency_once_at_90_percent",
    "handoff_automatic_budget_unlimited": "automatic_initiation_budget",
    "handoff_automatic_on_by_default": "automatic_initiation_budget",
    "handoff_invalid_setting_saved": "settings_file_valid",
    "handoff_deletion_setting_ignored": "dossier_retained_when_deletion_off",
    "handoff_cancel_removes_foreign_file": "foreign_files_untouched",
    "handoff_project_templates_ignored": "project_call_template_used",
}


def test_the_exploration_invariants_include_the_four_handoff_rules() -> None:
    assert {
        "captured_prompts_kept_in_order",
        "dossier_kept_until_receiver_turn",
        "one_active_request",
        "finish_only_with_returned_id",
    } <= set(HANDOFF_INVARIANTS)
    assert set(EXPLORATION_KILLS.values()) <= set(HANDOFF_INVARIANTS)


def test_every_mutant_has_an_exploration_kill() -> None:
    assert set(EXPLORATION_KILLS) == set(mutants.handoff_mutant_names())


def test_the_reference_survives_exploration(tmp_path: Path) -> None:
    reports, rate = explore_handoff(SEEDS, STEPS, extension, work_root=tmp_path / "work")
    assert rate > 0
    assert [r.violations for r in reports if not r.ok] == []
    assert not (tmp_path / "work").exists(), "passing seeds leave no work directory behind"


def test_exploration_keeps_only_the_work_directories_of_failing_seeds(tmp_path: Path) -> None:
    reports, _rate = explore_handoff(
        range(4), STEPS, mutants.handoff_finish_accepts_foreign_id, work_root=tmp_path
    )
    kept = {r.seed: (tmp_path / f"seed-{r.seed}").is_dir() for r in reports}
    assert any(not r.ok for r in reports)
    assert kept == {r.seed: not r.ok for r in reports}


@pytest.mark.parametrize(("name", "invariant"), sorted(EXPLORATION_KILLS.items()))
def test_exploration_kills_the_mutant(tmp_path: Path, name: str, invariant: str) -> None:
    found: set[str] = set()
    for seed in range(KILL_SEEDS):
        report = explore_handoff_seed(seed, KILL_STEPS, getattr(mutants, name), workdir=tmp_path / f"s{seed}")
        found |= {v.split(":")[0] for v in report.violations}
        if invariant in found:
            return
    pytest.fail(f"{name}: {KILL_SEEDS} seeds found {sorted(found) or 'nothing'}, not {invariant}")


@pytest.mark.parametrize("name", mutants.handoff_mutant_names())
def test_the_handoff_features_kill_the_mutant(tmp_path: Path, name: str) -> None:
    run = run_suite(
        target="sim", extension=f"{mutants.__name__}:{name}", tags="handoff", workdir=tmp_path / "runs"
    )
    failed = [r for r in run.results if r.status in ("failed", "error")]
    assert failed, f"{name} ({mutants.HANDOFF_MUTANTS[name].rule}) survived the handoff features"
