"""Every load of a mutant starts from the reference as shipped (mutants/pristine.py).

A factory runs at every Pi start, so before this a mutant's second load in one process wrapped
its first load's change, and what a mutant did depended on how many scenarios or seeds ran
before it in that process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pi_continuity_harness.mutants.catalogue import MUTANTS
from pi_continuity_harness.mutants.pristine import from_pristine, reset_reference
from pi_continuity_harness.reference.psc import constants, lifecycle

RULE = constants.EVENT_FRESHNESS_RULE
BODY = "## Recovery Instructions\n\nRead the Brief.\n"


@pytest.fixture
def reference_restored() -> Iterator[None]:
    """Whatever the test changes in the reference is put back for the tests after it."""
    reset_reference()
    yield
    reset_reference()


def _rule_twice() -> None:
    """What ``freshness_rule_twice`` does to ``lifecycle`` when it loads (without loading Pi)."""
    original = lifecycle.insert_event_freshness_rule
    lifecycle.insert_event_freshness_rule = lambda body: original(body).replace(RULE, RULE + "\n\n" + RULE, 1)


def _rule_missing() -> None:
    lifecycle.insert_event_freshness_rule = lambda body: body


def test_a_mutant_loaded_again_changes_the_reference_once(reference_restored: None) -> None:
    load = from_pristine(_rule_twice)
    for _start in range(3):  # three Pi starts in one process: three scenarios, or a restart
        load()
    assert lifecycle.insert_event_freshness_rule(BODY).count(RULE) == 2


def test_without_the_reset_the_change_would_stack(reference_restored: None) -> None:
    """The test above can fail: the same three loads without the reset insert the rule four times."""
    for _start in range(3):
        _rule_twice()
    assert lifecycle.insert_event_freshness_rule(BODY).count(RULE) == 4


def test_the_next_mutant_finds_none_of_the_previous_ones_change(reference_restored: None) -> None:
    from_pristine(_rule_missing)()
    from_pristine(_rule_twice)()
    assert lifecycle.insert_event_freshness_rule(BODY).count(RULE) == 2


def test_the_reset_restores_the_reference_as_shipped(reference_restored: None) -> None:
    shipped = lifecycle.insert_event_freshness_rule
    from_pristine(_rule_missing)()
    reset_reference()
    assert lifecycle.insert_event_freshness_rule is shipped
    assert shipped(BODY).count(RULE) == 1


def test_every_pi_session_continuity_mutant_loads_from_the_pristine_reference() -> None:
    for name, mutant in MUTANTS.items():
        if mutant.reference == "reference":
            assert getattr(mutant.factory, "__wrapped__", None) is not None, name
