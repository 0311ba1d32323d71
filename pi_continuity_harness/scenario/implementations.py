"""Implementations and the systems they implement: the one registry both targets ask.

An *implementation* is an extension factory, named on the command line and in scenarios as
``module:factory`` (an attribute path, e.g. ``pkg.mod:Class.factory``), as a name registered
under the entry-point group :data:`ENTRY_POINT_GROUP` (``reference``, ``blitz`` and its alias
``handoff``), or given as the factory itself. :func:`resolve_implementation` turns any of these
into ``(name, factory)``.

A *system* is the product an implementation implements: ``pi-session-continuity`` (the
default) or ``pi-blitz-handoff``. A factory declares its system with an attribute::

    extension.pi_continuity_system = "pi-blitz-handoff"

:func:`implementation_system` reads that declaration, once, for every caller: the suite (which
features run), the explorer (which plug-in explores), and both targets (how the scripted model
answers an extension's own model calls by default: :attr:`System.extension_replies`). A
TypeScript implementation cannot declare one; the suite's ``--system`` option names it.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from importlib import metadata

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.continuity_replies import CONTINUITY_REPLIES
from pi_continuity_harness.scenario.model_script import PLAIN_REPLIES, ExtensionReplies

__all__ = [
    "BLITZ_HANDOFF",
    "DEFAULT_IMPLEMENTATION",
    "ENTRY_POINT_GROUP",
    "SESSION_CONTINUITY",
    "SYSTEMS",
    "SYSTEM_ATTRIBUTE",
    "ImplementationError",
    "System",
    "check_chosen_system",
    "declared_system",
    "entry_points_of",
    "implementation_module",
    "implementation_system",
    "resolve_implementation",
    "search_current_directory",
    "system_named",
]

ENTRY_POINT_GROUP = "pi_continuity_harness.implementations"
DEFAULT_IMPLEMENTATION = "reference"
#: The attribute a factory declares its system with.
SYSTEM_ATTRIBUTE = "pi_continuity_system"


class ImplementationError(ScenarioError):
    """An implementation spec that does not name a loadable extension factory."""


@dataclass(frozen=True)
class System:
    """A product the harness checks: its name, its features, and its scripted model's defaults."""

    #: The product's name, as ``--system`` and ``pi_continuity_system`` spell it.
    name: str
    #: The directory of its Gherkin features under ``features/``.
    features: str
    #: The registered name of its reference implementation.
    reference: str
    #: How the scripted model answers an ``extension`` request nothing scripted.
    extension_replies: ExtensionReplies


SESSION_CONTINUITY = System(
    name="pi-session-continuity",
    features="pi_session_continuity",
    reference="reference",
    extension_replies=CONTINUITY_REPLIES,
)
BLITZ_HANDOFF = System(
    name="pi-blitz-handoff",
    features="pi_blitz_handoff",
    reference="blitz",
    extension_replies=PLAIN_REPLIES,
)
#: Every system, by name; the first is the default of an implementation that declares none.
SYSTEMS: dict[str, System] = {system.name: system for system in (SESSION_CONTINUITY, BLITZ_HANDOFF)}


