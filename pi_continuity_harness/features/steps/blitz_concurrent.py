"""Steps of the pi-blitz-handoff features that run an operation while a command is held: a
command sent with ``wait: false`` (``docs/scenario-format.md``, "command") goes on running while
the next operation runs, so a start can arrive while ``/sh cancel`` waits for the turn to settle;
``/sh cancel`` while another extension holds the native switch; the sender's late settlement; a
fork (``fork`` operation) in the protected window; ``/sh start`` while the ``/sh settings`` menu is
held open (a dialog answer's ``during``).

Kept apart from :mod:`.blitz` and :mod:`.blitz_then` (branch ``blitz-concurrent``) so parallel
work on those modules merges cleanly.
"""

from __future__ import annotations

from pytest_bdd import given, then, when

from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.steps.blitz import (
    begin,
    call,
    config_bytes,
    finish_reply,
    get_reply,
    handoff_messages,
    sh_start,
    submitted_then_receiver,
    widget_texts,
    write_reply,
)
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import HttpError, Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import CommandOp, DialogAnswer, ForkOp, TreeOp


def unawaited(text: str) -> CommandOp:
    """``text`` as a command the next operation does not wait for (``wait: false``)."""
    return CommandOp.model_validate({"command": {"text": text, "wait": False}})


def awaited(text: str) -> CommandOp:
    return CommandOp.model_validate({"command": {"text": text}})


# ===================================================================== H79: a start during the cleanup
@when(
    "the user cancels the handoff while the model's reply asking for the template is held, "
    'and runs "/sh start" while the cancel waits for the turn'
)
def _start_during_cleanup(world: World) -> None:
    """``/sh cancel`` is sent without waiting: it ends the request and waits for the running
    turn to settle (its cleanup is held by the held reply). ``/sh start`` then arrives during
    that cleanup; only afterwards is the reply released, so its template call runs late, after
    the cancel (reference: Protection, "late callbacks cannot revive work")."""
    held_get = Reply(
        tool_calls=(call(oracle.GET_TOOL),),
        context_tokens=12_000,
        latency_ms=500,
        during=(unawaited("/sh cancel"), awaited("/sh start")),
    )
    sh_start(world, held_get, Reply(text="The template was refused.", context_tokens=12_100))


@then("the start during the cleanup was refused: the Call instruction was sent once")
def _start_during_cleanup_refused(world: World) -> None:
    """One Call instruction, and the widget shows a request waiting only once: a start accepted
    during the cleanup shows "Waiting for Session Handoff" again after the cancel (its Call
    would be sent only once the turn settles, after the scenario's end, so the count alone
    passed for such a start: ``blitz_start_during_cleanup`` survived this step)."""
    calls = [m.item.text for m in handoff_messages(world) if m.kind == "call"]
    assert len(calls) == 1, f"Call instructions sent: {len(calls)} ({[c[:60] for c in calls]})"
    texts = widget_texts(world)
    waiting = [bool(t and oracle.WAITING in t) for t in texts]
    shown = sum(1 for i, on in enumerate(waiting) if on and (i == 0 or not waiting[i - 1]))
    assert shown == 1, f"a request was shown waiting {shown} times (widget updates: {texts})"


# ===================================================================== H63: cancel during the cutover
_MODEL_BEFORE_SWITCH = "pi_continuity_harness.features.host_extensions:model_before_switch"


@given("another extension asks the model before every session switch")
def _model_before_switch(world: World) -> None:
    world.require_setup("another extension").data["extensions"].append({"module": _MODEL_BEFORE_SWITCH})


@when('the user runs "/sh cancel" while the native switch to the receiver is in progress')
def _cancel_during_switch(world: World) -> None:
    """The writer finishes; the cutover invokes Pi's session switch, and the other extension's
    ``session_before_switch`` handler holds it with a model call, during which ``/sh cancel``
    runs (reference: Cutover, "native cutover invoked: cannot cancel")."""
    world.start()
    world.script("extension", SynthesisReply(kind="raw", text="noted", during=(awaited("/sh cancel"),)))
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )


@then("the cancel ran while the switch was in progress")
def _cancel_ran_during_switch(world: World) -> None:
    held = [h for h in world.observe().held_operations if h.request.startswith("extension#")]
    assert held and held[0].outcome.name == "command", f"operations run while a call was held: {held}"


