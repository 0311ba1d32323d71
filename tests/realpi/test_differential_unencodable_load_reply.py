"""Differential: a Python extension whose load reply JSON cannot carry, real Pi 1.6 against the
simulator.

The bridge answers Pi's ``load`` with the extension's handlers, commands and tools
(``bridge_runtime._load``); a tool's ``parameters`` with a tuple key cannot be encoded
(``api/wire_json.py``), so the bridge answers with that error (``_serve``) and ``bridge.ts``
rejects the load request with it (bridge.ts:333, :407; Pi's message, core/extensions/loader.js:563).
Measured on real Pi 1.6.0: the extension failed to load, and at startup Pi prints ``Failed to
load extension "<path>": Failed to load extension: <message>`` and exits 1 (main.js:825),
before any event. The simulator loaded the extension and started.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, scenario

from pi_continuity_harness.targets.target import TargetStartError

pytestmark = pytest.mark.realpi

_EXTENSION = """\
from pi_continuity_harness.api import ToolDefinition, ToolResult


async def done(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": "done"}])


def extension(pi):
    pi.register_tool(ToolDefinition(
        name="probe", label="probe", description="A probe tool.",
        parameters={"type": "object", "properties": {("a", "b"): {"type": "string"}}},
        execute=done,
    ))
"""


def test_a_load_reply_json_cannot_carry_is_a_load_failure_and_pi_does_not_start(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("unencodable_load", _EXTENSION)
    sc = scenario({"agent": [{"text": "first"}]})
    with pytest.raises(TargetStartError) as real:
        targets("pi", spec).start(sc)
    expected = (
        'Failed to load extension "unencodable_load:extension": Failed to load extension: '
        "keys must be str, int, float, bool or None, not tuple"
    )
    assert str(real.value).splitlines()[0] == expected
    with pytest.raises(TargetStartError) as sim:
        targets("sim", spec).start(sc)
    assert str(sim.value) == expected
