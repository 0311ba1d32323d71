"""Every mutant of the Pi Session Continuity reference is killed by the scenarios of its rules.

The blitz mutants are judged this way in every run of the test command
(``tests/blitz/test_blitz_exploration_and_mutants.py``); the PSC mutants were judged only by
``pi-continuity-harness mutants`` (CI runs a sample of 29). ``reread_trusts_memory`` (P3d)
survived the suite unnoticed until an audit ran them all (4 December 2026). Here each of the 277
runs, as the kill matrix runs it (``mutants.matrix.suite_tags``: the scenarios of its rules), in
batches of 48 to a pytest session (``features.suite.run_batch``).

A PSC mutant changes reference modules at every load and :func:`~pi_continuity_harness.mutants.
pristine.from_pristine` puts them back before the next load, so mutants sharing a session are
judged apart. After each batch the reference is reset to what it was and checked
(``pristine.changed_since``): the tests after these see the reference as shipped.
"""

from __future__ import annotations

import pytest

from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.matrix import SAMPLE_RULES

from .batched_kills import BatchedKills, assert_killed

NAMES = sorted(name for name, mutant in MUTANTS.items() if mutant.reference == "reference")
KILL_TEST = "test_the_scenarios_of_its_rules_kill_the_psc_mutant"


def _rule_tags(name: str) -> list[str]:
    mutant = MUTANTS[name]
    rules = dict.fromkeys([*mutant.rules, *SAMPLE_RULES.get(mutant.reference, ())])
    return [f"rule-{rule}" for rule in rules]


@pytest.fixture(scope="module")
def kills(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> BatchedKills:
    return BatchedKills(
        request.session,
        tmp_path_factory.mktemp("psc-kills"),
        KILL_TEST,
        lambda name: (MUTANTS[name].spec, _rule_tags(name)),
        reset=True,
    )


def test_every_psc_mutant_is_judged_here() -> None:
    """The blitz kill test judges the blitz mutants; these are all the others, each with rules."""
    assert NAMES and len(NAMES) + len(BLITZ_MUTANTS) == len(MUTANTS)
    assert all(MUTANTS[name].rules for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_scenarios_of_its_rules_kill_the_psc_mutant(kills: BatchedKills, name: str) -> None:
    assert_killed(kills, name, tuple(MUTANTS[name].rules))
