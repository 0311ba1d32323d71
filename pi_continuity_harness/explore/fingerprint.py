"""What code judges a seed: the harness's copy and the implementation under test, by their bytes.

Issue 16 asks that an exploration's results be "identical whatever runs them". A seed is a
pure function of its arguments *and of the code that runs it*: on a Dask cluster, a worker
with another revision of the harness, or another copy of the implementation under test (a
user's ``my_ext:factory`` edited on one machine and not on another), gave its seeds other
verdicts, silently, in a report that claims to be the local run's. :func:`fingerprint` names
both by the bytes of their sources, relative to their roots, so two checkouts of one revision
agree wherever they are and one byte changed tells them apart; :mod:`.executor` compares a
worker's with the client's before any seed and again with every task.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterable

__all__ = ["MISSING", "fingerprint", "harness_fingerprint", "implementation_fingerprint"]

#: The files that make a copy of the harness what it is: its code and the suite's features
#: (a mutant's kill test runs them). Both are in a wheel and in a checkout alike.
_FINGERPRINTED = (".py", ".feature")
#: The harness's own package: an implementation inside it is the harness's fingerprint's.
_HARNESS = __name__.split(".")[0]

#: How an implementation fingerprint ends when this process cannot find the implementation.
MISSING = "(not found here)"

_HARNESS_DIGEST: list[str] = []
_IMPLEMENTATION_DIGESTS: dict[str, str] = {}


def _digest(root: str, files: Iterable[str]) -> str:
    """SHA-256 (16 hex digits) of ``files``' paths relative to ``root`` and their bytes, in the
    order of their relative paths."""
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: os.path.relpath(p, root).split(os.sep)):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode() + b"\0")
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:16]


def _tree(root: str, suffixes: tuple[str, ...]) -> list[str]:
    """Every file under ``root`` ending in one of ``suffixes`` (caches excluded)."""
    files: list[str] = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(suffixes))
    return files


def harness_fingerprint() -> str:
    """This copy of the harness: the Python it runs on (``major.minor``) and a digest of its
    files' relative paths and bytes (:data:`_FINGERPRINTED`; the version is in
    ``__init__.py``). Computed once per process (about 20 ms)."""
    if not _HARNESS_DIGEST:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        _HARNESS_DIGEST.append(f"python {python} sources {_digest(root, _tree(root, _FINGERPRINTED))}")
    return _HARNESS_DIGEST[0]


def implementation_fingerprint(spec: str) -> str:
    """The implementation ``spec`` names, as this process would load it: "" when it is the
    harness's own (a reference, a mutant: :func:`harness_fingerprint` covers it); else its
    sources' digest: a TypeScript file's bytes, or the Python sources of the top-level package
    its module belongs to (its ``.py`` files), or of the module's own file when it is a
    top-level module (a sibling module it imports is not covered: keep an implementation in a
    package). A module that cannot be found here says so, which a worker's check reports
    before any seed. Computed once per process and spec."""
    known = _IMPLEMENTATION_DIGESTS.get(spec)
    if known is None:
        known = _IMPLEMENTATION_DIGESTS[spec] = _implementation(spec)
    return known


def _implementation(spec: str) -> str:
    from pi_continuity_harness.scenario.implementations import implementation_module  # noqa: PLC0415

    module = implementation_module(spec)
    if module is None:
        if os.path.isfile(spec):
            return f"implementation {os.path.basename(spec)} {_digest(os.path.dirname(spec), [spec])}"
        return f"implementation {spec} {MISSING}"
    top = module.split(".")[0]
    if top == _HARNESS:
        return ""
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError) as error:
        return f"implementation {module} ({error}) {MISSING}"
    if found is None:
        return f"implementation {module} {MISSING}"
    if found.submodule_search_locations:
        files = [f for location in found.submodule_search_locations for f in _tree(location, (".py",))]
        root = os.path.dirname(next(iter(found.submodule_search_locations)))
        return f"implementation {module} sources {_digest(root, files)}"
    if found.origin and os.path.isfile(found.origin):
        return f"implementation {module} sources {_digest(os.path.dirname(found.origin), [found.origin])}"
    return f"implementation {module} (built in, {found.origin})"


def fingerprint(implementation: str | None = None) -> str:
    """The harness's fingerprint and, when ``implementation`` is not the harness's own, the
    implementation's: what a worker must share with the client."""
    own = implementation_fingerprint(implementation) if implementation else ""
    return harness_fingerprint() + (f"; {own}" if own else "")
