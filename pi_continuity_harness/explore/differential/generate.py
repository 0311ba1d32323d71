"""Seeds of the differential explorer expand into host-behaviour cases both targets can play.

``random.Random(seed)`` draws, in a fixed order, the seed's options (the window, the compaction
and retry settings, which behaviours this seed favours), then ``steps`` *actions*. An action is
one thing a user and a model can do to Pi together: the operations it performs and the replies
it scripts for them, so shrinking can drop an action whole and the script stays aligned:
each scripts exactly the replies Pi asks for (``tests/explore/test_differential_alignment.py``),
except where Pi's compaction and retry depend on the session before it (``overflow_error``,
``overflow_twice``, ``length_stop``).

The actions cover what issue 11 asks the differential explorer to reach: turns below and above
the threshold, tool turns that cross it (mid-run compaction), an abort then a prompt (held
before the headers or after a partial stream), partial streams that drop or fail, 5xx and 429
replies with Pi's retry (and a spent budget), summarizer faults and retries (500, 429, 400, a
``length`` stop, a spent budget), steer, follow-up and plain prompts while a reply streams,
manual compaction while a reply streams, model switches, reload and restart, ``length`` stops,
silent overflow, context-overflow errors, manual compaction, thinking replies; and since 6
December 2026 the session tree beside them: new sessions, forks and tree navigation to an
earlier user message (the entries compaction reads are the branch's, so each of these changes
what the next compaction keeps and summarises), and the user's own shell commands (RPC
``bash``, whose ``bashExecution`` entries count towards the context and are summarised); since the
same day, Pi's own file tools, crashes and settings changes; and later resuming the previous
session or the run's Nth (RPC ``switch_session``), cloning the session (RPC ``clone``) and turning automatic
compaction or retry off and on (RPC ``set_auto_compaction``, ``set_auto_retry``) and changing the
queue modes (``set_steering_mode``, ``set_follow_up_mode``), and cycling the model and the
thinking level (``cycle_model``, ``cycle_thinking_level``, ``set_thinking_level``), dropping the
queued messages (``clear_queue``) and naming the session (``set_session_name``).

Everything here is plain data and a pure function of ``(seed, steps, with_extension)``: no
clock, no environment, so a seed runs the same in any process (``explore.engine``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.model_script import (
    HttpError,
    ModelScript,
    Reply,
    ScriptedToolCall,
    StreamPlan,
    Usage,
)
from pi_continuity_harness.scenario.operations import (
    AbortOp,
    BashOp,
    ClearQueueOp,
    CloneOp,
    CommandOp,
    CompactOp,
    CrashOp,
    CycleModelOp,
    CycleThinkingLevelOp,
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
)

__all__ = ["ACTIONS", "DiffAction", "DiffCase", "DiffOptions", "differential_case"]

MAIN, BIG = "fake/main", "fake/big"

#: Every action, with the system it needs (None: any).
ACTIONS: tuple[str, ...] = (
    "turn_below",
    "turn_above",
    "tool_turn",
    "abort_then_prompt",
    "partial_abort_then_prompt",
    "partial_drop",
    "partial_error",
    "server_error",
    "rate_limited",
    "retry_budget_spent",
    "summarizer_fault",
    "steer",
    "follow_up",
    "plain_prompt_while_streaming",
    "compact_while_streaming",
    "set_model",
    "reload",
    "restart",
    "length_stop",
    "silent_overflow",
    "overflow_error",
    "overflow_twice",
    "compact",
    "thinking_turn",
    "extension_command",
    "new_session",
    "fork",
    "tree",
    "user_bash",
    "file_tools",
    "crash",
    "settings_change",
    "clone",
    "switch_session",
    "auto_settings",
    "cycle",
    "clear_queue",
    "session_name",
)

_OVERFLOW = HttpError(
    status=400, message="Your input exceeds the context window of this model", code="context_length_exceeded"
)


@dataclass(frozen=True)
class DiffOptions:
    """What one seed explores (printed with the seed, VOPR style)."""

    seed: int
    window: int
    reserve: int
    keep_recent: int
    max_tokens: int
    reasoning: bool
    retry_enabled: bool
    max_retries: int
    base_delay_ms: int
    weights: dict[str, int] = field(default_factory=dict)

    @property
    def threshold(self) -> int:
        return self.window - self.reserve

    def describe(self) -> str:
        favoured = ",".join(f"{name}×{w}" for name, w in self.weights.items() if w) or "-"
        retry = f"{self.max_retries}×{self.base_delay_ms}ms" if self.retry_enabled else "off"
        return (
            f"seed {self.seed}: window {self.window} reserve {self.reserve} keep {self.keep_recent} "
            f"max_tokens {self.max_tokens} reasoning {'on' if self.reasoning else 'off'} retry {retry} | {favoured}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "window": self.window,
            "reserve": self.reserve,
            "keepRecent": self.keep_recent,
            "maxTokens": self.max_tokens,
            "reasoning": self.reasoning,
            "retry": {
                "enabled": self.retry_enabled,
                "maxRetries": self.max_retries,
                "baseDelayMs": self.base_delay_ms,
            },
            "weights": dict(self.weights),
        }


@dataclass(frozen=True)
class DiffAction:
    """One action: its operations, and the agent and summary replies it scripts for them."""

    name: str
    operations: tuple[Operation, ...]
    agent: tuple[Reply, ...] = ()
    summary: tuple[Reply, ...] = ()


@dataclass(frozen=True)
class DiffCase:
    """One seed's case: the machine, the actions, and whether the implementation is loaded."""

    seed: int
    options: DiffOptions
    actions: tuple[DiffAction, ...]
    #: The implementation under test is loaded (else no extension: Pi's own summarizer runs).
    with_extension: bool
    #: The extension commands the system's implementation offers (``/continuity status``).
    commands: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"differential-seed-{self.seed}-{'extension' if self.with_extension else 'no-extension'}"

    @property
    def operations(self) -> tuple[Operation, ...]:
        return tuple(op for action in self.actions for op in action.operations)

    def scenario(self, *, operations: tuple[Operation, ...] | None = None) -> Scenario:
        o = self.options
        agent = tuple(r for a in self.actions for r in a.agent)
        summary = tuple(r for a in self.actions for r in a.summary)
        compaction = {"enabled": True, "reserveTokens": o.reserve, "keepRecentTokens": o.keep_recent}
        retry = {"enabled": o.retry_enabled, "maxRetries": o.max_retries, "baseDelayMs": o.base_delay_ms}
        data: dict[str, Any] = {
            "name": self.name,
            "description": f"pi-continuity-harness explore --target pi, {o.describe()}",
            "seed": self.seed,
            "models": [
                {
                    "id": MAIN,
                    "context_window": o.window,
                    "max_tokens": o.max_tokens,
                    "reasoning": o.reasoning,
                },
                {"id": BIG, "context_window": o.window * 2, "max_tokens": o.max_tokens},
            ],
            "thinking_level": "low" if o.reasoning else "off",
            "settings": {"global": {"compaction": compaction, "retry": retry}},
            "extensions": [{"implementation": True}] if self.with_extension else [],
            "model": ModelScript(agent=agent, summary=summary),
            "operations": list(self.operations if operations is None else operations),
        }
        return Scenario.model_validate(data)

    def without(self, **changes: Any) -> DiffCase:
        return replace(self, **changes)

    def describe(self) -> str:
        return f"{self.options.describe()} extension {'yes' if self.with_extension else 'no'}"

    def options_json(self) -> dict[str, Any]:
        return {
            **self.options.to_json(),
            "withExtension": self.with_extension,
            "actions": [a.name for a in self.actions],
        }


