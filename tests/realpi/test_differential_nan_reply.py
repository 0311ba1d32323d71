"""Differential: a NaN or an infinity in what a Python extension's tool or handler returns to real
Pi 1.6, against the simulator.

The bridge's reply is JSON (``api/wire_json.py``), which has no NaN: Python's ``json.dumps``
writes ``NaN``/``Infinity``, JavaScript's ``JSON.parse`` throws on it, and ``bridge.ts`` dropped
the line, so Pi waited for the reply forever (the first version of this test timed out after
60 s at ``tool_execution_start``). The reply now carries each such number as a marker that
``bridge.ts`` revives (``reply_line``, ``reviveNonFinite``): Pi gets the number, as from a
JavaScript extension, and every JSON view of it (an RPC event, the entries, the session file,
the next Python handler's event) shows ``null``. The simulator holds ``None`` there
(``json_copy.bridge_reply_copy``), and an input transform's NaN ``text`` stays a number, on
which Pi's ``_expandSkillCommand`` throws (agent-session.js:1754, 1821: ``text.startsWith``).
Before, the simulator kept the NaN and showed it in its entries and events.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import LONG, Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json
import math

from pi_continuity_harness.api import ToolDefinition, ToolResult


def extension(pi):
    seen = []

    async def execute(call_id, params, signal, ctx):
        details = {"nan": math.nan, "inf": math.inf, "list": [1.5, -math.inf], "text": "NaN"}
        return ToolResult(content=[{"type": "text", "text": "measured"}], details=details)

    params = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("measure", "measure", "Measures.", params, execute))

    def on_end(event, ctx):
        seen.append(repr(event.result["details"]))

    def before_compact(event, ctx):
        prep = event.preparation
        details = {"ratio": math.nan, "limits": [-math.inf, 2.0]}
        compaction = {"summary": "OWN", "firstKeptEntryId": prep.first_kept_entry_id, "tokensBefore": 5}
        return {"compaction": {**compaction, "details": details}}

    def transform(event, ctx):
        if event.text == "transform":
            return {"action": "transform", "text": math.nan}
        return None

    def look(event, ctx):
        seen.append("input: " + repr(event.text[:3]))

    def agent_end(event, ctx):
        ctx.ui.notify("seen: " + json.dumps(seen), "info")

    pi.on("tool_execution_end", on_end)
    pi.on("session_before_compact", before_compact)
    pi.on("input", transform)
    pi.on("input", look)
    pi.on("agent_end", agent_end)
"""


def test_a_nan_or_an_infinity_a_python_tool_or_handler_returns_reaches_pi_as_a_number_json_shows_as_null(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("nan_reply_probe", _EXTENSION)
    call = {"name": "measure", "arguments": {}, "id": "c1"}
    usage = {"input": 1000, "output": 10}
    replies = [{"text": LONG, "usage": usage}, {"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]
    sc = scenario({"agent": replies})
    ops = [{"prompt": "one " + LONG}, {"prompt": "two"}, "compact", {"prompt": "transform"}]
    real, sim = play(targets, sc, ops, spec)

    assert [(o.name, o.ok, o.error) for o in real.operations] == [
        ("prompt", True, None),
        ("prompt", True, None),
        ("compact", True, None),
        ("prompt", False, "text.startsWith is not a function"),
    ]
    shown = {"nan": None, "inf": None, "list": [1.5, None], "text": "NaN"}
    assert notes(real)["seen"] == ["input: 'one'", "input: 'two'", repr(shown)]
    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert (result["details"], result["isError"]) == (shown, False)
    [end] = [e for e in real.rpc_events if e["type"] == "tool_execution_end"]
    assert end["result"]["details"] == shown
    [compaction] = real.entries_of("compaction")
    assert (compaction["summary"], compaction["details"]) == ("OWN", {"ratio": None, "limits": [None, 2]})
    # The transform's NaN text: the next handler reads JSON's null as "" (not notified: the
    # prompt fails before agent_end), and the prompt fails on it.
    assert len(real.requests("agent")) == 3
    assert notes(sim) == notes(real)
    assert [(o.name, o.ok, o.error) for o in sim.operations] == [
        (o.name, o.ok, o.error) for o in real.operations
    ]
    assert_equivalent(real, sim)
