"""PiTarget: the conformance suite against a real Pi process over RPC (1.6.0 by default, or any
release of :data:`~.install.SUPPORTED_PI_VERSIONS`; what each lacks: :mod:`.versions`).

``start(scenario)`` lays the workspace out as the simulator does (``agent/``, ``project/``,
``sessions/`` under the machine root, same agent settings, project settings and files; the
machine root is a padding directory of the work directory whose path is exactly as long as the
simulator's, and ``PI_PACKAGE_DIR`` is a link in it: ``scenario/layout.py``),
writes ``models.json`` for the scenario's models (a provider whose models have
``auth: false`` gets no ``apiKey``), starts the :class:`FakeModelServer` with the scenario's
model script, and starts ``pi --mode rpc`` with the observer extension first, then the
scenario's extensions in order:

* the implementation under test: a ``.ts``/``.js`` path is loaded directly with ``-e``; any
  other spec (``module:factory``, an entry-point name, a factory object) runs in Python
  through the bridge (``bridge.ts`` + :mod:`.bridge_runtime`);
* a competitor behaviour: ``competitors.ts``, the TypeScript twin of
  ``scenario/competitors.py``;
* ``module:`` extensions: through the bridge.

Each extension slot is a generated wrapper that does not change from run to run (so jiti's
transpile cache serves it: :mod:`.wrappers`); a bridge slot's options are in
``<machine>/harness-extensions/<slot>.json``.

Operations are RPC commands (a reload is the observer's ``/harness-reload`` command; so is a new
session on the releases whose RPC ``new_session`` runs ``session_start`` twice; a restart
closes stdin and starts Pi again with ``--session <file>`` and no ``--model``, so Pi restores
the session's model; a crash is SIGKILL to Pi's process group). Each operation waits until Pi
is quiet (``agent_settled`` for runs, then idle and no events for a short quiet period).
Operations a held model reply asks for (``during``) run from the fake server's ``on_hold``
without waiting for the held run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, assert_never
from urllib.parse import quote, unquote, urlsplit

from pi_continuity_harness import __version__
from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.confine import ConfinementError
from pi_continuity_harness.scenario.document import ModelSpec, Scenario, ScenarioError
from pi_continuity_harness.scenario.field_path import field_path
from pi_continuity_harness.scenario.fs_monitor import fs_event
from pi_continuity_harness.scenario.implementations import (
    SESSION_CONTINUITY,
    declared_system,
    resolve_implementation,
    system_named,
)
from pi_continuity_harness.scenario.layout import machine_root
from pi_continuity_harness.scenario.model_script import (
    ExtensionReplies,
    ModelOutcome,
    ModelRequest,
    Reply,
    RequestKind,
    ScriptedToolCall,
    SynthesisReply,
)
from pi_continuity_harness.scenario.operations import (
    TREE_COMMAND,
    AbortOp,
    BashOp,
    ClearQueueOp,
    CloneOp,
    CommandOp,
    CompactOp,
    CrashOp,
    CycleModelOp,
    CycleThinkingLevelOp,
    DialogAnswer,
    EditFileOp,
    ForkOp,
    NewSessionOp,
    Operation,
    PromptOp,
    ReloadOp,
    RestartOp,
    SetAutoCompactionOp,
    SetAutoRetryOp,
    SetFollowUpModeOp,
    SetModelOp,
    SetSessionNameOp,
    SetSteeringModeOp,
    SetThinkingLevelOp,
    SwitchSessionOp,
    TreeOp,
    bash_command_id,
    no_fork_message,
    no_tree_message,
    operation_name,
    pick_fork_message,
    switch_session_target,
)
from pi_continuity_harness.scenario.tool_confinement import served_call_problem, tool_calls_real_pi_refuses
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.scenario.workspace import (
    EditFileError,
    HostPaths,
    apply_edit,
    prepare_files,
    prepare_workdir,
    write_json,
)
from pi_continuity_harness.targets.realpi.bridge_zygote import BridgeZygote, bridge_zygote
from pi_continuity_harness.targets.realpi.cache_prune import prune_stale_bytecode
from pi_continuity_harness.targets.realpi.environment import (
    FAKE_API_KEY,
    OBSERVER_PATH,
    FakeModel,
    PiEnvironment,
    provider_json,
)
from pi_continuity_harness.targets.realpi.fake_server import FakeModelServer
from pi_continuity_harness.targets.realpi.install import (
    PiInstallation,
    PiInstallError,
    bytecode_cache_env,
    check_pi_version,
    find_installation,
    install_pi,
)
from pi_continuity_harness.targets.realpi.rpc_client import (
    AnswerRules,
    PiProcessExitedError,
    PiRpcError,
    PiRpcProcess,
    PiRpcTimeoutError,
    RpcEvent,
)
from pi_continuity_harness.targets.realpi.versions import profile_for
from pi_continuity_harness.targets.realpi.wrappers import (
    BRIDGE_PATH,
    COMPETITORS_PATH,
    SLOTS_ENV,
    bridge_wrapper,
    competitor_wrapper,
)
from pi_continuity_harness.targets.target import (
    CAPABILITIES,
    CheckedRun,
    HeldOutcome,
    Observation,
    ObservedRequest,
    OperationOutcome,
    TargetBudgetError,
    TargetStartError,
    TargetUnavailableError,
)

__all__ = ["BRIDGE_PATH", "COMPETITORS_PATH", "PiStartError", "PiTarget", "normalise_session_event"]

_TS_SUFFIXES = (".ts", ".mts", ".js", ".mjs")
_RELOAD_COMMAND = "harness-reload"
_NEW_SESSION_COMMAND = "harness-new-session"
_SWITCH_SESSION_COMMAND = "harness-switch-session"
_FORK_COMMAND = "harness-fork"
#: Observer log lines that are the harness's own bookkeeping, not extension events.
_OBSERVER_BOOKKEEPING = frozenset(
    {
        "observer_loaded",
        "harness_reload",
        "harness_new_session",
        "harness_switch_session",
        "harness_fork",
        "harness_session_file",
    }
)
#: The ``extensionPath`` of an error thrown by the observer's own commands (a refused
#: ``ctx.reload()``): how the target learns an operation's outcome, not something the
#: implementation or Pi did to it, so the observation leaves it out (the simulator has no such
#: command: its reload is an operation of the host).
_HARNESS_COMMAND_PATHS = frozenset(
    f"command:{name}"
    for name in (_RELOAD_COMMAND, _NEW_SESSION_COMMAND, _SWITCH_SESSION_COMMAND, _FORK_COMMAND)
)
_QUIET_S = 0.05
#: The RPC field that carries an operation's value, for the operations that are one RPC command
#: of the operation's own name (the others carry none).
_RPC_VALUE_FIELD: dict[type, str] = {
    SetAutoCompactionOp: "enabled",
    SetAutoRetryOp: "enabled",
    SetSessionNameOp: "name",
    SetSteeringModeOp: "mode",
    SetFollowUpModeOp: "mode",
    SetThinkingLevelOp: "level",
}
#: Bytecode caches this process has offered to prune (:func:`prune_stale_bytecode`).
_PRUNED: set[str] = set()
#: Verified installations per Pi version, per process (verifying runs ``node --version`` and
#: ``pi --version``).
_INSTALLATIONS: dict[str, PiInstallation] = {}
_LOAD_FAILURE = re.compile(r'Failed to load extension "(?P<path>[^"]+)": (?P<rest>.*)$')
#: The operations that are RPC commands to a running Pi (restart and file edits are not).
_RpcOperation = (
    PromptOp
    | CommandOp
    | CompactOp
    | AbortOp
    | ClearQueueOp
    | ReloadOp
    | CrashOp
    | SetModelOp
    | SetAutoCompactionOp
    | SetAutoRetryOp
    | SetSteeringModeOp
    | SetThinkingLevelOp
    | SetSessionNameOp
    | CycleModelOp
    | CycleThinkingLevelOp
    | SetFollowUpModeOp
    | NewSessionOp
    | ForkOp
    | CloneOp
    | SwitchSessionOp
    | TreeOp
    | BashOp
)
_DROPPED_EVENTS = frozenset(
    {"message_start", "message_update", "tool_execution_update", "extension_ui_request", "response"}
)


#: Entry-point group of each system's observed checker (``explore.observed``).
OBSERVED_CHECKERS_GROUP = "pi_continuity_harness.observed_checkers"


def _no_liveness(first_healed_operation: int) -> str | None:
    return "liveness is not judged on real Pi: faults are not healed there"


class PiStartError(TargetStartError):
    """Pi exited or hung at startup (real Pi 1.6 refuses to start when an ``-e`` extension fails
    to load). The first line is Pi's reason (``Failed to load extension "<name>": ...``, with the
    harness wrapper path replaced by the extension's name, as in ``extension_error``); the rest
    carries Pi's stderr."""


