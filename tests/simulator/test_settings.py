"""Unit tests of settings: merge, trust, per-model overrides, validation messages, reload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME, Model
from pi_continuity_harness.scenario.workspace import deep_merge
from pi_continuity_harness.simulator.settings import (
    SettingsError,
    SettingsManager,
    has_trust_requiring_resources,
    resolve_project_trust,
)

MODEL = Model(provider="fake", id="m", context_window=20000, max_tokens=1000)


def write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")


def layout(tmp_path: Path, global_: Any = None, project: Any = None) -> tuple[Path, Path]:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    if global_ is not None:
        write(agent / "settings.json", global_)
    if project is not None:
        write(cwd / CONFIG_DIR_NAME / "settings.json", project)
    return agent, cwd


def test_deep_merge_project_wins_and_nested_objects_merge() -> None:
    merged = deep_merge(
        {"compaction": {"enabled": True, "reserveTokens": 1}, "theme": "dark", "list": [1]},
        {"compaction": {"reserveTokens": 2}, "list": [2], "extra": None},
    )
    assert merged == {
        "compaction": {"enabled": True, "reserveTokens": 2},
        "theme": "dark",
        "list": [2],
        "extra": None,
    }


def test_defaults_and_merged_compaction_settings(tmp_path: Path) -> None:
    agent, cwd = layout(
        tmp_path, {"compaction": {"reserveTokens": 100}}, {"compaction": {"keepRecentTokens": 7}}
    )
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    assert settings.get_compaction_settings(MODEL).to_json() == {
        "enabled": True,
        "reserveTokens": 100,
        "keepRecentTokens": 7,
    }
    empty = SettingsManager.create(str(tmp_path / "none"), str(tmp_path / "none"), project_trusted=True)
    assert empty.get_compaction_settings(None).to_json() == {
        "enabled": True,
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
    }
    assert empty.get_retry_settings() == {
        "enabled": True,
        "maxRetries": 3,
        "baseDelayMs": 2000,
        "maxAgentDelayMs": 60000,
    }


def test_untrusted_project_settings_are_not_read(tmp_path: Path) -> None:
    agent, cwd = layout(tmp_path, {}, {"compaction": {"reserveTokens": 1234}})
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=False)
    assert settings.get_settings() == {}
    assert settings.is_project_trusted() is False


def test_model_overrides_take_precedence_per_model(tmp_path: Path) -> None:
    overrides = {
        "compaction": {"reserveTokens": 4000, "modelOverrides": {"fake/m": {"reserveTokens": 10000}}}
    }
    agent, cwd = layout(tmp_path, overrides)
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 10000
    other = Model(provider="fake", id="other", context_window=1, max_tokens=1)
    assert settings.get_compaction_settings(other).reserve_tokens == 4000


@pytest.mark.parametrize(
    ("compaction", "message"),
    [
        (
            {"reserveTokens": -5},
            "Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer.",
        ),
        (
            {"keepRecentTokens": 1.5},
            "Invalid compaction.keepRecentTokens setting: 1.5. Expected a non-negative safe integer.",
        ),
        (
            {"reserveTokens": True},
            "Invalid compaction.reserveTokens setting: true. Expected a non-negative safe integer.",
        ),
        (
            {"reserveTokens": "10"},
            "Invalid compaction.reserveTokens setting: 10. Expected a non-negative safe integer.",
        ),
        (
            {"modelOverrides": {"fake/m": 3}},
            'Invalid compaction.modelOverrides["fake/m"] setting: 3. Expected an object.',
        ),
        (
            {"modelOverrides": {"fake/m": {"reserveTokens": -1}}},
            'Invalid compaction.modelOverrides["fake/m"].reserveTokens setting: -1. '
            "Expected a non-negative safe integer.",
        ),
        # ``${String(value)}``: an array as its elements joined with "," (a null as ""), numbers
        # as JavaScript writes them (js_string; tests/realpi/test_js_string_matches_node.py).
        (
            {"reserveTokens": [1, [2, None], "x"]},
            "Invalid compaction.reserveTokens setting: 1,2,,x. Expected a non-negative safe integer.",
        ),
        (
            {"modelOverrides": {"fake/m": [1e21, 1.5e-7, 0.000001]}},
            'Invalid compaction.modelOverrides["fake/m"] setting: 1e+21,1.5e-7,0.000001. Expected an object.',
        ),
        # Only a missing key falls back: a JSON null is a value, and not a valid one.
        (
            {"reserveTokens": None},
            "Invalid compaction.reserveTokens setting: null. Expected a non-negative safe integer.",
        ),
        (
            {"modelOverrides": {"fake/m": None}},
            'Invalid compaction.modelOverrides["fake/m"] setting: null. Expected an object.',
        ),
        (
            {"modelOverrides": {"fake/m": {"keepRecentTokens": None}}},
            'Invalid compaction.modelOverrides["fake/m"].keepRecentTokens setting: null. '
            "Expected a non-negative safe integer.",
        ),
    ],
)
def test_invalid_values_raise_when_read_with_pis_message(
    tmp_path: Path, compaction: Any, message: str
) -> None:
    agent, cwd = layout(tmp_path, {"compaction": compaction})
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)  # loading never fails
    with pytest.raises(SettingsError) as raised:
        settings.get_compaction_settings(MODEL)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    "global_settings",
    [
        {"compaction": True, "retry": [1]},  # not objects: Pi's ``?.`` reads nothing from them
        {"compaction": {"enabled": None, "modelOverrides": 5}, "retry": {"maxRetries": None}},
        {"compaction": None, "retry": None},
    ],
    ids=["not-objects", "null-values", "null-sections"],
)
def test_absent_or_null_settings_take_pis_defaults(global_settings: dict[str, Any]) -> None:
    """``getCompactionEnabled`` and ``getRetrySettings`` use ``?? default``; a non-object section
    or ``modelOverrides`` contributes nothing."""
    settings = SettingsManager(
        cwd="/x", agent_dir="/x", project_trusted=True, global_settings=global_settings
    )
    assert settings.get_compaction_settings(MODEL).to_json() == {
        "enabled": True,
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
    }
    assert settings.get_retry_settings() == {
        "enabled": True,
        "maxRetries": 3,
        "baseDelayMs": 2000,
        "maxAgentDelayMs": 60000,
    }


def test_integral_floats_are_accepted() -> None:
    settings = SettingsManager(
        cwd="/x",
        agent_dir="/x",
        project_trusted=True,
        global_settings={"compaction": {"reserveTokens": 10.0}},
    )
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 10


def test_not_hot_reloaded_until_reload(tmp_path: Path) -> None:
    agent, cwd = layout(tmp_path, {"compaction": {"reserveTokens": 4000}})
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    write(agent / "settings.json", {"compaction": {"reserveTokens": 10000}})
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 4000
    settings.reload()
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 10000


def test_malformed_files_count_as_empty_and_are_reported(tmp_path: Path) -> None:
    """Not JSON, or JSON Pi's migration cannot look into (``"queueMode" in 42`` throws,
    settings-manager.js:283): a load error with JavaScript's message, and no settings."""
    agent, cwd = layout(tmp_path, "{not json", 42)
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    assert settings.get_settings() == {}
    assert len(settings.errors) == 2
    assert settings.errors[1].endswith("Cannot use 'in' operator to search for 'queueMode' in 42")
    write(agent / "settings.json", None)
    settings.reload()
    assert settings.errors[0].endswith("search for 'queueMode' in null") and settings.global_load_failed


