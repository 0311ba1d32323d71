"""Spec §11, §12: the status panel, the footer, and the status words."""

from __future__ import annotations

from dataclasses import replace

import pytest
from syrupy.assertion import SnapshotAssertion

from pi_continuity_harness.reference.psc.native_settings import NativeCompactionSettings
from pi_continuity_harness.reference.psc.status import (
    StatusSnapshot,
    footer_status,
    footer_text,
    format_status_panel,
    status_notify_type,
    status_word,
)

SPEC = NativeCompactionSettings(True, 93000, 55800)
ARMED = StatusSnapshot(
    trusted=True,
    extension_enabled=True,
    config_path="/work/proj/.pi/session-continuity.json",
    project_settings_path="/work/proj/.pi/settings.json",
    artifact_directory="/work/proj/.pi/session-continuity",
    synthesis_model="inherit",
    synthesis_effort="medium",
    live_settings=SPEC,
    context_window=372000,
)


def test_status_panel_begins_with_the_spec_block() -> None:
    lines = format_status_panel(ARMED).splitlines()
    assert lines[:7] == [
        "Pi Session Continuity",
        "Status: armed",
        "Model window: 372,000",
        "Reserve: 93,000",
        "Effective trigger: 279,000 (approximately 75.0%)",
        "Keep recent: 55,800 (approximately 15.0%)",
        "Restart required: no",
    ]


def test_status_panel_armed(snapshot: SnapshotAssertion) -> None:
    assert format_status_panel(ARMED) == snapshot


def test_status_panel_pending_restart_shows_live_and_written_values(snapshot: SnapshotAssertion) -> None:
    state = replace(
        ARMED,
        written_settings=NativeCompactionSettings(True, 100000, 40000),
        last_artifact_path="/work/proj/.pi/session-continuity/s1/archive/2026-11-30T00-01-02-123Z-e1.md",
        last_pending_path="/work/proj/.pi/session-continuity/s1/pending/e1.md",
    )
    text = format_status_panel(state)
    assert "Restart required: yes" in text
    assert "Live until restart: reserve 93,000, keep recent 55,800" in text
    assert "Written for after restart: reserve 100,000, keep recent 40,000" in text
    assert "Reserve: 93,000" in text  # live values stay authoritative until restart
    assert text == snapshot


def test_status_panel_refused_after_a_model_change(snapshot: SnapshotAssertion) -> None:
    state = replace(
        ARMED,
        context_window=80000,
        stale_pending_paths=("/work/proj/.pi/session-continuity/s1/pending/e0.md",),
        last_failure="synthesis was aborted",
        current_operation="threshold handoff e2",
    )
    text = format_status_panel(state)
    assert "Status: refused" in text
    assert "Effective trigger: -13,000 (approximately -16.3%)" in text
    assert "Problem: reserveTokens (93000) must be lower than the context window (80000)" in text
    assert text == snapshot


def test_status_panel_untrusted(snapshot: SnapshotAssertion) -> None:
    assert format_status_panel(replace(ARMED, trusted=False)) == snapshot


def test_status_panel_invalid_config_and_unknown_window(snapshot: SnapshotAssertion) -> None:
    state = replace(
        ARMED,
        config_error="/work/proj/.pi/session-continuity.json: synthesisEffort: bad",
        context_window=None,
        live_settings=None,
        native_settings_error=(
            "Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer."
        ),
    )
    assert format_status_panel(state) == snapshot


def test_model_change_recalculates_display_only() -> None:
    small = format_status_panel(replace(ARMED, context_window=200000))
    assert "Reserve: 93,000" in small
    assert "Effective trigger: 107,000 (approximately 53.5%)" in small
    assert "Keep recent: 55,800 (approximately 27.9%)" in small


@pytest.mark.parametrize(
    ("changes", "word"),
    [
        ({}, "armed"),
        ({"extension_enabled": False}, "disabled"),
        ({"live_settings": NativeCompactionSettings(False, 93000, 55800)}, "refused"),
        ({"context_window": 90000}, "refused"),
        ({"context_window": None}, "refused"),
        ({"config_error": "bad"}, "invalid-config"),
        ({"trusted": False, "config_error": "bad"}, "untrusted"),
        ({"extension_enabled": False, "config_error": "bad"}, "invalid-config"),
    ],
)
def test_status_word_reports_the_most_fundamental_state(changes: dict[str, object], word: str) -> None:
    assert status_word(replace(ARMED, **changes)) == word  # type: ignore[arg-type]


def test_restart_is_not_required_when_the_written_values_equal_the_live_ones() -> None:
    assert "Restart required: no" in format_status_panel(replace(ARMED, written_settings=SPEC))


def test_warnings_are_reserved_for_problem_states() -> None:
    assert status_notify_type(ARMED) == "info"
    assert (
        status_notify_type(replace(ARMED, written_settings=NativeCompactionSettings(True, 1, 1))) == "warning"
    )
    assert status_notify_type(replace(ARMED, stale_pending_paths=("x",))) == "warning"
    assert status_notify_type(replace(ARMED, last_failure="x")) == "warning"
    assert status_notify_type(replace(ARMED, extension_enabled=False)) == "warning"


def test_footer_shows_the_approximate_trigger_percentage() -> None:
    assert footer_status(75) == "Continuity @ ~75.0%"
    assert footer_text(ARMED) == "Continuity @ ~75.0%"
    assert footer_text(replace(ARMED, context_window=400000)) == "Continuity @ ~76.8%"


def test_footer_names_the_state_when_not_armed() -> None:
    assert footer_text(replace(ARMED, extension_enabled=False)) == "Continuity disabled"
    assert footer_text(replace(ARMED, context_window=50000)) == "Continuity refused"
