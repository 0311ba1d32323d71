"""Rules of Pi Session Continuity that exploration judges since the thirty-first session, each
shown able to fail where the reference passes.

* ``commit_keeps_prepared_cut`` (P124): the committed entry keeps Pi's prepared
  ``firstKeptEntryId`` and ``tokensBefore``.
* ``failed_synthesis_never_commits`` (P120b-e): no commit after a failed synthesis of its check
  point (an error, a length stop, a tool call, no text).
* ``notification_levels`` (P92a, P92b): spec §11's messages at their states' levels.
* ``one_failure_notice_per_check_point`` (P138, P90e): a check point the implementation cancels
  shows spec §11's failure message exactly once.
* ``moves_leave_no_pending_copy`` (P131, P132): archiving and failing move the pending Brief.
* ``archived_before_continuation`` (P84): the Brief is archived before the continuation.
* ``every_commit_archived`` (P6b): every committed Brief is archived, whatever the reason.
* ``writes_only_its_own_files`` (P9): no project file outside ``<cwd>/<CONFIG_DIR_NAME>/``.
* ``commit_announced_once`` (P140): one committed announcement per Brief.
* ``one_command`` (P93a): the implementation registers ``continuity`` and nothing else.
* ``threshold_announced`` (P90a, P133): the exact threshold message before a prepared
  threshold synthesis, never for a refused check point.
* ``handoff_messages_exact`` (P90b-d, P53b): a committed handoff's saved, committed and
  continuation messages in spec §11's words, naming the right files.
* ``stale_pending_reported`` (P59a, P90h): a session start that finds a stale same-session
  pending Brief reports it in spec §11's words.
* ``failure_record_complete`` (P75c-f): a failed artifact records the error, the ids, the
  cancelled compaction and that no continuation was submitted.

Where exploration reaches the mutant, a named seed (the first the invariant kills, found by
``explore --extension <mutant> --seeds 60 --max-failures 60``); where it does not (the explorer
scripts no ``length_whole``, ``tool_use`` or ``error_after_body`` synthesis, the reasons in the
mutant catalogue), a written scenario with that reply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.continuity.invariants import INVARIANTS, InvariantChecker
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.continuity_rules import UNREACHABLE
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import PromptOp
from pi_continuity_harness.simulator.simulation import Simulation

STEPS = 40
WINDOW, RESERVE, KEEP = 200_000, 50_000, 2_000
THRESHOLD = WINDOW - RESERVE

#: (rule, mutant, seed, invariant): the invariant is the first the mutant breaks at the seed.
FIRST = [
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
    ("P75c", "postmortem_without_error", 16, "failure_record_complete"),
    ("P75d", "postmortem_without_identity", 0, "failure_record_complete"),
    ("P75d", "postmortem_identity_swapped", 0, "failure_record_complete"),
    ("P75e", "postmortem_without_cancel", 0, "failure_record_complete"),
    ("P75f", "postmortem_without_continuation", 0, "failure_record_complete"),
]


def _explored(tmp_path: Path, implementation: str | ExtensionFactory, seed: int) -> list[str]:
    snapshot = reference_snapshot()
    try:
        result = run_case(
            PLUGIN,
            case_for_seed(seed, STEPS),
            implementation=implementation,
            workdir=tmp_path,
            requests=False,
        )
    finally:
        reset_reference()  # a PSC mutant changes reference modules (mutants.pristine)
    assert changed_since(snapshot) == []
    assert result.harness_errors == []
    return [v.invariant for v in result.violations]


@pytest.mark.parametrize(("rule", "name", "seed", "invariant"), FIRST, ids=[f"{r[0]}-{r[1]}" for r in FIRST])
def test_the_invariant_of_the_rule_fails_first_on_its_mutant(
    tmp_path: Path, rule: str, name: str, seed: int, invariant: str
) -> None:
    assert rule in MUTANTS[name].rules and MUTANTS[name].explorable
    assert rule in INVARIANTS[invariant].rules
    assert _explored(tmp_path / "m", MUTANTS[name].spec, seed)[:1] == [invariant]
    assert _explored(tmp_path / "r", "reference", seed) == []


def _written(tmp_path: Path, implementation: str | ExtensionFactory, reply: SynthesisReply) -> list[str]:
    """Two prompts, the second over the threshold, whose synthesis is ``reply``."""
    compaction = {"enabled": True, "reserveTokens": RESERVE, "keepRecentTokens": KEEP}
    scenario = Scenario.model_validate(
        {
            "name": "failed-synthesis",
            "models": [{"id": "fake/main", "context_window": WINDOW, "max_tokens": 16_384}],
            "settings": {"global": {"compaction": compaction}, "project": {"compaction": compaction}},
            "model": {
                "agent": [
                    Reply(text="w" * 1_500, context_tokens=THRESHOLD // 2),
                    Reply(text="w" * 1_500, context_tokens=THRESHOLD + 1),
                ]
                + [Reply(text="more", context_tokens=1_000)] * 8,
                "extension": [reply],
            },
        }
    )
    simulation = Simulation(scenario, workdir=tmp_path, implementation=implementation)
    checker = InvariantChecker(simulation)
    snapshot = reference_snapshot()
    try:
        simulation.start()
        checker.after_operation()
        for step in range(2):
            op = PromptOp.model_validate({"prompt": {"text": f"step {step}", "chars": 4 * KEEP + 4_000}})
            checker.before_operation(op)
            simulation.perform(op)
            checker.after_operation()
    finally:
        simulation.finish()
        reset_reference()
    assert changed_since(snapshot) == []
    assert not checker.harness_errors, checker.harness_errors
    assert len(checker.checkpoints) == 1, "the scenario must reach one check point"
    return [v.invariant for v in checker.violations]


#: (rule, mutant, reply kind): mutants the explorer does not reach (``UNREACHABLE``).
WRITTEN = [
    ("P120b", "error_with_text_accepted", "error_after_body"),
    ("P120c", "length_stop_accepted", "length_whole"),
    ("P120d", "tool_use_accepted", "tool_use"),
]


@pytest.mark.parametrize(("rule", "name", "kind"), WRITTEN, ids=[r[1] for r in WRITTEN])
def test_a_commit_after_a_failed_synthesis_breaks_the_rule(
    tmp_path: Path, rule: str, name: str, kind: str
) -> None:
    assert rule in MUTANTS[name].rules and name in UNREACHABLE and not MUTANTS[name].explorable
    assert rule in INVARIANTS["failed_synthesis_never_commits"].rules
    reply = SynthesisReply.model_validate({"kind": kind})
    assert "failed_synthesis_never_commits" in _written(tmp_path / "m", MUTANTS[name].spec, reply)
    assert _written(tmp_path / "r", "reference", reply) == []


def test_every_rule_of_these_invariants_is_shown_failing_here() -> None:
    shown = {rule for rule, *_ in FIRST} | {rule for rule, *_ in WRITTEN}
    declared = {
        rule
        for name in (
            "commit_keeps_prepared_cut",
            "failed_synthesis_never_commits",
            "notification_levels",
            "one_failure_notice_per_check_point",
            "moves_leave_no_pending_copy",
            "archived_before_continuation",
            "every_commit_archived",
            "writes_only_its_own_files",
            "commit_announced_once",
            "one_command",
            "threshold_announced",
            "handoff_messages_exact",
            "failure_record_complete",
            "stale_pending_reported",
        )
        for rule in INVARIANTS[name].rules
    }
    assert declared == shown


def test_the_do_nothing_implementation_fails_at_its_first_start(tmp_path: Path) -> None:
    """``null`` registers no command: ``one_command`` (P93a) fails it at seed 0's start."""
    assert _explored(tmp_path, "null", 0)[:1] == ["one_command"]


