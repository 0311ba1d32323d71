"""Differential: Pi records the thinking level in force as a run starts when the branch says
another (``_recordSelection``, agent-session.js:1517 and :323-367; Pi #11451), real Pi 1.6
against the simulator.

Tree navigation can leave the branch's last ``thinking_level_change`` behind: here ``set_model``
turns thinking off (the harness's ``defaultThinkingLevel``), then the tree goes back to before
that change, where the branch still says ``low``. The next prompt's run appends ``off`` before
the user's message. The simulator did not, until differential exploration found it (seed 9717).
The second test pins that nothing is appended when the branch agrees.
"""

from __future__ import annotations

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario
from simulator.test_thinking_record import parent_of_three

pytestmark = pytest.mark.realpi

_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
    {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
]
_REPLIES = {"agent": [{"text": f"answer {n}"} for n in range(1, 5)]}


def test_a_run_records_the_level_in_force_when_the_branch_says_another(targets: Targets) -> None:
    sc = scenario(_REPLIES, models=_MODELS, thinking_level="low")
    ops = [{"prompt": "one"}, {"prompt": "two"}, {"set_model": "fake/fake-model"}, {"tree": {"to": 2}}]
    real, sim = play(targets, sc, [*ops, {"prompt": "three"}])

    assert parent_of_three(real.entries) == ("thinking", "off")
    assert parent_of_three(sim.entries) == parent_of_three(real.entries)
    assert_equivalent(real, sim)


def test_a_run_records_nothing_when_the_branch_agrees(targets: Targets) -> None:
    sc = scenario(_REPLIES, models=_MODELS, thinking_level="low")
    real, sim = play(
        targets, sc, [{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 2}}, {"prompt": "three"}]
    )

    assert parent_of_three(real.entries) == ("message", "assistant")
    assert parent_of_three(sim.entries) == parent_of_three(real.entries)
    assert_equivalent(real, sim)
