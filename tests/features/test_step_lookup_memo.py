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
from pi_continuity_harness.features.suite import SuiteRun, run_suite


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


def _counting_step_function(calls: list[tuple[str, str]]) -> Any:
    """pytest-bdd's own ``get_step_function``, recording each step it is asked for."""
    own = step_lookup._GET_STEP_FUNCTION
    assert own is not None

    def get_step_function(*, request: Any, step: Any) -> Any:
        calls.append((str(step.type), str(step.name)))
        return own(request=request, step=step)

    return get_step_function


def test_a_step_is_found_without_pytests_fixture_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step that one step definition matches gets that definition's step context without
    pytest-bdd's ``get_step_function`` (pytest's fixture setup of a temporary fixture, issue 16),
    and the scenarios pass; pytest-bdd is as it was after the run."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(step_lookup, "_GET_STEP_FUNCTION", _counting_step_function(calls))
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    assert sum(len(r.steps) for r in run.results) > 0
    assert calls == []
    assert bdd_scenario_module().get_step_function is step_lookup._GET_AS_IMPORTED


def bdd_scenario_module() -> Any:
    """``pytest_bdd.scenario`` the module (the package exports a function of that name)."""
    return step_lookup.bdd_scenario


_RECORDER = """
SET_UP = []


def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname.startswith("pytestbdd_stepdef_"):
        SET_UP.append((request.node.nodeid, fixturedef.argname))
"""


def _every_step_through_pytest_bdd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra_args: list[str]
) -> tuple[SuiteRun, list[tuple[str, str]]]:
    """Run the archive scenarios with ``extra_args`` and assert that every step, repeated texts
    included, went through pytest-bdd's own ``get_step_function``; the run and its steps."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(step_lookup, "_GET_STEP_FUNCTION", _counting_step_function(calls))
    run = run_suite(
        target="sim",
        extension="reference",
        keyword="archive",
        workdir=tmp_path / "r",
        extra_args=extra_args,
    )
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    ran = [(str(s["type"]), str(s["name"])) for r in run.results for s in r.steps]
    assert sorted(calls) == sorted(ran)  # every step, repeated texts included
    return run, ran


def test_a_plugin_on_the_fixture_setup_sees_every_steps_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With another plug-in on ``pytest_fixture_setup`` (an Allure-like listener, a recorder),
    every step's fixture is set up as pytest-bdd sets it up: nothing it sees is skipped."""
    (tmp_path / "fixture_recorder_plugin.py").write_text(_RECORDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    run, ran = _every_step_through_pytest_bdd(tmp_path, monkeypatch, ["-p", "fixture_recorder_plugin"])
    import fixture_recorder_plugin  # type: ignore[import-not-found]  # noqa: PLC0415

    # The plug-in saw the step fixtures set up in every test, not once per step text of the run.
    assert {nodeid for nodeid, _name in fixture_recorder_plugin.SET_UP} == {r.nodeid for r in run.results}
    assert len(fixture_recorder_plugin.SET_UP) > len(set(ran))


def test_pytest_bdds_debug_log_of_a_steps_fixtures_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``--log-level=DEBUG`` pytest-bdd logs the fixtures it injects for every step (into
    the test's captured log): every step then goes through pytest-bdd's own lookup."""
    _every_step_through_pytest_bdd(tmp_path, monkeypatch, ["--log-level=DEBUG"])


def test_a_wrong_step_context_fails_the_scenario_when_verified(
    tmp_path: Path, verifying: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of every answer against pytest-bdd's own fails a scenario given the step
    context of another step definition."""
    registry = step_lookup._CONTEXTS
    assert registry is not None

    class _Wrong:
        def get(self, func: Any) -> Any:
            return registry.get(func)

        def __getitem__(self, func: Any) -> Any:
            return next(context for key, context in registry.items() if key is not func)

    monkeypatch.setattr(step_lookup, "_CONTEXTS", _Wrong())
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert run.results
    assert all(r.status == "failed" and "step function memo" in r.detail for r in run.results)


def test_required_arguments_are_read_off_the_kept_signature() -> None:
    """The required arguments the memo gives are pytest-bdd's own for every kind of parameter,
    computed from the one kept signature (``inspect.signature`` asked once per function)."""

    def step(
        world: Any, /, text: str, count: int = 1, *rest: Any, key: str, other: int = 2, **more: Any
    ) -> None:
        pass

    def plain(world: Any, request: Any) -> None:
        pass

    assert step_lookup._REQUIRED_FROM_SIGNATURE
    calls: list[Any] = []
    real = inspect.signature

    step_lookup.install()
    try:
        bdd = step_lookup.bdd_scenario
        original = step_lookup._SIGNATURE
        step_lookup._SIGNATURE = lambda func: (calls.append(func), real(func))[1]
        try:
            for func in (step, plain):
                assert bdd.get_required_args(func) == bdd_utils.get_required_args(func)
                assert bdd.signature(func) == real(func)
        finally:
            step_lookup._SIGNATURE = original
    finally:
        step_lookup.uninstall()
    assert calls == [step, plain]


def test_the_lookup_by_text_and_type_gives_the_walk_of_every_definition() -> None:
    """``_lookup`` given a listing tries only the plain-text definitions whose text is the
    step's and the other definitions of the step's type (or of none); its answer, order
    included, is the walk of every definition's, with a ``string`` subclass (which may match
    another text), a type that is no ``str``, and texts several definitions share."""
    from pytest_bdd import parsers  # noqa: PLC0415

    class Loose(parsers.string):
        def is_matching(self, name: str) -> bool:
            return name.lower() == self.name.lower()

    class Step:
        def __init__(self, kind: Any, name: Any) -> None:
            self.type, self.name = kind, name

    class Context:
        def __init__(self, kind: Any, parser: Any) -> None:
            self.type, self.parser = kind, parser

    definitions = [
        ("given", parsers.string("a turn")),
        ("when", parsers.string("a turn")),
        (None, parsers.string("a turn")),
        ("given", parsers.re(r"a (?P<what>\w+)")),
        (None, parsers.re(r"a t\w+")),
        ("then", Loose("A TURN")),
        ("given", Loose("A TURN")),
        (Step, parsers.string("a turn")),  # a type that is no str: tried for every step
        ("given", parsers.string("another turn")),
        ("when", parsers.parse("a {what}")),
    ]
    visible = [(f"def-{index}", Context(kind, parser)) for index, (kind, parser) in enumerate(definitions)]
    listing = 10_000 + len(step_lookup._LISTINGS)
    try:
        steps = [
            Step(kind, name)
            for kind in ("given", "when", "then", "and")
            for name in ("a turn", "another turn", "A TURN", "b")
        ]
        for step in steps:
            walked = step_lookup._lookup(step, visible)
            assert step_lookup._lookup(step, visible, listing) == walked, (step.type, step.name)
        assert step_lookup._lookup(Step("given", "a turn"), visible, listing) == (
            "def-0",
            "def-2",
            "def-3",
            "def-4",
            "def-6",
        )

        # A step whose text or type is no ``str`` (a subclass) is walked against every definition.
        class Text(str):
            __slots__ = ()

        for odd in (Step("given", Text("a turn")), Step(Text("given"), "a turn")):
            assert step_lookup._lookup(odd, visible, listing) == step_lookup._lookup(odd, visible)
    finally:
        step_lookup._CANDIDATES.pop(listing, None)
