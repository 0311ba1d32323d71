"""The filesystem monitor: observes, confines and faults an extension's own file operations.

An ``fs`` fault of a scenario (``faults.FsFault``) fails (with an ``OSError``, or with an
unexpected exception), corrupts or crashes at a matching file
operation of a *Python* implementation. Both targets inject it the same way, through Python
audit hooks in the process that runs the extension: the simulated host in its own process,
the real-Pi target in the bridge's Python process (``targets/realpi/bridge_runtime.py``),
which is why the monitor is part of the scenario language both targets play rather than of
the simulated host. Every fired fault is a ``fault`` record, in the trace format of :mod:`.trace`.

Every observed operation becomes an ``fs`` record **after its effect**, so "after replace" in a
crash, inject or tamper rule means the rename happened:

* ``fs:<op>`` (``read``, ``write``, ``mkdir``, ``remove``: ``path``; ``replace``: ``from``, the
  file renamed, and ``to``, its new name) once the call returned: the file was opened, the
  directory made, the file removed, the rename done;
* ``fs:<op>_failed`` with ``error`` (the errno name) when the call raised (an injected fault
  included): no effect;
* ``fs:replace_before`` (``from``, ``to``) right before a rename, the one before-point a rule
  needs (the old and the new content are both on disk); the before-point of every operation is
  also where an ``fs`` fault fires (``effect: crash`` is "crash before it").

The audit hook (``sys.addaudithook``) sees an operation *before* it runs; its end is seen by thin
wrappers around ``open``, ``os.open``, ``os.rename``/``os.replace``, ``os.mkdir`` and
``os.remove``/``os.unlink``/``os.rmdir``, installed while a monitor is active. An operation no
wrapper saw end (a function bound before the wrappers were installed) is recorded at the next
record or operation, from what is on disk then.

The monitor also refuses an extension's writes outside the run's directory (confinement,
see :mod:`.confine`): ``open`` for writing, ``mkdir``, ``remove``, ``rmdir``, both ends of a
rename, a link's new name and a hard link's source, and ``chmod``, ``chown``, ``utime``,
``truncate`` (refused only; they are not recorded). The check resolves the path as the kernel
will: relative to the working directory or to the ``dir_fd`` the call names (``shutil.rmtree``
removes by ``dir_fd``), with ``..`` taken *after* the symbolic link before it. A lexically
normalised path (``os.path.abspath``) let ``<project>/link/../x`` write beside the link's
target; a rename's source went unchecked, so a file outside could be moved in; an ``unlink``
relative to a ``dir_fd`` outside was checked against the working directory (all three found by
hand in issue 16's eighth pass, tests in ``tests/simulator/test_confinement.py``).
"""

from __future__ import annotations

import builtins
import errno
import fnmatch
import functools
import io
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.scenario.confine import is_inside, resolve_below
from pi_continuity_harness.scenario.faults import FsFault
from pi_continuity_harness.scenario.trace import SimulatedCrash, Trace

__all__ = ["FS_OPS", "FilesystemMonitor", "activate_monitor", "fs_event"]

#: The operations the monitor records (``fs:<op>``, ``fs:<op>_failed``).
FS_OPS: tuple[str, ...] = ("read", "write", "replace", "mkdir", "remove")


@dataclass
class _FsCounter:
    fault: FsFault
    seen: int = 0
    fired: int = 0


@dataclass
class _Pending:
    """An operation seen before it ran, waiting for its end."""

    op: str
    path: str
    source: str | None
    before: tuple[bool, bool]
    serial: int


def _exists(path: str | None) -> bool:
    return path is not None and os.path.lexists(path)


def fs_event(record: dict[str, Any]) -> dict[str, Any] | None:
    """An ``fs`` trace record as an observation's file event: ``{"op", "path", "ok"}`` for every
    attempted operation (``path`` is a rename's destination); None for other records."""
    if record.get("kind") != "fs":
        return None
    name = str(record.get("name"))
    op = name.removesuffix("_failed")
    if op not in FS_OPS or name.endswith("_before"):
        return None
    path = record.get("to") if op == "replace" else record.get("path")
    return {"op": op, "path": path, "ok": not name.endswith("_failed")}


