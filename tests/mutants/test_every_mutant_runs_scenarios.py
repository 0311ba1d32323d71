"""The kill matrix runs each mutant against the scenarios of its rules (``suite_tags``): a mutant
whose rules no scenario is tagged with would run against nothing, and ``mutants`` would report a
suite error for it instead of a verdict (``wrong_message_prefix`` did, for P87a, until its rule
got a scenario)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.matrix import SAMPLE_RULES


def test_every_mutant_selects_at_least_one_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "rules.json"
    cli(["rules", "--json", str(report)])
    capsys.readouterr()
    data = json.loads(report.read_text(encoding="utf-8"))
    with_scenarios = {
        rule["id"] for system in data["systems"] for rule in system["rules"] if rule["scenarios"]
    }
    assert with_scenarios, "the rules report lists no scenario at all"
    idle = sorted(
        name
        for name, mutant in MUTANTS.items()
        if mutant.rules and not with_scenarios & {*mutant.rules, *SAMPLE_RULES.get(mutant.reference, ())}
    )
    assert not idle, f"mutants whose rules no scenario is tagged with (the kill matrix runs nothing): {idle}"
