"""The gate's input: a package directory or a packed tarball (``npm pack``'s ``package/`` layout).

Bad input is one :class:`PackageInputError` naming the file: a directory without
``package.json``, a ``package.json`` that is not a JSON object, a file that is not a tarball or
a tarball without ``package/package.json``. A tarball is unpacked into a temporary directory the
caller owns (:meth:`PackageInput.close`); the input itself is never changed.
"""

from __future__ import annotations

import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.package.model import PackageInputError
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned

__all__ = ["PackageInput", "open_package"]


@dataclass
class PackageInput:
    """An opened package: its ``root`` (the directory, or the unpacked tarball's ``package/``),
    its manifest, and the tarball when the input was one."""

    root: Path
    manifest: dict[str, Any]
    #: What the user named (printed in every check's file).
    display: str
    tarball: Path | None = None
    _tmp: Path | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", ""))

    @property
    def version(self) -> str:
        return str(self.manifest.get("version", ""))

    def file(self, relative: str) -> str:
        """How a check names a file of the package."""
        return (
            f"{self.display.rstrip('/')}/{relative}" if self.tarball is None else f"{self.display}:{relative}"
        )

    def close(self) -> None:
        if self._tmp is not None:
            remove_owned(self._tmp)
            self._tmp = None

    def __enter__(self) -> PackageInput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_manifest(path: Path, shown: str | None = None) -> dict[str, Any]:
    """``package.json`` as a JSON object, or one error naming the file (as ``shown``)."""
    name = shown or str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise PackageInputError(
            f"{name}: invalid JSON (line {error.lineno} column {error.colno}: {error.msg})"
        ) from None
    except RecursionError:  # json's C decoder recurses per level
        raise PackageInputError(f"{name}: invalid JSON (nested too deeply to read)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PackageInputError(f"{name}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise PackageInputError(f"{name}: not a JSON object (a package manifest is one)")
    return data


def open_package(path: Path, *, tmp_dir: Path | None = None) -> PackageInput:
    """Open ``path``: a directory with ``package.json`` or a tarball with ``package/package.json``."""
    if path.is_dir():
        manifest = path / "package.json"
        if not manifest.is_file():
            raise PackageInputError(f"{manifest}: no such file (not a package directory)")
        return PackageInput(path.resolve(), read_manifest(manifest), str(path))
    if not path.is_file():
        raise PackageInputError(f"{path}: no such file or directory")
    tmp = make_owned_directory("pch-package-", tmp_dir)
    try:
        try:
            with tarfile.open(path, "r:*") as tar:
                tar.extractall(tmp, filter="data")
        except tarfile.ReadError:
            raise PackageInputError(f"{path}: not a package tarball (not a tar or gzip archive)") from None
        except (tarfile.TarError, OSError, EOFError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise PackageInputError(f"{path}: not a package tarball ({reason})") from None
        manifest = tmp / "package" / "package.json"
        if not manifest.is_file():
            raise PackageInputError(f"{path}: not a package tarball (no package/package.json in it)")
        data = read_manifest(manifest, f"{path}:package/package.json")
    except BaseException:
        remove_owned(tmp)
        raise
    return PackageInput(tmp / "package", data, str(path), tarball=path.resolve(), _tmp=tmp)
