"""The filesystem monitor: observes, confines and faults an extension's own file operations.

An ``fs`` fault of a scenario (``faults.FsFault``) fails, corrupts or crashes at a matching file
operation of a *Python* implementation. Both targets inject it the same way, through Python
audit hooks in the process that runs the extension: the simulated host in its own process,
the real-Pi target in the bridge's Python process (``targets/realpi/bridge_runtime.py``),
which is why the monitor is part of the scenario language both targets play rather than of
the simulated host. Every observed operation becomes an ``fs`` trace record, every fired fault
a ``fault`` record, in the trace format of :mod:`.trace`.

The monitor also refuses an extension's writes outside the run's directory (confinement,
see :mod:`.confine`).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.scenario.confine import is_inside
from pi_continuity_harness.scenario.faults import FsFault
from pi_continuity_harness.scenario.trace import SimulatedCrash, Trace

__all__ = ["FilesystemMonitor", "activate_monitor"]


@dataclass
class _FsCounter:
    fault: FsFault
    seen: int = 0
    fired: int = 0


@dataclass
class FilesystemMonitor:
    """Observes and faults the extension's file operations under the run's directories."""

    workdir: str
    placeholders: dict[str, str]
    trace: Trace
    faults: tuple[FsFault, ...] = ()
    on_crash: Callable[[], None] | None = None
    #: Other spellings of the work directory (on disk) -> ``workdir``: an operation on a path
    #: spelt the other way (``os.path.realpath`` resolves the simulator's virtual root) is
    #: observed, faulted and traced as the host path.
    aliases: dict[str, str] = field(default_factory=dict)
    host_io: int = 0
    frozen: bool = False
    _counters: list[_FsCounter] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._counters = [_FsCounter(f) for f in self.faults]

    def _symbolic(self, path: str) -> str:
        for name, root in sorted(self.placeholders.items(), key=lambda kv: -len(kv[1])):
            if path == root or path.startswith(root + os.sep):
                return name + path[len(root) :]
        return path

    def canonical(self, path: str) -> str:
        """``path`` as the host sees it (an alias of the work directory replaced)."""
        for alias, root in self.aliases.items():
            if path == alias or path.startswith(alias.rstrip(os.sep) + os.sep):
                return root + path[len(alias) :]
        return path

    def observe(self, op: str, path: str, target: str | None = None) -> None:
        if self.host_io:
            return
        path = self.canonical(path)
        target = None if target is None else self.canonical(target)
        if op != "read" and not is_inside(path, self.workdir):
            # Confinement (see ``confine``): an extension's write outside the run, directly or
            # through a symbolic link, is refused as the OS would refuse an unwritable path.
            self.trace.emit("fs", "refused", op=op, path=path)
            raise PermissionError(
                errno.EACCES, "outside the run's directory: refused by the simulated host (confinement)", path
            )
        if not (path == self.workdir or path.startswith(self.workdir.rstrip(os.sep) + os.sep)):
            return
        if self.frozen:
            if op != "read":
                raise SimulatedCrash("the process is dead")
            return
        self.trace.emit("fs", op, path=path, target=target)
        for fault in self._firing(op, path):
            self.trace.emit("fault", "fs", op=op, path=path, effect=fault.effect)
            if fault.effect == "crash":
                if self.on_crash is not None:
                    self.on_crash()
                raise SimulatedCrash(f"crash before {op} {self._symbolic(path)}")
            if fault.effect == "corrupt":
                self._corrupt(path)
                continue
            code = getattr(errno, fault.errno_name)
            raise OSError(code, f"{os.strerror(code)} (injected fault)", path)

    def replay(self, op: str, path: str) -> None:
        """Count an operation an earlier process observed (its faults fired there), so
        ``occurrence`` and ``times`` count across processes."""
        for fault in self._firing(op, path):
            if fault.effect != "corrupt":
                break

    def fired_faults(self) -> tuple[FsFault, ...]:
        """The faults that fired so far, each capped at the times it fired (plan order)."""
        return tuple(c.fault.model_copy(update={"times": c.fired}) for c in self._counters if c.fired)

    def heal(self) -> None:
        """No fault fires any more: faults that never fired are dropped, the others are capped
        at the times they already fired (so the healed plan, :meth:`fired_faults`, replays)."""
        healed = []
        for counter in self._counters:
            if counter.fired:
                counter.fault = counter.fault.model_copy(update={"times": counter.fired})
                healed.append(counter)
        self._counters = healed

    def _firing(self, op: str, path: str) -> Iterator[FsFault]:
        """The faults an operation fires, in plan order. Counters advance as the caller goes
        on: a caller that stops (an error or a crash) keeps the later faults from seeing it."""
        symbolic = self._symbolic(path)
        for counter in self._counters:
            fault = counter.fault
            if fault.op not in ("any", op) or not fnmatch.fnmatchcase(symbolic, fault.path):
                continue
            counter.seen += 1
            if counter.seen < fault.occurrence or (fault.times and counter.fired >= fault.times):
                continue
            counter.fired += 1
            yield fault

    def tamper(self, pattern: str, action: str) -> list[str]:
        """Apply a tamper rule to every file under the workdir whose symbolic path matches."""
        changed: list[str] = []
        self.host_io += 1
        try:
            for root, _dirs, files in sorted(os.walk(self.workdir)):
                for name in sorted(files):
                    path = os.path.join(root, name)
                    if not fnmatch.fnmatchcase(self._symbolic(path), pattern):
                        continue
                    if not is_inside(path, self.workdir):
                        continue  # a symbolic link leading out of the run: never followed
                    if action == "truncate":
                        self._corrupt(path)
                    else:
                        with open(path, "a", encoding="utf-8") as handle:
                            handle.write("\ntampered after the hook returned\n")
                    changed.append(path)
        finally:
            self.host_io -= 1
        return changed

    def _corrupt(self, path: str) -> None:
        if not is_inside(path, self.workdir):
            return  # a symbolic link leading out of the run: never followed
        self.host_io += 1
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            with open(path, "wb") as handle:
                handle.write(data[: len(data) // 2])
        except OSError:
            pass
        finally:
            self.host_io -= 1


_ACTIVE: list[FilesystemMonitor] = []
_HOOK: dict[str, bool] = {"installed": False}


def _write_mode(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    if isinstance(flags, int):
        return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
    return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _ACTIVE:
        return
    monitor = _ACTIVE[-1]
    if monitor.host_io:
        return
    if event == "open":
        path = args[0]
        if not isinstance(path, str):
            return
        monitor.observe("write" if _write_mode(args[1], args[2]) else "read", os.path.abspath(path))
    elif event == "os.rename":
        src, dst = args[0], args[1]
        if isinstance(src, str) and isinstance(dst, str):
            monitor.observe("replace", os.path.abspath(dst), target=os.path.abspath(src))
    elif event == "os.mkdir":
        if isinstance(args[0], str):
            monitor.observe("mkdir", os.path.abspath(args[0]))
    elif event in ("os.remove", "os.rmdir") and isinstance(args[0], str):
        monitor.observe("remove", os.path.abspath(args[0]))


class activate_monitor:  # noqa: N801  (used as a context manager)
    """Make ``monitor`` the active one for the duration of a ``with`` block."""

    def __init__(self, monitor: FilesystemMonitor) -> None:
        self.monitor = monitor

    def __enter__(self) -> FilesystemMonitor:
        if not _HOOK["installed"]:
            sys.addaudithook(_audit)  # audit hooks cannot be removed: install once per process
            _HOOK["installed"] = True
        _ACTIVE.append(self.monitor)
        return self.monitor

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self.monitor)
