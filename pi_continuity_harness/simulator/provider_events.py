"""The extension events of the agent's provider calls (sdk.js:206-208, 224-249).

Pi builds its agent with three provider callbacks (sdk.js:273-275), which pi-agent-core passes
to the agent loop's model calls only (agent.js:312-314; compaction and branch summaries call
the stream function without them, compaction.js:477-488, and so does an extension's
``modelRegistry.complete``):

* ``onPayload`` -> ``before_provider_request`` (sdk.js:224-229): when some extension listens,
  ``emitBeforeProviderRequest`` (runner.js:1079-1107) hands each handler the payload and takes
  what it returns as the body to send (:meth:`~.runner.ExtensionRunner.emit_before_provider_request`).
* ``onResponse`` -> ``after_provider_response`` (sdk.js:230-238): ``{status, headers}`` through
  the plain, awaited ``emit``; its result is ignored.
* ``transformHeaders`` -> ``before_provider_headers`` (sdk.js:206-208): the request's headers
  (``{}`` for the harness's provider: no provider headers, no OpenCode session), for the
  summaries' requests too (:func:`summary_provider_hooks`). A Python handler gets a JSON copy
  and Pi ignores results (runner.js:1113-1118), so nothing it does changes the request.
* ``onProviderStreamEvent`` -> ``provider_stream_event`` (sdk.js:240-249): each chunk with the
  request's model's ``provider``, ``api`` and ``id``, through ``emit``; its result is ignored.

Each first asks ``hasHandlers`` (sdk.js:206, 226, 232, 242): without a listener there is no
dispatch, no trace line and nothing that could suspend, so a run whose extensions do not listen
is unchanged (measured: 2.2 us per agent request, 0.7 us per chunk).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_continuity_harness.api.events import (
    AfterProviderResponseEvent,
    BeforeProviderHeadersEvent,
    Event,
    ProviderStreamEvent,
)
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.chat_response import response_record
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.simulator.model_service import ProviderHooks
from pi_continuity_harness.simulator.runner import ExtensionRunner

__all__ = ["agent_provider_hooks", "summary_provider_hooks"]


def agent_provider_hooks(
    runner: Callable[[], ExtensionRunner],
    dispatch: Callable[[Event], Awaitable[Any]],
    settle: Callable[[], Awaitable[None]],
    trace: Trace,
) -> ProviderHooks:
    """The agent loop's :class:`~.model_service.ProviderHooks`: ``runner`` is the current
    extension runner (read at each call, as Pi reads ``extensionRunnerRef.current``),
    ``dispatch`` the session's traced dispatch, ``settle`` its preflight settling."""

    async def on_payload(payload: dict[str, Any]) -> Any:
        current = runner()
        if not current.has_handlers("before_provider_request"):
            return payload
        trace.emit("event", "before_provider_request")
        sent = await current.emit_before_provider_request(payload)
        await settle()
        return sent

    async def on_response(status: int, at_ms: int) -> None:
        if runner().has_handlers("after_provider_response"):
            headers = response_record(at_ms)  # the fake server's (``scenario/chat_response.py``)
            await dispatch(AfterProviderResponseEvent(status=status, headers=headers))

    def on_stream_event(chunk: Any, model: Model) -> Awaitable[Any] | None:
        # The dispatch to await, made only when someone listens (:class:`ProviderHooks`).
        if not runner().has_handlers("provider_stream_event"):
            return None
        return dispatch(
            ProviderStreamEvent(data=chunk, provider=model.provider, api=model.api, model=model.id)
        )

    return ProviderHooks(
        on_payload=on_payload,
        on_response=on_response,
        on_stream_event=on_stream_event,
        on_headers=_headers_hook(runner, dispatch),
    )


def summary_provider_hooks(
    runner: Callable[[], ExtensionRunner], dispatch: Callable[[Event], Awaitable[Any]]
) -> ProviderHooks:
    """A compaction summary's hooks: ``transformHeaders`` only (its options come from
    ``buildRequestOptions`` in the agent's stream function, sdk.js:261-262, but pi-agent-core
    adds the payload, response and stream callbacks to the agent loop's calls alone)."""
    return ProviderHooks(on_headers=_headers_hook(runner, dispatch))


def _headers_hook(
    runner: Callable[[], ExtensionRunner], dispatch: Callable[[Event], Awaitable[Any]]
) -> Callable[[], Awaitable[None]]:
    async def on_headers() -> None:
        if runner().has_handlers("before_provider_headers"):
            await dispatch(BeforeProviderHeadersEvent(headers={}))

    return on_headers
