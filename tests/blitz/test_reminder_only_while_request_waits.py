"""``reminder_only_while_request_waits`` (H51, H70b): when a reminder may come, each way of
breaking it shown to fail at a named explored seed, the reference passing there.

The registered mutants show two of its three readings: ``blitz_emergency_keeps_reminder`` a
reminder after the emergency, ``blitz_cancel_keeps_reminder`` a cancelled request's reminder,
which names the template tool and so sits in the next epoch as a Call without a Call template.
A reminder worded without the tool's name is read as a reminder there, before that epoch's
request is known: the third reading, shown here with the same mutant in its own words (the
reference document fixes no wording).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.explore.blitz import PLUGIN
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.mutants.blitz.base import patched
from pi_continuity_harness.mutants.blitz.cancel import CancelKeepsReminder

_WIRING = importlib.import_module("pi_continuity_harness.reference.blitz.wiring")
INVARIANT = "reminder_only_while_request_waits"
STEPS = 40


class _CancelledReminderInOwnWords(CancelKeepsReminder):
    """``blitz_cancel_keeps_reminder`` with a reminder that does not name the template tool."""

    def check_reminder(self, ctx: Any) -> None:
        with patched(_WIRING, "REMINDER_TEXT", "Reminder: please complete the Session Handoff now."):
            super().check_reminder(ctx)


#: (the implementation, a seed where it breaks the invariant, what the violation says).
BREAKS = [
    (BLITZ_MUTANTS["blitz_emergency_keeps_reminder"].spec, 19, "after the request's emergency instruction"),
    (
        BLITZ_MUTANTS["blitz_cancel_keeps_reminder"].spec,
        13,
        "names session_handoff_get_template but carries no",
    ),
    (_CancelledReminderInOwnWords.extension, 13, "with no waiting request: its request ended"),
]


@pytest.mark.parametrize(
    ("implementation", "seed", "said"),
    BREAKS,
    ids=["after-emergency", "cancelled-call-shaped", "cancelled-own-words"],
)
def test_each_reading_of_the_invariant_fails_on_a_reminder_out_of_its_time(
    tmp_path: Path, implementation: Any, seed: int, said: str
) -> None:
    case = PLUGIN.case(seed, STEPS)
    result = run_case(PLUGIN, case, implementation=implementation, workdir=tmp_path / "m", requests=False)
    messages = [v.message for v in result.violations if v.invariant == INVARIANT]
    assert messages and said in messages[0], result.violations
    reference = run_case(PLUGIN, case, implementation="blitz", workdir=tmp_path / "r", requests=False)
    assert reference.violations == []
