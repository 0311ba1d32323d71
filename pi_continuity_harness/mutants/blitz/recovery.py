"""Mutants of /sh recover and of the overlap rules (reference: Status, cancellation and recovery;
Settings: no overlap)."""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, with_ui

_MENU = "the explorer drives no /sh recover menu"


@mutant("H82", how="Inspect shows the file without its last line", unreachable=_MENU)
class InspectTruncated(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() != "recover":
            await super().run(args, ctx)
            return
        notify = ctx.ui.notify

        def shortened(message: str, notify_type: str = "info") -> None:
            if message.startswith("--- Deferred Prompt"):
                message = "\n".join(message.rstrip("\n").splitlines()[:-1]) + "\n"
            notify(message, notify_type)

        await super().run(args, with_ui(ctx, notify=shortened))


@mutant("H83", how="Execute sends each recovered prompt as a message of its own", unreachable=_MENU)
class ExecuteSeparately(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        pi = self.pi

        def send_user_message(content: Any, **options: Any) -> None:
            if isinstance(content, str) and content.startswith("--- Deferred Prompt"):
                parts = ["--- Deferred Prompt" + p for p in content.split("--- Deferred Prompt") if p]
                for part in parts[:-1]:
                    pi.send_user_message(part.rstrip("\n") + "\n", deliver_as="followUp")
                content = parts[-1]
            pi.send_user_message(content, **options)

        self.pi = Proxy(pi, send_user_message=send_user_message)
        try:
            await super().run(args, ctx)
        finally:
            self.pi = pi


@mutant("H84a", how="the recovery file stays after the recovery turn completed", unreachable=_MENU)
class RecoveryKeptAfterTurn(Mutant):
    def track_turn(self, tracker: Any) -> None:
        tracker.on_completed = lambda ctx: ctx.ui.notify("Recovered prompts done.", "info")
        super().track_turn(tracker)


@mutant("H85a", how="Discard removes every file of the recovery directory", unreachable=_MENU)
class DiscardRemovesAll(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        confirm = ctx.ui.confirm
        directory = self.recovery_dir()

        async def confirming(title: str, message: str, **options: Any) -> bool:
            answer = await confirm(title, message, **options)
            if answer and "discard" in title.lower() and os.path.isdir(directory):
                for name in sorted(os.listdir(directory)):
                    if os.path.isfile(os.path.join(directory, name)):
                        os.remove(os.path.join(directory, name))
            return bool(answer)

        await super().run(args, with_ui(ctx, confirm=confirming))


class _HiddenRequest(Mutant):
    """Runs one ``/sh`` subcommand as if no handoff were active (the overlap check sees none)."""

    SUBCOMMAND = ""

    async def run(self, args: str, ctx: Any) -> None:
        request = self.request
        if args.strip() != self.SUBCOMMAND or request is None or not request.active:
            await super().run(args, ctx)
            return
        self.request = None
        try:
            await super().run(args, ctx)
        finally:
            if self.request is None:
                self.request = request


@mutant("H87a", how="/sh recover runs while a handoff is active", unreachable=_MENU)
class RecoverWhileActive(_HiddenRequest):
    SUBCOMMAND = "recover"


@mutant(
    "H87b",
    how="/sh settings opens while a handoff is active",
    unreachable="the explorer edits settings only with invalid values",
)
class SettingsWhileActive(_HiddenRequest):
    SUBCOMMAND = "settings"


@mutant("H85b", how="Discard deletes the file whatever the confirmation says", unreachable=_MENU)
class DiscardWithoutConfirmation(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        confirm = ctx.ui.confirm

        async def always(title: str, message: str, **options: Any) -> bool:
            await confirm(title, message, **options)
            return True

        await super().run(args, with_ui(ctx, confirm=always) if args.strip() == "recover" else ctx)
