"""Spec §7: archive retention keeps the newest 10 Briefs of one session, nothing else."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pi_continuity_harness.reference.psc.paths import ArtifactLayout
from pi_continuity_harness.reference.psc.retention import (
    archived_briefs,
    leftover_temp_files,
    pending_briefs,
    prune_archive,
)

START = datetime(2026, 11, 30, tzinfo=UTC)


def make_archives(layout: ArtifactLayout, count: int) -> list[str]:
    paths = []
    for index in range(count):
        path = Path(layout.archive_path(START + timedelta(minutes=index), f"ev-{index:02d}"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"brief {index}")
        paths.append(str(path))
    return paths


def test_prune_keeps_the_newest_ten_archived_briefs(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    paths = make_archives(layout, 13)
    deleted = prune_archive(layout.archive_dir)
    assert deleted == paths[:3]
    assert archived_briefs(layout.archive_dir) == paths[3:]


def test_prune_with_fewer_than_the_limit_deletes_nothing(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    paths = make_archives(layout, 10)
    assert prune_archive(layout.archive_dir) == []
    assert archived_briefs(layout.archive_dir) == paths


def test_prune_orders_by_timestamp_not_by_event_id(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    old = Path(layout.archive_path(START, "zzz"))
    new = Path(layout.archive_path(START + timedelta(seconds=1), "aaa"))
    old.parent.mkdir(parents=True)
    old.write_text("old")
    new.write_text("new")
    assert prune_archive(layout.archive_dir, keep=1) == [str(old)]


def test_prune_touches_only_recognised_archive_files(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    make_archives(layout, 12)
    archive = Path(layout.archive_dir)
    (archive / "notes.md").write_text("mine")
    (archive / ".2026-01-01T00-00-00-000Z-x.md.abc.tmp").write_text("temp")
    (archive / "2020-01-01T00-00-00-000Z-dir.md").mkdir()
    pending = Path(layout.pending_path("p"))
    pending.parent.mkdir(parents=True)
    pending.write_text("pending")
    other = ArtifactLayout(str(tmp_path), "s2")
    other_paths = make_archives(other, 12)
    prune_archive(layout.archive_dir)
    assert (archive / "notes.md").exists()
    assert (archive / ".2026-01-01T00-00-00-000Z-x.md.abc.tmp").exists()
    assert (archive / "2020-01-01T00-00-00-000Z-dir.md").is_dir()
    assert pending.exists()
    assert archived_briefs(other.archive_dir) == other_paths
    assert len(archived_briefs(layout.archive_dir)) == 10


def test_prune_of_a_missing_archive_directory_is_a_no_op(tmp_path: Path) -> None:
    assert prune_archive(str(tmp_path / "missing")) == []


def test_prune_refuses_a_negative_keep(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="negative"):
        prune_archive(str(tmp_path), keep=-1)


def test_pending_briefs_lists_only_markdown_files(tmp_path: Path) -> None:
    layout = ArtifactLayout(str(tmp_path), "s1")
    pending = Path(layout.pending_dir)
    pending.mkdir(parents=True)
    (pending / "b.md").write_text("x")
    (pending / "a.md").write_text("x")
    (pending / ".a.md.123.tmp").write_text("x")
    (pending / "c.txt").write_text("x")
    (pending / "d.md").mkdir()
    for name in ("a.md", "b.md"):
        os.utime(pending / name, ns=(1_000_000_000, 1_000_000_000))  # written at the same time
    assert pending_briefs(layout.pending_dir) == [str(pending / "a.md"), str(pending / "b.md")]
    assert pending_briefs(str(tmp_path / "none")) == []


def test_pending_briefs_are_listed_oldest_first_whatever_their_random_names(tmp_path: Path) -> None:
    """A pending Brief is named by its event id, a random UUID: listed by name, ``/continuity
    status`` showed two stale Briefs in a random order (on real Pi, a different one from the
    simulator's in about half the runs of "status shows the path of every stale pending
    Brief"). The order they were written in is the one a user reads."""
    layout = ArtifactLayout(str(tmp_path), "s1")
    pending = Path(layout.pending_dir)
    pending.mkdir(parents=True)
    for second, name in enumerate(("f0000000.md", "00000000.md", "80000000.md"), start=1):
        (pending / name).write_text("x")
        os.utime(pending / name, ns=(second * 1_000_000_000, second * 1_000_000_000))
    assert pending_briefs(layout.pending_dir) == [
        str(pending / "f0000000.md"),
        str(pending / "00000000.md"),
        str(pending / "80000000.md"),
    ]


def test_leftover_temp_files_are_exactly_the_atomic_writes_temporary_names(tmp_path: Path) -> None:
    """Rule P136 (issue 10 item 6): what ``atomic_write_text`` leaves when a crash stops it
    before the rename, and nothing else (a Brief, another dot-file, another .tmp)."""
    layout = ArtifactLayout(str(tmp_path), "s1")
    pending = Path(layout.pending_dir)
    pending.mkdir(parents=True)
    temp = pending / f".ev-1.md.{'0123456789abcdef' * 2}.tmp"
    for name in (temp.name, "ev-1.md", ".hidden", "notes.tmp", f".ev-2.md.{'z' * 32}.tmp"):
        (pending / name).write_text("x")
    assert leftover_temp_files(layout.pending_dir, layout.archive_dir, layout.failed_dir) == [str(temp)]
