"""Differential: the tools of a Python extension's ``ctx.model_registry.complete()`` context,
real Pi 1.6 against the simulator.

The context crosses the bridge as JSON and reaches pi-ai whole (``bridge.ts`` ``complete``
hands ``args[1]`` to ``modelRegistry.complete``). pi-ai folds ``Context.tools`` into the
leading system message's ``toolsAdded`` (``createInitialSystemMessage``,
pi-ai ``dist/utils/transcript.js:6-26``), so the request declares them
(``openai-completions.js:590-592``, ``convertTools`` :1124-1155): the fake server then takes it
for an agent request and answers it from the scenario's agent script
(``targets/realpi/fake_server.py``, ``chat_wire.classify_body``), where a context without tools
is answered from the extension script. A tool's missing ``description`` is no key in the body
(``JSON.stringify`` drops ``undefined``), an explicit ``None`` is ``null``.

The extension below, defined here, registers ``/ask``: two ``complete()`` calls, one with tools
(the second without a description, the first with a ``None`` one) and one without, each
answer's text notified. Before the simulator passed a context's tools on, its first call had no
tools and was answered from the extension script.
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

TOOLS = [
    {
        "name": "lookup",
        "description": None,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    },
    {"name": "plain", "parameters": {"type": "object", "properties": {}}},
]


def extension(pi):
    async def ask(args, ctx):
        model = ctx.model
        answers = []
        for tools in (TOOLS, None):
            context = {
                "systemPrompt": "You answer briefly.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "which?"}], "timestamp": 1}],
            }
            if tools is not None:
                context["tools"] = tools
            reply = await ctx.model_registry.complete(model, context, max_tokens=200)
            texts = [block.get("text") for block in reply.get("content") or [] if block.get("type") == "text"]
            answers.append([reply.get("stopReason"), texts])
        ctx.ui.notify("answers: " + json.dumps(answers), "info")

    pi.register_command("ask", ask)
"""


def test_a_complete_contexts_tools_are_declared_and_answered_as_an_agent_request(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("complete_tools_probe", _EXTENSION)
    sc = scenario(
        {
            "agent": [{"text": "FROM AGENT SCRIPT"}],
            "extension": [{"kind": "raw", "text": "FROM EXTENSION SCRIPT"}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "/ask"}], "complete_tools_probe:extension")

    # Real Pi: the call with tools is an agent request (declared tools), the other an extension's.
    assert notes(real)["answers"] == [
        ["stop", ["FROM AGENT SCRIPT"]],
        ["stop", ["FROM EXTENSION SCRIPT"]],
    ], json.dumps(notes(real).get("answers"))
    [agent] = [r.request for r in real.requests("agent")]
    assert agent.tools == ["lookup", "plain"]
    assert agent.body is not None
    assert agent.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": None,
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            },
        },
        {
            "type": "function",
            "function": {"name": "plain", "parameters": {"type": "object", "properties": {}}},
        },
    ]
    assert [r.request.tools for r in real.requests("extension")] == [[]]
    assert notes(sim).get("answers") == notes(real)["answers"]
    [sim_agent] = [r.request for r in sim.requests("agent")]
    assert sim_agent.body == agent.body
    assert_equivalent(real, sim)
