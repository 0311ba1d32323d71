"""Which explorer plug-in explores which system.

The system of an implementation comes from the one registry of
:mod:`pi_continuity_harness.scenario.implementations`; this maps it to the plug-in that
generates, checks and shrinks that system's cases.

A plug-in is imported when its system is first asked for, not with this module: an
exploration explores one system, and compiling and running the other plug-in's modules (its
generator, invariants and oracle: 150 million instructions, 2.2 % of a 10-seed Pi Session
Continuity exploration, issue 16) was work for a plug-in nobody used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.plugin import ExplorerPlugin
from pi_continuity_harness.scenario.implementations import (
    BLITZ_HANDOFF,
    SESSION_CONTINUITY,
    implementation_system,
)

__all__ = ["PLUGINS", "plugin_for", "plugin_named"]


def _continuity() -> ExplorerPlugin[Any]:
    from pi_continuity_harness.explore.continuity.plugin import PLUGIN  # noqa: PLC0415 (when asked for)

    return PLUGIN


def _blitz() -> ExplorerPlugin[Any]:
    from pi_continuity_harness.explore.blitz.plugin import PLUGIN  # noqa: PLC0415 (when asked for)

    return PLUGIN


class _Plugins(Mapping[str, ExplorerPlugin[Any]]):
    """The plug-in of every system, by system name, each imported when first looked up."""

    def __init__(self, loaders: dict[str, Callable[[], ExplorerPlugin[Any]]]) -> None:
        self._loaders = loaders

    def __getitem__(self, system: str) -> ExplorerPlugin[Any]:
        return self._loaders[system]()  # a module imported once: later calls find it loaded

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


#: The plug-in of every system, by system name.
PLUGINS: Mapping[str, ExplorerPlugin[Any]] = _Plugins(
    {SESSION_CONTINUITY.name: _continuity, BLITZ_HANDOFF.name: _blitz}
)


def plugin_named(system: str) -> ExplorerPlugin[Any]:
    """The plug-in of ``system`` (a name of ``scenario.implementations.SYSTEMS``)."""
    return PLUGINS[system]


def plugin_for(implementation: str | ExtensionFactory) -> ExplorerPlugin[Any]:
    """The plug-in of the system ``implementation`` implements."""
    return plugin_named(implementation_system(implementation).name)
