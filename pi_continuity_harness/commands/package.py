"""``pi-continuity-harness package PATH|TARBALL``: the release gate for a Pi package.

Prints every named check (pass, fail, needs a person, not run) with its file and field; exit 0
when none failed, 1 when one did, 2 for input that is not a package (one line naming the file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._output import console as output_console
from pi_continuity_harness.commands._output import progress_printer
from pi_continuity_harness.commands._paths import check_directory, check_distinct, check_file
from pi_continuity_harness.features.suite import RECORD_FILES
from pi_continuity_harness.package import (
    DEFAULT_SUITE_TAGS,
    SOURCES,
    Check,
    PackageError,
    PackageInput,
    PackageInputError,
    npm_env,
    open_package,
    record_json,
    run_gate,
    suite_hook,
    write_record,
)
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
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
            "(spec §16, §17), the README, CHANGELOG and LICENSE (§19), and npm pack (what ships); then publish "
            "it to Verdaccio on 127.0.0.1, install it with Pi's own package manager (npm source, -l, local "
            "path, -e), load it, run the suite through it and remove it. "
            "Exit 0: no check failed; 1: a check failed; 2: not a package."
        ),
    )
    parser.add_argument(
        "package", type=Path, metavar="PATH|TARBALL", help="a package directory or an npm pack tarball"
    )
    parser.add_argument(
        "--json", dest="json_path", type=Path, metavar="FILE", help="write every check as JSON to FILE"
    )
    parser.add_argument(
        "--static",
        action="store_true",
        help="only the manifest, docs and pack checks (no registry, no Pi install)",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="publish and install even when a static check failed (to see what a user would meet)",
    )
    parser.add_argument(
        "--sources",
        default=",".join(SOURCES),
        help=f"install sources to gate, comma-separated (default {','.join(SOURCES)})",
    )
    parser.add_argument(
        "--with-package",
        action="append",
        type=Path,
        default=[],
        metavar="PATH|TARBALL",
        help="also publish this package to the local registry first (a dependency it has no uplink for)",
    )
    # Its own dest: ``command`` is the subcommand's name, which the command line's errors print
    # (``pi-continuity-harness package: ...``, not the slash command's name).
    parser.add_argument(
        "--command",
        dest="slash_command",
        default="continuity",
        help="the slash command the package registers",
    )
    parser.add_argument(
        "--suite",
        default=DEFAULT_SUITE_TAGS,
        metavar="TAGS",
        help=f"tag expression of the suite run through the installed package (default {DEFAULT_SUITE_TAGS!r}; "
        "'none': no suite)",
    )
    parser.add_argument("-k", dest="keyword", help="only the suite scenarios matching this name expression")
    parser.add_argument(
        "--system",
        choices=("pi-session-continuity", "pi-blitz-handoff"),
        help="the system the package implements: its suite and its README topics (default: pi-session-continuity)",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the gate's files here (default: a temporary directory)"
    )
    parser.add_argument(
        "--report", type=Path, metavar="DIR", help="write the validation record (Markdown and JSON)"
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


def _check_outside_packages(packages: list[tuple[str, Path]], outputs: dict[str, Path | None]) -> None:
    """No output at or below a package directory (``packages``: each with how a message names it):
    the gate packs and installs every file there, so ``--json pkg/package.json`` replaced the
    manifest with the checks, and any other file written there would ship with the package."""
    for label, package in packages:
        if not package.is_dir():
            continue
        root = package.resolve()
        for option, path in outputs.items():
            if path is not None and path.resolve().is_relative_to(root):
                raise UsageError(
                    f"{option} {path}: inside {label} {package}: an output must not change an input"
                )


def main(args: argparse.Namespace) -> int:
    check_file("--json", args.json_path)
    check_directory("--report", args.report)
    check_directory("--workdir", args.workdir)
    outputs = {"--json": args.json_path, "--report": args.report, "--workdir": args.workdir}
    packages = [("the package", args.package), *(("--with-package", path) for path in args.with_package)]
    check_distinct(outputs, inputs=packages, writes={"--report": RECORD_FILES})
    _check_outside_packages(packages, outputs)
    sources = [s for s in args.sources.split(",") if s]
    if not sources:  # before: published, nothing installed, every install check unrun, exit 0
        raise UsageError(f"--sources: no source given (one or more of {', '.join(SOURCES)}; --static: none)")
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise UsageError(f"--sources: {', '.join(unknown)}: not one of {', '.join(SOURCES)}")
    if args.static:
        _refuse_what_static_ignores(args)
    # SIGTERM ends the gate as Ctrl-C does (cli.main), through its ``finally`` blocks: the
    # Verdaccio it started is stopped.
    return _open_and_gate(args, sources)


def _refuse_what_static_ignores(args: argparse.Namespace) -> None:
    """``--static`` publishes nothing, installs nothing and runs no suite: the options of those
    steps given with it are refused, named (before, ``--static --sources npm`` or ``--static
    --suite smoke`` exited 0 as if they had been gated)."""
    ignored = [
        name
        for name, given in (
            ("--sources", args.sources != ",".join(SOURCES)),
            ("--with-package", bool(args.with_package)),
            ("--keep-going", args.keep_going),
            ("--suite", args.suite != DEFAULT_SUITE_TAGS),
            ("-k", args.keyword is not None),
        )
        if given
    ]
    if ignored:
        raise UsageError(
            f"{', '.join(ignored)}: not with --static, which publishes nothing, installs nothing and runs no suite"
        )


def _open_and_gate(args: argparse.Namespace, sources: list[str]) -> int:
    with open_package(args.package) as package:
        _check_with_packages(args.with_package)
        installation = find_installation()
        if installation is None:
            raise UsageError(
                "Pi is not installed: run `pi-continuity-harness install-pi` first "
                "(the gate reads the entries with Pi's parser and installs with Pi)"
            )
        return _gate(args, package, installation, sources)


def _check_with_packages(paths: list[Path]) -> None:
    """Each ``--with-package`` opens as a package, now: before, a wrong one was found only when
    the registry had started, and ``--static`` (which publishes nothing) ignored it, exit 0."""
    for path in paths:
        try:
            with open_package(path):
                pass
        except PackageInputError as error:
            raise UsageError(f"--with-package {error}") from None


def _gate(
    args: argparse.Namespace, package: PackageInput, installation: PiInstallation, sources: list[str]
) -> int:
    console = output_console()
    tmp_root = cache_tmp_dir(installation.cache_dir)
    work = args.workdir.resolve() if args.workdir else make_owned_directory("pch-gate-", tmp_root)
    work.mkdir(parents=True, exist_ok=True)
    env = npm_env(installation.env_path(), installation.cache_dir / "npm-cache", tmp_root)

    def log(line: str) -> None:
        if not args.quiet:
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    suite = None
    if not args.static and args.suite != "none":
        suite = suite_hook(
            tags=args.suite or None,
            keyword=args.keyword,
            workdir=work / "suite",
            system=args.system,
            on_result=progress_printer(console, quiet=args.quiet, prefix="  "),
        )
    ok = False
    installed = False
    try:
        try:
            result = run_gate(
                package,
                installation,
                work,
                env,
                sources=sources,
                with_packages=args.with_package,
                command=args.slash_command,
                static_only=args.static,
                keep_going=args.keep_going,
                suite=suite,
                log=log,
                system=args.system,
            )
        except PackageError as error:
            console.print(f"[bold red]gate step failed:[/] {escape(str(error))}")
            return 1
        console.print(f"{package.name}@{package.version} ({args.package})", markup=False)
        render(console, result.checks, prefix=package.display.rstrip("/"), quiet=args.quiet)
        console.print(
            f"packed {len(result.static.packed.files)} files ({result.static.packed.size} bytes): "
            + escape(", ".join(result.static.packed.files))
        )
        if result.stopped:
            console.print(f"[bold red]stopped:[/] {escape(result.stopped)}")
        console.print("timings (s): " + ", ".join(f"{k} {v}" for k, v in result.timings.items()))
        if args.json_path is not None:
            args.json_path.write_text(json.dumps(record_json(result), indent=1) + "\n", encoding="utf-8")
        if args.report is not None:
            md, js = write_record(result, args.report)
            console.print(f"validation record written to {escape(str(md))} and {escape(str(js))}")
        ok = result.ok
        installed = bool(result.sources or result.suite)
    finally:
        if args.workdir is None and (ok or not installed):
            remove_owned(work)
        elif args.workdir is None:
            console.print(f"the gate's files are kept in {work}", markup=False, highlight=False)
    return 0 if ok else 1
