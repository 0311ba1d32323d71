"""Exercises the rest of the bridged API from commands; each result is notified as one line."""

from __future__ import annotations

import json
from typing import Any

from pi_continuity_harness.api import (
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    StaleContextError,
)

#: Results of ``/fresh`` whose ctx was stale afterwards (as Pi's is after newSession).
STALE_AFTER_NEW_SESSION: list[Any] = []


def extension(pi: ExtensionAPI) -> None:
    def note(ctx: ExtensionContext, label: str, value: Any) -> None:
        ctx.ui.notify(f"{label}: {json.dumps(value, sort_keys=True, default=str)}", "info")

    async def on_start(event: Any, ctx: ExtensionContext) -> None:
        note(ctx, "start", {"reason": event.reason, "previous": event.previous_session_file is not None})

    async def api(args: str, ctx: ExtensionCommandContext) -> None:
        pi.append_entry("probe-api", {"n": 1})
        pi.set_session_name("probe session")
        settings = pi.get_settings()
        registry = ctx.model_registry
        note(
            ctx,
            "api",
            {
                "compaction": settings.get("compaction"),
                "sessionName": pi.get_session_name(),
                "thinking": pi.get_thinking_level(),
                "tools": pi.get_active_tools()[:4],
                "models": [m.full_id for m in registry.get_all()],
                "available": [m.full_id for m in registry.get_available()],
                "big": (registry.find("fake", "fake-big") or None) is not None,
                "auth": registry.has_configured_auth(registry.get_all()[0]),
                "leafIsLast": ctx.session_manager.get_leaf_id()
                == ctx.session_manager.get_entries()[-1]["id"],
                "header": (ctx.session_manager.get_header() or {}).get("type"),
                "pending": ctx.has_pending_messages(),
                "usage": ctx.get_context_usage() is not None,
                "prompt": bool(ctx.get_system_prompt()),
            },
        )

    async def switch(args: str, ctx: ExtensionCommandContext) -> None:
        found = ctx.model_registry.find("fake", "fake-big")
        assert found is not None
        note(ctx, "setModel", await pi.set_model(found))

    async def send(args: str, ctx: ExtensionCommandContext) -> None:
        pi.send_user_message(f"from extension: {args}")
        await ctx.wait_for_idle()
        note(ctx, "sent", {"idle": ctx.is_idle()})

    async def fresh(args: str, ctx: ExtensionCommandContext) -> None:
        async def inside(new_ctx: ExtensionCommandContext) -> None:
            note(new_ctx, "withSession", {"entries": len(new_ctx.session_manager.get_entries())})

        result = await ctx.new_session(
            parent_session=ctx.session_manager.get_session_file(), with_session=inside
        )
        try:
            note(ctx, "newSession", result)
        except StaleContextError:  # the command's ctx belongs to the replaced session
            STALE_AFTER_NEW_SESSION.append(result)

    async def compact(args: str, ctx: ExtensionCommandContext) -> None:
        def done(result: dict[str, Any]) -> None:
            note(ctx, "compacted", {"summary": result.get("summary", "")[:9]})

        def failed(error: Exception) -> None:
            note(ctx, "compactFailed", str(error))

        ctx.compact(custom_instructions=args or None, on_complete=done, on_error=failed)

    pi.on("session_start", on_start)
    pi.register_command("api", api)
    pi.register_command("switch", switch)
    pi.register_command("send", send)
    pi.register_command("fresh", fresh)
    pi.register_command("cmp", compact)
