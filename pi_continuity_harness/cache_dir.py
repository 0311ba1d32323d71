"""The harness's cache directory, in a module of its own.

Every command sweeps the orphaned temporary directories of the cache
(``commands.sweep_orphaned_directories``) before it starts. It imported the cache's location
from ``targets.realpi.install``, and with it the whole real-Pi package (its ``__init__``: the RPC
client, the bridge, the fake model server, ``http.server``), ~0.1 CPU-s of every process on
the simulator, ``explore`` included (issue 16). ``targets.realpi.install`` re-exports it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_cache_dir"]


def default_cache_dir() -> Path:
    env = os.environ.get("PI_CONTINUITY_HARNESS_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "pi-continuity-harness"
