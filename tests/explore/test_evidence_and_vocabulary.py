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
    brief_key_problems,
    ui_in_the_vocabulary_of_the_work,
)
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.features.oracle import parse_brief
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


#: (mutant, whether the user-message half is blinded, the invariant it breaks first at seed 0,
#: what its message says). Blinded, no user message is long enough to be looked for: the earlier
#: Brief copied into the system prompt is still found, by its ``eventId``. ``previous_summary_dropped``
#: never passes Pi's ``previousSummary`` on (as the feature step "the second synthesis request was
#: given the first Brief only as transcript evidence" reads it).
SEED_0_BREAKS = [
    (
        "transcript_in_system_prompt",
        False,
        "evidence_never_in_system_prompt",
        "holds a user message: 'task step ",
    ),
    ("previous_brief_in_system_prompt", True, "evidence_never_in_system_prompt", "holds committed Brief "),
    (
        "previous_summary_dropped",
        False,
        "earlier_brief_is_evidence",
        "passed as previousSummary reached no synthesis",
    ),
]


@pytest.mark.parametrize(
    ("name", "blind", "invariant", "says"), SEED_0_BREAKS, ids=[r[0] for r in SEED_0_BREAKS]
)
def test_each_half_of_the_p118a_invariants_breaks_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, blind: bool, invariant: str, says: str
) -> None:
    if blind:
        monkeypatch.setattr(invariants, "_OPENING", 10**9)
    found = _first(name, tmp_path)
    assert found is not None
    assert found[0] == invariant
    assert says in found[1]


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


def test_every_frontmatter_key_of_a_committed_brief_is_read_for_the_forbidden_words() -> None:
    """``episode_key_in_frontmatter`` breaks the key half at seed 0 (``REQUIRED``); a key only
    containing a forbidden word is not counted, and a text that is no Brief has no key."""
    brief = parse_brief("---\nepisode: 1\nloopback: 2\neventId: x\n---\n# Continuity Brief\n")
    assert list(brief_key_problems(brief)) == ["committed Brief x has the frontmatter key 'episode'"]
    assert list(brief_key_problems(parse_brief("no frontmatter"))) == []
