"""Asked once per function: pytest's ``getfuncargnames`` kept per code object while the suite's
plug-in is active (:mod:`pi_continuity_harness.features.fixture_argnames`), and the step
functions' signatures the plug-in's step check asks for (``collect.misused_steps``) kept per
function and shared with pytest-bdd's run of the steps (``step_lookup.signature_of``), issue 16.

Each memo gives pytest's (or ``inspect``'s) own answer: checked against a fresh one over a run of
scenarios, and for the functions whose answer depends on more than their code."""

from __future__ import annotations

import functools
import inspect
import types
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest import compat as pytest_compat
from _pytest import fixtures as pytest_fixtures

from pi_continuity_harness.features import collect, fixture_argnames, step_lookup
from pi_continuity_harness.features.suite import run_suite


@pytest.fixture
def installed() -> Iterator[None]:
    fixture_argnames.install()
    try:
        yield
    finally:
        fixture_argnames.uninstall()


def _counting(calls: Counter[Any], key: Callable[[Any], Any]) -> Callable[..., tuple[str, ...]]:
    """pytest's own ``getfuncargnames``, counting each call by ``key(function)``."""
    own = pytest_compat.getfuncargnames

    def getfuncargnames(function: Any, *, name: str = "", cls: type | None = None) -> tuple[str, ...]:
        calls[key(function)] += 1
        return own(function, name=name, cls=cls)

    return getfuncargnames


