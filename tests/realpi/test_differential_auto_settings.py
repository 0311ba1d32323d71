"""Differential: RPC ``set_auto_compaction`` and ``set_auto_retry``, real Pi 1.6 against the
simulator.

Both set a key of Pi's *global* settings in memory at once and write ``<agentDir>/settings.json``
(``setCompactionEnabled``/``setRetryEnabled``, settings-manager.js:646-653, :697-704): the file
as it is on disk then, migrated (settings-manager.js:281-327), with the one nested key from
memory, as ``JSON.stringify(settings, null, 2)`` (``persistScopedSettings``, :449-473). A project
file's value still wins in the merged settings. Neither could be said in a scenario before.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_LONG = "The quick brown fox jumps over the lazy dog. " * 18
_FIRST = {"text": _LONG, "usage": {"input": 1000, "output": 10}}
_ABOVE = {"text": _LONG, "usage": {"input": 17_000, "output": 10}}
_GLOBAL = {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}


def _settings_text(observation: Observation) -> str:
    return observation.on_disk(observation.agent_dir / "settings.json").read_text(encoding="utf-8")


def _compactions(observation: Observation) -> int:
    return len(observation.entries_of("compaction"))


def test_auto_compaction_switched_off_and_on_in_the_global_settings(targets: Targets) -> None:
    sc = scenario(
        {"agent": [_FIRST, _ABOVE, {"text": "after"}], "summary": [{"text": "S1"}]},
        settings={"global": {**_GLOBAL, "theme": "dark"}},
    )
    ops: list[Any] = [
        {"prompt": "zero " + _LONG},
        {"set_auto_compaction": False},
        {"prompt": "one " + _LONG},  # above the threshold: no compaction while it is off
        {"set_auto_compaction": True},
        {"prompt": "two"},  # the pre-prompt check compacts now
    ]
    real, sim = play(targets, sc, ops)
    assert all(o.ok for o in real.operations)
    assert _compactions(real) == 1
    assert _settings_text(real) == _settings_text(sim)
    assert '"enabled": true' in _settings_text(real)
    assert_equivalent(real, sim)


def test_a_project_setting_wins_over_set_auto_compaction(targets: Targets) -> None:
    """The project file says ``compaction.enabled: true``: Pi writes ``false`` to the global file
    and goes on compacting (deepMergeSettings, the project last)."""
    sc = scenario({"agent": [_FIRST, _ABOVE, {"text": "after"}], "summary": [{"text": "S1"}]})
    ops: list[Any] = [{"prompt": "zero " + _LONG}, {"set_auto_compaction": False}, {"prompt": "one " + _LONG}]
    real, sim = play(targets, sc, [*ops, {"prompt": "two"}])
    assert _compactions(real) == 1
    assert '"compaction": {\n    "enabled": false\n  }' in _settings_text(real)
    assert _settings_text(real) == _settings_text(sim)
    assert_equivalent(real, sim)


def test_auto_retry_switched_off_fails_the_next_server_error_at_once(targets: Targets) -> None:
    error = {"error": {"status": 500, "message": "upstream failed"}}
    sc = scenario(
        {"agent": [error, {"text": "unused"}]},
        settings={"global": {**_GLOBAL, "retry": {"enabled": True, "maxRetries": 2, "baseDelayMs": 20}}},
    )
    real, sim = play(targets, sc, [{"set_auto_retry": False}, {"prompt": "one"}])
    assert len(real.requests("agent")) == 1
    assert _settings_text(real) == _settings_text(sim)
    assert_equivalent(real, sim)


def test_the_write_keeps_an_outside_edit_and_migrates_legacy_keys(targets: Targets) -> None:
    """Pi reads the file again when it writes: a key edited outside Pi since it started is kept,
    and the legacy ``queueMode``, ``websockets``, ``retry.maxDelayMs`` and ``skills`` object come out
    migrated (settings-manager.js:281-327)."""
    legacy = {
        **_GLOBAL,
        "queueMode": "all",
        "websockets": True,
        "retry": {"maxDelayMs": 3000},
        "skills": {"enableSkillCommands": True, "customDirectories": []},
    }
    sc = scenario({"agent": [{"text": "ok"}]}, settings={"global": legacy})
    edit = {"edit_file": {"path": "$AGENT/settings.json", "json": {"theme": "light"}, "merge_json": True}}
    real, sim = play(targets, sc, [edit, {"set_auto_retry": True}, {"prompt": "one"}])
    text = _settings_text(real)
    assert (
        '"theme": "light"' in text and '"steeringMode": "all"' in text and '"maxRetryDelayMs": 3000' in text
    )
    assert (
        '"transport": "websocket"' in text
        and '"enableSkillCommands": true' in text
        and '"skills"' not in text
    )
    assert text == _settings_text(sim)
    assert_equivalent(real, sim)


def test_a_global_file_that_failed_to_load_is_not_written(targets: Targets) -> None:
    """``save()`` returns early when the global file failed to load (settings-manager.js:474-479):
    broken outside Pi and read so at a reload, then mended outside Pi, it is not written over
    (the setting changes in memory only)."""
    sc = scenario({"agent": [{"text": "ok"}]}, settings={"global": _GLOBAL})
    broken = {"edit_file": {"path": "$AGENT/settings.json", "text": '{"compaction": '}}
    mended = {"edit_file": {"path": "$AGENT/settings.json", "text": '{"theme": "dark"}'}}
    ops: list[Any] = [broken, "reload", mended, {"set_auto_compaction": False}, {"prompt": "one"}]
    real, sim = play(targets, sc, ops)
    assert _settings_text(real) == '{"theme": "dark"}'
    assert _settings_text(sim) == _settings_text(real)
    assert_equivalent(real, sim)


def test_a_global_file_holding_an_array_loads_and_is_written_back_as_an_object(targets: Targets) -> None:
    """A JSON array passes the migration (settings-manager.js:281-327) and loads without an
    error, so the write goes ahead: ``{ ...currentFileSettings }`` (:454) makes it the object of
    its indexes, the changed key added (until 6 December 2026 the simulator took the array for a
    load error and wrote nothing)."""
    sc = scenario({"agent": [{"text": "ok"}]}, settings={"global": _GLOBAL})
    array = {"edit_file": {"path": "$AGENT/settings.json", "text": '["x", {"y": 1}]'}}
    ops: list[Any] = [array, "reload", {"set_auto_compaction": False}, {"prompt": "one"}]
    real, sim = play(targets, sc, ops)
    assert _settings_text(real) == (
        '{\n  "0": "x",\n  "1": {\n    "y": 1\n  },\n  "compaction": {\n    "enabled": false\n  }\n}'
    )
    assert _settings_text(sim) == _settings_text(real)
    assert_equivalent(real, sim)


def test_the_write_puts_keys_that_are_array_indexes_first(targets: Targets) -> None:
    """``JSON.parse`` orders an object's array-index keys first, ascending (ECMA-262
    OrdinaryOwnPropertyKeys), and ``JSON.stringify`` writes them so: an outside edit's ``"7"``
    comes out before ``"b"``, ``"07"`` (no index) stays where it was."""
    sc = scenario({"agent": [{"text": "ok"}]}, settings={"global": _GLOBAL})
    edit = {
        "edit_file": {
            "path": "$AGENT/settings.json",
            "text": '{"b": 1, "07": 0, "7": 2, "1": {"z": 0, "0": 1}}',
        }
    }
    real, sim = play(targets, sc, [edit, {"set_auto_retry": True}, {"prompt": "one"}])
    text = _settings_text(real)
    assert (
        text.index('"1"') < text.index('"7"') < text.index('"b"') < text.index('"07"') < text.index('"retry"')
    )
    assert text.index('"0": 1') < text.index('"z"')
    assert _settings_text(sim) == text
    assert_equivalent(real, sim)


def test_a_section_that_is_a_truthy_primitive_fails_the_command_with_pis_type_error(targets: Targets) -> None:
    """``setCompactionEnabled`` assigns ``compaction.enabled`` on whatever the global file holds:
    on a string or ``true`` the assignment throws (ES modules are strict) before anything is marked
    or written, and RPC answers with the error (rpc-mode.js:653-655). The simulator refused such
    a run as not modelled until 6 December 2026."""
    sc = scenario(
        {"agent": [{"text": "ok"}]}, settings={"global": {**_GLOBAL, "compaction": "on", "retry": True}}
    )
    real, sim = play(
        targets, sc, [{"set_auto_compaction": False}, {"set_auto_retry": True}, {"prompt": "one"}]
    )
    assert [(o.name, o.ok, o.error) for o in real.operations][:2] == [
        ("set_auto_compaction", False, "Cannot create property 'enabled' on string 'on'"),
        ("set_auto_retry", False, "Cannot create property 'enabled' on boolean 'true'"),
    ]
    assert '"compaction": "on"' in _settings_text(real)
    assert _settings_text(sim) == _settings_text(real)
    assert_equivalent(real, sim)