# ===================================================================== H78: tree navigation during the cleanup
_MODEL_ON_SETTLED = "pi_continuity_harness.features.host_extensions:model_on_settled"


@given("another extension asks the model whenever the agent settles")
def _model_on_settled(world: World) -> None:
    world.require_setup("another extension").data["extensions"].append({"module": _MODEL_ON_SETTLED})


@when(
    "the user cancels the handoff while the model's reply to the Call instruction is held, "
    "and navigates the session tree while the other extension's settlement call is held"
)
def _tree_during_cleanup(world: World) -> None:
    """``/sh start`` submits the Call instruction; its reply (before any GET) is held while
    ``/sh cancel`` is sent without waiting: the cancel ends the request and waits for the turn
    to settle. The turn ends; the other extension's ``agent_settled`` handler holds a model call,
    and the tree navigation (to the Call instruction) sent meanwhile is deferred by Pi until the
    handlers end, then runs while the cancel's cleanup still waits for idle
    (``agent-session.js:742-766, 1705-1708``; ``features/host_extensions.py`` ``model_on_settled``)."""
    world.start()
    navigate = TreeOp.model_validate({"tree": {"to": -1, "wait": False}})
    world.script("extension", SynthesisReply(kind="raw", text="noted", latency_ms=300, during=(navigate,)))
    held_call_reply = Reply(
        text="I will ask for the template.",
        context_tokens=12_000,
        latency_ms=300,
        during=(unawaited("/sh cancel"),),
    )
    sh_start(world, held_call_reply)


@then("the tree navigation during the cleanup was cancelled and the leaf did not move")
def _tree_cancelled(world: World) -> None:
    navigations = world.observe().events("tree_navigation")
    assert navigations, "the tree navigation did not run"
    last = navigations[-1]
    assert not last.get("error"), f"Pi refused the navigation itself: {last['error']}"
    assert last.get("cancelled") is True, f"the navigation was not cancelled: {last}"
    assert last.get("newLeafId") == last.get("oldLeafId"), f"the leaf moved: {last}"


# ===================================================================== H43: the sender settles late
@when(
    'the user runs "/sh start", the model writes the handoff and finishes it, '
    "and the receiver's bootstrap turn fails with a provider error"
)
def _receiver_turn_fails(world: World) -> None:
    """The receiver's first reply is a provider error (400: not retried): the bootstrap turn does
    not complete. The sender's cutover call (``ctx.newSession`` with ``withSession``) returns
    only after that turn has settled, so the source instance settles late (reference: Transfer
    sequence 7)."""
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200),
        Reply(error=HttpError(status=400, message="bad request")),
    )


@then("the bootstrap turn's failure is the last handoff outcome reported")
def _failure_last(world: World) -> None:
    mark = world.remembered["mark"]
    said = world.observe().notifications[mark.notifications :]
    assert said, "the implementation reported no outcome"
    _message, kind = said[-1]
    assert kind == "error", f"the last notification is not the failure: {said}"


# ===================================================================== H77b: a fork in the protected window
@when("the user forks the session while the handoff is written")
def _fork_while_writing(world: World) -> None:
    """RPC ``fork`` before the last user message (``get_fork_messages``) once the template was
    retrieved: ``session_before_fork`` is the extension's chance to block it (reference:
    Protection)."""
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    begin(world)
    outcome = world.perform(ForkOp())
    # Either way the fork reached Pi: it switched, or session_before_fork cancelled it.
    assert outcome.ok or outcome.error == "cancelled", f"the fork could not run: {outcome.error}"


# ===================================================================== H87c: a start while settings is open
@when('the user runs "/sh start" while the /sh settings menu is open, then closes the menu')
def _start_during_settings(world: World) -> None:
    """``/sh settings`` opens its menu; while the menu waits for the user (the answer's
    ``during``), ``/sh start`` arrives as a second command line, as an RPC client sends it (Pi
    runs it at once: ``dist/modes/rpc/rpc-mode.js:318-343``). Then the menu is closed
    (reference: Overlap, "no start during settings")."""
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    world.command("/sh settings", [DialogAnswer(cancel=True, during=(awaited("/sh start"),))])


@then("the start ran while the settings menu was open")
def _start_ran_during_settings(world: World) -> None:
    held = [h for h in world.observe().held_operations if h.request.startswith("dialog:")]
    assert held and held[0].outcome.name == "command", f"operations run while a dialog was open: {held}"
