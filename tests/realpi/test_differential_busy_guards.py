"""Differential: the guards of Pi 1.6's session that a Python extension or an RPC command meets
while a reply streams or a manual compaction runs, real Pi against the simulator.

* ``prompt`` (agent-session.js:1721-1723): while a compaction runs, "Cannot submit a prompt
  while compaction is in progress. ..."; while a reply streams without ``streamingBehavior``
  (:1758-1761), "Agent is already processing. ...". An RPC ``prompt`` answers it as its error
  (rpc-mode.js:334-338); an extension's ``pi.sendUserMessage`` does not await it, and the
  runner reports it as a ``<runtime>`` ``send_user_message`` error (:2880-2887).
* ``reload`` (:3105-3110) and ``navigateTree`` (:3371-3376) throw while a compaction runs
  (their streaming messages are in ``test_differential_api_surface.py``); a Python extension
  catches the API's ``PiError`` with Pi's message.

An extension command runs at once even then (:1713-1719), so ``/guards`` is sent from a held
model call's ``during``. Each test asserts real Pi's answers explicitly, then the simulator's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import LONG, Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import inspect
import json

from pi_continuity_harness.api import PiError


def extension(pi):
    async def guards(args, ctx):
        out = {}

        async def attempt(label, call):
            try:
                value = call()
                if inspect.isawaitable(value):
                    await value
                out[label] = "no error"
            except Exception as error:
                out[label] = [isinstance(error, PiError), str(error)]

        await attempt("reload", ctx.reload)
        await attempt("navigate", lambda: ctx.navigate_tree("nope"))
        await attempt("send", lambda: pi.send_user_message("sent while " + args))
        ctx.ui.notify(args + ": " + json.dumps(out), "info")

    pi.register_command("guards", guards)
"""

COMPACTING = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
)
BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


def _runtime_errors(observation: object) -> list[tuple[str, str, str]]:
    return [
        (e["extensionPath"], e["event"], e["error"])
        for e in observation.session("extension_error")  # type: ignore[attr-defined]
    ]


def test_guards_while_a_manual_compaction_runs(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("busy_guards_probe", _EXTENSION)
    during = [{"command": "/guards compacting"}, {"prompt": "typed while compacting"}]
    sc = scenario(
        {
            "agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}, {"text": "after"}],
            "summary": [{"text": "SUMMARY", "during": during}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact", {"prompt": "two"}], spec)
    assert notes(real)["compacting"] == {
        "reload": [True, "Wait for compaction to finish before reloading."],
        "navigate": [
            True,
            "Wait for the current compaction or tree navigation to finish before navigating the session tree.",
        ],
        "send": "no error",
    }
    held = [(h.outcome.name, h.outcome.ok, h.outcome.error) for h in real.held_operations]
    assert held == [("command", True, None), ("prompt", False, COMPACTING)]
    assert _runtime_errors(real) == [("<runtime>", "send_user_message", COMPACTING)]
    assert [o.ok for o in real.operations] == [True, True, True]
    assert notes(sim) == notes(real)
    assert [(h.outcome.name, h.outcome.ok, h.outcome.error) for h in sim.held_operations] == held
    assert _runtime_errors(sim) == _runtime_errors(real)
    assert_equivalent(real, sim)


def test_a_user_message_an_extension_sends_while_a_reply_streams_without_deliver_as_is_a_runtime_error(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("busy_guards_probe", _EXTENSION)
    sc = scenario(
        {"agent": [{"text": "reply", "during": [{"command": "/guards streaming"}]}, {"text": "never"}]}
    )
    real, sim = play(targets, sc, [{"prompt": "one"}], spec)
    assert notes(real)["streaming"] == {
        "reload": [True, "Wait for the current response to finish before reloading."],
        "navigate": [True, "Wait for the current response to finish before navigating the session tree."],
        "send": "no error",
    }
    assert _runtime_errors(real) == [("<runtime>", "send_user_message", BUSY)]
    assert len(real.model_requests) == 1
    assert notes(sim) == notes(real)
    assert _runtime_errors(sim) == _runtime_errors(real)
    assert_equivalent(real, sim)
