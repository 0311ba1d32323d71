"""A second Python extension (loaded as ``module:``) whose ``session_before_compact`` raises."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ExtensionContext


def extension(pi: ExtensionAPI) -> None:
    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        raise RuntimeError(f"boom from python ({event.reason})")

    pi.on("session_before_compact", before_compact)
