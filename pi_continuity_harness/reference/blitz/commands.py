"""``/sh`` and its subcommands, with textual equivalents of the menus (native select/input/confirm).

Dialog answers stay outside the model's context. Escape (a dismissed dialog) leaves the
current menu level without action; in the settings and project-template lists it only
drops the unconfirmed input, and every confirmed edit is already saved.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from typing import Protocol

from pi_continuity_harness.api import ExtensionAPI, ExtensionCommandContext, ExtensionContext
from pi_continuity_harness.reference.blitz import messages
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact
from pi_continuity_harness.reference.blitz.constants import (
    COMMAND_NAME,
    CUTOVER_SUBCOMMAND,
    PROJECT_AUTODISCOVER,
    PROJECT_DEFAULT,
    ROLES,
)
from pi_continuity_harness.reference.blitz.paths import ManagedPaths
from pi_continuity_harness.reference.blitz.receiver import TurnTracker
from pi_continuity_harness.reference.blitz.recovery import list_recovery_files
from pi_continuity_harness.reference.blitz.settings import (
    SETTING_KEYS,
    BlitzSettings,
    describe_value,
    save_settings,
)
from pi_continuity_harness.reference.blitz.state import BlitzHandoffError, BlitzRequest, Route
from pi_continuity_harness.reference.blitz.templates import (
    catalogue,
    load_project_selections,
    resolve_project_selection,
    role_default,
    set_project_selection,
)

__all__ = ["CommandHost", "run_command"]


class CommandHost(Protocol):
    """What ``/sh`` needs from the extension instance that registered it (``BlitzHandoff``).

    The command reads the live state and changes it only through these methods, so the
    extension keeps its invariants (no start while the settings are open, valid settings
    applied at once) in one place.
    """

    pi: ExtensionAPI

    @property
    def request(self) -> BlitzRequest | None: ...

    @property
    def settings(self) -> BlitzSettings: ...

    def managed(self) -> ManagedPaths: ...

    def recovery_dir(self) -> str: ...

    def template_notes(self) -> list[tuple[str, bool]]: ...

    def validate_edit(self, key: str, raw: str) -> tuple[BlitzSettings | None, str | None]: ...

    def start_request(self, ctx: ExtensionContext, route: Route) -> BlitzRequest: ...

    def dispatch_call(self, request: BlitzRequest) -> None: ...

    async def cancel(self, ctx: ExtensionCommandContext) -> None: ...

    async def cutover(self, token: str, ctx: ExtensionCommandContext) -> None: ...

    def settings_open(self) -> AbstractContextManager[None]: ...

    def apply_settings(self, settings: BlitzSettings) -> None: ...

    def track_turn(self, tracker: TurnTracker) -> None: ...


ENTER_OTHER = "Enter another filename"


async def run_command(handoff: CommandHost, args: str, ctx: ExtensionCommandContext) -> None:
    words = args.split()
    sub = words[0] if words else ""
    if sub == CUTOVER_SUBCOMMAND:
        await handoff.cutover(words[1] if len(words) > 1 else "", ctx)
        return
    if sub == "":
        await menu(handoff, ctx)
    elif sub == "start":
        await start(handoff, ctx)
    elif sub == "help":
        ctx.ui.notify(messages.help_text(), "info")
    elif sub == "cancel":
        await handoff.cancel(ctx)
    elif sub == "recover":
        await recover(handoff, ctx)
    elif sub == "settings":
        await settings_menu(handoff, ctx)
    elif sub == "project-template":
        await project_templates(handoff, ctx)
    else:
        ctx.ui.notify(f"Unknown subcommand {sub!r}. Use /{COMMAND_NAME} help.", "warning")


async def menu(handoff: CommandHost, ctx: ExtensionCommandContext) -> None:
    active = handoff.request is not None and handoff.request.active
    primary = "Cancel Session Handoff" if active else "Start Session Handoff"
    choice = await ctx.ui.select(
        "Session Handoff", [primary, "Recovery", "Settings", "Project templates", "Help"]
    )
    if choice is None:
        return
    if choice == primary:
        await (handoff.cancel(ctx) if active else start(handoff, ctx))
    elif choice == "Recovery":
        await recover(handoff, ctx)
    elif choice == "Settings":
        await settings_menu(handoff, ctx)
    elif choice == "Project templates":
        await project_templates(handoff, ctx)
    else:
        ctx.ui.notify(messages.help_text(), "info")


async def start(handoff: CommandHost, ctx: ExtensionCommandContext) -> None:
    try:
        request = handoff.start_request(ctx, "command")
    except BlitzHandoffError as error:
        ctx.ui.notify(f"Session Handoff not started: {error}", "error")
        return
    ctx.ui.notify("Session Handoff requested.", "info")
    if not ctx.is_idle() or ctx.has_pending_messages():
        await ctx.wait_for_idle()
    if handoff.request is request and request.active and not request.call_dispatched:
        handoff.dispatch_call(request)


# ====================================================================== settings
async def settings_menu(handoff: CommandHost, ctx: ExtensionCommandContext) -> None:
    if handoff.request is not None and handoff.request.active:
        ctx.ui.notify("Settings are not available while a Session Handoff is active.", "warning")
        return
    with handoff.settings_open():
        paths = handoff.managed()
        for note, failed in handoff.template_notes():
            ctx.ui.notify(note, "error" if failed else "warning")
        while True:
            options = [
                f"{key}: {describe_value(handoff.settings, key, paths.recovery)}" for key in SETTING_KEYS
            ]
            choice = await ctx.ui.select("Session Handoff settings", options)
            if choice is None:
                return
            key = choice.split(":", 1)[0]
            raw = await _ask_value(handoff, ctx, key)
            if raw is None:
                continue
            await _apply(handoff, ctx, key, raw)


async def _ask_value(handoff: CommandHost, ctx: ExtensionCommandContext, key: str) -> str | None:
    settings = handoff.settings
    if key in ("automaticSessionHandoff", "deleteHandoffAfterReading"):
        return await ctx.ui.select(key, ["true", "false"])
    if key == "deferPromptsFrom":
        answer = await ctx.ui.select(key, ["Request", "Writing (template retrieved)"])
        return None if answer is None else answer.split()[0].lower()
    if key in ("callTemplate", "handoffTemplate"):
        role = "call" if key == "callTemplate" else "handoff"
        paths = handoff.managed()
        directories = [d for d in (settings.template_directory, paths.templates) if d]
        answer = await ctx.ui.select(key, [*catalogue(role, directories), ENTER_OTHER])
        if answer == ENTER_OTHER:
            return await ctx.ui.input(f"{key}: a {role}_*.cmpl file name", settings.template_for(role))
        return answer
    current = describe_value(settings, key, handoff.managed().recovery)
    return await ctx.ui.input(f"{key} (current: {current})", current)


async def _apply(handoff: CommandHost, ctx: ExtensionCommandContext, key: str, raw: str) -> None:
    updated, hint = handoff.validate_edit(key, raw)
    if updated is None:
        ctx.ui.notify(f"{hint} The previous value is kept.", "warning")
        return
    if key in ("recoveryDirectory", "templateDirectory"):
        directory = updated.to_json()[key]
        if directory is not None and not os.path.isdir(directory):
            if not await ctx.ui.confirm("Create directory?", f"Create {directory}?"):
                ctx.ui.notify(
                    f"{key} not changed: {directory} was not created. The previous value is kept.", "warning"
                )
                return
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as error:
                ctx.ui.notify(
                    f"{key} not changed: {directory} cannot be created ({error.strerror}). "
                    "The previous value is kept.",
                    "warning",
                )
                return
    try:
        save_settings(handoff.managed().config, updated)
    except OSError as error:
        ctx.ui.notify(
            f"{key} not changed: {handoff.managed().config} cannot be written ({error.strerror}). "
            "The previous value is kept.",
            "warning",
        )
        return
    handoff.apply_settings(updated)
    ctx.ui.notify(f"{key} set to {describe_value(updated, key, handoff.managed().recovery)}.", "info")


# ====================================================================== project templates
async def project_templates(handoff: CommandHost, ctx: ExtensionCommandContext) -> None:
    paths = handoff.managed()
    settings = handoff.settings
    cwd = os.path.abspath(ctx.cwd)
    directories = [d for d in (settings.template_directory, paths.templates) if d]
    while True:
        assignments, error = load_project_selections(paths.project_templates)
        if error is not None:
            ctx.ui.notify(error, "warning")
            return
        own = assignments.get(cwd, {})
        effective = resolve_project_selection(
            paths.project_templates,
            cwd,
            {"call": settings.call_template, "handoff": settings.handoff_template},
        )
        boxes = [
            f"{role.capitalize()}: {own.get(role, PROJECT_AUTODISCOVER)} (effective {effective.names[role]})"
            for role in ROLES
        ]
        choice = await ctx.ui.select(f"Project templates for {cwd}", boxes)
        if choice is None:
            return
        role = "call" if choice.startswith("Call") else "handoff"
        default = role_default(role)
        options = [PROJECT_AUTODISCOVER, PROJECT_DEFAULT] + [
            name for name in catalogue(role, directories) if name != default
        ]
        picked = await ctx.ui.select(f"{role.capitalize()} template for {cwd}", options)
        if picked is None:
            continue
        try:
            changed = set_project_selection(
                paths.project_templates, cwd, role, None if picked == PROJECT_AUTODISCOVER else picked
            )
        except (OSError, ValueError) as failure:
            ctx.ui.notify(f"Project template not changed: {failure}", "warning")
            continue
        if changed:
            ctx.ui.notify(f"{role.capitalize()} template for {cwd}: {picked}.", "info")
        else:
            ctx.ui.notify(
                f"{role.capitalize()} template for {cwd} is already {picked}; nothing written.", "info"
            )


# ====================================================================== recovery
async def recover(handoff: CommandHost, ctx: ExtensionCommandContext) -> None:
    if handoff.request is not None and handoff.request.active:
        ctx.ui.notify("Recovery is not available while a Session Handoff is active.", "warning")
        return
    while True:
        files = list_recovery_files(handoff.recovery_dir())
        if not files:
            ctx.ui.notify(f"No recovery files in {handoff.recovery_dir()}.", "info")
            return
        labels = [f"{f.name} ({f.modified})" for f in files]
        choice = await ctx.ui.select("Recovery files", labels)
        if choice is None:
            return
        chosen = files[labels.index(choice)]
        done = await _recover_file(handoff, ctx, chosen.path)
        if done:
            return


async def _recover_file(handoff: CommandHost, ctx: ExtensionCommandContext, path: str) -> bool:
    """One file's actions; True when the command is finished."""
    while True:
        action = await ctx.ui.select(os.path.basename(path), ["Inspect", "Execute", "Discard", "Back"])
        if action is None or action == "Back":
            return False
        try:
            with open(path, encoding="utf-8") as handle:
                content = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            ctx.ui.notify(f"The recovery file {path} cannot be read ({error}); it is kept.", "error")
            return False
        if action == "Inspect":
            ctx.ui.notify(content, "info")
            continue
        if action == "Discard":
            if await ctx.ui.confirm("Discard recovery file?", f"Delete {path}?"):
                error_text = remove_exact(path)
                ctx.ui.notify(
                    f"Could not discard: {error_text}" if error_text else f"Discarded {path}.",
                    "error" if error_text else "info",
                )
                return True
            continue
        _execute(handoff, ctx, path, content)
        return True


def _execute(handoff: CommandHost, ctx: ExtensionCommandContext, path: str, content: str) -> None:
    def completed(ctx: ExtensionCommandContext) -> None:
        error = remove_exact(path)
        ctx.ui.notify(
            f"Could not delete {path}: {error}" if error else f"Recovered prompts done; deleted {path}.",
            "error" if error else "info",
        )

    def failed(ctx: ExtensionCommandContext, reason: str) -> None:
        ctx.ui.notify(f"The recovery turn did not complete ({reason}); {path} is kept.", "warning")

    handoff.track_turn(TurnTracker(content, completed, failed))
    handoff.pi.send_user_message(content)
    ctx.ui.notify(f"Executing the prompts of {os.path.basename(path)} as one turn.", "info")
