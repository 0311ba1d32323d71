"""The simulated host's fixed virtual root: the same paths whatever directory the run lives in.

A scenario and a seed must give byte-identical traces, session files and artifacts in any
directory, and paths of the lengths real Pi sees (``scenario/layout.py``). Paths enter
everything the host writes: the session header's ``cwd``, the system prompt, an extension's
artifacts that record where they live, the ``max_tokens`` clamp computed from all of it. So the
host and the extensions never see the run's real directory: they see
:data:`VIRTUAL_ROOT`, ``/proc/self/fd/1000/machine-----...``, exactly
:data:`~pi_continuity_harness.scenario.layout.WORK_PATH_LENGTH` characters long.

How: the run directory is opened once, and that descriptor is ``dup2``-ed onto the fixed
descriptor :data:`VIRTUAL_ROOT_FD` while the simulation is in use; the kernel resolves
``/proc/self/fd/1000`` to the run directory, and ``machine-----...`` is a real directory in it
(the machine's files on disk, :attr:`VirtualRoot.disk_root`). No path is translated: Python's
``open``, ``os``, ``pathlib``, ``shutil`` and ``tempfile`` work unchanged, ``os.path.abspath``
keeps the virtual path, and ``os.path.realpath`` resolves it to the real one on both sides of a
comparison (the confinement checks, ``confine.is_inside``, compare real paths). The one call that
would leak the real directory, ``os.getcwd`` (the simulation changes into the project while it
runs), answers with the virtual path while the host runs (:meth:`VirtualRoot.host_view`).

Rejected alternatives:

* patching ``os``, ``io`` and ``builtins.open`` to translate paths: every entry point (``os.scandir``,
  ``os.open``, ``shutil``, C extensions) would need it, and one missed call writes outside;
* a symbolic link at a fixed absolute place (``/tmp/pch-root``): state shared by every process on
  the machine, so two runs at once would collide;
* a symbolic link inside the run pointing at the run itself: a loop for every tool that follows
  links (``zip -r``, artifact uploads).

The descriptor is *sticky*: it keeps naming the last simulation that ran a step (or was
observed) until another one takes it, so the files stay readable through the virtual paths in
observations and results after a step returns. Two simulations used alternately in one process
must go through :meth:`VirtualRoot.activate` (``Simulation`` and ``SimTarget`` do); code that
reads another run's files should use disk paths (``SimHost.disk``). Like the determinism
patches, this is per process: simulations in threads of one process are not supported.

Where ``/proc/self/fd`` is not available (macOS, Windows) or descriptor 1000 is taken by
someone else, the simulation runs in its real directory and says so (:attr:`VirtualRoot.note`):
it still replays byte for byte in the same directory, not across directories.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from pi_continuity_harness.scenario.layout import WORK_PATH_LENGTH, padding_name

fcntl: ModuleType | None
resource: ModuleType | None
try:  # POSIX only; without them the run uses its real directory
    import fcntl
    import resource
except ImportError:  # pragma: no cover - Windows
    fcntl = resource = None

__all__ = ["VIRTUAL_ROOT", "VIRTUAL_ROOT_FD", "VirtualRoot", "disk_path"]

#: The descriptor the run directory is duplicated onto while a simulation is in use.
VIRTUAL_ROOT_FD = 1000
_FD_PATH = f"/proc/self/fd/{VIRTUAL_ROOT_FD}"
#: The name of the machine's directory inside a run directory (the padding to the fixed length).
MACHINE_DIR_NAME = padding_name(WORK_PATH_LENGTH - len(_FD_PATH) - 1)
#: The machine root every simulated host sees.
VIRTUAL_ROOT = f"{_FD_PATH}/{MACHINE_DIR_NAME}"
_VIRTUAL_ROOT_LENGTH = len(VIRTUAL_ROOT)

# The VirtualRoot whose run directory the descriptor names now (None: not ours).
_INSTALLED: dict[str, VirtualRoot | None] = {"root": None}


def _unavailable_reason() -> str | None:
    """Why the virtual root cannot be used in this process (None: it can)."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd") or resource is None:
        return "/proc/self/fd is not available on this system"
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft <= VIRTUAL_ROOT_FD:
            if hard != resource.RLIM_INFINITY and hard <= VIRTUAL_ROOT_FD:
                return f"the open-file limit ({hard}) does not reach descriptor {VIRTUAL_ROOT_FD}"
            resource.setrlimit(resource.RLIMIT_NOFILE, (VIRTUAL_ROOT_FD + 1, hard))
    except (OSError, ValueError) as error:  # pragma: no cover - platform dependent
        return f"descriptor {VIRTUAL_ROOT_FD} cannot be used: {error}"
    if _INSTALLED["root"] is None and _fd_open(VIRTUAL_ROOT_FD):
        return f"descriptor {VIRTUAL_ROOT_FD} is already in use in this process"
    return None


