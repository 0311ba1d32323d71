"""Differential: a Python extension's ``agent_before_settle`` handlers, real Pi 1.6 against the
simulator.

After a run's post-run checks (retry, compaction, queued messages) and before ``agent_settled``,
Pi hands the extensions ``{type: "agent_before_settle", outcome, entries, continue, context}``
through ``emitBoundary`` (agent-session.js:1639-1662, runner.js:772-818), only when one has a
handler: each handler sees the drafts and the ``continue`` the earlier ones returned; after each,
Pi rebuilds the context preview with the drafts (an invalid draft is an ``extension_error``
"Invalid boundary entries: ..." and, unless a later handler replaces the drafts, drops them all);
then it appends the drafts, and goes on with another turn when a handler asked to and the
context can (else a ``<boundary>`` error "requested continuation without runnable model
context"). The bridge leaves out ``context`` (bridge.ts ``registerHandler``).

The extension below, defined here, has three handlers: the first answers per call (1: a
``custom`` and a ``custom_message`` draft and ``continue``; 3: a ``context_edit`` of an unknown
entry and ``continue``; 4: ``continue`` alone), the second records what it sees, the third
raises. Three prompts; the test asserts real Pi's record, errors, entries and requests
explicitly, then that the simulator's are the same (before the simulator dispatched the event,
it had no record, no second request and no drafted entries).
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

    def settle(event, ctx):
        calls[0] += 1
        seen.append([calls[0], event.type, type(event).__name__, event.outcome, event.entries, event.continue_])
        if calls[0] == 1:
            return {
                "entries": [
                    {"type": "custom", "customType": "probe-state", "data": {"n": 1}},
                    {"type": "custom_message", "customType": "probe-nudge", "content": "go on", "display": True},
                ],
                "continue": True,
            }
        if calls[0] == 3:
            return {"entries": [{"type": "context_edit", "targetId": "nope", "replacement": None}], "continue": True}
        if calls[0] == 4:
            return {"continue": True}
        return None

    def second(event, ctx):
        seen.append(["second", event.entries, event.continue_])

    def fail(event, ctx):
        raise RuntimeError("settle handler failed")

    def settled(event, ctx):
        ctx.ui.notify("settle: " + json.dumps(seen), "info")

    pi.on("agent_before_settle", settle)
    pi.on("agent_before_settle", second)
    pi.on("agent_before_settle", fail)
    pi.on("agent_settled", settled)
"""

PATH = "before_settle_probe:extension"


def test_agent_before_settle_drafts_entries_and_continues_the_run(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("before_settle_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}, {"text": "fourth"}]})
    ops: list[Any] = [{"prompt": "one"}, {"prompt": "two"}, {"prompt": "three"}]
    real, sim = play(targets, sc, ops, PATH)

    drafts = [
        {"type": "custom", "customType": "probe-state", "data": {"n": 1}},
        {"type": "custom_message", "customType": "probe-nudge", "content": "go on", "display": True},
    ]
    bad = [{"type": "context_edit", "targetId": "nope", "replacement": None}]
    row = ["agent_before_settle", "AgentBeforeSettleEvent", "completed", [], False]
    expected: list[Any] = [
        # Prompt one: the drafts and continue reach the second handler; the run goes on.
        [1, *row],
        ["second", drafts, True],
        [2, *row],
        ["second", [], False],
        # Prompt two: an invalid draft; prompt three: continue with nothing to continue from.
        [3, *row],
        ["second", bad, True],
        [4, *row],
        ["second", [], True],
    ]
    assert notes(real)["settle"] == expected, json.dumps(notes(real).get("settle"), indent=1)
    invalid = (PATH, "agent_before_settle", "Invalid boundary entries: Entry nope not found")
    failed = (PATH, "agent_before_settle", "settle handler failed")
    errors = [(e["extensionPath"], e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [
        failed,
        failed,
        invalid,
        invalid,
        failed,
        invalid,
        failed,
        (
            "<boundary>",
            "agent_before_settle",
            "agent_before_settle requested continuation without runnable model context",
        ),
    ]
    kinds = [(e["type"], e.get("customType")) for e in real.entries]
    assert ("custom", "probe-state") in kinds and ("custom_message", "probe-nudge") in kinds
    assert [e["type"] for e in real.entries if e["type"] == "context_edit"] == []
    assert len(real.requests("agent")) == 4
    assert notes(sim).get("settle") == notes(real)["settle"]
    assert [(e["extensionPath"], e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)
