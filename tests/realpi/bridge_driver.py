"""The Python side of the bridge driven over pipes as ``bridge.ts`` drives it: started as a fresh
``python -m ...bridge_runtime`` process, or (``zygote=``) through a bridge zygote's client, as
``bridge.ts`` starts it when ``PI_HARNESS_BRIDGE_ZYGOTE`` is set. Shared by the bridge's unit
tests and the zygote's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_continuity_harness.targets.realpi.bridge_zygote import CLIENT_PATH, RUNTIME_MODULE, BridgeZygote

EXTENSIONS = Path(__file__).parent / "extensions"
CTX = {"id": "c1", "inst": 1, "kind": "event", "mode": "rpc", "hasUI": True, "cwd": "/x"}


def started_zygote() -> Iterator[BridgeZygote]:
    """A zygote for the test extensions, stopped after use (the ``zygote`` fixture's body)."""
    zygote = BridgeZygote(sys.executable, bridge_env())
    try:
        yield zygote
    finally:
        zygote.stop()


def bridge_env(**extra: str) -> dict[str, str]:
    """This process's environment with the test extensions first on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXTENSIONS), *sys.path]), **extra}


class Bridge:
    """One bridge process; ``umask`` and ``new_session`` set what its starter would have."""

    def __init__(
        self,
        spec: str,
        tmp_path: Path,
        *,
        zygote: BridgeZygote | None = None,
        env: dict[str, str] | None = None,
        umask: int | None = None,
        new_session: bool = False,
    ) -> None:
        args = ["-m", RUNTIME_MODULE, "--extension", spec]
        if zygote is not None:
            args = ["-I", "-S", str(CLIENT_PATH), zygote.socket_path, *args]
        self.proc = subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=bridge_env(**(env or {})),
            cwd=tmp_path,
            umask=-1 if umask is None else umask,
            start_new_session=new_session,
        )
        self.ids = 0
        self.calls: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read().decode() if self.proc.stderr else "bridge exited"
        data: dict[str, Any] = json.loads(line)
        return data

    def request(self, message: dict[str, Any], answer: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; answer the bridge's calls with ``answer[method]``; return the result."""
        self.ids += 1
        rid = f"t{self.ids}"
        self.send({**message, "id": rid})
        while True:
            reply = self.read()
            if reply.get("type") == "call":
                if not reply.get("noreply"):
                    value = (answer or {}).get(reply["method"])
                    self.send(
                        {"type": "reply", "id": reply["id"], "value": value, "undefined": value is None}
                    )
                self.calls.append(reply)
                continue
            assert reply["id"] == rid
            return reply

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=10)

    def kill(self) -> None:
        """Kill it if it still runs (teardown), and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
