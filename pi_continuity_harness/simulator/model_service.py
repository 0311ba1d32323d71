"""The scripted model behind the simulated host, and ``ctx.model_registry``.

:class:`ScriptedModelService` stands where the fake model server stands for real Pi: it
outlives Pi restarts, numbers requests per kind, and plays the scenario's
:class:`~.model_script.ModelScript` through the shared :func:`~.model_script.respond`.

Calls behave as pi-ai's do (observed live, psc-lifecycle-on-real-pi.md §8):

* a call whose ``signal`` aborts **resolves** with ``stopReason: "aborted"`` and
  ``errorMessage: "Request aborted"``; it never raises;
* a provider without auth resolves with ``stopReason: "error"``
  (``"Provider is not configured: <provider>"``), the message pi-ai's lazy stream builds;
* ``max_tokens`` is passed through unclamped for extension calls (``complete()`` goes to
  ``provider.stream()``).

A reply can be *held*: its ``during`` operations run while the call is open (that is how
"abort while synthesis is in flight" or "a checkpoint during native Brief preparation" are
scripted). The call is released when those operations finish or when its signal aborts.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.model_script import (
    PLAIN_REPLIES,
    ExtensionReplies,
    ModelOutcome,
    ModelRequest,
    ModelScript,
    Reply,
    RequestKind,
    SynthesisReply,
    format_http_error,
    message_chars,
    respond,
)
from pi_continuity_harness.scenario.operations import AbortOp, Operation
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.determinism import VirtualClock
from pi_continuity_harness.simulator.messages import Message, zero_usage
from pi_continuity_harness.simulator.virtual_loop import sleep_unless_aborted

__all__ = [
    "HELD_CALL_GRACE_SECONDS",
    "ModelCatalog",
    "ScriptedModelService",
    "SimModelRegistry",
    "exchange_file",
]

#: How long (virtual) a held call waits for its ``during`` operations before it is
#: released anyway; an operation that waits on the held call itself would otherwise
#: deadlock the scenario.
HELD_CALL_GRACE_SECONDS = 600.0

RunDuring = Callable[[tuple[Operation, ...], ModelRequest], Awaitable[None]]


@dataclass
class ModelCatalog:
    """The models a scenario declares, and which providers have auth."""

    models: list[Model]
    unauthenticated_providers: frozenset[str] = frozenset()

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((m for m in self.models if m.provider == provider and m.id == model_id), None)

    def find_full(self, full_id: str) -> Model | None:
        provider, _, model_id = full_id.partition("/")
        return self.find(provider, model_id)

    def has_auth(self, provider: str) -> bool:
        return provider not in self.unauthenticated_providers

    def first_available(self) -> Model | None:
        """The first authenticated model in models.json order (providers in order of first
        appearance, each provider's models in scenario order), as Pi's available snapshot."""
        providers: list[str] = []
        for model in self.models:
            if model.provider not in providers:
                providers.append(model.provider)
        for provider in providers:
            if self.has_auth(provider):
                return next(m for m in self.models if m.provider == provider)
        return None


@dataclass
class ScriptedModelService:
    script: ModelScript
    trace: Trace
    clock: VirtualClock
    catalog: ModelCatalog
    replies: ExtensionReplies = PLAIN_REPLIES
    run_during: RunDuring | None = None
    requests: list[ModelRequest] = field(default_factory=list)
    #: Every call's full request and reply, in order (``requests/<kind>-<index>.json``).
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    _tool_results: dict[str, str] = field(default_factory=dict)
    _counters: dict[str, int] = field(default_factory=lambda: {"agent": 0, "summary": 0, "extension": 0})
    _queues: dict[str, list[Reply | SynthesisReply]] = field(default_factory=dict)
    _cursors: dict[str, int] = field(default_factory=lambda: {"agent": 0, "summary": 0, "extension": 0})
    _agent_previous: tuple[list[Message], list[Message], int] = field(default_factory=lambda: ([], [], 0))

    def __post_init__(self) -> None:
        self._queues = {
            "agent": list(self.script.agent),
            "summary": list(self.script.summary),
            "extension": list(self.script.extension),
        }

    def extend(self, kind: RequestKind, replies: Sequence[Reply | SynthesisReply]) -> None:
        """Script more replies of ``kind`` (answered after the ones already scripted)."""
        self._queues[kind].extend(replies)

    def used(self, kind: RequestKind) -> list[Reply | SynthesisReply]:
        """The scripted replies of ``kind`` requests have used so far, in order (defaults not counted)."""
        return self._queues[kind][: self._cursors[kind]]

    def replace_unused(self, kind: RequestKind, replies: Sequence[Reply | SynthesisReply]) -> None:
        """Drop the scripted replies of ``kind`` no request has used yet; ``replies`` answer the
        next requests instead (the explorer heals a run's faulty replies this way)."""
        self._queues[kind] = [*self.used(kind), *replies]

    def answered(self, kind: RequestKind) -> int:
        return self._counters[kind]

    def _next_reply(self, kind: RequestKind) -> tuple[int, Reply | SynthesisReply | None]:
        """The request's per-kind index, and the next *unused* scripted reply (FIFO).

        A request answered by the default does not use up a scripted reply: replies scripted
        later (``extend``) answer the next requests, however many defaults came before.
        """
        index = self._counters[kind]
        self._counters[kind] = index + 1
        queue = self._queues[kind]
        cursor = self._cursors[kind]
        if cursor < len(queue):
            self._cursors[kind] = cursor + 1
            return index, queue[cursor]
        return index, None

    async def call(
        self,
        kind: RequestKind,
        model: Model,
        system_prompt: str | None,
        messages: list[Message],
        *,
        tools: list[str] | None = None,
        max_tokens: int | None = None,
        reasoning: str | None = None,
        signal: AbortSignal | None = None,
    ) -> Message:
        """One model call; returns a pi-ai ``AssistantMessage`` dict."""
        started = self.clock.now_ms()
        if not self.catalog.has_auth(model.provider):
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused="no auth")
            return _error_message(model, f"Provider is not configured: {model.provider}", started, "error")
        if signal is not None and signal.aborted:
            # An already-aborted signal never reaches the provider: no request, no scripted
            # reply used (s02c: the turn after a ``ctx.compact()`` yields an empty aborted
            # assistant message "with no LLM request").
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused="aborted")
            return _error_message(model, "Request aborted", started, "aborted")
        index, reply = self._next_reply(kind)
        if kind == "agent":
            stripped, input_chars = self._agent_messages(messages)
            estimated: int | None = math.ceil((len(system_prompt or "") + input_chars) / 4)
        else:
            stripped, estimated = [_strip_for_request(m) for m in messages], None
        request = ModelRequest(
            kind=kind,
            index=index,
            model=model.full_id,
            system_prompt=system_prompt,
            messages=stripped,
            tools=list(tools or []),
            max_tokens=max_tokens,
            reasoning=reasoning,
            estimated_input_tokens=estimated,
        )
        self.requests.append(request)
        exchange: dict[str, Any] = {"kind": kind, "index": index, "request": request.to_json(), "reply": None}
        self.exchanges.append(exchange)
        outcome = respond(self.script, request, reply, self.replies)
        self.trace.emit(
            "model",
            "request",
            caller=kind,
            index=index,
            model=model.full_id,
            messages=len(request.messages),
            lastUser=_last_user_excerpt(request.messages),
            maxTokens=max_tokens,
            reasoning=reasoning,
            scripted=reply is not None,
            file=exchange_file(kind, index),
        )
        message = await self._answer(model, request, outcome, signal, started)
        exchange["reply"] = message
        return message

    async def _answer(
        self,
        model: Model,
        request: ModelRequest,
        outcome: ModelOutcome,
        signal: AbortSignal | None,
        started: int,
    ) -> Message:
        kind, index = request.kind, request.index
        if signal is not None and signal.aborted:
            return self._aborted(model, kind, index, started)
        during = tuple(outcome.during)
        if outcome.abort_while_held:
            during = (*during, AbortOp())
        if during and self.run_during is not None:
            await self._hold(during, request, signal)
        if outcome.latency_ms and not (signal is not None and signal.aborted):
            await sleep_unless_aborted(outcome.latency_ms / 1000.0, signal)
        if signal is not None and signal.aborted:
            return self._aborted(model, kind, index, started)
        message = _assistant_message(model, outcome, started)
        for block, call in zip(
            [b for b in message["content"] if b.get("type") == "toolCall"], outcome.tool_calls, strict=True
        ):
            if call.result is not None:
                self._tool_results[block["id"]] = call.result
        self.trace.emit(
            "model",
            "reply",
            caller=kind,
            index=index,
            stopReason=message["stopReason"],
            textChars=len(content_text(message["content"])),
            toolCalls=[c.name for c in outcome.tool_calls],
            totalTokens=message["usage"]["totalTokens"],
            errorMessage=message.get("errorMessage"),
        )
        return message

    def _agent_messages(self, messages: list[Message]) -> tuple[list[Message], int]:
        """Pi's own request messages, stripped, and their chars (for the default usage).

        Every agent request carries the whole context, so preparing each message anew made a
        long session quadratic. Between two requests the context usually only grows, so
        when the previous request's messages are a prefix of this one's (compared in C:
        identical or equal dicts), only the new tail is prepared.
        """
        previous, stripped, chars = self._agent_previous
        size = len(previous)
        if size and len(messages) >= size and messages[:size] == previous:
            tail = messages[size:]
            new = [_strip_for_request(m) for m in tail]
            out = [*stripped, *new]
            total = chars + sum(message_chars(m) for m in new)
        else:
            out = [_strip_for_request(m) for m in messages]
            total = sum(message_chars(m) for m in out)
        self._agent_previous = (list(messages), out, total)
        return list(out), total

    def tool_result_for(self, tool_call_id: str) -> str | None:
        """The scripted output of a simulated built-in tool call."""
        return self._tool_results.get(tool_call_id)

    async def _hold(
        self, during: tuple[Operation, ...], request: ModelRequest, signal: AbortSignal | None
    ) -> None:
        assert self.run_during is not None
        self.trace.emit("model", "held", caller=request.kind, index=request.index, operations=len(during))
        task = asyncio.ensure_future(self.run_during(during, request))
        waiters: list[asyncio.Future[Any]] = [task]
        if signal is not None:
            waiters.append(asyncio.ensure_future(signal.wait()))
        done, pending = await asyncio.wait(
            waiters, timeout=HELD_CALL_GRACE_SECONDS, return_when=asyncio.FIRST_COMPLETED
        )
        for extra in pending:
            if extra is not task:
                extra.cancel()
        if not done:
            self.trace.emit(
                "model", "released", caller=request.kind, index=request.index, reason="grace elapsed"
            )

    def _aborted(self, model: Model, kind: str, index: int, started: int) -> Message:
        self.trace.emit(
            "model", "reply", caller=kind, index=index, stopReason="aborted", errorMessage="Request aborted"
        )
        return _error_message(model, "Request aborted", started, "aborted")


