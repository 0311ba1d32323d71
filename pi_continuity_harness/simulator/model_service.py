"""The scripted model behind the simulated host, and ``ctx.model_registry``.

:class:`ScriptedModelService` stands where the fake model server stands for real Pi: it
outlives Pi restarts, numbers requests per kind, and plays the scenario's
:class:`~.model_script.ModelScript` through the shared :func:`~.model_script.respond`.

Calls behave as pi-ai's do (observed live, psc-lifecycle-on-real-pi.md §8):

* a call whose ``signal`` aborts **resolves** with ``stopReason: "aborted"`` and
  ``errorMessage: "Request aborted"``; it never raises;
* a provider without auth resolves with ``stopReason: "error"``
  (``"Provider is not configured: <provider>"``), the message pi-ai's lazy stream builds; a
  provider Pi does not have at all with ``"Unknown provider: <provider>"``;
* ``max_tokens`` is passed through unclamped for an extension's call without reasoning
  (``complete()`` goes to ``provider.stream()``); with reasoning the bridge calls
  ``streamSimple``, which fits it into the context window as for Pi's own requests
  (api/simple-options.js:13-23, 36).

A reply can be *held*: its ``during`` operations run while the call is open (that is how
"abort while synthesis is in flight" or "a checkpoint during native Brief preparation" are
scripted). The call is released when those operations finish or when its signal aborts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import marshal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import js_truthy
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.chat_response import (
    BAD_JSON_STATUS,
    STREAM_STATUS,
    bad_json_error,
    sse_text,
)
from pi_continuity_harness.scenario.chat_wire import (
    ConvertMemo,
    ConvertResume,
    chat_stream,
    classify_body,
    parse_chat_request,
    tool_names,
)
from pi_continuity_harness.scenario.identity_memo import identity, same_objects_prefix
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
    respond,
)
from pi_continuity_harness.scenario.operations import Operation
from pi_continuity_harness.scenario.trace import SimulatedCrash, Trace
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.determinism import VirtualClock
from pi_continuity_harness.simulator.json_copy import json_copy_or_same
from pi_continuity_harness.simulator.messages import JsTypeError, Message, estimate_request_context_tokens
from pi_continuity_harness.simulator.provider import (
    HeadResume,
    StreamReader,
    TransformResume,
    WireMemo,
    WireResume,
    assistant_failure,
    normalize_context,
    request_body,
    setup_failure,
)
from pi_continuity_harness.simulator.session_shared import clamp_max_tokens
from pi_continuity_harness.simulator.virtual_loop import sleep_unless_aborted

__all__ = [
    "HELD_CALL_GRACE_SECONDS",
    "ModelCatalog",
    "ProviderHooks",
    "ScriptedModelService",
    "SimModelRegistry",
    "exchange_file",
]

#: How long (virtual) a held call waits for its ``during`` operations before it is
#: released anyway; an operation that waits on the held call itself would otherwise
#: deadlock the scenario.
HELD_CALL_GRACE_SECONDS = 600.0

RunDuring = Callable[[tuple[Operation, ...], ModelRequest], Awaitable[None]]
#: Receives pi-ai's stream events of a call, with the partial message (see :mod:`.provider`),
#: and returns what the stream awaits before it reads on, or None when the event is handled
#: (no coroutine for each streamed delta, issue 16).
OnStreamEvent = Callable[[dict[str, Any], Message], Awaitable[None] | None]


@dataclass(frozen=True)
class ProviderHooks:
    """The agent loop's provider callbacks (sdk.js:273-275, passed on by pi-agent-core
    agent.js:312-314 to the agent's own model calls only; summaries and ``complete`` have none).

    ``on_payload(body)`` is pi-ai's ``onPayload`` (openai-completions.js:189-192): called with
    the request body before it is sent, it returns the body to send (the same object when
    nothing replaced it). ``on_response(status, at_ms)`` is ``onResponse``
    (openai-completions.js:203), awaited once the headers of an accepted answer are in (at the
    wall time ``at_ms``, their ``Date``), before the stream's ``start``.
    ``on_stream_event(chunk, model)`` is ``onProviderStreamEvent`` (openai-completions.js:339-340),
    called for each chunk before pi-ai reads it: it returns what to await, or None when there
    is nothing to do (no listener: a coroutine per chunk awaited for nothing was one for each of
    the 11,400 chunks of an agent reply in a suite run, issue 16). ``on_headers()`` is the request options'
    ``transformHeaders`` (sdk.js:206-208), awaited in ``prepareRequest`` once auth is resolved
    (model-runtime.js:476-478), which the compaction summaries have too (they call the agent's
    stream function, agent-session.js:2314), without the other three."""

    on_payload: Callable[[dict[str, Any]], Awaitable[Any]] | None = None
    on_response: Callable[[int, int], Awaitable[None]] | None = None
    on_stream_event: Callable[[Any, Model], Awaitable[Any] | None] | None = None
    on_headers: Callable[[], Awaitable[None]] | None = None


#: The fake server's answer to a body that is not a JSON object (``FakeModelServer.handle``):
#: a 400 before anything is recorded, which pi-ai reports as ``"<status>: <JSON of error>"``.
_NOT_AN_OBJECT = f"{BAD_JSON_STATUS}: " + json.dumps(
    bad_json_error("body is not an object"), separators=(",", ":")
)


#: The providers Pi 1.6 builds in (``@earendil-works/pi-ai`` ``dist/providers/all.js``
#: ``builtinProviders()``, which ``dist/core/model-runtime.js:88`` registers): Pi knows them
#: without models.json, and none has auth in the harness's clean environment. A model of one
#: reaches no server: ``complete`` resolves with "Provider is not configured: <provider>", of any
#: other provider a scenario does not declare with "Unknown provider: <provider>"
#: (``prepareRequest``, model-runtime.js:459-469). ``tests/realpi`` checks the list against the
#: installed package.
PI_BUILTIN_PROVIDERS = frozenset(
    {
        "amazon-bedrock",
        "ant-ling",
        "anthropic",
        "azure",
        "baseten",
        "cerebras",
        "cloudflare-ai-gateway",
        "cloudflare-workers-ai",
        "deepseek",
        "fireworks",
        "github-copilot",
        "google",
        "google-vertex",
        "groq",
        "huggingface",
        "kimi-coding",
        "meta",
        "minimax",
        "minimax-cn",
        "mistral",
        "moonshotai",
        "moonshotai-cn",
        "nvidia",
        "openai",
        "openai-codex",
        "opencode",
        "opencode-go",
        "openrouter",
        "qwen-token-plan",
        "qwen-token-plan-cn",
        "qwen-token-plan-individual",
        "qwen-token-plan-individual-cn",
        "radius",
        "together",
        "typesafe",
        "vercel-ai-gateway",
        "xai",
        "xiaomi",
        "xiaomi-token-plan-ams",
        "xiaomi-token-plan-cn",
        "xiaomi-token-plan-sgp",
        "zai",
        "zai-coding-cn",
    }
)


#: Pi 1.6's built-in chat models as ``ctx.modelRegistry.getAll()`` lists them before models.json's
#: providers (``targets/realpi/dump_models.mjs`` writes it from the installed package; compact
#: JSON, one ``[provider, id, name, api, reasoning, input, contextWindow, maxTokens]`` row a model,
#: the fields the bridge's ``modelToWire`` carries; ``tests/realpi`` regenerates it live).
BUILTIN_MODELS_PATH = Path(__file__).with_name("pi-1.6-models.json")


@functools.cache
def pi_builtin_models() -> tuple[Model, ...]:
    """The built-in catalogue, read once and only when a registry read needs it."""
    rows = json.loads(BUILTIN_MODELS_PATH.read_text(encoding="utf-8"))
    return tuple(
        Model(
            provider=provider,
            id=model_id,
            context_window=context_window,
            max_tokens=max_tokens,
            name=name,
            api=api,
            reasoning=reasoning,
            input=tuple(inputs),
        )
        for provider, model_id, name, api, reasoning, inputs, context_window, max_tokens in rows
    )


@functools.cache
def _pi_builtin_index() -> dict[tuple[str, str], Model]:
    index: dict[tuple[str, str], Model] = {}
    for model in pi_builtin_models():
        index.setdefault((model.provider, model.id), model)
    return index


@dataclass
class ModelCatalog:
    """The models a scenario declares, and which providers have auth: a scenario's provider
    unless it is unauthenticated, no other (Pi's ``hasConfiguredAuth``: the providers with
    configured auth, ``dist/core/model-runtime.js:366-368``; the harness's models.json gives a
    key to the authenticated ones only, and its environment none)."""

    models: list[Model]
    unauthenticated_providers: frozenset[str] = frozenset()

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((m for m in self.models if m.provider == provider and m.id == model_id), None)

    def find_full(self, full_id: str) -> Model | None:
        provider, _, model_id = full_id.partition("/")
        return self.find(provider, model_id)

    def has_auth(self, provider: str) -> bool:
        return provider not in self.unauthenticated_providers and any(
            m.provider == provider for m in self.models
        )

    def declared_by_provider(self) -> dict[str, list[Model]]:
        """The scenario's models by provider, as the harness's models.json lists them (providers
        in order of first appearance, each provider's models in scenario order)."""
        declared: dict[str, list[Model]] = {}
        for model in self.models:
            declared.setdefault(model.provider, []).append(model)
        return declared

    def registry_find(self, provider: str, model_id: str) -> Model | None:
        """``modelRegistry.find``: a scenario's model, else a built-in one (``getModel``,
        dist/core/model-runtime.js:292-294, looks in every provider, built-ins included)."""
        found = self.find(provider, model_id)
        if found is not None:
            return found
        if provider not in PI_BUILTIN_PROVIDERS:
            return None
        return _pi_builtin_index().get((provider, model_id))

    def registry_models(self) -> list[Model]:
        """``modelRegistry.getAll()`` (dist/core/model-registry.js:18-20, ``getModels()``): the
        providers in ``providerIds()`` order, built-ins first, then models.json's
        (dist/core/model-runtime.js:134-142, set by ``rebuildProviders``, :174-179). A scenario's
        provider that is a built-in one keeps its place, its models upserted into the built-in
        list by id (replaced in place, else appended: ``applyModelsJson`` of
        ``composeModelProvider``, dist/core/provider-composer.js:357)."""
        providers: dict[str, list[Model]] = {}
        for model in pi_builtin_models():
            providers.setdefault(model.provider, []).append(model)
        # models.json's providers: a built-in one's list upserted by id, any other after them all
        for provider, own in self.declared_by_provider().items():
            models = providers.setdefault(provider, [])
            for model in own:
                at = next((i for i, m in enumerate(models) if m.id == model.id), None)
                if at is None:
                    models.append(model)
                else:
                    models[at] = model
        return [model for models in providers.values() for model in models]

    def knows_provider(self, provider: str) -> bool:
        """Whether Pi has the provider (models.json's or a built-in one, :data:`PI_BUILTIN_PROVIDERS`)."""
        return provider in PI_BUILTIN_PROVIDERS or any(m.provider == provider for m in self.models)

    def available(self) -> list[Model]:
        """``getAvailableSnapshot`` (dist/core/model-runtime.js:181-188): the models of the
        registry whose provider has configured auth; no built-in provider has any in the
        harness's clean environment, unless a scenario's models.json provider is one."""
        if not any(m.provider in PI_BUILTIN_PROVIDERS for m in self.models):
            # (without reading the built-in catalogue: none of its models has auth)
            grouped = [m for ms in self.declared_by_provider().values() for m in ms]
            return [m for m in grouped if self.has_auth(m.provider)]
        return [m for m in self.registry_models() if self.has_auth(m.provider)]

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
    #: The machine root the host shows (``{{match:(?#root)...}}``, ``model_script.ROOT_MARK``).
    root: str | None = None
    requests: list[ModelRequest] = field(default_factory=list)
    #: Every call's full request and reply, in order (``requests/<kind>-<index>.json``).
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    _tool_results: dict[str, str] = field(default_factory=dict)
    _counters: dict[str, int] = field(default_factory=lambda: {"agent": 0, "summary": 0, "extension": 0})
    _queues: dict[str, list[Reply | SynthesisReply]] = field(default_factory=dict)
    _cursors: dict[str, int] = field(default_factory=lambda: {"agent": 0, "summary": 0, "extension": 0})
    _seq: int = 0
    #: The requests whose answer the model server is still holding back (a held reply, a
    #: latency), by call sequence: ``(kind, index)``. A crash ends them aborted
    #: (:meth:`drop_in_flight`). A reply being streamed is not among them: the server writes
    #: it all at once, whatever the client still has to read.
    in_flight: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: The calls whose connection a crash dropped (by call sequence): they answer nothing more.
    _dropped: set[int] = field(default_factory=set)
    #: Every distinct message of every recorded request, by its marshal bytes (:meth:`_shared`).
    _messages: dict[bytes, Any] = field(default_factory=dict)
    #: The messages of ``_messages`` by their identity (they are held there, so ids stay theirs).
    _shared_ids: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Every wire message's parsed form (:class:`~.chat_wire.ConvertMemo`), shared as well.
    _parsed: ConvertMemo = field(init=False)
    #: The wire form of the conversation's user messages and tool results (:class:`~.provider.WireMemo`).
    _wired: WireMemo = field(init=False)
    #: Each kind's previous request, transformed (:class:`TransformResume`), in wire form
    #: (:class:`WireResume`), parsed (:class:`ConvertResume`) and its leading system message
    #: (:class:`HeadResume`): the agent's conversation and the summarizer's are two, taking turns.
    _resume: dict[RequestKind, tuple[TransformResume, WireResume, ConvertResume, HeadResume]] = field(
        init=False
    )
    #: :meth:`_shared`'s previous result per kind and list (``"wire"``: the body's messages,
    #: ``"parsed"``: the request's, of a body a handler replaced), and how many of its leading
    #: messages are registered in :attr:`_shared_ids`.
    _shared_before: dict[tuple[RequestKind, str], tuple[tuple[dict[str, Any], ...], int]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        self._parsed = ConvertMemo(share=self._share)
        self._wired = WireMemo(share=self._share)
        self._resume = {}
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

    def _shared(
        self, messages: list[dict[str, Any]], resume: tuple[RequestKind, str]
    ) -> list[dict[str, Any]]:
        """``messages``, each replaced by the equal message an earlier request recorded.

        Every request carries the whole conversation, and a run keeps every request (its wire
        body and its parsed messages) for the observation: without sharing, a session's memory
        grew with the square of its length (400 turns: 99.6 MiB traced and 10x the time of
        b20326a, where the recorded requests were smaller; bisected to 7d747eb, which recorded
        the whole wire). Recorded messages are never changed, so equal ones can be one object.
        The key is the message's ``marshal`` bytes (a fifth of ``json.dumps``'s time): equal
        bytes are equal contents, and ``1``, ``1.0`` and ``True`` stay apart. A message that
        already is the shared one (a parsed message :attr:`_parsed` remembered) is known by
        its identity, without encoding it again (looked up here, not in a call of :meth:`_share`
        per message: almost every message of a request already is the shared one, issue 16).

        ``resume`` names the list (the kind, and ``"wire"`` for the body's messages or
        ``"parsed"`` for the request's): the leading messages that are the very objects (``is``)
        of the previous result for it (the same kind's previous request, which the
        conversation re-sends) are taken over without a lookup, as far as that result's
        messages were registered in :attr:`_shared_ids`. That is the same list: a registered
        message stays registered (nothing is ever removed from :attr:`_shared_ids`), and a
        registered message is its own result, with nothing registered for it; only the rest is
        looked up by ``id`` as before. A message that was not registered (one ``marshal``
        refused) ends the prefix, so it is offered to :meth:`_share` again, as before. The
        previous result is kept as a tuple (the list handed out could be changed). The lookup
        of every message by ``id`` was an audit event each (the filesystem monitor's hook sees
        every ``id()``): a fifth of all the audit events of a blitz exploration (20 seeds:
        42,000 of 215,000, December 2026).
        """
        ids = self._shared_ids
        before, registered = self._shared_before.get(resume, ((), 0))
        common = min(same_objects_prefix(messages, before), registered)
        shared = messages[:common]
        leading = common  # how many leading messages of ``shared`` are registered
        counting = True
        if common == 0 and registered and messages:
            # A body's leading system message is made anew for every request (``request_body``),
            # so the prefix ended before it began: shared first, it is the previous result's
            # (the same system prompt) and the prefix goes on after it (issue 16).
            first = self._share(messages[0])
            if first is before[0]:
                common = 1 + min(same_objects_prefix(messages[1:], before[1:]), registered - 1)
                shared = [first, *messages[1:common]]
                leading = common
            else:
                shared = [first]
                counting = ids.get(identity(first)) is first
                leading = 1 if counting else 0
                common = 1
        for message in messages[common:]:
            if ids.get(identity(message)) is message:
                result = message
            else:
                result = self._share(message)
                if counting and ids.get(identity(result)) is not result:
                    counting = False  # not registered (``marshal`` refused it): the prefix ends
            shared.append(result)
            if counting:
                leading += 1
        self._shared_before[resume] = (tuple(shared), leading)
        return shared

    def _share(self, message: dict[str, Any]) -> dict[str, Any]:
        ids = self._shared_ids
        if ids.get(identity(message)) is message:
            return message
        try:
            key = marshal.dumps(message)
        except ValueError:  # not plain data: recorded as it is
            return message
        shared: dict[str, Any] = self._messages.setdefault(key, message)
        ids[identity(shared)] = shared
        return shared

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
        messages: list[Message],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
        reasoning: str | None = None,
        signal: AbortSignal | None = None,
        on_event: OnStreamEvent | None = None,
        setup_error: str | None = None,
        hooks: ProviderHooks | None = None,
        tools: list[Any] | None = None,
    ) -> Message:
        """One model call through pi-ai's ``openai-completions`` (:mod:`.provider`); returns the
        ``AssistantMessage``. ``messages`` are pi-ai messages (system messages included);
        ``system_prompt`` is a ``Context.systemPrompt``. ``on_event(event, partial)`` receives
        pi-ai's stream events (``start``, the deltas and ends) with the partial message.

        ``setup_error``: what the provider's ``streamSimple`` threw before it streamed (pi-ai's
        estimate of the request, :func:`~.messages.estimate_request_context_tokens`), once the
        runtime has resolved auth: ``lazyStream`` ends the stream with it (api/lazy.js:2-21,
        45-66: ``content: []``, zero usage, ``stopReason`` ``error``, or ``aborted`` when the
        signal is). A message ``convertMessages`` cannot take fails the same way, in the
        provider's own ``catch`` (openai-completions.js:480-495). Neither sends a request nor
        uses a scripted reply.

        ``hooks``: the agent loop's provider callbacks (:class:`ProviderHooks`). A body
        ``on_payload`` replaced is what is sent, recorded and answered.

        ``tools``: a ``Context.tools`` (an extension's ``complete()``), declared by the request
        (:func:`~.provider.request_body`), which makes it an ``agent`` request by the fake
        server's rule.

        ``kind`` names the caller (the agent loop, compaction, an extension's ``complete()``):
        it keys the memos of that caller's conversation and names a call refused before a
        request is sent. The request itself is answered as the fake server answers it on real
        Pi, by the kind of the body sent (:func:`~.chat_wire.classify_body`: a summarizer
        system prompt is ``summary``, declared tools ``agent``, anything else ``extension``):
        an agent request without tools (``pi.set_active_tools([])``), or whose leading system
        message a ``context_with_system`` handler dropped, uses the extension script, as it
        does on real Pi (``FakeModelServer.handle``, targets/realpi/fake_server.py)."""
        started = self.clock.now_ms()
        started_loop = self.clock.loop_ms()
        if not self.catalog.has_auth(model.provider):
            # ``prepareRequest`` (model-runtime.js:459-469): no provider, or no auth for it.
            known = self.catalog.knows_provider(model.provider)
            refused = "no auth" if known else "unknown provider"
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused=refused)
            error = "Provider is not configured" if known else "Unknown provider"
            return setup_failure(model, f"{error}: {model.provider}", started, "error")
        if signal is not None and signal.aborted:
            # An already-aborted signal never reaches the provider: no request, no scripted
            # reply used (s02c: the turn after a ``ctx.compact()`` yields an empty aborted
            # assistant message "with no LLM request"). ``prepareRequest``'s auth resolution
            # (model-runtime.js:462) throws the signal's reason, ``signal.throwIfAborted()``
            # (probably the credential read, auth-storage.js:216: the exact line is not
            # observed), before ``transformHeaders`` and ``onPayload``; ``lazyStream`` ends the stream
            # with it (api/lazy.js:56-66): observed on real Pi 1.6.0, neither provider event
            # and ``errorMessage`` "This operation was aborted" (tests/realpi
            # test_differential_provider_events.py).
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused="aborted")
            return setup_failure(model, "This operation was aborted", started, "aborted")
        if hooks is not None and hooks.on_headers is not None:
            # After ``prepareRequest`` resolved auth, before the provider's own setup (its
            # estimate, ``setup_error``) and ``buildParams`` (model-runtime.js:459-488).
            await hooks.on_headers()
        if setup_error is not None:
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused=setup_error)
            stop = "aborted" if signal is not None and signal.aborted else "error"
            return setup_failure(model, setup_error, started, stop)
        caller = kind
        resume = self._resume.get(caller)
        if resume is None:  # (made once per kind, not for every call as ``setdefault``'s default)
            resume = self._resume[caller] = (TransformResume(), WireResume(), ConvertResume(), HeadResume())
        try:
            body = request_body(
                model,
                messages,
                system_prompt=system_prompt,
                max_tokens=max_tokens,
                reasoning=reasoning,
                memo=self._wired,
                resume=resume[0],
                wire_resume=resume[1],
                head_resume=resume[3],
                tools=tools,
            )
        except JsTypeError as error:
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused=str(error))
            stop = "aborted" if signal is not None and signal.aborted else "error"
            return assistant_failure(model, str(error), started, stop, 0)
        replaced = False
        if hooks is not None and hooks.on_payload is not None:
            # openai-completions.js:188-192: ``buildParams``, then ``onPayload``, then the SDK's
            # request (which a signal a handler aborted stops before anything is sent).
            sent = await hooks.on_payload(body)
            if sent is not body:
                if not isinstance(sent, dict):
                    self.trace.emit(
                        "model", "request", caller=kind, model=model.full_id, refused="not an object"
                    )
                    stop = "aborted" if signal is not None and signal.aborted else "error"
                    return assistant_failure(model, _NOT_AN_OBJECT, started, stop, 0)
                body, replaced = sent, True
        names = tool_names(body)  # (for the kind and the request)
        kind = classify_body(body, names)
        if signal is not None and signal.aborted:
            # A handler aborted the signal (``before_provider_headers`` or
            # ``before_provider_request``): the SDK's request stops before anything is sent.
            self.trace.emit("model", "request", caller=kind, model=model.full_id, refused="aborted")
            return assistant_failure(model, "Request aborted", started, "aborted", 0)
        seq = self._seq
        self._seq += 1
        index, reply = self._next_reply(kind)
        # The wire names the model by its id; requests are recorded as ``provider/id``, as the
        # real-Pi target records them.
        if replaced:
            # A body of the handler's (JSON copies): parsed without the conversation's memos,
            # so its messages are shared here (:meth:`_shared`).
            request = parse_chat_request(body, index=index, kind=kind, model=model.full_id, tools=names)
            request = dataclasses.replace(
                request, messages=self._shared(request.messages, (caller, "parsed"))
            )
        else:
            body["messages"] = self._shared(body["messages"], (caller, "wire"))
            # Every parsed message already is the shared one: :attr:`_parsed` shares what it
            # converts (``memo.share``, :meth:`_share`) and hands out what it remembered, so
            # sharing the request's messages again found each one by its identity (and the
            # request was made twice, ``dataclasses.replace``), issue 16.
            request = parse_chat_request(
                body,
                index=index,
                kind=kind,
                memo=self._parsed,
                resume=resume[2],
                model=model.full_id,
                tools=names,
            )
        self.requests.append(request)
        exchange: dict[str, Any] = {"kind": kind, "index": index, "request": request.to_json(), "reply": None}
        self.exchanges.append(exchange)
        outcome = respond(self.script, request, reply, self.replies, root=self.root)
        self.trace.emit(
            "model",
            "request",
            caller=kind,
            index=index,
            model=model.full_id,
            messages=len(request.messages),
            lastUser=_last_user_excerpt(request.messages),
            maxTokens=request.max_tokens,
            reasoning=request.reasoning,
            scripted=reply is not None,
            file=exchange_file(kind, index),
        )
        # The chunks name the model the body named, as the fake server's do.
        wire_model = str(body.get("model", "")) if replaced else model.id
        # The SDK asks for a stream when the body's ``stream`` is truthy (pi-ai's own always is).
        streaming = not replaced or js_truthy(body.get("stream"))
        message = await self._answer(
            model,
            request,
            outcome,
            (seq, wire_model, streaming),
            (started, started_loop),
            signal,
            on_event,
            hooks,
        )
        exchange["reply"] = message
        for block, call in zip(
            [b for b in message["content"] if b.get("type") == "toolCall"], outcome.tool_calls, strict=False
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
            toolCalls=[b.get("name") for b in message["content"] if b.get("type") == "toolCall"],
            totalTokens=message["usage"]["totalTokens"],
            errorMessage=message.get("errorMessage"),
        )
        return message

    def drop_in_flight(self) -> None:
        """The process died (a crash): every request whose answer is still held back loses its
        connection, which the model server in front of real Pi records as an aborted request
        (``targets/realpi/fake_server.py``). Traced as ``model:dropped`` before the trace
        freezes; the call then ends with the process (:meth:`_end_if_dropped`)."""
        for seq, (kind, index) in self.in_flight.items():
            self.trace.emit("model", "dropped", caller=kind, index=index)
            self._dropped.add(seq)

    def _end_if_dropped(self, seq: int) -> None:
        """A held call whose process died while it was held (its own ``during`` operations may
        have killed it) streams nothing more: the caller dies with the process. Before, the
        simulator streamed the rest of the reply into the dead process's memory, and its entry
        showed in the observation (real Pi's file has no such entry)."""
        if seq in self._dropped:
            self._dropped.discard(seq)
            raise SimulatedCrash("the process is dead")

    @staticmethod
    def _aborted(signal: AbortSignal | None) -> bool:
        return signal is not None and signal.aborted

    async def _answer(
        self,
        model: Model,
        request: ModelRequest,
        outcome: ModelOutcome,
        wire: tuple[int, str, bool],
        start: tuple[int, int],
        signal: AbortSignal | None,
        on_event: OnStreamEvent | None,
        hooks: ProviderHooks | None = None,
    ) -> Message:
        """What the fake server does with the outcome, read the way pi-ai reads it: a hold
        before the headers, an HTTP error, or a stream (cut by a stream plan: then a hold, a
        dropped connection or an SSE error). A stream's headers go to ``hooks.on_response``
        before its ``start`` (openai-completions.js:203-204)."""
        started, started_loop = start
        plan = outcome.stream
        held = outcome.held and self.run_during is not None
        seq = wire[0]
        self.in_flight[seq] = (request.kind, request.index)
        try:
            if held and plan is None:
                await self._hold(outcome.hold_operations(), request, signal)
            if outcome.latency_ms and not self._aborted(signal):
                await sleep_unless_aborted(outcome.latency_ms / 1000.0, signal)
        finally:
            del self.in_flight[seq]
        self._end_if_dropped(seq)
        if self._aborted(signal):
            return assistant_failure(
                model, "Request aborted", started, "aborted", self._elapsed(started_loop)
            )
        if outcome.error is not None:
            return assistant_failure(
                model, format_http_error(outcome.error), started, "error", self._elapsed(started_loop)
            )
        if hooks is not None and hooks.on_response is not None:
            await hooks.on_response(STREAM_STATUS, self.clock.current_ms())
        wire_model, streaming = wire[1], wire[2]
        stream = chat_stream(outcome, model=wire_model, seq=seq)
        reader = StreamReader(model, started)

        async def emit(events: list[dict[str, Any]]) -> None:
            if on_event is not None:
                for event in events:
                    handling = on_event(event, reader.output)
                    if handling is not None:
                        await handling

        await emit([reader.start()])
        on_chunk = None if hooks is None else hooks.on_stream_event
        if not streaming and plan is None:
            # A body whose ``stream`` a ``before_provider_request`` handler turned off: the SDK
            # reads the fake server's answer whole as text (its content type is not JSON), and
            # pi-ai's ``for await`` walks that string: every character is a "chunk"
            # (``onProviderStreamEvent`` included), none an object, so no finish reason
            # (openai-completions.js:339-342, 474-476). Observed on real Pi 1.6.0: 1,757
            # provider_stream_event calls, "Stream ended without finish_reason", no content.
            for character in sse_text(stream.chunks):
                if on_chunk is not None:
                    dispatch = on_chunk(character, model)
                    if dispatch is not None:
                        await dispatch
            await emit(reader.end(self._elapsed(started_loop)))
            return reader.output
        if plan is None:  # (the whole stream at once: no cut, no second walk of no chunks)
            await self._stream(stream.chunks, reader, model, on_chunk, on_event)
        else:
            cut = len(stream.chunks) if stream.cut is None else stream.cut
            await self._stream(stream.chunks[:cut], reader, model, on_chunk, on_event)
            if plan.then == "drop":
                await emit(reader.end(self._elapsed(started_loop)))
                return reader.output
            if plan.then == "error":
                await emit([reader.fail(plan.error, self._elapsed(started_loop))])
                return reader.output
            if held:
                self.in_flight[seq] = (request.kind, request.index)
                try:
                    await self._hold(outcome.hold_operations(), request, signal)
                finally:
                    del self.in_flight[seq]
                self._end_if_dropped(seq)
                if self._aborted(signal):
                    await emit(reader.abort(self._elapsed(started_loop)))
                    return reader.output
            await self._stream(stream.chunks[cut:], reader, model, on_chunk, on_event)
        await emit(reader.end(self._elapsed(started_loop)))
        return reader.output

    @staticmethod
    async def _stream(
        chunks: Sequence[dict[str, Any]],
        reader: StreamReader,
        model: Model,
        on_chunk: Callable[[Any, Model], Awaitable[Any] | None] | None,
        on_event: OnStreamEvent | None,
    ) -> None:
        """Each chunk to ``on_chunk`` (``onProviderStreamEvent``), then read by ``reader``, its
        events to ``on_event``: the loop of :meth:`_answer`'s ``emit`` without a coroutine of
        its own per chunk (one per chunk of every reply, issue 16)."""
        output = reader.output
        for chunk in chunks:
            if on_chunk is not None:
                dispatch = on_chunk(chunk, model)
                if dispatch is not None:
                    await dispatch
            events = reader.feed(chunk)
            if on_event is not None:
                for event in events:
                    handling = on_event(event, output)
                    if handling is not None:
                        await handling

    def _elapsed(self, started_loop: int) -> int:
        """``durationMs``: virtual milliseconds since the call began (a clock read that does not
        advance the timestamps, unlike ``now_ms``)."""
        return max(0, self.clock.loop_ms() - started_loop)

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


