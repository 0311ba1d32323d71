"""The session's tools: the active loadout, the tool calls, and the prompt sections they change.

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that knows the tools, held
by :class:`SessionTools` for its :class:`~.agent_session.AgentSession` (whose state it reads
and changes: ``active_tools``, the loadout-changed flag, the prompt inputs):

* the loadout: ``getActiveToolNames``/``getAllTools``/``setActiveToolsByName``
  (agent-session.js:1150-1193), ``_restoreToolsFromTranscript`` (:1460-1495), a tool
  registered after loading (``_refreshToolRegistry``, :2976-3060), the declarations the run's
  system message carries (``declareToolChanges``, pi-agent-core agent-loop.js:49, :121, :224-250);
* the prompt sections the tools, skills and context files make (``_rebuildSystemPrompt``,
  ``_preparePromptAndToolLoadout``, :1358-1415; after ``before_agent_start`` handlers,
  ``_prepareRun`` :1560-1599; ``getSystemPrompt``, :1139-1142);
* a tool call: ``_beforeToolCall``/``_afterToolCall`` (:385-445) with pi-agent-core's
  ``prepareToolCall``/``executePreparedToolCall``/``finalizeExecutedToolCall``
  (agent-loop.js:478-639), and ``ctx.execute_tool`` (``_executeNestedToolCall``, :446-476).

The rules of what is active are :mod:`.active_tools`'; the sections' text :mod:`.system_prompt`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pi_continuity_harness.api.abort import AbortSignal
from pi_continuity_harness.api.events import ToolCallEvent, ToolResultEvent
from pi_continuity_harness.api.extension_api import ToolCallOutcome, ToolDefinition, ToolInfo, ToolResult
from pi_continuity_harness.scenario.observed import event_summary
from pi_continuity_harness.scenario.transcript import js_string
from pi_continuity_harness.simulator.active_tools import (
    CORE_TOOL_NAMES,
    activatable_tools,
    core_tools,
    prompt_tools_and_rules,
    skills_reader,
    tool_infos,
)
from pi_continuity_harness.simulator.agent_loop import AgentEvent, PreparedTool, ToolUpdate, error_tool_result
from pi_continuity_harness.simulator.builtin_extension_tools import builtin_extension_tools
from pi_continuity_harness.simulator.builtin_tools import BUILTIN_TOOLS, ToolError
from pi_continuity_harness.simulator.edit_tool import prepare_edit_arguments
from pi_continuity_harness.simulator.json_copy import bridge_reply_copy, json_copy
from pi_continuity_harness.simulator.messages import Message, current_system_message, current_tools
from pi_continuity_harness.simulator.runner import bridged_copy
from pi_continuity_harness.simulator.session_shared import signal_aborted
from pi_continuity_harness.simulator.skills import format_skills_for_prompt
from pi_continuity_harness.simulator.system_prompt import (
    BUILTIN_TOOL_NAMES,
    current_sections,
    diff_sections,
    prompt_sections,
    render_system_prompt,
    system_message,
)
from pi_continuity_harness.simulator.tool_arguments import validate_arguments
from pi_continuity_harness.simulator.tool_declarations import declare_tool_changes, tool_declaration
from pi_continuity_harness.simulator.tool_result_hooks import after_tool_call

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["SessionTools"]


class _PromptInputs(TypedDict):
    """The keyword arguments of :func:`.system_prompt.prompt_sections` a session fills in."""

    skills: str
    extension_tools: tuple[tuple[str, str | None], ...]
    tools_and_rules: tuple[str, str] | None
    project_context: str
    custom_prompt: str
    addendum: str


#: Extension tool names that change the prompt without a snippet: a built-in's (its line goes)
#: and those ``buildRules`` checks (system-prompt.js:31-62).
_PROMPT_TOOL_NAMES = frozenset((*BUILTIN_TOOL_NAMES, "grep", "find", "ls"))
#: The eight built-ins' names (:data:`.active_tools.CORE_TOOL_NAMES`).
_CORE_NAMES = frozenset(CORE_TOOL_NAMES)
_DEFAULT_NAMES = frozenset(BUILTIN_TOOL_NAMES)


class SessionTools:
    """The tools job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    def _tool_exists(self, name: str) -> bool:
        """Whether ``name`` is among the executable tools (``context.tools``: the active ones)."""
        s = self._session
        if s.active_tools.explicit is not None:
            return name in self.active_tool_names()
        return any(t["name"] == name for t in BUILTIN_TOOLS) or any(
            t.name == name for t in self._activatable_tools()
        )

    def _activatable_tools(self) -> list[ToolDefinition]:
        """The runner's tools Pi activates (:func:`.active_tools.activatable_tools`)."""
        s = self._session
        runner = s._runner()
        return activatable_tools(runner.tools(), runner.loaded_tool_names)

    def active_tool_names(self) -> list[str]:
        """``pi.getActiveTools()``: the built-in tools, then every extension's registered tools,
        until an extension sets them (:mod:`.active_tools`)."""
        s = self._session
        return s.active_tools.names(self._activatable_tools())

    def set_active_tools(self, tool_names: list[str]) -> None:
        """``pi.setActiveTools`` (``setActiveToolsByName``, agent-session.js:1182-1193): see
        :mod:`.active_tools`; the model sees the change at its next request."""
        s = self._session
        s.active_tools.set(tool_names, self._activatable_tools())
        s._loadout_changed = True

    def restore_tools_from_transcript(self) -> None:
        """``_restoreToolsFromTranscript`` (agent-session.js:1460-1487): the branch's declared
        tools become the active ones (:meth:`.active_tools.ActiveTools.restore`); nothing without
        a system message on the branch."""
        s = self._session
        systems = [
            e["message"]
            for e in s.session_manager.get_branch()
            if e.get("type") == "message" and e["message"].get("role") == "system"
        ]
        if not systems:
            return
        mentioned = {
            str(t.get("name"))
            for m in systems
            for t in [*(m.get("toolsAdded") or []), *(m.get("toolsRemoved") or [])]
            if isinstance(t, dict)
        }
        declared = [str(t.get("name")) for t in current_tools(systems)]
        s.active_tools.restore(declared, mentioned, self._activatable_tools())

    def mark_loadout_changed(self) -> None:
        """A tool registered after loading: Pi refreshes the registry at once (loader.js:246-249,
        ``_refreshToolRegistry``), so the next turn of a running run declares it and lists its
        snippet (``prepareNextTurnWithContext``, agent-session.js:593-620)."""
        s = self._session
        s._loadout_changed = True

    def all_tools(self) -> list[ToolInfo]:
        """``pi.getAllTools()`` (agent-session.js:1160-1172, :func:`.active_tools.tool_infos`)."""
        s = self._session
        runner = s._runner()
        paths = {name: record.path for record in runner.extensions for name in record.tools}
        return tool_infos(runner.tools(), paths, s.package_dir)

    def declare_turn_tools(self, pending: list[Message], *, lazy_clock: bool = False) -> list[Message]:
        """``declareToolChanges`` before a later turn's request (pi-agent-core agent-loop.js:121):
        ``pending`` (the prepared section patch, then steering messages) with the tool changes
        declared on its system message or a new one. ``lazy_clock`` (a continuation's first
        request): the clock is read only for a new system message, as Pi's (:246)."""
        s = self._session
        clock = s.service.clock
        return declare_tool_changes(
            s.session_manager.build_session_projection().messages,
            pending,
            self.tool_declarations(),
            clock.now_ms if lazy_clock else clock.now_ms(),
        )

    async def prepare_tool(
        self, call: dict[str, Any], signal: AbortSignal, assistant: Message, parent: str | None = None
    ) -> PreparedTool:
        """``prepareToolCall`` (AC agent-loop.js:478-538): an abort, an unknown tool, invalid
        arguments or a ``tool_call`` handler's block end the call at once (no ``durationMs``);
        otherwise the call is prepared with its validated arguments. ``parent``: the calling
        call's id of a nested call (its ``tool_call`` carries it, agent-session.js:385-396)."""
        s = self._session
        runner = s._runner()
        name = call["name"]
        args = call.get("arguments") or {}
        if signal.aborted:
            return PreparedTool(immediate=error_tool_result("Operation aborted"))
        if not self._tool_exists(name):
            return PreparedTool(immediate=error_tool_result(f"Tool {name} not found"))
        tool = next((t for t in runner.tools() if t.name == name), None)
        if tool is not None:
            # Pi validates (and coerces) an extension tool's arguments before anything else:
            # ``"5"`` reaches ``tool_call`` and ``execute`` as ``5``; a missing required field
            # never reaches ``execute`` (handoff-host-on-real-pi.md §1, items 2-3).
            args, problem = validate_arguments(name, tool.parameters, args)
            if problem is not None:
                return PreparedTool(immediate=error_tool_result(problem))
        elif name in core_tools():
            # A built-in's arguments are prepared (``edit``: prepareEditArguments) and checked
            # against its schema too (AC agent-loop.js:497-498, :mod:`.tool_arguments`).
            # prepareEditArguments changes the call's own arguments in place (edit.js:49-59:
            # ``args.edits = parsed``), so the assistant message in memory, and every later
            # request, carries the ``edits`` list (the session file line was written before).
            prepared = prepare_edit_arguments(args) if name == "edit" else args
            args, problem = validate_arguments(name, core_tools()[name].declaration["parameters"], prepared)
            if problem is not None:
                return PreparedTool(immediate=error_tool_result(problem))
        if runner.has_handlers("tool_call"):
            ctx = runner.create_context()
            event = ToolCallEvent(
                tool_call_id=call["id"], tool_name=name, input=args, parent_tool_call_id=parent
            )
            s.trace.emit("event", "tool_call", toolName=name)
            # Every handler runs, up to the first block (runner.js:970-985); only then does the
            # loop look at the signal (AC agent-loop.js:505-510): a handler that aborts the run
            # does not stop the later ones, and an abort wins over a block.
            blocking: dict[str, Any] | None = None
            for _record, handlers in runner.handlers_of("tool_call"):
                for handler in handlers:
                    failure: Exception | None = None
                    try:
                        # A copy, as the bridge gives a Python handler (``bridged_copy``): a
                        # handler that changes ``event.input`` in place changes no argument.
                        value = await runner.call_handler(handler, bridged_copy(event), ctx)
                    except Exception as error:
                        failure = error
                    # runner.js awaits each handler (``emitToolCall``, :970-985): what it sent
                    # (``send_user_message``) is queued before the next handler runs, so that
                    # one's ``has_pending_messages()`` counts it, as between other events'
                    # handlers (``ExtensionRunner.emit``; ``test_differential_handler_sends.py``),
                    # and before a failed handler's blocked call ends.
                    await s.settle_preflights()
                    if failure is not None:  # tool_call errors block the tool (fail-safe)
                        return PreparedTool(immediate=error_tool_result(str(failure)))
                    if isinstance(value, dict) and value.get("block"):
                        blocking = value
                        break
                if blocking is not None:
                    break
            if signal_aborted(signal):  # a handler may abort (AC agent-loop.js:505-510)
                return PreparedTool(immediate=error_tool_result("Operation aborted"))
            if blocking is not None:
                blocked = error_tool_result(blocking.get("reason") or "Tool execution was blocked")
                # A block's ``terminate: true`` stays on the error result, so a batch whose
                # calls all end so ends the run (AC agent-loop.js:512-516, :462-463).
                if blocking.get("terminate") is True:
                    blocked["terminate"] = True
                return PreparedTool(immediate=blocked)
        return PreparedTool(args=args)

    async def execute_tool(
        self,
        call: dict[str, Any],
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdate,
        parent: str | None = None,
    ) -> tuple[dict[str, Any], Any]:
        """``executePreparedToolCall`` and ``finalizeExecutedToolCall`` (AC agent-loop.js:568-639):
        the tool runs (a thrown error becomes an error result with ``details: {}``), then
        ``tool_result`` handlers see the result and may change it (``isError`` too, to any JSON
        value: Pi keeps a handler's ``"yes"``). The tool gets the tool context (``execute_tool``
        for the call); ``parent`` as in :meth:`prepare_tool` (agent-session.js:407-416)."""
        s = self._session
        runner = s._runner()
        name = call["name"]
        tool = next((t for t in runner.tools() if t.name == name), None)
        is_error: bool
        if tool is not None:
            try:
                # The params and the result cross the bridge as JSON on real Pi: an ``execute`` that
                # changes its params, or keeps and later changes its result, changes nothing of Pi's.
                params = json_copy(args)
                context = runner.create_tool_context(call["id"], signal)
                result: ToolResult = await tool.execute(call["id"], params, signal, context)
                # (a set a list, bytes their ``str()``, ``1.0`` the integer 1: ``bridge_reply_copy``;
                # a tuple key or a cycle the bridge's error reply, so Pi's ``execute`` throws)
                out = {
                    "content": bridge_reply_copy(list(result.content)),
                    "details": bridge_reply_copy(result.details),
                }
            except Exception as error:
                out, is_error = error_tool_result(str(error)), True
            else:
                if result.is_error:
                    # The bridge's ``execute`` throws for an error result (``bridge.ts``
                    # ``registerTool``: the blocks' texts joined, or "tool failed"), so the call's
                    # result is ``createErrorToolResult`` of that (AC agent-loop.js:582-590):
                    # one text block, ``details: {}``.
                    out, is_error = error_tool_result(_failed_tool_text(out["content"])), True
                else:
                    # ``bridge.ts`` passes ``terminate`` only when it is ``true``.
                    if result.terminate is True:
                        out["terminate"] = True
                    is_error = False
            # What the tool sent Pi before it returned (``send_user_message``) reaches Pi before
            # its reply: the bridge is one connection read line by line, in order (``bridge.ts``
            # ``onData``), so Pi queues or rejects the message (``queue_update``) before the
            # call's result comes back, unless a Python extension handles ``input``: Pi then
            # awaits that handler's round trip through the bridge (``_runInputHandlers``,
            # agent-session.js:1745), reads the reply meanwhile and ends the call first, as the
            # simulator's send does when it is not settled here.
            # ``tests/realpi/test_differential_tool_sends.py``.
            if not runner.has_handlers("input"):
                await s.settle_preflights()
        else:
            try:
                # The validated (coerced, prepared) arguments, as Pi's execute gets them.
                run = s.builtin_tools.run({**call, "arguments": args})
            except ToolError as error:
                out, is_error = error_tool_result(str(error)), True
            else:
                for update in run.updates:
                    await on_update(update)
                out, is_error = run.result, run.is_error
        if not runner.has_handlers("tool_result"):
            return out, is_error
        # ``_afterToolCall`` (agent-session.js:406-440) and ``finalizeExecutedToolCall``
        # (AC agent-loop.js:598-630): the handlers' changes become the call's result
        # (``simulator/tool_result_hooks.py``), in ``tool_execution_end``, the ``toolResult``
        # message and the next request.
        first = ToolResultEvent(
            tool_call_id=call["id"],
            tool_name=name,
            input=args,
            content=out["content"],
            details=out.get("details"),
            is_error=is_error,
            parent_tool_call_id=parent,
        )
        s.trace.emit("event", first.type, **event_summary(first))
        hook = await runner.emit_tool_result(call["id"], name, args, out, is_error, parent=parent)
        await s.settle_preflights()
        return after_tool_call(out, is_error, hook)

    async def execute_nested_tool(
        self, parent: str, name: str, args: Any, signal: AbortSignal | None
    ) -> ToolCallOutcome:
        """``ctx.execute_tool`` of the tool call ``parent`` (``_executeNestedToolCall``,
        agent-session.js:446-475; ``NestedToolCallRunner.execute``, nested-tool-calls.js:96-160;
        ``runToolCall``, pi-agent-core agent-loop.js:559-566): ``tool_execution_start``, then the
        model's pipeline against the callable (active) tools (an unknown or inactive tool, invalid
        arguments, a ``tool_call`` block or an abort end it at once; else the tool runs, its
        updates as ``tool_execution_update``, then ``tool_result``), then
        ``tool_execution_end``; every event carries ``parentToolCallId``. No message: the record
        goes on the calling call's result message (``AgentSession._handle_agent_event``). Pi's queue
        for sequential tools (:112-122) is not modelled: it holds only tools whose
        ``executionMode`` is ``"sequential"`` or an agent whose ``toolExecution`` is, and neither
        a Python tool (whose definition has no such field), a built-in nor Pi's session sets one;
        nested calls of tools running at once interleave as those tools do
        (``Agent._execute_tools``)."""
        s = self._session
        loop_ms = s.service.clock.loop_ms
        run_signal = signal if signal is not None else AbortSignal()
        call, handle = s._nested_calls.begin(parent, name, args, loop_ms())
        arguments = call["arguments"]
        await s._handle_agent_event(
            {
                "type": "tool_execution_start",
                "toolCallId": call["id"],
                "toolName": name,
                "args": arguments,
                "parentToolCallId": parent,
            },
            run_signal,
        )
        duration: int | None = None
        assistant = s._find_last_assistant()
        if assistant is None:  # agent-session.js:452-458
            result, is_error = error_tool_result("No assistant message issued this call"), True
        else:
            preparation = await self.prepare_tool(call, run_signal, assistant, parent)
            if preparation.immediate is not None:
                result, is_error = preparation.immediate, True
            else:

                async def on_update(partial: dict[str, Any]) -> None:
                    await s._handle_agent_event(
                        {
                            "type": "tool_execution_update",
                            "toolCallId": call["id"],
                            "toolName": name,
                            "args": arguments,
                            "partialResult": partial,
                            "parentToolCallId": parent,
                        },
                        run_signal,
                    )

                started = loop_ms()
                result, is_error = await self.execute_tool(
                    call, preparation.args, run_signal, on_update, parent
                )
                duration = max(0, loop_ms() - started)
        s._nested_calls.end(call, handle, result, is_error, loop_ms())
        end: AgentEvent = {
            "type": "tool_execution_end",
            "toolCallId": call["id"],
            "toolName": name,
            "result": result,
            "isError": is_error,
        }
        if duration is not None:
            end["durationMs"] = duration
        end["parentToolCallId"] = parent
        await s._handle_agent_event(end, run_signal)
        return ToolCallOutcome(tool_call=call, result=result, is_error=is_error, duration_ms=duration)

    def prompt_after_handlers(
        self,
        messages: list[Message],
        transcript: list[Message],
        tools: tuple[tuple[str, str | None], ...],
        definitions: list[ToolDefinition],
    ) -> list[Message]:
        """The run's system message again, when ``before_agent_start`` handlers changed the active
        tools (``set_active_tools``, or a tool they registered). Pi builds the run's sections after
        the handlers (``_prepareRun``, agent-session.js:1560-1599) from the options it handed them:
        the live active tools (:1565-1568) but the snippets and guidelines of the tools registered
        before (``tools``, ``definitions``): a tool a handler registers is declared in this run
        and listed in ``tools`` from the next. (A tool named like a built-in that is registered
        after loading is not activated at all, ``_refreshToolRegistry`` :3049-3055; a Python
        tool has no guidelines: so only a ``set_active_tools`` changes this run's sections.)
        The message keeps the timestamp it had."""
        s = self._session
        live = {t.name for t in s._runner().tools()}
        inputs = self.prompt_inputs(tools, [t for t in definitions if t.name in live])
        sections = prompt_sections(s.cwd, s.package_dir, **inputs)
        head = messages[0] if messages else None
        if not any(m.get("role") == "system" for m in transcript):
            assert head is not None and head.get("role") == "system"
            return [{**head, "sections": sections}, *messages[1:]]
        patch = diff_sections(current_sections(transcript) or {}, sections)
        rest = messages[1:] if head is not None and head.get("role") == "system" else messages
        if patch is None:
            return rest
        stamp = (
            head["timestamp"]
            if head is not None and head.get("role") == "system"
            else s.service.clock.now_ms()
        )
        return [{"role": "system", "content": "", "sections": patch, "timestamp": stamp}, *rest]

    def sections_patch(self, transcript: list[Message]) -> Message | None:
        """The system message patching the sections that differ from ``transcript``'s
        (``_preparePromptAndToolLoadout``, agent-session.js:1394-1400), or None."""
        s = self._session
        tools = self.prompt_extension_tools()
        patch = diff_sections(
            current_sections(transcript) or {},
            prompt_sections(s.cwd, s.package_dir, **self.prompt_inputs(tools)),
        )
        if patch is None:
            return None
        return {"role": "system", "content": "", "sections": patch, "timestamp": s.service.clock.now_ms()}

    def prompt_inputs(
        self, tools: tuple[tuple[str, str | None], ...], definitions: list[ToolDefinition] | None = None
    ) -> _PromptInputs:
        """What :func:`.system_prompt.prompt_sections` takes besides the cwd and package: once an
        extension set the active tools, the ``tools`` and ``rules`` sections of those
        (:func:`.active_tools.prompt_tools_and_rules`) and the skills read with the first active
        reader (system-prompt.js:100-104)."""
        s = self._session
        if s.active_tools.explicit is not None:
            active = self.active_tool_names()
            extension_tools = s._runner().tools() if definitions is None else definitions
            reader = skills_reader(active)
            skills = format_skills_for_prompt(s.skills, reader) if reader and s.skills else ""
            return {
                "skills": skills,
                "extension_tools": tools,
                "tools_and_rules": prompt_tools_and_rules(active, extension_tools),
                "project_context": s.project_context,
                "custom_prompt": s.custom_prompt,
                "addendum": s.prompt_addendum,
            }
        replaced = not _DEFAULT_NAMES.isdisjoint(name for name, _ in tools)
        return {
            "skills": s.skills_prompt,
            "extension_tools": tools,
            # An extension tool named like a default built-in takes its snippet and guidelines
            # (none from Python) with its definition: the general builder drops the guidelines.
            "tools_and_rules": (
                prompt_tools_and_rules(
                    self.active_tool_names(),
                    self._activatable_tools() if definitions is None else definitions,
                )
                if replaced
                else None
            ),
            "project_context": s.project_context,
            "custom_prompt": s.custom_prompt,
            "addendum": s.prompt_addendum,
        }

    def prompt_extension_tools(self) -> tuple[tuple[str, str | None], ...]:
        """The extension tools that change the prompt's ``tools`` or ``rules`` section, as
        (name, ``promptSnippet``) in registration order: those with a snippet, or named like a
        built-in (whose line they replace) or ``grep``/``find``/``ls`` (``buildRules``,
        system-prompt.js:31-62). Empty for most sessions, so their sections are the dumped ones."""
        return tuple(
            (tool.name, tool.prompt_snippet)
            for tool in self._activatable_tools()
            if tool.prompt_snippet or tool.name in _PROMPT_TOOL_NAMES
        )

    def tool_declarations(self) -> list[dict[str, Any]]:
        """``context.tools`` as declarations: the built-ins, then every extension's tools in
        registration order (the order :meth:`active_tool_names` reports).

        The built-ins are the shared :data:`BUILTIN_TOOLS`, not a fresh copy: these lists are
        only compared with what the transcript declares, and ``declare_tool_changes`` copies
        a declaration it puts on a message (parsing a fresh copy before every run was 1 % of
        the suite's CPU time, issue 16)."""
        s = self._session
        tools = s._runner().tools()
        names = [t.name for t in tools]
        if (
            s.active_tools.explicit is not None
            or len(set(names)) != len(names)
            or not _CORE_NAMES.isdisjoint(names)
        ):
            # The registry's definition of each active name: an extension's tool replaces a
            # built-in's, a later one of the same name an earlier one's (a Map, agent-session.js:
            # 2990-3000), so a name is declared once.
            defined: dict[str, dict[str, Any]] = {n: t.declaration for n, t in core_tools().items()}
            defined.update((t.name, t.declaration()) for t in builtin_extension_tools(tools) if t.activatable)
            defined.update((t.name, tool_declaration(t)) for t in tools)
            return [defined[name] for name in self.active_tool_names()]
        return [*BUILTIN_TOOLS, *(tool_declaration(t) for t in tools)]

    def system_prompt(self) -> str:
        """``getSystemPrompt()``: the current system message rendered (the default before any run)."""
        s = self._session
        projection = s.session_manager.build_session_projection()
        current = current_system_message(projection.messages)
        if current is None:
            current = system_message(
                s.cwd, 0, s.package_dir, **self.prompt_inputs(self.prompt_extension_tools())
            )
        return render_system_prompt(current)


def _failed_tool_text(content: list[Any]) -> str:
    """The message ``bridge.ts`` ``registerTool`` throws for a Python tool's error result:
    ``content.map((b) => b?.text ?? "").join("") || "tool failed"`` (a block without a
    ``text``, or not an object, adds nothing; another value is its ``String()``)."""
    texts = (block.get("text") if isinstance(block, dict) else None for block in content)
    return "".join("" if text is None else js_string(text) for text in texts) or "tool failed"
