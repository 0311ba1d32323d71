"""The harness's cache directory, in a module of its own.

Every command sweeps the orphaned temporary directories of the cache
(``commands.sweep_orphaned_directories``) before it starts. It imported the cache's location
from ``targets.realpi.install``, and with it the whole real-Pi package (its ``__init__``: the RPC
client, the bridge, the fake model server, ``http.server``), ~0.1 CPU-s of every process on
the simulator, ``explore`` included (issue 16). ``targets.realpi.install`` re-exports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar, cast

from pi_continuity_harness.whole_file import replace_whole

__all__ = ["default_cache_dir", "kept"]

_T = TypeVar("_T")


def default_cache_dir() -> Path:
    env = os.environ.get("PI_CONTINUITY_HARNESS_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "pi-continuity-harness"


def kept(kind: str, key: Iterable[bytes], make: Callable[[], _T], usable: Callable[[object], bool]) -> _T:
    """``make()``, kept in the cache directory (``<kind>/<digest of key>.pickle``) for later
    processes: what an earlier process kept under the same ``key`` (and Python version), if it
    can be read and is ``usable``, else ``make()`` again, kept anew.

    For what every harness process derives from the package's own files, the same each time:
    ``key`` must hold everything the value depends on (the file's bytes, the versions of the
    libraries that make it). An exception of ``make`` propagates and nothing is kept; a cache
    that cannot be written is left as it is. Like Python's bytecode cache, a kept file is
    trusted: it is the cache directory owner's own.

    Kept only in a cache directory that is there already (``install-pi``, the real-Pi target
    and the test command make it): a command that stops at a setup error writes nothing
    (``tests/realpi/test_pi_versions.py``: ``run --target pi --pi-version <not installed>``
    with a cache directory that is not there leaves none), and a machine that never made one
    gets none from a run on the simulator; the value is then made in each process, as
    before."""
    digest = hashlib.sha256(f"python {sys.version}".encode())
    for part in key:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    root = default_cache_dir()
    path = root / kind / f"{digest.hexdigest()}.pickle"
    try:
        with open(path, "rb") as stream:
            value = pickle.load(stream)
        if usable(value):
            return cast(_T, value)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
        pass  # not kept yet, or not readable as kept: made again and kept anew
    value = make()
    if root.is_dir():  # never the one to make the cache directory (see above)
        with contextlib.suppress(OSError):
            path.parent.mkdir(exist_ok=True)
            replace_whole(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return value