def system_named(name: str) -> System:
    """The system called ``name`` (``--system``); an unknown name is an :class:`ImplementationError`."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise ImplementationError(f"unknown system {name!r} (known: {', '.join(SYSTEMS)})") from None


def declared_system(factory: object) -> System:
    """The system ``factory`` declares (:data:`SYSTEM_ATTRIBUTE`), else Session Continuity."""
    declared = getattr(factory, SYSTEM_ATTRIBUTE, None)
    if isinstance(declared, str) and declared:
        return system_named(declared)
    return SESSION_CONTINUITY


def implementation_system(spec: str | ExtensionFactory) -> System:
    """The system of the implementation ``spec`` names (see :func:`resolve_implementation`)."""
    _name, factory = resolve_implementation(spec)
    return declared_system(factory)


def check_chosen_system(spec: str | ExtensionFactory, chosen: str | None) -> None:
    """Refuse ``--system chosen`` for an implementation whose factory declares another system.

    ``--system`` names the system of an implementation that cannot say it (a TypeScript file,
    a factory without :data:`SYSTEM_ATTRIBUTE`). Given for one that declares another, it ran
    that system's suite against it: ``run --system pi-blitz-handoff`` with the default
    ``reference`` (Session Continuity) failed every handoff scenario, a verdict about nothing.
    Raises :class:`ImplementationError` naming both systems and the implementation to use.
    """
    if not chosen:
        return
    wanted = system_named(chosen)
    name, factory = resolve_implementation(spec)
    declared = getattr(factory, SYSTEM_ATTRIBUTE, None)
    if isinstance(declared, str) and declared and declared != wanted.name:
        raise ImplementationError(
            f"--system {wanted.name}: --extension {name} implements {declared} (its factory declares "
            f"it); leave --system out, or name an implementation of {wanted.name} "
            f"(its reference: --extension {wanted.reference})"
        )


#: ``entry_points_of``'s last answer per group, with the state of ``sys.path`` it was read in.
_REGISTERED: dict[str, tuple[tuple[tuple[str, int], ...], dict[str, metadata.EntryPoint]]] = {}


def _path_state() -> tuple[tuple[str, int], ...]:
    """``sys.path`` with each directory's modification time, and the current directory (where
    ``""`` and relative entries point): an install, an uninstall or a directory added to the
    path (:func:`search_current_directory`) changes it."""
    state = [(os.getcwd(), 0)]
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, -1))
    return tuple(state)


def entry_points_of(group: str) -> dict[str, metadata.EntryPoint]:
    """The entry points registered in ``group``, by name.

    :func:`importlib.metadata.entry_points` reads every installed distribution's metadata, and
    every scenario of the suite resolved its implementation with it (issue 16: 4 % of the suite's
    time). The answer is kept while ``sys.path`` and its directories' modification times stay
    as they were (the same rule as importlib's own directory cache), so an install is seen.
    """
    state = _path_state()
    kept = _REGISTERED.get(group)
    if kept is None or kept[0] != state:
        kept = _REGISTERED[group] = (state, {ep.name: ep for ep in metadata.entry_points(group=group)})
    return dict(kept[1])


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return entry_points_of(ENTRY_POINT_GROUP)


def implementation_module(spec: str) -> str | None:
    """The module an implementation spec names (a registered name's entry point, or the
    ``module`` of ``module:factory``), without importing it; None for anything else (a
    TypeScript file, a malformed spec, whose errors :func:`resolve_implementation` gives)."""
    points = _entry_points()
    if spec in points:
        return str(points[spec].module)
    module_name, sep, attr = spec.partition(":")
    return module_name if sep and module_name and attr else None


def resolve_implementation(
    spec: str | ExtensionFactory, *, where: str | None = None
) -> tuple[str, ExtensionFactory]:
    """``module:factory``, a registered implementation name, or a factory itself.

    An error message starts with ``where`` the spec came from (default: ``--extension <spec>``).
    """
    if callable(spec):
        name = getattr(spec, "__module__", "extension") + ":" + getattr(spec, "__qualname__", "factory")
        return name, spec
    label = where or f"--extension {spec}"
    points = _entry_points()
    if spec in points:
        target = points[spec].load()
        if not callable(target):
            raise ImplementationError(f"{label}: entry point does not name a callable factory")
        return spec, target
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        known = ", ".join(sorted(points)) or "none registered"
        raise ImplementationError(
            f"{where or f'--extension {spec!r}'}: expected 'module:factory' or an implementation name ({known})"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        hint = ""
        if error.name and module_name.split(".")[0] == error.name.split(".")[0]:
            cwd = os.getcwd()
            here = cwd in sys.path or "" in sys.path
            hint = (
                f" (looked in {cwd} and on sys.path)"
                if here
                else " (looked on sys.path, not in the current directory)"
            )
        raise ImplementationError(f"{label}: cannot import {module_name!r}: {error}{hint}") from None
    except SyntaxError as error:
        where = f"{error.filename}:{error.lineno}" if error.filename else module_name
        raise ImplementationError(f"{label}: cannot import {module_name!r}: {where}: {error.msg}") from None
    except Exception as error:  # the module's own code failed while it was imported
        raise ImplementationError(
            f"{label}: importing {module_name!r} raised {type(error).__name__}: {error}"
        ) from None
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ImplementationError(f"{label}: {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ImplementationError(
            f"{label}: {attr!r} is not callable ({type(target).__name__} {target!r:.60}); "
            "an implementation is an extension factory, a function that takes the ExtensionAPI"
        )
    return spec, target


def search_current_directory(directory: str | None = None) -> None:
    """Resolve module specs from the current directory, as ``python -m`` does.

    The ``pi-continuity-harness`` script (like ``pytest``) starts with its own directory first on
    ``sys.path``, not the current one, so ``--extension my_ext:extension`` next to ``my_ext.py``
    failed unless ``PYTHONPATH`` said ``.``. The command line and the suite's pytest plugin call
    this once at start: ``directory`` (default: the current directory) goes first on
    ``sys.path``, as an absolute path, so it also reaches the real-Pi bridge's Python process,
    which runs in the machine's project directory with this ``sys.path`` as ``PYTHONPATH``.
    """
    path = os.path.abspath(directory or os.getcwd())
    if path not in sys.path:
        sys.path.insert(0, path)
    _keep_this_harness_first(path)


#: The directory this harness's package was imported from (``site-packages``, or a checkout
#: under an editable install, whose finder sits after the path on ``sys.meta_path``).
_HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _keep_this_harness_first(directory: str) -> None:
    """When ``directory`` holds another ``pi_continuity_harness`` (a checkout of another
    revision, a worktree), put the directory this one came from before it on ``sys.path``.

    This process imported the harness already, so the other copy changes nothing here; but
    every child process imports it afresh from ``sys.path``: pytest-xdist's workers (``run -n``)
    take this process's ``sys.path`` as theirs (xdist/remote.py, ``change_sys_path``), the
    real-Pi bridge takes it as ``PYTHONPATH``. With the directory first they ran the other copy
    against this one's controller, and the first mismatch ended the session in pytest-xdist's
    ``assert not crashitem``. Other modules of ``directory`` still resolve from it, unless the
    harness's directory has one of the same name (an installed module of ``site-packages``, a
    top-level directory of a checkout): only in a directory holding another harness.
    """
    here = os.path.realpath(_HARNESS_ROOT)
    if os.path.realpath(directory) == here:
        return
    package = os.path.join(directory, "pi_continuity_harness")
    if not (os.path.isdir(package) or os.path.isfile(package + ".py")):
        return
    if _HARNESS_ROOT in sys.path:
        sys.path.remove(_HARNESS_ROOT)
    sys.path.insert(0, _HARNESS_ROOT)
