"""Spec §7 and the seeds README: artifact paths, filesystem-safe ids, session isolation."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.reference.psc.paths import (
    ArtifactLayout,
    file_timestamp,
    iso_timestamp,
    parse_archive_name,
    safe_path_component,
    safe_session_component,
)

MOMENT = datetime(2026, 11, 30, 0, 1, 2, 123456, tzinfo=UTC)
SAFE_NAME = re.compile(r"^[A-Za-z0-9._~-]+$")


def test_pending_path_follows_the_spec_layout(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "0199a1b2-c3d4")
    assert layout.pending_path("ev-1") == str(tmp_path / "0199a1b2-c3d4" / "pending" / "ev-1.md")


def test_archive_path_follows_the_spec_layout(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    assert layout.archive_path(MOMENT, "ev-1") == str(
        tmp_path / "s1" / "archive" / "2026-11-30T00-01-02-123Z-ev-1.md"
    )


def test_failed_path_follows_the_spec_layout(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    assert layout.failed_path(MOMENT, "ev-1") == str(
        tmp_path / "s1" / "failed" / "2026-11-30T00-01-02-123Z-ev-1.md"
    )


def test_session_directories_are_separate_per_session(tmp_path: Path) -> None:
    one, two = ArtifactLayout(str(tmp_path), "s1"), ArtifactLayout(str(tmp_path), "s2")
    assert one.session_dir != two.session_dir
    for layout in (one, two):
        for path in (
            layout.pending_path("e"),
            layout.archive_path(MOMENT, "e"),
            layout.failed_path(MOMENT, "e"),
        ):
            assert Path(path).parent.parent == Path(layout.session_dir)


def test_file_timestamp_is_filesystem_safe_and_sortable() -> None:
    assert file_timestamp(MOMENT) == "2026-11-30T00-01-02-123Z"
    earlier = file_timestamp(MOMENT - timedelta(milliseconds=1))
    later = file_timestamp(MOMENT + timedelta(days=40))
    assert earlier < file_timestamp(MOMENT) < later


def test_timestamps_are_converted_to_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert iso_timestamp(datetime(2026, 11, 30, 2, 1, 2, 5000, tzinfo=plus_two)) == "2026-11-30T00:01:02.005Z"


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        file_timestamp(datetime(2026, 1, 1))


def test_archive_names_are_recognised_and_others_are_not() -> None:
    assert parse_archive_name("2026-11-30T00-01-02-123Z-ev-1.md") == ("2026-11-30T00-01-02-123Z", "ev-1")
    assert parse_archive_name("notes.md") is None
    assert parse_archive_name("2026-11-30T00-01-02-123Z-ev-1.md.tmp") is None


def test_pi_style_session_ids_are_used_unchanged() -> None:
    assert (
        safe_session_component("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
        == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    )
    assert safe_session_component("s1_postrun-1795996307") == "s1_postrun-1795996307"


@pytest.mark.parametrize(
    "session_id", ["../../etc", "a/b", "..", ".", "", "a\\b", "x\x00y", ".hidden", "a" * 300]
)
def test_unsafe_session_ids_cannot_escape_the_artifact_directory(tmp_path: Path, session_id: str) -> None:
    component = safe_session_component(session_id)
    assert SAFE_NAME.match(component)
    assert component not in ("", ".", "..") and not component.startswith(".")
    assert len(component) <= 128
    layout = ArtifactLayout(str(tmp_path), session_id)
    assert os.path.dirname(layout.session_dir) == str(tmp_path)


def test_ids_differing_only_in_unsafe_characters_get_different_directories() -> None:
    assert safe_session_component("a/b") != safe_session_component("a:b")
    assert safe_session_component("a/b") != safe_session_component("a_b")


def test_ids_differing_only_in_case_get_different_directories() -> None:
    # Case-insensitive filesystems would otherwise merge the two sessions.
    assert safe_session_component("Session").lower() != safe_session_component("session").lower()


def test_a_plain_id_can_never_equal_a_hashed_one() -> None:
    hashed = safe_session_component("a/b")
    assert "~" in hashed
    assert safe_session_component(hashed) != hashed


@given(st.text(max_size=200), st.text(max_size=200))
def test_distinct_ids_map_to_distinct_components(first: str, second: str) -> None:
    if first != second:
        assert safe_path_component(first) != safe_path_component(second)
        assert safe_path_component(first).lower() != safe_path_component(second).lower()


@given(st.text(max_size=300))
def test_every_component_is_filesystem_safe(value: str) -> None:
    component = safe_path_component(value)
    assert SAFE_NAME.match(component)
    assert component not in (".", "..") and not component.startswith(".")
    assert len(component) <= 128


def test_event_ids_are_made_safe_too(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    assert os.path.dirname(layout.pending_path("../../x")) == layout.pending_dir
