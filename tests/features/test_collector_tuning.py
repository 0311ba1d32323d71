"""The garbage collector during a suite run (``features/collector_tuning.py``): tuned for the
scenarios, and as it was once the session ends."""

from __future__ import annotations

import gc
import importlib
from pathlib import Path

import pytest

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


def test_collecting_less_often_and_restore() -> None:
    before = gc.get_threshold()
    restore = collector_tuning.collect_less_often()
    try:
        assert gc.get_threshold() == (max(collector_tuning.YOUNGEST_THRESHOLD, before[0]), *before[1:])
        assert gc.get_freeze_count() == 0
    finally:
        restore()
    assert gc.get_threshold() == before


_THRESHOLDS_SEEN = """
import gc

SEEN = []


def pytest_collection_modifyitems(items):
    SEEN.append(gc.get_threshold())
"""


def test_the_features_are_collected_with_the_youngest_generation_collected_less_often(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the session's configuration on, before anything is frozen: collecting the features
    makes the objects the session keeps (``collect_less_often``)."""
    (tmp_path / "thresholds_seen.py").write_text(_THRESHOLDS_SEEN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = importlib.import_module("thresholds_seen").SEEN
    before = gc.get_threshold()
    run = run_suite(
        target="sim", keyword="archive", workdir=tmp_path / "a", extra_args=["-p", "thresholds_seen"]
    )
    assert run.results and all(r.status == "passed" for r in run.results)
    assert seen == [(max(collector_tuning.YOUNGEST_THRESHOLD, before[0]), *before[1:])]
    assert gc.get_threshold() == before
