"""The garbage collector while ``explore`` runs seeds in its own process
(``explore/engine.py`` ``explore_seeds``): tuned as for the suite's scenarios
(``features/collector_tuning.py``), and as it was once the seeds are done."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.explore import engine
from pi_continuity_harness.explore.executor import open_pool
from pi_continuity_harness.features import collector_tuning


def test_seeds_run_in_process_with_the_collector_tuned_and_it_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int]] = []

    def spy(seed: int, settings: Any) -> int:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return seed

    monkeypatch.setattr(engine, "explore_seed", spy)
    before = gc.get_threshold()
    settings = engine.ExploreSettings(
        steps=1, extension="reference", system="pi-session-continuity", out_dir=None, work_root=str(tmp_path)
    )
    with open_pool(jobs=1) as pool:
        assert list(engine.explore_seeds([0, 1], settings, pool=pool)) == [0, 1]  # type: ignore[comparison-overlap]
    assert len(seen) == 2
    assert all(threshold == max(collector_tuning.YOUNGEST_THRESHOLD, before[0]) for threshold, _ in seen)
    assert all(frozen > 0 for _, frozen in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
