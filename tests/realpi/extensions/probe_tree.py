"""Tree-navigation probes (``tests/realpi/test_tree_navigation.py``): :func:`blocker` cancels
every navigation and says what ``session_before_tree`` prepared; :func:`settled_holder` holds
its ``agent_settled`` handler on a model call and registers ``/hold`` (waits for idle, then says
where the leaf is); :func:`navigator` registers ``/nav`` (``ctx.navigate_tree`` at the leaf, to
an unknown entry, then to the first entry with a label)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI


def blocker(pi: ExtensionAPI) -> None:
    def before_tree(event: Any, ctx: Any) -> Any:
        p = event.preparation
        on_path = p.common_ancestor_id == p.target_id
        ctx.ui.notify(
            f"tree blocked: {len(p.entries_to_summarize)} abandoned, ancestor is target: {on_path}, "
            f"summary: {p.user_wants_summary}, old leaf is leaf: {p.old_leaf_id == ctx.session_manager.get_leaf_id()}",
            "warning",
        )
        return {"cancel": True}

    pi.on("session_before_tree", before_tree)


def settled_holder(pi: ExtensionAPI) -> None:
    async def settled(_event: Any, ctx: Any) -> None:
        model = ctx.model
        if model is None:
            return
        text = {"type": "text", "text": "Note the settlement."}
        context = {
            "systemPrompt": "You note settlements.",
            "messages": [{"role": "user", "content": [text], "timestamp": 0}],
        }
        await ctx.model_registry.complete(model, context, max_tokens=64)

    async def hold(_args: str, ctx: Any) -> None:
        await ctx.wait_for_idle()
        leaf = ctx.session_manager.get_leaf_id()
        entry = ctx.session_manager.get_entry(leaf) if leaf else None
        ctx.ui.notify(f"idle at a {entry.get('type') if entry else None} entry", "info")

    pi.on("agent_settled", settled)
    pi.register_command("hold", hold)


def navigator(pi: ExtensionAPI) -> None:
    async def nav(_args: str, ctx: Any) -> None:
        leaf = ctx.session_manager.get_leaf_id()
        said = [str(await ctx.navigate_tree(leaf))]
        try:
            await ctx.navigate_tree("nope")
        except Exception as error:
            said.append(str(error))
        first = ctx.session_manager.get_entries()[0]["id"]
        result = await ctx.navigate_tree(first, label="start")
        said.append(str(result.get("cancelled")))
        ctx.ui.notify(" | ".join(said), "info")

    pi.register_command("nav", nav)
