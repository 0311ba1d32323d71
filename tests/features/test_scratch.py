"""Where a temporary run directory goes (features/scratch.py): the user's choice, else the RAM disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from pi_continuity_harness.features import scratch


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("PCH_SCRATCH", "TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    return monkeypatch


def test_pch_scratch_comes_first(clean: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean.setenv("PCH_SCRATCH", str(tmp_path))
    clean.setenv("TMPDIR", "/somewhere/else")
    assert scratch.scratch_directory() == str(tmp_path)
    made = scratch.make_temporary_directory("pi-continuity-harness-run-", "sim")
    assert made.parent == tmp_path and made.name.startswith("pi-continuity-harness-run-")
    clean.setattr(tempfile, "tempdir", str(tmp_path / "pi"))
    (tmp_path / "pi").mkdir()
    assert scratch.make_temporary_directory("run-", "pi").parent == tmp_path / "pi"  # real Pi's as before


@pytest.mark.parametrize("name", ["TMPDIR", "TEMP", "TMP"])
def test_a_temporary_directory_the_user_named_is_kept(clean: pytest.MonkeyPatch, name: str) -> None:
    clean.setenv(name, "/var/tmp")
    assert scratch.scratch_directory() is None


def test_tempfile_tempdir_set_by_the_program_is_kept(clean: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean.setattr(tempfile, "tempdir", str(tmp_path))
    assert scratch.scratch_directory() is None


@pytest.mark.skipif(
    not (os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK)), reason="no writable /dev/shm"
)
def test_the_ram_disk_when_nothing_was_chosen(clean: pytest.MonkeyPatch) -> None:
    """``tempfile.gettempdir()`` caches its default in ``tempfile.tempdir`` (pytest calls it):
    that is no choice of the user's."""
    clean.setattr(tempfile, "tempdir", "/tmp")
    clean.setattr(scratch, "MIN_FREE_BYTES", 0)
    assert scratch.scratch_directory() == "/dev/shm"
    clean.setattr(scratch, "MIN_FREE_BYTES", 1 << 60)  # too small a RAM disk (a container's 64 MiB)
    assert scratch.scratch_directory() is None
