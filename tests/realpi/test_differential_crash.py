"""Differential: Pi killed while a reply streams, then started again, real Pi 1.6 against the simulator.

A crash is ``kill -9``: nothing more happens, and the model server sees the connection of the
request in flight close before its answer ended, so it records the request as aborted
(``targets/realpi/fake_server.py``). The simulator cancelled its in-flight call with the process
but recorded no end for it, so the request looked answered: differential exploration found it
(seeds 10100, 10103, 10107 and 10109, each minimised to a prompt whose held reply crashes Pi,
then ``restart``). The session file holds the user message (Pi appends each message as it ends,
``appendFileSync``) and no reply; the restarted Pi's next request carries that user message.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi


def _aborted(observation: Observation) -> list[bool]:
    return [r.aborted for r in observation.model_requests]


def test_a_request_in_flight_when_pi_is_killed_ends_aborted(targets: Targets) -> None:
    held = {
        "text": "a reply that never ends " * 8,
        "stream": {"upto": 40, "then": "hold"},
        "during": ["crash"],
    }
    sc = scenario({"agent": [held, {"text": "after the restart"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "restart", {"prompt": "two"}])
    assert _aborted(real) == [True, False]
    # The restarted Pi sends the killed turn's user message, with no reply, before the new one.
    users = [m for m in real.model_requests[1].request.messages if m.get("role") == "user"]
    assert ["one" in str(m.get("content")) for m in users][-2:] == [True, False]
    assert _aborted(sim) == _aborted(real)
    assert_equivalent(real, sim)


def test_a_crash_between_operations_aborts_nothing(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "crash", "restart", {"prompt": "two"}])
    assert _aborted(real) == [False, False]
    assert_equivalent(real, sim)


def test_a_crash_in_the_last_operation_is_observed_whole(targets: Targets) -> None:
    """The real-Pi target's operation saw Pi die (its pipe closed) before the model server's
    thread had recorded the held reply's ``crash`` and ended the request aborted; observed at
    once, neither was there (differential seeds 10112, 10200, 10206, 10211). It now waits for
    the server to end every request (``PiTarget._wait_for_held_calls_to_end``)."""
    held = {
        "text": "a reply that never ends " * 8,
        "stream": {"upto": 40, "then": "hold"},
        "during": ["crash"],
    }
    real, sim = play(targets, scenario({"agent": [held]}), [{"prompt": "one"}])
    assert [(h.request, h.outcome.name) for h in real.held_operations] == [("agent#0", "crash")]
    assert _aborted(real) == [True]
    assert_equivalent(real, sim)


_SETTLED = """\
def extension(pi):
    def settled(event, ctx):
        ctx.ui.notify("settled", "info")

    pi.on("agent_settled", settled)
"""


def test_a_process_killed_during_a_run_runs_no_more_handlers(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """The simulator's run ended in ``finally`` with ``agent_settled`` even when Pi had died in
    it, so the handlers of a dead process ran (a blitz notification, differential seed 10301).
    A dead process's dispatch now raises its crash (``AgentSession.dispatch``)."""
    path = python_extension("settled_probe", _SETTLED)
    held = {
        "text": "a reply that never ends " * 8,
        "stream": {"upto": 40, "then": "hold"},
        "during": ["crash"],
    }
    sc = scenario({"agent": [{"text": "first"}, held]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], path)
    assert real.notifications == [("settled", "info")]  # the first run's; the killed one's never
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)