def _is_typescript(spec: Any) -> bool:
    return isinstance(spec, (str, Path)) and str(spec).endswith(_TS_SUFFIXES) and not is_package_spec(spec)


#: ``--extension pkg:<pi source>``: the implementation is a Pi package that ``pi install <source>``
#: installs into each scenario's agent directory, as a user installs it; Pi loads it from its
#: settings, not from ``-e`` (the release gate, issue 13).
PACKAGE_PREFIX = "pkg:"


def is_package_spec(spec: Any) -> bool:
    """Whether ``spec`` names an installed Pi package (``pkg:npm:name@1.2.3``)."""
    return isinstance(spec, str) and spec.startswith(PACKAGE_PREFIX)


def _factory_spec(implementation: str | ExtensionFactory | Path) -> str:
    if isinstance(implementation, (str, Path)):
        return str(implementation)
    module = getattr(implementation, "__module__", None)
    qualname = getattr(implementation, "__qualname__", "")
    if not module or "<locals>" in qualname or "<lambda>" in qualname:
        raise TargetUnavailableError(
            f"{implementation!r} cannot be loaded by name in the bridge process; pass 'module:factory' "
            "naming a module-level factory"
        )
    return f"{module}:{qualname}"


def normalise_session_event(data: dict[str, Any]) -> dict[str, Any] | None:
    """An RPC event in the simulator's session-event shape (None: not a session event)."""
    kind = str(data.get("type", ""))
    if kind in _DROPPED_EVENTS or kind.startswith("_"):
        return None
    if kind in ("agent_start", "turn_start", "turn_end"):
        return {"type": kind}
    if kind == "agent_end":
        return {"type": kind, "willRetry": bool(data.get("willRetry"))}
    if kind == "agent_settled":
        return {"type": kind, "aborted": bool(data.get("aborted"))}
    if kind == "message_end":
        message = data.get("message") or {}
        out: dict[str, Any] = {"type": kind, "role": message.get("role")}
        if message.get("role") == "assistant":
            out["stopReason"] = message.get("stopReason")
            out["totalTokens"] = (message.get("usage") or {}).get("totalTokens")
        text = content_text(message.get("content")) if message.get("role") != "system" else ""
        if text:
            out["text"] = text[:80]
        return out
    if kind == "tool_execution_start":
        return {"type": kind, "toolName": data.get("toolName")}
    if kind == "tool_execution_end":
        return {"type": kind, "toolName": data.get("toolName"), "isError": bool(data.get("isError"))}
    if kind == "compaction_start":
        return {"type": kind, "reason": data.get("reason")}
    if kind == "compaction_end":
        out = {
            "type": kind,
            "reason": data.get("reason"),
            "aborted": bool(data.get("aborted")),
            "willRetry": bool(data.get("willRetry")),
        }
        if data.get("errorMessage"):
            out["errorMessage"] = data.get("errorMessage")
        result = data.get("result")
        if isinstance(result, dict):
            summary = result.get("summary")
            out["result"] = {
                "firstKeptEntryId": result.get("firstKeptEntryId"),
                "tokensBefore": result.get("tokensBefore"),
                "estimatedTokensAfter": result.get("estimatedTokensAfter"),
                "summaryChars": len(summary) if isinstance(summary, str) else None,
                "summary": summary,  # resolved to fromExtension by observe(), then dropped
            }
        return out
    if kind == "queue_update":
        steering, follow_up = data.get("steering"), data.get("followUp")
        return {
            "type": kind,
            "steering": len(steering) if isinstance(steering, list) else int(steering or 0),
            "followUp": len(follow_up) if isinstance(follow_up, list) else int(follow_up or 0),
        }
    if kind == "extension_error":
        return {
            "type": kind,
            "extensionPath": data.get("extensionPath"),
            "event": data.get("event"),
            "error": data.get("error"),
        }
    if kind == "entry_appended":
        entry = data.get("entry") or {}
        out = {"type": kind, "entryType": entry.get("type"), "id": entry.get("id")}
        if entry.get("type") == "context_edit":
            out["targetId"] = entry.get("targetId")
        if entry.get("type") == "custom":
            out["customType"] = entry.get("customType")
        return out
    if kind == "auto_retry_start":
        return {
            "type": kind,
            "attempt": data.get("attempt"),
            "maxAttempts": data.get("maxAttempts"),
            "delayMs": data.get("delayMs"),
            "errorMessage": data.get("errorMessage"),
        }
    if kind == "auto_retry_end":
        out = {"type": kind, "success": bool(data.get("success")), "attempt": data.get("attempt")}
        if data.get("finalError"):
            out["finalError"] = data.get("finalError")
        return out
    return dict(data)


def _switch_outcome(name: str, response: dict[str, Any]) -> OperationOutcome:
    """A session switch's RPC response (``new_session``, ``fork``) as an outcome: refused with
    Pi's error, ``cancelled`` when an extension's ``session_before_*`` cancelled it."""
    if not response.get("success"):
        return OperationOutcome(name, False, response.get("error"))
    if (response.get("data") or {}).get("cancelled"):
        return OperationOutcome(name, False, "cancelled")
    return OperationOutcome(name, True)


