"""Python's cyclic garbage collector during a suite run: what it scans, and how often.

A run imports the harness, pytest and pydantic and collects every scenario before the first
one starts: a few hundred thousand objects that live as long as the session. Each scenario
then makes and drops many small objects (messages, events, trace records), and the collector
runs every 700 allocations; each full collection walks every tracked object, the session's
included. Measured on the PSC suite on the simulator (issue 16, 188 scenarios, gc callbacks):
0.25 CPU s of collections during the scenarios; with the session's objects frozen after
collection (``gc.freeze``: moved out of the collector's generations) and the youngest
generation collected every 2,000 allocations instead of 700, 0.13 s, and the median scenario
about 3 % less CPU.

A scenario's objects live as long as the scenario: collected every 2,000 allocations, its
live objects were walked by several young collections, promoted, and walked again by the
middle generation's, and a fresh ``run`` process still reached a full collection during the
scenarios (60-70 ms in one scenario). Every 30,000 allocations (about one collection per five
scenarios) most of what a collection walks is already garbage and is walked once (December
2026, fresh processes, ``run_suite`` with gc callbacks): collections during the PSC suite's
scenarios 142-155 -> 55-59 ms, the longest in one scenario 60-69 -> 8-10 ms; blitz 141-188 ->
65-71 ms; ``explore --seeds 20 --steps 40`` all collections 81 -> 65 ms (PSC), 115 -> 83 ms
(blitz); the peak resident size the same (149 MB, PSC suite).

What a run writes does not depend on when the collector runs (the simulator's outputs are a
function of the scenario and the seed; the suites' outputs of both systems, with and without
this, gave the same digests). The previous settings come back when the session ends
(:func:`tune_for_scenarios`' restore), so a suite run inside another process (``run_suite``,
the project's tests) leaves the collector as it was, but for one thing: Python unfreezes all or
nothing, so objects the caller itself froze before the run are unfrozen too (they are then
collected as usual; nothing else changes).
"""

from __future__ import annotations

import gc
from collections.abc import Callable

__all__ = ["YOUNGEST_THRESHOLD", "collect_less_often", "tune_for_scenarios"]

#: Allocations between two collections of the youngest generation during the scenarios
#: (CPython's default is 700).
YOUNGEST_THRESHOLD = 30_000


def tune_for_scenarios() -> Callable[[], None]:
    """Collect the young generations, freeze what is left (the session's objects) and collect
    the youngest generation less often; return what restores the collector as it was.

    Not a full collection: a suite run inside a larger process (``run_suite`` in the project's
    tests, 213 of them for the blitz mutants) paid ~31 ms for each, walking the host process's
    objects (the mutants' tests: 30.1 CPU-s with ``gc.collect(1)``, 37.7 with ``gc.collect()``;
    the suite's median per scenario the same). Old garbage frozen with the session is
    released when :func:`restore` unfreezes it."""
    thresholds = gc.get_threshold()
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(max(YOUNGEST_THRESHOLD, thresholds[0]), *thresholds[1:])

    def restore() -> None:
        gc.set_threshold(*thresholds)
        gc.unfreeze()

    return restore


def collect_less_often() -> Callable[[], None]:
    """The youngest generation collected every :data:`YOUNGEST_THRESHOLD` allocations from the
    session's start, nothing frozen; return what puts the thresholds back as they were.

    Collecting the features (pytest-bdd's parsed features, pytest's items and fixture
    definitions) makes objects that live as long as the session, and at CPython's 700 each was
    walked by young collections and again by the middle generation's before
    :func:`tune_for_scenarios` froze it: 93 young and 9 middle collections, 17-18 ms, before the
    first scenario of a ``run_suite`` in a fresh process (the plug-in's imports included); with
    this from the session's configuration on, 42 and 4, 11-12 ms, the peak resident size the same
    (136.2 MB, PSC suite, gc callbacks, two runs each, December 2026)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(YOUNGEST_THRESHOLD, thresholds[0]), *thresholds[1:])

    def restore() -> None:
        gc.set_threshold(*thresholds)

    return restore
