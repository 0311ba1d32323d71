"""The garbage collector during a suite run (``features/collector_tuning.py``): tuned for the
scenarios, and as it was once the session ends."""

from __future__ import annotations

import gc

from pi_continuity_harness.features import collector_tuning
from pi_continuity_harness.features.suite import run_suite


def test_tuning_freezes_the_session_and_restore_undoes_it() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    restore = collector_tuning.tune_for_scenarios()
    try:
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold()[0] == max(collector_tuning.YOUNGEST_THRESHOLD, before[0])
        assert gc.get_threshold()[1:] == before[1:]
    finally:
        restore()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_suite_run_leaves_the_collector_as_it_was() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []
    run = run_suite(
        target="sim",
        extension="reference",
        keyword="the_threshold_is_strict",
        on_result=lambda *_: seen.append(gc.get_threshold()),
    )
    assert run.ok and seen
    assert all(threshold[0] == collector_tuning.YOUNGEST_THRESHOLD for threshold in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
