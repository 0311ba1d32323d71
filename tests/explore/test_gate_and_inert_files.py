"""Rules of Pi Session Continuity that exploration judges since the thirty-second session, each
shown able to fail where the reference passes.

* ``checkpoint_runs_when_idle`` (P108a, P108b, P110a, P111a): the single-flight gate is released
  when a handoff ends, whether it committed, failed, was aborted or cancelled, or went unmatched:
  a ``/continuity checkpoint`` with nothing in flight synthesizes, writes or reports a failure,
  and is never refused as busy.
* ``checkpoint_saved_message_exact`` (P53a): a checkpoint that saved its Brief names the resolved
  pending file in spec §11's words.
* ``stale_pending_left_unchanged`` (P59d): a stale pending Brief is never written, renamed or
  removed.
* ``others_artifacts_untouched`` (P139): no file change in another session's artifact folders,
  nor of an artifact the scenario planted.
* ``committed_pending_reconciled`` (P113a): a pending Brief Pi already committed (a crash between
  the commit and the archive) is archived by the session start that finds it.
* ``leftover_temp_not_silent`` (P136): a temporary file a crash left is removed or named at
  startup, or named by ``/continuity status``.
* ``native_refusal_reported`` (P18a, P29a-b, P30a-b, P90f, P91, P123a): Pi's native settings
  invalid for the active window are refused aloud at startup and after a model change, in
  spec §11's words, with the values and the settings path.
* ``invalid_config_reported`` (P46a, P28a): an invalid extension config is reported at
  startup, naming its path and each invalid field.
* ``status_names_last_artifact`` (P55, P56, P95m): ``/continuity status`` shows the artifact
  last put in place since the runtime started: the archived Brief after an archive, the failed
  artifact after a failure, a checkpoint's pending Brief.
* ``status_reports_last_failure`` (P95n): after a failure, ``/continuity status`` reports one.
* ``status_names_stale_pending`` (P60): ``/continuity status`` names every stale pending Brief
  the runtime's start found, while it is on disk.
* ``status_restart_state`` (P95j, P134): status says whether a restart is required, and not
  "no" while Pi's live settings are refused.
* ``failed_synthesis_leaves_a_record`` (P7a): a check point whose synthesis failed leaves a
  failed artifact.
* ``artifacts_in_default_directory`` (P25d): without ``artifactDirectory``, the artifacts lie
  under ``<cwd>/.pi/session-continuity``.
* ``untrusted_checkpoint_refused_aloud`` (P98a): in an untrusted project a checkpoint shows a
  notification naming trust.
* ``status_opens_with_the_block`` (P88, P95e-g): an armed extension's status opens with spec
  §11's block, with the live values and percentages.
* ``status_reports_every_field`` (P95a-d, P95h, P95i, P95k): status says the extension, trust,
  config and native states and names the synthesis model and effort, the settings path and the
  artifact directory (the features' readings, ``oracle.line_says``).
* ``synthesis_prompt_complete`` (P81, P114b, P115b, P130): the synthesis request lists the
  headings in order, asks Current State as a snapshot, states the authority rule's second
  sentence and forbids inferring a current compaction from older material (the features'
  readings, moved to the oracle).
* ``brief_fields_in_schema_order`` (P61b): the committed Brief's frontmatter fields in the
  schema's order (the feature step's reading, moved to the oracle).
* ``settings_saved_message_exact`` (P90g): the native setup's write is announced in spec §11's
  words, naming the settings path and the restart.
* ``partial_brief_kept_as_failed`` (P74): a Brief that failed validation is kept as a schema-v2
  Brief of status failed.
* ``failure_record_complete`` now also declares P75b: the record of a provider error names the
  phase ``synthesis``.
* ``locked_model_named`` (P34b): with a pinned synthesis model that has no configured auth,
  a check point is cancelled with a failure naming the model.
* ``continuation_only_after_threshold_commit`` now also declares P110b: the Brief of a compaction
  another handler cancelled is never submitted as a continuation.

Each mutant's row in ``REQUIRED`` (test_psc_rules_judged_by_exploration.py) names a seed where the
invariant fails first (found by ``explore --extension <mutant> --seeds 60 --max-failures 60``).
The planted artifacts of a seed now include a foreign session's temporary file: without it,
``temp_files_of_every_session_removed`` was first reached at seed 187 of 300 (a crash left one
session's temporary file, and a later session of the run removed it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_continuity_harness.explore.continuity import invariants
from pi_continuity_harness.explore.continuity.invariants import INVARIANTS
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import first_session_id, run_case
from pi_continuity_harness.features.oracle import (
    AUTHORITY_BOUNDARY_RECORD,
    MANDATORY_HEADINGS,
    names_directory,
)

from .test_mismatch_reported import command_only
from .test_psc_rules_judged_by_exploration import REQUIRED
from .threshold_run import threshold_run

INVARIANT_NAMES = (
    "checkpoint_runs_when_idle",
    "checkpoint_saved_message_exact",
    "stale_pending_left_unchanged",
    "others_artifacts_untouched",
    "committed_pending_reconciled",
    "leftover_temp_not_silent",
    "native_refusal_reported",
    "invalid_config_reported",
    "status_names_last_artifact",
    "status_reports_last_failure",
    "status_names_stale_pending",
    "status_restart_state",
    "failed_synthesis_leaves_a_record",
    "artifacts_in_default_directory",
    "untrusted_checkpoint_refused_aloud",
    "status_opens_with_the_block",
    "status_reports_every_field",
    "synthesis_prompt_complete",
    "brief_fields_in_schema_order",
    "settings_saved_message_exact",
    "partial_brief_kept_as_failed",
    "locked_model_named",
)

#: A write in progress of the run's first session (seed 0): its temporary file
#: (``.<eventId>.md.<hex>.tmp``, the reference's atomic write) under ``pending/``.
OWN_SESSION = first_session_id(0)
OWN_TEMP = (
    f".pi/session-continuity/{OWN_SESSION}/pending/"
    ".11111111-2222-4333-8444-555555555555.md.0123456789abcdef0123456789abcdef.tmp"
)


def test_every_rule_of_these_invariants_is_shown_failing() -> None:
    shown = {rule for rule, _name, _seed, invariant in REQUIRED if invariant in INVARIANT_NAMES}
    declared = {rule for name in INVARIANT_NAMES for rule in INVARIANTS[name].rules}
    assert declared == shown
    assert "P110b" in INVARIANTS["continuation_only_after_threshold_commit"].rules
    assert ("P110b", "cancelled_brief_continued", 41, "continuation_only_after_threshold_commit") in REQUIRED
    assert "P75b" in INVARIANTS["failure_record_complete"].rules
    assert ("P75b", "postmortem_phase_unknown", 19, "failure_record_complete") in REQUIRED


def test_each_way_a_handoff_ends_is_shown_releasing_the_gate() -> None:
    """The rows of ``checkpoint_runs_when_idle`` name a seed where the checkpoint follows each
    kind of ending: seed 5 a committed manual compaction (P108a), seed 17 a failed checkpoint
    (P108b), seed 82 a threshold Brief a competitor loaded after it cancelled (P110a), seed 10 a
    competitor's own compaction committed in its place (P111a)."""
    rows = {
        (rule, seed) for rule, _name, seed, invariant in REQUIRED if invariant == "checkpoint_runs_when_idle"
    }
    assert {("P108a", 5), ("P108b", 17), ("P110a", 82), ("P111a", 10)} <= rows
    competitors = {seed: case_for_seed(seed, 40).options.competitor for seed in (82, 10)}
    assert competitors == {82: "cancel", 10: "own_compaction"}


