"""Where a simulated suite run's *temporary* run directory goes: a RAM disk unless the user chose
a place (a real-Pi run's stays in the system's temporary directory).

Without ``--workdir`` (``run``, ``run --html``) or ``--harness-workdir`` (plain pytest) the
scenarios' machines go to a temporary directory, removed after a passing run and kept after a
failing one. Every simulated machine is a real directory tree: the host lays out
``agent/``, ``project/``, ``sessions/`` and ``tmp/`` (``scenario/workspace.py``), and the
reference implementation writes every artifact with an ``fsync`` of the file and one of its
directory (``reference/psc/atomic_io.py``: ``atomic_write_text``, ``_fsync_directory``; about
five per scenario). On a disk (ext4 here) those calls and the directory operations were a
third of a scenario's wall time and a fifth of its CPU time (issue 16: median 21 -> 15 ms per
scenario, the same machine in one run); on ``/dev/shm`` an ``fsync`` returns at once. The
bytes do not change: the host sees its fixed virtual root whatever the real directory
(``simulator/virtual_root.py``). ``explore`` puts its scratch runs there for the same reason
(``explore/runner.py``: ``scratch_root``).

The order: ``$PCH_SCRATCH`` (the explorer's variable); else, when the user named a temporary
directory (``TMPDIR``, ``TEMP``, ``TMP``, or ``tempfile.tempdir`` set in process), that one,
as before; else ``/dev/shm`` when it is a writable directory with at least
:data:`MIN_FREE_BYTES` free (a container's default ``/dev/shm`` is 64 MiB, less than a whole
suite's machines); else the system's temporary directory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pi_continuity_harness.scenario.owned_dirs import make_owned_directory

__all__ = ["MIN_FREE_BYTES", "RAM_DISK", "make_temporary_directory", "scratch_directory"]

RAM_DISK = "/dev/shm"
#: Free space ``/dev/shm`` must have to be used: a whole suite's machines take about 100 MB
#: until a passing run removes them (the continuity suite on the simulator, 188 scenarios).
MIN_FREE_BYTES = 1 << 30
_CHOSEN = ("TMPDIR", "TEMP", "TMP")
#: ``tempfile``'s own candidates on POSIX after the variables (``tempfile._candidate_tempdir_list``).
_DEFAULTS = ("/tmp", "/var/tmp", "/usr/tmp")


def scratch_directory() -> str | None:
    """The directory temporary run directories go into (None: the system's temporary directory)."""
    explicit = os.environ.get("PCH_SCRATCH")
    if explicit and os.path.isdir(explicit):
        return explicit
    if any(os.environ.get(name) for name in _CHOSEN) or _chosen_in_process():
        return None
    try:
        if os.path.isdir(RAM_DISK) and os.access(RAM_DISK, os.W_OK):
            stats = os.statvfs(RAM_DISK)
            if stats.f_bavail * stats.f_frsize >= MIN_FREE_BYTES:
                return RAM_DISK
    except OSError:
        return None
    return None


def _chosen_in_process() -> bool:
    """``tempfile.tempdir`` set by the program. ``tempfile.gettempdir()`` caches its own answer
    there too (pytest calls it before any scenario), so a system default there is no choice."""
    chosen = tempfile.tempdir
    return chosen is not None and chosen not in _DEFAULTS and chosen != os.getcwd()


def make_temporary_directory(prefix: str, target: str) -> Path:
    """A new temporary directory named ``<prefix>XXXXXXXX``: in :func:`scratch_directory` for the
    simulator, in the system's temporary directory for real Pi (its runs are left as they were)."""
    return make_owned_directory(prefix, scratch_directory() if target == "sim" else None)
