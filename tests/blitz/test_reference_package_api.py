"""The blitz reference package's public API is unambiguous: no attribute hides a submodule.

``pi_continuity_harness.reference.blitz`` exports its factory as ``extension`` (the entry
point ``pi_continuity_harness.reference.blitz:extension``, registered as ``blitz`` and
``handoff``). When its wiring module was ``extension.py`` too, the package attribute was the
function, so ``from pi_continuity_harness.reference.blitz import extension`` and ``import
pi_continuity_harness.reference.blitz.extension as m`` gave the factory while the same forms
give the module for every other submodule: ``tests/blitz/reworded.py`` rebound its names on
the factory function, which the reference never reads.
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import pi_continuity_harness.reference.blitz as package
from pi_continuity_harness.scenario.implementations import resolve_implementation


def test_no_package_attribute_hides_a_submodule() -> None:
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        attribute = getattr(package, info.name, module)
        assert attribute is module, f"{package.__name__}.{info.name} is {attribute!r}, not the submodule"


def test_the_factory_is_still_the_package_extension() -> None:
    _name, factory = resolve_implementation("pi_continuity_harness.reference.blitz:extension")
    assert isinstance(factory, types.FunctionType)
    for registered in ("blitz", "handoff"):
        assert resolve_implementation(registered)[1] is factory
    assert factory is package.extension
    assert factory.pi_continuity_system == "pi-blitz-handoff"  # type: ignore[attr-defined]
    assert package.BlitzHandoff.__module__ == f"{package.__name__}.wiring"
