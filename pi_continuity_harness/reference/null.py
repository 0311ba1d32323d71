"""The null implementation: an extension that registers nothing and does nothing.

It is the evidence check of the suite (issue 10 item 4: no verdict without evidence). Run
against it, every scenario that checks something an implementation must *do* fails; only the
scenarios tagged ``@host`` may pass, because they test Pi's own behaviour and hold for any
extension. ``pi-continuity-harness run --extension null --null-check`` (and ``null-blitz`` for
pi-blitz-handoff) exits non-zero when any other scenario passes: that scenario would give a
verdict without evidence, and needs a positive witness or the ``@host`` tag.
"""

from __future__ import annotations

from typing import Any

__all__ = ["blitz_extension", "extension"]


def extension(pi: Any) -> None:
    """A Pi Session Continuity "implementation" that registers no handler and no command."""


def blitz_extension(pi: Any) -> None:
    """A pi-blitz-handoff "implementation" that registers no handler, command or tool."""


blitz_extension.pi_continuity_system = "pi-blitz-handoff"  # type: ignore[attr-defined]
