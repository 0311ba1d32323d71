"""The package's TypeScript read by the parser Pi loads extensions with.

Pi 1.6 ships no ``typescript`` and no acorn, but it ships jiti with a bundled Babel
(``node_modules/jiti/dist/babel.cjs``), which Pi's loader uses to transpile ``.ts`` extensions
(``dist/core/extensions/loader.js:495-507``). ``ts_scan.cjs`` runs that ``transform`` with a
Babel plugin whose ``pre()`` hook walks the untransformed AST (before type-only imports are
stripped) and reports, per file, every import (value or type, static, dynamic, ``require``,
re-export), the default export's kind and a parse error with its line. Relative imports are
followed, so the result is the package's own module graph from its entries.

A regex cannot do this: it misses ``const f = (pi) => {}; export default f`` and passes a file
that does not parse (measured, /work/scratch/package/FINDINGS.md §5).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.package.model import PackageError
from pi_continuity_harness.targets.realpi import PiInstallation

__all__ = ["SCANNER", "Import", "ModuleGraph", "ScannedFile", "scan"]

SCANNER = Path(__file__).with_name("ts_scan.cjs")
_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Import:
    source: str
    type_only: bool
    #: import | reexport | dynamic | require | import-type
    kind: str
    line: int | None
    #: The package-relative file a relative import resolved to (None: bare, or not found).
    resolved: str | None


@dataclass(frozen=True)
class ScannedFile:
    imports: tuple[Import, ...]
    #: ``FunctionDeclaration``, ``ArrowFunctionExpression``, ``Identifier:<init kind>``,
    #: ``ExportSpecifier:<kind>``, ``ObjectExpression``... None: no default export.
    default_export: str | None
    default_export_line: int | None
    parse_error: str | None


@dataclass(frozen=True)
class ModuleGraph:
    """Every file reached from the entries (package-relative), and the relative imports that
    name no file."""

    files: dict[str, ScannedFile] = field(default_factory=dict)
    missing: tuple[str, ...] = ()

    def imports(self) -> list[tuple[str, Import]]:
        return [(name, imp) for name, scanned in sorted(self.files.items()) for imp in scanned.imports]


def _file(data: dict[str, Any]) -> ScannedFile:
    default = data.get("defaultExport")
    return ScannedFile(
        imports=tuple(
            Import(
                source=str(i.get("source") or ""),
                type_only=bool(i.get("typeOnly")),
                kind=str(i.get("kind")),
                line=i.get("line"),
                resolved=i.get("resolved"),
            )
            for i in data.get("imports", [])
        ),
        default_export=default["kind"] if default else None,
        default_export_line=default.get("line") if default else None,
        parse_error=data.get("parseError"),
    )


def scan(installation: PiInstallation, root: Path, entries: list[str]) -> ModuleGraph:
    """The module graph of ``entries`` (package-relative paths) under ``root``."""
    if not entries:
        return ModuleGraph()
    argv = [str(installation.node_path), str(SCANNER), str(installation.pi_package_dir), str(root), *entries]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PackageError(f"reading the entries with Pi's parser failed: {error}") from None
    if done.returncode != 0:
        raise PackageError(f"reading the entries with Pi's parser failed:\n{done.stderr.strip()[-800:]}")
    data = json.loads(done.stdout)
    files = {name: _file(value) for name, value in data["files"].items() if value is not None}
    return ModuleGraph(files=files, missing=tuple(sorted(data["missing"])))
