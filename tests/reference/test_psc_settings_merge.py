"""Spec §6, §12: atomic project-settings merge preserving unrelated Pi settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.reference.psc.settings_merge import (
    SettingsMergeError,
    merge_project_compaction_settings,
    merged_settings_text,
)


def test_merge_creates_a_missing_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "proj" / "settings.json"
    merge_project_compaction_settings(str(path), 93000, 55800)
    assert path.read_text() == (
        '{\n  "compaction": {\n    "enabled": true,\n    "reserveTokens": 93000,\n'
        '    "keepRecentTokens": 55800\n  }\n}\n'
    )


def test_merge_preserves_unrelated_settings_and_key_order(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "theme": "dark",
                "compaction": {"keepRecentTokens": 1, "modelOverrides": {"a/b": {"reserveTokens": 7}}},
                "defaultTools": ["+web"],
            }
        )
    )
    merge_project_compaction_settings(str(path), 93000, 55800)
    merged = json.loads(path.read_text())
    assert list(merged) == ["theme", "compaction", "defaultTools"]
    assert merged["compaction"] == {
        "keepRecentTokens": 55800,
        "modelOverrides": {"a/b": {"reserveTokens": 7}},
        "enabled": True,
        "reserveTokens": 93000,
    }
    assert list(merged["compaction"]) == ["keepRecentTokens", "modelOverrides", "enabled", "reserveTokens"]


def test_merge_turns_native_compaction_back_on(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"compaction": {"enabled": false}}')
    merge_project_compaction_settings(str(path), 100, 50)
    assert json.loads(path.read_text())["compaction"]["enabled"] is True


def test_merge_writes_two_space_indented_json_with_unicode_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"name": "caf\\u00e9"}')
    merge_project_compaction_settings(str(path), 100, 50)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "name": "café",\n  "compaction": {\n    "enabled": true')
    assert text.endswith("}\n")


def test_merge_reports_the_atomic_write(tmp_path: Path) -> None:
    record = merge_project_compaction_settings(str(tmp_path / "settings.json"), 100, 50)
    assert record.fsync_count == 2


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{broken", "invalid JSON"),
        ("[]", "must be a JSON object"),
        ('"text"', "must be a JSON object"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": 1e999}', "out of range"),
        ('{"compaction": 5}', '"compaction" is not a JSON object'),
        ('{"compaction": null}', '"compaction" is not a JSON object'),
    ],
)
def test_unmergeable_settings_file_is_left_untouched(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(SettingsMergeError) as caught:
        merge_project_compaction_settings(str(path), 100, 50)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)
    assert path.read_text() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_settings_file_that_is_not_utf8_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(SettingsMergeError, match="UTF-8"):
        merge_project_compaction_settings(str(path), 100, 50)
    assert path.read_bytes() == b'{"a": "\xff"}'


@pytest.mark.parametrize(("reserve", "keep"), [(0, 5), (5, 0), (-1, 5), (True, 5), (5, 2.0)])
def test_merge_refuses_non_positive_or_non_integer_tokens(tmp_path: Path, reserve: Any, keep: Any) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        merge_project_compaction_settings(str(tmp_path / "settings.json"), reserve, keep)
    assert not (tmp_path / "settings.json").exists()


_keys = st.text(max_size=12)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=20,
)


@st.composite
def settings_objects(draw: st.DrawFn) -> dict[str, Any]:
    data = draw(st.dictionaries(_keys, _json, max_size=6))
    if draw(st.booleans()):
        data["compaction"] = draw(st.dictionaries(_keys, _json, max_size=5))
    return data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=settings_objects(), reserve=st.integers(1, 10**7), keep=st.integers(1, 10**7))
def test_settings_merge_preserves_arbitrary_unrelated_json(
    tmp_path: Path, existing: dict[str, Any], reserve: int, keep: int
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(existing, indent=4))
    merge_project_compaction_settings(str(path), reserve, keep)
    merged = json.loads(path.read_text(encoding="utf-8"))
    expected_compaction = dict(existing.get("compaction", {}))
    expected_compaction.update({"enabled": True, "reserveTokens": reserve, "keepRecentTokens": keep})
    expected = dict(existing)
    expected["compaction"] = expected_compaction
    assert merged == expected
    assert list(merged) == list(expected)
    assert list(merged["compaction"]) == list(expected_compaction)
    # Merging the same values again changes nothing.
    assert merged_settings_text(path.read_text(encoding="utf-8"), str(path), reserve, keep) == path.read_text(
        encoding="utf-8"
    )
