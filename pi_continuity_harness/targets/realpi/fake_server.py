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

The chunks and the ids (``chatcmpl-fake-<seq>``, ``call_<seq>_<i>``) come from
:func:`~pi_continuity_harness.scenario.chat_wire.chat_stream`, which the simulated model
replays too.

Held calls: when the outcome is held (``during`` operations, ``abort_while_held``, or a
:class:`~pi_continuity_harness.scenario.model_script.StreamPlan` that holds), the server calls
``on_hold(request, outcome)`` in the handler thread (the harness runs the operations against
Pi meanwhile): before the response headers, or after the plan's partial stream. If Pi closed
the connection (an abort), the request is recorded as aborted and nothing more is sent. A plan
can also drop the connection or send an SSE error after its partial stream. ``latency_ms`` is
ignored (real time is not virtual).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from pi_continuity_harness.scenario.chat_response import (
    BAD_JSON_STATUS,
    SERVER_SOFTWARE,
    SSE_DONE,
    STREAM_HEADERS,
    STREAM_STATUS,
    bad_json_error,
    sse_event,
)
from pi_continuity_harness.scenario.chat_wire import (
    ChatStream,
    chat_stream,
    classify_request,
    parse_chat_request,
)
from pi_continuity_harness.scenario.identity_memo import forget_runs
from pi_continuity_harness.scenario.model_script import (
    PLAIN_REPLIES,
    ExtensionReplies,
    HttpError,
    ModelOutcome,
    ModelRequest,
    ModelScript,
    Reply,
    RequestKind,
    ScriptedToolCall,
    SynthesisReply,
    respond,
)
from pi_continuity_harness.scenario.operations import operation_name

__all__ = [
    "FakeModelServer",
    "RecordedRequest",
    "classify_request",
    "parse_chat_request",
    "sse_chunks",
]

#: Operations after which Pi is expected to drop the held HTTP request (a session replacement
#: settles the running turn first: ``teardownCurrent``, agent-session-runtime.js:121-132).
_ABORTING_OPS = frozenset(
    {"abort", "compact", "crash", "new_session", "fork", "clone", "switch_session", "reload", "restart"}
)


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
    #: The held reply's operations have returned (:meth:`FakeModelServer.wait_for_holds`).
    hold_ran: bool = False
    #: How the answer ended: ``complete``, ``http <status>``, ``aborted`` (Pi went away while
    #: the call was held), ``dropped`` or ``sse error`` (a stream plan's failure); "" while open.
    ended: str = ""
    started_at: float = field(default_factory=time.monotonic)
    finished_at: float | None = None


# --------------------------------------------------------------------------- encoding


