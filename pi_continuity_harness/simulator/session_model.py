"""The session's model and thinking level: ``setModel`` and ``setThinkingLevel``.

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that switches the model and
the thinking level, held by :class:`SessionModel` for its :class:`~.agent_session.AgentSession`
(whose ``model`` and ``thinking_level`` it changes): ``setModel`` (agent-session.js:2119-2136,
``model_select`` through ``_emitModelSelect``, :2103-2118) with the level chosen before the
switch (``_getThinkingLevelForModelSwitch``, :2268-2280), and ``setThinkingLevel``
(:2219-2242: clamped to the model, an entry and ``thinking_level_select`` only on a change), and
the RPC's ``cycleModel`` (:2157-2209) and ``cycleThinkingLevel`` (:2243-2252).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from pi_continuity_harness.api.events import ModelSelectEvent, ThinkingLevelSelectEvent
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.provider import (
    DEFAULT_THINKING_LEVEL,
    clamp_thinking_level,
    supported_thinking_levels,
)
from pi_continuity_harness.simulator.session_shared import PiThrewError
from pi_continuity_harness.simulator.virtual_loop import start_eagerly

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["ModelScopeNotModelledError", "SessionModel"]


class ModelScopeNotModelledError(SimulatorError):
    """Pi's scoped models (``enabledModels``, ``--models``) are not modelled by the simulator."""


class SessionModel:
    """The model and thinking-level job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    async def set_model(self, model: Model) -> None:
        """``AgentSession.setModel`` (agent-session.js:2119-2136): the thinking level for the
        new model is chosen *before* the switch (``_getThinkingLevelForModelSwitch``, :2268-2280:
        the per-model setting, else the settings' ``defaultThinkingLevel``, else the current
        level), the ``model_change`` entry is appended, the level is applied to the new model
        (:meth:`set_thinking_level`), then ``model_select`` (only for another model, :2103-2112).
        The harness's settings say ``defaultThinkingLevel: "off"``, so a switch turns thinking
        off: found by differential exploration (seed 101)."""
        s = self._session
        if not s.service.catalog.has_auth(model.provider):
            raise PiThrewError(f"No API key for {model.provider}/{model.id}")
        await self._switch_to(model, "set")

    async def _switch_to(self, model: Model, source: Literal["set", "cycle"]) -> None:
        """What ``setModel`` and ``cycleModel`` share (agent-session.js:2123-2136, :2197-2207)."""
        s = self._session
        previous = s.model
        level = self._thinking_level_for_model_switch(model)
        s.model = model
        s.session_manager.append_model_change(model.provider, model.id)
        self.set_thinking_level(level)
        if previous is None or previous.full_id != model.full_id:
            await s.dispatch(ModelSelectEvent(model=model, previous_model=previous, source=source))

    async def cycle_model(self) -> Model | None:
        """RPC ``cycle_model`` (``AgentSession.cycleModel``, agent-session.js:2157-2209, forward):
        the next of the available models (``getNextCycleIndex``, :97-105: the first when the
        current one is not among them, none when it is the only one), switched to as
        :meth:`set_model` does, with ``model_select{source: "cycle"}``. Scoped models (the
        ``enabledModels`` setting or ``--models``) are not modelled: refused."""
        s = self._session
        if s.settings.get_settings().get("enabledModels"):
            raise ModelScopeNotModelledError(
                "cycling through scoped models (the enabledModels setting) is not modelled by the simulator"
            )
        available = s.service.catalog.available()
        current = s.model
        index = next(
            (i for i, m in enumerate(available) if current is not None and m.full_id == current.full_id), -1
        )
        if not available or (index != -1 and len(available) == 1):
            return None
        following = available[0 if index == -1 else (index + 1) % len(available)]
        await self._switch_to(following, "cycle")
        return following

    def cycle_thinking_level(self) -> str | None:
        """RPC ``cycle_thinking_level`` (agent-session.js:2243-2252): nothing for a model without
        reasoning; else the next of the model's levels after the current one (the first when the
        current one is not among them), set as :meth:`set_thinking_level` sets it."""
        s = self._session
        if s.model is None or not s.model.reasoning:
            return None
        levels = supported_thinking_levels(s.model)
        current = levels.index(s.thinking_level) if s.thinking_level in levels else -1
        level = levels[(current + 1) % len(levels)]
        self.set_thinking_level(level)
        return level

    def _thinking_level_for_model_switch(self, model: Model) -> str:
        """agent-session.js:2268-2280 (no explicit level: RPC ``set_model`` passes none)."""
        s = self._session
        settings = s.settings.get_settings()
        per_model = settings.get("modelThinkingLevels")
        if isinstance(per_model, dict):
            level = per_model.get(f"{model.provider}/{model.id}")
            if level is not None:
                return str(level)
        default = settings.get("defaultThinkingLevel")
        if default is not None:
            return str(default)
        return s.thinking_level or DEFAULT_THINKING_LEVEL

    def set_thinking_level(self, level: str, *, from_extension: bool = False) -> None:
        """``AgentSession.setThinkingLevel`` (agent-session.js:2219-2238): the level clamped to
        the current model's (pi-ai ``clampThinkingLevel``, models.js:714-732); only a change
        appends a ``thinking_level_change`` entry, emits ``thinking_level_changed`` and starts the
        extensions' ``thinking_level_select``.

        ``from_extension``: a Python extension's ``pi.set_thinking_level`` (loader.js:369-372).
        On real Pi that call is a round trip through the bridge; the handler's event reaches the
        Python process while the caller still runs, so the handler runs only once the caller
        yields (what the caller appends right after the call comes first:
        ``tests/realpi/test_differential_set_thinking_level.py``). The dispatch is then a plain
        task, not started eagerly."""
        s = self._session
        effective = clamp_thinking_level(s.model, level)
        if effective == s.thinking_level:
            return
        previous, s.thinking_level = s.thinking_level, effective
        if s.on_thinking_level is not None:
            s.on_thinking_level(effective)
        s.session_manager.append_thinking_level_change(effective)
        s._emit("thinking_level_changed", level=effective)
        runner = s.runner
        if runner is not None and runner.has_handlers("thinking_level_select"):
            # ``void this._extensionRunner.emit({type: "thinking_level_select", level,
            # previousLevel})`` (:2232-2236): not awaited, but the runner calls the first
            # handler at once (a Python handler's request leaves before anything Pi does next,
            # ``model_select`` of the same ``setModel`` included), so the dispatch starts here
            # and goes on as a host task. With no handler Pi's ``emit`` does nothing, nor does
            # the simulator.
            event = ThinkingLevelSelectEvent(level=effective, previous_level=previous)
            loop = asyncio.get_running_loop()
            if from_extension:
                task = loop.create_task(s.dispatch(event), name="thinking_level_select")
            else:
                task = start_eagerly(loop, s.dispatch(event), "thinking_level_select")
            if s._track is not None:
                s._track(task)
