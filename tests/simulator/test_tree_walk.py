"""``walk_sorted`` gives what ``os.walk`` with sorted subdirectories gives (the ``summaryFiles``
witness and the explorer's archive invariants walk the project with it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.scenario.observed import summary_files
from pi_continuity_harness.scenario.tree_walk import walk_sorted


def _os_walk(root: str) -> list[tuple[str, list[str]]]:
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        found.append((directory, list(files)))
    return found


def _walk_sorted(root: str) -> list[tuple[str, list[str]]]:
    return [(directory, [entry.name for entry in files]) for directory, files in walk_sorted(root)]


def _tree(root: Path) -> None:
    for name in ("b", "a", "a/z", "a/c", "c", "c/archive", "a/z/archive"):
        (root / name).mkdir(parents=True, exist_ok=True)
    for name in ("f1", "a/f2", "a/z/f3", "c/archive/brief.md", "a/z/archive/x.md", "c/f4"):
        (root / name).write_text(name)
    (root / "a" / "to-c").symlink_to(root / "c")  # a link to a directory: listed, not descended
    (root / "a" / "to-f1").symlink_to(root / "f1")
    (root / "dangling").symlink_to(root / "missing")
    os.mkfifo(root / "a" / "fifo")


def test_walk_sorted_is_os_walk_with_sorted_subdirectories(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _walk_sorted(str(tmp_path)) == _os_walk(str(tmp_path))
    assert _walk_sorted(str(tmp_path / "missing")) == _os_walk(str(tmp_path / "missing")) == []
    assert _walk_sorted(str(tmp_path / "f1")) == _os_walk(str(tmp_path / "f1")) == []
    # A link as the root is walked, as os.walk walks it.
    assert _walk_sorted(str(tmp_path / "a" / "to-c")) == _os_walk(str(tmp_path / "a" / "to-c"))


def test_walk_sorted_leaves_out_an_unreadable_directory_as_os_walk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory whose listing fails (``PermissionError``, as ``chmod 0`` gives a user that is
    not root) is left out with everything below it, by both walks. The failure is made by
    ``os.scandir`` itself, which both call, so the test runs as root too (CI runs as root)."""
    _tree(tmp_path)
    unreadable = str(tmp_path / "a")
    real_scandir = os.scandir

    def scandir(path: str) -> Any:
        if os.fspath(path) == unreadable:
            raise PermissionError(13, "Permission denied", unreadable)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    walked = _walk_sorted(str(tmp_path))
    assert walked == _os_walk(str(tmp_path))
    assert not [directory for directory, _ in walked if directory.startswith(unreadable)]
    assert [directory for directory, _ in walked] == [str(tmp_path / n) for n in ("", "b", "c", "c/archive")]


def test_summary_files_reads_what_the_os_walk_witness_read(tmp_path: Path) -> None:
    _tree(tmp_path)
    os.remove(tmp_path / "a" / "fifo")  # an empty summary would read it (and wait), on both
    for text in ("f1", "a/f2", "c/archive/brief.md", "", "nothing"):
        expected = sorted(
            os.path.join(directory, name)
            for directory, _, files in os.walk(tmp_path)
            for name in files
            if not os.path.islink(os.path.join(directory, name))
            and Path(directory, name).read_bytes() == text.encode()
        )
        assert summary_files(str(tmp_path), text) == expected
