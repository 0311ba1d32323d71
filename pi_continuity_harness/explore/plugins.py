"""Which explorer plug-in explores which system.

The system of an implementation comes from the one registry of
:mod:`pi_continuity_harness.scenario.implementations`; this maps it to the plug-in that
generates, checks and shrinks that system's cases.
"""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.blitz.plugin import PLUGIN as BLITZ
from pi_continuity_harness.explore.continuity.plugin import PLUGIN as CONTINUITY
from pi_continuity_harness.explore.plugin import ExplorerPlugin
from pi_continuity_harness.scenario.implementations import implementation_system

__all__ = ["PLUGINS", "plugin_for", "plugin_named"]

#: The plug-in of every system, by system name.
PLUGINS: dict[str, ExplorerPlugin[Any]] = {plugin.system: plugin for plugin in (CONTINUITY, BLITZ)}


def plugin_named(system: str) -> ExplorerPlugin[Any]:
    """The plug-in of ``system`` (a name of ``scenario.implementations.SYSTEMS``)."""
    return PLUGINS[system]


def plugin_for(implementation: str | ExtensionFactory) -> ExplorerPlugin[Any]:
    """The plug-in of the system ``implementation`` implements."""
    return plugin_named(implementation_system(implementation).name)
