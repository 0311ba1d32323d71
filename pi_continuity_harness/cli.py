"""``pi-continuity-harness``: the command line.

Each subcommand lives in its own module under :mod:`pi_continuity_harness.commands`;
this module only assembles them. Bad arguments and bad input files end with exit status 2
and a message that names the argument or the file and field.

A subcommand's module is imported only when that subcommand is on the command line: the
modules pull in the simulator, pytest, pydantic and rich (0.5 s or more), which
``--version`` and ``--help`` do not need (issue 16: both under 0.2 s). Without a
subcommand, each is registered as a placeholder with its one-line summary
(``commands.SUMMARIES``), which is all the top-level help shows.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import select
import signal
import sys
import threading
from collections.abc import Sequence

from pi_continuity_harness import PI_VERSION, __version__
from pi_continuity_harness.commands import (
    SUMMARIES,
    UsageError,
    search_current_directory,
    sweep_orphaned_directories,
    usage_errors,
)

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: Subcommand modules, in the order ``--help`` lists them.
SUBCOMMANDS: tuple[str, ...] = tuple(name.replace("-", "_") for name in SUMMARIES)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser. ``command``: register that subcommand's module only (None: every module);
    the others get a placeholder with their summary."""
    parser = argparse.ArgumentParser(
        prog="pi-continuity-harness",
        description=(
            "Deterministic simulation and conformance harness for Pi 1.6 session-continuity extensions."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__} (the simulator models Pi {PI_VERSION})",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        command_name = name.replace("_", "-")
        if command is None or command == command_name:
            importlib.import_module(f".commands.{name}", __package__).register(subparsers)
        else:
            subparsers.add_parser(command_name, help=SUMMARIES[command_name], add_help=False)
    return parser


def _command(argv: Sequence[str]) -> str:
    """The subcommand named on the command line ('' when there is none: only the top-level
    options, which never need a subcommand's module)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in SUMMARIES else ""
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status. Module specs (``--extension my_ext:factory``)
    resolve from the current directory first, as with ``python -m``."""
    if argv is None:
        _no_collector_pass_at_teardown()
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = _command(arguments)
    if argv is None and command:
        # Before the subcommand's modules create their dataclasses (not for ``--version`` or
        # ``--help``, which create none): the methods' code an earlier process compiled.
        from pi_continuity_harness import dataclass_code  # noqa: PLC0415

        dataclass_code.install()
    parser = build_parser(command)
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    saved_path = list(sys.path)
    search_current_directory()
    # A harness process killed by SIGKILL ran no ``finally`` block: its temporary directories
    # (on /dev/shm, in memory) go now (``scenario/owned_dirs.py``).
    sweep_orphaned_directories()
    # SIGTERM (a CI timeout, ``timeout``, a killed job) ends a command as Ctrl-C does, through its
    # ``finally`` blocks: temporary run directories are removed or named, servers it started are
    # stopped. Python's default would end the process on the spot.
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main_thread else None
    try:
        return int(args.func(args))
    except UsageError as error:
        print(f"pi-continuity-harness {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        if not _stdout_gone():
            raise  # another pipe (Pi's stdin, a worker's): a defect to see, not a reader leaving
        # The reader of the output left (``... | head``): stop as a program killed by SIGPIPE
        # does, quietly, after the command's ``finally`` blocks ran. Python ignores SIGPIPE, so
        # the write raised instead, and its traceback (and another when the interpreter
        # flushes stdout at exit) was all a user saw.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _SIGPIPE_STATUS
    except Exception as error:
        if not isinstance(error, usage_errors()):
            raise
        print(f"pi-continuity-harness {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        sys.path[:] = saved_path  # main() called in-process (tests) leaves sys.path as it was


_AT_EXIT: list[bool] = []


def _no_collector_pass_at_teardown() -> None:
    """The command line as a program (``main()`` without arguments: the console script,
    ``python -m``): when it exits, collect the garbage once and freeze what is still alive
    (``gc.freeze``), so that the interpreter's teardown does not walk it again.

    Python's finalization runs the cyclic collector over every tracked object, once before
    and once after it clears the modules (``Py_FinalizeEx``, ``finalize_modules``): a run
    process holds the harness, pytest, pydantic and the session's objects, and those passes
    were 0.07 CPU-s of ``run -k <one scenario>``'s 1.01 (median of 5, issue 16). The
    collection here runs, as before, the finalizers of everything that is already garbage at
    exit, and the handlers registered before this one (``atexit`` runs them last in first out:
    logging's flush, ``weakref.finalize``'s, temporary directories') still run after it. What
    is skipped is the collection of the cycles the modules' teardown leaves, whose finalizers
    Python does not promise to run at exit (the data model, ``object.__del__``); the process
    ends either way. A caller that passes ``argv`` (the tests, in their process) is left as
    it was."""
    if not _AT_EXIT:
        _AT_EXIT.append(True)
        atexit.register(_collect_and_freeze)


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


#: The shell's status of a program that SIGPIPE ended (128 + 13).
_SIGPIPE_STATUS = 128 + signal.SIGPIPE


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (``poll`` reports
    ``POLLERR`` on such a write end, Linux ``pipe(7)``)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test, or closed
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


if __name__ == "__main__":
    sys.exit(main())
