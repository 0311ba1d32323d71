"""The registered implementations are read once per state of ``sys.path`` (issue 16), and an
install, an uninstall or a directory put on the path is seen at once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.scenario.implementations import ENTRY_POINT_GROUP, entry_points_of


def _distribution(directory: Path, name: str, entry: str) -> None:
    info = directory / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{entry} = {name}:extension\n", encoding="utf-8"
    )


def test_an_install_and_a_directory_on_the_path_are_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "reference" in entry_points_of(ENTRY_POINT_GROUP)
    _distribution(tmp_path, "first_impl", "first-impl")
    assert "first-impl" not in entry_points_of(ENTRY_POINT_GROUP)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert "first-impl" in entry_points_of(ENTRY_POINT_GROUP)
    # An install into a directory already on the path changes its modification time.
    before = os.stat(tmp_path).st_mtime_ns
    _distribution(tmp_path, "second_impl", "second-impl")
    os.utime(tmp_path, ns=(before + 1_000_000_000, before + 1_000_000_000))
    found = entry_points_of(ENTRY_POINT_GROUP)
    assert {"first-impl", "second-impl", "reference"} <= set(found)
    # A caller's change to the answer is not kept.
    found.clear()
    assert "reference" in entry_points_of(ENTRY_POINT_GROUP)
    monkeypatch.undo()
    assert "first-impl" not in entry_points_of(ENTRY_POINT_GROUP)
