"""Every load of a mutant starts from the reference as shipped.

A mutant that changes a reference module (``lifecycle.insert_event_freshness_rule = ...``)
does so each time its factory runs, and a factory runs at every Pi start: every scenario of a
suite run, every restart and reload inside one, every seed of an explore process. Without a
reset the second load wraps the first load's change (the freshness rule inserted twice
becomes three times after two loads, a second copy of a Brief becomes two), so what a
mutant did in a scenario depended on how many scenarios or seeds the process had run before
it, and a kill could depend on their order.

:func:`from_pristine` wraps a mutant factory: before it runs, every module and class attribute
of the reference packages that a mutant changed is put back to the value it had when the
first mutant of the process loaded (``__dunder__`` attributes excepted). The reference
rebinds no module or class attribute at run time (no ``global`` statement; what it remembers
lives in objects it mutates in place, such as the memo of ``brief.validate_brief_body``,
which answers only while every name of ``brief`` is as imported), so this restores only what
mutants changed. A mutant whose change remembers something for the process
(``continuity_rules.patched``) sets the same changed object again at every load.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import types
from collections.abc import Callable
from typing import Any

__all__ = ["REFERENCE_PACKAGES", "changed_since", "from_pristine", "reference_snapshot", "reset_reference"]

#: The packages whose modules mutants change.
REFERENCE_PACKAGES = ("pi_continuity_harness.reference",)

#: ``(module or class, its attributes)`` as the first mutant of this process found them.
_snapshot: list[tuple[Any, dict[str, Any]]] = []


def _owners() -> list[Any]:
    """Every module of the reference packages (imported now, so a later import adds none) and
    every class defined in one, in name order."""
    owners: list[Any] = []
    for package_name in REFERENCE_PACKAGES:
        package = importlib.import_module(package_name)
        names = sorted(
            info.name for info in pkgutil.walk_packages(package.__path__, prefix=package_name + ".")
        )
        for name in [package_name, *names]:
            module = importlib.import_module(name)
            owners.append(module)
            owners.extend(
                value
                for _key, value in sorted(vars(module).items())
                if isinstance(value, type) and value.__module__ == name
            )
    return owners


def reset_reference() -> None:
    """Put back every attribute a mutant changed (the first call records them instead)."""
    if not _snapshot:
        _snapshot.extend((owner, dict(vars(owner))) for owner in _owners())
        return
    for owner, saved in _snapshot:
        current = vars(owner)
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value and not _dunder(key):
                setattr(owner, key, value)


_MISSING = object()


def reference_snapshot() -> list[tuple[Any, dict[str, Any]]]:
    """Every module and class attribute of the reference packages as they are now, for
    :func:`changed_since`."""
    return [(owner, dict(vars(owner))) for owner in _owners()]


def changed_since(snapshot: list[tuple[Any, dict[str, Any]]]) -> list[str]:
    """The attributes of the reference packages that are not what ``snapshot`` holds
    (``module.name`` or ``module.Class.name``; ``__dunder__`` attributes excepted), sorted.

    Why: runs that share a process (a batch of blitz mutants in one pytest session,
    ``features.suite.run_batch``) are judged apart only while each leaves the reference as it
    found it. A blitz mutant changes a module only inside ``mutants.blitz.patched``, which puts it
    back; one that did not would change what every later run in the process does, and a mutant
    judged after it could be "killed" by the leak. Comparing identities after the runs names
    such a leak instead of trusting it away."""
    changed: list[str] = []
    for owner, saved in snapshot:
        current = vars(owner)
        keys = {k for k in set(saved) | set(current) if not _dunder(k)}
        for key in sorted(k for k in keys if current.get(k, _MISSING) is not saved.get(k, _MISSING)):
            module = isinstance(owner, types.ModuleType)
            where = owner.__name__ if module else f"{owner.__module__}.{owner.__qualname__}"
            changed.append(f"{where}.{key}")
    return sorted(changed)


def _dunder(key: str) -> bool:
    """Python's and pydantic's own attributes (``__pydantic_core_schema__`` may be rebuilt
    lazily); no mutant changes one."""
    return key.startswith("__") and key.endswith("__")


def from_pristine(factory: Callable[..., None]) -> Callable[..., None]:
    """``factory``, run after :func:`reset_reference`."""

    @functools.wraps(factory)
    def load(*args: Any, **kwargs: Any) -> None:
        reset_reference()
        factory(*args, **kwargs)

    return load
