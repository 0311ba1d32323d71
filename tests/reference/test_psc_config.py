"""Spec §6: the project-local extension config after the removal of percentage fields."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.reference.psc.config import (
    ExtensionConfig,
    extension_config_path,
    load_extension_config,
    project_settings_path,
    resolve_artifact_directory,
)


def write_config(cwd: Path, content: str) -> Path:
    path = cwd / CONFIG_DIR_NAME / "session-continuity.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def test_config_path_is_under_the_host_config_dir_name(tmp_path: Path) -> None:
    assert extension_config_path(str(tmp_path)) == str(tmp_path / CONFIG_DIR_NAME / "session-continuity.json")
    assert project_settings_path(str(tmp_path)) == str(tmp_path / CONFIG_DIR_NAME / "settings.json")


def test_missing_config_file_gives_the_spec_defaults(tmp_path: Path) -> None:
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.ok and load.source == "missing-defaults"
    assert load.config.model_dump() == {
        "enabled": True,
        "synthesisModel": "inherit",
        "synthesisEffort": "medium",
        "artifactDirectory": "session-continuity",
    }


def test_untrusted_project_config_is_not_read_at_all(tmp_path: Path) -> None:
    write_config(tmp_path, '{"enabled": false, "artifactDirectory": "/tmp/elsewhere"}')
    load = load_extension_config(str(tmp_path), trusted=False)
    assert load.source == "untrusted-not-read"
    assert load.config == ExtensionConfig()


def test_untrusted_project_config_is_not_even_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, "{}")
    opened: list[str] = []
    real_open = open

    def spy(path: str, *args: object, **kwargs: object) -> object:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", spy)
    load_extension_config(str(tmp_path), trusted=False)
    assert opened == []


def test_valid_config_file_is_loaded(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        json.dumps(
            {
                "enabled": False,
                "synthesisModel": "openai/gpt-5-mini",
                "synthesisEffort": "high",
                "artifactDirectory": "briefs",
            }
        ),
    )
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.ok and load.source == "file"
    assert load.config.enabled is False
    assert load.config.synthesis_model_ref == ("openai", "gpt-5-mini")
    assert load.config.synthesis_effort == "high"


@pytest.mark.parametrize("effort", ["inherit", "minimal", "low", "medium", "high", "xhigh"])
def test_every_pi_effort_label_is_accepted(tmp_path: Path, effort: str) -> None:
    write_config(tmp_path, json.dumps({"synthesisEffort": effort}))
    assert load_extension_config(str(tmp_path), trusted=True).config.synthesis_effort == effort


@pytest.mark.parametrize("field", ["triggerPercent", "keepRecentPercent"])
def test_removed_automatic_percentage_fields_are_rejected_by_name(tmp_path: Path, field: str) -> None:
    path = write_config(tmp_path, json.dumps({field: 75}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert not load.ok and load.source == "invalid"
    assert load.error is not None
    assert load.error.path == str(path)
    assert load.error.fields == (field,)
    assert "removed in v0.2.0" in load.error.describe()
    assert load.config == ExtensionConfig()


def test_native_token_fields_are_rejected_from_the_extension_config(tmp_path: Path) -> None:
    write_config(tmp_path, json.dumps({"reserveTokens": 93000}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None
    assert "Pi's project settings" in load.error.describe()


def test_unknown_config_field_is_rejected(tmp_path: Path) -> None:
    write_config(tmp_path, json.dumps({"synthesis_effort": "low"}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None and load.error.fields == ("synthesis_effort",)
    assert "unknown field" in load.error.describe()


def test_invalid_synthesis_effort_names_the_file_the_field_and_the_reason(tmp_path: Path) -> None:
    path = write_config(tmp_path, json.dumps({"synthesisEffort": "extreme"}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None
    text = load.error.describe()
    assert text.startswith(f"{path}: synthesisEffort: ")
    assert '"extreme"' in text and "'xhigh'" in text


@pytest.mark.parametrize("model", ["gpt-5", "/gpt", "openai/", "open ai/gpt", ""])
def test_synthesis_model_must_be_inherit_or_provider_slash_model(tmp_path: Path, model: str) -> None:
    write_config(tmp_path, json.dumps({"synthesisModel": model}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None and load.error.fields == ("synthesisModel",)


def test_model_id_may_contain_further_slashes(tmp_path: Path) -> None:
    write_config(tmp_path, json.dumps({"synthesisModel": "openrouter/anthropic/claude"}))
    config = load_extension_config(str(tmp_path), trusted=True).config
    assert config.synthesis_model_ref == ("openrouter", "anthropic/claude")


@pytest.mark.parametrize("value", ["true", 1, None])
def test_enabled_must_be_a_json_boolean(tmp_path: Path, value: object) -> None:
    write_config(tmp_path, json.dumps({"enabled": value}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None and load.error.fields == ("enabled",)


@pytest.mark.parametrize("value", ["", "   ", 5])
def test_artifact_directory_must_be_a_non_empty_string(tmp_path: Path, value: object) -> None:
    write_config(tmp_path, json.dumps({"artifactDirectory": value}))
    assert load_extension_config(str(tmp_path), trusted=True).error is not None


def test_every_invalid_field_is_reported_not_only_the_first(tmp_path: Path) -> None:
    write_config(tmp_path, json.dumps({"enabled": "no", "synthesisEffort": "x", "triggerPercent": 1}))
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None
    assert set(load.error.fields) == {"enabled", "synthesisEffort", "triggerPercent"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON at line 1"),
        ("[1, 2]", "must be a JSON object"),
        ('{"enabled": true, "enabled": false}', "duplicate key 'enabled'"),
        ('{"enabled": NaN}', "NaN is not valid JSON"),
    ],
)
def test_unparseable_config_is_an_error_naming_the_file(tmp_path: Path, content: str, expected: str) -> None:
    path = write_config(tmp_path, content)
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None
    assert load.error.describe().startswith(f"{path}: ")
    assert expected in load.error.describe()


def test_config_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, "{}")
    path.write_bytes(b'{"artifactDirectory": "\xff"}')
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None and "UTF-8" in load.error.describe()


def test_config_path_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / CONFIG_DIR_NAME / "session-continuity.json").mkdir(parents=True)
    load = load_extension_config(str(tmp_path), trusted=True)
    assert load.error is not None and "cannot be read" in load.error.describe()


def test_relative_artifact_directory_resolves_under_the_config_dir(tmp_path: Path) -> None:
    assert resolve_artifact_directory(str(tmp_path), "session-continuity") == str(
        tmp_path / CONFIG_DIR_NAME / "session-continuity"
    )
    assert resolve_artifact_directory(str(tmp_path), "a/../b") == str(tmp_path / CONFIG_DIR_NAME / "b")


def test_absolute_artifact_directory_is_used_as_given(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "briefs"
    assert resolve_artifact_directory(str(tmp_path), str(target)) == str(target)


def test_relative_cwd_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = resolve_artifact_directory(".", "x")
    assert os.path.isabs(resolved) and resolved == str(tmp_path / CONFIG_DIR_NAME / "x")
