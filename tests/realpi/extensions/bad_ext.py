"""An extension whose factory fails (real Pi refuses to start; the simulator reports and goes on)."""

from __future__ import annotations

from pi_continuity_harness.api import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    raise ValueError("factory exploded")
