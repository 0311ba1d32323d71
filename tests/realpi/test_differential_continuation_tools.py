"""Differential: the active tools on a continuation that is no new run, real Pi 1.6 against the
simulator.

An ``agent_before_settle`` handler's ``continue`` goes on with ``agent.continue()``
(agent-session.js:1527-1534), pi-agent-core's ``runAgentLoopContinue`` (agent-loop.js:64-76),
whose loop declares the active tools before every request, the first included
(``declareToolChanges``, :121): a ``set_active_tools`` in that handler shows at the
continuation's own request, as a system message with the tool changes and no sections
(``prepareNextTurn``, which patches the sections, runs only after a completed turn, :97-98).
The next run's system message then patches the sections. The simulator declared the tools
only before a later turn's request, so the continuation's request declared the old tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
def extension(pi):
    calls = [0]

    def settle(event, ctx):
        calls[0] += 1
        if calls[0] == 1:
            pi.set_active_tools(["read", "grep"])
            nudge = {"type": "custom_message", "customType": "nudge", "content": "go on", "display": True}
            return {"entries": [nudge], "continue": True}
        return None

    pi.on("agent_before_settle", settle)
"""


def _system_messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "system"]


def _roles(entries: list[dict[str, Any]]) -> list[str]:
    return [e["message"]["role"] if e["type"] == "message" else e["type"] for e in entries]


def test_set_active_tools_before_a_settle_continuation_is_declared_at_the_continuations_request(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("continuation_tools", _EXTENSION)
    sc = scenario({"agent": [{"text": "first"}, {"text": "second"}, {"text": "third"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], spec)

    tools = [["read", "bash", "edit", "write"], ["read", "grep"], ["read", "grep"]]
    assert [r.request.tools for r in real.requests("agent")] == tools
    roles = [
        "model_change",
        "thinking_level_change",
        "system",
        "user",
        "assistant",
        "custom_message",
        "system",  # the continuation's: tool changes only
        "assistant",
        "system",  # run two's: the sections
        "user",
        "assistant",
    ]
    assert _roles(real.entries) == roles
    _, declared, patched = _system_messages(real.entries)
    assert "sections" not in declared
    assert [t["name"] for t in declared["toolsAdded"]] == ["grep"]
    assert declared["toolsRemoved"] == [{"name": "bash"}, {"name": "edit"}, {"name": "write"}]
    assert "toolsAdded" not in patched and "toolsRemoved" not in patched
    assert patched["sections"]["tools"] == (
        "<tools>\n- read: Read file contents\n"
        "- grep: Search file contents for patterns (respects .gitignore)\n\n"
        "Additional tools may be available.\n</tools>"
    )

    assert [r.request.tools for r in sim.requests("agent")] == tools
    assert _roles(sim.entries) == roles
    _, sim_declared, sim_patched = _system_messages(sim.entries)
    assert {k: v for k, v in sim_declared.items() if k != "timestamp"} == {
        k: v for k, v in declared.items() if k != "timestamp"
    }
    assert sim_patched.get("sections") == patched["sections"]
    assert_equivalent(real, sim)
