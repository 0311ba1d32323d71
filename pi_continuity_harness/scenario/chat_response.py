"""The HTTP status and headers of a streamed answer, which both targets give Pi.

The fake model server (``targets/realpi/fake_server.py``) answers a request it streams with
these; the simulated model reports the same ones to an ``after_provider_response`` handler
(pi-ai ``openai-completions.js:203``: ``onResponse({status, headers: headersToRecord(...)})``,
which ``sdk.js:230-238`` hands the extensions). ``headersToRecord`` (pi-ai
``dist/utils/headers.js``) walks the fetch ``Headers``, whose entries are lower-case and sorted
by name (the Fetch standard's "sort and combine"), so :func:`response_record` is in that order.

``Server`` is a fixed name rather than Python's ``BaseHTTP/0.6 Python/3.11.x`` (the version of
the interpreter would otherwise be part of what an extension sees), and ``Date`` is the HTTP
date of the answer: the wall clock on the fake server, the virtual clock on the simulator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from email.utils import formatdate
from typing import Any

__all__ = [
    "BAD_JSON_STATUS",
    "SERVER_SOFTWARE",
    "SSE_DONE",
    "STREAM_HEADERS",
    "STREAM_STATUS",
    "bad_json_error",
    "http_date",
    "response_record",
    "sse_event",
    "sse_text",
]

#: The status of a streamed answer (an HTTP error answers before any stream: pi-ai's SDK throws
#: then, and ``onResponse`` is not called).
STREAM_STATUS = 200

#: The status of the fake server's answer to a body it cannot take (not JSON, not an object),
#: sent before anything is recorded.
BAD_JSON_STATUS = 400


def bad_json_error(reason: str) -> dict[str, str]:
    """The ``error`` object of that answer (``{"error": ...}``): one definition for the fake
    server and for the simulated host, which reports it as pi-ai does, ``"<status>: <JSON>"``."""
    return {"message": f"bad JSON: {reason}", "type": "invalid_request_error"}


#: The fake server's ``Server`` header (``BaseHTTPRequestHandler.version_string``).
SERVER_SOFTWARE = "pi-continuity-harness-fake-model-server"
#: The headers of a streamed answer besides ``Server`` and ``Date``, in the order they are sent.
STREAM_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("Connection", "close"),
)


def http_date(epoch_ms: int) -> str:
    """An HTTP date (RFC 9110 IMF-fixdate) of a time in milliseconds, as ``BaseHTTPRequestHandler``
    writes ``Date`` (``email.utils.formatdate(..., usegmt=True)``)."""
    return formatdate(epoch_ms // 1000, usegmt=True)


def response_record(epoch_ms: int) -> dict[str, str]:
    """The headers of a streamed answer at ``epoch_ms`` as ``headersToRecord`` gives them."""
    headers = {"server": SERVER_SOFTWARE, "date": http_date(epoch_ms)}
    headers.update((name.lower(), value) for name, value in STREAM_HEADERS)
    return dict(sorted(headers.items()))


#: The event that ends a stream.
SSE_DONE = "data: [DONE]\n\n"


def sse_event(chunk: Any) -> str:
    """One chunk as the fake server writes it: ``data: <JSON>`` and a blank line."""
    return "data: " + json.dumps(chunk) + "\n\n"


def sse_text(chunks: Iterable[Any]) -> str:
    """A whole stream's body: every chunk's event, then :data:`SSE_DONE`."""
    return "".join(sse_event(chunk) for chunk in chunks) + SSE_DONE
