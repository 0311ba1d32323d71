"""The broken variants of the fixture package, generated from the passing one at test time (so
they never drift from it), each meant to fail exactly one check of the release gate (issue 13)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packages"
FIXTURE = EXAMPLES / "pi-session-continuity"
FIXTURE_DEP = EXAMPLES / "pi-continuity-fixture-dep"
ENTRY = "extensions/session-continuity/index.ts"


def _manifest(directory: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    path = directory / "package.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _sub(directory: Path, relative: str, pattern: str, replacement: str) -> None:
    path = directory / relative
    text, count = re.subn(pattern, replacement, path.read_text(encoding="utf-8"), flags=re.M)
    assert count, (relative, pattern)
    path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class Variant:
    name: str
    edit: Callable[[Path], None]
    #: The one check that fails.
    fails: str
    #: The gate step that decides it: static (manifest, docs, pack) or load (after install).
    phase: str


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "no-pi-extensions", lambda d: _manifest(d, lambda m: m.pop("pi")), "manifest.pi.extensions", "static"
    ),
    Variant(
        "peer-range-not-star",
        lambda d: _manifest(
            d, lambda m: m["peerDependencies"].update({"@earendil-works/pi-coding-agent": ">=1.6.0"})
        ),
        "deps.host-peer:@earendil-works/pi-coding-agent",
        "static",
    ),
    Variant(
        "postinstall-script",
        lambda d: _manifest(
            d, lambda m: m["scripts"].update({"postinstall": "node -e \"console.log('patch')\""})
        ),
        "manifest.no-install-scripts",
        "static",
    ),
    Variant(
        "no-default-export",
        lambda d: _sub(
            d, ENTRY, r"^export default function sessionContinuity", "export function sessionContinuity"
        ),
        "entry.default-export-factory",
        "static",
    ),
    Variant(
        "readme-missing-topic",
        lambda d: _sub(d, "README.md", r"^## Troubleshooting\n(.|\n)*?(?=^## )", ""),
        "docs.readme:troubleshooting",
        "static",
    ),
    Variant(
        "files-omit-imported-module",
        lambda d: _manifest(d, lambda m: m.update(files=[f for f in m["files"] if f != "src"])),
        "pack.imports-shipped",
        "static",
    ),
    Variant(
        "fails-to-load-after-install",
        lambda d: _sub(
            d,
            ENTRY,
            r"^const spec = ",
            'if (!(globalThis as Record<string, unknown>).__neverSet) throw new Error("fixture: fails to load");\n'
            "const spec = ",
        ),
        "load",
        "load",
    ),
)


def make_variant(variant: Variant, directory: Path) -> Path:
    """The variant as a package directory under ``directory``."""
    target = directory / variant.name
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("node_modules", ".git"))
    variant.edit(target)
    return target
