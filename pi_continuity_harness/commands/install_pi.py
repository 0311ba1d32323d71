"""``pi-continuity-harness install-pi``: pinned Node 22 and a Pi release from the npm registry.

``--pi-version`` picks the release (default 1.6.0; any of the supported ones, each installed
beside the others). Reuses an existing installation in the cache directory (after a version
check) unless ``--force``; prints the versions, the paths and the time it took.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._paths import check_directory
from pi_continuity_harness.targets.realpi.install import (
    PI_VERSION,
    SUPPORTED_PI_VERSIONS,
    PiInstallError,
    UnsupportedPiVersionError,
    check_pi_version,
    default_cache_dir,
    install_pi,
)

__all__ = ["check_cache_dir", "register"]

#: The environment variable naming the cache directory (:func:`default_cache_dir`).
CACHE_ENV = "PI_CONTINUITY_HARNESS_CACHE"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "install-pi",
        help=SUMMARIES["install-pi"],
        description=(
            "Install node@22 and @earendil-works/pi-coding-agent (default "
            f"{PI_VERSION}) from the npm registry into a cache directory (default "
            "$PI_CONTINUITY_HARNESS_CACHE or ~/.cache/pi-continuity-harness), each Pi release beside "
            "the others, or reuse it."
        ),
    )
    parser.add_argument("--cache-dir", type=Path, help=f"cache directory (default {default_cache_dir()})")
    parser.add_argument(
        "--pi-version",
        default=PI_VERSION,
        help=f"the Pi release to install (default {PI_VERSION}; supported: {', '.join(SUPPORTED_PI_VERSIONS)})",
    )
    parser.add_argument("--force", action="store_true", help="reinstall even when a working install exists")
    parser.add_argument("--quiet", action="store_true", help="only the final summary")
    parser.set_defaults(func=main)


def check_cache_dir(given: Path | None) -> None:
    """The cache directory can be (or become) a directory the installer writes in, checked as
    every output directory is (:func:`~._paths.check_directory`), under the name it was given by:
    ``--cache-dir``, else ``PI_CONTINUITY_HARNESS_CACHE``, else the default under the home
    directory. Before, only ``--cache-dir`` itself was checked: one under a file, a loop of
    symbolic links, or the variable naming a file were each a traceback (NotADirectoryError,
    RuntimeError, FileExistsError)."""
    if given is not None:
        check_directory("--cache-dir", given.expanduser())
    elif os.environ.get(CACHE_ENV):
        check_directory(CACHE_ENV, default_cache_dir())
    else:
        check_directory("the cache directory", default_cache_dir())


def main(args: argparse.Namespace) -> int:
    check_cache_dir(args.cache_dir)

    def log(line: str) -> None:
        if not args.quiet:
            print(line, flush=True)

    try:
        version = check_pi_version(args.pi_version)
    except UnsupportedPiVersionError as error:
        raise UsageError(f"--pi-version: {error}") from None
    try:
        installation = install_pi(args.cache_dir, version=version, force=args.force, log=log)
    except PiInstallError as error:
        raise UsageError(str(error)) from None
    state = "reused" if installation.cached else "installed"
    print(
        f"Pi {installation.pi_version} with Node {installation.node_version} {state} in "
        f"{installation.seconds:.1f} s\n  node: {installation.node_path}\n  pi:   {installation.pi_cli_path}"
    )
    return 0
