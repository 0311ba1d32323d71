"""pytest-bdd's step lookup, done once per step text instead of once per step run.

For every step it runs, pytest-bdd 9 (``pytest_bdd/scenario.py``: ``find_fixturedefs_for_step``)
walks every fixture name pytest knows (about 200 in the suite: each step definition is a
fixture), asks pytest which definitions of it the test can see (``FixtureManager.
getfixturedefs``, a walk up the node tree) and tries each step definition's parser on the
step's text: about 1,000 lookups of 200 names each per suite run on the simulator (issue 16),
for the same answer to the same step text in every test of a module.

The answer depends on the step (its type and text) and on the step definitions the test can
see. Step definitions are fixtures registered when a plug-in, ``conftest.py``, module or class
is collected, under that node (``parsefactories``); after collection pytest-bdd registers only
plain fixtures under the test itself (``target_fixture`` values, ``compat.inject_fixture``) and
its temporary ``pytestbdd_stepimpl`` fixture, removed before the next lookup
(``compat.inject_temporary_fixturedefs``). So every test under one parent node sees the same
step definitions: this module lists them once per parent node, keeps the answer per (step
type, step text, visible step definitions), and puts that in place of pytest-bdd's function while the
suite's plug-in is active (:func:`install`, :func:`uninstall`); otherwise pytest-bdd is left
as it was.

The same goes for the signature of the step function, which pytest-bdd computes twice per step
it runs (``inspect.signature`` in ``_execute_step_function`` and ``utils.get_required_args``),
2 % of a scenario on the simulator (issue 16): kept per step function while installed. A
``Signature`` is immutable; the list of required arguments is given as a new list each time.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from typing import Any

# ``import pytest_bdd.scenario`` would give the ``scenario`` function pytest_bdd exports.
bdd_scenario: Any = importlib.import_module("pytest_bdd.scenario")

__all__ = ["install", "installed", "uninstall"]

_NAME = "find_fixturedefs_for_step"
_ORIGINAL: Callable[..., Iterable[Any]] | None = getattr(bdd_scenario, _NAME, None)
#: The pieces of pytest-bdd's lookup (``pytest_bdd/scenario.py``, ``compat.py``, ``steps.py``).
_NAMES: Callable[..., list[str]] | None = getattr(bdd_scenario, "get_fixture_names", None)
_DEFS: Callable[..., Any] | None = getattr(bdd_scenario, "getfixturedefs", None)
_CONTEXTS: Any = getattr(bdd_scenario, "step_function_context_registry", None)
#: The answer per (step type, step text, the step definitions visible).
_MEMO: dict[tuple[Any, ...], tuple[Any, ...]] = {}
#: The step definitions a test under a parent node sees, in pytest-bdd's order, with their
#: step contexts, and what names that list in :data:`_MEMO` (their identities: every feature
#: module of the suite sees the same ones, the plug-in's, so a step text is looked up once
#: per run, not once per module), per (parent node, fixture manager).
_VISIBLE: dict[tuple[Any, Any], tuple[list[tuple[Any, Any]], tuple[int, ...]]] = {}
#: pytest-bdd's ``signature`` and ``get_required_args`` as ``pytest_bdd.scenario`` names them.
_SIGNATURE: Callable[..., inspect.Signature] | None = getattr(bdd_scenario, "signature", None)
_REQUIRED: Callable[..., list[str]] | None = getattr(bdd_scenario, "get_required_args", None)
#: Per step function: its signature and its required arguments.
_SIGNATURES: dict[Any, inspect.Signature] = {}
_REQUIRED_ARGS: dict[Any, tuple[str, ...]] = {}
#: Sessions that installed the memo and have not ended (a suite run inside a test's session).
_DEPTH = [0]
#: Set by a test: every memoised answer is compared with pytest-bdd's own (a mismatch raises).
verify = False


def _visible(fixturemanager: Any, node: Any, parent: Any) -> tuple[list[tuple[Any, Any]], tuple[int, ...]]:
    """pytest-bdd's two loops over every fixture name and its visible definitions, keeping the
    step definitions, done once per parent node; with the identities of those definitions
    (they stay alive in the list, so no other object takes an identity while it is kept)."""
    assert _NAMES is not None and _DEFS is not None and _CONTEXTS is not None
    found = _VISIBLE.get((parent, fixturemanager))
    if found is None:
        visible = []
        for fixturename in _NAMES(fixturemanager=fixturemanager):
            for fixturedef in _DEFS(fixturemanager, fixturename, node) or []:
                context = _CONTEXTS.get(fixturedef.func)
                if context is not None:
                    visible.append((fixturedef, context))
        found = _VISIBLE[(parent, fixturemanager)] = (visible, tuple(id(d) for d, _ in visible))
    return found


def _lookup(step: Any, visible: list[tuple[Any, Any]]) -> tuple[Any, ...]:
    """``find_fixturedefs_for_step``'s answer: the visible step definitions of the step's type
    whose parser matches its text, in the same order."""
    return tuple(
        fixturedef
        for fixturedef, context in visible
        if (context.type is None or context.type == step.type) and context.parser.is_matching(step.name)
    )


def _memoised(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
    assert _ORIGINAL is not None
    parent = getattr(node, "parent", None) or node
    visible, identities = _visible(fixturemanager, node, parent)
    key = (step.type, step.name, identities)
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = _lookup(step, visible)
    if verify:
        fresh = tuple(_ORIGINAL(step=step, fixturemanager=fixturemanager, node=node))
        if fresh != found:
            raise AssertionError(f"step lookup memo: {step.type} {step.name!r}: {found} != {fresh}")
    return found


def _signature(func: Any) -> inspect.Signature:
    assert _SIGNATURE is not None
    found = _SIGNATURES.get(func)
    if found is None:
        found = _SIGNATURES[func] = _SIGNATURE(func)
    return found


def _required_args(func: Any) -> list[str]:
    assert _REQUIRED is not None
    found = _REQUIRED_ARGS.get(func)
    if found is None:
        found = _REQUIRED_ARGS[func] = tuple(_REQUIRED(func))
    return list(found)


def install() -> None:
    """Memoise pytest-bdd's step lookup (nothing when this pytest-bdd has no such function)."""
    pieces = (_ORIGINAL, _NAMES, _DEFS, _CONTEXTS)
    if all(piece is not None for piece in pieces) and getattr(_ORIGINAL, "__name__", "") == _NAME:
        _DEPTH[0] += 1
        setattr(bdd_scenario, _NAME, _memoised)
        if _SIGNATURE is inspect.signature and _REQUIRED is not None:
            bdd_scenario.signature = _signature
            bdd_scenario.get_required_args = _required_args


def uninstall() -> None:
    """At the end of the last session that installed it, pytest-bdd's own step lookup again, and
    the memo dropped (it holds the sessions' nodes)."""
    if _DEPTH[0] == 0:
        return
    _DEPTH[0] -= 1
    if _DEPTH[0] == 0:
        setattr(bdd_scenario, _NAME, _ORIGINAL)
        if _SIGNATURE is inspect.signature and _REQUIRED is not None:
            bdd_scenario.signature = _SIGNATURE
            bdd_scenario.get_required_args = _REQUIRED
        _MEMO.clear()
        _VISIBLE.clear()
        _SIGNATURES.clear()
        _REQUIRED_ARGS.clear()


def installed() -> bool:
    """pytest-bdd's step lookup is memoised now."""
    return getattr(bdd_scenario, _NAME, None) is _memoised
