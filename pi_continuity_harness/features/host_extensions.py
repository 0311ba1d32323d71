"""Other extensions the host features load beside the implementation under test.

They exist so a feature can watch a host behaviour a continuity extension relies on, one that
neither reference exercises by itself (features tagged ``@host`` say so). A scenario loads one
with ``extensions: [{module: "pi_continuity_harness.features.host_extensions:<name>"}]``, in
the simulator and, through the bridge, in real Pi.
"""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ExtensionContext, SessionStartEvent

__all__ = ["SESSION_START_ENTRY", "model_before_switch", "model_on_settled", "session_start_recorder"]

#: The ``customType`` of the entry :func:`session_start_recorder` appends.
SESSION_START_ENTRY = "harness-session-start"


def session_start_recorder(pi: ExtensionAPI) -> None:
    """Appends a custom entry ``{"reason", "n"}`` at every ``session_start`` it sees (``n``
    counts this instance's calls): what an extension that records its state when a session
    starts does, so a feature can see how often ``session_start`` ran and whether an RPC client
    heard of the entry (``entry_appended``)."""
    count = 0

    def on_start(event: SessionStartEvent, _ctx: ExtensionContext) -> None:
        nonlocal count
        count += 1
        pi.append_entry(SESSION_START_ENTRY, {"reason": event.reason, "n": count})

    pi.on("session_start", on_start)


async def _ask_the_model(ctx: ExtensionContext, system_prompt: str, prompt: str) -> None:
    """One ``ctx.modelRegistry.complete`` call to the active model (none without a model): the
    asynchronous work a scenario holds (a held reply of kind ``extension``)."""
    model = ctx.model
    if model is None:
        return
    text = {"type": "text", "text": prompt}
    context = {
        "systemPrompt": system_prompt,
        "messages": [{"role": "user", "content": [text], "timestamp": 0}],
    }
    await ctx.model_registry.complete(model, context, max_tokens=64)


def model_before_switch(pi: ExtensionAPI) -> None:
    """Asks the active model once (``ctx.modelRegistry.complete``) in its ``session_before_switch``
    handler before it lets the switch go on: an extension that does asynchronous work before a
    session is replaced. Pi awaits every ``session_before_switch`` handler before it replaces the
    session (``dist/core/agent-session-runtime.js:97-108, 166-170``), so while that call is held
    the switch is in progress and the old session's extensions still handle commands."""

    async def before_switch(_event: Any, ctx: ExtensionContext) -> None:
        await _ask_the_model(ctx, "You note session switches.", "Note the session switch.")

    pi.on("session_before_switch", before_switch)


def model_on_settled(pi: ExtensionAPI) -> None:
    """Asks the active model once (``ctx.modelRegistry.complete``) in its ``agent_settled``
    handler: an extension that does asynchronous work when the agent settles. Pi awaits every
    ``agent_settled`` handler with ``_isEmittingAgentSettled`` set (``dist/core/agent-session.js:742-766``):
    while that call is held a prompt (a command too) is deferred until the handlers have ended, and
    it then runs *before* the idle waiters resolve (``:1705-1708``, ``_resolveIdleWaitIfIdle`` after
    the deferred actions). So a command sent then runs while another extension's command still
    waits for idle (``ctx.waitForIdle``): the one window in which Pi lets a tree navigation run
    during such a wait (``navigateTree`` throws while a run is active, ``:3370-3376``)."""

    async def settled(_event: Any, ctx: ExtensionContext) -> None:
        await _ask_the_model(ctx, "You note settlements.", "Note that the agent settled.")

    pi.on("agent_settled", settled)
