"""``/menu`` opens a select and says when it closed; every turn end says whether the menu was
open: a prompt sent while the menu waits for its answer (a dialog answer's ``during``) runs on
after Pi's RPC response, so its turn ends after the menu closed
(``tests/realpi/test_differential_fidelity.py``)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    state = {"open": False}

    async def menu(_args: str, ctx: Any) -> None:
        state["open"] = True
        await ctx.ui.select("Menu", ["a", "b"])
        state["open"] = False
        ctx.ui.notify("menu:closed", "info")

    def turn_end(_event: Any, ctx: Any) -> None:
        ctx.ui.notify(f"turn_end:menu_open={state['open']}", "info")

    pi.register_command("menu", menu)
    pi.on("turn_end", turn_end)
