"""The differential explorer's actions script exactly the replies their operations take.

An action is a unit of shrinking (ddmin drops actions whole), and its name says what the model
does at that point ("turn_above": this prompt's reply crosses the threshold). An action that
scripts a reply Pi never asks for (a retry after a failure Pi does not retry, a third reply
after an overflow Pi gives up on) hands it to the next action's prompt, and every later prompt
gets the reply scripted for the one before it. Until 6 December 2026 ``retry_budget_spent``,
``overflow_twice`` and ``partial_error`` always did, and ``server_error``, ``rate_limited`` and
``partial_drop`` with retry off: measured on seeds 0-119, 7 of 30 ``turn_below`` prompts after
30 actions got their own reply. Each action here plays alone, on the simulator, then a marker
turn whose prompt must get the marker's reply.

Three actions are left out because what Pi asks for depends on the session before them, not on
the action: ``overflow_error`` and ``overflow_twice`` (compaction and a retry only when there is
something to compact) and ``length_stop`` (likewise for a recoverable stop).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from pi_continuity_harness.explore.differential.generate import ACTIONS, _action, differential_case
from pi_continuity_harness.targets import make_target
from pi_continuity_harness.targets.target import Observation

_STATE_DEPENDENT = ("overflow_error", "overflow_twice", "length_stop")
_SEEDS = range(6)


def _last_reply_text(observation: Observation) -> str:
    replies = [e for e in observation.entries if (e.get("message") or {}).get("role") == "assistant"]
    content = replies[-1]["message"].get("content") or [] if replies else []
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


@pytest.mark.parametrize("name", [a for a in ACTIONS if a not in (*_STATE_DEPENDENT, "extension_command")])
def test_an_action_scripts_exactly_the_replies_its_operations_take(name: str, tmp_path: Path) -> None:
    for seed in _SEEDS:
        case = differential_case(seed, 0, with_extension=False)
        for retry in (True, False):
            options = replace(case.options, retry_enabled=retry)
            rng = random.Random(seed)
            action = _action(name, rng, 1, options, ())
            marker = _action("turn_below", rng, 2, options, ())
            played = replace(case, options=options, actions=(action, marker))
            target = make_target("sim", "reference", tmp_path / f"{seed}-{retry}")
            try:
                target.start(played.scenario(operations=()))
                for op in played.operations:
                    target.perform(op)
                observation = target.observe()
            finally:
                target.close()
            assert _last_reply_text(observation) == marker.agent[0].text, (seed, retry, options.max_retries)
