"""pytest-bdd's step lookup, done once per step text and test module instead of once per step run.

For every step it runs, pytest-bdd 9 (``pytest_bdd/scenario.py``: ``find_fixturedefs_for_step``)
walks every fixture name pytest knows (about 200 in the suite: each step definition is a
fixture), asks pytest which definitions of it the test can see (``FixtureManager.
getfixturedefs``, a walk up the node tree) and tries each step definition's parser on the
step's text. It was a fifth of the suite's time on the simulator (issue 16), and it gives the
same answer for the same step text in every test of a module.

The answer depends on the step (its type and text) and on the step definitions the test can
see. Step definitions are fixtures registered when a plug-in, ``conftest.py``, module or class
is collected, under that node (``parsefactories``); after collection pytest-bdd registers only
plain fixtures under the test itself (``target_fixture`` values, ``compat.inject_fixture``) and
its temporary ``pytestbdd_stepimpl`` fixture, removed before the next lookup
(``compat.inject_temporary_fixturedefs``). So every test under one parent node sees the same
step definitions, and the answer can be kept per (step type, step text, parent node): this
module wraps pytest-bdd's function with that memo while the suite's plug-in is active
(:func:`install`, :func:`uninstall`), and leaves pytest-bdd as it was otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

# ``import pytest_bdd.scenario`` would give the ``scenario`` function pytest_bdd exports.
bdd_scenario = importlib.import_module("pytest_bdd.scenario")

__all__ = ["install", "installed", "uninstall"]

_NAME = "find_fixturedefs_for_step"
_ORIGINAL: Callable[..., Iterable[Any]] | None = getattr(bdd_scenario, _NAME, None)
_MEMO: dict[tuple[Any, ...], tuple[Any, ...]] = {}
#: Sessions that installed the memo and have not ended (a suite run inside a test's session).
_DEPTH = [0]
#: Set by a test: every memoised answer is compared with pytest-bdd's own (a mismatch raises).
verify = False


def _memoised(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
    assert _ORIGINAL is not None
    key = (step.type, step.name, getattr(node, "parent", None) or node, fixturemanager)
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = tuple(_ORIGINAL(step=step, fixturemanager=fixturemanager, node=node))
    elif verify:
        fresh = tuple(_ORIGINAL(step=step, fixturemanager=fixturemanager, node=node))
        if fresh != found:
            raise AssertionError(f"step lookup memo: {step.type} {step.name!r}: {found} != {fresh}")
    return found


def install() -> None:
    """Memoise pytest-bdd's step lookup (nothing when this pytest-bdd has no such function)."""
    if _ORIGINAL is not None and _ORIGINAL.__name__ == _NAME:
        _DEPTH[0] += 1
        setattr(bdd_scenario, _NAME, _memoised)


def uninstall() -> None:
    """At the end of the last session that installed it, pytest-bdd's own step lookup again, and
    the memo dropped (it holds the sessions' nodes)."""
    if _DEPTH[0] == 0:
        return
    _DEPTH[0] -= 1
    if _DEPTH[0] == 0:
        setattr(bdd_scenario, _NAME, _ORIGINAL)
        _MEMO.clear()


def installed() -> bool:
    """pytest-bdd's step lookup is memoised now."""
    return getattr(bdd_scenario, _NAME, None) is _memoised
