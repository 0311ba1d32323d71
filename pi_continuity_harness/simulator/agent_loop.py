"""The low-level agent: message queues and the turn loop (pi-agent-core ``agent.js``,
``agent-loop.js``), ported to asyncio.

The loop is Pi's, including the order that continuity extensions can observe:

* steering messages are taken after each turn; follow-ups only when the model has
  stopped calling tools and no steering is left (a continuation sent mid-run lands after
  the interrupted run's final reply, psc-lifecycle §2);
* before every turn after the first, ``prepare_next_turn`` runs: that is where Pi checks
  the threshold mid-run (§9.2, "between turns of a run"), and where a change of the active
  tools since the last request becomes a prompt patch and tool declarations
  (``declare_turn_tools``);
* an ``error`` or ``aborted`` reply ends the run at once (``turn_end``, ``agent_end``);
* a ``length`` stop fails every tool call of that reply instead of running it.

Tool calls run in parallel as Pi's default: every ``tool_execution_start`` first, then
the executions at once (each ``tool_execution_end`` when its call finishes), then the result
messages in call order.

``finish_turn`` answers whether to ask for one more turn (``finishTurn``'s ``{action:
"continue"}``, AC agent-loop.js:184-190: the session's ``turn_end`` boundary): with no tool call
left, no steering and no follow-up, the loop runs one context-only turn (:203-207). Not
modelled: an ``{action: "end"}`` decision (Pi's session never makes one). The steering and
follow-up queues take one message per turn (Pi's default ``one-at-a-time``) or, in mode ``all``,
every queued message at once (AC agent.js:60-86).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.api.extension_api import Model, PiError
from pi_continuity_harness.simulator.messages import Message, zero_usage

__all__ = [
    "Agent",
    "AgentEvent",
    "CompletedTurn",
    "LoopHooks",
    "PreparedTool",
    "StreamEmit",
    "ToolUpdate",
    "error_tool_result",
]

AgentEvent = dict[str, Any]
#: Emits an agent event from inside the stream hook (``message_start``, ``message_update``).
StreamEmit = Callable[[AgentEvent], Awaitable[None]]


@dataclass
class CompletedTurn:
    message: Message
    tool_results: list[Message]


#: Reports a running tool's partial result (``tool_execution_update``).
ToolUpdate = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class PreparedTool:
    """``prepareToolCall``'s verdict: an ``immediate`` result (an abort, an unknown tool, invalid
    arguments, a block), or the validated ``args`` to execute with."""

    immediate: dict[str, Any] | None = None
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class LoopHooks:
    """What the session plugs into the loop (Pi's ``AgentLoopConfig`` callbacks)."""

    stream: Callable[[AbortSignal, StreamEmit], Awaitable[Message]]
    #: ``True``: one more turn (``finishTurn``'s ``{action: "continue"}``).
    finish_turn: Callable[[CompletedTurn], Awaitable[bool]]
    #: ``prepareNextTurn``: the messages it prepares (a prompt patch), ``None`` when the tools
    #: did not change (nothing to declare).
    prepare_next_turn: Callable[[CompletedTurn], Awaitable[list[Message] | None]]
    prepare_tool: Callable[[dict[str, Any], AbortSignal, Message], Awaitable[PreparedTool]]
    #: The result and ``isError``: any JSON value a ``tool_result`` handler set (Pi keeps it).
    execute_tool: Callable[
        [dict[str, Any], dict[str, Any], AbortSignal, ToolUpdate], Awaitable[tuple[dict[str, Any], Any]]
    ]
    now_ms: Callable[[], int]
    now_loop_ms: Callable[[], int]
    model: Callable[[], Model | None]
    #: ``declareToolChanges`` of a later turn's pending messages (agent-loop.js:121).
    declare_turn_tools: Callable[..., list[Message]] = lambda pending, **_: pending


class _PendingQueue:
    """``PendingMessageQueue`` (AC agent.js:60-86): one message per turn, or every message when
    its mode is ``all`` (any other value, as Pi compares ``=== "all"``, is one at a time)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        #: ``steeringMode``/``followUpMode``: set when the session is made (sdk.js:283-284) and
        #: by RPC ``set_steering_mode``/``set_follow_up_mode``, never from a settings reload.
        self.mode: Any = "one-at-a-time"

    def enqueue(self, message: Message) -> None:
        self.messages.append(message)

    def has_items(self) -> bool:
        return bool(self.messages)

    def drain(self) -> list[Message]:
        take = len(self.messages) if self.mode == "all" else 1
        drained, self.messages = self.messages[:take], self.messages[take:]
        return drained

    def clear(self) -> None:
        self.messages = []


@dataclass
class Agent:
    """Owns the transcript used by the loop and the steering/follow-up queues."""

    listener: Callable[[AgentEvent, AbortSignal], Awaitable[None]]
    hooks: LoopHooks
    messages: list[Message] = field(default_factory=list)
    steering: _PendingQueue = field(default_factory=_PendingQueue)
    follow_up: _PendingQueue = field(default_factory=_PendingQueue)
    #: The running run's abort controller (None when idle).
    active_run: AbortController | None = None

    @property
    def signal(self) -> AbortSignal | None:
        return self.active_run.signal if self.active_run else None

    def abort(self) -> None:
        if self.active_run is not None:
            self.active_run.abort("aborted")

    def has_queued_messages(self) -> bool:
        return self.steering.has_items() or self.follow_up.has_items()

    def clear_queues(self) -> None:
        self.steering.clear()
        self.follow_up.clear()

    # ----------------------------------------------------------------- runs
    # The guards throw Pi's Errors (pi-agent-core ``agent.js:248``, 256, 260, 273, 347), so they
    # raise ``PiError``: ``AgentSession`` checks first, and an extension's awaited sender (the
    # ``with_session`` context's) could meet one only as Pi's ``prompt()`` would pass it on.
    async def prompt(self, messages: list[Message]) -> None:
        if self.active_run is not None:
            raise PiError(
                "Agent is already processing a prompt. Use steer() or followUp() to queue messages, "
                "or wait for completion."
            )
        await self._run_with_lifecycle(lambda signal: self._run_loop_with_prompts(messages, signal))

    async def continue_(self) -> None:
        if self.active_run is not None:
            raise PiError("Agent is already processing. Wait for completion before continuing.")
        last = self.messages[-1] if self.messages else None
        if last is None or all(m.get("role") == "system" for m in self.messages):
            raise PiError("No messages to continue from")
        if last.get("role") == "assistant":
            steering = self.steering.drain()
            if steering:
                await self._run_with_lifecycle(
                    lambda signal: self._run_loop_with_prompts(steering, signal, skip_initial_steering=True)
                )
                return
            follow = self.follow_up.drain()
            if follow:
                await self._run_with_lifecycle(lambda signal: self._run_loop_with_prompts(follow, signal))
                return
            raise PiError("Cannot continue from message role: assistant")
        await self._run_with_lifecycle(self._run_continuation)

    async def _run_with_lifecycle(self, executor: Callable[[AbortSignal], Awaitable[None]]) -> None:
        if self.active_run is not None:
            raise PiError("Agent is already processing.")
        controller = AbortController()
        self.active_run = controller
        try:
            await executor(controller.signal)
        except Exception as error:
            await self._handle_run_failure(error, controller.signal.aborted)
        finally:
            self.active_run = None

    async def _handle_run_failure(self, error: Exception, aborted: bool) -> None:
        """``handleRunFailure`` (agent.js:368): the run's model names the failure message."""
        model = self.hooks.model()
        failure: Message = {
            "role": "assistant",
            "content": [{"type": "text", "text": ""}],
            "api": model.api if model else "unknown",
            "provider": model.provider if model else "unknown",
            "model": model.id if model else "unknown",
            "usage": zero_usage(),
            "stopReason": "aborted" if aborted else "error",
            "errorMessage": str(error),
            "timestamp": self.hooks.now_ms(),
        }
        await self._emit({"type": "message_start", "message": failure})
        await self._emit({"type": "message_end", "message": failure})
        await self._emit({"type": "turn_end", "message": failure, "toolResults": []})
        await self._emit({"type": "agent_end", "messages": [failure]})

    def _emit(self, event: AgentEvent) -> Awaitable[None]:
        """The listener's handling of ``event``, for the caller to await at once (every caller
        does: ``await self._emit(...)``). A plain function returning the listener's coroutine,
        not a coroutine of its own around it: one coroutine less for each agent event (issue 16);
        the transcript takes a ``message_end``'s message first, as before."""
        if event["type"] == "message_end":
            self.messages.append(event["message"])
        run = self.active_run
        assert run is not None, "Agent listener invoked outside active run"
        return self.listener(event, run.signal)

    async def _run_loop_with_prompts(
        self, prompts: list[Message], signal: AbortSignal, *, skip_initial_steering: bool = False
    ) -> None:
        new_messages = list(prompts)
        await self._emit({"type": "agent_start"})
        await self._emit({"type": "turn_start"})
        for message in prompts:
            await self._emit({"type": "message_start", "message": message})
            await self._emit({"type": "message_end", "message": message})
        await self._run_loop(new_messages, signal, skip_initial_steering)

    async def _run_continuation(self, signal: AbortSignal) -> None:
        await self._emit({"type": "agent_start"})
        await self._emit({"type": "turn_start"})
        await self._run_loop([], signal, False, declare_first=True)

    async def _run_loop(
        self,
        new_messages: list[Message],
        signal: AbortSignal,
        skip_initial_steering: bool,
        *,
        declare_first: bool = False,
    ) -> None:
        """pi-agent-core's ``runLoop`` (agent-loop.js:84-). ``declare_first``: a continuation
        (``runAgentLoopContinue``, :64-76: an ``agent_before_settle`` ``continue``, a retry)
        declares the active tools before its first request too, as ``declareToolChanges``
        runs before every request (:121), so a ``set_active_tools`` since the last request
        shows there as a system message with the changes (no sections: ``prepareNextTurn``
        runs only after a completed turn, :97-98); a run from prompts declared them with its
        prompts (:49)."""
        last_turn: CompletedTurn | None = None
        explicit_continuation = False
        pending: list[Message] = [] if skip_initial_steering else self.steering.drain()
        if declare_first:
            pending = self.hooks.declare_turn_tools(pending, lazy_clock=True)
        while True:
            has_more_tool_calls = True
            while has_more_tool_calls or pending:
                if last_turn is not None:
                    prepared = await self.hooks.prepare_next_turn(last_turn)
                    if not pending:
                        pending = self.steering.drain()
                    await self._emit({"type": "turn_start"})
                    if prepared is not None:
                        # An extension set the tools since the last request: the prepared patch
                        # and the pending messages, the changes declared (agent-loop.js:110-126).
                        pending = self.hooks.declare_turn_tools([*prepared, *pending])
                for message in pending:
                    await self._emit({"type": "message_start", "message": message})
                    await self._emit({"type": "message_end", "message": message})
                    new_messages.append(message)
                pending = []
                started: list[bool] = []
                message = await self.hooks.stream(signal, self._stream_emitter(started))
                if not started:
                    # No stream began (an HTTP error, an abort before the headers): pi-agent-core
                    # emits ``message_start`` with the final message (agent-loop.js:312-323).
                    await self._emit({"type": "message_start", "message": message})
                await self._emit({"type": "message_end", "message": message})
                new_messages.append(message)
                if message.get("stopReason") in ("error", "aborted"):
                    last_turn = CompletedTurn(message, [])
                    await self.hooks.finish_turn(last_turn)
                    await self._emit({"type": "turn_end", "message": message, "toolResults": []})
                    await self._emit({"type": "agent_end", "messages": new_messages})
                    return
                tool_calls = [b for b in message.get("content") or [] if b.get("type") == "toolCall"]
                tool_results: list[Message] = []
                has_more_tool_calls = False
                if tool_calls:
                    results, terminate = await self._execute_tools(tool_calls, message, signal)
                    tool_results.extend(results)
                    has_more_tool_calls = not terminate
                    new_messages.extend(results)
                last_turn = CompletedTurn(message, tool_results)
                explicit_continuation = await self.hooks.finish_turn(last_turn)
                await self._emit({"type": "turn_end", "message": message, "toolResults": tool_results})
                pending = self.steering.drain()
                if has_more_tool_calls or pending:
                    explicit_continuation = False
            # The agent would stop here: follow-ups start another pass, else a ``continue``
            # decision one context-only turn (agent-loop.js:194-207).
            pending = self.follow_up.drain()
            if not pending and not explicit_continuation:
                break
            explicit_continuation = False
        await self._emit({"type": "agent_end", "messages": new_messages})

    def _stream_emitter(self, started: list[bool]) -> StreamEmit:
        """The hook's emitter: notes in ``started`` that the stream emitted ``message_start``."""

        def emit(event: AgentEvent) -> Awaitable[None]:
            # :meth:`_emit` inlined for the events a stream emits (``message_start``, then one
            # ``message_update`` per delta: a call less for each, issue 16).
            kind = event["type"]
            if kind == "message_start":
                started.append(True)
            elif kind == "message_end":
                self.messages.append(event["message"])
            run = self.active_run
            assert run is not None, "Agent listener invoked outside active run"
            return self.listener(event, run.signal)

        return emit

    async def _execute_tools(
        self, tool_calls: list[dict[str, Any]], assistant: Message, signal: AbortSignal
    ) -> tuple[list[Message], bool]:
        """``executeToolCalls`` in Pi's default parallel mode (AC agent-loop.js:414-461): per call,
        ``tool_execution_start`` and its preparation (an immediate result ends it at once), then
        the prepared calls run at once, each ending (``tool_execution_end``) when it finishes;
        then the result messages in call order. A ``length`` reply's calls are failed one by one
        instead (``failToolCallsFromTruncatedMessage``, :348-368).

        Pi starts every prepared call before any finishes (``Promise.all`` over
        ``finalizedCalls.map(entry => entry())``, :450): each checks the abort signal as it starts
        (all see the same signal: aborted, each ends "Operation aborted" in call order) and then
        runs, a Python tool in a task of its own on the bridge (``bridge_runtime`` ``_serve``).
        Here each call is a task on the simulated loop, started in call order: a tool that waits
        (``asyncio.sleep``, another call's result) lets the next run, so a call that waits longer
        ends later, as on real Pi (``tests/realpi/test_differential_parallel_tools.py``); tools
        that do not wait end in call order, one of the orders real Pi's own races give."""
        if assistant.get("stopReason") == "length":
            messages: list[Message] = []
            for call in tool_calls:
                await self._emit_start(call)
                result = _error_result(
                    f'Tool call "{call["name"]}" was not executed: the response hit the output token limit, '
                    "so its arguments may be truncated. Re-issue the tool call with complete arguments."
                )
                await self._emit_end(call, result, True, None)
                message = self._result_message(call, result, True, None)
                await self._emit({"type": "message_start", "message": message})
                await self._emit({"type": "message_end", "message": message})
                messages.append(message)
            return messages, False
        finalized: list[tuple[dict[str, Any], dict[str, Any], Any, int | None] | None] = []
        prepared: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
        for call in tool_calls:
            await self._emit_start(call)
            preparation = await self.hooks.prepare_tool(call, signal, assistant)
            if preparation.immediate is not None:
                await self._emit_end(call, preparation.immediate, True, None)
                finalized.append((call, preparation.immediate, True, None))
            else:
                prepared.append((len(finalized), call, preparation.args))
                finalized.append(None)
        if signal.aborted:
            for index, call, _args in prepared:
                result = _error_result("Operation aborted")
                await self._emit_end(call, result, True, None)
                finalized[index] = (call, result, True, None)
        else:

            async def run(index: int, call: dict[str, Any], args: dict[str, Any]) -> None:
                started = self.hooks.now_loop_ms()
                result, is_error = await self.hooks.execute_tool(
                    call, args, signal, self._update_emitter(call)
                )
                duration = max(0, self.hooks.now_loop_ms() - started)
                await self._emit_end(call, result, is_error, duration)
                finalized[index] = (call, result, is_error, duration)

            if prepared:
                await _all_at_once([run(*item) for item in prepared])
        messages = []
        for item in finalized:
            assert item is not None
            done_call, done_result, done_error, done_duration = item
            message = self._result_message(done_call, done_result, done_error, done_duration)
            await self._emit({"type": "message_start", "message": message})
            await self._emit({"type": "message_end", "message": message})
            messages.append(message)
        terminate = bool(finalized) and all(
            item is not None and item[1].get("terminate") is True for item in finalized
        )
        return messages, terminate

    def _emit_start(self, call: dict[str, Any]) -> Awaitable[None]:
        return self._emit(
            {
                "type": "tool_execution_start",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "args": call.get("arguments", {}),
            }
        )

    def _emit_end(
        self, call: dict[str, Any], result: dict[str, Any], is_error: Any, duration: int | None
    ) -> Awaitable[None]:
        event: AgentEvent = {
            "type": "tool_execution_end",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "result": result,
            "isError": is_error,
        }
        if duration is not None:
            event["durationMs"] = duration
        return self._emit(event)

    def _update_emitter(self, call: dict[str, Any]) -> ToolUpdate:
        async def update(partial: dict[str, Any]) -> None:
            await self._emit(
                {
                    "type": "tool_execution_update",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "args": call.get("arguments", {}),
                    "partialResult": partial,
                }
            )

        return update

    def _result_message(
        self, call: dict[str, Any], result: dict[str, Any], is_error: Any, duration: int | None
    ) -> Message:
        """``createToolResultMessage`` (AC agent-loop.js:656-670): Pi's key order; ``details``
        when the result has the key (a Python tool's ``details=None`` crosses the bridge as
        ``null`` and Pi writes ``"details": null``; a built-in's result without details has no
        key, ``undefined``), ``durationMs`` only for an executed call."""
        message: Message = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": result.get("content") or [],
        }
        if "details" in result:
            message["details"] = result["details"]
        if result.get("usage") is not None:
            message["usage"] = result["usage"]
        message["isError"] = is_error
        if duration is not None:
            message["durationMs"] = duration
        message["timestamp"] = self.hooks.now_ms()
        return message


def error_tool_result(text: str) -> dict[str, Any]:
    """``createErrorToolResult`` (AC agent-loop.js:640-645): the message, ``details: {}``."""
    return {"content": [{"type": "text", "text": text}], "details": {}}


_error_result = error_tool_result


async def _all_at_once(calls: list[Coroutine[Any, Any, None]]) -> None:
    """Run ``calls`` as tasks started in their order and wait for all (``Promise.all``). When one
    raises (a crash the simulation injected, a harness bug), the others are cancelled before it
    propagates: a simulated process that stops runs no more of its tools."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
