"""A pi-blitz-handoff implementation that registers nothing: every check of an implementation's
effect must fail for it (only scenarios tagged ``@host``, about Pi itself, may pass)."""

from __future__ import annotations

from pi_continuity_harness.api import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    """Registers nothing."""


extension.pi_continuity_system = "pi-blitz-handoff"  # type: ignore[attr-defined]
