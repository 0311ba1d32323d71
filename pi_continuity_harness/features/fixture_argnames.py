"""pytest's ``getfuncargnames``, asked once per code object instead of once per fixture definition.

pytest makes a fixture definition (``_pytest/fixtures.py``: ``FixtureDef.__init__``) for every
fixture function of a plug-in when the session starts (each of the step library's 587 step
definitions is one: pytest-bdd's ``step_function_marker``), and a new one for the ``request``
fixture every time a test or a fixture asks for it (``RequestFixtureDef``, ``lambda:
request``: three or more per scenario). Each asks ``getfuncargnames`` for the function's
required arguments, which asks ``inspect.signature``: about 60,000 instructions each, 1,600
per run of the suite on the simulator, for a handful of distinct answers (issue 16).

The answer is a function of the code object alone when the function is a plain Python function
(``types.FunctionType`` itself) without default values (``__defaults__`` and ``__kwdefaults__``
None), without ``__wrapped__`` or ``__signature__`` (which ``inspect.signature`` and pytest
follow) and not asked as a method (``cls`` None): its parameters, their kinds and names are the
code's, and none has a default. Such answers are kept per code object (the object held, so its
identity stays its own) while the suite's plug-in is active (:func:`install`,
:func:`uninstall`); any other function is asked of pytest's own function. The memo holds the
code objects of the session's fixture and test functions, and is dropped when the last session
that installed it ends.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

__all__ = ["install", "installed", "uninstall"]

#: ``_pytest.fixtures``, where ``FixtureDef`` and ``FixtureManager.getfixtureinfo`` look the
#: function up by name at call time.
_FIXTURES: Any = importlib.import_module("_pytest.fixtures")
#: pytest's own ``getfuncargnames`` (``_pytest/compat.py``) as ``_pytest.fixtures`` imported it.
_ORIGINAL: Callable[..., tuple[str, ...]] | None = getattr(_FIXTURES, "getfuncargnames", None)
#: The function as pytest defines it, put back by :func:`uninstall` (a test may replace
#: ``_ORIGINAL`` with a wrapper while a session runs).
_AS_IMPORTED = _ORIGINAL
#: The answer per code object.
_MEMO: dict[types.CodeType, tuple[str, ...]] = {}
#: Sessions that installed the memo and have not ended (a suite run inside a test's session).
_DEPTH = [0]
#: Set by a test: every memoised answer is compared with pytest's own (a mismatch raises).
verify = False


def _argnames(function: Any, *, name: str = "", cls: type | None = None) -> tuple[str, ...]:
    """``getfuncargnames(function, name=name, cls=cls)``, kept per code object where it depends
    on nothing else (see the module's docstring)."""
    assert _ORIGINAL is not None
    if (
        cls is not None
        or type(function) is not types.FunctionType
        or function.__defaults__ is not None
        or function.__kwdefaults__ is not None
        or "__wrapped__" in function.__dict__
        or "__signature__" in function.__dict__
    ):
        return _ORIGINAL(function, name=name, cls=cls)
    code = function.__code__
    found = _MEMO.get(code)
    if found is None:
        found = _MEMO[code] = _ORIGINAL(function, name=name, cls=cls)
    if verify:
        fresh = _ORIGINAL(function, name=name, cls=cls)
        if fresh != found:
            raise AssertionError(f"getfuncargnames memo: {function!r}: {found} != {fresh}")
    return found


def install() -> None:
    """Memoise pytest's ``getfuncargnames`` (nothing when this pytest has no such function)."""
    if _ORIGINAL is None or getattr(_ORIGINAL, "__name__", "") != "getfuncargnames":
        return
    _DEPTH[0] += 1
    _FIXTURES.getfuncargnames = _argnames


def uninstall() -> None:
    """At the end of the last session that installed it, pytest's own function again, and the
    memo dropped."""
    if _DEPTH[0] == 0:
        return
    _DEPTH[0] -= 1
    if _DEPTH[0] == 0:
        if _FIXTURES.getfuncargnames is _argnames:
            _FIXTURES.getfuncargnames = _AS_IMPORTED
        _MEMO.clear()


def installed() -> bool:
    """pytest's ``getfuncargnames`` is memoised now."""
    return getattr(_FIXTURES, "getfuncargnames", None) is _argnames
