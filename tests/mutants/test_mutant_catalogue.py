"""The mutant catalogue: enough distinct rules, every mutant loadable, and kills that happen.

Mutants patch reference modules when their factory runs, so every run here is a subprocess
(:func:`~pi_continuity_harness.mutants.matrix.run_mutant`). The full matrix is a CLI job
(``pi-continuity-harness mutants``); this test runs the canary and a small sample.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.mutants.catalogue import CANARY, MUTANTS
from pi_continuity_harness.mutants.matrix import _explore, controls_for, run_mutant
from pi_continuity_harness.scenario.implementations import implementation_system, resolve_implementation


def test_the_catalogue_breaks_at_least_25_distinct_rules_each_citing_the_spec() -> None:
    continuity = [m for m in MUTANTS.values() if m.reference == "reference"]
    assert len(MUTANTS) >= 25 and len({m.rule for m in continuity}) == len(continuity)
    for mutant in MUTANTS.values():
        cites = re.search(r"§\d+", mutant.rule) or (mutant.rules and mutant.rule.startswith(mutant.rules[0]))
        assert cites, f"{mutant.name}: the rule cites neither the spec nor the catalogue"
        assert mutant.how, mutant.name


def test_every_mutant_resolves_by_its_spec_and_declares_its_system() -> None:
    for name, mutant in MUTANTS.items():
        spec, factory = resolve_implementation(mutant.spec)
        assert spec == mutant.spec
        assert factory == mutant.factory
        expected = "pi-blitz-handoff" if mutant.reference == "blitz" else "pi-session-continuity"
        assert implementation_system(mutant.spec).name == expected, name
    continuity = [m for m in MUTANTS.values() if m.reference == "reference"]
    homes = ("pi_continuity_harness.mutants.catalogue", "pi_continuity_harness.mutants.continuity_rules")
    assert all(m.spec in {f"{home}:{m.name}" for home in homes} for m in continuity)
    assert [m.name for m in MUTANTS.values() if m.canary] == [CANARY]


def test_the_matrix_runs_every_reference_the_mutants_change_as_a_control() -> None:
    blitz = [name for name in MUTANTS if name.startswith("blitz_")]
    assert blitz and controls_for(blitz) == ["blitz"]
    assert controls_for([CANARY, *blitz, "no_single_flight"]) == ["reference", "blitz"]
    for control in controls_for(list(MUTANTS)):
        assert resolve_implementation(control)[0] == control


def test_mutants_list_prints_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["mutants", "list"]) == 0
    out = capsys.readouterr().out
    assert CANARY in out and "archive_without_hash_check" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "invariant"),
    [
        # it cancels every compaction without a word: P90e's failure message is owed first
        (CANARY, "one_failure_notice_per_check_point"),
        ("summary_regenerated", "commit_bytes_on_disk"),  # a proxy around the hook
        # the Brief is written only in session_compact: on disk too late (P1)
        ("brief_written_after_commit", "commit_bytes_on_disk"),
        # a patch of the reference's commit check (needs a trace fault)
        ("archive_without_hash_check", "archive_requires_full_match"),
        # killed only by a real-world failure feature
        ("stale_pending_used_as_summary", "stale_pending_never_injected"),
    ],
)
def test_a_mutant_is_killed_by_the_features_and_by_exploration(name: str, invariant: str) -> None:
    outcome = run_mutant(name, explore_seeds=12, explore_steps=40, timeout=300)
    assert outcome.suite_error is None and outcome.exploration_error is None
    assert outcome.killed, f"{name} survived every scenario"
    assert outcome.exploration is not None, f"{name} survived {12} explored seeds"
    assert outcome.exploration["invariant"] == invariant, outcome.exploration


def test_a_mutant_that_does_not_load_is_an_error_not_a_kill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "unloadable_mutant.py").write_text(
        "def extension(pi):\n    raise AttributeError('the reference has no such function')\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    )
    killed, error = _explore("unloadable_mutant:extension", tmp_path, seeds=2, steps=5, timeout=120)
    assert killed is None
    # The explorer's setup check refuses an implementation that does not load (exit 2) before
    # any seed runs; the error names the cause, and nothing counts as a kill.
    assert error is not None and "exit 2" in error and "no such function" in error


@pytest.mark.slow
def test_the_mutants_command_writes_the_kill_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "matrix.json"
    code = cli(
        [
            "mutants",
            "--only",
            CANARY,
            "--explore-seeds",
            "3",
            "--no-control",
            "--json",
            str(report),
            "--jobs",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Kill matrix" in out and "explore" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    [row] = data["mutants"]
    assert row["name"] == CANARY and row["killed"] and row["killed_by_exploration"]
    assert row["rule"] == MUTANTS[CANARY].rule and row["killed_by"]


def test_every_unreachable_reason_names_a_continuity_mutant_judged_by_the_features() -> None:
    """A reason in ``continuity_rules.UNREACHABLE`` takes a mutant out of exploration: it must name
    a registered mutant (a typo would silently explore it, or silently not)."""
    from pi_continuity_harness.mutants.continuity_rules import UNREACHABLE  # noqa: PLC0415

    for name, reason in UNREACHABLE.items():
        assert name in MUTANTS and not MUTANTS[name].explorable, name
        assert len(reason) > 40, name


def test_a_sample_is_every_kth_mutant_by_name_plus_the_canary(capsys: pytest.CaptureFixture[str]) -> None:
    """``mutants --sample K`` (CI's time-boxed gate): a fixed subset, the same on every run."""
    from pi_continuity_harness.commands import mutants as command  # noqa: PLC0415

    seen: list[list[str]] = []

    def fake_matrix(names: list[str], **_: object) -> list[object]:
        seen.append(list(names))
        raise SystemExit(0)

    mp = pytest.MonkeyPatch()
    mp.setattr(command, "run_matrix", fake_matrix)
    try:
        with pytest.raises(SystemExit):
            cli(["mutants", "--sample", "16", "--no-control"])
    finally:
        mp.undo()
    expected = set(sorted(MUTANTS)[::16]) | {CANARY}
    assert seen and set(seen[0]) == expected
    assert cli(["mutants", "--sample", "0"]) == 2
    assert "--sample must be at least 1" in capsys.readouterr().err
