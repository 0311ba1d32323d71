"""The release gate for a real Pi package (spec §16, §17, §19, §20; issue 13).

``pi-continuity-harness package PATH|TARBALL`` reads a Pi package the way Pi and npm will:

* :mod:`.source` opens a package directory or a packed tarball (bad input: one error naming the file);
* :mod:`.manifest`, :mod:`.docs` — the named manifest, layout and documentation checks;
* :mod:`.scan` (+ ``ts_scan.cjs``) — the entries' module graph, read by the parser Pi loads them with;
* :mod:`.pack` — ``npm pack``: what ships, and whether every imported file is in it;
* :mod:`.static` — the static half in one call;
* :mod:`.registry` — Verdaccio (pinned) on 127.0.0.1, publish;
* :mod:`.install` — ``pi install`` (npm, ``-l``, local path, ``-e``), load, ``pi remove``;
* :mod:`.suite` — the conformance suite through the installed package;
* :mod:`.gate` — all of it in order; :mod:`.record` — the §20 validation record.

Each check is a :class:`Check` (pass, fail, needs-a-person, not-run) with its file and field.
"""

from pi_continuity_harness.package.docs import BLITZ_README_TOPICS, README_TOPICS, readme_topics
from pi_continuity_harness.package.gate import GateResult, SuiteOutcome, run_gate
from pi_continuity_harness.package.install import SOURCES
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
from pi_continuity_harness.package.record import record_json, write_record
from pi_continuity_harness.package.registry import VERDACCIO_VERSION
from pi_continuity_harness.package.source import PackageInput, open_package
from pi_continuity_harness.package.static import StaticResult, static_gate
from pi_continuity_harness.package.suite import DEFAULT_SUITE_TAGS, suite_hook

__all__ = [
    "BLITZ_README_TOPICS",
    "DEFAULT_SUITE_TAGS",
    "HOST_PACKAGES",
    "README_TOPICS",
    "SOURCES",
    "STATUSES",
    "VERDACCIO_VERSION",
    "Check",
    "GateResult",
    "PackageError",
    "PackageInput",
    "PackageInputError",
    "Packed",
    "StaticResult",
    "Status",
    "SuiteOutcome",
    "entries",
    "failed",
    "npm_env",
    "open_package",
    "readme_topics",
    "record_json",
    "run_gate",
    "static_gate",
    "suite_hook",
    "write_record",
]
