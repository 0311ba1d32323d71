"""The RPC client waits for a held dialog's answer thread (``PiRpcProcess.wait_for_held_answers``).

Pi 1.6 may give a timed dialog its default before the client has run the answer's ``during``
operations (``dist/modes/rpc/rpc-mode.js:69-74``); the command then ends and Pi goes idle while
the client is still running them. PiTarget ends the operation only after they are done (as the
simulator's settle waits for them), so the next operation never overlaps them. A stand-in for Pi
(a few lines of Python speaking the RPC protocol) makes the timing certain.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest

from pi_continuity_harness.targets.realpi.rpc_client import HeldAnswer, PiRpcProcess, PiRpcTimeoutError

#: Asks one confirm at start, then answers every get_state as an idle Pi would.
_FAKE_PI = r"""
import json, sys
print(json.dumps({"type": "extension_ui_request", "id": "d1", "method": "confirm",
                  "title": "Timed", "message": "Wait?", "timeout": 1}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") == "get_state":
        print(json.dumps({"type": "response", "id": request.get("id"), "command": "get_state",
                          "success": True, "data": {"isStreaming": False, "isCompacting": False}}),
              flush=True)
"""


def _process(hold_seconds: float, done: threading.Event) -> PiRpcProcess:
    def hold() -> None:
        time.sleep(hold_seconds)
        done.set()

    def answerer(request: dict[str, Any]) -> HeldAnswer:
        return HeldAnswer(True, hold)

    return PiRpcProcess([sys.executable, "-c", _FAKE_PI], default_timeout=10.0, dialog_answerer=answerer)


def test_waiting_for_held_answers_returns_once_their_operations_have_run() -> None:
    done = threading.Event()
    with _process(0.3, done) as proc:
        proc.wait_idle(quiet=0.01)  # Pi is idle at once: the held operations are still running
        assert not done.is_set()
        assert proc.wait_for_held_answers() is True
        assert done.is_set()
        assert proc.wait_for_held_answers() is False  # each is waited for once


def test_held_operations_that_do_not_end_in_time_are_a_timeout() -> None:
    done = threading.Event()
    with _process(1.0, done) as proc:
        proc.wait_idle(quiet=0.01)
        with pytest.raises(PiRpcTimeoutError, match=r"held dialog.s operations did not end within 0\.1 s"):
            proc.wait_for_held_answers(timeout=0.1)
        assert proc.wait_for_held_answers() is False  # handed over once, timed out or not
        done.wait(5.0)
