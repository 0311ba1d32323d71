"""A Dask worker's child process dies with the worker (explore/executor.py ``_die_with_parent``).

A worker killed mid-task left its child running the task on, orphaned, in the seed directory
Dask's rescheduled run was clearing (``Directory not empty: .../seed-18/requests``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PARENT = """
import os, sys, threading
from pi_continuity_harness.explore.executor import _in_child_process
print(_in_child_process(os.getpid), flush=True)
threading.Event().wait()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it waits only for its (new) parent to reap it
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_child_process_dies_when_its_worker_is_killed(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert child != parent.pid and _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        for _ in range(300):  # the kernel signals at once; allow a loaded machine 30 s
            if not _alive(child):
                break
            time.sleep(0.1)
        assert not _alive(child), f"child {child} outlived its killed parent {parent.pid}"
    finally:
        if parent.poll() is None:
            parent.kill()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)
