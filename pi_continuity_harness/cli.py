"""``pi-continuity-harness``: the command line.

Each subcommand lives in its own module under :mod:`pi_continuity_harness.commands`;
this module only assembles them. Bad arguments and bad input files end with exit status 2
and a message that names the argument or the file and field.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pi_continuity_harness import __version__
from pi_continuity_harness.commands import UsageError

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS: tuple[str, ...] = (
    "run",
    "simulate",
    "replay",
    "schema",
    "install_pi",
    "compare",
    "explore",
    "mutants",
    "rules",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-continuity-harness",
        description=(
            "Deterministic simulation and conformance harness for Pi 1.6 session-continuity extensions."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f".commands.{name}", __package__).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as error:
        print(f"pi-continuity-harness {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