# ============================================================================ generation
def _options(seed: int, rng: random.Random) -> DiffOptions:
    window = rng.choice((20_000, 32_000))
    weights = {name: rng.choice((0, 1, 1, 2, 3)) for name in ACTIONS}
    weights["turn_below"] = max(weights["turn_below"], 2)
    weights["turn_above"] = max(weights["turn_above"], 1)
    return DiffOptions(
        seed=seed,
        window=window,
        reserve=window // rng.choice((4, 5)),
        keep_recent=rng.choice((100, 500, 2_000)),
        max_tokens=rng.choice((1_000, 4_000)),
        reasoning=rng.random() < 0.25,
        retry_enabled=rng.random() < 0.85,
        max_retries=rng.choice((1, 1, 2)),
        base_delay_ms=rng.choice((20, 50, 100)),
        weights=weights,
    )


def _text(rng: random.Random, label: str) -> str:
    word = " work"
    chars = rng.randint(40, 1_200)
    return (label + word * (chars // len(word) + 1))[:chars]


def _prompt(rng: random.Random, n: int, **extra: Any) -> PromptOp:
    spec: dict[str, Any] = {"text": f"step {n}: keep going", **extra}
    if rng.random() < 0.4:
        spec["chars"] = rng.randint(200, 3_000)
    return PromptOp.model_validate({"prompt": spec})


def _action(name: str, rng: random.Random, n: int, o: DiffOptions, commands: tuple[str, ...]) -> DiffAction:
    t = o.threshold

    def below() -> int:
        return rng.randint(max(1, t // 4), t - 1)

    def above() -> int:
        return rng.randint(t + 1, o.window - 500)

    def reply(**extra: Any) -> Reply:
        return Reply(text=_text(rng, f"reply {n}:"), **extra)

    prompt = _prompt(rng, n)
    if name == "turn_below":
        return DiffAction(name, (prompt,), (reply(context_tokens=below()),))
    if name == "turn_above":
        return DiffAction(name, (prompt,), (reply(context_tokens=above()),))
    if name == "thinking_turn":
        thought = Reply(
            text=_text(rng, f"reply {n}:"), thinking=f"thinking about step {n}", context_tokens=below()
        )
        return DiffAction(name, (prompt,), (thought,))
    if name == "tool_turn":
        call = ScriptedToolCall(name="bash", arguments={"command": f"echo step{n}"}, result=f"step{n}\n")
        first = Reply(
            text="running a tool",
            tool_calls=(call,),
            context_tokens=above() if rng.random() < 0.6 else below(),
        )
        return DiffAction(name, (prompt,), (first, reply(context_tokens=below())))
    if name == "abort_then_prompt":
        held = reply(during=(AbortOp(),))
        return DiffAction(name, (prompt, _prompt(rng, n * 100)), (held, reply(context_tokens=below())))
    if name == "partial_abort_then_prompt":
        text = _text(rng, f"partial {n}:")
        held = Reply(text=text, stream=StreamPlan(upto=rng.randint(0, len(text)), then="abort"))
        return DiffAction(name, (prompt, _prompt(rng, n * 100)), (held, reply(context_tokens=below())))
    # Each action scripts exactly the replies its operations take (``test_differential_alignment``):
    # a retried failure is followed by the reply of the retry, one Pi gives up on by none.
    if name == "partial_drop":
        text = _text(rng, f"dropped {n}:")
        dropped = Reply(text=text, stream=StreamPlan(upto=rng.randint(0, len(text)), then="drop"))
        retried = (reply(context_tokens=below()),) if o.retry_enabled else ()
        return DiffAction(name, (prompt,), (dropped, *retried))
    if name == "partial_error":
        # "upstream boom" is no retryable error (agent-session.js:3149 ``_isRetryableError``,
        # pi-ai ``isRetryableAssistantError``; ``simulator/overflow.py``): Pi stops.
        text = _text(rng, f"failing {n}:")
        failing = Reply(
            text=text, stream=StreamPlan(upto=rng.randint(0, len(text)), then="error", error="upstream boom")
        )
        return DiffAction(name, (prompt,), (failing,))
    if name in ("server_error", "rate_limited"):
        status = 429 if name == "rate_limited" else rng.choice((500, 502, 503))
        error = HttpError(
            status=status, message="Rate limited" if status == 429 else "Service error", type="server_error"
        )
        retried = (reply(context_tokens=below()),) if o.retry_enabled else ()
        return DiffAction(name, (prompt,), (Reply(error=error), *retried))
    if name == "retry_budget_spent":
        # The first call and every retry fail; then Pi gives up (no call after the budget).
        error = HttpError(status=503, message="Service Unavailable", type="server_error")
        errors = tuple(Reply(error=error) for _ in range(o.max_retries + 1 if o.retry_enabled else 1))
        return DiffAction(name, (prompt,), errors)
    if name == "summarizer_fault":
        kind = rng.choice(("500-once", "429-once", "400", "length", "spent"))
        summary: tuple[Reply, ...]
        if kind in ("500-once", "429-once"):
            status = 500 if kind == "500-once" else 429
            summary = (
                Reply(error=HttpError(status=status, message="Temporary failure", type="server_error")),
            )
        elif kind == "400":
            summary = (Reply(error=HttpError(status=400, message="bad summary request")),)
        elif kind == "length":
            summary = (Reply(text="A summary cut", finish="length"),)
        else:
            error = HttpError(status=500, message="Internal server error", type="server_error")
            summary = tuple(Reply(error=error) for _ in range(o.max_retries + 1))
        return DiffAction(name, (prompt,), (reply(context_tokens=above()),), summary)
    if name in ("steer", "follow_up", "plain_prompt_while_streaming"):
        behaviour = {"steer": "steer", "follow_up": "followUp"}.get(name)
        text = f"step {n}: also this"
        during = PromptOp.model_validate(
            {"prompt": {"text": text, "streaming_behavior": behaviour}} if behaviour else {"prompt": text}
        )
        held = reply(context_tokens=below(), during=(during,))
        extra = (reply(context_tokens=below()),) if behaviour else ()
        return DiffAction(name, (prompt,), (held, *extra))
    if name == "compact_while_streaming":
        if rng.random() < 0.5:
            text = _text(rng, f"streaming {n}:")
            held = Reply(
                text=text,
                stream=StreamPlan(upto=rng.randint(0, len(text)), then="hold"),
                during=(CompactOp(),),
            )
        else:
            held = reply(during=(CompactOp(),))
        return DiffAction(name, (prompt,), (held,))
    if name == "set_model":
        return DiffAction(name, (SetModelOp(set_model=rng.choice((BIG, MAIN))),))
    if name == "reload":
        return DiffAction(name, (ReloadOp(),))
    if name == "restart":
        return DiffAction(name, (RestartOp(),))
    if name == "length_stop":
        output = rng.choice((o.max_tokens // 10, o.max_tokens))  # recoverable below the limit only
        cut = Reply(text="a reply cut short", finish="length", usage=Usage(input=above(), output=output))
        return DiffAction(name, (prompt,), (cut, reply(context_tokens=below())))
    if name == "silent_overflow":
        usage = Usage(input=o.window + rng.randint(1, 5_000), output=10)
        return DiffAction(name, (prompt,), (Reply(text="a completed reply", usage=usage),))
    if name == "overflow_error":
        return DiffAction(name, (prompt,), (Reply(error=_OVERFLOW), reply(context_tokens=below())))
    if name == "overflow_twice":
        # Compact, retry, overflow again: Pi reports the failed recovery and calls no more.
        return DiffAction(name, (prompt,), (Reply(error=_OVERFLOW), Reply(error=_OVERFLOW)))
    if name == "compact":
        return DiffAction(name, (CompactOp(),))
    if name == "new_session":
        return DiffAction(name, (NewSessionOp(),))
    if name in ("fork", "tree"):
        # -1 the last user message, 1 the first; a position past the messages offered fails the
        # operation on both targets alike (``no_fork_message``, ``no_tree_message``).
        position = rng.choice((-1, -1, -2, 1, 2))
        spec = {"message": position} if name == "fork" else {"to": position}
        op = (
            ForkOp.model_validate({"fork": spec}) if name == "fork" else TreeOp.model_validate({"tree": spec})
        )
        return DiffAction(name, (op,))
    if name == "user_bash":
        if rng.random() < 0.5:
            command, printed = f"echo step{n}", f"step{n}\n"
        else:  # up to ~9 KB (about 2,200 tokens): enough to move a turn across the threshold
            count = rng.randint(2, 1_999)
            command, printed = f"seq {count}", "".join(f"{i}\n" for i in range(1, count + 1))
        return DiffAction(name, (BashOp.model_validate({"bash": {"command": command, "output": printed}}),))
    if name == "file_tools":
        # Pi's own read, write and edit tools on a file of the run (each call alone in its turn:
        # a reply's calls end in the real processes' order). "item 1" is also in "item 10":
        # an edit of it fails as ambiguous, as one of a line past the end fails as not found.
        count = rng.randint(1, 30)
        path = f"notes/step{n}.md"
        content = "".join(f"item {i}\n" for i in range(1, count + 1))
        old = f"item {rng.randint(1, count + 2)}"
        edit: dict[str, Any] = {"path": path, "edits": [{"oldText": old, "newText": f"done {n}"}]}
        read: dict[str, Any] = {"path": path, "offset": rng.randint(1, count + 3)}
        if rng.random() < 0.5:
            read["limit"] = rng.choice((1, 5))
        calls = (
            ScriptedToolCall(name="write", arguments={"path": path, "content": content}),
            ScriptedToolCall(name="edit", arguments=edit),
            ScriptedToolCall(name="read", arguments=read),
        )
        turns = tuple(
            Reply(
                text="working on files",
                tool_calls=(call,),
                context_tokens=above() if rng.random() < 0.2 else below(),
            )
            for call in calls
        )
        return DiffAction(name, (prompt,), (*turns, reply(context_tokens=below())))
    if name == "crash":
        # Pi killed, then started again over the same session file: at a quiet point, or while a
        # reply streams (the user message is on disk, the reply never is).
        if rng.random() < 0.5:
            return DiffAction(name, (CrashOp(), RestartOp()))
        text = _text(rng, f"streaming {n}:")
        held = Reply(
            text=text, stream=StreamPlan(upto=rng.randint(0, len(text)), then="hold"), during=(CrashOp(),)
        )
        return DiffAction(name, (prompt, RestartOp()), (held,))
    if name == "settings_change":
        # The user edits Pi's global settings between operations; Pi reads them at a reload, a
        # restart or a new runtime (new session, fork), never at once (§9.19).
        change = rng.choice(
            (
                {"compaction": {"reserveTokens": o.window // rng.choice((3, 4, 6))}},
                {"compaction": {"keepRecentTokens": rng.choice((100, 500, 2_000, 8_000))}},
                {"compaction": {"enabled": rng.random() < 0.5}},
                {"retry": {"enabled": rng.random() < 0.5, "maxRetries": rng.choice((0, 1, 2))}},
                {"defaultThinkingLevel": rng.choice(("off", "low", "high"))},
                {"modelThinkingLevels": {MAIN: rng.choice(("minimal", "medium"))}},
            )
        )
        settings_edit = EditFileOp.model_validate(
            {"edit_file": {"path": "$AGENT/settings.json", "json": change, "merge_json": True}}
        )
        then = rng.choice((ReloadOp(), RestartOp(), NewSessionOp(), None))
        return DiffAction(name, (settings_edit,) if then is None else (settings_edit, then))
    if name == "clone":
        return DiffAction(name, (CloneOp(),))
    if name == "switch_session":
        # Resume the session the process was in before (none yet: the operation fails alike on
        # both targets), or the run's first, second or third session file (after a restart too;
        # one the run has not had fails alike); or away to a new session and back; or while a
        # reply streams (Pi settles the turn into the session it leaves). The place comes from
        # the same roll, so the seeds' draws are those of before ``to: N``.
        roll = rng.random()
        if roll < 0.2:
            return DiffAction(name, (SwitchSessionOp(),))
        if roll < 0.35:
            place = 1 + min(2, int((roll - 0.2) / 0.05))
            return DiffAction(name, (SwitchSessionOp.model_validate({"switch_session": {"to": place}}),))
        if roll < 0.7:
            return DiffAction(
                name, (NewSessionOp(), prompt, SwitchSessionOp()), (reply(context_tokens=below()),)
            )
        text = _text(rng, f"streaming {n}:")
        held = Reply(
            text=text,
            stream=StreamPlan(upto=rng.randint(0, len(text)), then="hold"),
            during=(SwitchSessionOp(),),
        )
        return DiffAction(name, (prompt,), (held,))
    if name == "auto_settings":
        # RPC set_auto_compaction / set_auto_retry: the global settings change at once (this
        # explorer's compaction and retry settings are global) and the file is written; or the
        # queue modes (one steering or follow-up message per turn, or all at once).
        enabled = rng.random() < 0.5
        mode: Literal["all", "one-at-a-time"] = "all" if rng.random() < 0.5 else "one-at-a-time"
        toggle: Operation = rng.choice(
            (
                SetAutoCompactionOp(set_auto_compaction=enabled),
                SetAutoCompactionOp(set_auto_compaction=enabled),
                SetAutoRetryOp(set_auto_retry=enabled),
                SetSteeringModeOp(set_steering_mode=mode),
                SetFollowUpModeOp(set_follow_up_mode=mode),
            )
        )
        return DiffAction(name, (toggle,))
    if name == "cycle":
        # RPC cycle_model (between the seed's two models), cycle_thinking_level, set_thinking_level.
        level: Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"] = rng.choice(
            ("off", "minimal", "low", "high", "xhigh")
        )
        cycled: Operation = rng.choice(
            (CycleModelOp(), CycleThinkingLevelOp(), SetThinkingLevelOp(set_thinking_level=level))
        )
        return DiffAction(name, (cycled,))
    if name == "clear_queue":
        # A steering and a follow-up message queued while a reply streams, then dropped (RPC
        # clear_queue): neither reaches the model, so the action scripts the held reply alone.
        text = _text(rng, f"streaming {n}:")
        queued = (
            PromptOp.model_validate({"prompt": {"text": f"steer {n}", "streaming_behavior": "steer"}}),
            PromptOp.model_validate({"prompt": {"text": f"later {n}", "streaming_behavior": "followUp"}}),
            ClearQueueOp(),
        )
        held = Reply(text=text, stream=StreamPlan(upto=rng.randint(0, len(text)), then="hold"), during=queued)
        return DiffAction(name, (prompt,), (held,))
    if name == "session_name":
        # RPC set_session_name: trimmed as JavaScript trims; an empty name is Pi's error.
        names = (f"task {n}", f"  task {n}\n", " \ufeff\u00a0 ", "")
        return DiffAction(name, (SetSessionNameOp(set_session_name=rng.choice(names)),))
    if name == "extension_command":
        if not commands:
            return DiffAction("turn_below", (prompt,), (reply(context_tokens=below()),))
        return DiffAction(name, (CommandOp.model_validate({"command": rng.choice(commands)}),))
    raise AssertionError(name)


def differential_case(
    seed: int, steps: int, *, with_extension: bool, commands: tuple[str, ...] = ()
) -> DiffCase:
    """Expand ``seed`` into ``steps`` actions (deterministic; the same actions with and without
    the extension, so the two runs of a seed differ only in the extension)."""
    rng = random.Random(seed)
    options = _options(seed, rng)
    names = [name for name in ACTIONS if options.weights.get(name)]
    weights = [options.weights[name] for name in names]
    actions = [_action(rng.choices(names, weights)[0], rng, n + 1, options, commands) for n in range(steps)]
    return DiffCase(seed, options, tuple(actions), with_extension, commands)
