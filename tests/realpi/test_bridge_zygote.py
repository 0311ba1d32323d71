"""The bridge zygote (``targets/realpi/bridge_zygote.py``): a bridge forked from an imported
zygote is the process a fresh ``python -m ...bridge_runtime`` would have been, and lives and
dies with its Pi.

The protocol tests of ``test_bridge_units.py`` run through a zygote as well (its ``bridge``
fixture has both modes); here, what a zygote adds: the worker's place and streams, its exit as
the client's, the harness's freeze and reap around a crash, a client's death, bad requests, the
switch that turns it off, and a scenario on real Pi that observes the same thing both ways.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli.harness_cli import harness
from realpi.bridge_driver import CTX, Bridge, bridge_env
from realpi.test_pi_target import run, scenario

import pi_continuity_harness.targets.realpi.bridge_zygote as zygote_module
from pi_continuity_harness.targets.realpi import PiTarget
from pi_continuity_harness.targets.realpi.bridge_zygote import (
    CLIENT_PATH,
    FRESH_ENV,
    RUNTIME_MODULE,
    BridgeZygote,
    bridge_zygote,
    stop_bridge_zygotes,
)
from pi_continuity_harness.targets.sim import SimTarget

pytestmark = pytest.mark.realpi


def _info(bridge: Bridge) -> dict[str, Any]:
    bridge.request({"type": "load", "inst": 1})
    bridge.calls.clear()
    bridge.request({"type": "command", "inst": 1, "name": "process-info", "args": "", "ctx": CTX})
    [notify] = [c for c in bridge.calls if c["method"] == "notify"]
    report: dict[str, Any] = json.loads(notify["args"][0])
    return report


def _gone(pid: int) -> bool:
    """No such process, not even a zombie: killed and waited for by the zygote."""
    return not os.path.exists(f"/proc/{pid}")


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0]


def test_a_forked_bridge_takes_the_clients_directory_environment_umask_and_streams(
    zygote: BridgeZygote, tmp_path: Path
) -> None:
    reports = {}
    for mode in ("fresh", "zygote"):
        place = tmp_path / mode
        place.mkdir()
        bridge = Bridge(
            "probe_process:extension",
            place,
            zygote=zygote if mode == "zygote" else None,
            env={"PROBE_VALUE": f"value-{mode}", "TMPDIR": str(place)},
            umask=0o027,
        )
        try:
            reports[mode] = _info(bridge)
            assert bridge.close() == 0
        finally:
            bridge.kill()
    fresh, forked = reports["fresh"], reports["zygote"]
    assert fresh["ppid"] == os.getpid() and forked["ppid"] == zygote._proc.pid  # not the client
    for report, mode in ((fresh, "fresh"), (forked, "zygote")):
        place = str((tmp_path / mode).resolve())
        assert (report["cwd"], report["path0"], report["tmp"]) == (place, place, place)
        assert (report["probe"], report["umask"]) == (f"value-{mode}", 0o027)
    ignored = {"pid", "ppid", "parent", "cwd", "path0", "tmp", "probe"}
    assert {k: v for k, v in forked.items() if k not in ignored} == {
        k: v for k, v in fresh.items() if k not in ignored
    }


def test_the_client_ends_as_its_worker_ended(zygote: BridgeZygote, tmp_path: Path) -> None:
    bridge = Bridge("probe_process:extension", tmp_path, zygote=zygote)
    try:
        worker = _info(bridge)["pid"]
        os.kill(worker, signal.SIGTERM)
        assert bridge.proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        bridge.kill()


def test_freeze_stops_a_groups_workers_and_reap_kills_and_waits_for_them(
    zygote: BridgeZygote, tmp_path: Path
) -> None:
    bridge = Bridge("probe_process:extension", tmp_path, zygote=zygote, new_session=True)
    try:
        worker = _info(bridge)["pid"]
        pgid = os.getpgid(bridge.proc.pid)
        zygote.freeze(pgid)
        assert _state(worker) == "T"  # stopped: it takes no step while Pi's group is killed
        zygote.reap(pgid)
        assert _gone(worker)  # killed and waited for before reap returned
        assert bridge.proc.wait(timeout=10) == -signal.SIGKILL  # the client ends as it did
    finally:
        bridge.kill()


def test_a_worker_whose_client_is_gone_is_killed(zygote: BridgeZygote, tmp_path: Path) -> None:
    bridge = Bridge("probe_process:extension", tmp_path, zygote=zygote)
    try:
        worker = _info(bridge)["pid"]
        bridge.proc.kill()
        bridge.proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not _gone(worker) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _gone(worker)
    finally:
        bridge.kill()


@pytest.mark.parametrize("ending", ["stop", "the harness is gone"])
def test_a_zygote_that_ends_ends_its_workers_and_removes_its_socket(ending: str, tmp_path: Path) -> None:
    """``stop()``, or its stdin ending when the harness process dies, whatever killed it (no
    ``stop()``, no ``rmtree``): no orphan worker, no file left."""
    zygote = BridgeZygote(sys.executable, bridge_env())
    bridge = Bridge("probe_process:extension", tmp_path, zygote=zygote)
    try:
        worker = _info(bridge)["pid"]
        if ending == "stop":
            zygote.stop()
        else:
            assert zygote._proc.stdin is not None
            zygote._proc.stdin.close()
            assert zygote._proc.wait(timeout=30) == 0
        assert _gone(worker) and not zygote.alive
        assert not os.path.exists(os.path.dirname(zygote.socket_path))
    finally:
        bridge.kill()
        zygote.stop()


def test_a_request_for_another_module_is_refused_naming_it(zygote: BridgeZygote, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(CLIENT_PATH), zygote.socket_path, "-m", "os", "--anything"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1
    assert f"a zygote runs only -m {RUNTIME_MODULE}, not ['-m', 'os', '--anything']" in done.stderr
    assert zygote.alive


def test_an_unreachable_zygote_is_one_line_and_exit_1(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-socket")
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(CLIENT_PATH), missing, "-m", RUNTIME_MODULE],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"pi-continuity-harness bridge client: cannot reach the bridge zygote at {missing}"
    )


def test_one_zygote_per_interpreter_and_environment_until_they_are_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(FRESH_ENV, raising=False)
    env = bridge_env(PROBE_VALUE="registry")
    first = bridge_zygote(sys.executable, env)
    assert first is not None and bridge_zygote(sys.executable, dict(env)) is first
    stop_bridge_zygotes()
    assert not first.alive and not os.path.exists(first.socket_path)
    second = bridge_zygote(sys.executable, env)
    assert second is not None and second is not first and second.alive
    stop_bridge_zygotes()


def test_a_forked_child_neither_uses_nor_stops_its_parents_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FRESH_ENV, raising=False)
    env = bridge_env(PROBE_VALUE="fork")
    parent = bridge_zygote(sys.executable, env)
    assert parent is not None
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: it sees no zygote of its own, and stopping stops nothing
            try:
                seen = len(zygote_module._ZYGOTES)
                parent.stop()
                stop_bridge_zygotes()
                os.write(write, str(seen).encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        assert os.read(read, 16) == b"0"
        os.close(read)
        assert parent.alive and os.path.exists(parent.socket_path)
    finally:
        stop_bridge_zygotes()


def test_a_temporary_directory_too_long_for_a_socket_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = tmp_path / ("d" * 100)
    long.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long))
    zygote = BridgeZygote(sys.executable, bridge_env())
    try:
        assert zygote.alive and len(zygote.socket_path.encode()) <= 103
        assert os.path.dirname(zygote.socket_path).startswith("/tmp/pch-bz-")
        assert list(long.iterdir()) == []  # the directory it tried first is gone
    finally:
        zygote.stop()


def test_the_fresh_bridge_switch_turns_zygotes_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FRESH_ENV, "1")
    assert bridge_zygote(sys.executable, {"PATH": os.environ["PATH"]}) is None


def test_pi_target_bridges_fork_from_a_zygote_and_observe_what_fresh_bridges_do(
    targets: Callable[..., PiTarget | SimTarget], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario with a restart and a crash, on real Pi, through a zygote and with fresh
    bridges: the same observation, and the zygote's bridges are its children."""
    ops: list[Any] = [
        {"prompt": "hello"},
        "restart",
        {"command": "/process-info"},
        "crash",
        "restart",
        {"command": "/probe-info"},
    ]
    observed = {}
    for mode in ("zygote", "fresh"):
        if mode == "fresh":
            monkeypatch.setenv(FRESH_ENV, "1")
        target = targets("pi", "probe_ext:extension")
        assert isinstance(target, PiTarget)
        sc = scenario(extensions=[{"implementation": True}, {"module": "probe_process:extension"}])
        observation, outcomes = run(target, sc, ops)
        assert [o.ok for o in outcomes] == [True] * len(ops), [o.error for o in outcomes]
        report = json.loads(next(text for text, _level in observation.notifications if text.startswith("{")))
        zygote = target._zygote
        if mode == "zygote":
            assert zygote is not None and zygote.alive
            assert report["ppid"] == zygote._proc.pid
        else:
            assert (
                zygote is None and report["parent"] == "pi"
            )  # Pi spawned it (process.title = APP_NAME, dist/cli/setup.js:4)
        observed[mode] = (
            observation.extension_events,
            [n for n in observation.notifications if not n[0].startswith(("{", "info: "))],
            [(o.name, o.ok, o.error, o.disposition) for o in observation.operations],
            [e["type"] for e in observation.entries],
            observation.user_messages(),
        )
    assert observed["zygote"] == observed["fresh"]


def test_a_passing_real_pi_run_leaves_nothing_in_its_temporary_directory(short_tmp: Path) -> None:
    """``run --target pi`` (its bridges forked from a zygote) removes its run directory and the
    zygote's socket directory, both made in ``$TMPDIR``, and leaves no zygote running."""
    scratch = short_tmp / "t"
    scratch.mkdir()
    ran = harness(
        "run", "--target", "pi", "--tags", "smoke", "-k", "persistent-brief-does-not-imply-new-compaction",
        cwd=short_tmp, env={"TMPDIR": str(scratch)},
    )  # fmt: skip
    assert ran.code == 0, ran.out + ran.err
    summary = re.search(r"(\d+) passed, 0 failed, 0 skipped", ran.out)
    assert summary and int(summary.group(1)) >= 2, ran.out  # every scenario of the feature ran
    assert sorted(p.name for p in scratch.iterdir()) == []
    serving = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert str(scratch) not in serving  # no zygote of that run (its socket is under $TMPDIR)
