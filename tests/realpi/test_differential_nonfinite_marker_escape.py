"""Differential: a Python tool's result holding both a NaN and the user's own ``$nonfinite``
objects, real Pi 1.6 against the simulator.

A reply holding a NaN or an infinity crosses the bridge with each such number as a
``{"$nonfinite": "NaN"}`` marker and the line flagged ``"$nonfinite": true``; ``bridge.ts``
``reviveNonFinite`` turns the markers back into numbers and drops the flag (``api/wire_json.py``
``reply_line``). The user's own one-key object ``{"$nonfinite": "Infinity"}`` in such a reply was
revived as a number too (JSON: ``null``), and a user's ``"$nonfinite": true`` key dropped as if it
were the flag. ``reply_line`` now escapes every user key of ``$``s and ``nonfinite`` with one more
``$``, which ``reviveNonFinite`` takes off again, so the user's objects reach Pi as they were. The
simulator never encodes markers (``json_copy.bridge_reply_copy``): its entries show the objects
as the handler gave them, and now real Pi's do too (before, they held ``null`` and ``{"a": 1}``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import math

from pi_continuity_harness.api import ToolDefinition, ToolResult


def extension(pi):
    async def execute(call_id, params, signal, ctx):
        details = {
            "nan": math.nan,
            "user": {"$nonfinite": "Infinity"},
            "flag": {"$nonfinite": True, "a": 1},
            "escaped": {"$$nonfinite": "NaN", "$$$nonfinite": 3},
            "list": [{"$nonfinite": "-Infinity"}, -math.inf],
        }
        return ToolResult(content=[{"type": "text", "text": "measured"}], details=details)

    params = {"type": "object", "properties": {}}
    pi.register_tool(ToolDefinition("measure", "measure", "Measures.", params, execute))
"""


def test_a_users_own_nonfinite_objects_in_a_reply_with_a_nan_reach_pi_as_they_were(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("nonfinite_escape_probe", _EXTENSION)
    call = {"name": "measure", "arguments": {}, "id": "c1"}
    sc = scenario({"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "DONE"}]})
    real, sim = play(targets, sc, [{"prompt": "go"}], spec)

    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["details"] == {
        "nan": None,
        "user": {"$nonfinite": "Infinity"},
        "flag": {"$nonfinite": True, "a": 1},
        "escaped": {"$$nonfinite": "NaN", "$$$nonfinite": 3},
        "list": [{"$nonfinite": "-Infinity"}, None],
    }
    [sim_result] = [e["message"] for e in sim.entries if e.get("message", {}).get("role") == "toolResult"]
    assert sim_result["details"] == result["details"]
    assert_equivalent(real, sim)
