"""What the simulated process's modules share: its runtime, an operation's outcome, a refused start.

:class:`Runtime` is Pi's ``AgentSessionRuntime`` (agent-session-runtime.js:34: the settings,
the session and the extension runner of one session, replaced on reload, new session and fork);
:class:`OperationResult` what an RPC client learns of one operation (:mod:`.host_operations`);
:class:`ProcessStartError` the start real Pi refuses (main.js:824-829). Kept apart from :mod:`.host`
so that :mod:`.host_bindings` and :mod:`.host_operations` need not import the host itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.agent_session import AgentSession
from pi_continuity_harness.simulator.runner import ExtensionRunner
from pi_continuity_harness.simulator.session_manager import SessionManager
from pi_continuity_harness.simulator.settings import SettingsManager, TrustDecision

__all__ = ["OperationResult", "ProcessStartError", "Runtime"]


class ProcessStartError(SimulatorError, RuntimeError):
    """The simulated Pi process did not start: real Pi 1.6 prints ``Failed to load extension
    "<path>": Failed to load extension: <message>`` and exits 1 when an extension fails to load."""


@dataclass
class OperationResult:
    name: str
    ok: bool
    error: str | None = None
    disposition: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Runtime:
    trust: TrustDecision
    settings: SettingsManager
    session_manager: SessionManager
    session: AgentSession
    runner: ExtensionRunner
