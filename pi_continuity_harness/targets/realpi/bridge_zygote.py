"""A bridge zygote: one Python process that has imported the bridge, forked once per Pi start.

Why: every real-Pi start that hosts a Python extension spawns a bridge process
(``bridge.ts``), and a bridge spent about 0.25 CPU-s importing the harness before it could
answer Pi's ``load`` (47 bridges for the 21 smoke scenarios: 11.5 of the run's 35 CPU-s,
measured on 3 December 2026 by timing each bridge process), on the critical path of every Pi
start, since Pi awaits each extension factory. A zygote imports those modules once per harness
process; each bridge is then a fork of it, which starts in milliseconds. This is the
forkserver pattern of :mod:`multiprocessing`, with Pi's pipes handed over instead of a pickle.

How a bridge starts: ``bridge.ts`` sees ``PI_HARNESS_BRIDGE_ZYGOTE`` (``{"client", "socket"}``)
and runs ``python -I -S bridge_client.py <socket> -m ...bridge_runtime <args>`` instead of
``python -m ...bridge_runtime <args>``. The client (:mod:`.bridge_client`, stdlib only) sends its
standard streams (``SCM_RIGHTS``), arguments, environment, working directory, umask and process
group over the Unix socket. The zygote forks a *worker*, which takes the streams as its fds
0-2, the environment as ``os.environ``, the directory, the umask, ``sys.path[0]`` as ``python
-m`` sets it (the working directory) and ``sys.argv``, and runs
:func:`~.bridge_runtime.main` with Pi's process group. What the worker cannot inherit from a
fresh start and how it is made the same:

* *the process group.* A fresh bridge is in Pi's group, so a crash (``killpg`` of Pi's group,
  by the harness or by a ``crash`` fault in the bridge) kills it at the same instant. The
  worker is the zygote's child in the zygote's group, so: a ``crash`` fault kills Pi's group
  (the client's, passed as ``process_group``) and then the worker exits; the harness, before it
  kills a Pi group, has the zygote stop that group's workers (SIGSTOP, :meth:`BridgeZygote.freeze`)
  and after it, kill and reap them (:meth:`BridgeZygote.reap`), so no worker takes a step after
  its Pi died and none outlives it, as ``PiRpcProcess.close`` promised of a fresh bridge. The
  client stays in Pi's group as the worker's stand-in: the zygote kills a worker whose
  stand-in is gone.
* *random state and temporary directory.* ``random`` is reseeded in the child by CPython's own
  fork hook; ``tempfile``'s cached directory is forgotten so the worker's ``TMPDIR`` decides.
* *the hash seed.* Workers share the zygote's ``PYTHONHASHSEED`` (string hashes, and so the
  iteration order of sets of strings, are the same in every worker of a zygote): an
  implementation whose behaviour depends on that order is wrong either way.

``PI_HARNESS_FRESH_BRIDGE=1`` in the harness's environment turns the zygote off: every bridge
is a fresh ``python -m`` process, as before (``tests/realpi/test_bridge_zygote.py`` runs a
scenario both ways and compares the observation records).

The zygote reads commands on its stdin (``freeze <pgid>``, ``reap <pgid>``; it answers ``ok``)
and ends at stdin EOF, killing the workers still running: the harness process that started it
is gone or done with it (:func:`stop_bridge_zygotes` runs at its exit).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pi_continuity_harness.errors import TargetError
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
from pi_continuity_harness.targets.realpi import bridge_runtime  # what every worker inherits imported

__all__ = [
    "CLIENT_PATH",
    "FRESH_ENV",
    "ZYGOTE_ENV",
    "BridgeZygote",
    "BridgeZygoteError",
    "bridge_zygote",
    "stop_bridge_zygotes",
]

#: The client ``bridge.ts`` runs when a zygote serves the bridge.
CLIENT_PATH = Path(__file__).with_name("bridge_client.py")
#: Pi's environment variable that tells ``bridge.ts`` to start bridges through a zygote.
ZYGOTE_ENV = "PI_HARNESS_BRIDGE_ZYGOTE"
#: The harness's environment variable that turns zygotes off (every bridge a fresh process).
FRESH_ENV = "PI_HARNESS_FRESH_BRIDGE"
#: The one module a zygote runs (the arguments must name it, as ``python -m`` would).
RUNTIME_MODULE = "pi_continuity_harness.targets.realpi.bridge_runtime"
_MODULE = "pi_continuity_harness.targets.realpi.bridge_zygote"
_READY_SECONDS = 60.0
_SERVE = f"import sys; from {_MODULE} import serve; sys.exit(serve(sys.argv[1]))"


class BridgeZygoteError(TargetError):
    """A bridge zygote did not start or stopped answering."""


# ---------------------------------------------------------------------------- the zygote side
@dataclass
class _Worker:
    pid: int
    pgrp: int
    conn: socket.socket | None


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: a 4-byte length, the JSON header, and the client's fds 0-2."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    try:
        while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
            more = conn.recv(1 << 16)
            if not more:
                raise ValueError("the request ended early")
            data += more
        (length,) = struct.unpack("!I", data[:4])
        header = json.loads(data[4 : 4 + length])
        if len(fds) != 3 or not isinstance(header, dict):
            raise ValueError("a request carries a JSON object and three file descriptors")
        args = header.get("args")
        if not isinstance(args, list) or args[:2] != ["-m", RUNTIME_MODULE]:
            raise ValueError(f"a zygote runs only -m {RUNTIME_MODULE}, not {args!r}")
        return header, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _become_worker(header: dict[str, Any], fds: list[int], inherited: list[int]) -> int:
    """In the forked child: take the client's streams, environment and place; run the bridge."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in inherited:
        with contextlib.suppress(OSError):
            os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(header["env"]).items()})
    os.chdir(str(header["cwd"]))
    os.umask(int(header["umask"]))
    tempfile.tempdir = None
    sys.path[0] = os.getcwd()  # what ``python -m`` puts first
    rest = [str(a) for a in header["args"][2:]]
    sys.argv = [str(bridge_runtime.__file__), *rest]
    return bridge_runtime.main(rest, process_group=int(header["pgrp"]))


