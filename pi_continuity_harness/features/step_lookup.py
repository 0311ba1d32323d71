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
``Signature`` is immutable; the list of required arguments is given as a new list each time,
and is read off the kept signature (pytest-bdd's ``get_required_args`` asks ``inspect.signature``
again: 277 step functions per suite run, 0.5 % of its scenarios' CPU time).

Having found the step definitions, pytest-bdd registers them under a temporary fixture name for
the test (``inject_fixturedefs_for_step``) and asks pytest for that fixture's value
(``get_step_function``): the step context of the definition pytest picks (its fixture function
returns it, ``steps.py``: ``step_function_marker``), through pytest's fixture setup (a
``SubRequest``, the ``pytest_fixture_setup`` hook, a finalizer) and, at the test's teardown,
the fixture's finish, for every step of every test: 5 % of a scenario's CPU time on the
simulator (issue 16). When one definition matches, that is its step context, which
:func:`_step_function` gives, kept per (step type, step text, visible step definitions), but
only while nothing can tell the fixture was not set up (:func:`_fixture_setup_unobserved`): the
fixture setup and finalizer hooks are pytest's own and do nothing (no ``--setup-show``,
``--setup-only``, ``--setup-plan``, no other plug-in on them) and pytest-bdd's debug log of
the injected fixtures is off; otherwise, and for a step that several definitions match,
pytest-bdd's own function.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any

# ``import pytest_bdd.scenario`` would give the ``scenario`` function pytest_bdd exports.
bdd_scenario: Any = importlib.import_module("pytest_bdd.scenario")

__all__ = ["install", "installed", "signature_of", "uninstall"]

_NAME = "find_fixturedefs_for_step"
_ORIGINAL: Callable[..., Iterable[Any]] | None = getattr(bdd_scenario, _NAME, None)
#: The pieces of pytest-bdd's lookup (``pytest_bdd/scenario.py``, ``compat.py``, ``steps.py``).
_NAMES: Callable[..., list[str]] | None = getattr(bdd_scenario, "get_fixture_names", None)
_DEFS: Callable[..., Any] | None = getattr(bdd_scenario, "getfixturedefs", None)
_CONTEXTS: Any = getattr(bdd_scenario, "step_function_context_registry", None)
#: The answer per (step type, step text, the step definitions visible).
_MEMO: dict[tuple[Any, ...], tuple[Any, ...]] = {}
#: The step definitions a test under a parent node sees, in pytest-bdd's order, with their
#: step contexts, and what names that list in :data:`_MEMO` (the number :data:`_LISTINGS` gave
#: their identities: every feature module of the suite sees the same ones, the plug-in's, so
#: a step text is looked up once per run, not once per module), per (parent node, fixture
#: manager).
_VISIBLE: dict[tuple[Any, Any], tuple[list[tuple[Any, Any]], int]] = {}
#: A number per distinct list of visible step definitions (their identities): a key of a few
#: words instead of a tuple of about 200 identities hashed again at every step.
_LISTINGS: dict[tuple[int, ...], int] = {}
#: Per listing: its plain-text step definitions' positions by their text, and the others' by
#: their step type (:func:`_candidates`).
_CANDIDATES: dict[int, tuple[dict[str, tuple[int, ...]], dict[str | None, tuple[int, ...]]]] = {}
#: pytest-bdd's plain-text parser (``pytest_bdd.parsers.string``): its ``is_matching`` is
#: ``self.name == name``.
_STRING_PARSER: Any = getattr(importlib.import_module("pytest_bdd.parsers"), "string", None)
#: pytest-bdd's ``signature`` and ``get_required_args`` as ``pytest_bdd.scenario`` names them.
_SIGNATURE: Callable[..., inspect.Signature] | None = getattr(bdd_scenario, "signature", None)
_REQUIRED: Callable[..., list[str]] | None = getattr(bdd_scenario, "get_required_args", None)
#: pytest-bdd's ``get_required_args`` is ``pytest_bdd.utils.get_required_args`` and takes the
#: signature from ``inspect.signature``: its answer is the kept signature's positional-or-keyword
#: parameters without a default (``utils.py``), computed so by :func:`_required_args`.
_REQUIRED_FROM_SIGNATURE = (
    _REQUIRED is not None
    and getattr(_REQUIRED, "__module__", None) == "pytest_bdd.utils"
    and getattr(_REQUIRED, "__name__", None) == "get_required_args"
    and getattr(importlib.import_module("pytest_bdd.utils"), "signature", None) is inspect.signature
)
#: Per step function: its signature and its required arguments.
_SIGNATURES: dict[Any, inspect.Signature] = {}
_REQUIRED_ARGS: dict[Any, tuple[str, ...]] = {}
#: pytest-bdd's ``get_step_function``, and the step context of a step per (step type, step text,
#: the step definitions visible), given by :func:`_step_function`.
_GET_STEP_FUNCTION: Callable[..., Any] | None = getattr(bdd_scenario, "get_step_function", None)
#: The two functions as pytest-bdd defines them, put back by :func:`uninstall` (a test may
#: replace ``_ORIGINAL`` or ``_GET_STEP_FUNCTION`` with a wrapper while a session runs).
_FIND_AS_IMPORTED = _ORIGINAL
_GET_AS_IMPORTED = _GET_STEP_FUNCTION
#: This pytest-bdd's ``get_step_function`` is called as pytest-bdd 9 calls it.
_GET_KNOWN = _GET_STEP_FUNCTION is not None and list(inspect.signature(_GET_STEP_FUNCTION).parameters) == [
    "request",
    "step",
]
_STEP_CONTEXTS: dict[tuple[Any, ...], Any] = {}
#: Per pytest config (one session): whether the setup of a step's fixture is unobserved.
_UNOBSERVED: dict[Any, bool] = {}
#: The plug-ins (by pytest's names) whose fixture setup and finalizer hooks are pytest's own:
#: ``fixtures`` sets a fixture up, ``setuponly`` and ``setupplan`` act only with their options.
_OWN_FIXTURE_HOOKS = frozenset({"fixtures", "setuponly", "setupplan"})
#: pytest-bdd's logger, which writes the fixtures it injects for a step at debug level.
_BDD_LOG = logging.getLogger(bdd_scenario.__name__)
#: Sessions that installed the memo and have not ended (a suite run inside a test's session).
_DEPTH = [0]
#: Set by a test: every memoised answer is compared with pytest-bdd's own (a mismatch raises).
verify = False


