"""The simulated Pi 1.6 host: a scenario run on a deterministic port of Pi's ``AgentSession``.

Audience: the simulated target (``targets.sim``), the explorer and the ``simulate``/``replay``
commands. :func:`simulate` runs a whole scenario; :class:`Simulation` runs one operation at a
time. The host is ``agent_session``/``agent_loop`` (Pi's session and loop; the session's jobs in
``session_tools``, ``session_prompting``, ``session_runs``, ``session_compaction``,
``session_tree`` and ``session_model``), ``compaction`` and ``overflow``, ``session_manager``,
``settings``, ``model_service`` (the scripted model; pi-ai's provider in ``provider`` and
``provider_stream``), ``runner`` (the extension runner; the API objects in ``runner_api``),
``host`` (the process; its jobs in ``host_runtimes``: start, reload, new session, fork;
``host_bindings``: what an extension's ``pi``/``ctx`` calls reach; ``host_operations``: the
scenario's operations; ``host_shared``), ``virtual_loop`` and ``determinism``.

Compatibility, for one release (0.2): the names of the extension API (now
:mod:`pi_continuity_harness.api`) and of the scenario language (now
:mod:`pi_continuity_harness.scenario`) are still importable from here. Import them from their
own packages: these re-exports go in 0.3.
"""

from pi_continuity_harness.api.abort import AbortController, AbortError, AbortSignal
from pi_continuity_harness.api.events import (
    AgentEndEvent,
    AgentSettledEvent,
    AgentStartEvent,
    BeforeCompactResult,
    BeforeSwitchResult,
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    ContextUsage,
    InputEvent,
    InputResult,
    ModelSelectEvent,
    SessionBeforeCompactEvent,
    SessionBeforeSwitchEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionInfoChangedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from pi_continuity_harness.api.extension_api import (
    CONFIG_DIR_NAME,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    ExtensionFactory,
    ExtensionUIContext,
    Model,
    ModelRegistry,
    NotInitializedError,
    ReadonlySessionManager,
    StaleContextError,
    ToolDefinition,
    ToolResult,
)
from pi_continuity_harness.scenario.document import (
    Scenario,
    ScenarioError,
    load_scenario,
    parse_scenario,
    scenario_json_schema,
)
from pi_continuity_harness.scenario.implementations import ImplementationError, resolve_implementation
from pi_continuity_harness.scenario.model_script import ModelScript, Reply, SynthesisReply, Usage
from pi_continuity_harness.scenario.workspace import WorkdirError
from pi_continuity_harness.simulator.simulation import Simulation, SimulationResult, simulate

__all__ = [
    "CONFIG_DIR_NAME",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AgentEndEvent",
    "AgentSettledEvent",
    "AgentStartEvent",
    "BeforeCompactResult",
    "BeforeSwitchResult",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextUsage",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionFactory",
    "ExtensionUIContext",
    "ImplementationError",
    "InputEvent",
    "InputResult",
    "Model",
    "ModelRegistry",
    "ModelScript",
    "ModelSelectEvent",
    "NotInitializedError",
    "ReadonlySessionManager",
    "Reply",
    "Scenario",
    "ScenarioError",
    "SessionBeforeCompactEvent",
    "SessionBeforeSwitchEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionInfoChangedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "Simulation",
    "SimulationResult",
    "StaleContextError",
    "SynthesisReply",
    "ToolDefinition",
    "ToolResult",
    "TurnEndEvent",
    "TurnStartEvent",
    "Usage",
    "WorkdirError",
    "load_scenario",
    "parse_scenario",
    "resolve_implementation",
    "scenario_json_schema",
    "simulate",
]
