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
* ``checkpoint_writes_one_brief`` (P97a): ``/continuity checkpoint`` writes one pending Brief.
* ``failure_record_complete`` (P75b-f): a failed artifact records the error (and its phase), the ids, the
  cancelled compaction and that no continuation was submitted.

Each mutant's row in ``REQUIRED`` (test_psc_rules_judged_by_exploration.py) names the seed where
the invariant fails first (found by ``explore --extension <mutant> --seeds 60 --max-failures 60``).
The ``length_whole``, ``tool_use`` and ``error_after_body`` syntheses, which the explorer scripts
only at its reply-variant seeds (since the thirty-third session), are also shown on a written
threshold run with that reply, one check point, independent of any seed. The exceptions each
invariant makes are shown to keep the reference passing at the seeds it failed without them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.continuity.invariants import INVARIANTS
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.continuity_rules import UNREACHABLE
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference
from pi_continuity_harness.scenario.model_script import SynthesisReply

from .test_psc_rules_judged_by_exploration import REQUIRED
from .threshold_run import threshold_run

STEPS = 40


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


def _written(tmp_path: Path, implementation: str | ExtensionFactory, reply: SynthesisReply) -> list[str]:
    """The threshold run whose synthesis is ``reply``: the invariants broken."""
    run = threshold_run(tmp_path, implementation, synthesis=(reply,))
    assert run.check_points == 1, "the scenario must reach one check point"
    return run.broken


#: (rule, mutant, reply kind): mutants a written threshold run with that one reply kills (the
#: explorer reaches them at its reply-variant seeds only: their ``REQUIRED`` rows).
WRITTEN = [
    ("P120b", "error_with_text_accepted", "error_after_body"),
    ("P120c", "length_stop_accepted", "length_whole"),
    ("P120d", "tool_use_accepted", "tool_use"),
]


@pytest.mark.parametrize(("rule", "name", "kind"), WRITTEN, ids=[r[1] for r in WRITTEN])
def test_a_commit_after_a_failed_synthesis_breaks_the_rule(
    tmp_path: Path, rule: str, name: str, kind: str
) -> None:
    assert rule in MUTANTS[name].rules and name not in UNREACHABLE and MUTANTS[name].explorable
    assert rule in INVARIANTS["failed_synthesis_never_commits"].rules
    reply = SynthesisReply.model_validate({"kind": kind})
    assert "failed_synthesis_never_commits" in _written(tmp_path / "m", MUTANTS[name].spec, reply)
    assert _written(tmp_path / "r", "reference", reply) == []


#: The invariants of this session's commit and notice rules; their mutant rows are ``REQUIRED``
#: in test_psc_rules_judged_by_exploration.py (the invariant first at a named seed).
INVARIANT_NAMES = (
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
    "checkpoint_writes_one_brief",
)


def test_every_rule_of_these_invariants_is_shown_failing() -> None:
    shown = {rule for rule, _name, _seed, invariant in REQUIRED if invariant in INVARIANT_NAMES}
    declared = {rule for name in INVARIANT_NAMES for rule in INVARIANTS[name].rules}
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


#: (seed, steps, the fault record its trace shows): ``every_commit_archived`` failed the reference
#: at these seeds until it exempted a commit whose Brief the scenario tampered with (P70a: the disk
#: no longer holds the summary, so nothing may be archived) and one whose archive path the
#: scenario faulted after it, in ``json`` mode, where no warning can show (found by the reference
#: at 6, 12 and 20 steps, the step counts of the distributed test and of hand runs).
ARCHIVE_EXEMPTIONS = [
    (196, 6, ('"kind":"fault","name":"tamper"', '"after":"entry:compaction"')),
    (197, 12, ('"kind":"fault","name":"fs","op":"write"', "/archive/")),
    (289, 20, ('"kind":"fault","name":"fs","op":"mkdir"', "/archive")),
]


@pytest.mark.parametrize(
    ("seed", "steps", "fault"), ARCHIVE_EXEMPTIONS, ids=[f"{r[0]}-{r[1]}" for r in ARCHIVE_EXEMPTIONS]
)
def test_a_commit_the_scenario_keeps_from_its_archive_owes_none(
    tmp_path: Path, seed: int, steps: int, fault: tuple[str, str]
) -> None:
    case = case_for_seed(seed, steps)
    assert case.options.mode == "json"
    result = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path, requests=False)
    assert result.violations == [] and result.harness_errors == []
    assert any(all(part in line for part in fault) for line in result.trace.splitlines()), fault
