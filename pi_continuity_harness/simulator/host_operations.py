"""The operations of a scenario as an RPC client sends them to the simulated process.

The part of the simulated process (:mod:`.host`) that runs one scenario operation and records
its outcome, held by :class:`HostOperations` for its :class:`~.host.SimHost`: the ``op`` records
that open and close it (what the trace says of each kind: :func:`_op_fields`), the dispatch of
each kind to what Pi's RPC mode does for the command (rpc-mode.js:312-587: ``prompt`` :318-344,
``clear_queue`` :357-359, ``set_model`` :388, ``cycle_model`` :397-403, ``set_thinking_level``
:411-414, ``cycle_thinking_level`` :415-421, ``set_steering_mode`` and ``set_follow_up_mode``
:429-436, ``compact`` :440-443, ``set_auto_compaction`` :444-447, ``set_auto_retry`` :451-454,
``bash`` :462-481, ``switch_session`` :497-500, ``fork`` :501-504, ``clone`` :505-512,
``get_fork_messages`` :513-516, ``set_session_name`` :537-544), the dialog answers a prompt or
command carries
(:meth:`HostOperations._prompt`), ``wait: false`` commands run on as host tasks, and ``tree``
through the observer's ``/harness-tree`` command (``targets/realpi/observer.ts``). Restart,
reload, new session, switch and fork themselves are the host's (:mod:`.host`); a fault's or a held
call's ``during`` operations come back here through :meth:`.host.SimHost.run_operation`.
Called once per operation, never per streamed event.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any, Literal, assert_never

from pi_continuity_harness.scenario.confine import ConfinementError
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
from pi_continuity_harness.scenario.trace import SimulatedCrash
from pi_continuity_harness.scenario.workspace import EditFileError, apply_edit
from pi_continuity_harness.simulator.agent_session import AgentSession, PromptRejectedError
from pi_continuity_harness.simulator.host_shared import OperationResult, ProcessStartError
from pi_continuity_harness.simulator.runner import UserBashError
from pi_continuity_harness.simulator.session_manager import js_trim
from pi_continuity_harness.simulator.settings import SettingsError
from pi_continuity_harness.simulator.virtual_loop import start_eagerly

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.host import SimHost

__all__ = ["HostOperations", "tree_outcome"]


class HostOperations:
    """The operations job of one :class:`~.host.SimHost`."""

    __slots__ = ("_bash_commands", "_host")

    def __init__(self, host: SimHost) -> None:
        self._host = host
        #: The ``bash`` operations sent so far, which number their RPC ids (``bash_command_id``).
        self._bash_commands = 0

    async def run_operation(
        self, op: Operation, *, index: int | None = None, during: bool = False
    ) -> OperationResult:
        """Run one operation the way an RPC client would, and record its outcome."""
        host = self._host
        name = operation_name(op)
        if isinstance(op, RestartOp) and host.crashed:
            # A restart is a new process: its own operation record is not the dead one's.
            host.trace.frozen = False
        if not during and index is not None:
            host.current_operation = index
        host.trace.emit("op", name, index=index, during=during or None, **_op_fields(op))
        if (isinstance(op, CommandOp) and not op.command.wait) or (
            isinstance(op, TreeOp) and not op.tree.wait
        ):
            # ``wait: false``: the RPC client sends the command line and goes on (Pi runs the
            # handler up to its first await before it reads the next line, rpc-mode.js:318-343):
            # the command runs on as a host task, which ``quiesce`` waits for.
            host._track(
                start_eagerly(host.loop, self._finish_operation(op, name, index, during), f"unawaited {name}")
            )
            return OperationResult(name, ok=True)
        return await self._finish_operation(op, name, index, during)

    async def _finish_operation(
        self, op: Operation, name: str, index: int | None, during: bool = False
    ) -> OperationResult:
        """Dispatch ``op`` (its start is recorded) and record its end. ``during``: a held model
        call's or a held dialog's operation (see :meth:`_prompt`)."""
        host = self._host
        running = (index, name)
        host.running_operations.append(running)
        host.stamp_changed_files()
        try:
            result = await self._dispatch_operation(op, name, during)
        except SimulatedCrash:
            host.mark_crashed()
            result = OperationResult(name, ok=False, error="Pi crashed")
        except (PromptRejectedError, SettingsError) as error:
            result = OperationResult(name, ok=False, error=str(error))
        except ProcessStartError as error:
            host.runtime = None
            result = OperationResult(name, ok=False, error=str(error))
        finally:
            if running in host.running_operations:
                host.running_operations.remove(running)
        host.stamp_changed_files()
        if not host.crashed:
            host.trace.emit(
                "op",
                name,
                phase="end",
                ok=result.ok,
                error=result.error,
                disposition=result.disposition,
                **result.data,
            )
        return result

    async def _dispatch_operation(self, op: Operation, name: str, during: bool = False) -> OperationResult:
        host = self._host
        match op:
            case RestartOp():
                await host.restart()
                return OperationResult(name, ok=True)
            case EditFileOp():
                try:
                    with host.host_io():
                        apply_edit(host.paths, op.edit_file)
                except (ConfinementError, EditFileError, OSError) as error:
                    return OperationResult(name, ok=False, error=str(error))
                if op.edit_file.kind not in ("absent", "directory"):
                    host._file_changed(host.paths.resolve(op.edit_file.path))
                return OperationResult(name, ok=True)
            case _ if host.crashed or not host.running:
                return OperationResult(name, ok=False, error="Pi is not running")
            case PromptOp():
                session = host._require_runtime().session
                images = tuple(image.to_content() for image in op.prompt.images)
                return await self._prompt(
                    session, op.prompt.render(), op.prompt.streaming_behavior, (), name, images, during=during
                )
            case CommandOp():
                session = host._require_runtime().session
                if not op.command.wait:
                    # No answers of its own: it leaves the dialog answers of the operations that
                    # wait alone (whatever dialog it opens takes theirs, as on real Pi).
                    return await self._unawaited_command(session, op.command.text, name)
                return await self._prompt(
                    session, op.command.text, None, op.command.answers, name, during=during
                )
            case CompactOp():
                data = await host._require_runtime().session.compact(op.compact.custom_instructions)
                return OperationResult(name, ok=True, data={"firstKeptEntryId": data.get("firstKeptEntryId")})
            case AbortOp():
                await host._require_runtime().session.abort()
                return OperationResult(name, ok=True)
            case ClearQueueOp():
                host._require_runtime().session.clear_queue()
                return OperationResult(name, ok=True)
            case ReloadOp():
                await host.reload()
                return OperationResult(name, ok=True)
            case CrashOp():
                host.mark_crashed()
                return OperationResult(name, ok=True)
            case SetModelOp():
                # RPC ``set_model`` looks the model up among the *available* ones (authenticated).
                model = host.catalog.find_full(op.set_model)
                if model is None or not host.catalog.has_auth(model.provider):
                    provider, _, model_id = op.set_model.partition("/")
                    return OperationResult(name, ok=False, error=f"Model not found: {provider}/{model_id}")
                await host._require_runtime().session.set_model(model)
                return OperationResult(name, ok=True)
            case SetAutoCompactionOp() | SetAutoRetryOp():
                settings = host._require_runtime().settings
                try:
                    with host.host_io():
                        if isinstance(op, SetAutoCompactionOp):
                            settings.set_compaction_enabled(op.set_auto_compaction)
                        else:
                            settings.set_retry_enabled(op.set_auto_retry)
                except SettingsError as error:  # Pi's TypeError, the RPC command's error
                    return OperationResult(name, ok=False, error=str(error))
                return OperationResult(name, ok=True)
            case SetSessionNameOp():
                runtime = host._require_runtime()
                name_given = js_trim(op.set_session_name)
                if not name_given:
                    return OperationResult(name, ok=False, error="Session name cannot be empty")
                assert runtime.runner.bindings is not None
                runtime.runner.bindings.set_session_name(name_given)
                return OperationResult(name, ok=True)
            case CycleModelOp():
                cycled = await host._require_runtime().session.cycle_model()
                return OperationResult(name, ok=True, data={"model": cycled.full_id if cycled else None})
            case SetThinkingLevelOp():
                host._require_runtime().session.set_thinking_level(op.set_thinking_level)
                return OperationResult(name, ok=True)
            case CycleThinkingLevelOp():
                level = host._require_runtime().session.cycle_thinking_level()
                return OperationResult(name, ok=True, data={"level": level})
            case SetSteeringModeOp() | SetFollowUpModeOp():
                runtime = host._require_runtime()
                with host.host_io():
                    if isinstance(op, SetSteeringModeOp):
                        runtime.session.agent.steering.mode = op.set_steering_mode
                        runtime.settings.set_steering_mode(op.set_steering_mode)
                    else:
                        runtime.session.agent.follow_up.mode = op.set_follow_up_mode
                        runtime.settings.set_follow_up_mode(op.set_follow_up_mode)
                return OperationResult(name, ok=True)
            case NewSessionOp():
                runtime = host._require_runtime()
                parent = runtime.session_manager.get_session_file() if op.new_session.parent else None
                outcome = await host.new_session(parent_session=parent)
                return _replacement(name, outcome)
            case TreeOp():
                return await self._tree(op, name)
            case BashOp():
                self._bash_commands += 1
                try:
                    await host._require_runtime().session.user_bash(
                        op.bash.command,
                        op.bash.exclude_from_context,
                        op.bash.output,
                        op.bash.exit_code,
                        bash_command_id(self._bash_commands),
                    )
                except UserBashError as error:
                    return OperationResult(name, ok=False, error=str(error))
                return OperationResult(name, ok=True)
            case ForkOp():
                messages = host.fork_messages()
                chosen = pick_fork_message(messages, op.fork.message)
                if chosen is None:
                    return OperationResult(name, ok=False, error=no_fork_message(messages, op.fork.message))
                outcome = await host.fork(chosen)
                return _replacement(name, outcome)
            case CloneOp():
                # rpc-mode.js:505-512: the leaf, or Pi's error before any event.
                leaf = host._require_runtime().session_manager.get_leaf_id()
                if not leaf:
                    return OperationResult(
                        name, ok=False, error="Cannot clone session: no current entry selected"
                    )
                outcome = await host.fork(leaf, "at")
                return _replacement(name, outcome)
            case SwitchSessionOp():
                target, refusal = switch_session_target(
                    op.switch_session.to, host.previous_session_file, host.session_files
                )
                if target is None:
                    return OperationResult(name, ok=False, error=refusal)
                outcome = await host.switch_session(target)
                return _replacement(name, outcome)
            case _:
                assert_never(op)

    async def _prompt(
        self,
        session: AgentSession,
        text: str,
        behavior: Literal["steer", "followUp"] | None,
        answers: tuple[DialogAnswer, ...],
        name: str,
        images: tuple[dict[str, Any], ...] = (),
        *,
        during: bool = False,
    ) -> OperationResult:
        """Send ``text`` as an RPC ``prompt`` with ``answers`` for the dialogs it opens, and wait
        until Pi is done with it, as PiTarget waits for Pi to settle; a ``during`` operation (a
        held model call's or a held dialog's) is :meth:`_prompt_during`'s."""
        host = self._host
        if during:
            return await self._prompt_during(session, text, behavior, answers, name, images)
        disposition: list[str] = []
        host.ui.set_answers(tuple(answers))
        try:
            await session.prompt(
                text,
                source="rpc",
                streaming_behavior=behavior,
                preflight=disposition.append,
                images=images,
            )
        except SettingsError as error:
            if disposition:
                # Pi already answered ``started``; the post-run check's throw is swallowed (§9.19).
                host.trace.emit("host", "swallowed", error=str(error))
            else:
                return OperationResult(name, ok=False, error=str(error))
        unused = host.ui.unused_answers()
        errors = host.ui.take_errors()
        host.ui.set_answers(())
        data = {"unusedAnswers": unused} if unused else {}
        if errors:
            # A scripted answer that did not fit cancelled its dialog (the handler went on);
            # the operation fails with the mismatch, as PiTarget reports it.
            return OperationResult(
                name,
                ok=False,
                error=errors[0],
                disposition=disposition[0] if disposition else None,
                data=data,
            )
        return OperationResult(name, ok=True, disposition=disposition[0] if disposition else None, data=data)

    async def _prompt_during(
        self,
        session: AgentSession,
        text: str,
        behavior: Literal["steer", "followUp"] | None,
        answers: tuple[DialogAnswer, ...],
        name: str,
        images: tuple[dict[str, Any], ...],
    ) -> OperationResult:
        """A ``prompt`` sent while a dialog or a model call is held: its outcome is Pi's RPC
        response, written at the prompt's preflight (``handled``, ``queued``, ``started``), and
        the run it starts goes on after it (``dist/modes/rpc/rpc-mode.js:318-343``: ``void
        session.prompt(...)``, answered from ``preflightResult``; ``dist/core/agent-session.js:
        1717, 1735, 1747, 1768``). PiTarget sends what comes next (the held dialog's answer,
        the next ``during`` operation) as soon as that response is in; here the prompt ran to
        its end first, so a run started while a settings menu was open ended before the menu
        closed on the simulator and after it on real Pi (thirty-seventh session).

        The held command keeps its pending answers; this prompt's own are added after them, and
        the unused ones dropped at the response, as PiTarget's ``AnswerRules.add``/``discard`` do
        (before, in a held call's ``during`` they replaced the held command's answers and then
        cleared them, so its later dialogs went unanswered on the simulator only).
        A settings error after the response is swallowed, as Pi's ``catch`` swallows every
        error once preflight succeeded (§9.19, traced as before); any other is the simulator's
        own and surfaces; a crash still ends Pi (a host task, :meth:`Host._track`)."""
        host = self._host
        disposition: list[str] = []
        added = host.ui.add_answers(tuple(answers))
        responded: asyncio.Future[None] = host.loop.create_future()

        def preflight(value: str) -> None:
            disposition.append(value)
            # ``handled`` is answered when ``prompt()`` returns: Pi calls it after a command's
            # handler has run (``agent-session.js:1714-1718``), the simulator before it
            # (``session_prompting._try_execute_command``); the run's ``finally`` answers it.
            if value != "handled" and not responded.done():
                responded.set_result(None)

        async def run() -> None:
            try:
                await session.prompt(
                    text, source="rpc", streaming_behavior=behavior, preflight=preflight, images=images
                )
            except SimulatedCrash:
                raise
            except Exception as error:
                if not disposition:
                    if not responded.done():
                        responded.set_exception(error)
                    return
                if not isinstance(error, SettingsError):
                    raise
                host.trace.emit("host", "swallowed", error=str(error))
            finally:
                if not responded.done():
                    responded.set_result(None)

        host._track(start_eagerly(host.loop, run(), f"prompt during {name}"))
        try:
            await responded
        except SettingsError as error:
            return OperationResult(name, ok=False, error=str(error))
        finally:
            host.ui.discard_answers(added)
        return OperationResult(name, ok=True, disposition=disposition[0] if disposition else None)

    async def _unawaited_command(self, session: AgentSession, text: str, name: str) -> OperationResult:
        """A ``wait: false`` command, run to its end (its ``op`` end record says how it went)."""
        host = self._host
        disposition: list[str] = []
        try:
            await session.prompt(text, source="rpc", preflight=disposition.append)
        except SettingsError as error:
            if not disposition:
                return OperationResult(name, ok=False, error=str(error))
            host.trace.emit("host", "swallowed", error=str(error))
        return OperationResult(name, ok=True, disposition=disposition[0] if disposition else None)

    async def harness_tree(self, session: AgentSession, args: str) -> None:
        """The observer's ``/harness-tree <entryId>`` (``targets/realpi/observer.ts``):
        ``ctx.navigateTree(entryId)``, and the extension event ``tree_navigation`` saying what it
        did (or Pi's message when it threw), with the leaf before and after."""
        host = self._host
        target_id = args.strip()
        old_leaf = session.session_manager.get_leaf_id()
        fields: dict[str, Any]
        try:
            result = await session.navigate_tree(target_id)
        except PromptRejectedError as error:
            fields = {"error": str(error)}
        else:
            fields = {"cancelled": bool(result.get("cancelled"))}
        host.trace.emit(
            "event",
            "tree_navigation",
            targetId=target_id,
            oldLeafId=old_leaf,
            newLeafId=session.session_manager.get_leaf_id(),
            **fields,
        )

    async def _tree(self, op: TreeOp, name: str) -> OperationResult:
        """``tree``: the entry chosen now (``get_fork_messages``, as ``fork`` chooses), then the
        command through ``prompt()``; an awaited one fails as the navigation did."""
        host = self._host
        session = host._require_runtime().session
        messages = host.fork_messages()
        chosen = pick_fork_message(messages, op.tree.to)
        if chosen is None:
            return OperationResult(name, ok=False, error=no_tree_message(messages, op.tree.to))
        text = f"/{TREE_COMMAND} {chosen}"
        if not op.tree.wait:
            return await self._unawaited_command(session, text, name)
        since = len(host.trace.records)
        outcome = await self._prompt(session, text, None, (), name)
        if not outcome.ok:
            return outcome
        return tree_outcome(name, [r for r in host.trace.records[since:] if r["kind"] == "event"])


