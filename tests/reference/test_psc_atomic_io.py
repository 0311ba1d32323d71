"""Atomic, durable writes and exact reads, including injected faults."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.reference.psc.atomic_io import (
    atomic_write_text,
    ensure_directory,
    read_text_exact,
    remove_file,
)

# Audit events are how the simulator injects filesystem faults; record them here too.
_RECORDING: list[list[tuple[str, tuple[Any, ...]]]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING and event in ("open", "os.rename", "os.mkdir", "os.remove"):
        _RECORDING[-1].append((event, args))


sys.addaudithook(_hook)


def record_audit() -> list[tuple[str, tuple[Any, ...]]]:
    events: list[tuple[str, tuple[Any, ...]]] = []
    _RECORDING.append(events)
    return events


def stop_audit() -> None:
    _RECORDING.pop()


def leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def test_atomic_write_creates_the_file_with_exact_utf8_bytes(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    text = "---\nkind: x\n---\n# Brief \u00e9\u2028\r\n"
    record = atomic_write_text(str(target), text)
    assert target.read_bytes() == text.encode("utf-8")
    assert record.bytes_written == len(text.encode("utf-8"))
    assert record.path == str(target)
    assert leftovers(tmp_path) == []


def test_atomic_write_into_an_existing_directory_fsyncs_file_and_directory(tmp_path: Path) -> None:
    record = atomic_write_text(str(tmp_path / "a.md"), "x")
    assert record.fsync_count == 2
    assert record.created_directories == ()


def test_atomic_write_creates_missing_parent_directories(tmp_path: Path) -> None:
    target = tmp_path / "s1" / "pending" / "e.md"
    record = atomic_write_text(str(target), "x")
    assert target.read_text() == "x"
    assert record.created_directories == (str(tmp_path / "s1"), str(tmp_path / "s1" / "pending"))
    assert record.fsync_count == 4


def test_atomic_write_replaces_existing_content(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    target.write_text("old")
    atomic_write_text(str(target), "new")
    assert target.read_text() == "new"


def test_atomic_write_goes_through_open_and_os_replace(tmp_path: Path) -> None:
    target = tmp_path / "d" / "a.md"
    events = record_audit()
    try:
        record = atomic_write_text(str(target), "x")
    finally:
        stop_audit()
    names = [name for name, _ in events]
    assert ("os.mkdir", (str(tmp_path / "d"), 0o777, -1)) in events
    assert any(name == "open" and args[0] == record.temp_path for name, args in events)
    renames = [args for name, args in events if name == "os.rename"]
    assert renames and renames[-1][:2] == (record.temp_path, str(target))
    assert names.index("os.mkdir") < names.index("os.rename")
    assert os.path.dirname(record.temp_path) == str(tmp_path / "d")


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_failed_atomic_write_removes_the_temp_file_and_keeps_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "a.md"
    target.write_text("old")

    def boom(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, failing, boom)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(str(target), "new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_failed_directory_fsync_after_replace_still_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.md"
    real_fsync = os.fsync
    calls: list[int] = []

    def second_fails(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", second_fails)
    with pytest.raises(OSError, match="Input/output error"):
        atomic_write_text(str(target), "new")
    assert leftovers(tmp_path) == []


def test_failed_open_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = open

    def failing_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "x" in mode:
            raise PermissionError(13, "Permission denied")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(PermissionError):
        atomic_write_text(str(tmp_path / "a.md"), "x")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_failed_mkdir_propagates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_mkdir(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "mkdir", failing_mkdir)
    with pytest.raises(PermissionError):
        atomic_write_text(str(tmp_path / "new" / "a.md"), "x")


def test_ensure_directory_tolerates_existing_directories(tmp_path: Path) -> None:
    assert ensure_directory(str(tmp_path)) == ()
    assert ensure_directory(str(tmp_path / "a" / "b")) == (str(tmp_path / "a"), str(tmp_path / "a" / "b"))
    assert ensure_directory(str(tmp_path / "a" / "b")) == ()


def test_ensure_directory_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OSError):
        ensure_directory(str(tmp_path / "f" / "sub"))


def test_read_text_exact_keeps_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb")
    assert read_text_exact(str(path)) == "\ufeffa\r\nb"


def test_read_text_exact_refuses_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xff")
    with pytest.raises(UnicodeDecodeError):
        read_text_exact(str(path))


def test_remove_file_treats_missing_as_done(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("x")
    assert remove_file(str(path)) is True
    assert remove_file(str(path)) is False
