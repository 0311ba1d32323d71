"""The conformance suite itself, run against the reference and a broken implementation.

The first test is the main job of the README (every scenario passes on the simulator); the
second proves the suite can fail: an implementation that returns a regenerated summary
instead of the exact disk bytes fails exactly the assertions that depend on that rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite

SMOKE_ASSERTIONS = (
    "settings-derive-native-tokens",
    "native-threshold-enters-hook",
    "manual-checkpoint-writes-artifact",
    "precompact-failure-cancels",
    "compaction-summary-is-disk-brief",
    "session-compact-archives",
    "threshold-continuation-uses-disk",
    "overflow-no-duplicate-continuation",
    "manual-compact-no-auto-continuation",
    "reload-stale-is-inert",
    "model-change-recalculates-display-only",
    "cross-session-or-hash-mismatch-rejected",
    "persistent-brief-does-not-imply-new-compaction",
)


@pytest.mark.slow
def test_every_scenario_passes_against_the_reference_on_the_simulator(tmp_path: Path) -> None:
    run = run_suite(target="sim", extension="reference", workdir=tmp_path / "runs")
    own = [r for r in run.results if r.system == "pi-session-continuity"]
    problems = [f"{r.assertion} :: {r.name}: {r.status} {r.detail}" for r in own if r.status != "passed"]
    assert not problems, "\n".join(problems)
    # The other system's features are not run against this implementation at all.
    assert own == run.results
    assertions = {r.assertion for r in own}
    assert set(SMOKE_ASSERTIONS) <= assertions
    # Each named smoke assertion has a scenario named exactly as the spec names it.
    assert set(SMOKE_ASSERTIONS) <= {r.name.split(" [")[0] for r in run.results}


@pytest.mark.slow
def test_a_regenerated_summary_fails_exactly_the_assertions_that_depend_on_disk_bytes(tmp_path: Path) -> None:
    run = run_suite(
        target="sim",
        # A proxy around the hook (it patches no module), so it is safe in this process.
        extension="pi_continuity_harness.mutants.catalogue:summary_regenerated",
        workdir=tmp_path / "runs",
    )
    failed = {r.assertion for r in run.results if r.status in ("failed", "error")}
    assert failed == {
        "compaction-summary-is-disk-brief",  # the summary is not the disk Brief: hash and archive differ
        "session-compact-archives",  # the commit check refuses to archive a mismatch
        "threshold-continuation-uses-disk",  # no continuation from an unverified commit
        "overflow-no-duplicate-continuation",  # the overflow Brief is not archived either
        "persistent-brief-does-not-imply-new-compaction",  # no commit announcement
        "reload-stale-is-inert",  # the handoff a refused reload left intact sends no continuation
        "single-flight",  # the unarchived Brief stays pending beside the next checkpoint
        "archive-retention",  # nothing is ever archived
        "artifacts-and-frontmatter",  # no archived <timestamp>-<eventId>.md
        "notifications-and-commands",  # no "native compaction committed" notification
        "status-reports-every-field",  # status names no archived Brief
        "commit-boundary",  # a committed summary that is not the disk Brief is never reconciled
        # Real-world failure features whose proof needs the verified commit (archive or continuation):
        "claude-code-13572-hook-fires-on-manual-compact",
        "codex-46337-hook-output-becomes-the-summary",
        "earendil-pi-6879-mid-run-threshold-check",
        "lossless-claude-lcm-228-a-throwing-hook-does-not-discard-the-brief",
        "pi-continue-26-user-input-races-the-continuation",
        "pi-continue-33-work-resumes-after-compaction-without-user-input",
        "pi-continue-34-stale-entry-for-identical-summary",
        "pi-continue-pr14-every-native-compaction-is-adopted",
        "psc-0.1.3-threshold-fires-again-after-compaction",
    }
