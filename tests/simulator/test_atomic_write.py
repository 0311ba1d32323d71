"""``write_atomically`` (the reports, ``import-session``'s scenario, the real-Pi target's
wrappers) writes a file whole or not at all, with the mode a plain ``open(path, "w")`` would
leave: an existing file keeps its own, a new one gets ``0o666`` less the umask (before stop 28:
always ``0o600``, from ``mkstemp``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pi_continuity_harness.scenario.atomic_write import write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_the_umask_leaves(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        write_atomically(tmp_path / "report.json", "{}\n")
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "report.json") == 0o666 & ~umask
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "{}\n"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "scenario.yaml"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(mode)
    write_atomically(target, "new\n")
    assert _mode(target) == mode
    assert target.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenario.yaml"]
