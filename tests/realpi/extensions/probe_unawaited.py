"""``/hold`` waits for the running turn to settle (as ``/sh cancel`` does); ``/probe`` says
whether a ``/hold`` is still waiting: a ``command.wait: false`` scenario shows the probe runs
while the hold is held (``tests/realpi/test_differential_fidelity.py``)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    state = {"holding": False}

    async def hold(_args: str, ctx: Any) -> None:
        state["holding"] = True
        ctx.ui.notify("hold:start", "info")
        await ctx.wait_for_idle()
        state["holding"] = False
        ctx.ui.notify("hold:end", "info")

    async def probe(_args: str, ctx: Any) -> None:
        ctx.ui.notify(f"probe:holding={state['holding']}", "info")

    pi.register_command("hold", hold)
    pi.register_command("probe", probe)
