"""The extension runner of a runtime and what its ``pi``/``ctx`` calls reach.

The part of the simulated process (:mod:`.host`) that connects a runtime's
:class:`~.runner.ExtensionRunner` to the session and the process: :func:`new_runner` makes the
runner (Pi's ``_buildRuntime``, agent-session.js:3069-3093: ``new ExtensionRunner`` at :3089) with
its error and call hooks, and :func:`runtime_bindings` the :class:`~.runner.RuntimeBindings`
(Pi's ``_bindExtensionCore``, agent-session.js:2848-2975): each action an extension's ``pi`` or
``ctx`` calls, as Pi's session carries it out, with the JSON crossing of the bridge
(:func:`.json_copy.bridge_copy`) where real Pi's call crosses it. Both run once per runtime (start,
new session, fork, reload), never per event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_continuity_harness.api.events import SessionInfoChangedEvent
from pi_continuity_harness.api.extension_api import CommandInfo, Model
from pi_continuity_harness.simulator.agent_session import AgentSession, PiThrewError, PromptRejectedError
from pi_continuity_harness.simulator.commands import command_infos, extension_resource_info
from pi_continuity_harness.simulator.json_copy import NOT_FOR_PI, bridge_copy, json_copy
from pi_continuity_harness.simulator.messages import absent_if_none
from pi_continuity_harness.simulator.model_service import SimModelRegistry
from pi_continuity_harness.simulator.runner import ExtensionRecord, ExtensionRunner, RuntimeBindings
from pi_continuity_harness.simulator.session_manager import SessionManager
from pi_continuity_harness.simulator.skill_dirs import skill_source

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.host import SimHost
    from pi_continuity_harness.simulator.host_shared import Runtime

__all__ = ["new_runner", "runtime_bindings"]


def new_runner(host: SimHost, session: AgentSession, manager: SessionManager) -> ExtensionRunner:
    """A runtime's extension runner (``_buildRuntime``, agent-session.js:3089): its errors and
    calls go to the trace, and its errors to the RPC events too (``extension_error``)."""

    def on_error(path: str, event: str, error: str) -> None:
        host.trace.emit("session", "extension_error", extensionPath=path, event=event, error=error)
        host.record_rpc({"type": "extension_error", "extensionPath": path, "event": event, "error": error})

    def on_call(path: str, name: str, data: dict[str, Any]) -> None:
        host.trace.emit("call", name, ext=path, **data)

    def on_model_call(name: str, data: dict[str, Any]) -> None:
        host.trace.emit("call", name, **data)

    registry = SimModelRegistry(host.service, on_model_call)
    return ExtensionRunner(
        cwd=host.paths.project_dir,
        mode=host.mode,
        session_manager=manager,
        model_registry=registry,
        ui=host.ui,
        on_error=on_error,
        on_call=on_call,
        between_handlers=session.settle_preflights,
    )


def runtime_bindings(host: SimHost, runtime: Runtime) -> RuntimeBindings:
    """What ``runtime``'s extensions' ``pi``/``ctx`` calls reach (``_bindExtensionCore``,
    agent-session.js:2848-2975): built once per runtime (startup, new session, fork, reload),
    bound to its runner after the extensions loaded."""
    session = runtime.session
    b = RuntimeBindings()

    def send_message(message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None) -> None:
        # The message as it is now: on real Pi it crossed the bridge as JSON at this call, so a
        # later change to it by the extension is not Pi's (``append_entry`` alike), a set in
        # its details is a list, bytes their ``str()`` (``bridge_copy``), and a NaN in it
        # loses the call.
        sent = bridge_copy(message)
        if sent is not NOT_FOR_PI:
            session.send_custom_message(sent, trigger_turn, deliver_as)

    b.send_message = send_message

    def send_user_message(
        content: str | list[dict[str, Any]], deliver_as: str | None, expand_prompt_templates: bool
    ) -> None:
        # The content as the bridge's JSON gives it to Pi (``send_message`` alike).
        sent = bridge_copy(content)
        if sent is not NOT_FOR_PI:
            session.send_user_message(sent, deliver_as, expand_prompt_templates)

    b.send_user_message = send_user_message

    def append_entry(custom_type: str, data: Any) -> None:
        # The data as it is now: on real Pi it crossed the bridge as JSON at this call
        # (``BridgeExtensionAPI.append_entry``), so a later change to it, by the extension,
        # is not Pi's; a tuple or a set is a list, an int key a string key, bytes or a path
        # their ``str()``, 1.0 the integer 1 (``bridge_copy``). With a NaN or an infinity in
        # it the bridge's line is not JSON and Pi never sees the call: no entry, no error.
        sent = bridge_copy([custom_type, data])
        if sent is NOT_FOR_PI:
            return
        custom_type, data = sent
        entry_id = session.session_manager.append_custom_entry(custom_type, absent_if_none(data))
        host.trace.emit("session", "entry_appended", entryType="custom", id=entry_id)
        host.record_rpc({"type": "entry_appended", "entry": session.session_manager.get_entry(entry_id)})

    b.append_entry = append_entry
    b.get_settings = runtime.settings.get_settings

    def set_session_name(name: str) -> None:
        # ``AgentSession.setSessionName``: append, then the session event RPC streams and
        # the (not awaited) extension event. A name that is not a string after the bridge's
        # JSON (``None``, a number) makes ``appendSessionInfo``'s ``name.replace`` throw
        # (session-manager.js:935-936) inside Pi's fire-and-forget call: nothing is
        # appended and the extension sees no error.
        sent = bridge_copy(name)
        if not isinstance(sent, str):
            return
        name = sent
        session.session_manager.append_session_info(name)
        current = session.session_manager.get_session_name()
        # (``name`` is the trace's own field: recorded as ``sessionName``; SimTarget maps it back.)
        host.trace.emit("session", "session_info_changed", sessionName=current)
        # A cleared name is ``undefined`` (agent-session.js:3350-3354): RPC's JSON line has no
        # ``name`` at all, not ``"name": null``.
        changed: dict[str, Any] = {"type": "session_info_changed"}
        if current is not None:
            changed["name"] = current
        host.record_rpc(changed)
        if session.runner is not None and session.runner.has_handlers("session_info_changed"):
            host.spawn(session.dispatch(SessionInfoChangedEvent(name=current)), "session_info_changed")

    b.set_session_name = set_session_name

    def set_label(entry_id: Any, label: Any) -> None:
        # agent-session.js:2902-2904: the append alone, no event; Pi's Error for an unknown
        # entry reaches the extension (session-manager.js:1056-1058).
        try:
            session.session_manager.append_label_change(entry_id, label)
        except ValueError as error:
            raise PiThrewError(str(error)) from None

    b.set_label = set_label
    b.get_session_name = session.session_manager.get_session_name
    b.get_active_tools = session.active_tool_names
    b.execute_tool = session.execute_nested_tool
    b.get_all_tools = session.all_tools

    def get_commands() -> list[CommandInfo]:
        # agent-session.js:2849-2872 (simulator/commands.py). A run with prompt templates
        # the simulator does not load never gets here (``HostRuntimes._load_prompt_templates``).
        runner = session.runner
        assert runner is not None
        commands = [
            (invocation, owner.path, owner.commands[name][1])
            if isinstance(owner, ExtensionRecord)
            else (invocation, owner.path, owner.description)
            for invocation, owner, name in runner.resolved_commands()
        ]
        origins = dict(session.default_skills)
        skills = [
            (
                skill.name,
                skill.description,
                skill.file_path,
                skill_source(skill.file_path, session.extension_skill_owners, origins),
            )
            for skill in session.skills
        ]
        templates = [
            (
                t.name,
                t.description,
                extension_resource_info(t.file_path, t.owner) if t.owner else t.source_info,
            )
            for t in session.prompt_templates.templates
        ]
        return command_infos(commands, skills, templates)

    b.get_commands = get_commands
    b.set_active_tools = session.set_active_tools
    b.tools_changed = session.mark_loadout_changed

    async def set_model(model: Model) -> bool:
        if not host.catalog.has_auth(model.provider):
            return False
        await session.set_model(model)
        return True

    b.set_model = set_model
    b.get_thinking_level = lambda: host.thinking_level
    b.set_thinking_level = lambda level: session.set_thinking_level(level, from_extension=True)
    b.get_model = lambda: session.model
    b.is_idle = lambda: session.is_idle
    b.is_project_trusted = runtime.settings.is_project_trusted
    b.get_signal = lambda: session.agent.signal
    b.abort = session.request_abort
    b.has_pending_messages = lambda: session.pending_message_count > 0
    b.shutdown = host._request_shutdown
    b.get_context_usage = session.get_context_usage

    def compact(instructions: str | None, on_complete: Any, on_error: Any) -> None:
        # ``compact()`` starts with ``await this.abort()``: the abort is immediate (§9.1).
        session.abort_now()

        async def run() -> None:
            try:
                result = await session.compact(instructions)
            except PiThrewError as error:
                # Pi hands ``onError`` the Error compact() threw (agent-session.js:2936-2948).
                if on_error is not None:
                    on_error(error)
                return
            if on_complete is not None:
                on_complete(result)

        host.spawn(run(), "ctx.compact")

    b.compact = compact
    b.get_system_prompt = session.system_prompt
    b.wait_for_idle = session.wait_for_idle

    async def new_session(parent_session: str | None, with_session: Any) -> dict[str, Any]:
        return await host.new_session(parent_session=parent_session, with_session=with_session)

    b.new_session = new_session

    async def fork(entry_id: str, position: str, with_session: Any) -> dict[str, Any]:
        # rpc-mode.js:255-258: only ``{cancelled}``; what Pi throws reaches the extension.
        try:
            result = await host.fork(
                entry_id, "at" if position == "at" else "before", with_session=with_session
            )
        except PiThrewError:
            raise
        except PromptRejectedError as error:
            raise PiThrewError(str(error)) from None
        return {"cancelled": bool(result.get("cancelled"))}

    b.fork = fork

    async def switch_session(session_path: str, with_session: Any) -> dict[str, Any]:
        return await host.switch_session(session_path, with_session=with_session)

    b.switch_session = switch_session
    b.reload = host.reload

    async def navigate_tree(
        target_id: str,
        summarize: bool,
        custom_instructions: str | None,
        replace_instructions: bool | None,
        label: str | None,
    ) -> dict[str, Any]:
        # Every mode hands extensions only ``{cancelled}`` (rpc-mode.js:259-267,
        # print-mode.js:85-93, interactive-mode.js:1646-1655).
        result = await session.navigate_tree(
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        return {"cancelled": bool(result.get("cancelled"))}

    b.navigate_tree = navigate_tree
    b.send_user_message_settled = session.send_user_message_settled

    async def send_message_settled(
        message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None
    ) -> None:
        await session.send_message_settled(json_copy(message), trigger_turn, deliver_as)

    b.send_message_settled = send_message_settled
    return b
