"""Spec §6, §12: the /continuity settings preview."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from pi_continuity_harness.reference.psc.native_settings import PercentInputError
from pi_continuity_harness.reference.psc.settings_preview import (
    INHERIT_MODEL_WARNING,
    inherit_model_warning,
    settings_preview,
)

PATH = "/work/proj/.pi/settings.json"


def test_settings_preview_for_the_spec_example(snapshot: SnapshotAssertion) -> None:
    text = settings_preview(372000, 75, 15, PATH)
    assert "reserveTokens = contextWindow - round(contextWindow × triggerPercent / 100)" in text
    assert "  = 372000 - round(372000 × 75 / 100) = 372000 - 279000 = 93000" in text
    assert "keepRecentTokens = round(contextWindow × keepRecentPercent / 100)" in text
    assert "  = round(372000 × 15 / 100) = 55800" in text
    assert f"Target: {PATH}" in text
    assert "A full Pi restart is required; percentages are not saved." in text
    assert text == snapshot


def test_settings_preview_with_a_pinned_model_and_fractional_percent(snapshot: SnapshotAssertion) -> None:
    text = settings_preview(200000, "80.5", "12.25", PATH, synthesis_model="openai/gpt-5-mini")
    assert INHERIT_MODEL_WARNING not in text
    assert "= 200000 - round(200000 × 80.5 / 100) = 200000 - 161000 = 39000" in text
    assert text == snapshot


def test_inherit_synthesis_model_gets_the_budget_warning() -> None:
    assert settings_preview(372000, 75, 15, PATH).endswith(INHERIT_MODEL_WARNING)
    assert inherit_model_warning("inherit") == INHERIT_MODEL_WARNING
    assert inherit_model_warning("a/b") is None
    assert "context and output budget near the native compaction threshold" in INHERIT_MODEL_WARNING


def test_settings_preview_refuses_invalid_percentages() -> None:
    with pytest.raises(PercentInputError):
        settings_preview(372000, 15, 75, PATH)
