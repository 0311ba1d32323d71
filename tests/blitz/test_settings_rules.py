"""Settings: every key of the settings table with its default and constraint, atomic persistence,
invalid input keeping the prior value with a hint, narrow normalisation, unknown keys rejected."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_continuity_harness.reference.blitz.settings import (
    SETTING_KEYS,
    BlitzSettings,
    apply_edit,
    load_settings,
    normalise_config,
    save_settings,
)

DEFAULTS = {
    "contextWarningPercent": 60,
    "criticalWarningPercent": 90,
    "automaticSessionHandoff": False,
    "deferPromptsFrom": "writing",
    "deleteHandoffAfterReading": True,
    "automaticSessionHandoffPercent": 70,
    "readinessRetrySeconds": 60,
    "maxSessionChainLength": 25,
    "recoveryDirectory": None,
    "templateDirectory": None,
    "callTemplate": "call_default.cmpl",
    "handoffTemplate": "handoff_default.cmpl",
}


def test_every_key_of_the_settings_table_has_its_default() -> None:
    assert list(SETTING_KEYS) == list(DEFAULTS)
    assert BlitzSettings().to_json() == DEFAULTS


@pytest.mark.parametrize(
    ("key", "raw"),
    [
        ("contextWarningPercent", "0"),
        ("contextWarningPercent", "90"),
        ("contextWarningPercent", "nan"),
        ("criticalWarningPercent", "101"),
        ("criticalWarningPercent", "60"),
        ("criticalWarningPercent", "inf"),
        ("automaticSessionHandoff", "maybe"),
        ("deferPromptsFrom", "never"),
        ("deleteHandoffAfterReading", "2"),
        ("automaticSessionHandoffPercent", "-1"),
        ("automaticSessionHandoffPercent", "100.5"),
        ("readinessRetrySeconds", "0"),
        ("readinessRetrySeconds", "301"),
        ("readinessRetrySeconds", "1.5"),
        ("maxSessionChainLength", "0"),
        ("recoveryDirectory", "relative/dir"),
        ("templateDirectory", "relative"),
        ("callTemplate", "/abs/call_x.cmpl"),
        ("callTemplate", "handoff_default.cmpl"),
        ("handoffTemplate", "handoff_x.txt"),
    ],
)
def test_invalid_input_keeps_the_prior_value_with_a_hint(key: str, raw: str) -> None:
    settings = BlitzSettings()
    updated, hint = apply_edit(settings, key, raw)
    assert updated is None
    assert hint is not None and key in hint
    assert settings.to_json() == DEFAULTS


@pytest.mark.parametrize(
    ("key", "raw", "value"),
    [
        ("contextWarningPercent", "1", 1),
        ("criticalWarningPercent", "100", 100),
        ("automaticSessionHandoff", "true", True),
        ("deferPromptsFrom", "request", "request"),
        ("deleteHandoffAfterReading", "false", False),
        ("automaticSessionHandoffPercent", "0", 0),
        ("readinessRetrySeconds", "300", 300),
        ("maxSessionChainLength", "1", 1),
        ("recoveryDirectory", "/tmp/recovery", "/tmp/recovery"),
        ("templateDirectory", "null", None),
        ("callTemplate", "call_mine.cmpl", "call_mine.cmpl"),
        ("handoffTemplate", "handoff_mine.cmpl", "handoff_mine.cmpl"),
    ],
)
def test_a_valid_edit_changes_exactly_that_key(key: str, raw: str, value: object) -> None:
    updated, hint = apply_edit(BlitzSettings(), key, raw)
    assert hint is None and updated is not None
    assert updated.to_json() == {**DEFAULTS, key: value}


def test_zero_automatic_percent_disables_automatic() -> None:
    on = BlitzSettings.model_validate({"automaticSessionHandoff": True})
    assert on.automatic_enabled
    off = BlitzSettings.model_validate({"automaticSessionHandoff": True, "automaticSessionHandoffPercent": 0})
    assert not off.automatic_enabled
    assert not BlitzSettings().automatic_enabled


def test_settings_persist_atomically_and_in_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}", encoding="utf-8")
    updated, _ = apply_edit(BlitzSettings(), "readinessRetrySeconds", "5")
    assert updated is not None
    save_settings(str(path), updated)
    assert json.loads(path.read_text()) == {**DEFAULTS, "readinessRetrySeconds": 5}
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]  # no temp file left behind
    assert load_settings(str(path)).settings == updated


def test_unknown_keys_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    for data in ({"nope": 1}, {"debugging": True}, {"speedMode": "fast"}):
        path.write_text(json.dumps(data), encoding="utf-8")
        loaded = load_settings(str(path))
        assert loaded.error is not None
        assert loaded.settings == BlitzSettings()


def test_older_configs_are_normalised_narrowly_in_memory(tmp_path: Path) -> None:
    old = {
        "contextWarningPercent": 50,
        "criticalWarningPercent": 85,
        "automaticSessionHandoff": True,
        "automaticSessionHandoffPercent": 75,
        "readinessRetrySeconds": 30,
        "recoveryDirectory": None,
        "templateDirectory": None,
        "handoffTemplate": "handoff_default.cmpl",
        "prepareWhileWaiting": True,
        "writerAttempts": 2,
        "writerRetryDelaySeconds": 5,
    }
    path = tmp_path / "config.json"
    text = json.dumps(old)
    path.write_text(text, encoding="utf-8")
    loaded = load_settings(str(path))
    assert loaded.error is None
    data = loaded.settings.to_json()
    assert data["deferPromptsFrom"] == "writing"
    assert data["deleteHandoffAfterReading"] is True
    assert data["maxSessionChainLength"] == 25
    assert data["callTemplate"] == "call_default.cmpl"
    assert data["contextWarningPercent"] == 50
    assert path.read_text() == text  # no automatic rewrite


def test_retired_values_are_still_validated() -> None:
    with pytest.raises(ValueError, match="prepareWhileWaiting"):
        normalise_config({"prepareWhileWaiting": "yes"})
    with pytest.raises(ValueError, match="writerAttempts"):
        normalise_config({"writerAttempts": "two"})


def test_invalid_shapes_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    for text in ("[]", "not json", '{"readinessRetrySeconds": "60"}', '{"automaticSessionHandoff": 1}'):
        path.write_text(text, encoding="utf-8")
        assert load_settings(str(path)).error is not None


def test_a_missing_config_is_the_defaults(tmp_path: Path) -> None:
    loaded = load_settings(str(tmp_path / "absent.json"))
    assert loaded.error is None
    assert loaded.settings == BlitzSettings()
    assert not os.path.exists(tmp_path / "absent.json")
