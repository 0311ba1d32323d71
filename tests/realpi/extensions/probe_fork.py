"""``session_before_fork`` probes: :func:`blocker` cancels every fork and says so (the
``fork`` operation's cancelled path, ``tests/realpi/test_differential_fidelity.py``)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI


def blocker(pi: ExtensionAPI) -> None:
    def before_fork(event: Any, ctx: Any) -> Any:
        ctx.ui.notify(f"fork blocked ({event.position})", "warning")
        return {"cancel": True}

    pi.on("session_before_fork", before_fork)