def _visible(fixturemanager: Any, node: Any, parent: Any) -> tuple[list[tuple[Any, Any]], int]:
    """pytest-bdd's two loops over every fixture name and its visible definitions, keeping the
    step definitions, done once per parent node; with the number of the identities of those
    definitions (they stay alive in the list, so no other object takes an identity while it is
    kept)."""
    assert _NAMES is not None and _DEFS is not None and _CONTEXTS is not None
    found = _VISIBLE.get((parent, fixturemanager))
    if found is None:
        visible = []
        for fixturename in _NAMES(fixturemanager=fixturemanager):
            for fixturedef in _DEFS(fixturemanager, fixturename, node) or []:
                context = _CONTEXTS.get(fixturedef.func)
                if context is not None:
                    visible.append((fixturedef, context))
        identities = tuple(id(d) for d, _ in visible)
        listing = _LISTINGS.setdefault(identities, len(_LISTINGS))
        found = _VISIBLE[(parent, fixturemanager)] = (visible, listing)
    return found


def _lookup(step: Any, visible: list[tuple[Any, Any]], listing: int | None = None) -> tuple[Any, ...]:
    """``find_fixturedefs_for_step``'s answer: the visible step definitions of the step's type
    whose parser matches its text, in the same order.

    Given the ``listing`` of ``visible``, only the definitions that can match are tried
    (:func:`_candidates`): each unique step text was tried against all of the suite's 567
    definitions when the plug-in checks for undefined steps before the first scenario, 32 ms
    of a run of the suite (issue 16; 13 ms with this). The definitions kept are tried by the
    same test as before, in the same order, so the answer is the same."""
    if listing is None or type(step.name) is not str or type(step.type) is not str:
        candidates: Iterable[tuple[Any, Any]] = visible
    else:
        by_text, by_type = _candidates(visible, listing)
        positions = sorted((*by_text.get(step.name, ()), *by_type.get(None, ()), *by_type.get(step.type, ())))
        candidates = [visible[position] for position in positions]
    return tuple(
        fixturedef
        for fixturedef, context in candidates
        if (context.type is None or context.type == step.type) and context.parser.is_matching(step.name)
    )