def exchange_file(kind: str, index: int) -> str:
    """Where a call's full request and reply are kept, relative to the run directory."""
    return f"requests/{kind}-{index:04d}.json"


def _strip_for_request(message: Message) -> Message:
    out = {k: v for k, v in message.items() if k not in ("timestamp", "usage", "api", "provider", "model")}
    return out


def _last_user_excerpt(messages: list[Message]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "user":
            text = content_text(message.get("content"))
            return text[:80]
    return None


def _error_message(model: Model, error: str, timestamp: int, stop_reason: str) -> Message:
    return {
        "role": "assistant",
        "content": [],
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": zero_usage(),
        "stopReason": stop_reason,
        "errorMessage": error,
        "timestamp": timestamp,
    }


def _assistant_message(model: Model, outcome: ModelOutcome, timestamp: int) -> Message:
    if outcome.error is not None:
        return _error_message(model, format_http_error(outcome.error), timestamp, "error")
    content: list[dict[str, Any]] = []
    if outcome.thinking:
        content.append({"type": "thinking", "thinking": outcome.thinking})
    if outcome.text:
        content.append({"type": "text", "text": outcome.text})
    for n, call in enumerate(outcome.tool_calls):
        content.append(
            {
                "type": "toolCall",
                "id": call.id or f"call_{timestamp}_{n}",
                "name": call.name,
                "arguments": dict(call.arguments),
            }
        )
    return {
        "role": "assistant",
        "content": content,
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": outcome.usage.to_pi(),
        "stopReason": outcome.stop_reason,
        "timestamp": timestamp,
    }


class SimModelRegistry:
    """``ctx.model_registry`` backed by the scripted model (kind ``extension``)."""

    def __init__(self, service: ScriptedModelService, on_call: Callable[[str, dict[str, Any]], None]) -> None:
        self._service = service
        self._on_call = on_call

    def find(self, provider: str, model_id: str) -> Model | None:
        return self._service.catalog.find(provider, model_id)

    def get_all(self) -> list[Model]:
        return list(self._service.catalog.models)

    def get_available(self) -> list[Model]:
        return [m for m in self._service.catalog.models if self._service.catalog.has_auth(m.provider)]

    def has_configured_auth(self, model: Model) -> bool:
        return self._service.catalog.has_auth(model.provider)

    async def complete(
        self,
        model: Model,
        context: dict[str, Any],
        *,
        max_tokens: int | None = None,
        signal: AbortSignal | None = None,
        reasoning: str | None = None,
    ) -> Message:
        effective_reasoning = reasoning if (reasoning and model.reasoning and reasoning != "off") else None
        self._on_call(
            "complete",
            {"model": model.full_id, "maxTokens": max_tokens, "reasoning": effective_reasoning},
        )
        system = context.get("systemPrompt")
        messages = list(context.get("messages") or [])
        return await self._service.call(
            "extension",
            model,
            system if isinstance(system, str) else None,
            messages,
            max_tokens=max_tokens,
            reasoning=effective_reasoning,
            signal=signal,
        )