@pytest.mark.parametrize("seed", [14, 16])
def test_the_failure_record_exceptions_keep_the_reference_passing(tmp_path: Path, seed: int) -> None:
    """Without them ``failure_record_complete`` failed the reference: at seed 14 a
    ``/continuity checkpoint`` fails, and its record rightly says no compaction was requested;
    at seed 16 the synthesis is aborted ("Request aborted"), Pi's abort, not a provider error."""
    assert _explored(tmp_path, "reference", seed) == []


@pytest.mark.parametrize("seed", [41, 82])
def test_a_check_point_a_competitor_cancels_owes_no_failure_message(tmp_path: Path, seed: int) -> None:
    """Seeds 41 and 82 load a competitor that cancels every compaction after the reference
    prepared its Brief: the reference has nothing to report, and without the competitor
    exception ``one_failure_notice_per_check_point`` failed it there."""
    case = case_for_seed(seed, STEPS)
    assert case.scenario(operations=case.operations).extensions[-1].competitor == "cancel"
    assert _explored(tmp_path, "reference", seed) == []


def test_a_pending_file_the_implementation_could_not_read_is_not_owed(tmp_path: Path) -> None:
    """Seed 15 corrupts the reads of the pending Brief the restart finds (a scenario fs fault):
    the reference sees no Brief there and reports nothing, as it should; without the fault
    exception ``stale_pending_reported`` failed it (and seeds 16 and 25)."""
    assert _explored(tmp_path, "reference", 15) == []
