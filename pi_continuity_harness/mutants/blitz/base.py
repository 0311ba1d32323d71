"""What every blitz handoff mutant shares: the registry, the base class, the decorator.

A mutant is a subclass of :class:`~pi_continuity_harness.reference.blitz.BlitzHandoff` that
overrides one method (or rebinds one name for its own instance), so mutants can share a process;
the kill matrix still runs each in processes of its own. Its factory is the classmethod
``<Class>.extension`` (``--extension pi_continuity_harness.mutants.blitz.<module>:<Class>.extension``),
which declares ``pi_continuity_system = "pi-blitz-handoff"``.

Each mutant declares the catalogue rules it breaks (``rules``, ids of
``pi_continuity_harness/rules/blitz.yaml``; unknown ids fail at import) and the explorer
invariant expected to catch it (``invariant``), or why the explorer cannot reach the rule
(``unreachable``): the kill matrix then judges it by the features alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.reference.blitz import BlitzHandoff

__all__ = [
    "BLITZ_MUTANTS",
    "SYSTEM",
    "BlitzMutant",
    "Mutant",
    "Proxy",
    "blitz_mutant_names",
    "catalogue_text",
    "mutant",
    "patched",
    "with_new_session",
    "with_ui",
]

SYSTEM = "pi-blitz-handoff"
_CATALOGUE = Path(__file__).resolve().parents[2] / "rules" / "blitz.yaml"


@cache
def _rules() -> dict[str, str]:
    data = yaml.load(
        _CATALOGUE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    return {str(rule["id"]): str(rule["text"]) for rule in data["rules"]}


def catalogue_text(rule: str) -> str:
    """The catalogue's text of ``rule`` (KeyError: no such rule)."""
    return _rules()[rule]


@dataclass(frozen=True)
class BlitzMutant:
    name: str
    #: The catalogue rules it breaks.
    rules: tuple[str, ...]
    how: str
    factory: Callable[[ExtensionAPI], None]
    #: The ``--extension`` value that loads it in a fresh process.
    spec: str
    #: The explorer invariant expected to catch it; None: the explorer cannot reach the rule.
    invariant: str | None = None
    #: Why the explorer cannot reach it (when ``invariant`` is None).
    unreachable: str = ""

    @property
    def rule(self) -> str:
        """The rules it breaks, with their catalogue text (for the kill matrix's listing)."""
        return "; ".join(f"{r} {catalogue_text(r)}" for r in self.rules)


BLITZ_MUTANTS: dict[str, BlitzMutant] = {}


def blitz_mutant_names() -> list[str]:
    return list(BLITZ_MUTANTS)


class Mutant(BlitzHandoff):
    """Base of every mutant: :meth:`extension` is the mutant's factory."""

    @classmethod
    def extension(cls, pi: ExtensionAPI) -> None:
        """The extension factory of this mutant (what the reference's ``extension`` is to it)."""
        cls(pi).register()


# A bound classmethod reads attributes of its function: every ``<Mutant>.extension`` declares the system.
Mutant.extension.__func__.pi_continuity_system = SYSTEM  # type: ignore[attr-defined]


def mutant(
    *rules: str, how: str, invariant: str | None = None, unreachable: str = ""
) -> Callable[[type[Mutant]], type[Mutant]]:
    """Register a mutant class: the rules it breaks, how, and what exploration should find."""
    for rule in rules:
        catalogue_text(rule)  # an unknown id fails at import
    if not rules:
        raise ValueError("a mutant breaks at least one rule")
    if (invariant is None) == (not unreachable):
        raise ValueError("a mutant names the invariant that catches it, or why none can")

    def register(cls: type[Mutant]) -> type[Mutant]:
        name = _snake(cls.__name__)
        if name in BLITZ_MUTANTS:
            raise ValueError(f"two blitz mutants are named {name}")
        spec = f"{cls.__module__}:{cls.__qualname__}.extension"
        BLITZ_MUTANTS[name] = BlitzMutant(name, rules, how, cls.extension, spec, invariant, unreachable)
        return cls

    return register


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return "blitz_" + out


def with_new_session(ctx: Any, new_session: Callable[..., Any]) -> Any:
    """``ctx`` with its ``new_session`` replaced (everything else passes through)."""

    class _Ctx:
        def __getattr__(self, name: str) -> Any:
            return new_session if name == "new_session" else getattr(ctx, name)

    return _Ctx()


class Proxy:
    """``inner`` with some attributes replaced (``overrides``); everything else passes through."""

    def __init__(self, inner: Any, **overrides: Any) -> None:
        self._inner = inner
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(self._inner, name)


def with_ui(ctx: Any, **ui: Any) -> Any:
    """``ctx`` whose ``ui`` has some methods replaced."""
    return Proxy(ctx, ui=Proxy(ctx.ui, **ui))


@contextlib.contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[Any]:
    """``module.name`` is ``value`` inside the block (the original is given, then restored)."""
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield original
    finally:
        setattr(module, name, original)
