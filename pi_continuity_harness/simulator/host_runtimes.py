"""The simulated process's runtimes: start, reload, new session, fork, quit.

The part of the simulated process (:mod:`.host`) that makes and replaces its
:class:`~.host_shared.Runtime` (Pi's ``AgentSessionRuntime``, agent-session-runtime.js:34-345),
held by :class:`HostRuntimes` for its :class:`~.host.SimHost`. As Pi 1.6 does it:

* startup / restart (main.js, sdk.js:121-143 for the thinking level): trust and settings read
  from disk, extensions loaded fresh, ``session_start{startup}`` (even when resuming a file,
  §9.14); an extension that fails to load makes the process refuse to start
  (:class:`~.host_shared.ProcessStartError`, as real Pi exits 1, main.js:824-829);
  ``--session <file>`` for a file not written yet starts a fresh session there with Pi's
  default model;
* reload (``AgentSession.reload``, agent-session.js:3104-3141): refused while streaming or
  compacting; ``session_shutdown{reload}``, the old instances go stale, settings re-read, fresh
  instances, ``session_start{reload}``;
* new session (``newSession``, agent-session-runtime.js:166-192): ``session_before_switch{new}``
  (may cancel), the running turn is aborted, ``session_shutdown{new}``, a new runtime,
  ``session_start{new}``;
* fork (``fork``, agent-session-runtime.js:193-276): ``session_before_fork`` (may cancel), a
  session up to the chosen user message, ``session_shutdown{fork}``, ``session_start{fork}``;
* quit: ``session_shutdown{quit}``.

Every runtime, the first and each replacement, chooses its model and thinking level as Pi's
runtime factory does (:meth:`HostRuntimes._choose_model_and_thinking`): the process's
``--model`` and ``--thinking`` first, so a new session or a fork in a process started with
``--model`` is back on that model whatever ``set_model`` chose since (main.js:650-770 runs
``buildSessionOptions`` again for every replacement); without them, the branch's model and
level, then the settings' defaults (sdk.js:83-143).

Each runtime gets its runner and bindings from :mod:`.host_bindings`, and its resources (prompt
files, skill folders, prompt templates) as Pi's resource loader reads them. Called once per
runtime, never per streamed event.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.events import (
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionShutdownEvent,
    SessionStartEvent,
)
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.scenario.operations import TREE_COMMAND
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.agent_session import AgentSession, PiThrewError, PromptRejectedError
from pi_continuity_harness.simulator.host_bindings import new_runner, runtime_bindings
from pi_continuity_harness.simulator.host_shared import ProcessStartError, Runtime
from pi_continuity_harness.simulator.prompt_templates import (
    PromptTemplates,
    PromptTemplatesNotModelledError,
    prompt_templates_problem,
)
from pi_continuity_harness.simulator.provider import DEFAULT_THINKING_LEVEL, clamp_thinking_level
from pi_continuity_harness.simulator.resources import (
    extend_resources_from_extensions,
    read_prompt_files,
    reset_extension_resources,
)
from pi_continuity_harness.simulator.session_manager import SessionManager
from pi_continuity_harness.simulator.settings import SettingsError, SettingsManager
from pi_continuity_harness.simulator.skill_dirs import load_default_skills

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.host import SimHost

__all__ = ["HostRuntimes"]


class HostRuntimes:
    """The runtimes job of one :class:`~.host.SimHost`."""

    __slots__ = ("_host",)

    def __init__(self, host: SimHost) -> None:
        self._host = host

    def default_model(self, settings: SettingsManager) -> Model | None:
        """The model Pi picks without ``--model`` and without a session to restore it from
        (``findInitialModel``, model-resolver.js:382-427, no scoped models): the settings'
        ``defaultProvider``/``defaultModel`` when that model exists and has auth, else the
        first available model (models.json order; no scenario model is one of the built-in
        providers' defaults that come before it)."""
        host = self._host
        values = settings.get_settings()
        provider, model_id = values.get("defaultProvider"), values.get("defaultModel")
        if isinstance(provider, str) and isinstance(model_id, str) and provider and model_id:
            found = host.catalog.find(provider, model_id)
            if found is not None and host.catalog.has_auth(found.provider):
                return found
        return host.catalog.first_available()

    def _choose_model_and_thinking(
        self, manager: SessionManager, settings: SettingsManager
    ) -> tuple[Model | None, str]:
        """The model and thinking level of a runtime over ``manager``'s session, and the entries
        Pi appends for them, as main.js's ``createRuntime`` (:650-770) and sdk.js's
        ``createAgentSession`` (:83-143, :291-303) choose them, for the first runtime and for
        every replacement (new session, fork):

        * the process's ``--model`` (the scenario's active model; a restart with
          ``--session <file>`` passes none), else, when the session has messages, the branch's
          model (``getBranchSelection``) if it has auth, else ``findInitialModel``
          (:meth:`default_model`);
        * the process's ``--thinking`` (the scenario's level unless ``off``), else, when the
          session has messages, the branch's level (or the settings' default without a
          ``thinking_level_change`` on it), else the per-model setting, else the settings'
          default, else Pi's; clamped to the model (``off`` without one);
        * a session with messages gets a ``thinking_level_change`` only if its branch has none;
          one without (a new session, a fork before the first message) gets ``model_change``
          (with a model) and ``thinking_level_change``.

        Before 6 December 2026 a new session and a fork kept the current model and level:
        differential exploration (seed 9704: ``set_model``, ``new_session``, a prompt) found
        real Pi answering on the ``--model`` model."""
        host = self._host
        projection = manager.build_session_projection()
        has_messages = bool(projection.messages)
        has_thinking_entry = manager.branch_thinking_entry() is not None
        values = settings.get_settings()
        default_level = values.get("defaultThinkingLevel")
        model = host.catalog.find_full(host.cli_model) if host.cli_model is not None else None
        if model is None and has_messages and projection.model is not None:
            found = host.catalog.find(*projection.model)
            if found is not None and host.catalog.has_auth(found.provider):
                model = found
        if model is None:
            model = self.default_model(settings)
        level = host.cli_thinking
        if level is None and has_messages:
            level = (
                projection.thinking_level
                if has_thinking_entry
                else str(default_level or DEFAULT_THINKING_LEVEL)
            )
        if level is None and model is not None:
            per_model = values.get("modelThinkingLevels")
            if isinstance(per_model, dict) and per_model.get(f"{model.provider}/{model.id}"):
                level = str(per_model[f"{model.provider}/{model.id}"])
        if level is None:
            level = str(default_level or DEFAULT_THINKING_LEVEL)
        level = clamp_thinking_level(model, level)
        if has_messages:
            if not has_thinking_entry:
                manager.append_thinking_level_change(level)
        else:
            if model is not None:
                manager.append_model_change(model.provider, model.id)
            manager.append_thinking_level_change(level)
        return model, level

    async def _create_runtime(
        self,
        manager: SessionManager,
        start_event: SessionStartEvent,
        *,
        startup: bool = False,
    ) -> Runtime:
        host = self._host
        with host.host_io():
            trust, settings = SettingsManager.create_trusting(
                host.paths.project_dir, host.paths.agent_dir, approve=host.approve
            )
        model, host.thinking_level = self._choose_model_and_thinking(manager, settings)
        session = AgentSession(
            session_manager=manager,
            settings=settings,
            service=host.service,
            model=model,
            trace=host.trace,
            cwd=host.paths.project_dir,
            package_dir=host.package_dir,
            thinking_level=host.thinking_level,
            spawn=host.spawn,
            track=host._track,
            write_file=host._tool_write,
            remove_file=host._tool_remove,
            read_file=host._tool_read,
            confine=host._confine_tool,
            summary_files=host._summary_files,
        )
        # The queue modes the agent is made with (sdk.js:283-284); a reload does not change them.
        session.agent.steering.mode = settings.get_steering_mode()
        session.agent.follow_up.mode = settings.get_follow_up_mode()
        session.rpc = host.record_rpc
        session.rpc_update = host.record_rpc_update
        session.host_io = host.host_io
        session.on_thinking_level = host._thinking_level_changed
        session.process_dead = lambda: host.crashed
        session.host_commands[TREE_COMMAND] = lambda args: host._operations.harness_tree(session, args)
        runner = new_runner(host, session, manager)
        runtime = Runtime(trust, settings, manager, session, runner)
        host.trace.emit(
            "host",
            "runtime",
            reason=start_event.reason,
            sessionId=manager.get_session_id(),
            sessionFile=manager.get_session_file(),
            trusted=trust.trusted,
            trust=trust.reason,
            model=model.full_id if model else None,
            settingsErrors=settings.errors or None,
            # The window and reserve in force, for a reader of the trace (the HTML report draws
            # the threshold from them); Pi does not say them anywhere at startup.
            contextWindow=model.context_window if model else None,
            reserveTokens=_reserve_tokens(settings, model),
        )
        failures = await runner.load(host.extensions)
        if failures and startup:
            # Real Pi collects the load errors as startup diagnostics, prints them and exits 1
            # before any extension event (main.js:825): the process never starts.
            path, message = failures[0]
            host.trace.emit("host", "start_failed", extensionPath=path, error=message)
            host.running = False
            raise ProcessStartError(f'Failed to load extension "{path}": Failed to load extension: {message}')
        for path, message in failures:
            # Reload and session replacement drop load errors silently in RPC mode (no event).
            host.trace.emit("host", "extension_load_failed", extensionPath=path, error=message)
        read_prompt_files(session, host.paths.agent_dir, host.paths.workdir, trusted=trust.trusted)
        self._load_default_skills(runtime)
        self._load_prompt_templates(session, settings, trusted=trust.trusted)
        runner.bind(runtime_bindings(host, runtime))
        session.runner = runner
        # The loadout the session's branch declares (agent-session.js:245, :1460-1487).
        session.restore_tools_from_transcript()
        host.runtime = runtime
        host.last_session_file = manager.get_session_file()
        if host.last_session_file is not None and host.last_session_file not in host.session_files:
            host.session_files.append(host.last_session_file)
        if start_event.previous_session_file is not None:
            # What ``switch_session: previous`` resumes (the real-Pi target reads the same field
            # from the observer's ``session_start`` lines of the process).
            host.previous_session_file = start_event.previous_session_file
        await session.dispatch(start_event)
        # bindExtensions ends asking for more resources (agent-session.js:2786-2788).
        await extend_resources_from_extensions(session, "startup")
        return runtime

    def _load_default_skills(self, runtime: Runtime) -> None:
        """The skills of Pi's skill folders and ``skills`` setting (:mod:`.skill_dirs`), loaded
        with the resource loader's other resources, before ``session_start``."""
        host = self._host
        settings = runtime.settings
        load_default_skills(
            runtime.session,
            host.paths.agent_dir,
            trusted=settings.project_trusted,
            global_settings=settings.global_settings,
            project_settings=settings.project_settings,
        )

    def _load_prompt_templates(
        self, session: AgentSession, settings: SettingsManager, *, trusted: bool
    ) -> None:
        """The resource loader's prompt templates (resource-loader.js:454-458), read for each
        runtime and on every reload as the host's own reads (:mod:`.prompt_templates`).

        A run that may have templates the simulator does not load (the ``prompts`` setting, an
        ignore file in a prompts folder: :func:`.prompt_templates.prompt_templates_problem`) is refused
        here, as a ``skills`` setting pattern is (:mod:`.skill_dirs`): run without them, its
        ``/name`` prompts and ``pi.get_commands`` would silently differ from real Pi's."""
        host = self._host
        with host.host_io():
            # The merged settings themselves, not ``get_settings()``'s copy for an extension:
            # the check only reads them (one copy of the whole tree fewer per runtime's start).
            problem = prompt_templates_problem(
                settings.settings, host.paths.agent_dir, host.paths.project_dir, trusted=trusted
            )
            if problem is not None:
                raise PromptTemplatesNotModelledError(
                    f"prompt templates beyond Pi's default folders are not modelled by the simulator ({problem})"
                )
            session.prompt_templates = PromptTemplates.discover(
                host.paths.agent_dir, session.cwd, trusted=trusted
            )

    async def start(self, session_file: str | None = None) -> None:
        """Start a Pi process: a new session, or ``--session <file>`` to resume one."""
        host = self._host
        host.crashed = False
        host._shutdown_requested_at = None
        host.trace.frozen = False
        host.monitor.frozen = False
        host.running = True
        host.trace.emit("host", "start", resume=session_file)
        host.previous_session_file = None  # a new process: no session_start has named one yet
        # The process's command line, as the real-Pi target starts Pi (``PiTarget._argv``):
        # ``--model`` (and ``--thinking`` unless ``off``) for a new session, neither with
        # ``--session <file>``; every runtime of the process chooses from them.
        fresh = session_file is None
        host.cli_model = host.active_model if fresh else None
        host.cli_thinking = (
            host.scenario_thinking_level if fresh and host.scenario_thinking_level != "off" else None
        )
        if session_file is not None:
            # ``--session <file>`` before the file was written (lazy files, §9.12) opens an empty
            # session there: Pi's default model, and ``model_change``/``thinking_level_change``
            # appended like any new session's (:meth:`_choose_model_and_thinking`).
            with host.host_io():
                manager = self._open_manager(session_file)
            await self._create_runtime(manager, SessionStartEvent(reason="startup"), startup=True)
        else:
            session_id, host._first_session_id = host._first_session_id, None
            manager = self._new_manager(session_id=session_id)
            await self._create_runtime(manager, SessionStartEvent(reason="startup"), startup=True)

    async def stop(self) -> None:
        """Quit (stdin EOF): ``session_shutdown{quit}``, then the process ends."""
        host = self._host
        if not host.running or host.runtime is None:
            return
        runtime = host.runtime
        await runtime.session.abort()
        await runtime.session.dispatch(SessionShutdownEvent(reason="quit"))
        runtime.runner.invalidate()
        host.trace.emit("host", "quit")
        host.running = False
        host.runtime = None

    async def restart(self) -> None:
        host = self._host
        if host.running:
            await self.stop()
        await self.start(session_file=host.last_session_file)

    async def reload(self) -> None:
        host = self._host
        runtime = host._require_runtime()
        session = runtime.session
        # ``AgentSession.reload`` (agent-session.js:3105-3110): Pi's errors, what ``ctx.reload()``
        # raises (``PiError``) and what RPC ``/reload`` answers.
        if session.is_streaming:
            raise PiThrewError("Wait for the current response to finish before reloading.")
        if session.is_compacting:
            raise PiThrewError("Wait for compaction to finish before reloading.")
        await session.dispatch(SessionShutdownEvent(reason="reload"))
        runtime.runner.invalidate()
        with host.host_io():
            runtime.settings.reload()
        runner = new_runner(host, session, runtime.session_manager)
        host.trace.emit("host", "reload", settingsErrors=runtime.settings.errors or None)
        for path, message in await runner.load(host.extensions):
            host.trace.emit("host", "extension_load_failed", extensionPath=path, error=message)
        read_prompt_files(
            session, host.paths.agent_dir, host.paths.workdir, trusted=runtime.settings.project_trusted
        )
        self._load_prompt_templates(session, runtime.settings, trusted=runtime.settings.project_trusted)
        new_runtime = Runtime(runtime.trust, runtime.settings, runtime.session_manager, session, runner)
        runner.bind(runtime_bindings(host, new_runtime))
        session.runner = runner
        host.runtime = new_runtime
        # Every extension tool of the new runtime is active again (agent-session.js:3131-3134).
        session.active_tools.reload()
        reset_extension_resources(session)
        self._load_default_skills(new_runtime)
        await session.dispatch(SessionStartEvent(reason="reload"))
        await extend_resources_from_extensions(session, "reload")

    async def new_session(
        self,
        *,
        parent_session: str | None = None,
        with_session: Callable[[Any], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """RPC ``new_session`` and ``ctx.newSession`` (``AgentSessionRuntime.newSession``,
        agent-session-runtime.js:166-192)."""
        return await self._switch(
            "new", None, with_session, lambda: self._new_manager(parent_session=parent_session)
        )

    async def switch_session(
        self,
        session_path: str,
        *,
        with_session: Callable[[Any], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """RPC ``switch_session`` and ``ctx.switchSession`` (``AgentSessionRuntime.switchSession``,
        agent-session-runtime.js:147-165): the file is opened before the teardown
        (``SessionManager.open``, its directory the file's own)."""

        def opened() -> SessionManager:
            with self._host.host_io():
                return self._open_manager(session_path)

        return await self._switch("resume", session_path, with_session, opened)

    async def _switch(
        self,
        reason: Literal["new", "resume"],
        target_file: str | None,
        with_session: Callable[[Any], Awaitable[None]] | None,
        next_manager: Callable[[], SessionManager],
    ) -> dict[str, Any]:
        """What ``newSession`` and ``switchSession`` share: ``session_before_switch{reason,
        targetSessionFile}`` may cancel; otherwise the next session's manager is made, the
        running turn settled, ``session_shutdown{reason}``, a new runtime with
        ``session_start{reason, previousSessionFile}``, then ``withSession`` with its context."""
        host = self._host
        runtime = host._require_runtime()
        result = await runtime.session.dispatch(
            SessionBeforeSwitchEvent(reason=reason, target_session_file=target_file)
        )
        if result is not None and getattr(result, "cancel", False):
            return {"cancelled": True}
        previous_file = runtime.session_manager.get_session_file()
        manager = next_manager()
        await runtime.session.abort()
        await runtime.session.dispatch(
            SessionShutdownEvent(reason=reason, target_session_file=manager.get_session_file())
        )
        runtime.runner.invalidate()
        new_runtime = await self._create_runtime(
            manager,
            SessionStartEvent(reason=reason, previous_session_file=previous_file),
        )
        if with_session is not None:
            await with_session(new_runtime.runner.create_replaced_context())
        return {"cancelled": False}

    def fork_messages(self) -> list[dict[str, str]]:
        """RPC ``get_fork_messages`` (``getUserMessagesForForking``, agent-session.js:3539-3553):
        every user message entry with text, in file order."""
        host = self._host
        runtime = host._require_runtime()
        found = []
        for entry in runtime.session_manager.get_entries():
            if entry.get("type") != "message" or entry["message"].get("role") != "user":
                continue
            text = content_text(entry["message"].get("content"), "")
            if text:
                found.append({"entryId": str(entry["id"]), "text": text})
        return found

    async def fork(
        self,
        entry_id: str,
        position: Literal["before", "at"] = "before",
        *,
        with_session: Callable[[Any], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """RPC ``fork`` (position ``before``) and ``clone`` (position ``at``, the leaf):
        ``AgentSessionRuntime.fork``, agent-session-runtime.js:193-262. ``session_before_fork`` may
        cancel; otherwise a new session holding the path up to the selected user message's parent
        (``before``) or up to the entry itself (``at``), its header linking the source file,
        replaces the runtime (``session_shutdown{fork}``, ``session_start{fork}``)."""
        host = self._host
        runtime = host._require_runtime()
        result = await runtime.session.dispatch(SessionBeforeForkEvent(entry_id=entry_id, position=position))
        if result is not None and getattr(result, "cancel", False):
            return {"cancelled": True}
        current = runtime.session_manager
        selected = current.get_entry(entry_id)
        if selected is None:
            raise PromptRejectedError("Invalid entry ID for forking")
        selected_text: str | None
        if position == "at":
            target_leaf: str | None = str(selected["id"])
            selected_text = None
        else:
            if selected.get("type") != "message" or selected["message"].get("role") != "user":
                raise PromptRejectedError("Invalid entry ID for forking")
            target_leaf = selected.get("parentId")
            selected_text = content_text(selected["message"].get("content"), "")
        previous_file = current.get_session_file()
        manager: SessionManager
        if current.is_persisted():
            if previous_file is None:
                raise PromptRejectedError("Persisted session is missing a session file")
            if not target_leaf:
                manager = self._new_manager(parent_session=previous_file)
            else:
                if not os.path.exists(previous_file):
                    raise PromptRejectedError(
                        "This session has not been saved yet. Send a message before cloning or forking it."
                    )
                with host.host_io():
                    manager = self._open_manager(previous_file)
                    manager.create_branched_session(target_leaf)
            await self._teardown_for_fork(runtime, manager.get_session_file())
        else:
            manager = current
            await self._teardown_for_fork(runtime, manager.get_session_file())
            if not target_leaf:
                manager.new_session(parent_session=previous_file)
            else:
                manager.create_branched_session(target_leaf)
        new_runtime = await self._create_runtime(
            manager,
            SessionStartEvent(reason="fork", previous_session_file=previous_file),
        )
        if with_session is not None:
            await with_session(new_runtime.runner.create_replaced_context())
        return {"cancelled": False, "text": selected_text}

    async def _teardown_for_fork(self, runtime: Runtime, target_file: str | None) -> None:
        """``teardownCurrent("fork", ...)``: settle the running turn, ``session_shutdown``."""
        await runtime.session.abort()
        await runtime.session.dispatch(SessionShutdownEvent(reason="fork", target_session_file=target_file))
        runtime.runner.invalidate()

    def _open_manager(self, session_file: str) -> SessionManager:
        """The session manager of an existing session file (a resume, or the source of a fork)."""
        host = self._host
        return SessionManager.open(
            session_file,
            cwd=host.paths.project_dir,
            session_dir=host.paths.session_dir,
            clock=host.clock,
            rng=host.rng,
            write_line=host._write_session,
            on_append=host._on_entry,
        )

    def _new_manager(
        self, *, parent_session: str | None = None, session_id: str | None = None
    ) -> SessionManager:
        """A new session's manager (startup, ``/new``, a fork's target), written through this host."""
        host = self._host
        return SessionManager.create(
            cwd=host.paths.project_dir,
            session_dir=host.paths.session_dir,
            clock=host.clock,
            rng=host.rng,
            session_id=session_id,
            parent_session=parent_session,
            persist=host.persist_sessions,
            write_line=host._write_session,
            on_append=host._on_entry,
        )


def _reserve_tokens(settings: SettingsManager, model: Model | None) -> int | None:
    """``compaction.reserveTokens`` for ``model`` (``settings-manager.js:681``), or None when the
    settings are invalid: Pi then throws at its first compaction check, not at startup."""
    try:
        return settings.get_compaction_settings(model).reserve_tokens
    except SettingsError:
        return None