@pytest.mark.parametrize(
    ("seed", "invariant"),
    [
        (25, "checkpoint_runs_when_idle"),
        (34, "checkpoint_runs_when_idle"),
        (3, "native_refusal_reported"),
        (8, "native_refusal_reported"),
        (9, "invalid_config_reported"),
        (10, "status_restart_state"),
    ],
)
def test_a_do_nothing_implementation_with_its_command_fails_by_these_rules(
    tmp_path: Path, seed: int, invariant: str
) -> None:
    """An implementation that registers ``continuity`` and does nothing passes ``one_command``.
    At these seeds the first rule it breaks is one of this session's, before any compaction
    shows that it commits nothing: a checkpoint with nothing in flight does nothing (25, 34), the
    invalid native settings planted are not refused (3, 8), the invalid config is not reported
    (9), its status says nothing of a restart (10). Of seeds 0-199 it passes two, where nothing is
    owed: 183 (print mode, invalid native settings, a competitor whose own compaction commits)
    and 196 (an untrusted project)."""
    case = case_for_seed(seed, 40)
    result = run_case(PLUGIN, case, implementation=command_only, workdir=tmp_path / "m", requests=False)
    assert [v.invariant for v in result.violations][:1] == [invariant], result.violations
    reference = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "r", requests=False)
    assert reference.violations == [] and reference.harness_errors == []


def test_a_leftover_temporary_file_of_the_session_is_its_own_to_remove(tmp_path: Path) -> None:
    """A temporary file of the run's own session left by a crash is the implementation's to
    report or remove at startup (P136): planted, it is not an artifact the implementation must
    leave alone. The reference removes it; nothing is broken."""
    run = threshold_run(tmp_path, "reference", files={OWN_TEMP: "partial"})
    assert run.broken == [] and run.compactions == 1
    # The project lies under the simulator's virtual root in ``tmp_path``.
    assert list(tmp_path.rglob(Path(OWN_TEMP).name)) == []
    # The run's session is the planted one: its Brief was archived beside the temporary file.
    assert len(list(tmp_path.rglob(f"{OWN_SESSION}/archive/*.md"))) == 1


