"""Differential: resuming another session of the run (RPC ``switch_session``) and cloning the
session at its leaf (RPC ``clone``), real Pi 1.6 against the simulator.

``AgentSessionRuntime.switchSession`` (agent-session-runtime.js:147-165) emits
``session_before_switch{resume, targetSessionFile}``, opens the file before the teardown
(``SessionManager.open``, its directory the file's own), settles the running turn,
``session_shutdown{resume}``, and starts a runtime with ``session_start{resume,
previousSessionFile}``. RPC ``clone`` (rpc-mode.js:505-512) is ``fork(leafId, {position:
"at"})``: the whole branch copied into a new session linked to the source. Neither could be
said in a scenario before 6 December 2026 (``switch_session: previous``, ``clone``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.scenario.operations import NO_PREVIOUS_SESSION, no_such_session_message
from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi


def _outcomes(observation: Observation) -> list[tuple[str, bool, str | None]]:
    return [(o.name, o.ok, o.error) for o in observation.operations]


def _user_texts(observation: Observation) -> list[str]:
    return [
        str(
            e["message"]["content"]
            if isinstance(e["message"]["content"], str)
            else e["message"]["content"][0]["text"]
        )
        for e in observation.entries
        if e.get("type") == "message" and e["message"].get("role") == "user"
    ]


def test_switching_back_and_forth_and_cloning_resume_each_session_whole(targets: Targets) -> None:
    replies = [{"text": f"reply {n}"} for n in range(1, 5)]
    sc = scenario({"agent": replies})
    ops: list[Any] = [
        "switch_session",  # nothing to go back to yet
        {"prompt": "in A"},
        "new_session",
        {"prompt": "in B"},
        "switch_session",  # back to A
        {"prompt": "A again"},
        "clone",  # A's whole branch into C
        "switch_session",  # back to A from the clone
        {"prompt": "A a third time"},
    ]
    real, sim = play(targets, sc, ops)
    assert _outcomes(real)[0] == ("switch_session", False, NO_PREVIOUS_SESSION)
    assert all(ok for _, ok, _ in _outcomes(real)[1:])
    assert _user_texts(real) == ["in A", "A again", "A a third time"]
    starts = [e for e in real.extension_events if e["type"] == "session_start"]
    assert [e["reason"] for e in starts] == ["startup", "new", "resume", "fork", "resume"]
    assert_equivalent(real, sim)


def test_a_session_is_resumed_by_its_place_in_the_run_even_after_a_restart(targets: Targets) -> None:
    """``to: N`` names the run's Nth session file (in the order a ``session_start`` first named
    it): a restarted process has no previous session, yet the run's first one can be resumed;
    a place the run has not reached is refused before anything is sent."""
    replies = [{"text": f"reply {n}"} for n in range(1, 5)]
    sc = scenario({"agent": replies})
    ops: list[Any] = [
        {"prompt": "in A"},
        "new_session",
        {"prompt": "in B"},
        "restart",  # Pi resumes B; the new process has no previous session
        "switch_session",
        {"switch_session": {"to": 3}},
        {"switch_session": {"to": 1}},
        {"prompt": "A again"},
        {"switch_session": {"to": 2}},
        {"prompt": "B again"},
    ]
    real, sim = play(targets, sc, ops)
    assert _outcomes(real)[4:6] == [
        ("switch_session", False, NO_PREVIOUS_SESSION),
        ("switch_session", False, no_such_session_message(3, 2)),
    ]
    assert all(ok for _, ok, _ in _outcomes(real)[6:])
    assert _user_texts(real) == ["in B", "B again"]
    starts = [e for e in real.extension_events if e["type"] == "session_start"]
    assert [e["reason"] for e in starts] == ["startup", "new", "startup", "resume", "resume"]
    assert_equivalent(real, sim)


def test_a_previous_session_never_written_opens_empty_at_its_path(targets: Targets) -> None:
    """Pi writes a session file at its first assistant message (session-manager.js, lazy files):
    resuming one that never got there opens an empty session at that path, with the model and
    thinking level entries of any new session. Nor can it be cloned before."""
    sc = scenario({"agent": [{"text": "in B"}, {"text": "in the unwritten one"}]})
    ops: list[Any] = ["clone", "new_session", {"prompt": "b"}, "switch_session", {"prompt": "resumed"}]
    real, sim = play(targets, sc, ops)
    # Nor can it be cloned (agent-session-runtime.js:234-236).
    assert _outcomes(real)[0] == (
        "clone",
        False,
        "This session has not been saved yet. Send a message before cloning or forking it.",
    )
    assert all(ok for _, ok, _ in _outcomes(real)[1:])
    assert _user_texts(real) == ["resumed"]
    assert_equivalent(real, sim)


_CANCELS = """\
def extension(pi):
    def before_switch(event, ctx):
        ctx.ui.notify(f"switch {event.reason} refused", "warning")
        return {"cancel": event.reason == "resume"}

    def before_fork(event, ctx):
        ctx.ui.notify(f"fork {event.position} refused", "warning")
        return {"cancel": True}

    def start(event, ctx):
        ctx.ui.notify(f"start {event.reason}", "info")

    pi.on("session_before_switch", before_switch)
    pi.on("session_before_fork", before_fork)
    pi.on("session_start", start)
