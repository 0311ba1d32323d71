"""An extension's ``complete()`` context's ``tools`` are declared by the request, as pi-ai's
``normalizeContext`` folds them into the leading system message (``createInitialSystemMessage``,
pi-ai ``dist/utils/transcript.js:6-26``) and ``convertTools`` sends them
(``openai-completions.js:1124-1155``); the differential test against real Pi 1.6.0 is
``tests/realpi/test_differential_complete_tools.py``."""

from __future__ import annotations

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.chat_wire import classify_body
from pi_continuity_harness.simulator.provider import request_body

_MODEL = Model(provider="fake", id="fake-model", context_window=20000, max_tokens=1000)
_USER = {"role": "user", "content": [{"type": "text", "text": "which?"}], "timestamp": 1}
_PARAMETERS = {"type": "object", "properties": {}}


def test_a_complete_contexts_tools_are_declared_and_make_it_an_agent_request() -> None:
    tools = [{"name": "lookup", "description": "Look", "parameters": _PARAMETERS}]
    body = request_body(_MODEL, [_USER], system_prompt="brief", tools=tools)
    assert body["tools"] == [
        {"type": "function", "function": {"name": "lookup", "description": "Look", "parameters": _PARAMETERS}}
    ]
    assert classify_body(body) == "agent"
    without = request_body(_MODEL, [_USER], system_prompt="brief")
    assert "tools" not in without and classify_body(without) == "extension"
    assert without["messages"] == body["messages"]


def test_a_tools_missing_key_is_left_out_and_an_explicit_none_is_null() -> None:
    tools = [{"name": "a", "description": None, "parameters": _PARAMETERS}, {"name": "b"}]
    body = request_body(_MODEL, [_USER], tools=tools)
    assert [t["function"] for t in body["tools"]] == [
        {"name": "a", "description": None, "parameters": _PARAMETERS},
        {"name": "b"},
    ]
