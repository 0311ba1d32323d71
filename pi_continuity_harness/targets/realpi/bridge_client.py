"""The bridge process Pi spawns when a bridge zygote serves it (see :mod:`.bridge_zygote`).

``bridge.ts`` runs, in place of ``python -m ...bridge_runtime <args>``::

    python -I -S bridge_client.py <zygote socket> -m pi_continuity_harness.targets.realpi.bridge_runtime <args>

This file imports nothing of the harness (``-I -S``: no site, no ``PYTHON*`` variables), so it
starts in about 10 ms of CPU instead of the bridge's 0.25 CPU-s of imports. It hands the zygote
its standard streams (``SCM_RIGHTS``), its arguments, environment, working directory, umask and
process group; the zygote forks a worker, already imported, that runs the bridge on those
streams. This process stays in Pi's process group as the bridge's stand-in: it forwards
SIGTERM, SIGINT and SIGHUP to the worker and ends as the worker ended (the same exit code, or
killed by the same signal), which is what ``bridge.ts`` watches. A SIGKILL of Pi's group kills
it; the harness stops and reaps the group's workers at once (``BridgeZygote.freeze`` and
``reap``), and the zygote kills any worker whose stand-in is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys


def _fail(message: str) -> int:
    sys.stderr.write(f"pi-continuity-harness bridge client: {message}\n")
    sys.stderr.flush()
    return 1


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        return _fail("usage: bridge_client.py <zygote socket> <python arguments>")
    path, args = argv[0], argv[1:]
    umask = os.umask(0)
    os.umask(umask)
    header = json.dumps(
        {"args": args, "env": dict(os.environ), "cwd": os.getcwd(), "umask": umask, "pgrp": os.getpgrp()}
    ).encode("utf-8")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        socket.send_fds(sock, [struct.pack("!I", len(header)) + header], [0, 1, 2])
    except OSError as error:
        return _fail(f"cannot reach the bridge zygote at {path}: {error}")
    # The worker has the streams now; this process keeps none of Pi's pipes open (so Pi sees the
    # bridge's stdout end when the worker's ends), only stderr for its own messages.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    worker: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        if worker:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker[0], signum)

    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, forward)
    reader = sock.makefile("rb")
    while True:
        line = reader.readline()  # a forwarded signal does not interrupt it (PEP 475)
        if not line:
            return _fail("the bridge zygote closed the connection before the bridge ended")
        message = json.loads(line)
        if "pid" in message:
            worker.append(int(message["pid"]))
        elif "signal" in message:
            signum = int(message["signal"])
            if signum not in (signal.SIGKILL, signal.SIGSTOP):  # these two cannot be caught
                signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return 128 + signum
        elif "exit" in message:
            return int(message["exit"])
        elif "error" in message:
            return _fail(str(message["error"]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
