"""A catalogue's parsed YAML is kept in the harness's cache (``cache_dir.kept``): a later process
loads it, and validates it as it validates the file's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_continuity_harness.rules import catalogue


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()  # kept only in a cache directory that is there
    catalogue.load_catalogue.cache_clear()
    yield tmp_path / "cache" / catalogue._YAML_CACHE
    catalogue.load_catalogue.cache_clear()


def test_a_kept_catalogue_is_the_one_the_file_gives(cache: Path) -> None:
    first = catalogue.load_catalogue("pi-session-continuity")
    (kept,) = cache.iterdir()
    catalogue.load_catalogue.cache_clear()
    again = catalogue.load_catalogue("pi-session-continuity")
    assert again == first and again is not first
    assert list(cache.iterdir()) == [kept]


def test_an_unreadable_kept_catalogue_is_parsed_again(cache: Path) -> None:
    first = catalogue.load_catalogue("pi-blitz-handoff")
    (kept,) = cache.iterdir()
    kept.write_bytes(b"\x80\x05 truncated")
    catalogue.load_catalogue.cache_clear()
    assert catalogue.load_catalogue("pi-blitz-handoff") == first
    assert kept.read_bytes() != b"\x80\x05 truncated"


def test_nothing_is_kept_where_there_is_no_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kept`` never makes the cache directory: a run that stops at a setup error writes
    nothing, and a machine without one gets none from a run on the simulator."""
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(tmp_path / "cache"))
    catalogue.load_catalogue.cache_clear()
    try:
        assert catalogue.load_catalogue("pi-session-continuity").rules
        assert not (tmp_path / "cache").exists()
    finally:
        catalogue.load_catalogue.cache_clear()
