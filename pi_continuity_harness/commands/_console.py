"""The rich console every command prints its tables and progress lines with."""

from __future__ import annotations

import errno

from rich.console import Console

__all__ = ["terminal_console"]


class _Console(Console):
    """A console whose closed output ends the command as any other write to it would.

    rich catches a ``BrokenPipeError`` itself (``Console._check_buffer``) and raises
    ``SystemExit(1)`` from ``on_broken_pipe``; inside the suite's pytest hooks that became an
    ``INTERNALERROR`` dump of 80 lines (``run | head``). Raised as ``BrokenPipeError``, it is
    what ``print`` raises, which the suite carries out of pytest and ``cli.main`` turns into
    the quiet exit of a program that SIGPIPE ended."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "the reader of the output closed it")


def terminal_console(width: int) -> Console:
    """A console ``width`` columns wide when not on a terminal (CI logs are not terminals, and
    rich would squeeze the tables into 80 columns there), the terminal's width on one."""
    probe = Console()
    return _Console(highlight=False, width=None if probe.is_terminal else width)