def _fd_open(fd: int) -> bool:
    assert fcntl is not None
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


class VirtualRoot:
    """The fixed root one simulation's host sees, and where its files are on disk.

    ``run_dir`` is the run's directory (absolute, symbolic links resolved); the machine's files
    are in ``run_dir/<MACHINE_DIR_NAME>`` (:attr:`disk_root`), which the host sees as
    :attr:`root`.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        # ``str(run_dir / MACHINE_DIR_NAME)``: a ``Path``'s text is normalised, and the name is
        # one component, so joining the texts gives the same string without parsing it again.
        self.disk_root = os.path.join(str(run_dir), MACHINE_DIR_NAME)
        #: Why the run uses its real directory instead (None: the virtual root is in use).
        self.note = _unavailable_reason()
        self._fd: int | None = None
        if self.note is None:
            self._fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._finalizer = weakref.finalize(self, os.close, self._fd)
        #: The machine root the host sees.
        self.root = VIRTUAL_ROOT if self.note is None else self.disk_root

    @property
    def virtual(self) -> bool:
        return self.note is None

    def activate(self) -> None:
        """Make :attr:`root` name this run's machine (until another simulation takes it)."""
        if self._fd is None or _INSTALLED["root"] is self:
            return
        os.dup2(self._fd, VIRTUAL_ROOT_FD, inheritable=False)
        _INSTALLED["root"] = self

    def release(self) -> None:
        """Close this run's own descriptor; the fixed one keeps naming the run until another
        simulation takes it (so the results stay readable)."""
        if self._fd is not None:
            self._finalizer()
            self._fd = None

    def to_disk(self, path: str) -> str:
        """A path the host sees, as it is on disk (other paths unchanged)."""
        return _swap(path, self.root, self.disk_root)

    def to_virtual(self, path: str) -> str:
        """A path on disk below the machine, as the host sees it (other paths unchanged)."""
        return _swap(path, self.disk_root, self.root)

    def host_view(self) -> _HostView:
        """While the host runs: the root names this run, and ``os.getcwd`` answers in host paths
        (the simulation changes into the project; the kernel reports the real directory)."""
        return _HostView(self)


class _HostView:
    """:meth:`VirtualRoot.host_view`'s context. A class rather than a ``contextlib`` generator:
    every step of a simulation enters it, and a generator's context costs four times a
    class's."""

    __slots__ = ("_saved", "_view")

    def __init__(self, view: VirtualRoot) -> None:
        self._view = view
        self._saved: tuple[Callable[[], str], Callable[[], bytes]] | None = None

    def __enter__(self) -> None:
        view = self._view
        view.activate()
        if not view.virtual:
            return
        saved = os.getcwd
        saved_b = os.getcwdb

        def getcwd() -> str:
            return view.to_virtual(saved())

        def getcwdb() -> bytes:
            return os.fsencode(getcwd())

        self._saved = (saved, saved_b)
        os.getcwd, os.getcwdb = getcwd, getcwdb

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            os.getcwd, os.getcwdb = self._saved


def disk_path(path: str) -> str:
    """``path``, a path the host sees, spelt below the run's machine directory on disk when it is
    below :data:`VIRTUAL_ROOT` and a simulation of this process holds the descriptor; any other
    path unchanged.

    The same file: the descriptor names the run directory the machine directory is in
    (:meth:`VirtualRoot.activate`), and after ``/proc/self/fd/1000`` the kernel walks on from
    that directory itself (``..`` included), as it does from its path. But the walk through
    ``/proc`` costs: an ``lstat`` or a listing of a host path took 5 to 12 us where its disk
    spelling takes 2 to 3 (issue 16). For the host's own reads whose answer holds no spelling of
    the path (whether something is there, a directory's names, a file's bytes, a time stamp):
    what it reports names the path as the host sees it."""
    if not path.startswith(VIRTUAL_ROOT):
        return path
    root = _INSTALLED["root"]
    if root is None:
        return path
    # ``_swap(path, VIRTUAL_ROOT, root.disk_root)`` with its prefix test done above: the root
    # itself, or a path below it (``/`` next); a longer name that merely starts so is no path
    # below it. About 30 calls per host start (issue 16).
    rest = path[_VIRTUAL_ROOT_LENGTH:]
    if not rest:
        return root.disk_root
    return root.disk_root + rest if rest[0] == "/" else path


def _swap(path: str, old: str, new: str) -> str:
    if old == new:
        return path
    if path == old:
        return new
    if path.startswith(old + "/"):
        return new + path[len(old) :]
    return path