class PiTarget:
    """A real Pi process behind the Target seam: ``pi_version`` (default the pinned 1.6.0, or the
    given ``installation``'s) names the release, which decides the host capabilities."""

    name = "pi"

    def __init__(
        self,
        implementation: str | ExtensionFactory | Path = "reference",
        workdir: str | Path = "pi-run",
        *,
        installation: PiInstallation | None = None,
        install: bool = True,
        python: str | None = None,
        python_path: Sequence[str] | None = None,
        timeout: float = 60.0,
        held_op_timeout: float = 15.0,
        extra_env: dict[str, str] | None = None,
        system: str | None = None,
        budget: BudgetOverride | None = None,
        pi_version: str | None = None,
    ) -> None:
        self._budget = budget
        self._implementation = implementation
        if installation is not None and pi_version is not None and installation.pi_version != pi_version:
            raise ValueError(f"pi_version {pi_version} but the installation is Pi {installation.pi_version}")
        self._pi_version = check_pi_version(
            pi_version if pi_version is not None else (installation.pi_version if installation else None)
        )
        self._profile = profile_for(self._pi_version)
        self._system = system
        self._workdir = Path(workdir)
        self._installation = installation
        self._install = install
        self._python = python or sys.executable
        self._python_path = list(python_path) if python_path is not None else [p for p in sys.path if p]
        self._timeout = timeout
        self._held_op_timeout = held_op_timeout
        self._extra_env = dict(extra_env or {})
        self._rules = AnswerRules()
        self._rules.hold = self._on_dialog_hold
        self._scenario: Scenario | None = None
        self._server: FakeModelServer | None = None
        self._env: PiEnvironment | None = None
        self._paths: HostPaths | None = None
        self._extensions: list[tuple[Path, str]] = []
        #: Package mode: where the installed package sits among the slots (the ones before it
        #: load with ``-e``, the ones after it from the settings, after the package).
        self._package_position: int | None = None
        self._procs: list[PiRpcProcess] = []
        #: The observer's line count when the current process started (``_previous_session_file``).
        self._process_observer_mark = 0
        self._proc: PiRpcProcess | None = None
        self._outcomes: list[OperationOutcome] = []
        self._held: list[HeldOutcome] = []
        self._session_file: str | None = None
        self._session_id: str | None = None
        self._crashed = False
        #: The ``bash`` operations sent in this run, which number their RPC ids (``bash_command_id``).
        self._bash_commands = 0
        self._started_at: float | None = None
        #: Whether a slot is a Python extension (hosted by a bridge), and the zygote its
        #: bridges fork from (:mod:`.bridge_zygote`; None: fresh bridge processes).
        self._bridge_slots = False
        self._zygote: BridgeZygote | None = None

    # ------------------------------------------------------------------ identity
    @property
    def implementation(self) -> str:
        return _factory_spec(self._implementation)

    def _replies(self) -> ExtensionReplies:
        """How the fake server writes extension replies: the writer of the implementation's system
        (``system``, else what a Python factory declares; a TypeScript file declares none)."""
        if self._system is not None:
            return system_named(self._system).extension_replies
        if _is_typescript(self._implementation) or is_package_spec(self._implementation):
            return SESSION_CONTINUITY.extension_replies
        _name, factory = resolve_implementation(_factory_spec(self._implementation))
        return declared_system(factory).extension_replies

    @property
    def bridged(self) -> bool:
        """True when the implementation under test runs in Python through the bridge (an
        installed package is taken for what it is: TypeScript, whatever it hosts)."""
        return not _is_typescript(self._implementation) and not is_package_spec(self._implementation)

    @property
    def pi_version(self) -> str:
        """The Pi release this target drives."""
        return self._pi_version

    def capabilities(self) -> frozenset[str]:
        caps = {"crash", "held-model-calls", "held-dialogs", "observed-checker"} | set(
            self._profile.capabilities
        )
        if self.bridged:
            caps |= {"python-implementation", "fs-faults"}
        assert caps <= set(CAPABILITIES)
        return frozenset(caps)

    @property
    def process(self) -> PiRpcProcess:
        if self._proc is None:
            raise RuntimeError("the target has not been started")
        return self._proc

    @property
    def server(self) -> FakeModelServer:
        if self._server is None:
            raise RuntimeError("the target has not been started")
        return self._server

    @property
    def paths(self) -> HostPaths:
        if self._paths is None:
            raise RuntimeError("the target has not been started")
        return self._paths

    @property
    def fault_records_path(self) -> Path:
        return Path(self.paths.workdir) / "fs-records.jsonl"

    def fs_records(self) -> list[dict[str, Any]]:
        """The bridge's filesystem records (``fs`` operations and ``fault`` firings)."""
        path = self.fault_records_path
        if not path.exists():
            return []
        return [json.loads(line) for line in jsonl_lines(path.read_text(encoding="utf-8")) if line.strip()]

    # ------------------------------------------------------------------ start
    def _find_installation(self) -> PiInstallation:
        if self._installation is not None:
            return self._installation
        version = self._pi_version
        cached = _INSTALLATIONS.get(version)
        if cached is not None and cached.node_path.exists() and cached.pi_cli_path.exists():
            self._installation = cached
            return cached
        try:
            found = find_installation(version=version)
            if found is None and self._install:
                found = install_pi(version=version)
        except PiInstallError as error:
            raise TargetUnavailableError(f"real Pi {version} is not available: {error}") from error
        if found is None:
            raise TargetUnavailableError(
                f"real Pi {version} is not installed (run pi-continuity-harness install-pi --pi-version {version})"
            )
        _INSTALLATIONS[version] = found
        self._installation = found
        return found

    def start(self, scenario: Scenario) -> None:
        if scenario.mode != "rpc":
            raise TargetUnavailableError(
                f"the real-Pi target drives Pi over RPC; scenario mode {scenario.mode!r} cannot be observed"
            )
        # Pi's machine sits in a padding directory of the run directory, at a path exactly as
        # long as the simulator's virtual root (``scenario/layout.py``); checked before anything
        # is installed or written, so a run directory too long to pad is refused with nothing changed.
        machine_root(self._workdir.resolve())
        self._bash_commands = 0
        refused = [
            f"{scenario.name}: {field_path(where)}: {why}"
            for where, why in tool_calls_real_pi_refuses(scenario)
        ]
        if refused:
            raise ScenarioError("\n".join(refused))
        installation = self._find_installation()
        if self._budget is not None:
            scenario = scenario.model_copy(update={"budget": self._budget.apply(scenario.budget)})
        self._scenario = scenario
        self._started_at = time.monotonic()
        root = machine_root(prepare_workdir(self._workdir))
        root.mkdir(parents=True, exist_ok=True)
        self._paths = HostPaths.under(str(root))
        try:
            self._server = FakeModelServer(
                scenario.model,
                replies=self._replies(),
                on_hold=self._on_hold,
                refuse=self._refused_call,
                # Pi shows the real path (``process.cwd()``), with no symbolic link in it.
                root=os.path.realpath(self._paths.workdir),
            )
            base_url = self._server.start()
            active = scenario.active
            self._env = PiEnvironment(
                installation,
                base_url,
                [FakeModel(active.id.partition("/")[2], active.context_window, active.max_tokens)],
                root=root,
                trust=None,
                extra_env={**self._bridge_env(), SLOTS_ENV: str(root / "harness-extensions")},
            )
            self._lay_out(scenario, base_url)
            self._extensions = self._extension_slots(scenario, root)
            if is_package_spec(self._implementation):
                self._install_package(str(self._implementation).removeprefix(PACKAGE_PREFIX))
                self._load_after_package()
            self._start_process(session=None, model=active.id, session_id=scenario.session_id)
        except BaseException:
            self.close()
            raise

    def _refused_call(self, call: ScriptedToolCall) -> str | None:
        """Why the model server must not send ``call`` to this Pi (``tool_confinement``): real Pi
        runs the tools for real, so each call's paths must stay in the run and a ``bash``
        command may run only the programs the harness lets a scenario run."""
        return served_call_problem(call.name, call.arguments, self.paths.project_dir, self.paths.workdir)

    def _install_package(self, source: str) -> None:
        """``pi install <source>`` in this scenario's agent directory, as a user installs it: npm's
        registry from ``PI_HARNESS_NPM_REGISTRY`` (the gate's Verdaccio on 127.0.0.1). ``pi
        install`` ignores ``PI_OFFLINE`` (``dist/core/package-manager.js:1129-1131`` checks it only
        when resolving a missing package), so Pi stays offline and npm reaches the registry."""
        assert self._env is not None and self._installation is not None
        env = self._env.env()
        registry = os.environ.get("PI_HARNESS_NPM_REGISTRY")
        if registry:
            env["npm_config_registry"] = registry
        env["npm_config_cache"] = str(self._installation.cache_dir / "npm-cache")
        env["npm_config_update_notifier"] = "false"
        done = subprocess.run(
            self._installation.argv("install", source),
            env=env,
            cwd=self.paths.project_dir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise PiStartError(
                f"pi install {source} failed ({done.returncode}): {(done.stdout + done.stderr).strip()}"
            )

    def _load_after_package(self) -> None:
        """Pi loads every ``-e`` extension before the packages of its settings
        (``dist/core/resource-loader.js:426``: ``mergePaths(cliEnabledExtensions,
        enabledExtensions)``), so an extension the scenario loads *after* the implementation
        becomes a local-path package entry listed after the installed package (package resources
        keep settings order, ``package-manager.js:77-85``)."""
        if self._package_position is None:
            return
        after = [str(path) for path, _name in self._extensions[self._package_position :]]
        if not after:
            return
        settings_path = Path(self.paths.agent_dir) / "settings.json"
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
        settings["packages"] = [*settings.get("packages", []), *after]
        write_json(settings_path, settings)

    def _bridge_env(self) -> dict[str, str]:
        bytecode = bytecode_cache_env(self._find_installation().cache_dir)
        prefix = bytecode["PYTHONPYCACHEPREFIX"]
        if prefix not in _PRUNED:  # once per process, and at most once a day (cache_prune.py)
            _PRUNED.add(prefix)
            prune_stale_bytecode(Path(prefix))
        env = {
            "PI_HARNESS_PYTHON": self._python,
            "PYTHONPATH": os.pathsep.join(self._python_path),
            **bytecode,
        }
        env.update(self._extra_env)
        return env

    def _lay_out(self, scenario: Scenario, base_url: str) -> None:
        """The simulator's layout (:func:`prepare_files`) plus models.json for the fake server."""
        prepare_files(self.paths, scenario)
        by_provider: dict[str, list[ModelSpec]] = {}
        for spec in scenario.models:
            by_provider.setdefault(spec.id.partition("/")[0], []).append(spec)
        # Each provider its own path on the fake server (``<base>/<provider>/chat/completions``):
        # the wire names the model by its id alone, the path tells its provider
        # (:meth:`_with_full_model_id`), also for a model the scenario does not declare.
        providers = {
            provider: provider_json(
                f"{base_url}/{quote(provider, safe='')}",
                [
                    FakeModel(
                        m.id.partition("/")[2], m.context_window, m.max_tokens, m.reasoning, input=m.input
                    )
                    for m in specs
                ],
                FAKE_API_KEY if all(m.auth for m in specs) else None,
            )
            for provider, specs in by_provider.items()
        }
        write_json(Path(self.paths.agent_dir) / "models.json", {"providers": providers})

    def _extension_slots(self, scenario: Scenario, root: Path) -> list[tuple[Path, str]]:
        """The wrappers (:mod:`.wrappers`), in load order, with the name the simulator reports for
        each; a bridge slot's options go to ``<machine>/harness-extensions/<slot>.json``."""
        directory = root / "harness-extensions"
        directory.mkdir(parents=True, exist_ok=True)
        cache_dir = self._find_installation().cache_dir
        slots: list[tuple[Path, str]] = []
        for index, ref in enumerate(scenario.extensions):
            if ref.implementation:
                if is_package_spec(self._implementation):
                    # Loaded from the settings once installed: the slots after it follow it there.
                    self._package_position = len(slots)
                    continue
                if _is_typescript(self._implementation):
                    path = Path(str(self._implementation)).resolve()
                    slots.append((path, str(self._implementation)))
                    continue
                spec = _factory_spec(self._implementation)
                plan = self._write_fs_plan(root, scenario)
                options = {"spec": spec, "slot": f"{index}-impl", "faults": str(plan)}
                self._bridge_slots = True
                slots.append((bridge_wrapper(cache_dir, directory, f"{index}-impl", options), spec))
            elif ref.competitor is not None:
                path = competitor_wrapper(cache_dir, f"{index}-competitor-{ref.competitor}", ref.competitor)
                slots.append((path, f"competitor:{ref.competitor}"))
            elif ref.module is not None:
                options = {"spec": ref.module, "slot": f"{index}-module"}
                self._bridge_slots = True
                slots.append((bridge_wrapper(cache_dir, directory, f"{index}-module", options), ref.module))
        return slots

    def _write_fs_plan(self, root: Path, scenario: Scenario) -> Path:
        """The bridge's filesystem plan for the implementation under test: its file operations
        are recorded (``fs_events``) and the scenario's fs faults, if any, injected."""
        paths = self.paths
        plan = {
            "workdir": paths.workdir,
            "placeholders": {
                "$PROJECT": paths.project_dir,
                "$AGENT": paths.agent_dir,
                "$SESSIONS": paths.session_dir,
            },
            "faults": [f.model_dump(by_alias=True) for f in scenario.faults.fs],
            "records": str(self.fault_records_path),
        }
        path = root / "harness-extensions" / "fs-faults.json"
        write_json(path, plan)
        return path

    def _argv(self, *, session: str | None, model: str | None, session_id: str | None = None) -> list[str]:
        assert self._installation is not None and self._scenario is not None
        args = ["--mode", "rpc"]
        if session_id is not None:
            # The scenario's ``session_id`` (main.js:383-390: no session with that id in the
            # project yet, so Pi warns on stderr and creates one with it).
            args += ["--session-id", session_id]
        if model is not None:
            args += ["--model", model]
            if self._scenario.thinking_level != "off" and session is None:
                args += ["--thinking", self._scenario.thinking_level]
        args += ["-e", str(OBSERVER_PATH)]
        cli = (
            self._extensions if self._package_position is None else self._extensions[: self._package_position]
        )
        for path, _name in cli:
            args += ["-e", str(path)]
        if self._scenario.approve is True:
            args.append("--approve")
        elif self._scenario.approve is False:
            args.append("--no-approve")
        if session is not None:
            args += ["--session", session]
        elif self._scenario.session == "memory":
            args.append("--no-session")
        return self._installation.argv(*args)

    def _start_process(
        self, *, session: str | None, model: str | None, session_id: str | None = None
    ) -> None:
        assert self._env is not None
        env = self._env.env()
        zygote = self._bridge_zygote(env)
        if zygote is not None:
            env.update(zygote.env())
        proc = PiRpcProcess(
            self._argv(session=session, model=model, session_id=session_id),
            env=env,
            cwd=self.paths.project_dir,
            default_timeout=self._timeout,
            dialog_answerer=self._rules,
            companions=zygote,
        )
        self._procs.append(proc)
        self._proc = proc
        # The observer's lines from here on are this process's (``_previous_session_file``).
        self._process_observer_mark = len(self._env.observer_events())
        try:
            proc.start(timeout=self._timeout)
        except PiRpcError as error:
            raise PiStartError(self._start_failure(proc, error)) from error
        self._crashed = False
        self._refresh_state()
        with contextlib.suppress(PiRpcError):
            proc.wait_idle(self._timeout, quiet=_QUIET_S)

    def _bridge_zygote(self, env: dict[str, str]) -> BridgeZygote | None:
        """The zygote this scenario's bridges fork from, when a slot is a Python extension and
        ``PI_HARNESS_FRESH_BRIDGE`` is not set: started with what a bridge's Python reads when
        it starts (Pi's ``PATH``, ``LANG``, ``TMPDIR``, ``USER`` and the bridge's variables),
        shared by every target of this process that starts bridges the same way."""
        if not self._bridge_slots:
            return None
        if self._zygote is None or not self._zygote.alive:
            startup: dict[str, str] = {k: env[k] for k in ("PATH", "LANG", "TMPDIR", "USER") if k in env}
            self._zygote = bridge_zygote(self._python, {**startup, **self._bridge_env()})
        return self._zygote

    def _start_failure(self, proc: PiRpcProcess, error: PiRpcError) -> str:
        """Pi's own reason first (its ``Error: Failed to load extension "<path>": ...`` line, with
        the slot's name for the path), then the RPC error with stderr."""
        names = {str(path): name for path, name in self._extensions}
        for line in proc.stderr_text.splitlines():
            match = _LOAD_FAILURE.search(line)
            if match:
                path = match.group("path")
                return f'Failed to load extension "{names.get(path, path)}": {match.group("rest")}\n{error}'
        return f"Pi did not start: {error}"

    def _refresh_state(self) -> None:
        proc = self._proc
        if proc is None or not proc.alive:
            return
        with contextlib.suppress(PiRpcError):
            state = proc.get_state(timeout=self._timeout)
            self._session_file = state.get("sessionFile") or self._session_file
            self._session_id = state.get("sessionId") or self._session_id

    # ------------------------------------------------------------------ operations
    def perform(self, op: Operation) -> OperationOutcome:
        self._check_budget(op, None)
        try:
            outcome = self._run(op, during=False)
        except PiRpcTimeoutError as error:
            self._check_budget(op, error)
            raise
        self._outcomes.append(outcome)
        return outcome

    # ------------------------------------------------------------------ budget
    def _remaining(self) -> float:
        """Wall-clock seconds the scenario may still use (``scenario.budget.wall_seconds``)."""
        if self._scenario is None or self._started_at is None:
            return float("inf")
        return self._scenario.budget.wall_seconds - (time.monotonic() - self._started_at)

    def _op_timeout(self) -> float:
        """How long one wait may last: the per-wait timeout, cut to what the budget has left."""
        return max(0.001, min(self._timeout, self._remaining()))

    def _check_budget(self, op: Operation, error: PiRpcTimeoutError | None) -> None:
        """Raise :class:`TargetBudgetError` once the wall-clock budget is spent, naming it,
        the operation and the last events Pi sent."""
        if self._remaining() > 0 or self._scenario is None:
            return
        index = len(self._outcomes)
        events = self._proc.events[-8:] if self._proc is not None else []
        last = "".join(f"  {json.dumps(e.data, ensure_ascii=False)[:200]}\n" for e in events) or "  none\n"
        waited = f" (waiting: {str(error).splitlines()[0]})" if error is not None else ""
        raise TargetBudgetError(
            f"{self._scenario.name}: the wall-clock budget of {self._scenario.budget.wall_seconds:g} s "
            f"ran out{waited}.\nstill running: operation {index} {operation_name(op)}\n"
            f"last events from Pi:\n{last}"
        ) from error

    def _run(self, op: Operation, *, during: bool) -> OperationOutcome:
        name = operation_name(op)
        if isinstance(op, RestartOp):
            return self._restart(name)
        if isinstance(op, EditFileOp):
            try:
                apply_edit(self.paths, op.edit_file)
            except (ConfinementError, EditFileError, OSError) as error:
                return OperationOutcome(name, False, str(error))
            return OperationOutcome(name, True)
        proc = self._proc
        if proc is None or self._crashed or not proc.alive:
            return OperationOutcome(name, False, "Pi is not running")
        try:
            outcome = self._dispatch(proc, op, name, during=during)
        except PiRpcTimeoutError as error:
            if not during:
                raise
            # An operation of a held reply that waits on the held call itself: release the call.
            return OperationOutcome(name, False, str(error).splitlines()[0])
        except PiProcessExitedError:
            if self._proc is not proc and self._proc is not None and self._proc.alive:
                return OperationOutcome(name, True)  # a held reply restarted Pi meanwhile
            self._crashed = True
            if not during:
                self._wait_for_held_calls_to_end()
            return OperationOutcome(name, False, "Pi crashed")
        if proc.returncode is not None and not isinstance(op, CrashOp) and self._proc is proc:
            self._crashed = True
            if not during:
                self._wait_for_held_calls_to_end()
            return OperationOutcome(name, False, "Pi crashed")
        if not during:
            if proc.alive and proc.wait_for_held_answers(self._op_timeout()):
                self._settle(proc, during)  # what the held dialogs' operations started
            if proc.alive and self._wait_for_held_replies():
                self._settle(proc, during)  # what the held replies' operations started
            self._refresh_state()
        return outcome

    def _settle(self, proc: PiRpcProcess, during: bool) -> None:
        if not during:
            proc.wait_idle(self._op_timeout(), quiet=_QUIET_S)
            self._wait_for_bridge(proc)

    def _wait_for_bridge(self, proc: PiRpcProcess) -> None:
        """After idle and quiet, also wait for the Python bridge: an extension command that
        switches sessions (sent from a settled handler) shows no RPC event until the new
        session's run starts, so a quiet window alone can end in the middle of it."""
        deadline = time.monotonic() + self._op_timeout()
        while self._env is not None and self._env.bridge_busy() and time.monotonic() < deadline:
            time.sleep(_QUIET_S)
            proc.wait_idle(self._op_timeout(), quiet=_QUIET_S)

    def _dispatch(
        self, proc: PiRpcProcess, op: _RpcOperation, name: str, *, during: bool
    ) -> OperationOutcome:
        """One RPC command (or the process kill) for ``op``, until Pi is quiet again."""
        timeout = self._held_op_timeout if during else self._op_timeout()
        match op:
            case PromptOp():
                if not during:
                    self._rules.set(())
                images = [image.to_content() for image in op.prompt.images]
                return self._prompt(
                    proc, name, op.prompt.render(), op.prompt.streaming_behavior, (), during, images
                )
            case CommandOp():
                if not op.command.wait:
                    # ``wait: false``: write the command line and go on; Pi runs the handler up to
                    # its first await before it reads the next line (rpc-mode.js:318-343), and its
                    # response (when the handler returns) is left unread.
                    proc.send_nowait({"type": "prompt", "message": op.command.text})
                    return OperationOutcome(name, True)
                return self._prompt(proc, name, op.command.text, None, op.command.answers, during)
            case CompactOp():
                response = proc.compact(op.compact.custom_instructions, timeout=timeout)
                self._settle(proc, during)
                return OperationOutcome(name, bool(response.get("success")), response.get("error"))
            case AbortOp():
                response = proc.abort(timeout=timeout)
                self._settle(proc, during)
                return OperationOutcome(name, bool(response.get("success")), response.get("error"))
            case ReloadOp():
                seq = proc.event_seq
                outcome = self._prompt(proc, name, f"/{_RELOAD_COMMAND}", None, (), during)
                errors = [
                    e.data
                    for e in proc.events_since(seq)
                    if e.type == "extension_error"
                    and e.data.get("extensionPath") == f"command:{_RELOAD_COMMAND}"
                ]
                if errors:
                    return OperationOutcome(name, False, str(errors[0].get("error")))
                return OperationOutcome(name, outcome.ok, outcome.error)
            case CrashOp():
                proc.kill()
                self._crashed = True
                return OperationOutcome(name, True)
            case SetModelOp():
                provider, _, model_id = op.set_model.partition("/")
                response = proc.set_model(provider, model_id, timeout=timeout)
                self._settle(proc, during)
                return OperationOutcome(name, bool(response.get("success")), response.get("error"))
            case (
                ClearQueueOp()
                | SetAutoCompactionOp()
                | SetAutoRetryOp()
                | SetSessionNameOp()
                | SetSteeringModeOp()
                | SetFollowUpModeOp()
                | CycleModelOp()
                | CycleThinkingLevelOp()
                | SetThinkingLevelOp()
            ):
                # One RPC command named as the operation, its value (if any) under Pi's field name
                # (rpc-mode.js:357-359, :397-454, :537-544).
                sent: dict[str, Any] = {"type": name}
                field = _RPC_VALUE_FIELD.get(type(op))
                if field is not None:
                    sent[field] = getattr(op, name)
                response = proc.send(sent, timeout=timeout)
                if isinstance(op, CycleModelOp | CycleThinkingLevelOp | SetThinkingLevelOp):
                    self._settle(proc, during)  # model_select / thinking_level_select handlers
                return OperationOutcome(name, bool(response.get("success")), response.get("error"))
            case NewSessionOp():
                parent = self._current_session_file(proc) if op.new_session.parent else None
                if self._profile.rpc_new_session_binds_twice:
                    return self._new_session_by_command(proc, name, parent, during)
                response = proc.new_session(parent, timeout=timeout)
                self._settle(proc, during)
                return _switch_outcome(name, response)
            case TreeOp():
                return self._tree(proc, name, op, during)
            case BashOp():
                # RPC ``bash`` (rpc-mode.js:462-481), with the id both targets give it
                # (``bash_command_id``); ``excludeFromContext`` only when the scenario gives it,
                # as Pi records it as sent. Pi runs the command unless a ``user_bash`` handler
                # answers; the scenario's ``output`` and ``exit_code`` are the simulator's.
                self._bash_commands += 1
                command: dict[str, Any] = {
                    "type": "bash",
                    "id": bash_command_id(self._bash_commands),
                    "command": op.bash.command,
                }
                if op.bash.exclude_from_context is not None:
                    command["excludeFromContext"] = op.bash.exclude_from_context
                response = proc.send(command, timeout=timeout)
                self._settle(proc, during)
                return OperationOutcome(name, bool(response.get("success")), response.get("error"))
            case ForkOp():
                listed = proc.send({"type": "get_fork_messages"}, timeout=timeout)
                messages = list((listed.get("data") or {}).get("messages") or [])
                chosen = pick_fork_message(messages, op.fork.message)
                if chosen is None:
                    return OperationOutcome(name, False, no_fork_message(messages, op.fork.message))
                if self._profile.rpc_new_session_binds_twice:
                    return self._replace_by_command(
                        proc, name, f"/{_FORK_COMMAND} before {chosen}", _FORK_COMMAND, "harness_fork", during
                    )
                response = proc.send({"type": "fork", "entryId": chosen}, timeout=timeout)
                self._settle(proc, during)
                return _switch_outcome(name, response)
            case CloneOp():
                if self._profile.rpc_new_session_binds_twice:
                    # RPC ``clone`` forks at the leaf, or answers this error (rpc-mode.js:505-512).
                    leaf = proc.get_entries(timeout=timeout).get("leafId")
                    if not leaf:
                        return OperationOutcome(
                            name, False, "Cannot clone session: no current entry selected"
                        )
                    return self._replace_by_command(
                        proc, name, f"/{_FORK_COMMAND} at {leaf}", _FORK_COMMAND, "harness_fork", during
                    )
                response = proc.send({"type": "clone"}, timeout=timeout)
                self._settle(proc, during)
                return _switch_outcome(name, response)
            case SwitchSessionOp():
                wanted = op.switch_session.to
                target, refusal = switch_session_target(
                    wanted,
                    self._previous_session_file() if wanted == "previous" else None,
                    self._run_session_files() if wanted != "previous" else [],
                )
                if target is None:
                    return OperationOutcome(name, False, refusal)
                if self._profile.rpc_new_session_binds_twice:
                    return self._replace_by_command(
                        proc,
                        name,
                        f"/{_SWITCH_SESSION_COMMAND} {target}",
                        _SWITCH_SESSION_COMMAND,
                        "harness_switch_session",
                        during,
                    )
                response = proc.send({"type": "switch_session", "sessionPath": target}, timeout=timeout)
                self._settle(proc, during)
                return _switch_outcome(name, response)
            case _:
                assert_never(op)

    def _tree(self, proc: PiRpcProcess, name: str, op: TreeOp, during: bool) -> OperationOutcome:
        """``tree`` through the observer's ``/harness-tree <entryId>`` (``ctx.navigateTree``; Pi
        1.6's RPC has no tree command): the entry chosen now from RPC ``get_fork_messages`` as
        ``fork`` chooses it. ``wait: false`` writes the line and goes on (Pi may defer the prompt
        until the ``agent_settled`` handlers end, agent-session.js:1705-1708, and answers it only
        then). An awaited one fails as the navigation did (the observer's ``tree_navigation``)."""
        assert self._env is not None
        listed = proc.send({"type": "get_fork_messages"}, timeout=self._op_timeout())
        messages = list((listed.get("data") or {}).get("messages") or [])
        chosen = pick_fork_message(messages, op.tree.to)
        if chosen is None:
            return OperationOutcome(name, False, no_tree_message(messages, op.tree.to))
        text = f"/{TREE_COMMAND} {chosen}"
        if not op.tree.wait:
            proc.send_nowait({"type": "prompt", "message": text})
            return OperationOutcome(name, True)
        before = len(self._env.observer_events())
        outcome = self._prompt(proc, name, text, None, (), during)
        if not outcome.ok:
            return outcome
        done = [e for e in self._env.observer_events()[before:] if e.get("type") == "tree_navigation"]
        if not done:
            return OperationOutcome(name, False, "the tree navigation did not run")
        if done[-1].get("error"):
            return OperationOutcome(name, False, str(done[-1]["error"]))
        if done[-1].get("cancelled"):
            return OperationOutcome(name, False, "cancelled")
        return OperationOutcome(name, True)

    def _new_session_by_command(
        self, proc: PiRpcProcess, name: str, parent: str | None, during: bool
    ) -> OperationOutcome:
        """``new_session`` through the observer's ``/harness-new-session`` (``ctx.newSession``): on
        the releases whose RPC ``new_session`` binds the new session's extensions twice, so every
        ``session_start`` handler would run twice (:mod:`.versions`). Extension commands run before
        the input hooks (``dist/core/agent-session.js:1702`` before ``:1735`` in 1.5.2, ``:1488``
        before ``:1501`` in 1.0.3), so the command adds no ``input`` event."""
        text = f"/{_NEW_SESSION_COMMAND}" + (f" {parent}" if parent else "")
        return self._replace_by_command(proc, name, text, _NEW_SESSION_COMMAND, "harness_new_session", during)

    def _replace_by_command(
        self, proc: PiRpcProcess, name: str, text: str, command: str, logged: str, during: bool
    ) -> OperationOutcome:
        """A session replacement through one of the observer's commands (``ctx.fork``,
        ``ctx.switchSession``), on the releases whose RPC command binds the new session's
        extensions twice (:mod:`.versions`): its outcome is the observer's ``logged`` line."""
        assert self._env is not None
        seq = proc.event_seq
        before = len(self._env.observer_events())
        outcome = self._prompt(proc, name, text, None, (), during)
        if not outcome.ok:
            return OperationOutcome(name, False, outcome.error)
        errors = [
            e.data
            for e in proc.events_since(seq)
            if e.type == "extension_error" and e.data.get("extensionPath") == f"command:{command}"
        ]
        if errors:
            return OperationOutcome(name, False, str(errors[0].get("error")))
        done = [line for line in self._env.observer_events()[before:] if line.get("type") == logged]
        if not done:
            return OperationOutcome(name, False, f"the {name.replace('_', ' ')} did not finish")
        if done[-1].get("error"):
            return OperationOutcome(name, False, str(done[-1]["error"]))
        if done[-1].get("cancelled"):
            return OperationOutcome(name, False, "cancelled")
        return OperationOutcome(name, True)

    def _previous_session_file(self) -> str | None:
        """What ``switch_session: previous`` resumes: the last ``previousSessionFile`` a
        ``session_start`` of this process named (the observer's lines since the process started;
        the simulator keeps the same field, ``SimHost.previous_session_file``)."""
        assert self._env is not None
        previous = None
        for line in self._env.observer_events()[self._process_observer_mark :]:
            if line.get("type") == "session_start" and line.get("previousSessionFile"):
                previous = str(line["previousSessionFile"])
        return previous

    def _run_session_files(self) -> list[str]:
        """What ``switch_session: {to: N}`` counts: every session file a runtime of the run
        started in (across restarts), in the order of the first start in each, from the
        observer's ``harness_session_file`` line after each ``session_start`` (the simulator keeps
        the same list, ``SimHost.session_files``). A session without a file (``--no-session``)
        names none."""
        assert self._env is not None
        files: list[str] = []
        for line in self._env.observer_events():
            file = line.get("sessionFile") if line.get("type") == "harness_session_file" else None
            if file and str(file) not in files:
                files.append(str(file))
        return files

    def _current_session_file(self, proc: PiRpcProcess) -> str | None:
        with contextlib.suppress(PiRpcError):
            file = proc.get_state(timeout=self._op_timeout()).get("sessionFile")
            if file:
                return str(file)
        return self._session_file

    def _prompt(
        self,
        proc: PiRpcProcess,
        name: str,
        text: str,
        behavior: str | None,
        answers: Iterable[DialogAnswer],
        during: bool,
        images: Sequence[dict[str, str]] = (),
    ) -> OperationOutcome:
        added: list[DialogAnswer] = []
        if during:
            added = self._rules.add(answers)
        else:
            self._rules.set(answers)
        try:
            result = proc.prompt(
                text,
                streaming_behavior=behavior,
                timeout=self._held_op_timeout if during else self._op_timeout(),
                settle=not during,
                settle_quiet=_QUIET_S,
                images=images,
            )
        finally:
            if during:
                self._rules.discard(added)
        if not during and result.success:
            self._wait_for_bridge(proc)
        errors = self._rules.take_errors() if not during else []
        if not during:
            self._rules.set(())
        if not result.success:
            return OperationOutcome(name, False, str(result.response.get("error")), result.disposition)
        if errors:
            return OperationOutcome(name, False, errors[0], result.disposition)
        return OperationOutcome(name, True, None, result.disposition)

    def _restart(self, name: str) -> OperationOutcome:
        """Quit (or after a crash, just start): ``--session <file>`` and no ``--model``.

        Pi then does what it does on a real resume: it restores the session's model from the
        file; for a file not written yet (no message so far) it starts a new session at that
        path with its default model.
        """
        proc = self._proc
        if proc is not None and proc.alive:
            self._refresh_state()
            proc.close(timeout=self._op_timeout())
        file = self._session_file
        assert self._scenario is not None
        try:
            self._start_process(session=file, model=None if file else self._scenario.active.id)
        except PiStartError as error:
            self._crashed = True
            return OperationOutcome(name, False, str(error).splitlines()[0])
        return OperationOutcome(name, True)

    # ------------------------------------------------------------------ held replies
    def _wait_for_held_replies(self) -> bool:
        """Wait until the model server has run every held reply's operations and ended those
        requests. Pi can be idle and quiet before the server thread has the response of a held
        ``switch_session`` (Pi answers only after the new runtime started): observed then, the
        run had neither the held operation nor the aborted request (differential seed 11213, 1
        run in 8). True when there was something to wait for (then the caller settles again)."""
        server = self._server
        if server is None:
            return False
        try:
            return server.wait_for_holds(timeout=self._op_timeout())
        except TimeoutError:
            return True  # reported as it stands; the operations' own timeouts end them

    def _wait_for_held_calls_to_end(self) -> None:
        """Pi died during an operation: wait until the model server has ended every request
        (a held one ends aborted once its operations, which killed Pi, have returned and been
        recorded in :attr:`_held`). The operation's ``Pi crashed`` came from the main thread as
        soon as Pi's pipe closed, while the server thread was still finishing the held reply,
        so a crash in the last operation was observed with neither the held operation nor the
        aborted request (differential seeds 10112, 10200, 10206 and 10211; the simulator
        records both)."""
        server = self._server
        if server is None:
            return
        # A request still open after the timeout is reported as it stands, never waited on forever.
        with contextlib.suppress(TimeoutError):
            server.wait_for_requests(len(server.requests), timeout=self._op_timeout())

    def _on_hold(self, request: ModelRequest, outcome: ModelOutcome) -> None:
        """Run a held reply's operations against Pi (fake server thread; no settling; what
        this raises is kept in :attr:`FakeModelServer.errors`), and record their outcomes.

        After a partial stream (a stream plan) the operations wait until Pi has read it: the
        ``message_update`` deltas of the running assistant message add up to the plan's
        ``upto`` characters (``message_start`` for ``upto: 0``). Only Pi's own agent requests
        stream events over RPC; other requests hold at once.

        The outcomes name the operation that was running when the call arrived, counted here
        before any of them runs: the main thread records that operation as soon as Pi settles,
        which an ``abort`` run here lets happen before its own response arrives (Pi answers
        ``abort`` only after ``waitForIdle()``, ``dist/modes/rpc/rpc-mode.js:353-355``,
        ``dist/core/agent-session.js:2082-2093``; by then ``agent_settled`` is out). Counted
        after each operation, the index was one too high whenever the main thread won that
        race (differential seed 178: 4 on real Pi, 3 on the simulator).
        """
        operation = len(self._outcomes)
        if outcome.stream is not None and request.kind == "agent" and self._proc is not None:
            self._wait_for_partial(self._proc, outcome.stream.upto)
        label = f"{request.kind}#{request.index}"
        for op in outcome.hold_operations():
            result = self._run(op, during=True)
            self._held.append(HeldOutcome(label, operation, result))

    def _on_dialog_hold(self, operations: tuple[Operation, ...], method: str) -> None:
        """Run a dialog answer's ``during`` operations while the dialog is open (the RPC
        client's answer thread; the answer is written when this returns), and record their
        outcomes as a held reply's are, under ``dialog:<method>`` (the simulator's
        ``Host._run_dialog_during``)."""
        operation = len(self._outcomes)
        for op in operations:
            result = self._run(op, during=True)
            self._held.append(HeldOutcome(f"dialog:{method}", operation, result))

    def _wait_for_partial(self, proc: PiRpcProcess, upto: int) -> None:
        """Until Pi has emitted the events of the first ``upto`` streamed characters of the
        assistant message now streaming (see :meth:`_on_hold`)."""
        state = {"started": False, "seen": 0}

        def step(data: dict[str, Any]) -> bool:
            kind = data.get("type")
            if kind == "message_start" and (data.get("message") or {}).get("role") == "assistant":
                state.update(started=True, seen=0)
            elif kind == "message_end":
                state.update(started=False, seen=0)
            elif kind == "message_update" and state["started"]:
                event = data.get("assistantMessageEvent") or {}
                if event.get("type") in ("thinking_delta", "text_delta", "toolcall_delta"):
                    state["seen"] += len(str(event.get("delta") or ""))
            return bool(state["started"]) and state["seen"] >= upto

        events = proc.events
        begin = len(events)
        for position in range(len(events) - 1, -1, -1):
            data = events[position].data
            if data.get("type") == "message_end":
                break
            if data.get("type") == "message_start" and (data.get("message") or {}).get("role") == "assistant":
                begin = position
                break
        for event in events[begin:]:
            if step(event.data):
                return
        proc.wait_for_event(step, timeout=self._held_op_timeout, after_seq=len(events))

    # ------------------------------------------------------------------ script
    def script(self, kind: RequestKind, replies: Iterable[Reply | SynthesisReply]) -> None:
        self.server.extend(kind, list(replies))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ observe
    def run_checked(self, scenario: Scenario) -> CheckedRun:
        """Play ``scenario``'s operations with the system's *observed* invariants checked after
        every operation: those of its invariants real Pi lets be observed (the session entries,
        the events, the model requests, the UI and the files; not the effects the simulator's
        trace shows as they happen). The checker is the entry point of
        :data:`OBSERVED_CHECKERS_GROUP` named after the system (the explorer registers one)."""
        points = {ep.name: ep for ep in metadata.entry_points(group=OBSERVED_CHECKERS_GROUP)}
        system = self._system_name()
        if system not in points:
            raise TargetUnavailableError(
                f"no observed checker is registered for {system} ({OBSERVED_CHECKERS_GROUP})"
            )
        checker = points[system].load()(scenario)
        violations: list[tuple[str, str]] = []
        errors: list[str] = []

        def check(op: Operation | None, outcome: OperationOutcome | None, index: int | None) -> None:
            try:
                for name, problem in checker.after_operation(self.observe(), op, outcome):
                    where = f" (operation {index})" if index is not None else ""
                    violations.append((name, f"{name}{where}: {problem}"))
            except Exception as error:  # a checker bug must surface, never pass as a verdict
                errors.append(f"{type(error).__name__}: {error}")

        try:
            self.start(scenario)
        except TargetStartError as error:
            violations.append(("implementation_loads", f"implementation_loads: Pi refused to start: {error}"))
            return CheckedRun(
                frozenset(checker.invariants) | {"implementation_loads"}, tuple(violations), (), _no_liveness
            )
        check(None, None, None)
        for index, op in enumerate(scenario.operations):
            outcome = self.perform(op)
            check(op, outcome, index)
        return CheckedRun(
            frozenset(checker.invariants) | {"implementation_loads"},
            tuple(violations),
            tuple(errors),
            _no_liveness,
        )

    def _system_name(self) -> str:
        if self._system is not None:
            return self._system
        if _is_typescript(self._implementation):
            return SESSION_CONTINUITY.name
        _name, factory = resolve_implementation(_factory_spec(self._implementation))
        return declared_system(factory).name

    def project_dir(self) -> Path:
        return Path(self.paths.project_dir)

    def observe(self) -> Observation:
        paths = self.paths
        observation = Observation(
            target=self.name,
            project_dir=Path(paths.project_dir),
            agent_dir=Path(paths.agent_dir),
            session_dir=Path(paths.session_dir),
            machine_dir=Path(paths.workdir),
        )
        observation.operations = list(self._outcomes)
        observation.held_operations = list(self._held)
        names = {str(path): name for path, name in self._extensions}
        for proc in self._procs:
            for event in proc.events:
                if (
                    event.type == "extension_error"
                    and event.data.get("extensionPath") in _HARNESS_COMMAND_PATHS
                ):
                    continue
                self._observe_event(observation, event, names)
                if event.type != "extension_ui_request" and not event.type.startswith("_"):
                    observation.rpc_events.append(self._named(event.data, names))
        observation.dialogs = [dict(d) for d in self._rules.records]
        assert self._env is not None
        for line in self._env.observer_events():
            if line.get("type") in _OBSERVER_BOOKKEEPING:
                continue
            # The simulator's trace leaves out fields whose value is None; so does this.
            observation.extension_events.append(
                {k: v for k, v in line.items() if k != "seq" and v is not None}
            )
        observation.model_requests = [
            ObservedRequest(r.kind, r.index, self._with_full_model_id(r.request, r.path), r.aborted)
            for r in self.server.requests
            if r.kind is not None and r.request is not None
        ]
        current = self._proc
        live = False
        if current is not None and current.alive and not self._crashed:
            try:
                observation.entries = list(current.get_entries(timeout=self._timeout).get("entries") or [])
                state = current.get_state(timeout=self._timeout)
                observation.session_id = state.get("sessionId")
                file = state.get("sessionFile")
                observation.session_file = Path(file) if file else None
                live = True
                slots = {str(path.resolve()): name for path, name in self._extensions}
                for command in current.get_commands(timeout=self._timeout):
                    info = command.get("sourceInfo") or {}
                    owner = slots.get(str(Path(str(info.get("path") or "")).resolve()))
                    if command.get("source") == "extension" and owner is not None:
                        observation.commands.setdefault(owner, []).append(str(command.get("name")))
            except PiRpcError:
                live = False
        if not live:
            observation.session_file = Path(self._session_file) if self._session_file else None
            lines = observation.session_file_entries()
            observation.entries = lines[1:]
            observation.session_id = lines[0].get("id") if lines else self._session_id
        observation.fs_events = [e for e in map(fs_event, self.fs_records()) if e is not None]
        self._resolve_from_extension(observation)
        return observation

    def _with_full_model_id(self, request: ModelRequest, path: str = "") -> ModelRequest:
        """The request's model as ``provider/id`` (the wire carries only the id), as the simulator
        records it: the provider is the one whose path the request came to (:meth:`_lay_out`);
        elsewhere (no such path), the provider of the one scenario model with that id, else the
        id as sent."""
        if self._scenario is None or "/" in request.model:
            return request
        if self._server is not None:
            prefix = urlsplit(self._server.base_url).path.rstrip("/") + "/"
            provider, sep, rest = path.removeprefix(prefix).partition("/")
            if path.startswith(prefix) and sep and provider and rest.rstrip("/") == "chat/completions":
                return dataclasses.replace(request, model=f"{unquote(provider)}/{request.model}")
        matches = [m.id for m in self._scenario.models if m.id.partition("/")[2] == request.model]
        return dataclasses.replace(request, model=matches[0]) if len(matches) == 1 else request

    def _observe_event(self, observation: Observation, event: RpcEvent, names: dict[str, str]) -> None:
        data = event.data
        if data.get("type") == "extension_ui_request":
            method = data.get("method")
            if method == "notify":
                observation.notifications.append(
                    (str(data.get("message")), str(data.get("notifyType") or "info"))
                )
            elif method == "setWidget":
                update: dict[str, Any] = {"key": str(data.get("widgetKey"))}
                lines = data.get("widgetLines")
                update["lines"] = None if lines is None else [str(line) for line in lines]
                if data.get("widgetPlacement") is not None:
                    update["placement"] = str(data["widgetPlacement"])
                observation.widgets.append(update)
            elif method == "setStatus":
                key = str(data.get("statusKey"))
                text = data.get("statusText")
                if text is None:
                    observation.statuses.pop(key, None)
                else:
                    observation.statuses[key] = str(text)
            return
        normalised = normalise_session_event(data)
        if normalised is None:
            return
        if normalised["type"] == "extension_error":
            path = str(normalised.get("extensionPath"))
            normalised["extensionPath"] = names.get(path, path)
        observation.session_events.append(normalised)

    @staticmethod
    def _named(data: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
        """An RPC event with an extension's wrapper path replaced by the name the simulator
        reports for that extension (``extension_error.extensionPath``)."""
        if data.get("type") == "extension_error":
            path = str(data.get("extensionPath"))
            return {**data, "extensionPath": names.get(path, path)}
        return data

    @staticmethod
    def _resolve_from_extension(observation: Observation) -> None:
        """``compaction_end.result.fromExtension``: the stored entry's ``fromHook``."""
        by_summary = {
            (e.get("summary"), e.get("firstKeptEntryId")): bool(e.get("fromHook"))
            for e in observation.entries
            if e.get("type") == "compaction"
        }
        for event in observation.session_events:
            result = event.get("result")
            if event.get("type") != "compaction_end" or not isinstance(result, dict):
                continue
            key = (result.pop("summary", None), result.get("firstKeptEntryId"))
            if key in by_summary:
                result["fromExtension"] = by_summary[key]

    # ------------------------------------------------------------------ misc
    def versions(self) -> dict[str, str]:
        installation = self._installation or find_installation(version=self._pi_version)
        out = {
            "harness": __version__,
            "host": f"Pi {installation.pi_version if installation else self._pi_version} (real, RPC)",
            "python": platform.python_version(),
            "os": platform.platform(),
        }
        if installation is not None:
            out["pi"] = installation.pi_version
            out["node"] = installation.node_version
        return out

    def close(self) -> None:
        """Stop Pi (stdin EOF, then signals) and the fake server; keep the files."""
        for proc in self._procs:
            with contextlib.suppress(Exception):
                proc.close(timeout=5.0)
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._server.stop()

    def close_deferring_writes(self) -> None:
        """:meth:`close`: this target writes no ``trace.jsonl`` or ``requests/*.json`` (nothing
        to defer)."""
        self.close()

    def __enter__(self) -> PiTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
