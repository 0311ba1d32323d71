"""A scripted tool call's ``{{match:REGEX}}`` arguments are resolved from the request's texts
(``model_script.resolve_tool_calls``); a call without one is sent as written. Whether a call
holds one is read from its strings (it was read from the arguments' JSON text, issue 16)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.scenario.model_script import (
    ModelRequest,
    ScriptedToolCall,
    _holds_match,
    resolve_tool_calls,
)

_text = st.text(alphabet="ab{}:mthc ", max_size=12) | st.sampled_from(["{{match:x}}", "a {{match:(b)}} c"])
_values = st.recursive(
    _text | st.integers() | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=4), _values, max_size=4))
def test_a_call_holds_a_placeholder_when_one_of_its_strings_does(arguments: dict[str, Any]) -> None:
    strings = json.dumps(list(_strings(arguments)))
    assert _holds_match(arguments) == ("{{match:" in strings)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_a_placeholder_is_replaced_from_the_newest_text_and_other_calls_stay_as_written() -> None:
    request = ModelRequest(
        kind="agent",
        index=0,
        model="fake/m",
        system_prompt=None,
        messages=[{"role": "user", "content": [{"type": "text", "text": "delete dossier-1.md please"}]}],
    )
    calls = (
        ScriptedToolCall(name="bash", arguments={"command": "rm -f {{match:(dossier-\\d+\\.md)}}"}),
        ScriptedToolCall(name="write", arguments={"path": "a.txt", "content": "x" * 1000}),
    )
    resolved = resolve_tool_calls(request, calls)
    assert resolved[0].arguments == {"command": "rm -f dossier-1.md"}
    assert resolved[1] == calls[1]
    assert (
        resolve_tool_calls(request, calls[1:]) is not None
        and resolve_tool_calls(request, calls[1:]) == calls[1:]
    )


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_a_placeholder_reads_the_newest_message_that_holds_it_as_the_conversation_grows() -> None:
    """Each message's search is remembered by the message's identity (the conversation's
    messages are re-sent, the same objects, by every request): a request that adds a newer
    message holding the pattern reads that one; an equal pattern over other message objects,
    or a group that does not take part, reads what a fresh search reads (issue 16)."""
    call = ScriptedToolCall(name="bash", arguments={"command": "cat {{match:(id-\\d+)}} {{match:z|(q)}}"})
    first, second, third = _user("old id-1 z"), _user("nothing here"), _user("new id-2")

    def resolved(*messages: dict[str, Any]) -> Any:
        request = ModelRequest(
            kind="agent", index=0, model="fake/m", system_prompt=None, messages=list(messages)
        )
        return resolve_tool_calls(request, (call,))[0].arguments["command"]

    assert resolved(first) == "cat id-1 "
    assert resolved(first, second) == "cat id-1 "
    assert resolved(first, second, third) == "cat id-2 "
    assert resolved(first, second) == "cat id-1 "
    assert resolved(_user("other id-7"), second) == "cat id-7 {{match:z|(q)}}"
    assert resolved(_user("q only")) == "cat {{match:(id-\\d+)}} q"
