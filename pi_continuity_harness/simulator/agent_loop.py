"""The low-level agent: message queues and the turn loop (pi-agent-core ``agent.js``,
``agent-loop.js``), ported to asyncio.

The loop is Pi's, including the order that continuity extensions can observe:

* steering messages are taken after each turn; follow-ups only when the model has
  stopped calling tools and no steering is left (a continuation sent mid-run lands after
  the interrupted run's final reply, psc-lifecycle §2);
* before every turn after the first, ``prepare_next_turn`` runs: that is where Pi checks
  the threshold mid-run (§9.2, "between turns of a run");
* an ``error`` or ``aborted`` reply ends the run at once (``turn_end``, ``agent_end``);
* a ``length`` stop fails every tool call of that reply instead of running it.

Tool calls run "in parallel" as Pi's default: every ``tool_execution_start`` first, then
the executions, then the result messages in call order.

Not modelled: a ``finishTurn`` decision (Pi's extension boundary drafts can end a run or ask
for one more context-only turn; the simulated session has no boundary drafts, so a turn
always goes on as the loop itself decides), and the ``all`` steering/follow-up modes (Pi's
default ``one-at-a-time`` only).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.simulator.messages import Message, zero_usage

__all__ = ["Agent", "AgentEvent", "CompletedTurn", "LoopHooks"]

AgentEvent = dict[str, Any]


@dataclass
class CompletedTurn:
    message: Message
    tool_results: list[Message]


@dataclass
class LoopHooks:
    """What the session plugs into the loop (Pi's ``AgentLoopConfig`` callbacks)."""

    stream: Callable[[AbortSignal], Awaitable[Message]]
    finish_turn: Callable[[CompletedTurn], Awaitable[None]]
    prepare_next_turn: Callable[[CompletedTurn], Awaitable[None]]
    execute_tool: Callable[[dict[str, Any], AbortSignal, Message], Awaitable[tuple[dict[str, Any], bool]]]
    tool_exists: Callable[[str], bool]
    now_ms: Callable[[], int]
    model: Callable[[], Model | None]


class _PendingQueue:
    """``PendingMessageQueue`` in Pi's default ``one-at-a-time`` mode: one message per turn."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def enqueue(self, message: Message) -> None:
        self.messages.append(message)

    def has_items(self) -> bool:
        return bool(self.messages)

    def drain(self) -> list[Message]:
        drained, self.messages = self.messages[:1], self.messages[1:]
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
    async def prompt(self, messages: list[Message]) -> None:
        if self.active_run is not None:
            raise RuntimeError(
                "Agent is already processing a prompt. Use steer() or followUp() to queue messages, "
                "or wait for completion."
            )
        await self._run_with_lifecycle(lambda signal: self._run_loop_with_prompts(messages, signal))

    async def continue_(self) -> None:
        if self.active_run is not None:
            raise RuntimeError("Agent is already processing. Wait for completion before continuing.")
        last = self.messages[-1] if self.messages else None
        if last is None or all(m.get("role") == "system" for m in self.messages):
            raise RuntimeError("No messages to continue from")
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
            raise RuntimeError("Cannot continue from message role: assistant")
        await self._run_with_lifecycle(self._run_continuation)

    async def _run_with_lifecycle(self, executor: Callable[[AbortSignal], Awaitable[None]]) -> None:
        if self.active_run is not None:
            raise RuntimeError("Agent is already processing.")
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

    async def _emit(self, event: AgentEvent) -> None:
        if event["type"] == "message_end":
            self.messages.append(event["message"])
        signal = self.signal
        assert signal is not None, "Agent listener invoked outside active run"
        await self.listener(event, signal)

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
        await self._run_loop([], signal, False)

    async def _run_loop(
        self, new_messages: list[Message], signal: AbortSignal, skip_initial_steering: bool
    ) -> None:
        last_turn: CompletedTurn | None = None
        pending: list[Message] = [] if skip_initial_steering else self.steering.drain()
        while True:
            has_more_tool_calls = True
            while has_more_tool_calls or pending:
                if last_turn is not None:
                    await self.hooks.prepare_next_turn(last_turn)
                    if not pending:
                        pending = self.steering.drain()
                    await self._emit({"type": "turn_start"})
                for message in pending:
                    await self._emit({"type": "message_start", "message": message})
                    await self._emit({"type": "message_end", "message": message})
                    new_messages.append(message)
                pending = []
                message = await self.hooks.stream(signal)
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
                await self.hooks.finish_turn(last_turn)
                await self._emit({"type": "turn_end", "message": message, "toolResults": tool_results})
                pending = self.steering.drain()
            # The agent would stop here: follow-ups start another pass.
            pending = self.follow_up.drain()
            if not pending:
                break
        await self._emit({"type": "agent_end", "messages": new_messages})

    async def _execute_tools(
        self, tool_calls: list[dict[str, Any]], assistant: Message, signal: AbortSignal
    ) -> tuple[list[Message], bool]:
        truncated = assistant.get("stopReason") == "length"
        finalized: list[tuple[dict[str, Any], dict[str, Any], bool]] = []
        for call in tool_calls:
            await self._emit(
                {
                    "type": "tool_execution_start",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "args": call.get("arguments", {}),
                }
            )
        for call in tool_calls:
            if truncated:
                result = _error_result(
                    f'Tool call "{call["name"]}" was not executed: the response hit the output token limit, '
                    "so its arguments may be truncated. Re-issue the tool call with complete arguments."
                )
                is_error = True
            elif signal.aborted:
                result, is_error = _error_result("Operation aborted"), True
            elif not self.hooks.tool_exists(call["name"]):
                result, is_error = _error_result(f"Tool {call['name']} not found"), True
            else:
                result, is_error = await self.hooks.execute_tool(call, signal, assistant)
            await self._emit(
                {
                    "type": "tool_execution_end",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "result": result,
                    "isError": is_error,
                }
            )
            finalized.append((call, result, is_error))
        messages: list[Message] = []
        for call, result, is_error in finalized:
            tool_message: Message = {
                "role": "toolResult",
                "toolCallId": call["id"],
                "toolName": call["name"],
                "content": result.get("content") or [],
                "details": result.get("details"),
                "isError": is_error,
                "timestamp": self.hooks.now_ms(),
            }
            if tool_message["details"] is None:
                del tool_message["details"]
            await self._emit({"type": "message_start", "message": tool_message})
            await self._emit({"type": "message_end", "message": tool_message})
            messages.append(tool_message)
        terminate = bool(finalized) and all(r.get("terminate") is True for _, r, _ in finalized)
        return messages, terminate


def _error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "details": {}}
