"""A fake OpenAI-compatible model server that plays a :class:`ModelScript` to a real Pi.

Pi's ``openai-completions`` provider (pi-ai ``dist/api/openai-completions.js``) sends
``POST {baseUrl}/chat/completions`` with ``stream: true``. This server parses each request
into a :class:`ModelRequest` (pi-ai message shapes), classifies it (``summary`` / ``agent`` /
``extension``), takes the next scripted reply of that kind, turns it into a
:class:`ModelOutcome` with :func:`respond` (the simulator's own function), and answers:

* an HTTP error (``outcome.error``): the status and ``HttpError.body()`` as JSON. Pi reports
  ``errorMessage = "<status>: <JSON of body.error>"`` (:func:`format_http_error`).
* otherwise an SSE stream: a role chunk, ``reasoning_content`` deltas (thinking; pi-ai reads
  ``reasoning_content``/``reasoning``/``reasoning_text``), ``content`` deltas, one
  ``tool_calls`` delta per call, a finish chunk (stop→``stop``, length→``length``,
  toolUse→``tool_calls``), a usage chunk, then ``data: [DONE]``.

Usage: pi-ai computes ``input = prompt_tokens - cached_tokens - cache_write_tokens``,
``cacheRead = cached_tokens``, ``cacheWrite = cache_write_tokens``, ``output =
completion_tokens`` and ``totalTokens = input + output + cacheRead + cacheWrite``; the server
therefore sends ``prompt_tokens = input + cache_read + cache_write`` so Pi's ``totalTokens``
equals ``Usage.total``.

Held calls: when the outcome has ``during`` operations or ``abort_while_held``, the server
calls ``on_hold(request, outcome)`` in the handler thread before it answers (the harness runs
the operations against Pi meanwhile). If Pi closed the connection (an abort), the request is
recorded as aborted and nothing is sent. ``latency_ms`` is ignored (real time is not virtual).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from pi_continuity_harness.scenario.model_script import (
    PLAIN_REPLIES,
    SUMMARIZATION_SYSTEM_PROMPT_PREFIX,
    ExtensionReplies,
    ModelOutcome,
    ModelRequest,
    ModelScript,
    Reply,
    RequestKind,
    SynthesisReply,
    respond,
)
from pi_continuity_harness.scenario.operations import operation_name
from pi_continuity_harness.scenario.transcript import content_text

__all__ = [
    "FakeModelServer",
    "RecordedRequest",
    "classify_request",
    "parse_chat_request",
    "sse_chunks",
]

#: Operations after which Pi is expected to drop the held HTTP request.
_ABORTING_OPS = frozenset({"abort", "compact", "crash", "new_session", "reload", "restart"})
_TEXT_CHUNK = 256
_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


@dataclass
class RecordedRequest:
    """One request the server received, as recorded for observation."""

    seq: int
    path: str
    kind: RequestKind | None
    index: int
    request: ModelRequest | None
    body: dict[str, Any]
    raw: bytes
    outcome: ModelOutcome | None = None
    #: HTTP status sent; 0 while held or when nothing was sent (aborted).
    status: int = 0
    aborted: bool = False
    held: bool = False
    started_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None


# --------------------------------------------------------------------------- parsing


def _user_content(content: Any) -> Any:
    if isinstance(content, str) or content is None:
        return content or ""
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            mime, data = "application/octet-stream", url
            if url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
            blocks.append({"type": "image", "mimeType": mime, "data": data})
    return blocks


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": value}


def _convert_messages(wire: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    system_prompt: str | None = None
    messages: list[dict[str, Any]] = []
    tool_names: dict[str, str] = {}
    for position, msg in enumerate(wire):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role in ("system", "developer"):
            text = content_text(msg.get("content"))
            if position == 0 and system_prompt is None:
                system_prompt = text
            else:
                messages.append({"role": "system", "content": text})
        elif role == "user":
            messages.append({"role": "user", "content": _user_content(msg.get("content"))})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            for key in ("reasoning_content", "reasoning", "reasoning_text"):
                thinking = msg.get(key)
                if isinstance(thinking, str) and thinking:
                    blocks.append({"type": "thinking", "thinking": thinking})
                    break
            text = content_text(msg.get("content"))
            if text:
                blocks.append({"type": "text", "text": text})
            for call in msg.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") or call.get("custom") or {}
                name = str(fn.get("name", ""))
                call_id = str(call.get("id", ""))
                tool_names[call_id] = name
                args = fn.get("arguments") if "arguments" in fn else fn.get("input")
                blocks.append(
                    {"type": "toolCall", "id": call_id, "name": name, "arguments": _arguments(args)}
                )
            messages.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            call_id = str(msg.get("tool_call_id", ""))
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": msg.get("name") or tool_names.get(call_id, ""),
                "content": [{"type": "text", "text": content_text(msg.get("content"))}],
            }
            messages.append(result)
        else:
            messages.append({"role": str(role), "content": msg.get("content")})
    return system_prompt, messages


def _tool_names(body: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            spec = tool.get("function") or tool.get("custom") or {}
            if isinstance(spec, dict) and spec.get("name"):
                names.append(str(spec["name"]))
    return names


def classify_request(system_prompt: str | None, tools: list[str]) -> RequestKind:
    """``summary`` (Pi's summarizer prompt), ``agent`` (Pi's agent loop sends its tools), else
    ``extension`` (see :mod:`.environment`)."""
    if system_prompt is not None and system_prompt.startswith(SUMMARIZATION_SYSTEM_PROMPT_PREFIX):
        return "summary"
    if tools:
        return "agent"
    return "extension"


def parse_chat_request(
    body: dict[str, Any],
    *,
    index: int = 0,
    kind: RequestKind | None = None,
) -> ModelRequest:
    """A chat-completions request body as a :class:`ModelRequest` (pi-ai message shapes)."""
    system_prompt, messages = _convert_messages(list(body.get("messages") or []))
    tools = _tool_names(body)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    reasoning = body.get("reasoning_effort")
    return ModelRequest(
        kind=kind or classify_request(system_prompt, tools),
        index=index,
        model=str(body.get("model", "")),
        system_prompt=system_prompt,
        messages=messages,
        tools=tools,
        max_tokens=int(max_tokens) if isinstance(max_tokens, int | float) else None,
        reasoning=str(reasoning) if isinstance(reasoning, str) else None,
    )


# --------------------------------------------------------------------------- encoding


def sse_chunks(
    outcome: ModelOutcome, *, model: str, completion_id: str, seq: int = 0
) -> Iterator[dict[str, Any]]:
    """The chat-completion chunks (JSON objects) that stream a non-error outcome."""
    created = 1_700_000_000 + seq

    def chunk(delta: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }

    yield chunk({"role": "assistant", "content": ""})
    if outcome.thinking:
        for start in range(0, len(outcome.thinking), _TEXT_CHUNK):
            yield chunk({"reasoning_content": outcome.thinking[start : start + _TEXT_CHUNK]})
    for start in range(0, len(outcome.text), _TEXT_CHUNK):
        yield chunk({"content": outcome.text[start : start + _TEXT_CHUNK]})
    for i, call in enumerate(outcome.tool_calls):
        call_id = call.id or f"call_{seq}_{i}"
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                ]
            }
        )
    yield chunk({}, _FINISH.get(outcome.stop_reason, "stop"))
    usage = outcome.usage
    yield {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": usage.input + usage.cache_read + usage.cache_write,
            "completion_tokens": usage.output,
            "total_tokens": usage.total,
            "prompt_tokens_details": {
                "cached_tokens": usage.cache_read,
                "cache_write_tokens": usage.cache_write,
            },
        },
    }


def _client_gone(sock: socket.socket, wait_s: float) -> bool:
    """True when the peer closed the connection (EOF or reset) within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            readable, _, _ = select.select([sock], [], [], min(remaining, 0.05))
        except (OSError, ValueError):
            return True
        if readable:
            try:
                data = sock.recv(1, socket.MSG_PEEK)
            except (ConnectionResetError, BrokenPipeError, OSError):
                return True
            return not data  # bytes instead of EOF: the client is still there
        if remaining <= 0:
            return False


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, fake: FakeModelServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        self.server.fake.handle(self, raw)

    # helpers used by FakeModelServer.handle
    def send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def send_sse(self, chunks: Iterator[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for item in chunks:
            self.wfile.write(b"data: " + json.dumps(item).encode() + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class FakeModelServer:
    """An OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 playing a script.

        ``replies`` writes the body of an ``extension`` reply (the system's writer, the same the
    simulated model uses). ``on_hold(request, outcome)`` is called, in the handler thread, for outcomes with
        ``during`` operations or ``abort_while_held``; the server answers after it returns (unless
        Pi went away).
    """

    def __init__(
        self,
        script: ModelScript,
        *,
        replies: ExtensionReplies = PLAIN_REPLIES,
        on_hold: Callable[[ModelRequest, ModelOutcome], None] | None = None,
        abort_grace_s: float = 1.0,
    ) -> None:
        self.script = script
        self.replies = replies
        self.on_hold = on_hold
        self.abort_grace_s = abort_grace_s
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._indices: dict[RequestKind, int] = {"agent": 0, "summary": 0, "extension": 0}
        self._cursors: dict[RequestKind, int] = {"agent": 0, "summary": 0, "extension": 0}
        self._errors: list[BaseException] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None

    # lifecycle ---------------------------------------------------------------

    def start(self) -> str:
        """Start serving; returns the base URL ``http://127.0.0.1:PORT/v1``."""
        if self._server is not None:
            assert self._base_url is not None
            return self._base_url
        self._server = _Server(self)
        port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-model-server",
            daemon=True,
        )
        self._thread.start()
        self._base_url = f"http://127.0.0.1:{port}/v1"
        return self._base_url

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._base_url is None:
            raise RuntimeError("the fake model server is not started")
        return self._base_url

    # observation -------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by ``on_hold`` or while answering (the request was still answered)."""
        with self._lock:
            return list(self._errors)

    def of_kind(self, kind: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == kind]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until ``count`` requests have been answered (or aborted)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while sum(1 for r in self._requests if r.finished_at is not None) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"expected {count} finished requests, have {len(self._requests)}")
                self._lock.wait(remaining)
            return list(self._requests)

    def extend(self, kind: RequestKind, replies: list[Reply] | list[SynthesisReply]) -> None:
        """Script more replies of ``kind``, answered after the ones already scripted."""
        wanted = SynthesisReply if kind == "extension" else Reply
        bad = [r for r in replies if not isinstance(r, wanted)]
        if bad:
            raise TypeError(f"{kind} replies must be {wanted.__name__}, got {type(bad[0]).__name__}")
        with self._lock:
            current = getattr(self.script, kind)
            self.script = self.script.model_copy(update={kind: (*current, *replies)})

    # handling ----------------------------------------------------------------

    def _next_reply(self, kind: RequestKind) -> Reply | SynthesisReply | None:
        """The next *unused* scripted reply of ``kind`` (FIFO), as the simulator's model does:
        a request answered by the default does not use up a scripted reply."""
        queue: tuple[Reply | SynthesisReply, ...]
        if kind == "extension":
            queue = self.script.extension
        else:
            queue = self.script.agent if kind == "agent" else self.script.summary
        cursor = self._cursors[kind]
        if cursor < len(queue):
            self._cursors[kind] = cursor + 1
            return queue[cursor]
        return None

    def _finish(self, record: RecordedRequest, *, status: int = 0, aborted: bool = False) -> None:
        with self._lock:
            record.status = status
            record.aborted = aborted
            record.finished_at = time.monotonic()
            self._lock.notify_all()

    def handle(self, handler: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not an object")
        except ValueError as exc:
            handler.send_json(
                400, {"error": {"message": f"bad JSON: {exc}", "type": "invalid_request_error"}}
            )
            return
        probe = parse_chat_request(body)
        kind = probe.kind
        with self._lock:
            index = self._indices[kind]
            self._indices[kind] = index + 1
            seq = len(self._requests)
            request = parse_chat_request(body, index=index, kind=kind)
            reply = self._next_reply(kind)
            outcome = respond(self.script, request, reply, self.replies)
            record = RecordedRequest(
                seq=seq,
                path=handler.path,
                kind=kind,
                index=index,
                request=request,
                body=body,
                raw=raw,
                outcome=outcome,
            )
            self._requests.append(record)
        if outcome.during or outcome.abort_while_held:
            record.held = True
            if self.on_hold is not None:
                try:
                    self.on_hold(request, outcome)
                except BaseException as exc:  # recorded; the request is still answered
                    with self._lock:
                        self._errors.append(exc)
            aborting = outcome.abort_while_held or any(
                operation_name(op) in _ABORTING_OPS for op in outcome.during
            )
            if _client_gone(handler.connection, self.abort_grace_s if aborting else 0.05):
                handler.close_connection = True
                self._finish(record, aborted=True)
                return
        try:
            if outcome.error is not None:
                handler.send_json(outcome.error.status, outcome.error.body())
                self._finish(record, status=outcome.error.status)
                return
            completion_id = f"chatcmpl-fake-{seq}"
            handler.send_sse(sse_chunks(outcome, model=request.model, completion_id=completion_id, seq=seq))
            self._finish(record, status=200)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            handler.close_connection = True
            self._finish(record, status=0, aborted=True)
