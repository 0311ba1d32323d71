"""The language both targets play: scenarios, operations, the model script, faults, traces.

Audience: harness users and the two targets. A :class:`Scenario` (YAML, validated by
pydantic, JSON Schema at ``docs/schema/scenario.schema.json``) names the machine, the
extensions, the model script, the faults and the operations; the simulated host and the
real-Pi target play it the same way, from these same modules:

* :mod:`.document`: the scenario itself, loading, dumping and the JSON Schema;
* :mod:`.operations`: what the user does (prompts, commands with dialog answers, compaction,
  reload, restart, crash, model change, file edits);
* :mod:`.model_script`: the scripted model (replies, requests, request kinds) and
  :func:`~.model_script.respond`, which both the simulated model and the fake model server
  call; :mod:`.continuity_replies` writes the bodies Pi Session Continuity's synthesis calls get;
* :mod:`.faults` (fault plan data) and :mod:`.fs_monitor` (how both targets inject the
  filesystem faults into a Python implementation); :mod:`.competitors` (competing extensions);
* :mod:`.trace` (the trace record format), :mod:`.observed` (extension events as both targets
  record them), :mod:`.transcript` (message texts in Pi's words), :mod:`.timeline`;
* :mod:`.workspace` (a run's directories, ``edit_file``) and :mod:`.confine` (nothing a
  scenario says may touch a file outside its run); :mod:`.atomic_write` (a file written whole or not
  at all);
* :mod:`.implementations`: which implementation, and which system it implements;
* :mod:`.identity_memo`: what was made from an unchanging object, remembered by its identity
  (the simulated model's and the invariants' per-message work, once per run);
* :mod:`.session_id` (a scenario's session id, checked as Pi checks ``--session-id``) and
  :mod:`.session_import` (a real Pi session file turned into a scenario that replays it).
"""

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.document import (
    ExtensionRef,
    FileSpec,
    ModelSpec,
    Scenario,
    SettingsSpec,
    dump_scenario,
    load_scenario,
    parse_scenario,
    scenario_data,
    scenario_json_schema,
)
from pi_continuity_harness.scenario.faults import CrashRule, FaultPlan, FsFault, InjectRule, TamperRule
from pi_continuity_harness.scenario.implementations import (
    SYSTEMS,
    ImplementationError,
    System,
    implementation_module,
    implementation_system,
    resolve_implementation,
)
from pi_continuity_harness.scenario.model_script import (
    ROOT_MARK,
    HttpError,
    ModelRequest,
    ModelScript,
    Reply,
    RequestKind,
    ScriptedToolCall,
    SynthesisReply,
    Usage,
    expand_root,
)
from pi_continuity_harness.scenario.operations import (
    AbortOp,
    CommandOp,
    CompactOp,
    CrashOp,
    DialogAnswer,
    EditFileOp,
    NewSessionOp,
    Operation,
    PromptOp,
    ReloadOp,
    RestartOp,
    SetModelOp,
)
from pi_continuity_harness.scenario.session_import import SessionImportError, import_session, session_shape
from pi_continuity_harness.scenario.trace import TraceMatch

__all__ = [
    "ROOT_MARK",
    "SYSTEMS",
    "AbortOp",
    "CommandOp",
    "CompactOp",
    "CrashOp",
    "CrashRule",
    "DialogAnswer",
    "EditFileOp",
    "ExtensionRef",
    "FaultPlan",
    "FileSpec",
    "FsFault",
    "HttpError",
    "ImplementationError",
    "InjectRule",
    "ModelRequest",
    "ModelScript",
    "ModelSpec",
    "NewSessionOp",
    "Operation",
    "PromptOp",
    "ReloadOp",
    "Reply",
    "RequestKind",
    "RestartOp",
    "Scenario",
    "ScenarioError",
    "ScriptedToolCall",
    "SessionImportError",
    "SetModelOp",
    "SettingsSpec",
    "SynthesisReply",
    "System",
    "TamperRule",
    "TraceMatch",
    "Usage",
    "dump_scenario",
    "expand_root",
    "implementation_module",
    "implementation_system",
    "import_session",
    "load_scenario",
    "parse_scenario",
    "resolve_implementation",
    "scenario_data",
    "scenario_json_schema",
    "session_shape",
]
