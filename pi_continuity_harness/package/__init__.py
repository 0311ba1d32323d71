"""The release gate for a real Pi package (spec §16, §17, §19, §20; issue 13).

``pi-continuity-harness package PATH|TARBALL`` reads a Pi package the way Pi and npm will:

* :mod:`.source` opens a package directory or a packed tarball (bad input: one error naming the file);
* :mod:`.manifest`, :mod:`.docs` — the named manifest, layout and documentation checks;
* :mod:`.scan` (+ ``ts_scan.cjs``) — the entries' module graph, read by the parser Pi loads them with;
* :mod:`.pack` — ``npm pack``: what ships, and whether every imported file is in it;
* :mod:`.static` — the static half in one call.

Each check is a :class:`Check` (pass, fail, needs-a-person, not-run) with its file and field.
"""

from pi_continuity_harness.package.docs import README_TOPICS
from pi_continuity_harness.package.manifest import HOST_PACKAGES, entries
from pi_continuity_harness.package.model import (
    STATUSES,
    Check,
    PackageError,
    PackageInputError,
    Status,
    failed,
)
from pi_continuity_harness.package.pack import Packed, npm_env
from pi_continuity_harness.package.source import PackageInput, open_package
from pi_continuity_harness.package.static import StaticResult, static_gate

__all__ = [
    "HOST_PACKAGES",
    "README_TOPICS",
    "STATUSES",
    "Check",
    "PackageError",
    "PackageInput",
    "PackageInputError",
    "Packed",
    "StaticResult",
    "Status",
    "entries",
    "failed",
    "npm_env",
    "open_package",
    "static_gate",
]
