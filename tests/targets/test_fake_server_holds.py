"""``FakeModelServer.wait_for_holds``: the real-Pi target waits, after every top-level operation,
until the model server has run each held reply's operations and ended its request. Without it
Pi could be idle and quiet before the server thread had the answer to a held ``switch_session``
(Pi answers only after the new runtime started), and the run was observed without the held
operation and with the request not aborted (differential seed 11213, 1 run in 8)."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from pi_continuity_harness.scenario.model_script import ModelScript, Reply
from pi_continuity_harness.scenario.operations import AbortOp
from pi_continuity_harness.targets.realpi.fake_server import FakeModelServer


def _post(url: str) -> None:
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    body = {
        "model": "fake-model",
        "stream": True,
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {}}}],
    }
    connection.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    connection.getresponse().read()
    connection.close()


def test_wait_for_holds_waits_for_the_held_operations_and_the_end_of_their_request() -> None:
    release = threading.Event()
    entered = threading.Event()

    def on_hold(_request: object, _outcome: object) -> None:
        entered.set()
        release.wait(10)

    server = FakeModelServer(
        ModelScript(agent=(Reply(text="held", during=(AbortOp(),)),)), on_hold=on_hold, abort_grace_s=0.05
    )
    url = server.start()
    try:
        assert server.wait_for_holds(timeout=0.1) is False  # nothing held yet
        client = threading.Thread(target=_post, args=(url,))
        client.start()
        assert entered.wait(10)
        with pytest.raises(TimeoutError, match="1 held replies still running"):
            server.wait_for_holds(timeout=0.2)
        threading.Timer(0.2, release.set).start()
        began = time.monotonic()
        assert server.wait_for_holds(timeout=10) is True
        assert time.monotonic() - began >= 0.15
        assert all(r.finished_at is not None for r in server.requests)
        client.join(10)
        assert server.wait_for_holds(timeout=0.1) is False  # ended: nothing left to wait for
    finally:
        release.set()
        server.stop()