def test_a_file_holding_an_array_loads_as_the_object_of_its_indexes(tmp_path: Path) -> None:
    """An array passes the migration's ``in`` checks and loads without an error; Pi spreads it
    (``{ ...globalSettings }``, settings-manager.js:19-32), so its readers see ``{"0": ...}``,
    the project's array merged over the global one index by index."""
    agent, cwd = layout(tmp_path, ["a", {"b": 1}], [None, {"c": 2}])
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    assert settings.errors == [] and not settings.global_load_failed
    assert settings.get_settings() == {"0": None, "1": {"b": 1, "c": 2}}
    assert settings.get_compaction_enabled() is True


def test_keys_that_are_array_indexes_come_first_as_javascript_orders_them(tmp_path: Path) -> None:
    """``JSON.parse`` and every object Pi builds enumerate array-index keys first, ascending
    (ECMA-262 OrdinaryOwnPropertyKeys); ``"07"``, ``"-1"`` and ``"4294967295"`` are no indexes."""
    agent, cwd = layout(
        tmp_path,
        {"b": 1, "10": 2, "07": 3, "2": {"z": 0, "1": 1}, "-1": 4, "4294967295": 5, "4294967294": 6},
        {"x": 0, "3": 7},
    )
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    merged = settings.get_settings()
    assert list(merged) == ["2", "3", "10", "4294967294", "b", "07", "-1", "4294967295", "x"]
    assert list(merged["2"]) == ["1", "z"]


def test_get_settings_returns_a_copy(tmp_path: Path) -> None:
    agent, cwd = layout(
        tmp_path, {"compaction": {"reserveTokens": 1}, "list": [{"a": [1]}, "s", 2.5, None, True]}
    )
    settings = SettingsManager.create(str(cwd), str(agent), project_trusted=True)
    settings.get_settings()["compaction"]["reserveTokens"] = 99
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 1
    copied = settings.get_settings()
    assert copied == settings.settings and copied["list"] == [{"a": [1]}, "s", 2.5, None, True]
    copied["list"][0]["a"].append(2)
    copied["list"].append("more")
    assert settings.get_settings()["list"] == [{"a": [1]}, "s", 2.5, None, True]
    # Values that are not JSON (a manager given them directly) are still copied deeply.
    odd = SettingsManager(
        cwd=str(cwd), agent_dir=str(agent), project_trusted=True, global_settings={"t": ([1],)}
    )
    odd.get_settings()["t"][0].append(2)
    assert odd.global_settings == {"t": ([1],)}


