"""How ``switch_only_after_accepted_finish`` (H31a) and ``dialog_only_for_a_command`` (H8) read a
trace, record by record: the cases the explorer's runs do not all reach (a cancel after an
accepted Finish; a dialog inside a user's prompt), each shown able to fail on a written trace.
Their mutants fail them on explored runs (``test_blitz_exploration_and_mutants.REQUIRED``)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_continuity_harness.explore.blitz.generate import FINISH
from pi_continuity_harness.explore.blitz.invariants import _Dialogs, _Switches


def _records(*specs: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": seq, "kind": kind, "name": name, **data} for seq, (kind, name, data) in enumerate(specs)]


def _finish(ok: bool) -> tuple[str, str, dict[str, Any]]:
    return ("session", "tool_execution_end", {"toolName": FINISH, "isError": not ok})


def _op(name: str, *, end: bool = False, **data: Any) -> tuple[str, str, dict[str, Any]]:
    return ("op", name, {**data, **({"phase": "end"} if end else {})})


NEW = ("host", "runtime", {"reason": "new", "sessionId": "s2"})
CANCEL = _op("command", text="/sh cancel")


def _switches(*specs: tuple[str, str, dict[str, Any]]) -> list[str]:
    scanner = _Switches()
    scanner.feed(None, _records(*specs))  # type: ignore[arg-type]  # it reads no run
    return scanner.problems


@pytest.mark.parametrize(
    ("specs", "flagged"),
    [
        ((_finish(True), NEW), False),
        ((_finish(False), NEW), True),
        ((NEW,), True),
        ((_finish(True), CANCEL, NEW), True),
        ((_finish(True), CANCEL, _finish(True), NEW), False),
        ((_finish(True), NEW, NEW), True),
        ((_op("new_session", during=True), NEW, _op("new_session", end=True)), False),
        ((_finish(True), ("host", "runtime", {"reason": "fork"}), NEW), True),
    ],
    ids=[
        "accepted",
        "rejected",
        "no-finish",
        "cancelled-after-finish",
        "finished-again",
        "second-switch",
        "users-new-session",
        "fork-ends-it",
    ],
)
def test_h31a_a_switch_needs_an_accepted_finish_since_the_last_cancel(
    specs: tuple[tuple[str, str, dict[str, Any]], ...], flagged: bool
) -> None:
    assert bool(_switches(*specs)) is flagged


def _dialogs(*specs: tuple[str, str, dict[str, Any]]) -> list[str]:
    scanner = _Dialogs()
    scanner.feed(None, _records(*specs))  # type: ignore[arg-type]
    return scanner.problems


CONFIRM = ("ui", "confirm", {"title": "Ready?"})


@pytest.mark.parametrize(
    ("specs", "flagged"),
    [
        (
            (_op("command", text="/sh settings"), ("ui", "select", {"title": "x"}), _op("command", end=True)),
            False,
        ),
        ((_op("prompt"), CONFIRM, _op("prompt", end=True)), True),
        ((_op("prompt"), _op("prompt", end=True), CONFIRM), True),
        ((_op("command", text="/sh"), _op("prompt", during=True), CONFIRM, _op("command", end=True)), False),
        ((_op("prompt"), ("ui", "notify", {"message": "hi"}), _op("prompt", end=True)), False),
        ((_op("prompt"), ("ui", "input", {"title": "x", "noUI": True}), _op("prompt", end=True)), True),
    ],
    ids=["in-a-command", "in-a-prompt", "between-operations", "held-in-a-command", "a-notice", "without-ui"],
)
def test_h8_a_dialog_opens_only_while_a_command_runs(
    specs: tuple[tuple[str, str, dict[str, Any]], ...], flagged: bool
) -> None:
    assert bool(_dialogs(*specs)) is flagged
