"""The subcommands of ``pi-continuity-harness``, one module each.

Every module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit status). :mod:`pi_continuity_harness.cli` lists them.
"""

__all__ = ["UsageError"]


class UsageError(Exception):
    """A problem with the command line or an input file: exit status 2, this message."""
