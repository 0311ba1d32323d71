"""``npm pack``: exactly what ships, and whether every file the extension imports is in it.

A directory is packed with ``npm pack --json --ignore-scripts`` (no lifecycle script of the
package runs in the gate); a tarball is what ships as it is. ``pack.imports-shipped`` compares
the entries and their relative import graph (read by Pi's parser, :mod:`.scan`) with the packed
list: a file the extension imports that is not packed is an error a user would meet as "Cannot
find module" after ``pi install``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from pi_continuity_harness.package.model import Check, PackageError
from pi_continuity_harness.package.scan import ModuleGraph
from pi_continuity_harness.package.source import PackageInput

__all__ = ["Packed", "npm_env", "pack", "pack_checks"]

_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Packed:
    tarball: Path
    #: Package-relative paths, sorted.
    files: tuple[str, ...]
    size: int
    #: The command that produced it (None: the input was the tarball).
    command: str | None


def npm_env(path: str, npm_cache: Path, tmp: Path) -> dict[str, str]:
    """npm's environment: the given PATH (Node 22 first), a cache of the harness's own, quiet."""
    env = dict(os.environ)
    env.update(
        PATH=path,
        npm_config_cache=str(npm_cache),
        npm_config_update_notifier="false",
        npm_config_fund="false",
        npm_config_audit="false",
        TMPDIR=str(tmp),
    )
    return env


def pack(package: PackageInput, destination: Path, env: dict[str, str]) -> Packed:
    """The package's tarball in ``destination`` and its file list."""
    if package.tarball is not None:
        with tarfile.open(package.tarball, "r:*") as tar:
            names = sorted(
                m.name.removeprefix("package/")
                for m in tar.getmembers()
                if m.isfile() and m.name.startswith("package/")
            )
        return Packed(package.tarball, tuple(names), package.tarball.stat().st_size, None)
    destination.mkdir(parents=True, exist_ok=True)
    argv = ["npm", "pack", "--json", "--ignore-scripts", "--pack-destination", str(destination)]
    try:
        done = subprocess.run(
            argv, cwd=package.root, env=env, capture_output=True, text=True, check=False, timeout=_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PackageError(f"npm pack: {error}") from None
    if done.returncode != 0:
        raise PackageError(f"npm pack failed in {package.root}:\n{done.stderr.strip()[-800:]}")
    result = json.loads(done.stdout)[0]
    return Packed(
        destination / result["filename"],
        tuple(sorted(f["path"] for f in result["files"])),
        int(result["size"]),
        " ".join(argv[:4]),
    )


def pack_checks(package: PackageInput, packed: Packed, graph: ModuleGraph, entries: list[str]) -> list[Check]:
    pj = package.file("package.json")
    shipped = set(packed.files)
    local = sorted({imp.resolved for _f, imp in graph.imports() if imp.resolved} | set(entries))
    unpacked = [name for name in local if name not in shipped]
    problems = []
    if unpacked:
        problems.append(f"imported but not packed: {unpacked}")
    if graph.missing:
        problems.append(f"imported but no such file: {list(graph.missing)}")
    out = [
        Check(
            "pack.imports-shipped",
            "fail" if problems else "pass",
            pj,
            "files",
            "; ".join(problems) or f"{len(local)} imported files of {len(shipped)} packed",
            "pack",
        )
    ]
    lower = {name.lower() for name in shipped}
    for doc in ("README.md", "LICENSE", "CHANGELOG.md"):
        out.append(
            Check(f"pack.ships:{doc}", "pass" if doc.lower() in lower else "fail", pj, "files", "", "pack")
        )
    return out
