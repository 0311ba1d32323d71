"""The suite's memo of pytest-bdd's step lookup (issue 16) gives pytest-bdd's own answer.

pytest-bdd looks up every step it runs among every fixture pytest knows; the suite's plug-in
keeps the answer per step text and the step definitions the test sees
(:mod:`pi_continuity_harness.features.step_lookup`).
Here the memo checks every answer it gives against a fresh lookup, over scenarios of both
systems, and the check itself is shown to fail when the memo is wrong.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd import utils as bdd_utils

from pi_continuity_harness.features import step_lookup
from pi_continuity_harness.features.suite import run_suite


@pytest.fixture
def verifying() -> Iterator[None]:
    step_lookup.verify = True
    try:
        yield
    finally:
        step_lookup.verify = False


@pytest.mark.slow
def test_every_memoised_step_lookup_equals_pytest_bdds_own(tmp_path: Path, verifying: None) -> None:
    for extension, keyword in (("reference", "compaction or archive"), ("blitz", "handoff")):
        run = run_suite(target="sim", extension=extension, keyword=keyword, workdir=tmp_path / extension)
        assert run.results, keyword
        problems = [f"{r.name}: {r.detail}" for r in run.results if r.status != "passed"]
        assert not problems, "\n".join(problems)
    # The memo lives as long as the session: pytest-bdd is as it was after the run.
    assert not step_lookup.installed()
    assert step_lookup.bdd_scenario.signature is inspect.signature
    assert step_lookup.bdd_scenario.get_required_args is bdd_utils.get_required_args


def test_step_signatures_are_kept_per_function_while_installed() -> None:
    """pytest-bdd's ``signature`` and ``get_required_args`` give what they gave, once computed
    per function; a caller that changes the list it got does not change the next answer."""

    def step(world: Any, text: str, count: int = 1) -> None:
        pass

    step_lookup.install()
    try:
        signature, required = step_lookup.bdd_scenario.signature, step_lookup.bdd_scenario.get_required_args
        assert signature is not inspect.signature
        assert signature(step) == inspect.signature(step) and signature(step) is signature(step)
        first = required(step)
        assert first == bdd_utils.get_required_args(step) == ["world", "text"]
        first.append("changed")
        assert required(step) == ["world", "text"]
    finally:
        step_lookup.uninstall()
    assert step_lookup.bdd_scenario.signature is inspect.signature


def test_a_wrong_memoised_step_lookup_fails_the_scenario(
    tmp_path: Path, verifying: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = step_lookup._ORIGINAL
    assert original is not None
    seen: dict[tuple[str, str, str], int] = {}

    def find_fixturedefs_for_step(*, step: Any, fixturemanager: Any, node: Any) -> Any:
        found = tuple(original(step=step, fixturemanager=fixturemanager, node=node))
        key = (step.type, step.name, node.nodeid)
        seen[key] = seen.get(key, 0) + 1
        # A step is looked up for a test before the first scenario runs (``collect.
        # undefined_steps``, once per file and line), then when the test runs it: the second
        # answer for the same test and step is wrong, nothing matches it.
        return () if seen[key] == 2 else found

    monkeypatch.setattr(step_lookup, "_ORIGINAL", find_fixturedefs_for_step)
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert len(run.results) > 1
    # The first scenario to run a step gets a memoised answer pytest-bdd's own lookup (planted)
    # contradicts, and the check fails it.
    assert any("step lookup memo" in r.detail for r in run.results if r.status == "failed")