def exchange_file(kind: str, index: int) -> str:
    """Where a call's full request and reply are kept, relative to the run directory."""
    return f"requests/{kind}-{index:04d}.json"


def _last_user_excerpt(messages: list[Message]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "user":
            text = content_text(message.get("content"))
            return text[:80]
    return None


class SimModelRegistry:
    """``ctx.model_registry`` backed by the scripted model (kind ``extension``)."""

    def __init__(self, service: ScriptedModelService, on_call: Callable[[str, dict[str, Any]], None]) -> None:
        self._service = service
        self._on_call = on_call

    def find(self, provider: str, model_id: str) -> Model | None:
        return self._service.catalog.registry_find(provider, model_id)

    def get_all(self) -> list[Model]:
        return self._service.catalog.registry_models()

    def get_available(self) -> list[Model]:
        return self._service.catalog.available()

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
        # The context as it is now: on real Pi it crosses the bridge as JSON at this call. The
        # extension's own message objects were kept before, and a list reused for a second call
        # (its first message changed in place) was sent as the first call had converted it.
        messages = json_copy_or_same(list(context.get("messages") or []))
        # ``Context.tools`` reach pi-ai too (bridge.ts hands the whole context to
        # ``modelRegistry.complete``): the request declares them, so the fake server answers it
        # from the agent script (tests/realpi/test_differential_complete_tools.py).
        tools = context.get("tools")
        setup_error: str | None = None
        if effective_reasoning is not None:
            # With reasoning the bridge calls ``streamSimple`` (bridge.ts, ``performRegistry``),
            # whose ``buildBaseOptions`` clamps ``maxTokens`` (or the model's) to the window
            # with pi-ai's estimate of the normalised context: the system prompt and tools are
            # its leading system message (api/simple-options.js:36, models.js:466-477). Sent as
            # asked, a long synthesis request differed from real Pi's (max_tokens 14336 against
            # 3079: differential exploration of the continuity cases, seed 28, 7 December 2026).
            lead = system if isinstance(system, str) else None
            listed = tools if isinstance(tools, list) else None
            try:
                max_tokens = clamp_max_tokens(
                    model,
                    lambda: estimate_request_context_tokens(normalize_context(messages, lead, listed)),
                    max_tokens,
                )
            except JsTypeError as error:
                setup_error = str(error)
        return await self._service.call(
            "extension",
            model,
            messages,
            tools=json_copy_or_same(tools) if isinstance(tools, list) else None,
            system_prompt=system if isinstance(system, str) else None,
            max_tokens=max_tokens,
            reasoning=effective_reasoning,
            signal=signal,
            setup_error=setup_error,
        )
