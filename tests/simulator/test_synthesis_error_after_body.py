"""A synthesis reply that streams a whole body and then fails (``kind: error_after_body``).

pi-ai reads an SSE ``{"error": ...}`` object as a thrown error: its catch keeps what was
streamed and ends the reply ``stopReason: "error"`` with that message
(``openai-completions.js:480-500`` of pi-ai 1.6). :func:`respond` plays the kind as the stream
plan ``then: error`` of an agent reply, cut after the whole text, so the simulated model
(``simulator/model_service.py``, through its port of pi-ai's stream reader) and the fake server
in front of real Pi (``targets/realpi/fake_server.py``) send the same chunks, as they do for an
agent reply's stream plan. Killing mutant ``error_with_text_accepted`` (P120b) needs such a reply.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.chat_wire import chat_stream, parse_chat_request
from pi_continuity_harness.scenario.continuity_replies import CONTINUITY_REPLIES
from pi_continuity_harness.scenario.model_script import ModelScript, SynthesisReply, respond
from pi_continuity_harness.targets.realpi.fake_server import FakeModelServer

from .helpers import base, run
from .test_session_id_and_synthesis_shapes import _notes, _probe

_BODY = {
    "model": "fake-model",
    "stream": True,
    "max_tokens": 1000,
    "messages": [{"role": "system", "content": "You write a brief."}, {"role": "user", "content": "brief"}],
}


def _synth(tmp_path: Path, reply: dict[str, Any], sub: str) -> dict[str, Any]:
    sc = base(model={"extension": [reply]}, operations=[{"command": "/probe-synth"}])
    result = run(tmp_path, sc, _probe("synth"), sub=sub)
    [note] = _notes(result)
    shape: dict[str, Any] = json.loads(note)
    return shape


def test_the_whole_body_streams_and_the_reply_ends_with_the_error(tmp_path: Path) -> None:
    valid = _synth(tmp_path, {"kind": "valid"}, "valid")
    failed = _synth(tmp_path, {"kind": "error_after_body", "error_message": "upstream reset"}, "failed")
    assert valid["stopReason"] == "stop" and "## Next Actions" in valid["text"]
    assert failed == {
        "blocks": valid["blocks"],
        "errorMessage": "upstream reset",
        "stopReason": "error",
        "text": valid["text"],
        "thinking": valid["thinking"],
    }


def test_respond_cuts_the_stream_after_the_whole_text_before_any_finish_reason() -> None:
    request = parse_chat_request(_BODY, index=0, kind="extension")
    reply = SynthesisReply(kind="error_after_body", error_message="boom")
    outcome = respond(ModelScript(), request, reply, CONTINUITY_REPLIES)
    assert outcome.stream is not None and (outcome.stream.then, outcome.stream.error) == ("error", "boom")
    assert not outcome.held and outcome.text
    stream = chat_stream(outcome, model="fake-model", seq=0)
    assert stream.cut is not None
    sent = stream.chunks[: stream.cut]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in sent)
    assert text == outcome.text
    assert all(c["choices"][0]["finish_reason"] is None for c in sent)


def test_the_fake_server_streams_the_same_text_then_the_sse_error() -> None:
    script = ModelScript(extension=(SynthesisReply(kind="error_after_body", error_message="boom"),))
    expected = respond(
        ModelScript(),
        parse_chat_request(_BODY, index=0, kind="extension"),
        script.extension[0],
        CONTINUITY_REPLIES,
    )
    server = FakeModelServer(script, replies=CONTINUITY_REPLIES)
    url = server.start()
    try:
        post = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(_BODY).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(post, timeout=10) as response:
            lines = response.read().decode().split("\n\n")
    finally:
        server.stop()
    events = [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: {")]
    assert events[-1] == {"error": {"message": "boom", "type": "server_error"}}
    chunks = events[:-1]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == expected.text
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks)
    assert "data: [DONE]" not in lines


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            {"kind": "valid", "error_message": "boom"},
            r"model.extension\[0\]: .*error_message is for kind error_after_body, not kind valid",
        ),
        (
            {"kind": "error_after_body", "during": [{"command": "/continuity status"}]},
            r"model.extension\[0\]: .*kind error_after_body ends the reply with its error: it holds nothing",
        ),
    ],
    ids=["error_message-without-the-kind", "during-with-the-kind"],
)
def test_a_bad_error_after_body_reply_is_refused_naming_the_field(
    reply: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(base(model={"extension": [reply]}))
