"""Single-rule Pi Session Continuity mutants that ``UNREACHABLE`` (mutants/continuity_rules.py)
kept out of exploration, all seven made explorable in the thirty-fourth session (7 entries ->
0), and a test that keeps any future entry of ``UNREACHABLE`` honest.

Six needed the explorer to generate something new: seeds that resume a session, seeds whose
competitor aborts every compaction, seeds that change a pending Brief between its write and its
re-read, seeds whose reasoning model has a tight output limit, seeds whose model copies an
earlier Brief's Recovery Instructions into Key Decisions and seeds that die right after their
eleventh compaction entry, for ``stale_not_inspected_on_resume`` (P59a),
``abort_deletes_pending`` (P110b), ``reread_trusts_memory`` (P3d), ``output_budget_uncapped``
(P23), ``freshness_rule_found_anywhere`` (P78) and ``reconciled_archive_not_pruned`` (P54:
seed 35, ``archive_retention``: the restart reconciles the eleventh Brief into an archive of
ten). The seventh,
``transcript_not_bounded`` (P119a), needed nothing: its reason (no explored session outgrows its
synthesis window in the kill matrix's 60 seeds) had stopped holding before this session, as
seed 8 breaks ``synthesis_fits_window`` already at c0a96cb; nothing checked the reasons, so
``test_every_unreachable_mutant_still_survives_the_kill_matrix_seeds`` does now.

**Resuming.**

Spec §13: "A process death before ``session_compact`` leaves a same-session pending artifact
inert; startup reports it"; §7 and §18 have every session start inspect the session's pending
artifacts. Before, the explorer's session starts all had reason ``startup`` (a restart) or
``reload``; a user who leaves for a new session and comes back (RPC ``new_session``, then
``switch_session`` to the previous file: ``session_start`` with reason ``resume``,
``dist/core/agent-session-runtime.js:147-165``) never did, so the mutant that inspects nothing on
a resume survived every seed.

A seed that plants artifacts in a session file (``SwarmOptions.resumes``) now follows its first
``reload`` with a new session and a resume of the session it left. It draws nothing, so the
rest of the seed is what it was, shifted by two operations. Its planted stale pending Brief is
still in ``pending/`` when the user comes back; ``stale_pending_reported`` (which sees every
session start) owes its report again. The mutant's row in ``REQUIRED`` names seed 42; the
reference passes seeds 0-299 (40 steps) and, on real Pi 1.6.0, seed 42's case (whose resume is
kept there) with every observed invariant (``onpi.run_on_pi``, by hand, in the thirty-fifth
session).

**Aborting.** Spec §13: "If Pi aborts after ``session_before_compact`` returns but before commit,
the hook signal clears the in-memory gate", and the Brief stays pending and inert (P110b). The
explorer's competitors cancelled, emptied, replaced or threw; none aborted, so the mutant that
deletes the pending Brief when the hook's signal aborts survived. One seed in 60 with no
competitor (``seed % 60 == 23``) now gets the scenario's ``abort`` competitor (``ctx.abort()``
after the continuity hook returned, scenario/competitors.py, a TypeScript twin on real Pi). It
draws nothing. The new invariant ``pending_brief_never_deleted`` forbids a pending Brief's removal
with no copy in ``archive/`` or ``failed/``; the mutant's row in ``REQUIRED`` names seed 23.
On real Pi 1.6.0 the reference passes seed 23's case, its ``abort`` competitor loaded, with every
observed invariant (``onpi.run_on_pi``, by hand, in the thirty-fifth session).

**Re-reading.** Spec §3 and §8: the Brief is re-read from disk before the commit, and bytes that
differ from what was written cancel the compaction (P3d). The explorer's tamper rules changed a
pending Brief only after Pi appended its compaction, and its corrupt-read fault changes what one
read returns, not the file, so an implementation whose "re-read" returns the text it wrote
committed bytes that were on disk. An odd seed with a tamper rule (not a reply-variant seed)
now has a second one, of the same occurrence and action, right after the pending Brief's rename
into ``pending/``: the reference re-reads, finds other bytes, moves the Brief to ``failed/`` and
cancels; the mutant commits what it remembers, which is not on disk (``commit_bytes_on_disk``,
seed 7). Tamper rules act on the simulator's trace records: real Pi plays a case without them.

**A tight output limit.** Spec §5: synthesis reserves output for reasoning within the model's
output limit (P23), and ``complete()`` sends ``maxTokens`` unclamped. Every explored model's
limit was either above the reference's reasoning allowance plus its full body reserve (8,192)
or below the allowance plus the least body it accepts (4,096), so a budget never capped at the
limit asked for no more than the reference did. A reasoning seed 8 modulo 20 whose configured
effort is medium or high now gives its main model a limit between the two
(``CAPPED_MAX_TOKENS``: 14,336 and 22,528). The new invariant ``synthesis_output_within_limit``
compares each synthesis request's ``max_tokens`` with its model's limit; the mutant dies at
seed 28. On real Pi 1.6.0 the reference passes seed 28's case (its main model's limit 14,336)
with every observed invariant.

The thirty-fourth session's notes (and these docstrings until the thirty-fifth) said
differential exploration on real Pi found these seed classes alike there. It did not reach
them: ``explore --target pi`` with a Python implementation plays each seed's host-behaviour case
(``explore/differential``), which has none of them; the seed numbers only matched the classes'
rules. What real Pi did play is named above.

**Copying the rule.** Spec §14: the extension inserts the event-freshness rule under
``## Recovery Instructions`` deterministically and idempotently (P78). An implementation that
looks for the rule's text anywhere in the body skips the insertion when the model wrote the rule
elsewhere; no explored reply ever did. The synthesis reply field ``copy_recovery_to`` (scenario
format, played by both targets' writer) copies the first two paragraphs of the last Recovery
Instructions the request's messages quote under another heading; a seed ending in 9 puts such a
reply, copying into Key Decisions, in every other slot its draws left valid. The mutant dies at
seed 19 (``freshness_rule_once``). On real Pi 1.6.0 (``onpi.run_on_pi``, by hand, in the
thirty-fifth session) the reference passes seed 19's case with every observed invariant, and
``freshness_rule_not_idempotent`` breaks ``freshness_rule_once`` there at its operation 13, as
on the simulator. Since the thirty-fifth session every other such
reply (slots 3, 7, 11, ...) copies into its own Recovery Instructions instead: the reply then
states the rule already, and an insertion that is not idempotent states it twice (P79b,
``freshness_rule_not_idempotent``, also dead at seed 19).

No new check can fail an implementation that writes and shows nothing by itself: it removes
no Brief, and the stale report it owes after a resume it already owed, and failed to give, at
startup (``stale_pending_reported`` fails the do-nothing implementation at every seed whose
planted stale Brief it could report).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.explore.continuity import generate
from pi_continuity_harness.explore.continuity.generate import (
    CAPPED_MAX_TOKENS,
    MAIN,
    ExploreCase,
    SwarmOptions,
    generate_case,
)
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.features.oracle import freshness_rule_paragraphs, section
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.continuity_rules import UNREACHABLE
from pi_continuity_harness.mutants.pristine import reset_reference
from pi_continuity_harness.scenario.continuity_replies import CONTINUITY_REPLIES, quoted_recovery_instructions
from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.model_script import ModelRequest, SynthesisReply
from pi_continuity_harness.scenario.operations import NewSessionOp, SwitchSessionOp

from .test_psc_rules_judged_by_exploration import REQUIRED

#: The stale-report notification of spec §11.
STALE = "Pi Session Continuity: stale pending Continuity Brief found for this session; leaving it inert."


#: The seeds of 0-59 that resume, and those of them that draw a ``reload`` in 40 steps.
RESUMING_OPTIONS_0_59 = [2, 5, 9, 12, 14, 26, 29, 35, 42, 54, 56]
RESUMING_0_59 = [2, 5, 14, 26, 29, 42, 54, 56]


def _without_description(base: dict[str, object]) -> dict[str, object]:
    """The seed's machine but for its description (which says "resumes")."""
    return {key: value for key, value in base.items() if key != "description"}


