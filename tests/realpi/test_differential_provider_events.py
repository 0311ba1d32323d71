"""Differential: a Python extension's provider-event handlers, real Pi 1.6 against the simulator.

Pi hands the agent loop's model calls (not the summarizer's: compaction.js:477-488) three
provider callbacks (sdk.js:273-275). This file covers two:

* ``before_provider_request`` (sdk.js:224-229, runner.js:1079-1107): each handler gets the
  request body pi-ai built (openai-completions.js:188-192) and may return another, which the
  next handler sees and pi-ai sends; a handler that throws is reported and changes nothing.
* ``after_provider_response`` (sdk.js:230-238, openai-completions.js:203): the status and the
  headers of the fake server's answer (``scenario/chat_response.py``), before ``message_start``.

The extension below, defined here, records what its handlers saw and notifies it at the end of
each assistant message; the test asserts real Pi's record explicitly (so a shared mistake
cannot pass), then that the simulator's is the same, and that the replaced body is what both
targets' model received.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import LONG, Targets, assert_equivalent, play, scenario

from pi_continuity_harness.scenario.chat_response import SERVER_SOFTWARE
from pi_continuity_harness.scenario.transcript import content_text

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json
import re

DATE = re.compile(r"^[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$")


def last_user(payload):
    for message in reversed(payload.get("messages") or []):
        if message.get("role") == "user":
            return message.get("content")
    return None


def extension(pi):
    seen = []

    def rewrite(event, ctx):
        payload = event.payload
        seen.append(["rewrite", event.type, type(event).__name__, sorted(payload), payload.get("stream"),
                     payload.get("max_tokens"), last_user(payload)])
        replaced = dict(payload)
        replaced["messages"] = [*payload["messages"][:-1], {"role": "user", "content": "rewritten"}]
        replaced["max_tokens"] = 77
        return replaced

    def fails(event, ctx):
        seen.append(["fails", event.payload.get("max_tokens"), last_user(event.payload)])
        raise RuntimeError("boom")

    def in_place(event, ctx):
        seen.append(["in_place", event.payload.get("max_tokens")])
        event.payload["max_tokens"] = 99

    def response(event, ctx):
        headers = event.headers
        seen.append(["response", event.type, type(event).__name__, event.status, list(headers),
                     headers.get("content-type"), headers.get("server"),
                     bool(DATE.match(headers.get("date") or ""))])

    def start(event, ctx):
        seen.append(["message_start", event.message.get("role")])

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("before_provider_request", rewrite)
    pi.on("before_provider_request", fails)
    pi.on("before_provider_request", in_place)
    pi.on("after_provider_response", response)
    pi.on("message_start", start)
    pi.on("message_end", end)
"""