def _candidates(
    visible: list[tuple[Any, Any]], listing: int
) -> tuple[dict[str, tuple[int, ...]], dict[str | None, tuple[int, ...]]]:
    """Positions in ``visible``, made once per listing: of the plain-text step definitions, by
    their text; of the others, by their step type (``None``: any type).

    A definition counts as plain text when its parser is pytest-bdd's ``string`` itself (not a
    subclass, which may match otherwise) and its text a ``str``: its ``is_matching`` is then
    ``self.name == name``, true of no other text. A step of type ``t`` (a ``str``) can match
    only a definition of type ``None`` or ``t`` (``context.type == t``, which for a ``str`` is the
    dictionary's equality): a type that is neither ``None`` nor a ``str`` is filed under
    ``None``, so it is always tried."""
    found = _CANDIDATES.get(listing)
    if found is None:
        by_text: dict[str, list[int]] = {}
        by_type: dict[str | None, list[int]] = {}
        for position, (_fixturedef, context) in enumerate(visible):
            parser = context.parser
            if _STRING_PARSER is not None and type(parser) is _STRING_PARSER and type(parser.name) is str:
                by_text.setdefault(parser.name, []).append(position)
            else:
                kind = context.type if type(context.type) is str else None
                by_type.setdefault(kind, []).append(position)
        found = _CANDIDATES[listing] = (
            {text: tuple(at) for text, at in by_text.items()},
            {kind: tuple(at) for kind, at in by_type.items()},
        )
    return found