def _op_fields(op: Operation) -> dict[str, Any]:
    """What the trace's ``op`` record says about an operation besides its name."""
    match op:
        case PromptOp():
            text = op.prompt.render()
            return {"chars": len(text), "text": text[:60], "streamingBehavior": op.prompt.streaming_behavior}
        case CommandOp():
            return {
                "text": op.command.text,
                "answers": len(op.command.answers) or None,
                "wait": None if op.command.wait else False,
            }
        case SetModelOp():
            return {"model": op.set_model}
        case SetAutoCompactionOp():
            return {"enabled": op.set_auto_compaction}
        case SetAutoRetryOp():
            return {"enabled": op.set_auto_retry}
        case SetSteeringModeOp():
            return {"mode": op.set_steering_mode}
        case SetThinkingLevelOp():
            return {"level": op.set_thinking_level}
        case SetSessionNameOp():
            return {"sessionName": op.set_session_name}
        case SetFollowUpModeOp():
            return {"mode": op.set_follow_up_mode}
        case EditFileOp():
            data = op.edit_file.content_bytes
            return {
                "path": op.edit_file.path,
                "fileKind": op.edit_file.kind,
                "target": op.edit_file.target,
                # Exact bytes (``base64``): their size and digest, so the trace says which bytes.
                "bytes": None if data is None else len(data),
                "sha256": None if data is None else hashlib.sha256(data).hexdigest(),
            }
        case CompactOp():
            return {"customInstructions": op.compact.custom_instructions}
        case ForkOp():
            return {"message": op.fork.message}
        case SwitchSessionOp():
            return {"to": op.switch_session.to}
        case TreeOp():
            return {"to": op.tree.to, "wait": None if op.tree.wait else False}
        case BashOp():
            return {"command": op.bash.command, "excludeFromContext": op.bash.exclude_from_context}
        case (
            AbortOp()
            | ClearQueueOp()
            | ReloadOp()
            | RestartOp()
            | CrashOp()
            | NewSessionOp()
            | CloneOp()
            | CycleModelOp()
            | CycleThinkingLevelOp()
        ):
            return {}
        case _:
            assert_never(op)


def _replacement(name: str, outcome: dict[str, Any]) -> OperationResult:
    """A session replacement's outcome (``new_session``, ``fork``, ``clone``, ``switch_session``):
    ``cancelled`` when an extension's ``session_before_*`` cancelled it (the real-Pi target's
    ``_switch_outcome``)."""
    cancelled = bool(outcome["cancelled"])
    return OperationResult(name, ok=not cancelled, error="cancelled" if cancelled else None)


def tree_outcome(name: str, events: list[dict[str, Any]]) -> OperationResult:
    """An awaited ``tree``'s outcome from the ``tree_navigation`` event its command recorded."""
    done = [e for e in events if e.get("name", e.get("type")) == "tree_navigation"]
    if not done:
        return OperationResult(name, ok=False, error="the tree navigation did not run")
    last = done[-1]
    if last.get("error"):
        return OperationResult(name, ok=False, error=str(last["error"]))
    if last.get("cancelled"):
        return OperationResult(name, ok=False, error="cancelled")
    return OperationResult(name, ok=True)