def sse_chunks(
    outcome: ModelOutcome, *, model: str, completion_id: str | None = None, seq: int = 0
) -> Iterator[dict[str, Any]]:
    """The chat-completion chunks (JSON objects) that stream a whole non-error outcome
    (:func:`~pi_continuity_harness.scenario.chat_wire.chat_stream`, uncut)."""
    del completion_id  # the id is the stream's own (chatcmpl-fake-<seq>)
    yield from chat_stream(outcome, model=model, seq=seq).chunks


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
        self.start_sse()
        self.write_chunks(chunks)
        self.end_sse()

    def version_string(self) -> str:
        """``Server``: a fixed name (``chat_response.SERVER_SOFTWARE``), which the simulator
        reports too, not the interpreter's version."""
        return SERVER_SOFTWARE

    def start_sse(self) -> None:
        # The status and headers the simulator reports to ``after_provider_response``
        # (``scenario/chat_response.py``); ``send_response`` adds ``Server`` and ``Date``.
        self.send_response(STREAM_STATUS)
        for name, value in STREAM_HEADERS:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()

    def write_chunks(self, chunks: Iterable[dict[str, Any]]) -> None:
        for item in chunks:
            self.wfile.write(sse_event(item).encode())
            self.wfile.flush()

    def end_sse(self) -> None:
        self.wfile.write(SSE_DONE.encode())
        self.wfile.flush()
        self.close_connection = True

    def drop(self) -> None:
        """Close the connection in the middle of the stream (no finish reason, no ``[DONE]``)."""
        self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
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
        refuse: Callable[[ScriptedToolCall], str | None] | None = None,
        root: str | None = None,
    ) -> None:
        forget_runs()  # the memos of the last run's requests (scenario/identity_memo.py)
        self.script = script
        self.replies = replies
        self.on_hold = on_hold
        #: Why a tool call must not reach Pi (``scenario/tool_confinement.py``; None: it may).
        self.refuse = refuse
        #: The run's directory as Pi shows it (``{{match:(?#root)...}}``, ``model_script.ROOT_MARK``).
        self.root = root
        self.abort_grace_s = abort_grace_s
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._indices: dict[RequestKind, int] = {"agent": 0, "summary": 0, "extension": 0}
        self._cursors: dict[RequestKind, int] = {"agent": 0, "summary": 0, "extension": 0}
        self._errors: list[BaseException] = []
        #: Held replies whose operations are running now (``on_hold`` calls not returned).
        self._holds_running = 0
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

    def wait_for_holds(self, timeout: float = 10.0) -> bool:
        """Wait until no held reply's operations are running and every request whose held
        operations have returned has ended (answered to the end, or aborted when Pi went away).
        True when there was something to wait for. A request held with no operation of its own
        (``then: hold`` until Pi aborts it) is not waited for."""
        deadline = time.monotonic() + timeout
        waited = False
        with self._lock:
            while self._holds_running or any(r.hold_ran and r.finished_at is None for r in self._requests):
                waited = True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    open_requests = sum(1 for r in self._requests if r.hold_ran and r.finished_at is None)
                    raise TimeoutError(
                        f"{self._holds_running} held replies still running their operations, "
                        f"{open_requests} whose operations ran still open"
                    )
                self._lock.wait(remaining)
        return waited

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

    def _finish(
        self, record: RecordedRequest, *, status: int = 0, aborted: bool = False, ended: str = ""
    ) -> None:
        with self._lock:
            record.status = status
            record.aborted = aborted
            record.ended = ended or (
                "aborted" if aborted else "complete" if status == 200 else f"http {status}"
            )
            record.finished_at = time.monotonic()
            self._lock.notify_all()

    def _hold(
        self, handler: _Handler, record: RecordedRequest, request: ModelRequest, outcome: ModelOutcome
    ) -> bool:
        """Run the held reply's operations (``on_hold``); True when Pi went away meanwhile (the
        request is then finished as aborted)."""
        record.held = True
        if self.on_hold is not None:
            with self._lock:
                self._holds_running += 1
            try:
                self.on_hold(request, outcome)
            except BaseException as exc:  # recorded; the request is still answered
                with self._lock:
                    self._errors.append(exc)
            finally:
                with self._lock:
                    self._holds_running -= 1
                    record.hold_ran = True
                    self._lock.notify_all()
        aborting = any(operation_name(op) in _ABORTING_OPS for op in outcome.hold_operations())
        if _client_gone(handler.connection, self.abort_grace_s if aborting else 0.05):
            handler.close_connection = True
            self._finish(record, aborted=True)
            return True
        return False

    def _answer_in_two_parts(
        self,
        handler: _Handler,
        record: RecordedRequest,
        request: ModelRequest,
        outcome: ModelOutcome,
        stream: ChatStream,
    ) -> None:
        """A reply with a stream plan: the chunks up to the cut, then a hold (and the rest,
        unless Pi went away), a dropped connection, or an SSE error object."""
        plan = outcome.stream
        assert plan is not None and stream.cut is not None
        handler.start_sse()
        handler.write_chunks(stream.chunks[: stream.cut])
        if plan.then == "drop":
            handler.drop()
            self._finish(record, status=200, ended="dropped")
            return
        if plan.then == "error":
            handler.write_chunks(({"error": {"message": plan.error, "type": "server_error"}},))
            handler.close_connection = True
            self._finish(record, status=200, ended="sse error")
            return
        if self._hold(handler, record, request, outcome):
            return
        handler.write_chunks(stream.chunks[stream.cut :])
        handler.end_sse()
        self._finish(record, status=200)

    def _confined(self, outcome: ModelOutcome) -> ModelOutcome:
        """The outcome, or an HTTP 403 in its place when a tool call in it must not reach Pi
        (:attr:`refuse`): real Pi runs the tools for real, and a path the model took from the
        run (``{{match:...}}``) is known only now. Pi ends the turn with ``stopReason: "error"``
        and the refusal's text; the refusal is also kept in :attr:`errors`."""
        if self.refuse is None:
            return outcome
        for call in outcome.tool_calls:
            problem = self.refuse(call)
            if problem is not None:
                message = f"refused by the harness (confinement): {problem}"
                with self._lock:
                    self._errors.append(PermissionError(message))
                return replace(
                    outcome,
                    text="",
                    thinking=None,
                    tool_calls=(),
                    stop_reason="error",
                    error=HttpError(status=403, message=message, type="permission_error"),
                    during=(),
                    abort_while_held=False,
                    stream=None,
                )
        return outcome

    def handle(self, handler: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not an object")
        except ValueError as exc:
            handler.send_json(BAD_JSON_STATUS, {"error": bad_json_error(str(exc))})
            return
        probe = parse_chat_request(body)
        kind = probe.kind
        with self._lock:
            index = self._indices[kind]
            self._indices[kind] = index + 1
            seq = len(self._requests)
            request = parse_chat_request(body, index=index, kind=kind)
            reply = self._next_reply(kind)
            outcome = self._confined(respond(self.script, request, reply, self.replies, root=self.root))
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
        stream = None if outcome.error is not None else chat_stream(outcome, model=request.model, seq=seq)
        try:
            if stream is not None and stream.cut is not None:
                self._answer_in_two_parts(handler, record, request, outcome, stream)
                return
            if outcome.held and self._hold(handler, record, request, outcome):
                return
            if outcome.error is not None:
                handler.send_json(outcome.error.status, outcome.error.body())
                self._finish(record, status=outcome.error.status)
                return
            assert stream is not None
            handler.send_sse(iter(stream.chunks))
            self._finish(record, status=200)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            handler.close_connection = True
            self._finish(record, status=0, aborted=True)