def _memoised(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
    assert _ORIGINAL is not None
    parent = getattr(node, "parent", None) or node
    visible, listing = _visible(fixturemanager, node, parent)
    key = (step.type, step.name, listing)
    found = _MEMO.get(key)
    if found is None:
        found = _MEMO[key] = _lookup(step, visible, listing)
    if verify:
        fresh = tuple(_ORIGINAL(step=step, fixturemanager=fixturemanager, node=node))
        if fresh != found:
            raise AssertionError(f"step lookup memo: {step.type} {step.name!r}: {found} != {fresh}")
    return found


def _fixture_setup_unobserved(config: Any) -> bool:
    """Whether skipping a step fixture's setup and teardown changes nothing anyone sees in this
    session: only pytest's own plug-ins implement ``pytest_fixture_setup`` and
    ``pytest_fixture_post_finalizer``, none of ``--setup-show``, ``--setup-only``,
    ``--setup-plan`` is given (they print every fixture; a listener on those hooks could record
    them), and pytest-bdd's logger does not write the injected fixtures (with
    ``--log-level=DEBUG`` that line is in the test's captured log). The plug-ins are decided
    once per session (they are registered when it is configured), the log level at every step."""
    found = _UNOBSERVED.get(config)
    if found is None:
        hook = config.pluginmanager.hook
        plugins = {
            impl.plugin_name
            for name in ("pytest_fixture_setup", "pytest_fixture_post_finalizer")
            for impl in getattr(hook, name).get_hookimpls()
        }
        option = config.option
        shown = any(getattr(option, name, False) for name in ("setupshow", "setuponly", "setupplan"))
        found = _UNOBSERVED[config] = plugins <= _OWN_FIXTURE_HOOKS and not shown
    return found and not _BDD_LOG.isEnabledFor(logging.DEBUG)


def _step_function(request: Any, step: Any) -> Any:
    """pytest-bdd's ``get_step_function`` while the fixture setup it does is unobserved: the
    step context of the one step definition that matches the step (what pytest-bdd's fixture
    returns: pytest sets up the only definition registered under the temporary name, which
    shadows any other fixture of that name), kept per (step type, step text, visible step
    definitions), the key of :func:`_memoised`. No definition (pytest-bdd's error) or several
    (which one pytest picks is pytest's and pytest-bdd's business): pytest-bdd's own."""
    assert _GET_STEP_FUNCTION is not None and _CONTEXTS is not None
    if not _fixture_setup_unobserved(request.config):
        return _GET_STEP_FUNCTION(request=request, step=step)
    node = request.node
    fixturemanager = request._fixturemanager
    parent = getattr(node, "parent", None) or node
    _defs, listing = _visible(fixturemanager, node, parent)
    key = (step.type, step.name, listing)
    found = _STEP_CONTEXTS.get(key)
    if found is None:
        defs = tuple(_memoised(step, fixturemanager, node))
        if len(defs) != 1:
            return _GET_STEP_FUNCTION(request=request, step=step)
        found = _STEP_CONTEXTS[key] = _CONTEXTS[defs[0].func]
    if verify:
        fresh = _GET_STEP_FUNCTION(request=request, step=step)
        if fresh is not found:
            raise AssertionError(f"step function memo: {step.type} {step.name!r}: {found} is not {fresh}")
    return found


def _signature(func: Any) -> inspect.Signature:
    assert _SIGNATURE is not None
    found = _SIGNATURES.get(func)
    if found is None:
        found = _SIGNATURES[func] = _SIGNATURE(func)
    return found


def signature_of(func: Any) -> inspect.Signature:
    """``inspect.signature(func)``: while the memo is installed, the one kept for pytest-bdd
    (:func:`_signature`), so the plug-in's check of the steps before the first scenario
    (``collect.misused_steps``) and pytest-bdd's run of each step ask once between them."""
    kept = bool(_DEPTH[0]) and bdd_scenario.signature is _signature
    return _signature(func) if kept else inspect.signature(func)


def _required_args(func: Any) -> list[str]:
    """``get_required_args`` of ``func``, kept per function. Where pytest-bdd's is the one this
    module knows (:data:`_REQUIRED_FROM_SIGNATURE`), it is computed from the kept signature
    (:func:`_signature`) by the same expression as pytest-bdd's (``utils.py``:
    ``get_required_args``) instead of a second ``inspect.signature`` of the function: both are
    asked of every step function once per session, and ``inspect.signature`` was three
    quarters of the cost of the two (issue 16)."""
    assert _REQUIRED is not None
    found = _REQUIRED_ARGS.get(func)
    if found is None:
        if _REQUIRED_FROM_SIGNATURE:
            found = tuple(
                param.name
                for param in _signature(func).parameters.values()
                if param.kind == param.POSITIONAL_OR_KEYWORD and param.default is param.empty
            )
            if verify and list(found) != _REQUIRED(func):
                raise AssertionError(f"required arguments of {func!r}: {list(found)} != {_REQUIRED(func)}")
        else:
            found = tuple(_REQUIRED(func))
        _REQUIRED_ARGS[func] = found
    return list(found)


def install() -> None:
    """Memoise pytest-bdd's step lookup (nothing when this pytest-bdd has no such function)."""
    pieces = (_ORIGINAL, _NAMES, _DEFS, _CONTEXTS)
    if all(piece is not None for piece in pieces) and getattr(_ORIGINAL, "__name__", "") == _NAME:
        _DEPTH[0] += 1
        setattr(bdd_scenario, _NAME, _memoised)
        if _GET_KNOWN:
            bdd_scenario.get_step_function = _step_function
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
        setattr(bdd_scenario, _NAME, _FIND_AS_IMPORTED)
        if bdd_scenario.get_step_function is _step_function:
            bdd_scenario.get_step_function = _GET_AS_IMPORTED
        if _SIGNATURE is inspect.signature and _REQUIRED is not None:
            bdd_scenario.signature = _SIGNATURE
            bdd_scenario.get_required_args = _REQUIRED
        _MEMO.clear()
        _VISIBLE.clear()
        _LISTINGS.clear()
        _CANDIDATES.clear()
        _STEP_CONTEXTS.clear()
        _UNOBSERVED.clear()
        _SIGNATURES.clear()
        _REQUIRED_ARGS.clear()


def installed() -> bool:
    """pytest-bdd's step lookup is memoised now."""
    return getattr(bdd_scenario, _NAME, None) is _memoised
