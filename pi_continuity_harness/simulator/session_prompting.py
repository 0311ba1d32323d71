"""The session's input: prompts, the steering and follow-up queues, custom messages, shell commands.

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that takes what the user,
RPC and extensions send, held by :class:`SessionPrompting` for its
:class:`~.agent_session.AgentSession` (whose queues, pending messages and preflight count it
changes, and whose runs it starts):

* ``prompt()`` (agent-session.js:1704-1740): an extension command first
  (``_tryExecuteExtensionCommand``, :1791-1819), the ``input`` handlers (``_runInputHandlers``,
  :1663-1675), ``/skill:`` expansion (``_expandSkillCommand``, :1820-1844), the prompt
  templates' (``expandPromptTemplate``, :1755, :mod:`.prompt_templates`), then a run, or the
  queue while one streams (``_preparePrompt``, :1741-1790; ``_queueSteer``/``_queueFollowUp``,
  :1845-1933; ``clearQueue``, :2055-2064);
* ``pi.sendUserMessage`` (fire-and-forget, failures become extension errors, :2021-2054) and
  ``pi.sendMessage`` (``sendCustomMessage``, :1955-1993; ``_appendCustomMessage`` and the
  messages held while a run streams, :1994-2020), and their ``ReplacedSessionContext`` forms
  (:3732-3740), awaited to settlement;
* RPC ``bash``: ``executeBash``/``recordBashResult`` and the records held while a run streams
  (:3267-3349).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pi_continuity_harness.api.events import InputEvent, UserBashEvent
from pi_continuity_harness.scenario.observed import event_summary
from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.json_copy import json_copy_or_same
from pi_continuity_harness.simulator.messages import Message, absent_if_none, user_message
from pi_continuity_harness.simulator.prompt_templates import expand_prompt_template
from pi_continuity_harness.simulator.session_shared import PiThrewError, Trigger
from pi_continuity_harness.simulator.skills import expand_skill_command
from pi_continuity_harness.simulator.user_bash import bash_message, local_result
from pi_continuity_harness.simulator.virtual_loop import InstantMark

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["BUSY_WITHOUT_BEHAVIOR", "PROMPT_DURING_COMPACTION", "SessionPrompting"]

BUSY_WITHOUT_BEHAVIOR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)
PROMPT_DURING_COMPACTION = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
)


class SessionPrompting:
    """The input job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    async def prompt(
        self,
        text: str,
        *,
        source: Literal["interactive", "rpc", "extension"] = "rpc",
        streaming_behavior: Literal["steer", "followUp"] | None = None,
        expand_prompt_templates: bool = True,
        preflight: Callable[[str], None] | None = None,
        images: tuple[dict[str, Any], ...] = (),
    ) -> None:
        """``AgentSession.prompt``; raises :class:`PiThrewError` where Pi would throw.

        ``images`` (RPC ``prompt.images``) follow the text in the user message
        (``agent-session.js:1574-1581``); ``processImage`` passes the PNGs a scenario may carry
        through unchanged (``utils/image-resize-core.js:53-62``), so they are kept as given.
        """
        s = self._session
        if s._is_emitting_settled:
            s._deferred_settled.append(
                lambda: self.prompt(
                    text,
                    source=source,
                    streaming_behavior=streaming_behavior,
                    expand_prompt_templates=expand_prompt_templates,
                    images=images,
                )
            )
            return
        if (
            expand_prompt_templates
            and text.startswith("/")
            and await self._try_execute_command(text, preflight)
        ):
            return
        if s._compaction_abort is not None or s._branch_summary_abort is not None:
            raise PiThrewError(PROMPT_DURING_COMPACTION)
        s._prompt_preflight_count += 1
        try:
            trigger = await self._prepare_prompt(
                text, source, streaming_behavior, preflight, images, expand_prompt_templates
            )
        finally:
            s._prompt_preflight_count -= 1
        if trigger is not None:
            await s._runs.start_run(trigger, lambda: preflight("started") if preflight else None)

    async def _try_execute_command(self, text: str, preflight: Callable[[str], None] | None = None) -> bool:
        """Run the command ``text`` names, if there is one (True: it was a command).

        ``preflight("handled")`` comes before the handler runs: ``prompt()`` decided, and an
        extension's ``sendUserMessage`` of a command (fire-and-forget) does not hold the dispatch
        that sent it until the command is done. Awaited to its end, a command that waits for Pi to
        be idle (``ctx.newSession()`` aborts the run and waits for it) waited for the run that
        waited for it: the simulation stalled where real Pi runs on."""
        s = self._session
        runner = s._runner()
        space = text.find(" ")
        name = text[1:] if space == -1 else text[1:space]
        args = "" if space == -1 else text[space + 1 :]
        found = runner.get_command(name)
        if found is None and name not in s.host_commands:
            return False
        if preflight:
            preflight("handled")
        if found is None:
            await s.host_commands[name](args)
            return True
        _record, handler = found
        s.trace.emit("event", "command", command=name, args=args)
        context = runner.create_command_context()
        # Without a UI (print and json modes) ``ctx.ui`` is Pi's no-op context, and what the
        # user sees of a command is what it writes to stdout or stderr: Pi hands stdout over to
        # stderr there (output-guard.js takeOverStdout; main.js:566). Recorded as ``ui:output``.
        captured = io.StringIO() if not context.has_ui else None
        try:
            if captured is None:
                await handler(args, context)
            else:
                with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
                    await handler(args, context)
        except Exception as error:
            runner.emit_error(f"command:{name}", "command", str(error) or type(error).__name__)
        finally:
            if captured is not None and captured.getvalue():
                s.trace.emit("ui", "output", command=name, text=captured.getvalue())
        return True

    async def _prepare_prompt(
        self,
        text: str,
        source: Literal["interactive", "rpc", "extension"],
        streaming_behavior: Literal["steer", "followUp"] | None,
        preflight: Callable[[str], None] | None,
        images: tuple[dict[str, Any], ...] = (),
        expand_prompt_templates: bool = True,
    ) -> Trigger | None:
        s = self._session
        runner = s._runner()
        behavior = streaming_behavior if s.is_streaming else None
        current: Any = text  # Pi's currentText: a string, or what a transform left (UNDEFINED...)
        current_images = images
        event = InputEvent(
            text=text, images=list(images) if images else None, source=source, streaming_behavior=behavior
        )
        s.trace.emit("event", "input", **event_summary(event))
        if runner.has_handlers("input"):
            result = await runner.emit_input(event)
            if result.action == "handled":
                if preflight:
                    preflight("handled")
                return None
            if result.action == "transform" and result.text_error is not None:
                if expand_prompt_templates:
                    # A transform left no string text: ``_expandSkillCommand`` throws
                    # (agent-session.js:1754, 1821), and the prompt fails with V8's message.
                    raise PiThrewError(result.text_error)
                # Without expansion (``sendUserMessage``'s default, agent-session.js:2045)
                # Pi goes on with the text as the transform left it (``_runInputHandlers``,
                # :1670-1671): the user message's text block has no text (``undefined``;
                # ``null``, a number), it is stored so, and pi-ai's estimate of every later
                # request throws on it (``user_message``, ``_stream_assistant``).
                current = result.pi_text
            elif result.action == "transform" and result.text is not None:
                current = result.text
            if result.action == "transform" and result.images is not None:
                # ``inputResult.images ?? images`` (agent-session.js:1672)
                current_images = tuple(result.images)
        if expand_prompt_templates and s.skills and isinstance(current, str):
            current = self._expand_skill_command(current)
        if expand_prompt_templates and s.prompt_templates.templates and isinstance(current, str):
            # After the input event and /skill: expansion (agent-session.js:1753-1756).
            current = expand_prompt_template(current, s.prompt_templates.templates)
        if s.is_streaming:
            if not streaming_behavior:
                raise PiThrewError(BUSY_WITHOUT_BEHAVIOR)
            if streaming_behavior == "followUp":
                self._queue_follow_up(current, current_images)
            else:
                self._queue_steer(current, current_images)
            if preflight:
                preflight("queued")
            return None
        if s.model is None:
            raise PiThrewError("No model selected.")
        if not s.service.catalog.has_auth(s.model.provider):
            raise PiThrewError(f'No API key found for "{s.model.provider}".')
        return Trigger("user", prompt=current, images=current_images)

    def _expand_skill_command(self, text: str) -> str:
        """``_expandSkillCommand`` (agent-session.js:1754, 1820-1844) for the skills
        ``resources_discover`` handlers named (:mod:`.skills`); an unreadable skill file is an
        ``extension_error`` of event ``skill_expansion`` and the text stays."""
        s = self._session
        with s.host_io():
            expanded, skill, error = expand_skill_command(text, s.skills)
        if skill is not None and error is not None:
            s._runner().emit_error(skill.file_path, "skill_expansion", error)
        return expanded

    def _queued_message(self, text: Any, images: tuple[dict[str, Any], ...]) -> Message:
        """``_queueSteer``/``_queueFollowUp``'s message: the text block, then the images
        (``agent-session.js:1888-1914``). Pi normalises them at delivery (``:807-811``), which
        leaves the PNGs a scenario may carry unchanged."""
        s = self._session
        message = user_message(text, s.service.clock.now_ms())
        message["content"] = [*message["content"], *(dict(i) for i in images)]
        return message

    def _queue_steer(self, text: Any, images: tuple[dict[str, Any], ...] = ()) -> None:
        s = self._session
        s._steering_texts.append(text)
        s._emit_queue_update()
        s.agent.steering.enqueue(self._queued_message(text, images))

    def _queue_follow_up(self, text: Any, images: tuple[dict[str, Any], ...] = ()) -> None:
        s = self._session
        s._follow_up_texts.append(text)
        s._emit_queue_update()
        s.agent.follow_up.enqueue(self._queued_message(text, images))

    def clear_queue(self) -> None:
        s = self._session
        s._steering_texts = []
        s._follow_up_texts = []
        s.agent.clear_queues()
        s._emit_queue_update()

    def send_user_message(
        self, content: str | list[dict[str, Any]], deliver_as: str | None, expand_prompt_templates: bool
    ) -> None:
        """``pi.sendUserMessage``: fire-and-forget; failures become extension errors (AS:2879)."""
        s = self._session
        text, behavior = _user_text_and_behavior(content, deliver_as)
        images = _user_images(content)
        done = InstantMark()
        s._preflights.append(done)

        async def run() -> None:
            def mark(_: str) -> None:
                done.set()

            try:
                await self.prompt(
                    text,
                    source="extension",
                    streaming_behavior=behavior,
                    expand_prompt_templates=expand_prompt_templates,
                    preflight=mark,
                    images=images,
                )
            except Exception as error:  # PromptRejectedError and any other failure alike
                s._runner().emit_error("<runtime>", "send_user_message", str(error))
            finally:
                done.set()

        s._spawn(run(), "send_user_message")

    async def send_user_message_settled(
        self, content: str | list[dict[str, Any]], deliver_as: str | None
    ) -> None:
        """``ReplacedSessionContext.sendUserMessage``: ``prompt()`` itself, awaited to settlement.

        Unlike ``pi.sendUserMessage`` it is not fire-and-forget: it resolves when the run it
        started has settled (observed: the bootstrap run's ``agent_settled`` comes before the
        promise resolves) and rejects where ``prompt()`` throws.
        """
        text, behavior = _user_text_and_behavior(content, deliver_as)
        await self.prompt(
            text,
            source="extension",
            streaming_behavior=behavior,
            expand_prompt_templates=False,
            images=_user_images(content),
        )

    async def send_message_settled(
        self, message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None
    ) -> None:
        """``ReplacedSessionContext.sendMessage``: a triggered run from idle is awaited."""
        s = self._session
        if trigger_turn and not s.is_streaming and deliver_as != "nextTurn":
            app = self._custom_app_message(message)
            await s._runs.start_run(Trigger("custom", message=app))
            return
        self.send_custom_message(message, trigger_turn, deliver_as)

    def _custom_app_message(self, message: dict[str, Any]) -> Message:
        s = self._session
        app: Message = {
            "role": "custom",
            "customType": message.get("customType"),
            "content": message.get("content") if message.get("content") is not None else [],
            "display": message.get("display", True),
            "details": message.get("details"),
            "timestamp": s.service.clock.now_ms(),
        }
        if app["details"] is None:
            del app["details"]
        return app

    def send_custom_message(
        self, message: dict[str, Any], trigger_turn: bool | None, deliver_as: str | None
    ) -> None:
        """``pi.sendMessage`` (AS:1955-1993)."""
        s = self._session
        app = self._custom_app_message(message)
        if deliver_as == "nextTurn":
            s._pending_next_turn.append(app)
        elif s.is_streaming and trigger_turn is not False:
            if deliver_as == "followUp":
                s.agent.follow_up.enqueue(app)
            else:
                s.agent.steering.enqueue(app)
        elif trigger_turn:

            async def start() -> None:
                if s._is_emitting_settled:
                    s._deferred_settled.append(lambda: s._runs.start_run(Trigger("custom", message=app)))
                    return
                try:
                    await s._runs.start_run(Trigger("custom", message=app))
                except Exception as error:
                    s._runner().emit_error("<runtime>", "send_message", str(error))

            s._spawn(start(), "send_message")
        elif s.is_streaming:
            s._pending_custom.append(app)
        else:
            self._append_custom(app)

    def _append_custom(self, app: Message) -> None:
        s = self._session
        s.session_manager.append_custom_message_entry(
            app["customType"], app["content"], app["display"], absent_if_none(app.get("details"))
        )
        s._refresh_finalized_context()
        # AS:1997-1998: a custom message appended outside a run streams start and end.
        s._rpc({"type": "message_start", "message": app})
        s._emit("message_end", rpc={"type": "message_end", "message": app}, role="custom")

    def flush_pending_custom(self) -> None:
        s = self._session
        pending, s._pending_custom = s._pending_custom, []
        for app in pending:
            self._append_custom(app)

    async def user_bash(
        self, command: str, exclude_from_context: bool | None, output: str, exit_code: int, rpc_id: str
    ) -> dict[str, Any]:
        """RPC ``bash`` (rpc-mode.js:462-481): ``user_bash`` first (``emitUserBash``, which
        raises :class:`~.runner.UserBashError` when a handler raised or returned an invalid
        result); a handler's ``result`` is recorded as it is; otherwise the command "runs":
        ``executeBash`` (agent-session.js:3267-3288) streams its output as
        ``bash_execution_update`` session events carrying the RPC command's ``id`` (here one
        delta, the scenario's ``output``; nothing for no output) and records the result. Returns
        the response's data."""
        s = self._session
        event = UserBashEvent(
            command=command,
            exclude_from_context=bool(exclude_from_context),
            cwd=s.session_manager.get_cwd(),
        )
        decided = await s._runner().emit_user_bash(event)
        if decided is not None:
            result: dict[str, Any] = decided["result"]
        else:
            if output:
                s._emit("bash_execution_update", id=rpc_id, delta=output)
            result = local_result(output, exit_code)
        self.record_bash_result(command, result, exclude_from_context)
        return result

    def record_bash_result(
        self, command: str, result: dict[str, Any], exclude_from_context: bool | None
    ) -> None:
        """``recordBashResult`` (agent-session.js:3293-3313): the ``bashExecution`` message is
        appended now, or, while a run streams, when the run ends (:meth:`flush_pending_bash`)."""
        s = self._session
        message = bash_message(command, result, exclude_from_context, s.service.clock.now_ms())
        if s.is_streaming:
            s._pending_bash.append(message)
        else:
            s.session_manager.append_message(message)
            s._refresh_finalized_context()

    def flush_pending_bash(self) -> None:
        """``_flushPendingBashMessages`` (agent-session.js:3335-3343)."""
        s = self._session
        if not s._pending_bash:
            return
        pending, s._pending_bash = s._pending_bash, []
        for message in pending:
            s.session_manager.append_message(message)
        s._refresh_finalized_context()


def _user_images(content: str | list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """A ``sendUserMessage`` call's images: every part that is not text (agent-session.js:2028-2041),
    as they crossed the bridge (JSON). The simulator used to drop them: the prompt went without
    the image real Pi sent."""
    if isinstance(content, str):
        return ()
    return tuple(json_copy_or_same(p) for p in content if p.get("type") != "text")


def _user_text_and_behavior(
    content: str | list[dict[str, Any]], deliver_as: str | None
) -> tuple[str, Literal["steer", "followUp"] | None]:
    """A ``sendUserMessage`` call's text and the ``streamingBehavior`` its ``deliverAs`` asks for."""
    # textParts.join("\n") (agent-session.js:2021-2043): contentText's join.
    text = content if isinstance(content, str) else content_text(content, "\n")
    behavior: Literal["steer", "followUp"] | None = (
        "followUp" if deliver_as == "followUp" else "steer" if deliver_as == "steer" else None
    )
    return text, behavior
