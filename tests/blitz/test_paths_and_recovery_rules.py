"""Managed paths, the dossier reservation, and the one atomic recovery file named as specified."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from pi_continuity_harness.reference.blitz.atomic_io import (
    ReservationError,
    is_nonempty_regular_file,
    remove_exact,
    reserve_exclusive,
)
from pi_continuity_harness.reference.blitz.paths import (
    ManagedPaths,
    dossier_path,
    normalise_session_component,
    recovery_file_name,
)
from pi_continuity_harness.reference.blitz.recovery import (
    CaptureWindow,
    format_deferred,
    list_recovery_files,
)


def test_managed_paths_live_under_the_agent_dir(tmp_path: Path) -> None:
    paths = ManagedPaths(str(tmp_path))
    paths.ensure()
    root = tmp_path / "pi-blitz-handoff"
    assert paths.config == str(root / "config.json")
    assert paths.project_templates == str(root / "project-templates.json")
    for sub in ("recovery", "templates", "templates/backups"):
        assert (root / sub).is_dir()


def test_managed_directory_symlinks_are_supported(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "pi-blitz-handoff").symlink_to(real, target_is_directory=True)
    ManagedPaths(str(agent)).ensure()
    assert (real / "recovery").is_dir()


def test_the_dossier_is_the_cwd_pi_handoff_file_of_the_source_session() -> None:
    assert dossier_path("/work/proj", "0190-abc") == "/work/proj/.pi/handoff_0190-abc.md"


def test_recovery_file_is_named_utc_millis_then_normalised_session_id() -> None:
    name = recovery_file_name(1_764_460_813.483, "01a2:b3/c4_d")
    assert name == "2025-11-30T00-00-13-483Z-01a2-b3-c4-d.md"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-[A-Za-z0-9-]+\.md", name)
    assert normalise_session_component("abc-123") == "abc-123"


def test_deferred_prompts_are_kept_unchanged_in_order_with_boundaries() -> None:
    prompts = ["first\n  with spaces ", "--- Deferred Prompt 9 of 9 ---", "third"]
    text = format_deferred(prompts)
    assert text == (
        "--- Deferred Prompt 1 of 3 ---\nfirst\n  with spaces \n\n"
        "--- Deferred Prompt 2 of 3 ---\n--- Deferred Prompt 9 of 9 ---\n\n"
        "--- Deferred Prompt 3 of 3 ---\nthird\n"
    )


def test_no_captured_input_means_no_recovery_file(tmp_path: Path) -> None:
    window = CaptureWindow(str(tmp_path), "sid", 0.0)
    window.flush()
    assert list(tmp_path.iterdir()) == []


def test_one_recovery_file_per_window_replaced_atomically(tmp_path: Path) -> None:
    window = CaptureWindow(str(tmp_path), "sid", 0.0)
    window.capture("a")
    first = window.path
    window.capture("b")
    assert window.path == first
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(str(first))]
    assert Path(str(first)).read_text() == format_deferred(["a", "b"])
    assert [f.name for f in list_recovery_files(str(tmp_path))] == [os.path.basename(str(first))]


def test_the_reservation_is_exclusive_owner_only_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / ".pi" / "handoff_s.md"
    reserve_exclusive(str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("someone else's", encoding="utf-8")
    with pytest.raises(ReservationError):
        reserve_exclusive(str(path))
    assert path.read_text() == "someone else's"


def test_finish_metadata_check_needs_a_nonempty_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "d.md"
    assert not is_nonempty_regular_file(str(path))
    path.write_text("", encoding="utf-8")
    assert not is_nonempty_regular_file(str(path))
    path.write_text("x", encoding="utf-8")
    assert is_nonempty_regular_file(str(path))
    (tmp_path / "dir.md").mkdir()
    assert not is_nonempty_regular_file(str(tmp_path / "dir.md"))


def test_removing_a_missing_owned_file_is_harmless_and_other_errors_name_the_path(tmp_path: Path) -> None:
    assert remove_exact(str(tmp_path / "gone.md")) is None
    (tmp_path / "dir.md").mkdir()
    error = remove_exact(str(tmp_path / "dir.md"))
    assert error is not None and str(tmp_path / "dir.md") in error
