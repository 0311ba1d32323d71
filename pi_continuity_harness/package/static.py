"""The static half of the gate: manifest, entries, dependencies, docs and pack, no Pi process.

:func:`static_gate` opens nothing itself: it is given an opened :class:`PackageInput`, reads
the entries with Pi's parser, packs the package and returns every check in a fixed order
(manifest, entries, dependencies, pack, docs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pi_continuity_harness.package.docs import docs_checks
from pi_continuity_harness.package.manifest import dependency_checks, entries, entry_checks, manifest_checks
from pi_continuity_harness.package.model import Check
from pi_continuity_harness.package.pack import Packed, pack, pack_checks
from pi_continuity_harness.package.scan import scan
from pi_continuity_harness.package.source import PackageInput
from pi_continuity_harness.targets.realpi import PiInstallation

__all__ = ["StaticResult", "static_gate"]


@dataclass(frozen=True)
class StaticResult:
    checks: list[Check]
    packed: Packed
    entries: list[str]


def static_gate(
    package: PackageInput,
    installation: PiInstallation,
    pack_dir: Path,
    npm_env: dict[str, str],
    system: str | None = None,
) -> StaticResult:
    found = entries(package)
    graph = scan(installation, package.root, [e for e in found if (package.root / e).is_file()])
    packed = pack(package, pack_dir, npm_env)
    checks = [
        *manifest_checks(package),
        *entry_checks(package, graph),
        *dependency_checks(package, graph),
        *pack_checks(package, packed, graph, found),
        *docs_checks(package, system),
    ]
    return StaticResult(checks, packed, found)
