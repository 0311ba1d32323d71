"""Calls an action method while loading, and reports the error as a command description."""

from __future__ import annotations

from pi_continuity_harness.api import ExtensionAPI, ExtensionCommandContext, NotInitializedError


def extension(pi: ExtensionAPI) -> None:
    try:
        pi.send_user_message("too early")
        message = "no error"
    except NotInitializedError as error:
        message = str(error)

    async def noop(args: str, ctx: ExtensionCommandContext) -> None:
        return None

    pi.register_command("loading-error", noop, description=message)
