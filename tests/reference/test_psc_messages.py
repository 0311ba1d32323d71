"""Spec §11: every user-visible message is exact and product-prefixed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from syrupy.assertion import SnapshotAssertion

from pi_continuity_harness.reference.psc import messages
from pi_continuity_harness.reference.psc.config import ConfigError, FieldProblem
from pi_continuity_harness.reference.psc.native_settings import NativeCompactionSettings

BRIEF = "/work/proj/.pi/session-continuity/s1/pending/e1.md"
SETTINGS = "/work/proj/.pi/settings.json"
CONFIG_ERROR = ConfigError(
    "/work/proj/.pi/session-continuity.json",
    (
        FieldProblem(
            "synthesisEffort", "Input should be 'inherit', 'minimal', 'low', 'medium', 'high' or 'xhigh'"
        ),
        FieldProblem(
            "triggerPercent", "unsupported field (automatic percentage fields were removed in v0.2.0)"
        ),
    ),
)

ALL_MESSAGES: dict[str, Callable[[], str]] = {
    "threshold_preparing": messages.threshold_preparing,
    "brief_saved": lambda: messages.brief_saved(BRIEF),
    "compaction_committed": lambda: messages.compaction_committed(BRIEF),
    "continuation_submitted": messages.continuation_submitted,
    "handoff_failed": lambda: messages.handoff_failed("synthesis was aborted"),
    "checkpoint_failed": lambda: messages.checkpoint_failed(
        "write failed: [Errno 28] No space left on device"
    ),
    "native_settings_refused": messages.native_settings_refused,
    "invalid_native_settings": lambda: messages.invalid_native_settings(
        NativeCompactionSettings(True, 93000, 55800),
        80000,
        SETTINGS,
        ["reserveTokens (93000) must be lower than the context window (80000)"],
    ),
    "settings_saved": lambda: messages.settings_saved(SETTINGS),
    "settings_cancelled": messages.settings_cancelled,
    "settings_read_only": lambda: messages.settings_read_only(SETTINGS),
    "checkpoint_read_only": messages.checkpoint_read_only,
    "project_settings_invalid": lambda: messages.project_settings_invalid(
        f"{SETTINGS} is not valid JSON (line 1 column 15: Expecting value)"
    ),
    "stale_pending_found": messages.stale_pending_found,
    "invalid_config": lambda: messages.invalid_config(CONFIG_ERROR),
    "incompatible_compaction": lambda: messages.incompatible_compaction(["fromExtension", "summary"]),
    "operation_in_progress": messages.operation_in_progress,
    "untrusted_project": messages.untrusted_project,
    "native_settings_unreadable": lambda: messages.native_settings_unreadable(
        SETTINGS, ["Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer."]
    ),
    "extension_disabled": lambda: messages.extension_disabled("/work/proj/.pi/session-continuity.json"),
    "config_saved": lambda: messages.config_saved("/work/proj/.pi/session-continuity.json"),
    "settings_input_rejected": lambda: messages.settings_input_rejected(
        "keep-recent percent (75) must be lower than the trigger percent (15)"
    ),
    "settings_write_failed": lambda: messages.settings_write_failed(
        f"cannot update {SETTINGS}: invalid JSON at line 1 column 18: Expecting property name"
    ),
    "archive_failed": lambda: messages.archive_failed(BRIEF, "[Errno 28] No space left on device"),
    "brief_reconciled": lambda: messages.brief_reconciled(
        "/work/proj/.pi/session-continuity/s1/archive/2026-11-30T00-01-02-123Z-e1.md"
    ),
    "unknown_subcommand": lambda: messages.unknown_subcommand("cleanup"),
}


def test_every_message_function_is_covered() -> None:
    assert sorted(ALL_MESSAGES) == sorted(messages.__all__)


@pytest.mark.parametrize("name", sorted(ALL_MESSAGES))
def test_every_message_matches_its_snapshot(name: str, snapshot: SnapshotAssertion) -> None:
    assert ALL_MESSAGES[name]() == snapshot


@pytest.mark.parametrize("name", sorted(ALL_MESSAGES))
def test_every_message_is_product_prefixed(name: str) -> None:
    text = ALL_MESSAGES[name]()
    assert text.startswith(
        ("Pi Session Continuity: ", "Pi Session Continuity failed: ", "Pi Session Continuity refused: ")
    )


def test_spec_section_11_required_messages_are_exact() -> None:
    assert messages.threshold_preparing() == (
        "Pi Session Continuity: native compaction reached its threshold; preparing durable Brief."
    )
    assert messages.brief_saved(BRIEF) == f"Pi Session Continuity: Continuity Brief saved to {BRIEF}."
    assert messages.compaction_committed(BRIEF) == (
        f"Pi Session Continuity: native compaction committed with disk-backed Brief {BRIEF}."
    )
    assert (
        messages.continuation_submitted() == "Pi Session Continuity: continuation submitted from saved Brief."
    )
    assert (
        messages.handoff_failed("boom")
        == "Pi Session Continuity failed: boom. Native compaction was cancelled."
    )
    assert messages.native_settings_refused() == (
        "Pi Session Continuity refused: native compaction settings are invalid for the current model. "
        "Run /continuity settings and restart Pi."
    )
    assert messages.settings_saved(SETTINGS) == (
        f"Pi Session Continuity: settings saved to {SETTINGS}; restart Pi to activate them."
    )
    assert messages.stale_pending_found() == (
        "Pi Session Continuity: stale pending Continuity Brief found for this session; leaving it inert."
    )


def test_failure_reason_is_one_clause_without_a_doubled_full_stop() -> None:
    assert messages.handoff_failed("synthesis was aborted.\n") == (
        "Pi Session Continuity failed: synthesis was aborted. Native compaction was cancelled."
    )
    assert (
        messages.handoff_failed("")
        == "Pi Session Continuity failed: unknown error. Native compaction was cancelled."
    )


def test_invalid_config_message_names_the_path_and_fields() -> None:
    text = messages.invalid_config(CONFIG_ERROR)
    assert "/work/proj/.pi/session-continuity.json" in text
    assert "synthesisEffort:" in text and "triggerPercent:" in text


def test_invalid_native_settings_message_shows_every_required_value() -> None:
    text = messages.invalid_native_settings(NativeCompactionSettings(False, 93000, 55800), None, SETTINGS, [])
    assert text.startswith(messages.native_settings_refused())
    for part in (
        "enabled: false",
        "reserveTokens: 93000",
        "keepRecentTokens: 55800",
        "contextWindow: unknown",
        SETTINGS,
    ):
        assert part in text
