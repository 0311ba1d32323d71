"""Spec §8, §10, §18: correlating a prepared Brief with Pi's committed CompactionEntry."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.reference.psc.atomic_io import atomic_write_text, read_text_exact
from pi_continuity_harness.reference.psc.brief import insert_event_freshness_rule
from pi_continuity_harness.reference.psc.constants import CONTINUATION_SUFFIX
from pi_continuity_harness.reference.psc.frontmatter import build_frontmatter, serialize_brief
from pi_continuity_harness.reference.psc.handoff import (
    PreparedHandoff,
    brief_sha256,
    commit_mismatches,
    continuation_text,
    handoff_reason_for,
    resume_source_problems,
)
from pi_continuity_harness.reference.psc.native_settings import NativeCompactionSettings

from .builders import frontmatter_kwargs, make_body

PATH = "/work/proj/.pi/session-continuity/s1/pending/e1.md"
SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
EVENT = "0b7e6a52-3f4d-4a51-9b61-6d8b8c1f2a10"


def brief(**changes: Any) -> str:
    return serialize_brief(
        build_frontmatter(**frontmatter_kwargs(**changes)), insert_event_freshness_rule(make_body())
    )


def prepared(text: str | None = None) -> PreparedHandoff:
    return PreparedHandoff(
        event_id=EVENT,
        session_id=SESSION,
        artifact_path=PATH,
        text=text if text is not None else brief(),
        compaction_reason="threshold",
        settings=NativeCompactionSettings(True, 93000, 55800),
    )


def entry(handoff: PreparedHandoff, **changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "type": "compaction",
        "id": "3b38dc48",
        "summary": handoff.text,
        "firstKeptEntryId": "710bafea",
        "tokensBefore": 17010,
        "details": handoff.details(),
        "fromHook": True,
    }
    value.update(changes)
    return value


def check(handoff: PreparedHandoff, **overrides: Any) -> list[str]:
    args: dict[str, Any] = {
        "from_extension": True,
        "reason": "threshold",
        "session_id": SESSION,
        "compaction_entry": entry(handoff),
        "disk_text": handoff.text,
    }
    args.update(overrides)
    return commit_mismatches(handoff, **args)


def test_compaction_details_carry_event_path_hash_session_reason_and_settings() -> None:
    handoff = prepared()
    assert handoff.details() == {
        "continuityEventId": EVENT,
        "artifactPath": PATH,
        "sha256": brief_sha256(handoff.text),
        "sessionId": SESSION,
        "handoffReason": "threshold",
        "settings": {"enabled": True, "reserveTokens": 93000, "keepRecentTokens": 55800},
    }


def test_written_and_reread_brief_hashes_to_the_details_hash(tmp_path: Path) -> None:
    handoff = prepared()
    target = tmp_path / "s1" / "pending" / "e1.md"
    atomic_write_text(str(target), handoff.text)
    reread = read_text_exact(str(target))
    assert reread == handoff.text
    assert brief_sha256(reread) == handoff.details()["sha256"]
    assert hashlib.sha256(target.read_bytes()).hexdigest() == handoff.sha256


def test_sha256_is_of_the_exact_utf8_bytes() -> None:
    assert brief_sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert brief_sha256("é") != brief_sha256("e")


def test_matching_commit_has_no_mismatches() -> None:
    assert check(prepared()) == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"from_extension": False}, ["fromExtension"]),
        ({"reason": "overflow"}, ["reason"]),
        ({"session_id": "other"}, ["sessionId"]),
        ({"disk_text": None}, ["disk"]),
        ({"disk_text": "tampered"}, ["disk"]),
    ],
)
def test_each_commit_check_can_fail_alone(overrides: dict[str, Any], expected: list[str]) -> None:
    assert check(prepared(), **overrides) == expected


@pytest.mark.parametrize(
    ("detail", "value", "expected"),
    [
        ("continuityEventId", "e-other", "eventId"),
        ("artifactPath", "/elsewhere.md", "artifactPath"),
        ("sha256", "0" * 64, "sha256"),
        ("sessionId", "s-other", "sessionId"),
    ],
)
def test_each_detail_must_match(detail: str, value: str, expected: str) -> None:
    handoff = prepared()
    details = dict(handoff.details(), **{detail: value})
    assert check(handoff, compaction_entry=entry(handoff, details=details)) == [expected]


def test_a_replaced_compaction_result_is_detected() -> None:
    handoff = prepared()
    foreign = {"type": "compaction", "summary": "SUMMARY-1", "details": {"readFiles": []}, "fromHook": False}
    assert check(handoff, from_extension=False, compaction_entry=foreign) == [
        "fromExtension",
        "eventId",
        "artifactPath",
        "sha256",
        "sessionId",
        "summary",
    ]


def test_summary_bytes_must_equal_the_prepared_brief() -> None:
    handoff = prepared()
    assert check(handoff, compaction_entry=entry(handoff, summary=handoff.text + " ")) == ["summary"]


def test_disk_brief_that_is_no_longer_pending_is_a_mismatch() -> None:
    archived = brief(status="archived")
    handoff = prepared(archived)
    assert check(handoff) == ["disk"]


def test_handoff_reasons_map_pi_compaction_reasons() -> None:
    assert handoff_reason_for("threshold") == "threshold"
    assert handoff_reason_for("overflow") == "overflow"
    assert handoff_reason_for("manual") == "manual-compaction"
    with pytest.raises(ValueError):
        handoff_reason_for("checkpoint")
    assert replace(prepared(), compaction_reason="manual").details()["handoffReason"] == "manual-compaction"


# ------------------------------------------------------------------ resume sources


def test_valid_same_session_pending_brief_may_be_used() -> None:
    assert resume_source_problems(brief(), session_id=SESSION, event_id=EVENT) == []


def test_failed_artifact_is_refused_even_with_a_plausible_body() -> None:
    problems = resume_source_problems(brief(status="failed"), session_id=SESSION)
    assert problems == ["status is failed; only a pending Brief may be used"]


def test_archived_artifact_is_refused() -> None:
    problems = resume_source_problems(brief(status="archived"), session_id=SESSION)
    assert problems == ["status is archived; only a pending Brief may be used"]


def test_legacy_artifact_is_refused_even_with_a_plausible_body() -> None:
    legacy = brief().replace('kind: "pi-session-continuity/v2"', 'kind: "pi-session-continuity/v1"')
    problems = resume_source_problems(legacy, session_id=SESSION)
    assert len(problems) == 1 and problems[0].startswith("legacy artifact:")


def test_cross_session_artifact_is_refused() -> None:
    problems = resume_source_problems(brief(), session_id="another-session")
    assert problems == [f"belongs to session {SESSION!r}, not 'another-session'"]


def test_other_event_is_refused_when_an_event_is_expected() -> None:
    problems = resume_source_problems(brief(), session_id=SESSION, event_id="e-2")
    assert problems == [f"eventId is {EVENT!r}, expected 'e-2'"]


def test_brief_with_an_invalid_body_is_refused() -> None:
    text = serialize_brief(build_frontmatter(**frontmatter_kwargs()), make_body(omit=("## Task",)))
    assert resume_source_problems(text, session_id=SESSION) == ["missing or out-of-order heading: ## Task"]


def test_malformed_artifact_is_refused() -> None:
    assert resume_source_problems("# Continuity Brief\n", session_id=SESSION) != []


# ------------------------------------------------------------------ continuation


def test_continuation_is_the_exact_brief_plus_the_fixed_suffix() -> None:
    text = brief()
    message = continuation_text(text)
    assert message == text + "\n" + CONTINUATION_SUFFIX
    assert message.startswith(text)


def test_continuation_of_a_brief_without_final_newline_still_separates_the_suffix() -> None:
    assert continuation_text("body") == "body\n\n" + CONTINUATION_SUFFIX
