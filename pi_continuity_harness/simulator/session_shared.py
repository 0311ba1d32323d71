"""What the jobs of :class:`.agent_session.AgentSession` share and no one of them owns.

The session's jobs live in their own modules (:mod:`.agent_session` the state, the agent's
events and the runs; :mod:`.session_compaction`, ...); what several of them raise, build or
compute lives here, below all of them, so none imports another at run time:

* the errors Pi's ``AgentSession`` throws (``prompt()``, ``compact()``, ``navigateTree()``:
  agent-session.js), as :class:`PiThrewError`;
* a run's trigger (the ``{...trigger}`` of ``_prepareRun``, agent-session.js:1560-1599);
* pi-ai's ``clampMaxTokensToContext`` (api/simple-options.js:13-23), which both the agent's
  request and a compaction summary's go through;
* a signal's flag read anew.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.extension_api import Model, PiError
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.messages import Message

__all__ = ["PiThrewError", "PromptRejectedError", "Trigger", "clamp_max_tokens", "signal_aborted"]


class PromptRejectedError(SimulatorError, RuntimeError):
    """``prompt()`` threw: the RPC response would be ``success: false`` with this message."""


class PiThrewError(PromptRejectedError, PiError):
    """An ``Error`` Pi's API throws, with Pi's message: what an extension's call raises
    (:class:`~pi_continuity_harness.api.PiError`, as on real Pi), and what the host's own
    callers (RPC commands, the observer's ``/harness-tree``) catch as
    :class:`PromptRejectedError` to report its text."""


@dataclass
class Trigger:
    """What starts a run: a user prompt (its text and images) or a custom message."""

    message_type: Literal["user", "custom"]
    #: A user trigger's text: a string, or what an ``input`` transform left (UNDEFINED, None...).
    prompt: Any = None
    message: Message | None = None
    images: tuple[dict[str, Any], ...] = ()


def signal_aborted(signal: AbortSignal) -> bool:
    """Read the flag anew (a handler may have aborted it since it was last read)."""
    return signal.aborted


def clamp_max_tokens(
    model: Model, input_tokens: float | Callable[[], float], requested: int | None = None
) -> int | None:
    """pi-ai ``clampMaxTokensToContext`` (E4: near the window → 1), api/simple-options.js:13-23,
    as ``buildBaseOptions`` calls it for every ``streamSimple`` (line 36: ``requested``, the
    options' ``maxTokens``, else the model's): Pi's own requests, and an extension's
    ``complete`` with reasoning, which the bridge sends through ``streamSimple``
    (``targets/realpi/bridge.ts``, ``performRegistry``). ``input_tokens`` may be the estimate's
    thunk: pi-ai estimates only for a model with a window. A ``NaN`` estimate (a user text that
    is a number) makes ``maxTokens`` ``NaN``, which the provider leaves out (``if
    (options?.maxTokens)``, openai-completions.js:578): ``None``."""
    cap = model.max_tokens if requested is None else requested
    if model.context_window <= 0:
        return max(1, cap)
    tokens = input_tokens() if callable(input_tokens) else input_tokens
    if math.isnan(tokens):
        return None
    margin = max(4096, math.ceil(tokens * 0.15))
    room = model.context_window - tokens - margin
    if room < 32768:
        room = min(32768, model.context_window - tokens - 4096)
    return int(min(cap, max(1, room)))
