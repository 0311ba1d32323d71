"""Rules of Pi Session Continuity that exploration judges since the twenty-seventh session, each
shown able to fail: the invariant that declares the rule fails on a mutant that breaks only that
rule, at a named seed the reference passes.

Before, these mutants were judged by the features alone (their rule was declared by no
invariant), or exploration killed them through an invariant that does not check their rule
(``untrusted_project_untouched`` for an archive at shutdown, ``planted_artifacts_never_input``
for a reused eventId, ``liveness`` for a hidden continuation or missing details), so a
TypeScript or Python implementation explored for its rules was told nothing about these.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.explore.continuity.invariants import INVARIANTS
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference

STEPS = 40

#: (rule, mutant, seed, invariant): the invariant breaks on the mutant at the seed, which the
#: reference passes (seeds found by ``explore --extension <mutant> --seeds 60 --max-failures 60``;
#: for the mutants that accept invalid native settings, seeds in ``print`` or ``json`` mode,
#: where no footer or refusal shows first that the settings were accepted:
#: ``footer_tracks_model`` and ``native_refusal_reported`` kill them in ``rpc`` mode; seed 353
#: of ``reserve_at_window_accepted`` is the first such seed in 1,500 where
#: ``invalid_native_settings_commit_nothing`` breaks first).
REQUIRED = [
    ("P10", "continuation_as_hidden_message", 0, "continuation_never_hidden"),
    ("P17", "status_keeps_first_window", 2, "status_for_current_window"),
    ("P29a", "zero_reserve_accepted", 223, "invalid_native_settings_commit_nothing"),
    ("P29b", "reserve_at_window_accepted", 353, "invalid_native_settings_commit_nothing"),
    ("P30a", "zero_keep_accepted", 648, "invalid_native_settings_commit_nothing"),
    ("P30b", "keep_bound_ignored", 53, "invalid_native_settings_commit_nothing"),
    ("P36b", "xhigh_effort_refused", 11, "liveness"),
    ("P49", "settings_read_from_disk", 124, "invalid_native_settings_commit_nothing"),
    ("P51a", "pending_file_name_prefixed", 0, "artifacts_named_by_event"),
    ("P51a", "session_directory_shortened", 0, "artifacts_named_by_event"),
    ("P51b", "archive_named_without_timestamp", 0, "artifacts_named_by_event"),
    ("P51c", "failed_named_without_timestamp", 0, "artifacts_named_by_event"),
    ("P64c", "effort_off_accepted", 1, "brief_effort_is_a_label"),
    ("P64a", "model_id_is_synthesis_model", 5, "brief_records_its_compaction"),
    ("P64b", "synthesis_model_unresolved", 0, "brief_records_its_compaction"),
    ("P64d", "token_count_not_recorded", 0, "brief_records_its_compaction"),
    ("P64e", "context_window_wrong", 0, "brief_records_its_compaction"),
    ("P64f", "reserve_tokens_wrong", 0, "brief_records_its_compaction"),
    ("P64g", "trigger_percent_is_keep_percent", 0, "brief_records_its_compaction"),
    ("P64g", "frontmatter_percent_truncated", 1, "brief_records_its_compaction"),
    ("P65", "branch_leaf_wrong", 0, "brief_records_its_compaction"),
    ("P64i", "event_id_reused", 0, "fresh_event_per_handoff"),
    ("P64i", "created_at_at_load", 0, "fresh_event_per_handoff"),
    ("P69a", "details_without_session", 0, "commit_details_correlate"),
    ("P69b", "details_reason_wrong", 0, "commit_details_correlate"),
    ("P69b", "details_reason_is_pi_reason", 5, "commit_details_correlate"),
    ("P69c", "details_without_settings", 0, "commit_details_correlate"),
    ("P69c", "details_settings_swapped", 0, "commit_details_correlate"),
    ("P111b", "mismatch_not_reported", 3, "mismatch_reported"),
    ("P123a", "native_disabled_accepted", 38, "invalid_native_settings_commit_nothing"),
    ("P123a", "merge_keeps_enabled_false", 18, "native_setup_enables_compaction"),
    ("P123b", "manual_compact_while_native_disabled", 38, "invalid_native_settings_commit_nothing"),
    ("P127", "shutdown_archives_pending", 5, "shutdown_changes_nothing"),
    # The thirty-first session's commit and notice rules (test_commit_and_notice_rules.py).
    ("P97a", "checkpoint_writes_two_briefs", 5, "checkpoint_writes_one_brief"),
    ("P124", "tokens_before_changed", 0, "commit_keeps_prepared_cut"),
    ("P120e", "empty_synthesis_filled_in", 19, "failed_synthesis_never_commits"),
    ("P92a", "saved_notified_as_warning", 0, "notification_levels"),
    ("P92b", "failure_notified_as_info", 0, "notification_levels"),
    ("P92b", "stale_pending_notified_as_info", 5, "notification_levels"),
    ("P92b", "invalid_config_notified_as_info", 9, "notification_levels"),
    ("P138", "failure_notified_twice", 0, "one_failure_notice_per_check_point"),
    ("P90e", "failure_message_without_cancel", 0, "one_failure_notice_per_check_point"),
    ("P131", "failure_keeps_pending_copy", 15, "moves_leave_no_pending_copy"),
    ("P132", "archive_is_a_copy", 0, "moves_leave_no_pending_copy"),
    ("P84", "continuation_before_archive", 0, "archived_before_continuation"),
    ("P6b", "only_threshold_commits_archived", 0, "every_commit_archived"),
    ("P9", "agents_md_written", 0, "writes_only_its_own_files"),
    ("P140", "commit_announced_again_at_start", 0, "commit_announced_once"),
    ("P93a", "alias_command_registered", 0, "one_command"),
    ("P90a", "threshold_message_reworded", 0, "threshold_announced"),
    ("P90a", "preparing_announced_after_synthesis", 0, "threshold_announced"),
    ("P133", "preparing_announced_when_refused", 2, "threshold_announced"),
    ("P90b", "saved_message_reworded", 0, "handoff_messages_exact"),
    ("P53b", "native_saved_to_directory", 0, "handoff_messages_exact"),
    ("P90c", "committed_message_reworded", 0, "handoff_messages_exact"),
    ("P90c", "commit_notice_names_pending_path", 0, "handoff_messages_exact"),
    ("P90d", "continuation_message_reworded", 0, "handoff_messages_exact"),
    ("P59a", "stale_pending_not_reported", 5, "stale_pending_reported"),
    ("P59a", "stale_reported_once_per_process", 5, "stale_pending_reported"),
    ("P59a", "stale_unreported_while_refused", 8, "stale_pending_reported"),
    ("P90h", "stale_message_reworded", 5, "stale_pending_reported"),
    ("P75c", "postmortem_without_error", 19, "failure_record_complete"),
    ("P75d", "postmortem_without_identity", 0, "failure_record_complete"),
    ("P75d", "postmortem_identity_swapped", 0, "failure_record_complete"),
    ("P75e", "postmortem_without_cancel", 0, "failure_record_complete"),
    ("P75f", "postmortem_without_continuation", 0, "failure_record_complete"),
    # The thirty-second session's gate and inert-file rules (test_gate_and_inert_files.py).
    ("P108a", "gate_never_released", 5, "checkpoint_runs_when_idle"),
    ("P108a", "gate_kept_after_manual_commit", 14, "checkpoint_runs_when_idle"),
    ("P108b", "checkpoint_gate_kept_on_failure", 17, "checkpoint_runs_when_idle"),
    ("P110a", "gate_never_released", 82, "checkpoint_runs_when_idle"),
    ("P111a", "gate_never_released", 10, "checkpoint_runs_when_idle"),
    ("P53a", "hardcoded_dot_pi", 25, "checkpoint_saved_message_exact"),
    ("P59d", "stale_pending_touched", 5, "stale_pending_left_unchanged"),
    ("P139", "other_artifacts_touched", 5, "others_artifacts_untouched"),
    ("P139", "temp_files_of_every_session_removed", 5, "others_artifacts_untouched"),
    ("P110b", "cancelled_brief_continued", 41, "continuation_only_after_threshold_commit"),
    ("P113a", "committed_brief_not_reconciled", 7, "committed_pending_reconciled"),
    ("P136", "temp_file_left_silently", 7, "leftover_temp_not_silent"),
    ("P18a", "native_refusal_silent", 3, "native_refusal_reported"),
    ("P90f", "refusal_without_restart_advice", 3, "native_refusal_reported"),
    ("P91", "refusal_without_settings_path", 3, "native_refusal_reported"),
    ("P91", "refusal_tokens_swapped", 3, "native_refusal_reported"),
    ("P29a", "zero_reserve_accepted", 3, "native_refusal_reported"),
    ("P29b", "reserve_at_window_accepted", 17, "native_refusal_reported"),
    ("P30a", "zero_keep_accepted", 8, "native_refusal_reported"),
    ("P30b", "keep_bound_ignored", 13, "native_refusal_reported"),
    ("P123a", "native_disabled_accepted", 18, "native_refusal_reported"),
    ("P55", "status_keeps_pending_path_after_archive", 7, "status_names_last_artifact"),
    ("P56", "status_without_failed_path", 14, "status_names_last_artifact"),
    ("P95m", "status_without_last_artifact", 7, "status_names_last_artifact"),
    ("P95n", "status_without_last_failure", 10, "status_reports_last_failure"),
    ("P95n", "checkpoint_failure_unrecorded", 17, "status_reports_last_failure"),
    ("P95n", "refusal_not_recorded", 11, "status_reports_last_failure"),
    ("P60", "status_without_stale_paths", 10, "status_names_stale_pending"),
    ("P60", "status_names_first_stale_only", 10, "status_names_stale_pending"),
    ("P60", "checkpoint_forgets_stale", 41, "status_names_stale_pending"),
    ("P95j", "status_without_restart_state", 7, "status_restart_state"),
    ("P134", "restart_not_required_when_refused", 13, "status_restart_state"),
    ("P7a", "no_failed_postmortem", 17, "failed_synthesis_leaves_a_record"),
    ("P25d", "default_artifact_directory_wrong", 0, "artifacts_in_default_directory"),
    ("P98a", "untrusted_checkpoint_refused_without_trust", 32, "untrusted_checkpoint_refused_aloud"),
    ("P88", "status_block_out_of_order", 7, "status_opens_with_the_block"),
    ("P95e", "status_without_tokens", 7, "status_opens_with_the_block"),
    ("P95f", "status_without_window", 7, "status_opens_with_the_block"),
    ("P95g", "status_without_approximately", 7, "status_opens_with_the_block"),
    ("P95a", "status_without_extension_state", 7, "status_reports_every_field"),
    ("P95b", "status_without_trust", 7, "status_reports_every_field"),
    ("P95c", "status_without_config_validity", 7, "status_reports_every_field"),
    ("P95d", "status_without_native_state", 7, "status_reports_every_field"),
    ("P95h", "status_without_synthesis", 7, "status_reports_every_field"),
    ("P95i", "status_without_settings_path", 7, "status_reports_every_field"),
    ("P95k", "status_without_artifact_directory", 10, "status_reports_every_field"),
    ("P81", "prompt_current_state_as_log", 0, "synthesis_prompt_complete"),
    ("P114b", "prompt_allows_inferring_compaction", 0, "synthesis_prompt_complete"),
    ("P115b", "prompt_authority_rule_cut", 0, "synthesis_prompt_complete"),
    ("P130", "prompt_without_next_actions", 0, "synthesis_prompt_complete"),
    ("P61b", "frontmatter_fields_sorted", 0, "brief_fields_in_schema_order"),
    ("P61b", "frontmatter_timestamps_out_of_order", 0, "brief_fields_in_schema_order"),
    ("P90g", "settings_saved_without_restart", 5, "settings_saved_message_exact"),
    ("P75b", "postmortem_phase_unknown", 19, "failure_record_complete"),
    ("P74", "postmortem_always_bare", 19, "partial_brief_kept_as_failed"),
    ("P34b", "model_auth_unchecked", 55, "locked_model_named"),
    ("P46a", "invalid_config_silent_at_start", 9, "invalid_config_reported"),
    ("P28a", "config_types_coerced", 11, "invalid_config_reported"),
    # The thirty-third session's reply variants (test_reply_variants.py): seeds ending in 4 and 6
    # get synthesis replies the fault draws never give.
    ("P120b", "error_with_text_accepted", 6, "failed_synthesis_never_commits"),
    ("P120c", "length_stop_accepted", 14, "failed_synthesis_never_commits"),
    ("P120d", "tool_use_accepted", 4, "failed_synthesis_never_commits"),
    ("P2", "thinking_in_brief", 0, "reasoning_never_in_brief"),
    ("P68c", "hash_ignores_non_ascii", 24, "commit_details_correlate"),
    ("P76b", "heading_order_ignored", 26, "commit_is_valid_brief"),
    ("P76c", "heading_anywhere_counts", 36, "commit_is_valid_brief"),  # Next Actions inside a sentence
    ("P76c", "heading_anywhere_counts", 34, "commit_is_valid_brief"),  # only inside a code fence
    ("P36a", "effort_case_folded", 9, "invalid_config_reported"),  # synthesisEffort "High"
    ("P117b", "directives_only_at_line_start", 44, "no_promoted_directive"),
    ("P63", "handoff_reason_always_threshold", 0, "brief_records_its_compaction"),
    ("P64h", "session_file_wrong", 0, "brief_records_its_compaction"),
    ("P72", "invalid_pending_listed_stale", 35, "invalid_pending_never_stale"),
    ("P70c", "disk_compared_by_length", 44, "archive_requires_full_match"),  # a variant seed's tamper edits
    ("P92b", "status_info_after_failure", 15, "status_level_follows_state"),
    ("P92b", "status_info_with_stale", 7, "status_level_follows_state"),
    # P43 at a variant seed, whose project settings hold a compaction key Pi does not know.
    ("P43", "merge_drops_unknown_compaction_keys", 14, "settings_keep_unrelated_keys"),
    ("P64d", "checkpoint_tokens_estimated", 5, "checkpoint_records_context_usage"),
    ("P18b", "invalid_settings_synthesize", 13, "invalid_native_settings_commit_nothing"),
    ("P66a", "failed_copy_keeps_pending_status", 15, "failed_copies_say_failed"),
    ("P5b", "internal_error_reaches_pi", 4, "fail_closed_no_pi_summary"),  # a variant seed's fault
    ("P59a", "stale_not_inspected_on_resume", 42, "stale_pending_reported"),  # a resuming seed
    ("P110b", "abort_deletes_pending", 23, "pending_brief_never_deleted"),  # an aborting competitor
    ("P3d", "reread_trusts_memory", 7, "commit_bytes_on_disk"),  # a tamper between write and re-read
    ("P23", "output_budget_uncapped", 28, "synthesis_output_within_limit"),  # a capped output limit
    # pi-ai's streamSimple lowers a reasoning call's max_tokens beside a transcript sized without
    # its margin (the reference before the thirty-sixth session; real Pi found it at seed 28)
    ("P23", "transcript_sized_without_pi_ai_margin", 28, "synthesis_not_starved"),
    # In UNREACHABLE until the thirty-fourth session, whose reason (no explored session outgrows
    # its synthesis window in 60 seeds) no longer held: seed 8 did already at c0a96cb.
    ("P119a", "transcript_not_bounded", 8, "synthesis_fits_window"),
    ("P78", "freshness_rule_found_anywhere", 19, "freshness_rule_once"),  # a copied rule
    ("P54", "reconciled_archive_not_pruned", 35, "archive_retention"),  # a crash after 11 commits
    # The thirty-fifth session's evidence and vocabulary rules (test_evidence_and_vocabulary.py),
    # and the restating replies of the seeds ending in 9 (test_unreachable_mutants_made_explorable.py).
    ("P118a", "transcript_in_system_prompt", 0, "evidence_never_in_system_prompt"),
    ("P118a", "previous_brief_in_system_prompt", 0, "evidence_never_in_system_prompt"),
    ("P118a", "previous_summary_dropped", 0, "earlier_brief_is_evidence"),
    ("P8b", "loop_word_in_notification", 0, "ui_in_the_vocabulary_of_the_work"),
    ("P8b", "episode_key_in_frontmatter", 0, "brief_keys_in_the_vocabulary_of_the_work"),
    ("P79b", "freshness_rule_not_idempotent", 19, "freshness_rule_once"),
    # Rules an invariant already checked without declaring them (its premise is the rule).
    ("P45a", "artifact_directory_relative_to_cwd", 0, "writes_only_its_own_files"),
    ("P93b", "checkpoint_dispatched_to_status", 4, "checkpoint_runs_when_idle"),
    ("P38b", "project_settings_misnamed", 3, "native_refusal_reported"),
    # A manual compaction while a synthesis is held (test_compact_during_held_synthesis.py).
    ("P107b", "native_compaction_during_checkpoint", 40, "single_flight_synthesis"),
    # The subcommands that do not exist (test_no_such_commands.py).
    ("P11", "cleanup_subcommand", 56, "no_cleanup_or_compact_command"),
    ("P11", "compact_subcommand", 56, "no_cleanup_or_compact_command"),
    # An archived Brief as prompt input: no new input, a new invariant (archived_brief_never_input).
    ("P71a", "archived_brief_as_evidence", 0, "archived_brief_never_input"),
]


@pytest.mark.parametrize(
    ("rule", "name", "seed", "invariant"), REQUIRED, ids=[f"{r[0]}-{r[1]}" for r in REQUIRED]
)
def test_the_invariant_of_the_rule_fails_on_its_mutant(
    tmp_path: Path, rule: str, name: str, seed: int, invariant: str
) -> None:
    assert rule in MUTANTS[name].rules and MUTANTS[name].explorable
    assert rule in {r for spec in PLUGIN.invariants if spec.name == invariant for r in spec.rules}
    case = case_for_seed(seed, STEPS)
    snapshot = reference_snapshot()
    try:
        result = run_case(
            PLUGIN, case, implementation=MUTANTS[name].spec, workdir=tmp_path / "m", requests=False
        )
    finally:
        reset_reference()  # a PSC mutant changes reference modules (mutants.pristine)
    assert changed_since(snapshot) == []
    assert [v.invariant for v in result.violations][:1] == [invariant], result.violations
    reference = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "r", requests=False)
    assert reference.violations == [] and reference.harness_errors == []


def test_every_rule_of_the_new_invariants_has_a_mutant_here() -> None:
    """Each rule the new invariants declare is shown to fail above (no declaration on faith);
    liveness now names P36b (a valid config hands off with each of the six effort labels, all of
    which the explorer writes), and commit_details_correlate P69a-c and P68c (a reply variant).
    The rows of the commit and notice invariants are test_commit_and_notice_rules.py's to account
    for."""
    names = (
        "continuation_never_hidden",
        "artifacts_named_by_event",
        "brief_effort_is_a_label",
        "fresh_event_per_handoff",
        "shutdown_changes_nothing",
        "status_for_current_window",
        "invalid_native_settings_commit_nothing",
        "native_setup_enables_compaction",
        "mismatch_reported",
        "brief_records_its_compaction",
    )
    declared = {rule for name in names for rule in INVARIANTS[name].rules} | {
        "P36b",
        "P69a",
        "P69b",
        "P69c",
        "P68c",
    }
    also = ("liveness", "commit_details_correlate")
    assert declared == {rule for rule, _name, _seed, invariant in REQUIRED if invariant in (*names, *also)}