def _send(conn: socket.socket | None, message: dict[str, Any]) -> None:
    if conn is not None:
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(message).encode("utf-8") + b"\n")


def serve(socket_path: str) -> int:
    """The zygote's loop (``python -c "...serve(socket)"``, :class:`BridgeZygote`)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    selector.register(0, selectors.EVENT_READ, "control")
    workers: dict[int, _Worker] = {}
    control = b""

    def finish(worker: _Worker, status: int) -> None:
        if os.WIFSIGNALED(status):
            _send(worker.conn, {"signal": os.WTERMSIG(status)})
        else:
            _send(worker.conn, {"exit": os.waitstatus_to_exitcode(status)})
        drop(worker)

    def drop(worker: _Worker) -> None:
        if worker.conn is not None:
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(worker.conn)
            worker.conn.close()
            worker.conn = None

    def reap_any() -> None:
        while workers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            worker = workers.pop(pid, None)
            if worker is not None:
                finish(worker, status)

    def of_group(pgid: int) -> list[_Worker]:
        return [w for w in workers.values() if w.pgrp == pgid]

    def command(line: str) -> None:
        verb, _, argument = line.partition(" ")
        pgid = int(argument)
        for worker in of_group(pgid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGSTOP if verb == "freeze" else signal.SIGKILL)
            # ``kill`` returns before a worker running on another core has stopped or died:
            # wait until it has (``WUNTRACED``: a stop is reported too), so "ok" means it.
            _pid, status = os.waitpid(worker.pid, os.WUNTRACED if verb == "freeze" else 0)
            if not os.WIFSTOPPED(status):  # it ended (on its own, before the stop came)
                workers.pop(worker.pid, None)
                finish(worker, status)
        os.write(1, b"ok\n")

    def fork(conn: socket.socket) -> None:
        try:
            header, fds = _receive(conn)
        except (OSError, ValueError) as error:
            _send(conn, {"error": f"bad request: {error}"})
            conn.close()
            return
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                inherited = [listener.fileno(), wake_r, wake_w, conn.fileno()]
                inherited += [w.conn.fileno() for w in workers.values() if w.conn is not None]
                selector.close()
                code = _become_worker(header, fds, inherited)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException:
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        for fd in fds:
            os.close(fd)
        workers[pid] = _Worker(pid, int(header["pgrp"]), conn)
        _send(conn, {"pid": pid})
        selector.register(conn, selectors.EVENT_READ, pid)

    os.write(1, b"ready\n")
    try:
        while True:
            for key, _mask in selector.select():
                if key.data == "accept":
                    with contextlib.suppress(BlockingIOError, InterruptedError):
                        conn, _ = listener.accept()
                        fork(conn)
                elif key.data == "child":  # a SIGCHLD: reaped below, after every wake-up
                    with contextlib.suppress(BlockingIOError):
                        while os.read(wake_r, 512):
                            pass
                elif key.data == "control":
                    data = os.read(0, 4096)
                    if not data:
                        return 0
                    control += data
                    while b"\n" in control:
                        line, control = control.split(b"\n", 1)
                        command(line.decode("ascii").strip())
                else:  # a client's connection: it says nothing more, so this is its end
                    client = key.fileobj
                    assert isinstance(client, socket.socket)
                    with contextlib.suppress(OSError):
                        if client.recv(1):
                            continue
                    worker = workers.get(int(key.data))
                    if worker is not None:
                        drop(worker)
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(worker.pid, signal.SIGKILL)
            reap_any()
    finally:
        for worker in list(workers.values()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(worker.pid, 0)
        listener.close()
        # The harness removes the directory too; this covers a harness that was killed.
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
            os.rmdir(os.path.dirname(socket_path))


# ---------------------------------------------------------------------------- the harness side
#: The longest path ``bind`` takes for a Unix socket (``sun_path`` is 108 bytes on Linux, 104 on
#: macOS, with the terminating NUL).
_SOCKET_PATH_MAX = 103


def _socket_dir() -> str:
    """A private (0700) directory for the socket: under the temporary directory, or under
    ``/tmp`` when ``$TMPDIR`` is too long for a socket's path."""
    directory = str(make_owned_directory("pch-bz-"))
    if len(os.path.join(directory, "s").encode()) <= _SOCKET_PATH_MAX or not os.path.isdir("/tmp"):
        return directory
    remove_owned(directory)
    return str(make_owned_directory("pch-bz-", "/tmp"))


