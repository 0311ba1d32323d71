"""The continuity checker calls ``_pre`` and ``_post`` only for the records they act on
(``_PRE_KEYS``, ``_POST_KEYS``); a key one of them tests that is missing from its set would
silently never be seen (issue 16)."""

from __future__ import annotations

import ast
import inspect
import textwrap

from pi_continuity_harness.explore.continuity import invariants
from pi_continuity_harness.explore.continuity.invariants import InvariantChecker


def _keys_tested(method: object) -> set[str]:
    """Every string ``key`` is compared with (``==`` or ``in``) in ``method``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))  # type: ignore[arg-type]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "key":
            for right in node.comparators:
                for constant in ast.walk(right):
                    if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                        found.add(constant.value)
    return found


def test_pre_and_post_keys_name_every_key_they_test() -> None:
    pre = _keys_tested(InvariantChecker._pre)
    post = _keys_tested(InvariantChecker._post)
    assert pre, "no key found in _pre: the reading above no longer matches it"
    assert post
    assert pre <= invariants._PRE_KEYS, sorted(pre - invariants._PRE_KEYS)
    assert post <= invariants._POST_KEYS, sorted(post - invariants._POST_KEYS)
