"""``pi-continuity-harness package PATH|TARBALL``: the release gate for a Pi package.

Prints every named check (pass, fail, needs a person, not run) with its file and field; exit 0
when none failed, 1 when one did, 2 for input that is not a package (one line naming the file).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._paths import check_file
from pi_continuity_harness.package import (
    Check,
    PackageError,
    PackageInput,
    failed,
    npm_env,
    open_package,
    static_gate,
)
from pi_continuity_harness.targets.realpi import PiInstallation, find_installation
from pi_continuity_harness.targets.realpi.install import cache_tmp_dir

__all__ = ["register"]

_STYLE = {"pass": "green", "fail": "bold red", "needs-a-person": "yellow", "not-run": "dim"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "package",
        help=SUMMARIES["package"],
        description=(
            "Check a Pi package directory or packed tarball for release: the manifest and layout "
            "(spec §16, §17), the README, CHANGELOG and LICENSE (§19), and npm pack (what ships). "
            "Exit 0: no check failed; 1: a check failed; 2: not a package."
        ),
    )
    parser.add_argument(
        "package", type=Path, metavar="PATH|TARBALL", help="a package directory or an npm pack tarball"
    )
    parser.add_argument(
        "--json", dest="json_path", type=Path, metavar="FILE", help="write every check as JSON to FILE"
    )
    parser.add_argument("--quiet", action="store_true", help="only failed checks and the summary")
    parser.set_defaults(func=main)


def render(console: Console, checks: list[Check], *, prefix: str, quiet: bool) -> None:
    """One line per check: status, name, file (relative to the package) [field], detail."""
    width = max((len(c.name) for c in checks), default=0)
    for check in checks:
        if quiet and check.status != "fail":
            continue
        file = check.file.removeprefix(prefix).lstrip("/:") or check.file
        console.print(
            f"[{_STYLE[check.status]}]{check.status:14}[/] {escape(check.name):{width}}  "
            f"{escape(file)} {escape('[' + check.field + ']')} {escape(check.detail)}".rstrip(),
            soft_wrap=True,
        )
    counts = {status: sum(1 for c in checks if c.status == status) for status in _STYLE}
    console.print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['needs-a-person']} need a person, "
        f"{counts['not-run']} not run"
    )


def main(args: argparse.Namespace) -> int:
    check_file("--json", args.json_path)
    with open_package(args.package) as package:
        installation = find_installation()
        if installation is None:
            raise UsageError(
                "Pi is not installed: run `pi-continuity-harness install-pi` first "
                "(the gate reads the entries with Pi's parser and installs with Pi)"
            )
        return _gate(args, package, installation)


def _gate(args: argparse.Namespace, package: PackageInput, installation: PiInstallation) -> int:
    console = output_console()
    tmp_root = cache_tmp_dir(installation.cache_dir)
    work = Path(tempfile.mkdtemp(prefix="pch-gate-", dir=tmp_root))
    try:
        env = npm_env(installation.env_path(), installation.cache_dir / "npm-cache", tmp_root)
        try:
            result = static_gate(package, installation, work / "pack", env)
        except PackageError as error:
            console.print(f"[bold red]gate step failed:[/] {escape(str(error))}")
            return 1
        checks = result.checks
        console.print(f"{package.name}@{package.version} ({args.package})", markup=False)
        render(console, checks, prefix=package.display.rstrip("/"), quiet=args.quiet)
        console.print(
            f"packed {len(result.packed.files)} files ({result.packed.size} bytes): "
            + escape(", ".join(result.packed.files))
        )
        if args.json_path is not None:
            payload = {
                "package": {"name": package.name, "version": package.version, "input": str(args.package)},
                "packed": list(result.packed.files),
                "checks": [c.to_json() for c in checks],
            }
            args.json_path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed(checks) else 0
