"""Differential: a Python extension's ``context`` handler, real Pi 1.6 against the simulator.

Before every model request of a run Pi passes the messages through ``transformContext``
(``dist/core/sdk.js:276-282``, pi-agent-core agent-loop.js:265-273) and so
``ExtensionRunner.emitContext`` (runner.js:1014-1078): each ``context`` handler sees the
conversation without its system messages (a JSON copy through the bridge); a result's
``messages`` replace it, with Pi's system messages folded into one leading message
(``restoreSystemMessages``, runner.js:93-106); a handler that raises is an ``extension_error``
and changes nothing. What the handlers leave is what the model gets; the session keeps the
whole conversation.

The extension below, defined here, records per call the roles and texts it sees; on the
second prompt's request it returns only the last user message; a second handler raises. The
test asserts real Pi's record and the model's requests explicitly, then that the simulator's
are the same (before the simulator dispatched the event, its second request carried the whole
conversation and its record was empty).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def extension(pi):
    seen = []

    def context(event, ctx):
        seen.append([event.type, type(event).__name__, [[m.get("role"), text_of(m)] for m in event.messages]])
        if len(seen) == 2:
            return {"messages": [event.messages[-1]]}
        event.messages.clear()  # an in-place change through the bridge changes nothing
        return None

    def fail(event, ctx):
        raise RuntimeError("context handler failed")

    def settled(event, ctx):
        ctx.ui.notify("context: " + json.dumps(seen), "info")

    pi.on("context", context)
    pi.on("context", fail)
    pi.on("agent_settled", settled)
"""


def test_a_context_handler_replaces_the_messages_the_model_gets(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("context_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], "context_probe:extension")

    row = ["context", "ContextEvent"]
    expected = [
        [*row, [["user", "one"]]],
        [*row, [["user", "one"], ["assistant", "first reply"], ["user", "two"]]],
    ]
    # Real Pi: no system message reaches the handler; the second request carries only what the
    # handler returned (the system prompt stays, folded into the request's leading message).
    assert notes(real)["context"] == expected, json.dumps(notes(real).get("context"), indent=1)
    first, second = real.requests("agent")
    assert [m["role"] for m in first.request.messages] == ["user"]
    assert [m["role"] for m in second.request.messages] == ["user"]
    assert second.last_user_text() == "two" and second.request.system_prompt == first.request.system_prompt
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [("context", "context handler failed")] * 2
    # The session keeps the whole conversation.
    roles = [e["message"]["role"] for e in real.entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert notes(sim).get("context") == notes(real)["context"]
    assert [[m["role"] for m in r.request.messages] for r in sim.requests("agent")] == [["user"], ["user"]]
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
