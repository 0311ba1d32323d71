"""Differential: what a Python extension's ``turn_end`` handlers return, real Pi 1.6 against the
simulator.

``turn_end`` is a run boundary (agent-session.js:546-579, ``_dispatchTurnEndBoundary``): Pi hands
the handlers ``{type: "turn_end", turnIndex, message, toolResults, messageEntryId,
toolResultEntryIds, outcome, entries, continue, context}`` through ``emitBoundary``
(runner.js:772-818): each sees the drafts and the ``continue`` the earlier handlers returned; Pi
appends the drafts after the last handler, and a ``continue`` makes the session's ``finishTurn``
answer ``{action: "continue"}`` (:580-591), so the loop runs one more context-only turn when it
would stop (pi-agent-core agent-loop.js:184-207); a ``continue`` the context cannot follow is a
``<boundary>`` error "turn_end requested continuation without runnable model context". The
bridge leaves out ``context`` (bridge.ts ``registerHandler``).

The extension below has three ``turn_end`` handlers: the first answers per call (1: a ``custom``
and a ``custom_message`` draft and ``continue``; 3: ``continue`` alone, after an assistant reply),
the second records what it sees, the third raises. Two prompts; the test asserts real Pi's record,
errors, entries and requests explicitly, then that the simulator's are the same (before the
simulator modelled the result, it had no second request and no drafted entries).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def extension(pi):
    seen = []
    calls = [0]

    def turn_end(event, ctx):
        calls[0] += 1
        seen.append([calls[0], event.turn_index, event.outcome, event.entries, event.continue_])
        if calls[0] == 1:
            return {
                "entries": [
                    {"type": "custom", "customType": "probe-state", "data": {"n": 1}},
                    {"type": "custom_message", "customType": "probe-nudge", "content": "go on", "display": True},
                ],
                "continue": True,
            }
        if calls[0] == 3:
            return {"continue": True}
        return None

    def second(event, ctx):
        seen.append(["second", event.entries, event.continue_])

    def fail(event, ctx):
        raise RuntimeError("turn_end handler failed")

    def settled(event, ctx):
        ctx.ui.notify("turns: " + json.dumps(seen), "info")

    pi.on("turn_end", turn_end)
    pi.on("turn_end", second)
    pi.on("turn_end", fail)
    pi.on("agent_settled", settled)
"""

PATH = "turn_end_probe:extension"


def test_turn_end_drafts_entries_and_continues_the_run(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("turn_end_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}]})
    ops: list[Any] = [{"prompt": "one"}, {"prompt": "two"}]
    real, sim = play(targets, sc, ops, PATH)

    drafts = [
        {"type": "custom", "customType": "probe-state", "data": {"n": 1}},
        {"type": "custom_message", "customType": "probe-nudge", "content": "go on", "display": True},
    ]
    expected: list[Any] = [
        # Prompt one: the drafts and continue reach the second handler; one more turn follows.
        [1, 0, "completed", [], False],
        ["second", drafts, True],
        [2, 1, "completed", [], False],
        ["second", [], False],
        # Prompt two: continue after the assistant's reply, with nothing to continue from.
        [3, 0, "completed", [], False],
        ["second", [], True],
    ]
    assert notes(real)["turns"] == expected, json.dumps(notes(real).get("turns"), indent=1)
    failed = (PATH, "turn_end", "turn_end handler failed")
    errors = [(e["extensionPath"], e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [
        failed,
        failed,
        failed,
        ("<boundary>", "turn_end", "turn_end requested continuation without runnable model context"),
    ]
    kinds = [(e["type"], e.get("customType")) for e in real.entries]
    assert ("custom", "probe-state") in kinds and ("custom_message", "probe-nudge") in kinds
    assert len(real.requests("agent")) == 3
    assert notes(sim).get("turns") == notes(real)["turns"]
    assert [(e["extensionPath"], e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
