"""Several implementations judged in one pytest session (``features.suite.run_batch``), as the
mutant-kill test of ``test_blitz_exploration_and_mutants.py`` judges the blitz mutants: each
implementation's verdict is the one a session of its own gives, whatever ran before it.

A blitz mutant is a subclass of the reference that changes a module only inside a ``patched``
block, which puts it back; the batch interleaves the runs (every run's test of a scenario, then
the next scenario), so a change that stayed would reach the run after it. The last test shows
that such a leak is seen: an implementation that changes the reference for good fails the
reference's run after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.features.suite import (
    KILLED_EARLIER,
    SuiteRun,
    SuiteUsageError,
    run_batch,
    run_suite,
)
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.mutants.blitz.base import Mutant
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot
from pi_continuity_harness.reference.blitz import commands

#: Patches ``commands.save_settings`` while ``/sh`` runs (``patched``): a module change that must
#: not outlive the mutant's own command.
MUTANT = "blitz_edit_not_saved"
TAGS = ["rule-H88a"]
ARGS = ["--observation-records", "failed"]


class LeakyEditNotSaved(Mutant):
    """``blitz_edit_not_saved`` without the restore: once loaded, no Pi of the process saves a
    confirmed edit."""

    def register(self) -> None:
        commands.save_settings = lambda path, settings: None
        super().register()


LEAKY = f"{__name__}:LeakyEditNotSaved.extension"


@pytest.fixture
def save_settings_restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Whatever the leaky mutant leaves in ``commands`` is put back after the test."""
    monkeypatch.setattr(commands, "save_settings", commands.save_settings)
    yield


def _verdicts(run: SuiteRun | SuiteUsageError) -> list[tuple[str, str, str]]:
    assert isinstance(run, SuiteRun), run
    return sorted((r.feature_file, r.name, r.status) for r in run.results)


def _alone(tmp_path: Path, extension: str, label: str) -> list[tuple[str, str, str]]:
    run = run_suite(
        target="sim", extension=extension, tags=" or ".join(TAGS), workdir=tmp_path / label, extra_args=ARGS
    )
    return _verdicts(run)


@pytest.mark.parametrize("order", ["mutant first", "reference first"])
def test_each_run_of_a_batch_gets_the_verdict_of_a_session_of_its_own(tmp_path: Path, order: str) -> None:
    runs: dict[str, tuple[str, Any]] = {
        "mutant": (BLITZ_MUTANTS[MUTANT].spec, TAGS),
        "reference": ("blitz", TAGS),
    }
    if order == "reference first":
        runs = dict(reversed(runs.items()))
    batch = run_batch(runs, workdir=tmp_path / "batch", extra_args=ARGS)
    assert list(batch) == list(runs)
    mutant, reference = _verdicts(batch["mutant"]), _verdicts(batch["reference"])
    assert reference and {status for _f, _n, status in reference} == {"passed"}, reference
    assert "failed" in {status for _f, _n, status in mutant}, mutant
    # The same scenarios, named as a run of its own names them, with the same statuses.
    assert mutant == _alone(tmp_path, BLITZ_MUTANTS[MUTANT].spec, "m")
    assert reference == _alone(tmp_path, "blitz", "r")


def test_a_change_that_outlives_its_run_fails_the_next_run(
    tmp_path: Path, save_settings_restored: None
) -> None:
    """The check above can fail: the reference run after a mutant that leaves its change fails."""
    batch = run_batch(
        {"leaky": (LEAKY, TAGS), "reference": ("blitz", TAGS)}, workdir=tmp_path, extra_args=ARGS
    )
    assert "failed" in {status for _f, _n, status in _verdicts(batch["reference"])}


def test_an_implementation_that_does_not_load_is_its_own_error(tmp_path: Path) -> None:
    batch = run_batch(
        {"missing": ("no_such_module_here:extension", TAGS), "reference": ("blitz", TAGS)},
        workdir=tmp_path,
        extra_args=ARGS,
    )
    assert isinstance(batch["missing"], SuiteUsageError)
    assert "no_such_module_here" in str(batch["missing"])
    assert {status for _f, _n, status in _verdicts(batch["reference"])} == {"passed"}


def test_a_batch_refuses_implementations_of_two_systems(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="one system"):
        run_batch({"blitz": ("blitz", TAGS), "continuity": ("reference", TAGS)}, workdir=tmp_path)


def test_a_mutant_that_leaves_the_reference_changed_is_named_after_its_batch(
    tmp_path: Path, save_settings_restored: None
) -> None:
    """The kill test's guard (``pristine.changed_since`` after each batch) names a change that
    outlives its run, and finds none after a mutant that restores its change (``patched``)."""
    before = reference_snapshot()
    run_batch({"mutant": (BLITZ_MUTANTS[MUTANT].spec, TAGS)}, workdir=tmp_path / "restores", extra_args=ARGS)
    assert changed_since(before) == []
    run_batch({"leaky": (LEAKY, TAGS)}, workdir=tmp_path / "leaks", extra_args=ARGS)
    assert changed_since(before) == ["pi_continuity_harness.reference.blitz.commands.save_settings"]


def test_with_first_failure_a_run_ends_at_its_first_failed_scenario_and_the_others_run_whole(
    tmp_path: Path,
) -> None:
    """``first_failure`` (the kill tests): the implementation that does nothing fails the first
    scenario of rule H50 and skips the other four, each reported skipped with the reason; the
    reference's run in the same batch runs all five and passes them."""
    tags = ["rule-H50"]
    batch = run_batch(
        {"null": ("null-blitz", tags), "reference": ("blitz", tags)},
        workdir=tmp_path,
        extra_args=ARGS,
        first_failure=True,
    )
    null, reference = batch["null"], batch["reference"]
    assert isinstance(null, SuiteRun) and isinstance(reference, SuiteRun)
    assert [r.status for r in reference.results] == ["passed"] * 5
    statuses = [r.status for r in null.results]
    assert statuses[0] in ("failed", "error") and statuses[1:] == ["skipped"] * 4, statuses
    assert all(KILLED_EARLIER in r.detail for r in null.results[1:]), [r.detail for r in null.results[1:]]
    assert null.exit_code == 1
    # Without it every scenario runs, and each fails.
    whole = run_batch({"null": ("null-blitz", tags)}, workdir=tmp_path / "whole", extra_args=ARGS)["null"]
    assert isinstance(whole, SuiteRun)
    assert {r.status for r in whole.results} <= {"failed", "error"} and len(whole.results) == 5