def _draws(case: ExploreCase) -> tuple[object, ...]:
    """What a seed's draws make, but for its machine: operations, replies and faults."""
    return (case.operations, case.agent, case.synthesis, case.fs, case.crash, case.tamper)


def _kinds(operations: tuple[object, ...]) -> list[str]:
    return [type(op).__name__ for op in operations]


def test_a_seed_resumes_exactly_when_it_plants_artifacts_in_a_session_file() -> None:
    """``resumes`` is a reading of two options the seed already drew; the 60 seeds ``mutants``
    explores hold resuming seeds, some of them with a UI and a config that hands off."""
    for seed in range(300):
        options = generate_case(seed, 40).options
        assert options.resumes == (options.planted and options.session == "file"), seed
        assert ("resumes" in options.describe()) == options.resumes
        assert options.to_json()["resumes"] == options.resumes
    met = [s for s in range(60) if generate_case(s, 40).options.resumes]
    assert met == RESUMING_OPTIONS_0_59


def test_the_first_reload_of_a_resuming_seed_is_followed_by_a_new_session_and_a_resume(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the first ``reload``, and nothing else changes: without the two operations, a
    resuming case's are the first ones of the case the same seed makes when it does not resume."""
    cases = {seed: generate_case(seed, 40) for seed in range(300)}
    resuming = [
        seed for seed, case in cases.items() if "ReloadOp" in _kinds(case.operations) and case.options.resumes
    ]
    assert len(resuming) == 56 and [seed for seed in resuming if seed < 60] == RESUMING_0_59
    monkeypatch.setattr(SwarmOptions, "resumes", property(lambda self: False))
    for seed, case in cases.items():
        plain = generate_case(seed, 40)
        kinds = _kinds(case.operations)
        assert _without_description(case.base) == _without_description(plain.base), seed
        if seed not in resuming:
            assert case.operations == plain.operations, seed
            continue
        first = kinds.index("ReloadOp")
        assert kinds[first + 1 : first + 3] == ["NewSessionOp", "SwitchSessionOp"][: 40 - first - 1], seed
        assert kinds.count("NewSessionOp") == 1 and kinds.count("SwitchSessionOp") == (first + 2 < 40), seed
        if first + 2 < 40:
            switch = case.operations[first + 2]
            assert isinstance(switch, SwitchSessionOp) and switch.switch_session.to == "previous"
        kept = [op for op in case.operations if not isinstance(op, (NewSessionOp, SwitchSessionOp))]
        assert kept == list(plain.operations[: len(kept)]), seed
        assert _draws(case)[1:] == _draws(plain)[1:], seed  # all but the operations


def test_the_reference_reports_the_stale_brief_again_when_the_user_resumes_its_session(
    tmp_path: Path,
) -> None:
    """Seed 42 (40 steps): Pi starts the session a second time with reason ``resume``, and the
    reference says spec §11's stale line after it, as it did at startup; nothing is broken."""
    result = run_case(
        PLUGIN, case_for_seed(42, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    records = [json.loads(line) for line in result.trace.splitlines()]
    starts = [r["seq"] for r in records if r.get("name") == "session_start" and r.get("reason") == "resume"]
    assert starts, "the seed never resumed a session"
    said = [r["seq"] for r in records if r.get("name") == "notify" and r.get("message") == STALE]
    assert any(seq > starts[0] for seq in said), "no stale report after the resume"


def test_one_seed_in_60_with_no_competitor_gets_one_that_aborts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only seeds ``23 (mod 60)`` that drew no competitor; everything else of the seed, and
    every other seed, is what the draws made."""
    cases = {seed: generate_case(seed, 40) for seed in range(300)}
    aborting = [seed for seed, case in cases.items() if case.options.competitor == "abort"]
    assert aborting == [23, 83, 143, 263]  # 203 drew a competitor of its own
    assert all({"competitor": "abort"} in cases[seed].base["extensions"] for seed in aborting)
    assert all(not cases[seed].liveness_applies for seed in aborting)
    monkeypatch.setattr(generate, "_ABORT_AT", -1)  # no seed is -1 modulo 60
    for seed, case in cases.items():
        plain = generate_case(seed, 40)
        if seed in aborting:
            assert plain.options.competitor is None
            assert _without_description(case.base) != _without_description(plain.base)
            assert _draws(case) == _draws(plain), seed
        else:
            assert case == plain, seed


def test_the_reference_keeps_the_brief_of_every_aborted_compaction_pending(tmp_path: Path) -> None:
    """Seed 23: Pi aborts every compaction after the hooks returned; the reference's Briefs stay
    in ``pending/``, none is archived, and nothing is broken."""
    result = run_case(
        PLUGIN, case_for_seed(23, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    records = [json.loads(line) for line in result.trace.splitlines()]
    assert any(r.get("name") == "session_before_compact" for r in records)
    assert not any(r.get("kind") == "entry" and r.get("name") == "compaction" for r in records)
    pending = [r for r in records if r.get("name") == "replace" and "/pending/" in str(r.get("to"))]
    assert pending and not any(
        r.get("name") == "remove" and "/pending/" in str(r.get("path")) for r in records
    )


@pytest.mark.parametrize("seed", [15, 59])
def test_a_pending_brief_moved_after_a_fault_or_pruned_by_retention_is_no_deletion(
    tmp_path: Path, seed: int
) -> None:
    """The two ways the reference removes a pending Brief with no copy left at the end of the
    operation, which ``pending_brief_never_deleted`` exempts: at seed 15 the scenario corrupts the
    Brief's re-read, so the reference removes it and its ``failed/`` record's write is faulted; at
    seed 59 one operation archives eleven Briefs and retention prunes the first archived copy
    (the operation wrote it). Without the exemptions the reference failed both seeds."""
    result = run_case(
        PLUGIN, case_for_seed(seed, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    records = [json.loads(line) for line in result.trace.splitlines()]
    assert any(r.get("name") == "remove" and "/pending/" in str(r.get("path")) for r in records)


def test_an_odd_tampering_seed_also_tampers_between_the_pending_write_and_its_re_read() -> None:
    """The second rule has the first one's occurrence, action and files; it draws nothing."""
    for seed in range(300):
        case = generate_case(seed, 40)
        if not case.options.tamper:
            assert case.tamper == (), seed
            continue
        first = case.tamper[0]
        assert (first.after.kind, first.after.name) == ("entry", "compaction"), seed
        if seed % 2 == 1 and case.options.reply_variant is None:
            (second,) = case.tamper[1:]
            assert (second.after.kind, second.after.name, second.after.glob) == (
                "fs",
                "replace",
                {"to": "*/pending/*.md"},
            )
            assert (second.after.occurrence, second.action, second.path) == (
                first.after.occurrence,
                first.action,
                first.path,
            )
        else:
            assert len(case.tamper) == 1, seed
    assert [seed for seed in range(60) if len(generate_case(seed, 40).tamper) == 2] == [7, 17]


def test_the_reference_cancels_when_the_re_read_differs_from_what_it_wrote(tmp_path: Path) -> None:
    """Seed 7: the pending Brief changes right after its rename; the reference's re-read sees it,
    the Brief goes to ``failed/``, an error says the bytes differ, nothing is broken."""
    result = run_case(
        PLUGIN, case_for_seed(7, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    records = [json.loads(line) for line in result.trace.splitlines()]
    (at,) = [i for i, r in enumerate(records) if r.get("name") == "tamper" and r.get("after") == "fs:replace"]
    assert records[at - 1]["name"] == "replace" and "/pending/" in records[at - 1]["to"]
    after = records[at + 1 :]
    assert any(r.get("name") == "replace" and "/failed/" in str(r.get("to")) for r in after)
    assert any(
        r.get("name") == "notify"
        and r.get("notifyType") == "error"
        and "differ from what was written" in r["message"]
        for r in after
    )


def test_a_reasoning_seed_8_modulo_20_with_a_medium_or_high_effort_gets_a_tight_output_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The limit is the only change: without the rule the seed is what its draws made."""
    cases = {seed: generate_case(seed, 40) for seed in range(300)}
    capped = [seed for seed, case in cases.items() if case.options.max_tokens in CAPPED_MAX_TOKENS.values()]
    assert capped == [28, 188, 228]
    for seed in capped:
        options = cases[seed].options
        assert seed % 20 == 8 and options.reasoning
        assert options.max_tokens == CAPPED_MAX_TOKENS[options.synthesis_effort]
        (main,) = [m for m in cases[seed].base["models"] if m["id"] == MAIN]
        assert main["max_tokens"] == options.max_tokens
    monkeypatch.setattr(generate, "CAPPED_MAX_TOKENS", {})
    for seed, case in cases.items():
        plain = generate_case(seed, 40)
        if seed in capped:
            assert plain.options.max_tokens == 65_536
            assert _draws(case) == _draws(plain), seed
        else:
            assert case == plain, seed


def test_the_reference_caps_its_synthesis_budget_at_the_tight_limit(tmp_path: Path) -> None:
    """Seed 28 (medium effort, a limit of 14,336): the reference's synthesis requests to the main
    model ask for at most the limit, one of them exactly the limit (its wanted 16,384 capped)."""
    result = run_case(
        PLUGIN, case_for_seed(28, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    asked = [
        record["maxTokens"]
        for record in map(json.loads, result.trace.splitlines())
        if record.get("kind") == "model"
        and record.get("name") == "request"
        and record.get("caller") == "extension"
        and record.get("model") == MAIN
    ]
    assert asked and max(asked) == CAPPED_MAX_TOKENS["medium"]


def _first_break(name: str, tmp_path: Path) -> tuple[int, str] | None:
    """The first seed of the kill matrix's (0-59, 40 steps) where mutant ``name`` breaks an
    invariant declaring one of its rules, and that invariant; None when none does."""
    declared = {spec.name: set(spec.rules) for spec in PLUGIN.invariants}
    watching = {invariant for invariant, rules in declared.items() if rules & set(MUTANTS[name].rules)}
    assert watching, name
    for seed in range(60):
        try:
            result = run_case(
                PLUGIN,
                case_for_seed(seed, 40),
                implementation=MUTANTS[name].spec,
                workdir=tmp_path / f"{name}-{seed}",
                requests=False,
            )
        finally:
            reset_reference()
        seen = [v.invariant for v in result.violations if v.invariant in watching]
        if seen:
            return seed, seen[0]
    return None


def test_every_unreachable_mutant_still_survives_the_kill_matrix_seeds(tmp_path: Path) -> None:
    """An ``UNREACHABLE`` reason says exploration cannot see the mutant's break in the seeds the
    kill matrix explores: none of them may break an invariant of the mutant's rules.
    ``transcript_not_bounded``'s reason had stopped holding (seed 8 broke
    ``synthesis_fits_window`` already at c0a96cb) and no test said so. ``UNREACHABLE`` is empty
    now; an entry added to it later is explored here, and one the explorer reaches fails (as
    ``transcript_not_bounded`` would: the second half)."""
    for name in sorted(UNREACHABLE):
        assert _first_break(name, tmp_path) is None, f"{name} is reachable: move it to REQUIRED"
    assert _first_break("transcript_not_bounded", tmp_path / "reachable") == (8, "synthesis_fits_window")


RULE = (
    "Event freshness: this Brief records one specific handoff. Its presence is historical evidence, "
    "not proof of a new current-turn compaction."
)
QUOTED = (
    f"<previous-brief>\n# Continuity Brief\n\n## Recovery Instructions\n\n{RULE}\n\nRead this Brief.\n"
    "</previous-brief>"
)


def _request(messages: list[dict[str, object]], system: str | None = None) -> ModelRequest:
    return ModelRequest(kind="extension", index=0, model="fake/main", system_prompt=system, messages=messages)


def test_a_copying_reply_writes_the_quoted_recovery_instructions_under_the_section_it_names() -> None:
    """Two paragraphs of the last quoted Brief's Recovery Instructions; a Brief that runs on into
    the transcript is cut at the transcript's first line; the system prompt is never read."""
    assert (
        quoted_recovery_instructions(_request([{"role": "user", "content": QUOTED}]))
        == f"{RULE}\n\nRead this Brief."
    )
    run_on = f"Brief:\n## Recovery Instructions\n\n{RULE}\n\n[User]: task step 2: {'work ' * 50}"
    assert quoted_recovery_instructions(_request([{"role": "user", "content": run_on}])) == RULE
    three = f"Brief:\n## Recovery Instructions\n\n{RULE}\n\nRead this Brief.\n\nYou are continuing."
    assert quoted_recovery_instructions(_request([{"role": "user", "content": three}])).endswith(
        "Read this Brief."
    )
    listed = _request(
        [{"role": "user", "content": "no Brief here"}], system="Write\n## Recovery Instructions\nlast"
    )
    assert quoted_recovery_instructions(listed) == ""
    body = CONTINUITY_REPLIES.body(
        _request([{"role": "user", "content": QUOTED}]), SynthesisReply(copy_recovery_to="## Key Decisions")
    )
    assert RULE in section(body, "## Key Decisions") and RULE not in section(body, "## Recovery Instructions")
    plain = CONTINUITY_REPLIES.body(
        _request([{"role": "user", "content": "no Brief"}]),
        SynthesisReply(copy_recovery_to="## Key Decisions"),
    )
    assert plain == CONTINUITY_REPLIES.body(
        _request([{"role": "user", "content": "no Brief"}]), SynthesisReply()
    )


def test_a_seed_ending_in_9_copies_in_every_other_slot_its_draws_left_valid() -> None:
    """Into Key Decisions at slots 1, 5, 9, ... and into Recovery Instructions at slots 3, 7,
    11, ... (the thirty-fifth session's P79b class), wherever the draws left the slot valid."""
    copied = SynthesisReply(copy_recovery_to="## Key Decisions")
    restated = SynthesisReply(copy_recovery_to="## Recovery Instructions")
    for seed in range(300):
        replies = generate_case(seed, 40).synthesis
        if seed % 10 != 9:
            assert copied not in replies and restated not in replies, seed
            continue
        assert copied in replies and restated in replies, seed
        for index, reply in enumerate(replies):
            assert reply != SynthesisReply() or index % 2 == 0, (seed, index)
            assert reply != copied or index % 4 == 1, (seed, index)
            assert reply != restated or index % 4 == 3, (seed, index)


def test_the_reference_inserts_the_rule_under_recovery_instructions_when_the_model_copied_it_elsewhere(
    tmp_path: Path,
) -> None:
    """Seed 19: a committed Brief holds the copied rule under Key Decisions and the rule once
    under Recovery Instructions, which the reference inserted; nothing is broken."""
    result = run_case(
        PLUGIN, case_for_seed(19, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    summaries = [
        str(record["summary"])
        for record in map(json.loads, result.trace.splitlines())
        if record.get("kind") == "event" and record.get("name") == "session_compact"
        for record in [record["compactionEntry"]]
    ]
    copied = [s for s in summaries if "Event freshness" in section(s, "## Key Decisions")]
    assert copied
    assert all(len(freshness_rule_paragraphs(s)) == 1 for s in copied)


def _new_inputs(case: ExploreCase) -> list[bool]:
    """Whether the case holds each input this module's seed classes add."""
    return [
        case.options.resumes and "SwitchSessionOp" in _kinds(case.operations),
        case.options.competitor == "abort",
        len(case.tamper) == 2,
        case.options.max_tokens in CAPPED_MAX_TOKENS.values(),
        SynthesisReply(copy_recovery_to="## Key Decisions") in case.synthesis,
        any(rule.after.kind == "entry" and rule.after.occurrence == 11 for rule in case.crash),
    ]


#: (mutant, invariant, which of :func:`_new_inputs` the seed of its ``REQUIRED`` row holds; None:
#: none of them): each of the seven mutants this module made explorable dies first by the
#: invariant of its rule at its row's seed.
MADE_EXPLORABLE: list[tuple[str, str, int | None]] = [
    ("stale_not_inspected_on_resume", "stale_pending_reported", 0),
    ("abort_deletes_pending", "pending_brief_never_deleted", 1),
    ("reread_trusts_memory", "commit_bytes_on_disk", 2),
    ("output_budget_uncapped", "synthesis_output_within_limit", 3),
    ("freshness_rule_found_anywhere", "freshness_rule_once", 4),
    ("reconciled_archive_not_pruned", "archive_retention", 5),
    # It needed nothing new: its seed is one none of this session's seed classes touches.
    ("transcript_not_bounded", "synthesis_fits_window", None),
]


@pytest.mark.parametrize(
    ("name", "invariant", "new_input"), MADE_EXPLORABLE, ids=[row[0] for row in MADE_EXPLORABLE]
)
def test_a_mutant_made_explorable_dies_first_by_the_invariant_of_its_rule(
    tmp_path: Path, name: str, invariant: str, new_input: int | None
) -> None:
    assert name not in UNREACHABLE and MUTANTS[name].explorable
    (row,) = [r for r in REQUIRED if r[1] == name]
    assert row[3] == invariant and row[2] < 60  # within the kill matrix's seeds
    inputs = _new_inputs(generate_case(row[2], 40))
    assert inputs[new_input] if new_input is not None else not any(inputs)
    try:
        result = run_case(
            PLUGIN, case_for_seed(row[2], 40), implementation=MUTANTS[name].spec, workdir=tmp_path
        )
    finally:
        reset_reference()
    assert [v.invariant for v in result.violations][:1] == [invariant]


@pytest.mark.parametrize("heading", ["Key Decisions", "## ", "## Key\nDecisions", "####### Seven"])
def test_a_copy_into_something_that_is_no_heading_is_refused_naming_the_field(heading: str) -> None:
    """A scenario's ``copy_recovery_to`` must name a Markdown heading line: a bare name would be
    no section of the Brief, and the copy would silently go nowhere."""
    scenario = {"name": "bad", "model": {"extension": [{"copy_recovery_to": heading}]}, "operations": []}
    with pytest.raises(
        ScenarioError, match=r"model.extension\[0\]: .*copy_recovery_to names no Markdown heading"
    ):
        parse_scenario(scenario)
    assert parse_scenario({**scenario, "model": {"extension": [{"copy_recovery_to": "## Key Decisions"}]}})


def test_a_seed_15_modulo_20_dies_right_after_its_eleventh_compaction_entry() -> None:
    """One crash rule more, drawing nothing: the seed's other rules are those drawn, first."""
    for seed in range(300):
        case = generate_case(seed, 40)
        eleventh = [
            r
            for r in case.crash
            if (r.after.kind, r.after.name, r.after.occurrence) == ("entry", "compaction", 11)
        ]
        assert len(eleventh) == (seed % 20 == 15), seed
        if eleventh:
            assert case.crash[-1] == eleventh[0] and len(case.crash) == case.options.crash_rules + 1


def test_the_reference_keeps_the_rule_once_when_the_model_restated_it_under_recovery_instructions(
    tmp_path: Path,
) -> None:
    """Seed 19 also has replies that copy the quoted Recovery Instructions into their own: the
    reference finds the rule there and inserts nothing (P79b, spec §14 "idempotent"). Its
    mutant ``freshness_rule_not_idempotent`` dies at this seed (``REQUIRED``)."""
    result = run_case(
        PLUGIN, case_for_seed(19, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    summaries = [
        str(record["compactionEntry"]["summary"])
        for record in map(json.loads, result.trace.splitlines())
        if record.get("kind") == "event" and record.get("name") == "session_compact"
    ]
    # The restating reply is the fourth synthesis (slot 3): a restated Brief reads as the
    # reference's own would (the rule, then "Read this Brief ..."), so it is told by its count.
    assert SynthesisReply(copy_recovery_to="## Recovery Instructions") == case_for_seed(19, 40).synthesis[3]
    assert len(summaries) >= 4
    assert all(len(freshness_rule_paragraphs(s)) == 1 for s in summaries)
