"""The ``set_auto_compaction`` and ``set_auto_retry`` operations on the simulator: Pi's
``setCompactionEnabled``/``setRetryEnabled`` (settings-manager.js:646-653, :697-704) change the
global settings in memory and write ``<agentDir>/settings.json`` (``persistScopedSettings``,
:449-473). Both targets are compared in ``tests/realpi/test_differential_auto_settings.py``;
these pin the same behaviour, and the branches real Pi reaches only through a broken file,
without Node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.settings import (
    SettingsError,
    SettingsManager,
    SettingsWriteNotModelledError,
)

from .helpers import base, op_ends, run


def _global_file(result: Any) -> Path:
    return result.machine_dir / "agent" / "settings.json"


def test_set_auto_compaction_writes_the_global_file_as_json_stringify_with_two_spaces(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"set_auto_compaction": False}],
        model={"agent": []},
        settings={"global": {"theme": "dark"}},
    )
    result = run(tmp_path, scenario)
    assert op_ends(result) == [("set_auto_compaction", True, None)]
    text = _global_file(result).read_text(encoding="utf-8")
    assert text.endswith("}") and not text.endswith("\n")
    assert json.loads(text)["compaction"] == {"enabled": False}
    assert json.loads(text)["theme"] == "dark"


def test_a_project_value_still_wins_in_the_merged_settings(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "project" / ".pi").mkdir(parents=True)
    (tmp_path / "project" / ".pi" / "settings.json").write_text(
        '{"compaction": {"enabled": true}}', encoding="utf-8"
    )
    manager = SettingsManager.create(str(tmp_path / "project"), str(tmp_path / "agent"), project_trusted=True)
    manager.set_compaction_enabled(False)
    assert manager.get_compaction_enabled()
    assert json.loads((tmp_path / "agent" / "settings.json").read_text(encoding="utf-8")) == {
        "compaction": {"enabled": False}
    }


def _manager(tmp_path: Path, text: str | None) -> SettingsManager:
    agent = tmp_path / "agent"
    agent.mkdir()
    if text is not None:
        (agent / "settings.json").write_text(text, encoding="utf-8")
    return SettingsManager.create(str(tmp_path / "project"), str(agent), project_trusted=False)


def test_a_file_that_failed_to_load_is_never_written(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "{not json")
    # Mended outside Pi after it was read: Pi still does not write (settings-manager.js:474-479).
    (tmp_path / "agent" / "settings.json").write_text('{"theme": "dark"}', encoding="utf-8")
    manager.set_compaction_enabled(False)
    assert not manager.get_compaction_enabled()
    assert (tmp_path / "agent" / "settings.json").read_text(encoding="utf-8") == '{"theme": "dark"}'


def test_a_file_broken_since_the_start_is_kept_and_the_error_recorded(tmp_path: Path) -> None:
    manager = _manager(tmp_path, '{"retry": {"enabled": true}}')
    (tmp_path / "agent" / "settings.json").write_text("[1,", encoding="utf-8")
    manager.set_retry_enabled(False)
    assert (tmp_path / "agent" / "settings.json").read_text(encoding="utf-8") == "[1,"
    assert manager.errors and manager.errors[-1].startswith("global settings:")
    assert manager.get_retry_settings()["enabled"] is False


def test_a_number_in_the_file_reads_as_javascript_reads_it(tmp_path: Path) -> None:
    manager = _manager(tmp_path, '{"compaction": {"reserveTokens": 4000.0}, "big": 1e20}')
    manager.set_compaction_enabled(True)
    text = (tmp_path / "agent" / "settings.json").read_text(encoding="utf-8")
    # JSON.stringify(1e20) is "100000000000000000000" (Number::toString below 1e21).
    assert text == (
        '{\n  "compaction": {\n    "reserveTokens": 4000,\n    "enabled": true\n  },\n'
        '  "big": 100000000000000000000\n}'
    )


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("5", "Cannot create property 'enabled' on number '5'"),
        ('"on"', "Cannot create property 'enabled' on string 'on'"),
        ("true", "Cannot create property 'enabled' on boolean 'true'"),
        ("1.5", "Cannot create property 'enabled' on number '1.5'"),
    ],
)
def test_a_section_that_is_a_truthy_primitive_throws_pis_type_error(
    tmp_path: Path, section: str, message: str
) -> None:
    """Pi (an ES module, strict) throws setting a property of a number, string or true, before
    anything is marked or written (``tests/realpi/test_differential_auto_settings.py``)."""
    manager = _manager(tmp_path, '{"compaction": ' + section + "}")
    with pytest.raises(SettingsError) as raised:
        manager.set_compaction_enabled(False)
    assert str(raised.value) == message
    assert (tmp_path / "agent" / "settings.json").read_text(
        encoding="utf-8"
    ) == '{"compaction": ' + section + "}"


def test_a_section_that_is_an_array_is_refused_as_not_modelled(tmp_path: Path) -> None:
    """Pi sets the property on the array and writes it back as an object of its indexes and the
    key; the simulator says it does not model the case instead of guessing."""
    manager = _manager(tmp_path, '{"compaction": [1]}')
    with pytest.raises(SettingsWriteNotModelledError, match="not modelled by the simulator"):
        manager.set_compaction_enabled(False)
    assert issubclass(SettingsWriteNotModelledError, SimulatorError)
