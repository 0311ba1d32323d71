"""The extension events of the agent's provider calls (``simulator/provider_events.py``):
``before_provider_request`` (sdk.js:224-229, runner.js:1079-1107) and
``after_provider_response`` (sdk.js:230-238, pi-ai openai-completions.js:203)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.api.events import (
    AfterProviderResponseEvent,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    ProviderStreamEvent,
)
from pi_continuity_harness.scenario.chat_response import SERVER_SOFTWARE

from .helpers import agent_requests, base, entries, long_text, records, run

HTTP_DATE = re.compile(r"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")


def _last_user_text(payload: dict[str, Any]) -> Any:
    return next(m["content"] for m in reversed(payload["messages"]) if m.get("role") == "user")


def test_a_returned_payload_replaces_the_request_body_for_the_next_handler_and_the_provider(
    tmp_path: Path,
) -> None:
    """runner.js:1089-1092: a result other than ``undefined`` becomes ``currentPayload``; a
    handler that throws is reported and changes nothing; an in-place change is the handler's
    copy only (the bridge's JSON); the last payload is what the provider sends."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def rewrite(event: BeforeProviderRequestEvent, ctx: Any) -> Any:
            seen.append(("rewrite", type(event).__name__, _last_user_text(event.payload)))
            payload = dict(event.payload)
            payload["messages"] = [*payload["messages"][:-1], {"role": "user", "content": "rewritten"}]
            payload["max_tokens"] = 7
            return payload

        def fails(event: BeforeProviderRequestEvent, ctx: Any) -> Any:
            seen.append(("fails", _last_user_text(event.payload)))
            raise RuntimeError("boom")

        def in_place(event: BeforeProviderRequestEvent, ctx: Any) -> None:
            seen.append(("in_place", _last_user_text(event.payload), event.payload.get("max_tokens")))
            event.payload["max_tokens"] = 99

        pi.on("before_provider_request", rewrite)
        pi.on("before_provider_request", fails)
        pi.on("before_provider_request", in_place)

    scenario = base(model={"agent": [{"text": "hi"}]}, operations=[{"prompt": "hello"}])
    result = run(tmp_path, scenario, extension)
    assert seen == [
        ("rewrite", "BeforeProviderRequestEvent", [{"type": "text", "text": "hello"}]),
        ("fails", "rewritten"),
        ("in_place", "rewritten", 7),
    ]
    (request,) = agent_requests(result)
    assert request.max_tokens == 7
    assert request.messages[-1]["content"] in ("rewritten", [{"type": "text", "text": "rewritten"}])
    errors = [r for r in records(result, "session") if r["name"] == "extension_error"]
    assert [(r["event"], r["error"]) for r in errors] == [("before_provider_request", "boom")]


def test_provider_events_come_from_the_agent_s_requests_only(tmp_path: Path) -> None:
    """agent.js:312-314 hands ``onPayload``/``onResponse`` to the agent loop; the summarizer's
    request (compaction.js:477-488) has neither. ``after_provider_response`` comes with status
    200 and the fake server's headers, before the assistant's ``message_start``."""
    order: list[str] = []
    responses: list[AfterProviderResponseEvent] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.on("before_provider_request", lambda event, ctx: order.append("request"))

        def response(event: AfterProviderResponseEvent, ctx: Any) -> None:
            responses.append(event)
            order.append("response")

        pi.on("after_provider_response", response)
        pi.on("message_start", lambda event, ctx: order.append("start:" + event.message["role"]))

    operations = [{"prompt": long_text("one")}, {"prompt": long_text("two")}, {"compact": None}]
    result = run(tmp_path, base(operations=operations), extension)
    kinds = [r.kind for r in result.host.service.requests]
    assert kinds == ["agent", "agent", "summary"]
    order = [o for o in order if o in ("request", "response", "start:user", "start:assistant")]
    assert order == ["start:user", "request", "response", "start:assistant"] * 2, order
    assert [e.status for e in responses] == [200, 200]
    headers = responses[0].headers
    assert list(headers) == ["cache-control", "connection", "content-type", "date", "server"]
    assert headers["content-type"] == "text/event-stream"
    assert headers["server"] == SERVER_SOFTWARE
    assert HTTP_DATE.match(headers["date"]), headers["date"]


def test_an_http_error_has_a_provider_request_but_no_provider_response(tmp_path: Path) -> None:
    """pi-ai's SDK throws on an error status before ``onResponse`` (openai-completions.js:198-203)."""
    order: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.on("before_provider_request", lambda event, ctx: order.append("request"))
        pi.on("after_provider_response", lambda event, ctx: order.append("response"))

    scenario = base(
        model={"agent": [{"error": {"status": 400, "message": "no"}}]}, operations=[{"prompt": "hello"}]
    )
    run(tmp_path, scenario, extension)
    assert order == ["request"]


def test_each_chunk_of_the_agent_s_stream_is_a_provider_stream_event_before_pi_ai_reads_it(
    tmp_path: Path,
) -> None:
    """openai-completions.js:339-340 awaits ``onProviderStreamEvent(chunk, model)`` for every
    chunk the SDK parsed (sdk.js:240-249: ``{data, provider, api, model}``), for the agent's
    requests only; an in-place change of ``data`` is the handler's copy."""
    chunks: list[Any] = []
    order: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        def chunk(event: ProviderStreamEvent, ctx: Any) -> None:
            data = copy.deepcopy(event.data)
            chunks.append((type(event).__name__, event.provider, event.api, event.model, data))
            order.append("chunk")
            event.data["choices"] = []

        pi.on("provider_stream_event", chunk)
        pi.on("after_provider_response", lambda event, ctx: order.append("response"))
        pi.on("message_end", lambda event, ctx: order.append("end:" + event.message["role"]))

    operations = [{"prompt": long_text("one")}, {"prompt": long_text("two")}, {"compact": None}]
    scenario = base(model={"agent": [{"text": "first"}, {"text": "second"}]}, operations=operations)
    result = run(tmp_path, scenario, extension)
    assert [r.kind for r in result.host.service.requests] == ["agent", "agent", "summary"]
    assert {c[:4] for c in chunks} == {("ProviderStreamEvent", "fake", "openai-completions", "fake-model")}
    datas = [c[4] for c in chunks]
    assert {d["id"] for d in datas} == {"chatcmpl-fake-0", "chatcmpl-fake-1"}
    text = "".join(
        (d["choices"][0]["delta"].get("content") or "")
        for d in datas
        if d.get("choices") and d["id"].endswith("0")
    )
    assert text == "first"
    turn = ["response", *["chunk"] * (len(chunks) // 2), "end:assistant"]
    assert [o for o in order if o in ("response", "chunk", "end:assistant")] == turn * 2
    # The handler's change of its copy did not reach the stream pi-ai read.
    assert result.host.service.exchanges[0]["reply"]["content"] == [{"type": "text", "text": "first"}]


def test_before_provider_headers_comes_for_the_agent_s_and_the_summarizer_s_requests_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """sdk.js:206-208: ``transformHeaders`` of every request through the agent's stream
    function, compaction summaries included, once auth is resolved (model-runtime.js:476-478),
    before ``onPayload``; handlers change ``headers`` in place and their result is ignored
    (runner.js:1108-1133), and a Python handler's ``headers`` is its own copy."""
    order: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def headers(event: BeforeProviderHeadersEvent, ctx: Any) -> Any:
            order.append(("headers", type(event).__name__, dict(event.headers)))
            event.headers["x-probe"] = "in place"
            return {"x-probe": "returned"}

        pi.on("before_provider_headers", headers)
        pi.on("before_provider_request", lambda event, ctx: order.append("request"))

    operations = [{"prompt": long_text("one")}, {"prompt": long_text("two")}, {"compact": None}]
    result = run(tmp_path, base(operations=operations), extension)
    assert [r.kind for r in result.host.service.requests] == ["agent", "agent", "summary"]
    headers = ("headers", "BeforeProviderHeadersEvent", {})
    assert order == [headers, "request", headers, "request", headers]


def test_a_turn_whose_signal_is_already_aborted_has_no_provider_events_and_the_signal_s_message(
    tmp_path: Path,
) -> None:
    """s02c: ``ctx.compact()`` at a tool turn's ``turn_end`` aborts the run, and Pi still opens
    the next turn; ``prepareRequest``'s auth resolution throws the aborted signal's reason
    (``signal.throwIfAborted()``, model-runtime.js:462) before ``transformHeaders`` and
    ``onPayload``, and ``lazyStream`` makes it the message (api/lazy.js:56-66), as real Pi
    1.6.0 showed."""
    order: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        def turn_end(event: Any, ctx: Any) -> None:
            order.append("turn_end:" + str(event.message.get("stopReason")))
            if event.message.get("stopReason") == "toolUse":
                ctx.compact()

        pi.on("turn_end", turn_end)
        pi.on("before_provider_headers", lambda event, ctx: order.append("headers"))
        pi.on("before_provider_request", lambda event, ctx: order.append("request"))

    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    model = {"agent": [{"text": long_text("tool"), "tool_calls": [tool]}, {"text": "never"}]}
    result = run(tmp_path, base(model=model, operations=[{"prompt": long_text("hello")}]), extension)
    assert order == ["headers", "request", "turn_end:toolUse", "turn_end:aborted", "headers"]
    aborted = [
        e["message"]
        for e in entries(result)
        if e["type"] == "message" and e["message"].get("stopReason") == "aborted"
    ]
    assert [m["errorMessage"] for m in aborted] == ["This operation was aborted"]


def test_a_body_without_stream_is_read_whole_each_character_a_provider_stream_event(tmp_path: Path) -> None:
    """A handler that turns the body's ``stream`` off: the SDK reads the answer whole as text
    and pi-ai's ``for await`` walks the string (openai-completions.js:339-342): each character
    is a ``provider_stream_event``, none a chunk, so the turn ends "Stream ended without
    finish_reason" with no content (observed on real Pi 1.6.0)."""
    datas: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.on("before_provider_request", lambda event, ctx: {**event.payload, "stream": False})
        pi.on("provider_stream_event", lambda event, ctx: datas.append(event.data))

    settings = {"project": {"retry": {"enabled": False}}}
    scenario = base(model={"agent": [{"text": "hi"}]}, operations=[{"prompt": "hello"}], settings=settings)
    result = run(tmp_path, scenario, extension)
    text = "".join(datas)
    assert all(isinstance(d, str) and len(d) == 1 for d in datas)
    assert text.startswith('data: {"id": "chatcmpl-fake-0"') and text.endswith("data: [DONE]\n\n")
    (reply,) = [e["reply"] for e in result.host.service.exchanges]
    assert (reply["stopReason"], reply["errorMessage"], reply["content"]) == (
        "error",
        "Stream ended without finish_reason",
        [],
    )
