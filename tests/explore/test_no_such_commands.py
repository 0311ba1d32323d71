"""``/continuity cleanup`` and ``/continuity compact`` at resuming seeds ending in 6 (the
thirty-fifth session).

Spec §4 and §12: there is no user-facing cleanup or compact command; both delete nothing and
start no compaction (P11). The explorer never sent either, so ``cleanup_subcommand`` (``cleanup``
deletes the session's pending Briefs) was judged by the features alone. A seed ending in 6 that
plants artifacts in a session file (``SwarmOptions.resumes``: its stale pending Brief is on disk
from the start) now runs both right after its first ``/continuity status``, drawing nothing.
``no_cleanup_or_compact_command`` forbids a compaction or a project file change during either;
the mutant dies at seed 56 (``test_psc_rules_judged_by_exploration.REQUIRED``).
"""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.explore.continuity.generate import generate_case
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import first_session_id, run_case
from pi_continuity_harness.scenario.operations import CommandOp

CLEANUP, COMPACT = "/continuity cleanup", "/continuity compact"


def _commands(seed: int) -> list[str | None]:
    return [
        op.command.text if isinstance(op, CommandOp) else None for op in generate_case(seed, 40).operations
    ]


def test_a_resuming_seed_ending_in_6_runs_both_right_after_its_first_status() -> None:
    reached = 0
    for seed in range(300):
        commands = _commands(seed)
        due = seed % 10 == 6 and generate_case(seed, 0).options.resumes
        if not due or "/continuity status" not in commands:
            assert CLEANUP not in commands and COMPACT not in commands, seed
            continue
        first = commands.index("/continuity status")
        if first + 1 < len(commands):
            assert commands[first + 1 : first + 3] == [CLEANUP, COMPACT][: len(commands) - first - 1], seed
            reached += 1
    assert reached >= 5


def test_the_reference_answers_both_and_changes_nothing(tmp_path: Path) -> None:
    result = run_case(
        PLUGIN, case_for_seed(56, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    assert CLEANUP in _commands(56)


def test_a_seed_that_plants_same_session_artifacts_names_its_first_session() -> None:
    """The id the simulator gives the first session anyway (``first_session_id``), in the
    scenario, so that real Pi runs that session (``--session-id``): the planted stale Brief is
    then in its directory on both targets (``tests/realpi/test_explore_on_real_pi.py``)."""
    for seed in range(120):
        scenario = case_for_seed(seed, 0).scenario(operations=())
        planted = generate_case(seed, 0).options.planted
        assert scenario.session_id == (first_session_id(seed) if planted else None), seed
