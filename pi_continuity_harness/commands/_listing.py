"""Options a listing mode would ignore (``mutants list``, ``explore --list-invariants``).

A listing prints a catalogue and exits: it runs nothing and writes nothing. Before, the options
of a run given with it were silently dropped (``mutants list --json m.json`` wrote no file and
exited 0); each is now refused, named, before anything is printed.
"""

from __future__ import annotations

import argparse
from typing import Any

from pi_continuity_harness.commands import UsageError

__all__ = ["IGNORED_BY_LISTING", "refuse_ignored_options", "remember_run_options"]

#: The namespace attribute holding what :func:`remember_run_options` found.
IGNORED_BY_LISTING = "_ignored_by_listing"


def remember_run_options(parser: argparse.ArgumentParser, *, keep: set[str]) -> None:
    """Note every option of ``parser`` (its longest name and its default) but ``--help`` and
    those whose destination is in ``keep``: the options a listing does not use."""
    options = {
        action.dest: (max(action.option_strings, key=len), action.default)
        for action in parser._actions
        if action.option_strings and action.dest != "help" and action.dest not in keep
    }
    parser.set_defaults(**{IGNORED_BY_LISTING: options})


def refuse_ignored_options(args: argparse.Namespace, listing: str) -> None:
    """A :class:`UsageError` naming each option given (not at its default) that ``listing``
    would ignore."""
    options: dict[str, tuple[str, Any]] = getattr(args, IGNORED_BY_LISTING, {})
    given = [name for dest, (name, default) in options.items() if getattr(args, dest, default) != default]
    if given:
        raise UsageError(f"{', '.join(given)}: not with {listing}, which runs nothing and writes nothing")
