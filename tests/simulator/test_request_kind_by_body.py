"""The simulated host's model answers a request from the script the fake server would pick for
it (``chat_wire.classify_body``, the rule of ``classify_request`` on the body sent), not from
its caller's kind: an agent request without tools is an extension's, as on real Pi
(targets/realpi/fake_server.py, ``FakeModelServer.handle``)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_continuity_harness.scenario.chat_wire import classify_body, parse_chat_request
from pi_continuity_harness.scenario.model_script import SUMMARIZATION_SYSTEM_PROMPT_PREFIX

_TOOL = {"type": "function", "function": {"name": "read", "parameters": {}}}
_USER = {"role": "user", "content": "hi"}

BODIES: list[tuple[dict[str, Any], str]] = [
    ({"messages": [{"role": "system", "content": "sys"}, _USER], "tools": [_TOOL]}, "agent"),
    ({"messages": [{"role": "system", "content": "sys"}, _USER], "tools": []}, "extension"),
    ({"messages": [{"role": "system", "content": "sys"}, _USER]}, "extension"),
    ({"messages": [_USER], "tools": [_TOOL]}, "agent"),
    (
        {"messages": [{"role": "developer", "content": SUMMARIZATION_SYSTEM_PROMPT_PREFIX + " x"}, _USER]},
        "summary",
    ),
    (
        {
            "messages": [{"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT_PREFIX}, _USER],
            "tools": [_TOOL],
        },
        "summary",
    ),
    # a summarizer prompt that is not the leading message is not the system prompt
    ({"messages": [_USER, {"role": "system", "content": SUMMARIZATION_SYSTEM_PROMPT_PREFIX}]}, "extension"),
    ({"messages": []}, "extension"),
]


@pytest.mark.parametrize(("body", "kind"), BODIES)
def test_a_body_is_classified_as_the_fake_server_classifies_it(body: dict[str, Any], kind: str) -> None:
    assert classify_body(body) == kind
    assert parse_chat_request(body).kind == kind