def test_provider_request_and_response_reach_a_python_extension_for_the_agent_s_requests(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("provider_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    ops: list[Any] = [{"prompt": "hello " + LONG}, {"prompt": "again " + LONG}, {"compact": None}]
    real, sim = play(targets, sc, ops, "provider_probe:extension")

    seen = notes(real)["seen"]
    rows = [row for row in seen if row[0] != "message_start" or row[1] in ("user", "assistant")]
    request = rows[1]
    assert request[:3] == ["rewrite", "before_provider_request", "BeforeProviderRequestEvent"]
    assert {"messages", "model", "stream", "tools"} <= set(request[3]), request[3]
    assert request[4] is True
    assert request[6] == [{"type": "text", "text": "hello " + LONG}]
    response = [
        "response",
        "after_provider_response",
        "AfterProviderResponseEvent",
        200,
        ["cache-control", "connection", "content-type", "date", "server"],
        "text/event-stream",
        SERVER_SOFTWARE,
        True,
    ]
    # Real Pi: the handlers in order, each after the previous one's replacement; the failing
    # one's error changes nothing, the in-place change is the handler's copy; the response's
    # headers before the assistant's message_start. Only the agent's two requests: the
    # summarizer's has no provider events.
    turn = [
        ["message_start", "user"],
        request,
        ["fails", 77, "rewritten"],
        ["in_place", 77],
        response,
        ["message_start", "assistant"],
    ]
    assert rows[:6] == turn, json.dumps(seen, indent=1)
    assert [row[0] for row in rows[6:]] == [row[0] for row in turn], json.dumps(seen, indent=1)
    assert len(real.requests("summary")) == 1
    for observed in (real, sim):
        agent = observed.requests("agent")
        assert [r.request.max_tokens for r in agent] == [77, 77], observed.target
        assert [content_text(r.request.messages[-1]["content"]) for r in agent] == ["rewritten", "rewritten"]
    assert notes(sim).get("seen") == seen
    assert_equivalent(real, sim)


_NOT_AN_OBJECT = """\
def extension(pi):
    pi.on("before_provider_request", lambda event, ctx: "not a body")
"""


def test_a_payload_that_is_not_an_object_fails_the_turn_with_the_servers_400(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """pi-ai sends the JSON of whatever the handler returned; the fake server answers a body
    that is not an object with a 400 before it records a request."""
    python_extension("payload_string", _NOT_AN_OBJECT)
    sc = scenario({"agent": [{"text": "never"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "payload_string:extension")
    assert real.requests("agent") == []
    failed = [
        e["message"]
        for e in real.entries
        if e.get("type") == "message" and e["message"].get("role") == "assistant"
    ]
    assert [m.get("stopReason") for m in failed] == ["error"]
    assert failed[0]["errorMessage"].startswith("400: "), failed[0]["errorMessage"]
    assert sim.requests("agent") == []
    assert_equivalent(real, sim)


_STREAM = """\
import json


def extension(pi):
    seen = []

    def chunk(event, ctx):
        seen.append(["chunk", event.type, type(event).__name__, event.provider, event.api, event.model,
                     json.loads(json.dumps(event.data))])
        event.data["choices"] = []  # the handler's copy

    def response(event, ctx):
        seen.append(["response", event.status])

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            seen.append(["end", event.message.get("content")])
            ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("provider_stream_event", chunk)
    pi.on("after_provider_response", response)
    pi.on("message_end", end)
"""


def test_every_chunk_of_the_agent_s_stream_reaches_a_python_extension(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """sdk.js:240-249: ``{data, provider, api, model}`` per chunk the SDK parsed
    (openai-completions.js:339-340), awaited before pi-ai reads the chunk; not for the
    summarizer's request. The chunks are compared whole (ids and ``created`` are the fake
    server's, deterministic)."""
    python_extension("stream_probe", _STREAM)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    ops: list[Any] = [{"prompt": "hello " + LONG}, {"prompt": "again " + LONG}, {"compact": None}]
    real, sim = play(targets, sc, ops, "stream_probe:extension")

    seen = notes(real)["seen"]
    assert len(real.requests("summary")) == 1
    chunks = [row for row in seen if row[0] == "chunk"]
    assert {tuple(row[1:6]) for row in chunks} == {
        ("provider_stream_event", "ProviderStreamEvent", "fake", "openai-completions", "fake-model")
    }
    datas = [row[6] for row in chunks]
    assert {d["id"] for d in datas} == {"chatcmpl-fake-0", "chatcmpl-fake-1"}
    first = "".join(
        d["choices"][0]["delta"].get("content") or ""
        for d in datas
        if d["choices"] and d["id"].endswith("-0")
    )
    assert first == "first reply"
    # Each turn: the response, then its chunks, then the message's end (unchanged by the
    # handler's change of its copy).
    per_turn = len(chunks) // 2
    shape = ["response", *["chunk"] * per_turn, "end"]
    assert [row[0] for row in seen] == shape * 2, json.dumps(seen, indent=1)
    assert seen[per_turn + 1] == ["end", [{"type": "text", "text": "first reply"}]]
    assert notes(sim).get("seen") == seen
    assert_equivalent(real, sim)


_HEADERS = """\
import json


def extension(pi):
    seen = []

    def headers(event, ctx):
        seen.append(["headers", event.type, type(event).__name__, dict(event.headers)])
        event.headers["x-probe"] = "in place"  # the handler's copy
        return {"x-probe": "returned"}  # ignored (runner.js:1113-1118)

    pi.on("before_provider_headers", headers)
    pi.on("before_provider_request", lambda event, ctx: seen.append(["request"]))
    pi.on("after_provider_response", lambda event, ctx: seen.append(["response"]))

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            seen.append(["end"])

    def compacted(event, ctx):
        seen.append(["compacted"])
        ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("message_end", end)
    pi.on("session_compact", compacted)
"""


def test_the_headers_of_the_agent_s_and_the_summarizer_s_requests_reach_a_python_extension(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """sdk.js:206-208: ``transformHeaders`` of every request through the agent's stream
    function (the compaction summary's too, agent-session.js:2314), in ``prepareRequest``
    (model-runtime.js:476-478), before ``onPayload``; a Python handler observes only."""
    python_extension("headers_probe", _HEADERS)
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    ops: list[Any] = [{"prompt": "hello " + LONG}, {"prompt": "again " + LONG}, {"compact": None}]
    real, sim = play(targets, sc, ops, "headers_probe:extension")

    seen = notes(real)["seen"]
    headers = ["headers", "before_provider_headers", "BeforeProviderHeadersEvent", {}]
    turn = [headers, ["request"], ["response"], ["end"]]
    assert seen == [*turn, *turn, headers, ["compacted"]], json.dumps(seen, indent=1)
    assert len(real.requests("summary")) == 1
    assert notes(sim).get("seen") == seen
    assert_equivalent(real, sim)


_ABORTED = """\
import json


def extension(pi):
    seen = []

    def turn_end(event, ctx):
        seen.append(["turn_end", event.message.get("stopReason")])
        if event.message.get("stopReason") == "toolUse":
            ctx.compact()

    pi.on("turn_end", turn_end)
    pi.on("before_provider_headers", lambda event, ctx: seen.append(["headers"]))
    pi.on("before_provider_request", lambda event, ctx: seen.append(["request"]))
    pi.on("after_provider_response", lambda event, ctx: seen.append(["response"]))

    def compacted(event, ctx):
        seen.append(["compacted"])
        ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("session_compact", compacted)
"""


def test_a_turn_whose_signal_is_already_aborted_has_no_provider_events(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A ``ctx.compact()`` at the ``turn_end`` of a tool turn aborts the run; Pi still opens the
    next turn, whose request is never sent (s02c), and whose signal is aborted before
    ``transformHeaders`` and ``onPayload``: no provider event for it (the compaction summary
    after it has its headers event)."""
    python_extension("aborted_probe", _ABORTED)
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    sc = scenario({"agent": [{"text": LONG, "tool_calls": [tool]}, {"text": "never requested"}]})
    real, sim = play(targets, sc, [{"prompt": "hello " + LONG}], "aborted_probe:extension")
    seen = notes(real).get("seen")
    assert seen == [
        ["headers"],
        ["request"],
        ["response"],
        ["turn_end", "toolUse"],
        ["turn_end", "aborted"],
        ["headers"],
        ["compacted"],
    ]
    assert len(real.requests("agent")) == 1
    assert notes(sim).get("seen") == seen
    assert_equivalent(real, sim)


_ABORTS = """\
import json


def extension(pi):
    seen = []

    def request(event, ctx):
        seen.append(["request"])
        ctx.abort()

    pi.on("before_provider_request", request)
    pi.on("after_provider_response", lambda event, ctx: seen.append(["response"]))

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            seen.append(["end", event.message.get("stopReason"), event.message.get("errorMessage")])
            ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("message_end", end)
"""


def test_a_before_provider_request_handler_that_aborts_stops_the_request_before_it_is_sent(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``ctx.abort()`` in the handler: pi-ai's SDK sees the aborted signal before it sends the
    body (openai-completions.js:192-198), so the fake server gets no request and the turn ends
    aborted."""
    python_extension("aborting_probe", _ABORTS)
    sc = scenario({"agent": [{"text": "never"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "aborting_probe:extension")
    seen = notes(real)["seen"]
    assert seen == [["request"], ["end", "aborted", "Request aborted"]], seen
    assert real.requests("agent") == []
    assert notes(sim).get("seen") == seen
    assert sim.requests("agent") == []
    assert_equivalent(real, sim)


_NO_STREAM = """\
import json


def extension(pi):
    datas = []

    def request(event, ctx):
        payload = dict(event.payload)
        payload["stream"] = False
        payload.pop("stream_options", None)
        return payload

    pi.on("before_provider_request", request)
    pi.on("provider_stream_event", lambda event, ctx: datas.append(event.data))
    pi.on("after_provider_response", lambda event, ctx: datas.append({"response": event.status}))

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            message = event.message
            ctx.ui.notify("end: " + json.dumps([message.get("stopReason"), message.get("errorMessage"),
                                                message.get("content"), sorted(message)]), "info")
            ctx.ui.notify("datas: " + json.dumps([datas[0], "".join(datas[1:])]), "info")

    pi.on("message_end", end)
"""


def test_a_replaced_body_without_stream_is_read_whole_character_by_character(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A ``before_provider_request`` handler turns ``stream`` off: the SDK reads the fake
    server's SSE answer whole as text, pi-ai's ``for await`` walks the string, so every
    character is a ``provider_stream_event`` and none a chunk: the turn fails with "Stream
    ended without finish_reason" (openai-completions.js:339-342, 474-476)."""
    python_extension("no_stream_probe", _NO_STREAM)
    # Pi would retry the failed turn (after a real-time delay); once is enough here.
    project = {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
    sc = scenario(
        {"agent": [{"text": "hi there"}]},
        settings={"project": {**project, "retry": {"enabled": False}}},
    )
    real, sim = play(targets, sc, [{"prompt": "hello"}], "no_stream_probe:extension")
    end = notes(real)["end"]
    assert end[:3] == ["error", "Stream ended without finish_reason", []]
    response, text = notes(real)["datas"]
    assert response == {"response": 200}
    assert text.startswith('data: {"id": "chatcmpl-fake-0"') and text.endswith("data: [DONE]\n\n")
    assert len(real.requests("agent")) == 1
    assert notes(sim).get("end") == end
    assert notes(sim).get("datas") == notes(real)["datas"]
    assert_equivalent(real, sim)
