"""Temporary directories of a harness process killed by SIGKILL are removed by the next one
(``scenario/owned_dirs.py``), and nothing else is.

Before: ``explore`` killed with SIGKILL left its ``pch-explore-*`` work root on ``/dev/shm`` (in
memory) for ever, as every command left its temporary directory; a ``finally`` block does not
run on SIGKILL. Each rule here has its twin: what the sweep must leave alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.scenario import owned_dirs
from pi_continuity_harness.scenario.owned_dirs import (
    MARKER_SUFFIX,
    claim,
    make_owned_directory,
    release,
    remove_owned,
    sweep_message,
    sweep_orphans,
)

from .harness_cli import SCRIPT, harness

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="owners are read from /proc (Linux)"
)

#: A process that claims a directory under ``argv[1]``, says where, and waits for stdin to close
#: (then ends normally, releasing its claim) unless it is killed first.
#: It loads ``owned_dirs`` alone from its file (``argv[2]``; the module imports only the standard
#: library): importing it through its package loaded the whole scenario language, 0.3 of each
#: claimer's 0.35 CPU-s (issue 16).
_CLAIMER = textwrap.dedent(
    """
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("owned_dirs", sys.argv[2])
    owned_dirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(owned_dirs)
    directory = owned_dirs.make_owned_directory("pch-test-", sys.argv[1])
    (directory / "machine.txt").write_text("a scenario's machine", encoding="utf-8")
    print(directory, flush=True)
    sys.stdin.read()
    """
)


def _claimer(root: Path) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", _CLAIMER, str(root), owned_dirs.__file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _marker(directory: Path) -> Path:
    return directory.with_name(directory.name + MARKER_SUFFIX)


def test_rule_a_directory_whose_owner_was_killed_is_removed_with_its_marker(tmp_path: Path) -> None:
    process, directory = _claimer(tmp_path)
    process.kill()
    process.wait()
    assert directory.is_dir() and _marker(directory).is_file(), "SIGKILL ran no clean-up"
    assert sweep_orphans([str(tmp_path)]) == [directory]
    assert list(tmp_path.iterdir()) == []


def test_rule_a_living_owners_directory_is_left_alone(tmp_path: Path) -> None:
    process, directory = _claimer(tmp_path)
    try:
        assert sweep_orphans([str(tmp_path)]) == []
        assert (directory / "machine.txt").is_file()
    finally:
        process.kill()
        process.wait()
    mine = make_owned_directory("pch-test-", tmp_path)
    assert sweep_orphans([str(tmp_path)]) == [directory], "the killed one goes, this process's own stays"
    assert mine.is_dir() and _marker(mine).is_file()
    remove_owned(mine)
    assert list(tmp_path.iterdir()) == [], "removing a claimed directory removes its claim"


def test_rule_a_directory_kept_by_an_owner_that_ended_normally_is_the_users(tmp_path: Path) -> None:
    """A failing run keeps its machines for the user: the claim goes when the process ends
    (``atexit``), so no later command takes the directory away."""
    process, directory = _claimer(tmp_path)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait() == 0
    assert sorted(tmp_path.iterdir()) == [directory], "kept, and its claim released"
    assert sweep_orphans([str(tmp_path)]) == []
    assert (directory / "machine.txt").is_file()


def test_rule_a_reused_pid_does_not_keep_a_dead_owners_directory(tmp_path: Path) -> None:
    """The owner is the pid *and* its start time: another process with the same pid later (here
    this one) is not the owner."""
    directory = make_owned_directory("pch-test-", tmp_path)
    assert sweep_orphans([str(tmp_path)]) == [], "this process, alive, owns it"
    marker = json.loads(_marker(directory).read_text(encoding="ascii"))
    marker["start"] = str(int(marker["start"]) + 1)
    _marker(directory).write_text(json.dumps(marker), encoding="ascii")
    assert sweep_orphans([str(tmp_path)]) == [directory]
    assert list(tmp_path.iterdir()) == []
    release(directory)


def test_rule_a_claim_released_twice_or_never_made_changes_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "pch-plain"
    directory.mkdir()
    release(directory)
    claim(directory)
    release(directory)
    release(directory)
    assert list(tmp_path.iterdir()) == [directory]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("boot", "another-boot"),
        ("pidns", "pid:[1]"),
    ],
    ids=["another boot", "another pid namespace (another container sharing /tmp)"],
)
def test_rule_an_owner_the_sweep_cannot_see_is_not_judged_dead(
    tmp_path: Path, field: str, value: str
) -> None:
    process, directory = _claimer(tmp_path)
    process.kill()
    process.wait()
    marker = json.loads(_marker(directory).read_text(encoding="ascii"))
    marker[field] = value
    _marker(directory).write_text(json.dumps(marker), encoding="ascii")
    assert sweep_orphans([str(tmp_path)]) == []
    assert (directory / "machine.txt").is_file() and _marker(directory).is_file()


#: How a dead owner's marker is changed: (the directory's new name or None, the marker's text).
_NOT_OURS: dict[str, Callable[[dict[str, Any]], tuple[str | None, str]]] = {
    "not JSON": lambda owner: (None, "not json"),
    "not an object": lambda owner: (None, "[1, 2]"),
    "a boolean pid": lambda owner: (None, json.dumps({**owner, "pid": True})),
    "a name with a slash": lambda owner: (None, json.dumps({**owner, "dir": "../" + owner["dir"]})),
    "another directory's name": lambda owner: (None, json.dumps({**owner, "dir": "pch-other"})),
    "no harness prefix": lambda owner: ("someone-elses", json.dumps({**owner, "dir": "someone-elses"})),
}


@pytest.mark.parametrize("change", sorted(_NOT_OURS))
def test_rule_a_marker_that_is_not_the_harnesss_own_removes_nothing(tmp_path: Path, change: str) -> None:
    """Each marker is a dead owner's, changed in one way; unchanged, the same directory goes."""
    process, directory = _claimer(tmp_path)
    process.kill()
    process.wait()
    (tmp_path / "pch-other").mkdir()
    original = _marker(directory).read_text(encoding="ascii")
    rename, text = _NOT_OURS[change](json.loads(original))
    if rename is not None:
        _marker(directory).unlink()
        directory = directory.rename(tmp_path / rename)
    _marker(directory).write_text(text, encoding="ascii")
    assert sweep_orphans([str(tmp_path)]) == []
    assert (directory / "machine.txt").is_file() and (tmp_path / "pch-other").is_dir()
    if rename is None:
        _marker(directory).write_text(original, encoding="ascii")
        assert sweep_orphans([str(tmp_path)]) == [directory], "the same directory goes with its own marker"