@pytest.mark.parametrize(
    "resource",
    [
        "settings.json",
        "mcp.json",
        "extensions",
        "skills",
        "prompts",
        "themes",
        "SYSTEM.md",
        "APPEND_SYSTEM.md",
    ],
)
def test_trust_requiring_resources(tmp_path: Path, resource: str) -> None:
    assert has_trust_requiring_resources(str(tmp_path)) is False
    (tmp_path / CONFIG_DIR_NAME).mkdir()
    assert has_trust_requiring_resources(str(tmp_path)) is False  # the directory alone is not a resource
    (tmp_path / CONFIG_DIR_NAME / resource).mkdir()
    assert has_trust_requiring_resources(str(tmp_path)) is True


@pytest.mark.parametrize(
    ("default", "approve", "stored", "resources", "trusted"),
    [
        (None, None, None, False, True),
        (None, None, None, True, False),
        ("ask", None, None, True, False),
        ("never", None, None, True, False),
        ("always", None, None, True, True),
        (None, True, None, True, True),
        ("always", False, None, False, False),
        (None, None, True, True, True),
        ("always", None, False, True, False),
        (None, None, False, False, False),
    ],
)
def test_trust_resolution(
    tmp_path: Path, default: Any, approve: Any, stored: Any, resources: bool, trusted: bool
) -> None:
    agent, cwd = layout(
        tmp_path, {"defaultProjectTrust": default} if default else {}, {} if resources else None
    )
    if stored is not None:
        write(agent / "trust.json", {str(cwd): {"decision": stored}})
    decision = resolve_project_trust(str(cwd), str(agent), approve=approve)
    assert decision.trusted is trusted
    assert decision.reason


@pytest.mark.parametrize(
    "global_",
    [
        None,
        "",
        "{not json",
        "[1]",
        "\ufeff{}",
        {"defaultProjectTrust": "always"},
        {"defaultProjectTrust": "never"},
        "DIR",
    ],
)
@pytest.mark.parametrize("stored", [None, True, False])
@pytest.mark.parametrize("resources", [False, True])
@pytest.mark.parametrize("approve", [None, False])
def test_create_trusting_is_trust_then_create_reading_the_global_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, global_: Any, stored: Any, resources: bool, approve: Any
) -> None:
    """``SettingsManager.create_trusting`` (a runtime's start) decides trust and reads the
    settings as ``resolve_project_trust`` then ``create`` did, for every content of the
    global file, with that file opened once instead of twice when trust needs it."""
    import builtins  # noqa: PLC0415

    agent, cwd = layout(
        tmp_path, None if global_ == "DIR" else global_, {"compaction": {}} if resources else None
    )
    if global_ == "DIR":
        (agent / "settings.json").mkdir()
    if stored is not None:
        write(agent / "trust.json", {str(cwd): stored})
    old_trust = resolve_project_trust(str(cwd), str(agent), approve=approve)
    old = SettingsManager.create(str(cwd), str(agent), project_trusted=old_trust.trusted)
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    trust, manager = SettingsManager.create_trusting(str(cwd), str(agent), approve=approve)
    monkeypatch.setattr(builtins, "open", real_open)
    assert trust == old_trust
    assert manager == old
    assert opened.count(str(agent / "settings.json")) == 1


def test_remembered_answers_follow_the_model_and_the_settings_read() -> None:
    """The compaction and retry settings are remembered per model id for the dicts they were
    read from: another model gets its own overrides, dicts read anew (a reload assigns new ones)
    are read anew, an invalid value raises at every read, and the retry settings are a new dict
    each time (a caller's change is not the next answer)."""
    other = Model(provider="fake", id="big", context_window=200000, max_tokens=1000)
    settings = SettingsManager(
        cwd="/x",
        agent_dir="/x",
        project_trusted=True,
        global_settings={
            "compaction": {"reserveTokens": 100, "modelOverrides": {"fake/big": {"reserveTokens": 9000}}},
            "retry": {"maxRetries": 5},
        },
    )
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 100
    assert settings.get_compaction_settings(other).reserve_tokens == 9000
    assert settings.get_compaction_settings(None).reserve_tokens == 100
    assert settings.get_compaction_settings(MODEL) == settings.get_compaction_settings(MODEL)
    retry = settings.get_retry_settings()
    retry["maxRetries"] = 0
    assert settings.get_retry_settings()["maxRetries"] == 5
    settings.global_settings = {"compaction": {"reserveTokens": 200}}
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 200
    assert settings.get_compaction_settings(other).reserve_tokens == 200
    assert settings.get_retry_settings()["maxRetries"] == 3
    settings.project_settings = {"compaction": {"reserveTokens": "lots"}}
    for _ in range(2):
        with pytest.raises(SettingsError, match=r"Invalid compaction\.reserveTokens setting"):
            settings.get_compaction_settings(MODEL)
    settings.project_settings = {}
    assert settings.get_compaction_settings(MODEL).reserve_tokens == 200