#: (invariant, seed, what the seed's trace shows): seeds where the invariant failed the reference
#: before its exception, which keep it passing now.
#: * ``checkpoint_saved_message_exact``: a crash rule kills Pi right after the checkpoint's rename,
#:   so the reference had no moment to say where it saved the Brief (also 145, 158; 132 until
#:   its resume of the session shifted its operations).
#: * ``failed_synthesis_leaves_a_record``: the synthesis fails in an operation where the scenario
#:   also faults the filesystem or kills Pi, so the failed artifact may not be there (46 until
#:   its reply variant took its faults away).
#: * ``committed_pending_reconciled``: a restart finds committed pending Briefs while the scenario
#:   fails the archive's writes; the reference reports them as stale and leaves them pending, as
#:   it must when it cannot archive (also 265, 270, 296; 184 until its reply variant took its
#:   faults away, 241 until its resume of the session shifted its operations).
#: * ``locked_model_named``: the config pins a model without auth, and the check point's settings
#:   are invalid for the window: the reference refuses them first and says why.
EXCEPTION_SEEDS = [
    ("checkpoint_saved_message_exact", 133, '"kind":"fault","name":"crash","after":"fs:replace"'),
    ("checkpoint_saved_message_exact", 277, '"kind":"fault","name":"crash","after":"fs:replace"'),
    ("failed_synthesis_leaves_a_record", 122, '"kind":"fault"'),
    ("failed_synthesis_leaves_a_record", 239, '"kind":"fault"'),
    ("committed_pending_reconciled", 125, '"kind":"fault","name":"fs","op":"write"'),
    ("committed_pending_reconciled", 249, '"kind":"fault","name":"fs","op":"write"'),
    ("locked_model_named", 234, "refused: native compaction settings are invalid"),
    ("locked_model_named", 284, "refused: native compaction settings are invalid"),
]


@pytest.mark.parametrize(
    ("invariant", "seed", "shown"), EXCEPTION_SEEDS, ids=[f"{row[0]}-{row[1]}" for row in EXCEPTION_SEEDS]
)
def test_an_exception_keeps_the_reference_passing_where_it_failed(
    tmp_path: Path, invariant: str, seed: int, shown: str
) -> None:
    assert invariant in INVARIANTS
    result = run_case(
        PLUGIN, case_for_seed(seed, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    assert shown in result.trace


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("enabled: true, reserveTokens: 50000, keepRecentTokens: 2000", 50000),
        ("reserveTokens = 50,000 tokens", 50000),
        ("reserveTokens (50000)", 50000),
        ("no value here", None),
        ("reserveTokens\n50000", None),
    ],
)
def test_a_refusal_value_is_the_first_number_after_its_name(text: str, shown: int | None) -> None:
    """``native_refusal_reported`` reads each value as the first number within a few characters
    after its name on the same line, whatever the separator, so an implementation is not held to
    the reference's ``name: value``; swapped values still fail (``refusal_tokens_swapped``)."""
    assert invariants._shown_number(text, "reserveTokens") == shown


_MEETING_PROMPT = "\n".join(
    [
        "Write the Brief with these headings:",
        *MANDATORY_HEADINGS,
        "Current State is a snapshot of the present work, not a log.",
        AUTHORITY_BOUNDARY_RECORD,
        "Do not infer a current compaction from an older Brief, CompactionEntry, recovery instruction or "
        "notification rule",  # no full stop: the sentence runs on into whatever follows
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_what_the_system_prompt_meets_the_whole_request_meets(messages: str) -> None:
    """``synthesis_prompt_complete`` reads a request's whole text only for the readings its
    system prompt alone does not meet: each reading asks that something be in the text, so a
    prompt that meets it keeps meeting it whatever messages follow it."""
    readings = invariants._PROMPT_READINGS
    assert all(reading(_MEETING_PROMPT) is None for reading in readings)
    for reading in readings:
        assert reading(_MEETING_PROMPT + "\n" + messages) is None, reading.__name__


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Artifacts: /p/.pi/session-continuity", True),
        ("Artifacts: /p/.pi/session-continuity/ (relative)", True),
        ("Config: /p/.pi/session-continuity.json", False),
        ("Config: /p/.pi/session-continuity.json; artifacts: /p/.pi/session-continuity", True),
        ("Artifacts: /p/.pi/session-continuity-old", False),
    ],
)
def test_the_artifact_directory_is_named_not_a_file_beside_it(text: str, named: bool) -> None:
    """``status_reports_every_field`` (P95k) looks for the directory itself: the extension
    config ``session-continuity.json`` shares its prefix."""
    assert names_directory(text, "/p/.pi/session-continuity") is named
