"""Bytecode of sources that are gone leaves the harness's bytecode cache
(``targets/realpi/cache_prune.py``); nothing else does, and the walk runs at most once a day."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pi_continuity_harness.targets.realpi import pi_target
from pi_continuity_harness.targets.realpi.cache_prune import STAMP_NAME, prune_stale_bytecode


def _mirror(prefix: Path, source: Path) -> Path:
    """The cache directory CPython uses for the modules of ``source`` (``PYTHONPYCACHEPREFIX``)."""
    mirror = prefix / str(source).lstrip("/")
    mirror.mkdir(parents=True, exist_ok=True)
    (mirror / "module.cpython-311.pyc").write_bytes(b"bytecode")
    return mirror


def test_rule_bytecode_of_a_gone_source_directory_is_removed_and_of_a_present_one_kept(
    tmp_path: Path,
) -> None:
    prefix = tmp_path / "pycache"
    present = tmp_path / "src" / "package"
    present.mkdir(parents=True)
    gone = tmp_path / "gone" / "package"
    kept, dropped = _mirror(prefix, present), _mirror(prefix, gone)
    assert prune_stale_bytecode(prefix, every_seconds=0) == [str(tmp_path / "gone")]
    assert (kept / "module.cpython-311.pyc").read_bytes() == b"bytecode"
    assert not dropped.exists() and not dropped.parent.exists()
    assert (prefix / STAMP_NAME).is_file()


def test_rule_the_walk_runs_at_most_once_a_period(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    prefix.mkdir()
    assert prune_stale_bytecode(prefix) == []
    dropped = _mirror(prefix, tmp_path / "gone")
    assert prune_stale_bytecode(prefix) == []  # walked moments ago
    assert dropped.exists()
    long_ago = time.time() - 2 * 86_400
    os.utime(prefix / STAMP_NAME, (long_ago, long_ago))
    assert prune_stale_bytecode(prefix) == [str(tmp_path / "gone")]
    assert not dropped.exists()


def test_rule_a_link_in_the_cache_is_not_followed_out_of_it(tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine", encoding="utf-8")
    prefix.mkdir()
    (prefix / "nowhere").symlink_to(outside, target_is_directory=True)  # "/nowhere" does not exist
    assert prune_stale_bytecode(prefix, every_seconds=0) == []
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_rule_a_missing_cache_is_left_missing(tmp_path: Path) -> None:
    assert prune_stale_bytecode(tmp_path / "none", every_seconds=0) == []
    assert not (tmp_path / "none").exists()


def test_rule_pi_target_offers_the_cache_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []
    monkeypatch.setattr(pi_target, "prune_stale_bytecode", lambda prefix: calls.append(prefix) or [])
    installation: Any = SimpleNamespace(pi_version="1.6.0", cache_dir=tmp_path / "cache")
    for name in ("a", "b"):
        target = pi_target.PiTarget("reference", tmp_path / name, installation=installation)
        target._bridge_env()
        target._bridge_env()
    assert calls == [tmp_path / "cache" / "tmp" / "pycache"]