@dataclass
class FilesystemMonitor:
    """Observes and faults the extension's file operations under the run's directories."""

    workdir: str
    placeholders: dict[str, str]
    trace: Trace
    faults: tuple[FsFault, ...] = ()
    on_crash: Callable[[], None] | None = None
    #: Told the path of every file whose content an operation changed (a ``write`` that
    #: opened it, the destination of a ``replace``, a tamper or corrupt fault): the simulated
    #: host gives such files its virtual modification time (``SimulatedHost.stamp_changed_files``).
    on_changed: Callable[[str], None] | None = None
    #: Other spellings of the work directory (on disk) -> ``workdir``: an operation on a path
    #: spelt the other way (``os.path.realpath`` resolves the simulator's virtual root) is
    #: observed, faulted and traced as the host path.
    aliases: dict[str, str] = field(default_factory=dict)
    host_io: int = 0
    frozen: bool = False
    _counters: list[_FsCounter] = field(default_factory=list)
    _pending: _Pending | None = None
    _serial: int = 0
    _sorted_from: list[tuple[str, str]] | None = None
    _sorted: list[tuple[str, str]] = field(default_factory=list)
    #: ``os.path.realpath(workdir)`` while the monitor is active (set again at activation: the
    #: simulator's virtual root, ``virtual_root.py``, names another run's directory when
    #: another simulation takes it). None: resolved at the first check that needs it.
    _real_root: str | None = None

    def _by_length(self) -> list[tuple[str, str]]:
        """The placeholders, longest root first (sorted again only when they changed)."""
        items = list(self.placeholders.items())
        if self._sorted_from != items:
            self._sorted_from = items
            self._sorted = sorted(items, key=lambda kv: -len(kv[1]))
        return self._sorted

    def __post_init__(self) -> None:
        self._counters = [_FsCounter(f) for f in self.faults]
        # Whatever the trace records next, an operation still pending has ended before it.
        self.trace.before_emit.append(self.flush)

    def _symbolic(self, path: str) -> str:
        for name, root in self._by_length():
            if path == root or path.startswith(root + os.sep):
                return name + path[len(root) :]
        return path

    def canonical(self, path: str) -> str:
        """``path`` as the host sees it (an alias of the work directory replaced)."""
        for alias, root in self.aliases.items():
            if path == alias or path.startswith(alias.rstrip(os.sep) + os.sep):
                return root + path[len(alias) :]
        return path

    def inside(self, path: str) -> bool:
        """Whether ``path`` (absolute; ``..`` is taken after the link before it, as the kernel
        does), with every symbolic link resolved, is the run's directory or below it.

        Only the components below the run's directory are looked at (one ``lstat`` each) when
        none is a link or ``..``; otherwise the whole path is resolved (``os.path.realpath``).
        Resolving the run's directory and the whole path at every operation was a twentieth of
        a scenario on the simulator, whose run directory is reached through ``/proc`` (issue 16).
        """
        real_root = self._real_root
        if real_root is None:
            real_root = self._real_root = os.path.realpath(self.workdir)
        real = resolve_below(path, self.workdir, real_root)
        if real is None:
            return is_inside(path, self.workdir)
        return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)

    def _on_disk(self, path: str | None) -> str | None:
        """``path`` (a host path below the run's directory) spelt below the run's real directory
        when this activation has resolved it (:meth:`inside`), else ``path`` itself.

        The same file: the rest of the path is resolved from the same directory either way (the
        directory itself is followed in both spellings). ``lexists`` of the host spelling walks
        ``/proc/self/fd/1000/machine-...`` on the simulator: 5.1 us against 2.7 us, at every
        operation the monitor observes (issue 16)."""
        real_root = self._real_root
        if real_root is None or path is None:
            return path
        prefix = self.workdir.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return path
        return real_root.rstrip(os.sep) + os.sep + path[len(prefix) :]

    def confine(self, op: str, at: str, *, entry_only: bool = False) -> None:
        """Refuse ``op`` on ``at`` (absolute, as the kernel will resolve it) unless it stays in the
        run; ``entry_only``: the call acts on the directory entry (a rename's source, a link's
        new name), so only its parent directory is resolved."""
        if self.host_io:
            return
        check = self.canonical(at)
        if entry_only:
            check = os.path.dirname(check.rstrip(os.sep)) or check
        if not self.inside(check):
            # Confinement (see ``confine``): an extension's write outside the run, directly or
            # through a symbolic link, is refused as the OS would refuse an unwritable path.
            self.flush()
            if not _in_bytecode_cache(check):
                self.trace.emit("fs", "refused", op=op, path=self.canonical(os.path.abspath(at)))
            raise PermissionError(
                errno.EACCES, "outside the run's directory: refused by the simulated host (confinement)", at
            )

    def observe(
        self,
        op: str,
        path: str,
        target: str | None = None,
        *,
        at: str | None = None,
        source_at: str | None = None,
    ) -> None:
        """The before-point of an operation (``target``: a rename's source): confinement,
        ``fs:replace_before``, faults; the operation is then pending until it ends.

        ``path`` and ``target`` are normalised (``os.path.abspath``) for the trace; ``at`` and
        ``source_at`` are the same paths as the kernel will resolve them, for confinement (by
        default ``path`` and ``target``)."""
        if self.host_io:
            return
        self.flush()
        if op != "read":
            self.confine(op, path if at is None else at)
            source = target if source_at is None else source_at
            if op == "replace" and source is not None:
                self.confine(op, source, entry_only=True)
        path = self.canonical(path)
        target = None if target is None else self.canonical(target)
        if not (path == self.workdir or path.startswith(self.workdir.rstrip(os.sep) + os.sep)):
            return
        if self.frozen:
            if op != "read":
                raise SimulatedCrash("the process is dead")
            return
        if op == "replace":
            self.trace.emit("fs", "replace_before", **{"from": target, "to": path})
        self._serial += 1
        pending = _Pending(
            op, path, target, (_exists(self._on_disk(path)), _exists(self._on_disk(target))), self._serial
        )
        # Without faults there is nothing to fire (nor to count): the generator, and the
        # placeholder spelling it makes of the path, are skipped.
        for fault in self._firing(op, path) if self._counters else ():
            self._pending = None  # the fault's record comes before the operation ends
            self.trace.emit("fault", "fs", op=op, path=path, effect=fault.effect)
            if fault.effect == "crash":  # the process dies before the operation: it never ends
                if self.on_crash is not None:
                    self.on_crash()
                raise SimulatedCrash(f"crash before {op} {self._symbolic(path)}")
            self._pending = pending
            if fault.effect == "corrupt":
                self._corrupt(path)
                continue
            if fault.effect == "unexpected":  # no OSError: what an implementation did not anticipate
                raise RuntimeError(
                    f"unexpected internal error (injected fault) at {op} {self._symbolic(path)}"
                )
            code = getattr(errno, fault.errno_name)
            raise OSError(code, f"{os.strerror(code)} (injected fault)", path)
        self._pending = pending

    def ended(self, since: int, error: BaseException | None) -> None:
        """A wrapped call returned (``error`` None) or raised: record the operation it started
        (if it started one after serial ``since``)."""
        pending = self._pending
        if pending is None or pending.serial <= since:
            return
        self._pending = None
        if error is None:
            self._record(pending, None)
        else:
            code = getattr(error, "errno", None)
            self._record(
                pending, errno.errorcode.get(code, type(error).__name__) if code else type(error).__name__
            )

    def flush(self) -> None:
        """Record a pending operation no wrapper saw end, from what is on disk now."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        path_before, source_before = pending.before
        now = _exists(pending.path)
        happened = {
            "read": path_before,
            "write": now,
            "mkdir": not path_before and os.path.isdir(pending.path),
            "remove": path_before and not now,
            "replace": source_before
            and now
            and (pending.source == pending.path or not _exists(pending.source)),
        }.get(pending.op, now)
        self._record(pending, None if happened else "unknown")

    def _record(self, pending: _Pending, error: str | None) -> None:
        fields: dict[str, Any] = (
            {"from": pending.source, "to": pending.path}
            if pending.op == "replace"
            else {"path": pending.path}
        )
        if error is None:
            self.trace.emit("fs", pending.op, **fields)
            if self.on_changed is not None and pending.op in ("write", "replace"):
                self.on_changed(pending.path)
        else:
            self.trace.emit("fs", f"{pending.op}_failed", **fields, error=error)

    def replay(self, op: str, path: str) -> None:
        """Count an operation an earlier process observed (its faults fired there), so
        ``occurrence`` and ``times`` count across processes (one call per ``fs:<op>``,
        ``fs:<op>_failed`` record, and per crash fault, which leaves no end record)."""
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
                    if not self.inside(path):
                        continue  # a symbolic link leading out of the run: never followed
                    if action == "truncate":
                        self._corrupt(path)
                    elif action == "edit":
                        self._edit_in_place(path)
                    else:
                        with open(path, "a", encoding="utf-8") as handle:
                            handle.write("\ntampered after the hook returned\n")
                        if self.on_changed is not None:
                            self.on_changed(path)
                    changed.append(path)
        finally:
            self.host_io -= 1
        return changed

    def _edit_in_place(self, path: str) -> None:
        """Change the case of the last ASCII letter: the same length, still valid UTF-8."""
        self.host_io += 1
        try:
            with open(path, "rb") as handle:
                data = bytearray(handle.read())
            index = next(
                (
                    i
                    for i in range(len(data) - 1, -1, -1)
                    if chr(data[i]).isascii() and chr(data[i]).isalpha()
                ),
                None,
            )
            if index is None:
                return
            data[index] ^= 0x20
            with open(path, "r+b") as handle:
                handle.write(bytes(data))
            if self.on_changed is not None:
                self.on_changed(path)
        finally:
            self.host_io -= 1

    def _corrupt(self, path: str) -> None:
        if not self.inside(path):
            return  # a symbolic link leading out of the run: never followed
        self.host_io += 1
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            with open(path, "wb") as handle:
                handle.write(data[: len(data) // 2])
            if self.on_changed is not None:
                self.on_changed(path)
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


def _at(path: Any, dir_fd: Any = None) -> str | None:
    """The absolute path a call acts on, as the kernel resolves it (not normalised: ``..``
    after a symbolic link leaves the link's target, not the link); None for a descriptor."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return None
    if os.path.isabs(path):
        return path
    if isinstance(dir_fd, int) and dir_fd >= 0:
        # Relative to an open directory (``shutil.rmtree``'s ``unlink(name, dir_fd=...)``).
        proc = f"/proc/self/fd/{dir_fd}"
        try:
            return os.path.join(os.readlink(proc), path)
        except OSError:
            return os.path.join(proc, path)  # realpath resolves it, or it is refused
    return os.path.join(os.getcwd(), path)


#: The ``dir_fd`` of the wrapped ``os.open`` call running (its audit event does not carry it).
_OPEN_DIR_FD: list[Any] = [None]


def _in_bytecode_cache(path: str) -> bool:
    """Whether ``path`` lies in the interpreter's bytecode cache: below ``sys.pycache_prefix``
    or in a ``__pycache__`` directory. importlib writes there when a module is first imported
    (``SourceFileLoader.set_data``, which gives up quietly on an ``OSError``), so a module an
    implementation imports during a run tries it once per process, and only while the cache
    lacks the module. Refused like any write outside the run (a planted ``.pyc`` would run in
    the harness's next process), but not recorded: the record made a seed's trace depend on the
    cache (in the thirty-third session, a mutant's module imported in the first of two runs of
    one seed added an ``fs:refused`` record that the second run, the module loaded, lacked)."""
    prefix = sys.pycache_prefix
    if prefix and (path == prefix or path.startswith(prefix.rstrip(os.sep) + os.sep)):
        return True
    return "__pycache__" in path.split(os.sep)


#: Calls that change a file's metadata or content without an ``fs`` record: refused outside
#: the run, not recorded (audit event -> (operation, index of its path, index of its dir_fd)).
_METADATA: dict[str, tuple[str, int, int | None]] = {
    "os.chmod": ("chmod", 0, 2),
    "os.chown": ("chown", 0, 3),
    "os.utime": ("utime", 0, 3),
    "os.truncate": ("truncate", 0, None),
}


#: The audit events :func:`_audit` acts on. A Python audit hook is called for every audit event
#: of the process, ``builtins.id`` (every ``id()``), ``marshal.dumps`` and ``object.__getattr__``
#: included: about 150,000 in a run of the suite on the simulator, against fewer than 10,000 of
#: these. One set lookup sends the others back before anything else is read (589 ns -> 234 ns
#: per such event; with ``_WRAPPED_KEYS``, 1.2 % fewer instructions in the suite's scenarios,
#: December 2026).
_HANDLED = frozenset(
    {"open", "os.rename", "os.mkdir", "os.remove", "os.rmdir", "os.symlink", "os.link", *_METADATA}
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event not in _HANDLED or not _ACTIVE:
        return
    monitor = _ACTIVE[-1]
    if monitor.host_io:
        return
    if event == "open":
        # The ``open`` audit event has no ``dir_fd``: the wrapped ``os.open`` passes it on.
        at = _at(args[0], _OPEN_DIR_FD[-1])
        if at is not None:
            op = "write" if _write_mode(args[1], args[2]) else "read"
            monitor.observe(op, os.path.abspath(at), at=at)
    elif event == "os.rename":
        src, dst = _at(args[0], args[2]), _at(args[1], args[3])
        if src is not None and dst is not None:
            monitor.observe(
                "replace", os.path.abspath(dst), target=os.path.abspath(src), at=dst, source_at=src
            )
    elif event == "os.mkdir":
        at = _at(args[0], args[2])
        if at is not None:
            monitor.observe("mkdir", os.path.abspath(at), at=at)
    elif event in ("os.remove", "os.rmdir"):
        at = _at(args[0], args[1])
        if at is not None:
            monitor.observe("remove", os.path.abspath(at), at=at)
    elif event == "os.symlink":
        at = _at(args[1], args[2])
        if at is not None:
            monitor.confine("symlink", at, entry_only=True)
    elif event == "os.link":
        # A hard link to a file outside would let a later write inside change it.
        src, dst = _at(args[0], args[2]), _at(args[1], args[3])
        if src is not None:
            monitor.confine("link", src)
        if dst is not None:
            monitor.confine("link", dst, entry_only=True)
    elif event in _METADATA:
        op, index, fd_index = _METADATA[event]
        at = _at(args[index], None if fd_index is None else args[fd_index])
        if at is not None:
            monitor.confine(op, at)


def _ending(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` that tells the active monitor when an operation it started has ended."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _ACTIVE:
            return function(*args, **kwargs)
        monitor = _ACTIVE[-1]
        since = monitor._serial
        dir_fd = kwargs.get("dir_fd")
        if dir_fd is not None:
            _OPEN_DIR_FD.append(dir_fd)
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            if _ACTIVE:
                _ACTIVE[-1].ended(since, error)
            raise
        finally:
            if dir_fd is not None:
                _OPEN_DIR_FD.pop()
        if _ACTIVE:
            _ACTIVE[-1].ended(since, None)
        return result

    wrapper.__wrapped_by_monitor__ = function  # type: ignore[attr-defined]
    return wrapper


#: (module, attribute) of every wrapped function; the originals while wrapped.
_WRAPPED: tuple[tuple[Any, str], ...] = (
    (builtins, "open"),
    (io, "open"),
    (os, "open"),
    (os, "rename"),
    (os, "replace"),
    (os, "mkdir"),
    (os, "remove"),
    (os, "unlink"),
    (os, "rmdir"),
)
_ORIGINALS: dict[tuple[int, str], Any] = {}
#: The wrapper of each original, made once: a simulation activates the monitor for every
#: operation it runs, and making nine wrappers (``functools.wraps``) each time was 1.5 % of an
#: exploration (issue 16). Keyed by (module, name, the original): a function replaced since
#: (a test's patch) gets a wrapper of its own.
_WRAPPERS: dict[tuple[int, str], tuple[Any, Callable[..., Any]]] = {}


#: ``(module, name, key)`` of every wrapped function, ``key`` the ``(id(module), name)`` of
#: ``_ORIGINALS`` and ``_WRAPPERS`` (a module is never freed, so its id stays its own). Made once:
#: with the audit hook installed every ``id()`` is an audit event, and the 27 of each activation
#: (one per ``Simulation`` step) were a sixth of all the events of a run of the suite.
_WRAPPED_KEYS: tuple[tuple[Any, str, tuple[int, str]], ...] = tuple(
    (module, name, (id(module), name)) for module, name in _WRAPPED
)


def _wrap() -> None:
    for module, name, key in _WRAPPED_KEYS:
        original = getattr(module, name)
        _ORIGINALS[key] = original
        known = _WRAPPERS.get(key)
        if known is None or known[0] is not original:
            known = (original, _ending(original))
            _WRAPPERS[key] = known
        setattr(module, name, known[1])


def _unwrap() -> None:
    for module, name, key in _WRAPPED_KEYS:
        setattr(module, name, _ORIGINALS.pop(key))


class activate_monitor:  # noqa: N801  (used as a context manager)
    """Make ``monitor`` the active one for the duration of a ``with`` block.

    ``real_root``: ``os.path.realpath(monitor.workdir)`` when the caller knows it for the whole
    block, so the monitor does not resolve it again. The simulator does (``Simulation._run``):
    its work directory is the virtual root, which names the run's machine directory on disk from
    ``VirtualRoot.host_view``, entered before this block, to its end; resolving it anew through
    ``/proc/self/fd`` at each of the 206 activations of a run of the suite was about 60 us each
    (issue 16). None: resolved at the first check that needs it, as the real-Pi bridge does."""

    def __init__(self, monitor: FilesystemMonitor, real_root: str | None = None) -> None:
        self.monitor = monitor
        self.real_root = real_root

    def __enter__(self) -> FilesystemMonitor:
        self.monitor._real_root = self.real_root
        if not _HOOK["installed"]:
            sys.addaudithook(_audit)  # audit hooks cannot be removed: install once per process
            _HOOK["installed"] = True
        if not _ACTIVE:
            _wrap()
        _ACTIVE.append(self.monitor)
        return self.monitor

    def __exit__(self, *exc: object) -> None:
        self.monitor.flush()
        _ACTIVE.remove(self.monitor)
        if not _ACTIVE:
            _unwrap()
