"""Differential: an overflow retry that fails again is reported on real Pi every time, as on the
simulator, however fast Pi makes the retry.

Pi 1.6 takes an assistant message whose ``timestamp`` is not later than the latest compaction
entry's for one from before that compaction and skips the compaction checks for it
(``assistantMessage.timestamp <= new Date(compactionEntry.timestamp).getTime()``,
agent-session.js:2515). After an overflow compaction Pi retries at once, so the retry's message
could fall in the entry's own millisecond: then a retry that overflowed again was not reported
("Context overflow recovery failed after one compact-and-retry attempt", :2550-2571), neither
after the run nor when the next prompt checked it. That happened to 1 of 36 compactions on this
machine (6 December 2026). Seeds of ``explore --target pi`` differed from the simulator, whose
clock never hands out a millisecond twice (``simulator/determinism.py`` ``VirtualClock``), in
this way: PSC 9242 and blitz 9229, whose session files show the retry at 0 ms, and 7 more with
the same difference (PSC 9132, 9146, 9153, 9249; blitz 9113, 9131, 9132), 9 of 200 seeds.

The harness's observer now waits, in its ``session_compact`` handler (which Pi awaits before the
retry), until the wall clock has left the entry's millisecond (``observer.ts``
``afterThisMillisecond``). This test plays 40 such compactions and wants each retry's message
later than its compaction entry on real Pi, and every failure reported on both targets. Without
the wait it failed in 5 of 8 runs (a gap of 0 ms; with the wait it passed 8 of 8): a test of a
race, so without the wait it fails only when real Pi is fast enough. The ``all_the_same``
variant failed 6 of 6 runs with a wait that went by the event's entry, the first version.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from realpi.test_differential_fidelity import (
    FIRST,
    LONG,
    OVERFLOW,
    Targets,
    assert_equivalent,
    play,
    scenario,
)

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

#: Overflow compactions in the run: each prompt overflows, compacts, retries and overflows again.
_CYCLES = 40


def _gaps(observation: Observation) -> list[int]:
    """Per compaction entry: the next message's timestamp minus the entry's, in milliseconds."""
    entries = observation.entries
    gaps = []
    for index, entry in enumerate(entries):
        if entry["type"] == "compaction":
            compacted = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
            gaps.append(entries[index + 1]["message"]["timestamp"] - round(compacted.timestamp() * 1000))
    return gaps


def _failures(observation: Observation) -> list[dict[str, Any]]:
    return [e for e in observation.session("compaction_end") if e.get("errorMessage")]


@pytest.mark.parametrize("summaries", ["distinct", "all_the_same"])
def test_every_retry_that_overflows_again_is_reported_however_fast_the_retry(
    targets: Targets, summaries: str
) -> None:
    """With one summary text for every compaction, each ``session_compact`` after the first
    carries the first entry (Pi's first-equal-summary lookup, agent-session.js:2696), whose
    timestamp is long past: the observer's wait must not go by the event's entry."""
    agent: list[dict[str, Any]] = [FIRST]
    for _ in range(_CYCLES):
        agent += [{"error": OVERFLOW}, {"error": OVERFLOW}]
    texts = [f"S{n}" if summaries == "distinct" else "S" for n in range(_CYCLES)]
    sc = scenario({"agent": agent, "summary": [{"text": text} for text in texts]})
    ops = [{"prompt": "one " + LONG}, *({"prompt": f"prompt {n} " + LONG} for n in range(_CYCLES))]
    real, sim = play(targets, sc, ops)

    gaps = _gaps(real)
    assert len(gaps) == _CYCLES
    assert min(gaps) >= 1, gaps  # every retry began after its compaction's millisecond
    # Each failed retry is reported after its run and again when the next prompt checks it
    # (the last one has no next prompt).
    assert len(_failures(real)) == 2 * _CYCLES - 1
    assert len(_failures(sim)) == len(_failures(real))
    assert_equivalent(real, sim)
