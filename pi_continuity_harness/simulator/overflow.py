"""Overflow and retry classification of pi-ai 1.6 (``utils/overflow.js``, ``utils/retry.js``).

A reply is a context overflow (§9.4) when

* it is an ``error`` whose message matches one of the overflow patterns and none of the
  non-overflow ones (rate limits);
* it is a *successful* ``stop`` whose input exceeds the context window (silent overflow);
* it is a ``length`` stop with no output and an input at 99% of the window or more.

A ``length`` stop below the model's output limit is *recoverable* (compact and retry).
Retryable errors (``isRetryableAssistantError``: 429/5xx, "overloaded", transport
failures) are retried by Pi before any compaction check; overflow errors never are.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["OVERFLOW_PATTERNS", "is_context_overflow", "is_recoverable_length", "is_retryable_error"]

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt (?:is )?too long",
        r"prompt exceeds max length",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"context window exceeded",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
    )
)
_NON_OVERFLOW = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
)
_NON_RETRYABLE = re.compile(
    "|".join(
        (
            "GoUsageLimitError",
            "FreeUsageLimitError",
            "Monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
            "subscription_sharing_usage_limit_exceeded",
            "subscription_sharing_workplace_individual_usage_limit_exceeded",
            '"code"\\s*:\\s*"?1308(?![0-9])',
        )
    ),
    re.IGNORECASE,
)
_RETRYABLE = re.compile(
    "|".join(
        (
            "overloaded",
            "server_busy",
            "servers are currently busy",
            "currently experiencing high demand",
            "model is at capacity",
            "rate.?limit",
            "too many requests",
            "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
            "service.?(?:is.?)?(?:temporarily.?)?unavailable",
            "server.?error",
            "internal.?error",
            "provider.?returned.?(?:an.?)?error",
            "exceeded request buffer limit while retrying upstream",
            "unable to forward upstream",
            "upstream.?request.?failed",
            "upstream_stream_read_error",
            "stream was interrupted",
            "http/?2 stream failed",
            "network.?error",
            "connection.?error",
            "connection.?refused",
            "connection.?lost",
            "connection.?closed",
            "other side closed",
            "fetch failed",
            "request to \\S+ failed, reason:",
            "getaddrinfo",
            "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
            "connection reset by peer",
            "ENOTFOUND",
            "EAI_AGAIN",
            "upstream.?connect",
            "reset before headers",
            "socket hang up",
            "socket connection was closed",
            "timed? out",
            "timeout",
            "terminated",
            "websocket.?closed",
            "websocket.?error",
            "websocket.?connection.?limit.?reached",
            "ended without",
            "stream ended before message_stop",
            "stream ended before a terminal response event",
            "http2 request did not get a response",
            "stream disconnected before completion",
            "cut short after the reply had begun",
            "pending stream has been canceled",
        )
    ),
    re.IGNORECASE,
)


def is_context_overflow(message: dict[str, Any], context_window: int) -> bool:
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    if (
        stop == "error"
        and error
        and not any(p.search(error) for p in _NON_OVERFLOW)
        and any(p.search(error) for p in OVERFLOW_PATTERNS)
    ):
        return True
    usage = message.get("usage") or {}
    input_tokens = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if context_window and stop == "stop" and input_tokens > context_window:
        return True
    return bool(
        context_window
        and stop == "length"
        and (usage.get("output") or 0) == 0
        and input_tokens >= context_window * 0.99
    )


def is_recoverable_length(message: dict[str, Any], desired_max_output: int) -> bool:
    usage = message.get("usage") or {}
    return (
        message.get("stopReason") == "length"
        and desired_max_output > 0
        and (usage.get("output") or 0) < desired_max_output
    )


def is_retryable_error(message: dict[str, Any]) -> bool:
    if message.get("stopReason") != "error":
        return False
    error = message.get("errorMessage")
    if not error or _NON_RETRYABLE.search(error):
        return False
    return bool(_RETRYABLE.search(error))