"""


def test_an_extension_cancels_a_resume_and_a_clone(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("switch_cancel_probe", _CANCELS)
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}, {"text": "three"}]})
    ops: list[Any] = [
        {"prompt": "a"},
        "new_session",
        {"prompt": "b"},
        "switch_session",
        "clone",
        {"prompt": "c"},
    ]
    real, sim = play(targets, sc, ops, spec)
    assert _outcomes(real)[3:5] == [("switch_session", False, "cancelled"), ("clone", False, "cancelled")]
    assert real.notifications[-2:] == [("switch resume refused", "warning"), ("fork at refused", "warning")]
    assert_equivalent(real, sim)


def test_a_resume_while_a_reply_streams_settles_the_turn_first(targets: Targets) -> None:
    """``teardownCurrent`` aborts the running turn before ``session_shutdown``, so the aborted
    reply is written to the session left behind (agent-session-runtime.js:121-132)."""
    held = {
        "text": "a reply that is cut short " * 8,
        "stream": {"upto": 40, "then": "hold"},
        "during": ["switch_session"],
    }
    sc = scenario({"agent": [{"text": "first"}, held, {"text": "back"}]})
    ops: list[Any] = [{"prompt": "a"}, "new_session", {"prompt": "b"}, {"prompt": "in A"}]
    real, sim = play(targets, sc, ops)
    assert [(h.request, h.outcome.name, h.outcome.ok) for h in real.held_operations] == [
        ("agent#1", "switch_session", True)
    ]
    assert [r.aborted for r in real.model_requests] == [False, True, False]
    assert_equivalent(real, sim)


_COMMANDS = """\
def extension(pi):
    async def fork_here(args, ctx):
        position, _, which = args.partition(" ")
        users = [
            e["id"]
            for e in ctx.session_manager.get_branch()
            if e["type"] == "message" and e["message"]["role"] == "user"
        ]
        target = ctx.session_manager.get_leaf_id()
        if which:
            target = which if which.startswith("id:") else users[int(which) - 1]

        async def greet(new_ctx):
            new_ctx.ui.notify(f"in the {position} fork", "info")
            await new_ctx.send_user_message(f"forked {position}")

        try:
            await ctx.fork(target.removeprefix("id:"), position=position, with_session=greet)
        except Exception as error:  # Pi's error, word for word
            ctx.ui.notify(f"fork failed: {error}", "error")

    async def back(args, ctx):
        async def greet(new_ctx):
            new_ctx.ui.notify("resumed", "info")
            await new_ctx.send_user_message("resumed by the extension")

        await ctx.switch_session(pi.previous, with_session=greet)

    def remember(event, ctx):
        if event.previous_session_file:
            pi.previous = event.previous_session_file

    pi.register_command("fork-here", fork_here)
    pi.register_command("back", back)
    pi.on("session_start", remember)
"""


def test_an_extension_forks_clones_and_resumes_with_ctx(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``ctx.fork(entryId, {position, withSession})`` and ``ctx.switchSession(path, {withSession})``
    of a command (rpc-mode.js:255-270): the new session's ``with_session`` context sends a
    message that runs there (the command's own ctx is stale after the switch); an unknown
    entry is Pi's error."""
    spec = python_extension("ctx_fork_probe", _COMMANDS)
    replies = [{"text": f"reply {n}"} for n in range(1, 7)]
    sc = scenario({"agent": replies})
    ops: list[Any] = [
        {"prompt": "one"},
        {"prompt": "two"},
        {"command": "/fork-here before id:nope"},  # Pi: Invalid entry ID for forking
        {"command": "/fork-here before 2"},  # a new session holding "one" and its reply
        {"command": "/fork-here at"},  # clone the branch that holds "forked before"
        {"command": "/back"},  # resume the fork from the clone
    ]
    real, sim = play(targets, sc, ops, spec)
    assert _user_texts(real) == ["one", "forked before", "resumed by the extension"]
    assert real.notifications == [
        ("fork failed: Invalid entry ID for forking", "error"),
        ("in the before fork", "info"),
        ("in the at fork", "info"),
        ("resumed", "info"),
    ]
    assert not [e for e in real.session_events if e.get("type") == "extension_error"]
    assert_equivalent(real, sim)