def test_a_suite_run_asks_pytest_once_per_code_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step definitions' fixtures (pytest-bdd's ``step_function_marker``, one code object)
    and every ``request`` fixture definition (``lambda: request``) are asked once; the
    scenarios pass, and pytest is as it was after the run."""
    calls: Counter[Any] = Counter()
    monkeypatch.setattr(fixture_argnames, "_ORIGINAL", _counting(calls, lambda f: getattr(f, "__code__", f)))
    monkeypatch.setattr(fixture_argnames, "verify", True)
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    assert calls, "pytest's getfuncargnames was never asked through the memo"
    # With ``verify`` every answer was also asked of pytest's own function: twice per code
    # object at most when the memo keeps it (its first answer and each check add one).
    once = Counter({code: n for code, n in calls.items() if isinstance(code, types.CodeType)})
    (request_code,) = (
        c
        for c in pytest_fixtures.RequestFixtureDef.__init__.__code__.co_consts
        if isinstance(c, types.CodeType)
    )  # ``lambda: request``
    assert once[request_code] > 2  # asked for every test: each a check of the kept answer
    assert not fixture_argnames.installed()
    assert pytest_fixtures.getfuncargnames is pytest_compat.getfuncargnames


def test_pytest_is_asked_once_per_code_object_without_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[Any] = Counter()
    monkeypatch.setattr(fixture_argnames, "_ORIGINAL", _counting(calls, lambda f: getattr(f, "__code__", f)))
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    asked_twice = {code: n for code, n in calls.items() if isinstance(code, types.CodeType) and n > 1}
    assert calls and not asked_twice


def _closures() -> list[Callable[..., Any]]:
    """Functions of one code object."""

    def make(value: int) -> Callable[..., Any]:
        def fixture(world: Any, text: str) -> int:
            return value

        return fixture

    return [make(1), make(2)]


def test_functions_of_one_code_object_get_one_answer(installed: None) -> None:
    first, second = _closures()
    assert first.__code__ is second.__code__
    memoised = pytest_fixtures.getfuncargnames
    assert memoised is not pytest_compat.getfuncargnames
    assert memoised(first) == memoised(second) == pytest_compat.getfuncargnames(second) == ("world", "text")
    assert fixture_argnames._MEMO[first.__code__] == ("world", "text")


def _with_default(world: Any, text: str = "x") -> None:
    pass


def _kwonly_default(world: Any, *, text: str = "x") -> None:
    pass


class _Steps:
    def method(self, world: Any) -> None:
        pass


def test_what_the_code_alone_does_not_decide_is_asked_of_pytest(installed: None) -> None:
    """Defaults, a ``__wrapped__`` (a ``mock.patch`` or ``functools.wraps``), a ``__signature__``,
    a method's class and a callable that is not a plain function: pytest's own answer, never a
    kept one, even for a code object whose answer is kept."""
    memoised = pytest_fixtures.getfuncargnames
    plain = types.FunctionType(_with_default.__code__, globals(), "plain")  # no defaults
    assert memoised(plain) == ("world", "text")
    assert memoised(_with_default) == pytest_compat.getfuncargnames(_with_default) == ("world",)
    kwonly = types.FunctionType(_kwonly_default.__code__, globals(), "kwonly")
    assert memoised(kwonly) == ("world", "text")
    assert memoised(_kwonly_default) == ("world",)

    def inner(world: Any, a: int, b: int) -> None:
        pass

    @functools.wraps(inner)
    def outer(*args: Any, **kwargs: Any) -> None:
        pass

    assert memoised(outer) == pytest_compat.getfuncargnames(outer) == ("world", "a", "b")
    bare = types.FunctionType(outer.__code__, globals(), "bare")
    assert memoised(bare) == ()
    signed = types.FunctionType(outer.__code__, globals(), "signed")
    signed.__signature__ = inspect.signature(inner)  # type: ignore[attr-defined]
    assert memoised(signed) == ("world", "a", "b")
    assert memoised(_Steps.method, name="method", cls=_Steps) == ("world",)
    assert memoised(_Steps.method) == ("self", "world")
    partial = functools.partial(inner, 1)
    assert memoised(partial, name="p") == pytest_compat.getfuncargnames(partial, name="p") == ("a", "b")


def test_a_wrong_kept_answer_fails_the_check(installed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    first, _second = _closures()
    fixture_argnames._MEMO[first.__code__] = ("wrong",)
    monkeypatch.setattr(fixture_argnames, "verify", True)
    with pytest.raises(AssertionError, match="getfuncargnames memo"):
        pytest_fixtures.getfuncargnames(first)


def test_the_memo_lives_as_long_as_the_outermost_session() -> None:
    fixture_argnames.install()
    fixture_argnames.install()
    try:
        pytest_fixtures.getfuncargnames(_closures()[0])
        fixture_argnames.uninstall()
        assert fixture_argnames.installed() and fixture_argnames._MEMO
    finally:
        fixture_argnames.uninstall()
    assert not fixture_argnames.installed() and not fixture_argnames._MEMO
    assert pytest_fixtures.getfuncargnames is pytest_compat.getfuncargnames


def test_the_step_check_asks_each_step_functions_signature_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``misused_steps`` asks a step function's signature once, however many steps it runs, and
    it is the signature pytest-bdd is given for the function while the scenarios run."""
    asked: Counter[Any] = Counter()
    given: dict[Any, inspect.Signature] = {}
    own = step_lookup.signature_of

    def signature_of(func: Any) -> inspect.Signature:
        asked[func] += 1
        found = given[func] = own(func)
        return found

    monkeypatch.setattr(step_lookup, "signature_of", signature_of)
    run = run_suite(target="sim", extension="reference", keyword="archive", workdir=tmp_path / "r")
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    assert asked and max(asked.values()) == 1
    steps = sum(len(r.steps) for r in run.results)
    assert steps > len(asked)
    assert all(signature == inspect.signature(func) for func, signature in given.items())
    assert collect.step_lookup is step_lookup


def test_the_shared_signature_is_the_one_pytest_bdd_is_given() -> None:
    def step(world: Any, text: str) -> None:
        pass

    assert step_lookup.signature_of(step) == inspect.signature(step)
    step_lookup.install()
    try:
        kept = step_lookup.signature_of(step)
        assert kept is step_lookup.bdd_scenario.signature(step) and kept == inspect.signature(step)
    finally:
        step_lookup.uninstall()
