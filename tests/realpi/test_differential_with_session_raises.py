"""Differential: a ``with_session`` callback that raises, real Pi 1.6 against the simulator.

Pi runs ``withSession`` as the last step of ``newSession`` (``finishSessionReplacement``,
agent-session-runtime.js:139-146, :163-190), after the new session replaced the old one, and
does not catch it: ``ctx.newSession`` rejects with the very Error the callback threw. A Python
extension awaiting ``ctx.new_session`` gets the exception its callback raised (same class and
message) on both targets; uncaught, it fails the command (an ``extension_error`` of event
``command`` with its message). Before, the bridge raised a ``BridgeCallError`` with the message
(the simulator the callback's own exception).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

from pi_continuity_harness.api import PiError


class CallbackFailed(Exception):
    pass


CAUGHT = []


def extension(pi):
    async def fresh(args, ctx):
        async def with_session(new_ctx):
            new_ctx.ui.notify("inside: " + json.dumps(new_ctx.session_manager.get_session_file() is not None), "info")
            raise CallbackFailed("callback failed: " + args)

        if args == "uncaught":
            await ctx.new_session(with_session=with_session)
            return
        try:
            result = await ctx.new_session(with_session=with_session)
            CAUGHT.append(["returned", result])
        except Exception as error:
            CAUGHT.append([type(error).__name__, isinstance(error, PiError), str(error)])

    async def report(args, ctx):
        ctx.ui.notify("caught: " + json.dumps(CAUGHT), "info")

    pi.register_command("fresh", fresh)
    pi.register_command("report", report)
"""


def test_a_with_session_callback_that_raises_fails_new_session_with_its_own_exception(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("with_session_probe", _EXTENSION)
    ops = [
        {"command": "/fresh caught"},
        {"command": "/report"},
        {"command": "/fresh uncaught"},
        {"command": "/report"},
    ]
    real, sim = play(targets, scenario({}), ops, spec)
    caught = [["CallbackFailed", False, "callback failed: caught"]]
    assert real.notifications == [
        ("inside: true", "info"),
        ("caught: " + json.dumps(caught), "info"),
        ("inside: true", "info"),
        ("caught: " + json.dumps(caught), "info"),
    ]
    assert [(o.name, o.ok) for o in real.operations] == [("command", True)] * 4
    errors = [(e["extensionPath"], e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [("command:fresh", "command", "callback failed: uncaught")]
    assert sim.notifications == real.notifications
    assert [(e["extensionPath"], e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