def test_rule_a_symbolic_link_in_a_dead_owners_place_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("not the harness's", encoding="utf-8")
    process, directory = _claimer(root)
    process.kill()
    process.wait()
    for entry in directory.iterdir():
        entry.unlink()
    directory.rmdir()
    directory.symlink_to(outside)
    assert sweep_orphans([str(root)]) == []
    assert (outside / "keep.txt").is_file(), "nothing behind the link was touched"
    assert directory.is_symlink() and not _marker(directory).exists()


def test_rule_explore_killed_mid_run_leaves_a_work_root_the_next_command_removes(tmp_path: Path) -> None:
    """The whole path: ``explore`` killed by SIGKILL while its seeds run, then any command."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "PCH_SCRATCH": str(scratch)}
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [str(SCRIPT), "explore", "--seeds", "100000", "--out", str(tmp_path / "out"), "--quiet"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(scratch.glob(f"pch-explore-*{MARKER_SUFFIX}")):
            assert process.poll() is None and time.monotonic() < deadline, "explore never made its work root"
            time.sleep(0.05)
        time.sleep(0.5)  # a seed or two under way
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    (work_root,) = [path for path in scratch.iterdir() if path.is_dir()]
    assert work_root.name.startswith("pch-explore-") and _marker(work_root).is_file()
    ran = harness("schema", cwd=tmp_path, env={"PCH_SCRATCH": str(scratch)})
    assert ran.code == 0, ran.err
    (line,) = [line for line in ran.err_lines if line.startswith("pi-continuity-harness: removed")]
    assert str(work_root) in line
    assert list(scratch.iterdir()) == []


def test_rule_a_failing_runs_kept_machines_outlive_the_next_command(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"PCH_SCRATCH": str(scratch)}
    ran = harness(
        "run", "--extension", "null", "-k", "manual-checkpoint-writes-artifact", cwd=tmp_path, env=env
    )
    assert ran.code == 1
    (kept,) = list(scratch.iterdir())
    assert kept.name.startswith("pi-continuity-harness-run-"), "kept, its claim released when run ended"
    again = harness("schema", cwd=tmp_path, env=env)
    assert again.code == 0 and "removed" not in again.err
    assert list(scratch.iterdir()) == [kept]


def test_the_message_names_every_directory_removed() -> None:
    assert sweep_message([Path("/dev/shm/pch-a"), Path("/tmp/pch-b")]) == (
        "pi-continuity-harness: removed 2 temporary directories left by killed harness processes: "
        "/dev/shm/pch-a, /tmp/pch-b"
    )
    assert sweep_message([Path("/dev/shm/pch-a")]).startswith(
        "pi-continuity-harness: removed 1 temporary directory "
    )