class BridgeZygote:
    """A running zygote, started by the harness process that uses it."""

    def __init__(self, python: str, env: Mapping[str, str]) -> None:
        # A short directory of its own: a Unix socket's path has at most 107 bytes.
        #: The process that started it, the only one that may stop it (a fork inherits this
        #: object, not the zygote: its ``stop()`` would remove the socket under its parent).
        self._owner = os.getpid()
        self._dir = _socket_dir()
        self.socket_path = os.path.join(self._dir, "s")
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            # ``-c``, not ``-m``: the package imports this module, so ``-m`` would run a second copy.
            [python, "-c", _SERVE, self.socket_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**env, "HOME": self._dir},
            cwd=self._dir,
            start_new_session=True,
        )
        ready = self._read_line(_READY_SECONDS)
        if ready != b"ready\n":
            self.stop()
            raise BridgeZygoteError(
                f"the bridge zygote ({python}, {_MODULE}.serve) did not start: exit status "
                f"{self._proc.returncode}, said {ready!r} (its errors are on this process's stderr)"
            )

    def _read_line(self, timeout: float) -> bytes:
        stdout = self._proc.stdout
        assert stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(stdout, selectors.EVENT_READ)
            if not waiting.select(timeout):
                return b""
        return stdout.readline()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def env(self) -> dict[str, str]:
        """What Pi's environment needs for its bridges to start through this zygote."""
        return {ZYGOTE_ENV: json.dumps({"client": str(CLIENT_PATH), "socket": self.socket_path})}

    def _ask(self, verb: str, pgid: int) -> None:
        with self._lock:
            stdin: IO[bytes] | None = self._proc.stdin
            if stdin is None or not self.alive:
                return
            try:
                stdin.write(f"{verb} {pgid}\n".encode("ascii"))
                stdin.flush()
            except OSError:
                return
            answer = self._read_line(30.0)
        if answer != b"ok\n":
            raise BridgeZygoteError(f"the bridge zygote did not answer {verb} {pgid} (said {answer!r})")

    def freeze(self, pgid: int) -> None:
        """Stop (SIGSTOP) the workers serving Pi's process group ``pgid``, before it is killed."""
        self._ask("freeze", pgid)

    def reap(self, pgid: int) -> None:
        """Kill the workers serving Pi's process group ``pgid`` and wait until they are gone."""
        self._ask("reap", pgid)

    def stop(self) -> None:
        """End the zygote (stdin EOF: it kills its remaining workers) and remove its socket;
        nothing in a process that did not start it."""
        if os.getpid() != self._owner:
            return
        with self._lock:
            if self._proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
        remove_owned(self._dir)


_ZYGOTES: dict[tuple[str, tuple[tuple[str, str], ...]], BridgeZygote] = {}
_ZYGOTES_LOCK = threading.Lock()


def bridge_zygote(python: str, env: Mapping[str, str]) -> BridgeZygote | None:
    """This process's zygote for bridges of ``python`` started with ``env`` (one per distinct
    pair, started on first use and kept until :func:`stop_bridge_zygotes`), or None when
    ``PI_HARNESS_FRESH_BRIDGE`` is set."""
    if os.environ.get(FRESH_ENV, "") not in ("", "0"):
        return None
    key = (python, tuple(sorted(env.items())))
    with _ZYGOTES_LOCK:
        zygote = _ZYGOTES.get(key)
        if zygote is None or not zygote.alive:
            zygote = BridgeZygote(python, env)
            _ZYGOTES[key] = zygote
        return zygote


def stop_bridge_zygotes() -> None:
    """Stop every zygote this process started (at exit, and for tests)."""
    with _ZYGOTES_LOCK:
        zygotes = list(_ZYGOTES.values())
        _ZYGOTES.clear()
    for zygote in zygotes:
        with contextlib.suppress(Exception):
            zygote.stop()


atexit.register(stop_bridge_zygotes)
# A forked child (a ``ProcessPoolExecutor`` worker of ``explore --jobs``) starts its own zygote
# if it needs one; it must not use or stop its parent's.
os.register_at_fork(after_in_child=_ZYGOTES.clear)


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
