"""When steps: what the user (or the provider) does. Each records a mark first, so Then steps
can ask about what happened *during* the last action."""

from __future__ import annotations

from pytest_bdd import parsers, when

from pi_continuity_harness.features.steps.common import begin, number
from pi_continuity_harness.features.world import TURN_CHARS, World, _filler, settings_answers
from pi_continuity_harness.scenario.model_script import HttpError, Reply, ScriptedToolCall, Usage
from pi_continuity_harness.scenario.operations import (
    AbortOp,
    CompactOp,
    NewSessionOp,
    ReloadOp,
    RestartOp,
    SetModelOp,
    SwitchSessionOp,
)


@when(
    parsers.re(
        r"the user sets up native compaction at (?P<trigger>\d+(?:\.\d+)?)% trigger and "
        r"(?P<keep>\d+(?:\.\d+)?)% keep-recent "
        r"and (?P<decision>confirms|declines)"
    )
)
def _settings(world: World, trigger: str, keep: str, decision: str) -> None:
    world.start()
    begin(world)
    world.command("/continuity settings", settings_answers(trigger, keep, decision == "confirms"))


@when(parsers.re(r'the user runs "(?P<text>/[^"]+)"'))
def _run_command(world: World, text: str) -> None:
    world.start()
    begin(world)
    world.command(text)


@when("Pi starts")
def _pi_starts(world: World) -> None:
    begin(world)
    world.start()


@when("Pi restarts")
def _pi_restarts(world: World) -> None:
    world.start()
    begin(world)
    outcome = world.perform(RestartOp())
    assert outcome.ok, f"restart failed: {outcome.error}"


@when("the user starts a new session and then resumes the previous one")
def _new_session_then_resume(world: World) -> None:
    """RPC ``new_session`` (the new session's ``session_start{new}`` finds nothing of the other
    session's), then RPC ``switch_session`` back (``session_start{resume}``): what the spec's
    ``session_start`` inspection sees when the user comes back with ``/resume``."""
    world.start()
    outcome = world.perform(NewSessionOp())
    assert outcome.ok, f"new session failed: {outcome.error}"
    begin(world)
    outcome = world.perform(SwitchSessionOp())
    assert outcome.ok, f"resume failed: {outcome.error}"


@when("Pi reloads")
def _pi_reloads(world: World) -> None:
    world.start()
    begin(world)
    outcome = world.perform(ReloadOp())
    assert outcome.ok, f"reload failed: {outcome.error}"


@when(parsers.re(r"the model reports (?P<n>\d[\d,]*) context tokens after the next prompt"))
def _reports_tokens(world: World, n: str) -> None:
    world.ensure_history()
    begin(world)
    world.cross_threshold(number(n))


@when(parsers.re(r"native compaction reaches its threshold(?: again)?"))
def _reach_threshold(world: World) -> None:
    world.ensure_history()
    begin(world)
    world.cross_threshold()


@when(
    parsers.re(r"native compaction reaches its threshold (?P<times>\d+) times, with 2 turns of work between")
)
def _reach_threshold_many(world: World, times: str) -> None:
    world.ensure_history()
    begin(world)
    for index in range(int(times)):
        if index:
            world.work_turns(2, context_tokens=10_000)
        world.cross_threshold()


@when(parsers.re(r"the user works through (?P<count>\d+) more turns?"))
def _more_turns(world: World, count: str) -> None:
    world.work_turns(int(count), context_tokens=10_000)


@when(parsers.re(r"the model calls a tool and reports (?P<n>\d[\d,]*) context tokens, then answers"))
def _tool_then_answer(world: World, n: str) -> None:
    world.ensure_history()
    begin(world)
    call = ScriptedToolCall(name="bash", arguments={"command": "echo hi"}, id="call_mid_run", result="hi\n")
    world.script(
        "agent",
        Reply(text="running a tool", tool_calls=(call,), context_tokens=number(n)),
        Reply(text="FINAL-TEXT-OF-ORIGINAL-RUN", context_tokens=10_000),
    )
    world.turns += 1
    world.remembered["run_final_text"] = "FINAL-TEXT-OF-ORIGINAL-RUN"
    world.prompt(_filler("use a tool", TURN_CHARS))


@when("the provider rejects the next request because it exceeds the context window")
def _overflow(world: World) -> None:
    world.ensure_history()
    begin(world)
    error = HttpError(
        status=400,
        message="Your input exceeds the context window of this model",
        code="context_length_exceeded",
    )
    world.script("agent", Reply(error=error), Reply(text="RETRY-ANSWER", context_tokens=3_000))
    world.turns += 1
    world.prompt(_filler("a request too large", TURN_CHARS))


@when(parsers.re(r"the model reports (?P<n>\d[\d,]*) input tokens in a completed reply"))
def _silent_overflow(world: World, n: str) -> None:
    world.ensure_history()
    begin(world)
    world.script("agent", Reply(text="a completed reply", usage=Usage(input=number(n), output=10)))
    world.turns += 1
    world.prompt(_filler("another request", TURN_CHARS))


@when(parsers.re(r"the user compacts the session manually(?: after (?P<count>\d+) turns)?"))
def _manual_compact(world: World, count: str | None) -> None:
    if count:
        world.work_turns(int(count), context_tokens=10_000)
    world.ensure_history()
    begin(world)
    world.perform(CompactOp())


@when("the user sends a short prompt")
def _short_prompt(world: World) -> None:
    begin(world)
    world.script("agent", Reply(text="a short answer", context_tokens=10_000))
    world.prompt("a short question")


@when(parsers.re(r'the user switches to the model "(?P<model_id>[^"]+)"'))
def _switch_model(world: World, model_id: str) -> None:
    world.start()
    begin(world)
    world.remembered["active_model"] = model_id
    outcome = world.perform(SetModelOp(set_model=model_id))
    assert outcome.ok, f"set_model failed: {outcome.error}"


@when("the user aborts")
def _abort(world: World) -> None:
    begin(world)
    world.perform(AbortOp())


@when(parsers.re(r'native compaction happens for reason "(?P<reason>threshold|overflow|manual)"'))
def _compaction_for_reason(world: World, reason: str) -> None:
    """One compaction of each native kind: the threshold, a provider overflow, or /compact."""
    if reason == "threshold":
        _reach_threshold(world)
    elif reason == "overflow":
        _overflow(world)
    else:
        _manual_compact(world, None)
