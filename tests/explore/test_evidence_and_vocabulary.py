"""Rules of Pi Session Continuity that exploration judges since the thirty-fifth session: what
the synthesis system prompt may hold (P118a) and the vocabulary the user is shown (P8b).

Before, ``transcript_in_system_prompt`` survived all 60 seeds of the kill matrix (nothing read a
synthesis request's system prompt for evidence), as did ``previous_summary_dropped`` (nothing
asked that the earlier Brief Pi prepares reach the synthesis), and ``loop_word_in_notification``
died only of ``handoff_messages_exact``, an exact-wording check an implementation with its own
wording fails anyway. Each invariant's mutants are in ``test_psc_rules_judged_by_exploration.REQUIRED`` (the
invariant breaks first at seed 0, which the reference passes); the tests here show each half of
an invariant failing on its own and what each does not count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explore.test_psc_observed_invariants import _observed_problems
from pi_continuity_harness.explore.continuity import invariants
from pi_continuity_harness.explore.continuity.invariants import (
    brief_keys_in_the_vocabulary_of_the_work,
    ui_in_the_vocabulary_of_the_work,
)
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.pristine import reset_reference


def _first(name: str, workdir: Path) -> tuple[str, str] | None:
    try:
        spec = MUTANTS[name].spec
        result = run_case(PLUGIN, case_for_seed(0, 40), implementation=spec, workdir=workdir, requests=False)
    finally:
        reset_reference()
    first = result.first
    return None if first is None else (first.invariant, first.message)


def test_a_system_prompt_holding_a_user_message_breaks_evidence_never_in_system_prompt(
    tmp_path: Path,
) -> None:
    found = _first("transcript_in_system_prompt", tmp_path)
    assert found is not None
    assert found[0] == "evidence_never_in_system_prompt"
    assert "holds a user message: 'task step " in found[1]


def test_a_system_prompt_holding_an_earlier_briefs_event_id_breaks_it_with_no_user_message_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the user-message half blind (no message is long enough to be looked for), the
    earlier Brief moved into the system prompt is still found, by its ``eventId``."""
    monkeypatch.setattr(invariants, "_OPENING", 10**9)
    found = _first("previous_brief_in_system_prompt", tmp_path)
    assert found is not None
    assert found[0] == "evidence_never_in_system_prompt"
    assert "holds committed Brief " in found[1]


def test_the_observed_form_finds_the_earlier_briefs_event_id_with_no_user_message_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form ``explore --target pi`` checks of a TypeScript implementation (on the simulator's
    observations here): its ``eventId`` half alone still finds the earlier Brief."""
    monkeypatch.setattr(invariants, "_OPENING", 10**9)
    try:
        problems = _observed_problems(MUTANTS["previous_brief_in_system_prompt"].spec, 0, tmp_path)
    finally:
        reset_reference()
    found = [message for name, message in problems if name == "evidence_never_in_system_prompt"]
    assert found and all("holds committed Brief " in message for message in found)


def test_an_earlier_brief_dropped_from_the_request_breaks_earlier_brief_is_evidence(tmp_path: Path) -> None:
    """``previous_summary_dropped`` never passes Pi's ``previousSummary`` on: the second commit of
    seed 0 is a Brief synthesized without the first (as the feature step "the second synthesis
    request was given the first Brief only as transcript evidence" reads it)."""
    found = _first("previous_summary_dropped", tmp_path)
    assert found is not None
    assert found[0] == "earlier_brief_is_evidence"
    assert "Pi passed as previousSummary reached no synthesis request" in found[1]


def test_the_event_id_read_is_the_frontmatter_line_of_each_committed_brief() -> None:
    brief = "---\nkind: pi-session-continuity/continuity-brief\neventId: 'evt-1'\n---\n# Continuity Brief\n"
    assert [m.group(1) for m in invariants._EVENT_ID.finditer(brief)] == ["evt-1"]
    assert [m.group(1) for m in invariants._EVENT_ID.finditer('---\neventId: "evt-2"\n---\n')] == ["evt-2"]
    assert [m.group(1) for m in invariants._EVENT_ID.finditer("the eventId: is named in prose\n")] == []


@pytest.mark.parametrize(
    ("record", "said"),
    [
        ({"kind": "ui", "name": "notify", "message": "continuation submitted (next loop)."}, "loop"),
        ({"kind": "ui", "name": "set_status", "statusText": "Campaign 2 running"}, "Campaign"),
        ({"kind": "ui", "name": "set_widget", "lines": ["ok", "3 episodes saved"]}, "episodes"),
        ({"kind": "ui", "name": "select", "title": "Settings", "options": ["Loop size", "Done"]}, "Loop"),
        ({"kind": "ui", "name": "output", "text": "status: one loop left"}, "loop"),
    ],
)
def test_every_text_the_user_is_shown_is_read_for_the_forbidden_words(
    record: dict[str, object], said: str
) -> None:
    (problem,) = ui_in_the_vocabulary_of_the_work(None, record)  # type: ignore[arg-type]  # reads no state
    assert f"says {said!r}" in problem


def test_a_word_that_only_contains_a_forbidden_one_is_not_counted() -> None:
    """``ELOOP`` (an errno name in a failure message), ``loopback``, ``episodic``: §4 forbids the
    words, as the feature step reads it (``\\b(loop|campaign|episode)s?\\b``)."""
    for text in ("write failed: ELOOP", "bound to the loopback address", "an episodic failure"):
        record = {"kind": "ui", "name": "notify", "message": text}
        assert list(ui_in_the_vocabulary_of_the_work(None, record)) == [], text  # type: ignore[arg-type]


def test_a_committed_briefs_frontmatter_key_is_read_once() -> None:
    """``episode_key_in_frontmatter`` breaks the key half at seed 0 (``REQUIRED``); a Brief is
    reported once, not again after every later operation."""
    tracker = invariants.Tracker.__new__(invariants.Tracker)
    tracker.verified = {"e1": "---\nepisode: 1\neventId: x\n---\n# Continuity Brief\n"}
    tracker.vocabulary_read = set()
    tracker._briefs = {}
    assert len(list(brief_keys_in_the_vocabulary_of_the_work(tracker))) == 1
    assert list(brief_keys_in_the_vocabulary_of_the_work(tracker)) == []
