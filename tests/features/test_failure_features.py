"""The real-world failure catalogue: one feature per reported failure, each citing its source.

Every feature under ``pi_session_continuity/failures`` is tagged ``@failures``, is named after
its source, says where the failure was reported and what the scenario proves, and passes
against the reference on the simulator. Features that need a simulator-only capability say so
with a ``@needs-`` tag; all others must be able to run on real Pi.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_bdd.feature import get_features

from pi_continuity_harness.features import SUITE_DIR
from pi_continuity_harness.features.suite import run_suite

FAILURES = SUITE_DIR / "pi_session_continuity" / "failures"
EXPECTED = {
    "pi-continue-11-competing-compactions",
    "pi-continue-pr14-every-native-compaction-is-adopted",
    "pi-continue-26-user-input-races-the-continuation",
    "pi-continue-33-work-resumes-after-compaction-without-user-input",
    "pi-continue-34-stale-entry-for-identical-summary",
    "nicobailon-pi-subagents-2150-duplicate-continuation-after-overflow",
    "earendil-pi-7020-length-overflow-retries-once",
    "earendil-pi-6879-mid-run-threshold-check",
    "earendil-pi-7086-manual-compact-during-overflow-recovery",
    "earendil-pi-8371-synthesis-input-is-bounded",
    "opencode-27924-compaction-loop-is-bounded",
    "claude-code-13572-hook-fires-on-manual-compact",
    "claude-code-29751-a-stale-brief-is-never-the-summary",
    "codex-46337-hook-output-becomes-the-summary",
    "lossless-claude-lcm-228-a-throwing-hook-does-not-discard-the-brief",
    "pinet-846-no-compaction-from-turn-end",
    "psc-0.1.4-synthesis-is-not-aborted-by-the-extension",
    "psc-0.1.3-threshold-fires-again-after-compaction",
    "psc-scope-0016-empty-synthesis-cancels",
}
#: Features that need a simulator-only capability, and why.
SIMULATOR_ONLY = {"earendil-pi-7086-manual-compact-during-overflow-recovery": "needs-held-model-calls"}
#: Features that need a host capability some real Pi releases lack (targets/realpi/versions.py).
HOST_CAPABILITY = {
    # Pi 1.0.3 is not busy while a run starts: the continuation overtakes the prompt.
    "pi-continue-26-user-input-races-the-continuation": "needs-busy-while-run-starts",
}


def _features() -> list[object]:
    return list(get_features([str(p) for p in sorted(FAILURES.glob("*.feature"))]))


def test_one_feature_per_failure_named_after_its_source() -> None:
    names = {Path(str(f.filename)).stem for f in _features()}  # type: ignore[attr-defined]
    assert names == EXPECTED
    for feature in _features():
        stem = Path(str(feature.filename)).stem  # type: ignore[attr-defined]
        assert feature.name == stem, f"{stem}: the feature is named {feature.name!r}"  # type: ignore[attr-defined]
        assert "failures" in feature.tags, f"{stem} is not tagged @failures"  # type: ignore[attr-defined]
        description = feature.description  # type: ignore[attr-defined]
        assert description.startswith("Source:"), f"{stem}: the description does not cite its source"
        assert "Proves:" in description, f"{stem}: the description does not say what it proves"


def test_only_simulator_capabilities_are_tagged_and_only_where_needed() -> None:
    for feature in _features():
        stem = Path(str(feature.filename)).stem  # type: ignore[attr-defined]
        tags = set(feature.tags)  # type: ignore[attr-defined]
        for scenario in feature.scenarios.values():  # type: ignore[attr-defined]
            tags |= set(scenario.tags)
        needs = {t for t in tags if t.startswith("needs-")}
        expected = {table[stem] for table in (SIMULATOR_ONLY, HOST_CAPABILITY) if stem in table}
        assert needs == expected, f"{stem}: needs {needs or 'nothing'}, expected {expected or 'nothing'}"


@pytest.mark.slow
def test_every_failure_feature_passes_against_the_reference(tmp_path: Path) -> None:
    run = run_suite(target="sim", extension="reference", tags="failures", workdir=tmp_path / "runs")
    assert {r.assertion for r in run.results} == EXPECTED
    problems = [
        f"{r.assertion} :: {r.name}: {r.status} {r.detail}" for r in run.results if r.status != "passed"
    ]
    assert not problems, "\n".join(problems)
