"""Mutants of /sh recover and of the overlap rules (reference: Status, cancellation and recovery;
Settings: no overlap)."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, patched, with_ui
from pi_continuity_harness.reference.blitz import commands, recovery
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact

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


@mutant(
    "H87a",
    how="/sh recover runs while a handoff is active",
    unreachable=(
        "the explorer picks the menu's Recovery while a request is active, but no invariant reads "
        "what recovery then does (a notice, or a dialog that gets no answer)"
    ),
)
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


@mutant("H81a", how="/sh recover lists only the newest recovery file", unreachable=_MENU)
class RecoverListsNewestOnly(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        select = ctx.ui.select

        async def newest(title: str, options: list[str], **kwargs: Any) -> Any:
            if title == "Recovery files" and len(options) > 1:
                options = sorted(options)[-1:]
            return await select(title, options, **kwargs)

        await super().run(args, with_ui(ctx, select=newest) if args.strip() == "recover" else ctx)


@mutant(
    "H80b",
    how="leftover recovery files are executed when the extension loads",
    invariant="reminder_only_while_request_waits",
)
class LeftoversExecutedOnLoad(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        directory = self.recovery_dir()
        if os.path.isdir(directory):
            for name in sorted(os.listdir(directory)):
                path = os.path.join(directory, name)
                if name.endswith(".md") and os.path.isfile(path):
                    with open(path, encoding="utf-8") as handle:
                        self.pi.send_user_message(handle.read())
                    os.remove(path)


def _wrap_tracker(
    tracker: Any, *, odd_fails: bool = False, heal: bool = False, abort_completes: bool = False
) -> Any:
    """``tracker`` with a veto on a failed tool call or a length stop (``odd_fails``), or whose
    failure stays undecided so that a later successful turn completes it (``heal``)."""
    original_end = tracker.on_message_end
    original_settled = tracker.on_settled
    odd: list[bool] = []

    def on_message_end(message: dict[str, Any]) -> None:
        original_end(message)
        if tracker.delivered and (
            (message.get("role") == "toolResult" and message.get("isError"))
            or message.get("stopReason") == "length"
        ):
            odd.append(True)

    def on_settled(aborted: bool, ctx: Any) -> None:
        if abort_completes and aborted:
            aborted, tracker.last_stop = False, "stop"
        if odd_fails and odd and not aborted:
            tracker.last_stop = "error"
        if heal and tracker.delivered and not aborted and tracker.last_stop == "error":
            tracker.last_stop = None
            return
        original_settled(aborted, ctx)

    setattr(tracker, "on_message_end", on_message_end)  # noqa: B010 (an instance's method replaced)
    setattr(tracker, "on_settled", on_settled)  # noqa: B010
    return tracker


_RECOVERY_TURN = "the explorer executes no recovery file"


@mutant(
    "H140",
    how="a recovery turn with a failed tool call or a length stop counts as failed (an extra veto)",
    unreachable=_RECOVERY_TURN,
)
class ToolErrorVetoesRecovery(Mutant):
    def track_turn(self, tracker: Any) -> None:
        super().track_turn(_wrap_tracker(tracker, odd_fails=True))


@mutant(
    "H84e",
    how="a failed recovery turn stays undecided, so a later successful turn deletes the file",
    unreachable=_RECOVERY_TURN,
)
class LaterTurnHealsRecovery(Mutant):
    def track_turn(self, tracker: Any) -> None:
        super().track_turn(_wrap_tracker(tracker, heal=True))


@mutant("H81b", how="the recovery list shows the file names without their dates", unreachable=_MENU)
class RecoveryListUndated(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() != "recover":
            await super().run(args, ctx)
            return
        original = recovery.list_recovery_files

        def undated(directory: str) -> Any:
            return [dataclasses.replace(f, modified="") for f in original(directory)]

        with patched(commands, "list_recovery_files", undated):
            await super().run(args, ctx)


@mutant(
    "H84c",
    how="an aborted recovery turn counts as completed and deletes the file",
    unreachable=_RECOVERY_TURN,
)
class AbortedRecoveryCompletes(Mutant):
    def track_turn(self, tracker: Any) -> None:
        super().track_turn(_wrap_tracker(tracker, abort_completes=True))


@mutant(
    "H86",
    how="a recovery file that cannot be read is removed",
    unreachable="the explorer injects no read fault on recovery files",
)
class UnreadableRecoveryRemoved(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        notify = ctx.ui.notify
        directory = self.recovery_dir()

        def notify_and_remove(message: str, notify_type: str = "info") -> None:
            notify(message, notify_type)
            if notify_type == "error" and os.path.isdir(directory):
                for name in sorted(os.listdir(directory)):
                    if name in message:
                        os.remove(os.path.join(directory, name))

        if args.strip() == "recover":
            ctx = Proxy(ctx, ui=Proxy(ctx.ui, notify=notify_and_remove))
        await super().run(args, ctx)


@mutant(
    "H84d",
    how="a recovery send into a busy session counts as delivered: the file is deleted at once",
    unreachable="the blitz explorer runs no /sh recover while a reply streams",
)
class BusySendCountsAsDelivered(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if ctx.is_idle():
            await super().run(args, ctx)
            return

        def execute(handoff: Any, command_ctx: Any, path: str, content: str) -> None:
            try:
                original(handoff, command_ctx, path, content)
            finally:
                remove_exact(path)

        with patched(commands, "_execute", execute) as original:
            await super().run(args, ctx)


def _dated(directory: str, name: str) -> recovery.RecoveryFile:
    path = os.path.join(directory, name)
    stamp = datetime.fromtimestamp(os.stat(path).st_mtime, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return recovery.RecoveryFile(name, path, stamp)


def _every_file(directory: str) -> list[recovery.RecoveryFile]:
    """Every regular file of the directory, Markdown or not."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [_dated(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]


def _recursive(directory: str) -> list[recovery.RecoveryFile]:
    """Every Markdown file below the directory, subdirectories included."""
    found = []
    for root, _dirs, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                found.append(_dated(directory, os.path.relpath(os.path.join(root, name), directory)))
    return found


class _Listing(Mutant):
    listing: Any

    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "list_recovery_files", type(self).listing):
            await super().run(args, ctx)


@mutant(
    "H81a", how="/sh recover lists every file of the recovery directory, not only Markdown", unreachable=_MENU
)
class RecoverListsEveryFile(_Listing):
    listing = staticmethod(_every_file)


@mutant("H81a", how="/sh recover also lists Markdown files in subdirectories", unreachable=_MENU)
class RecoverListsSubdirectories(_Listing):
    listing = staticmethod(_recursive)


@mutant(
    "H85a",
    how="Discard removes the chosen name from the managed recovery directory, not the configured one",
    unreachable=_MENU,
)
class DiscardInManagedDir(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = remove_exact
        managed = self.managed().recovery

        def elsewhere(path: str) -> str | None:
            return original(os.path.join(managed, os.path.basename(path)))

        with patched(commands, "remove_exact", elsewhere):
            await super().run(args, ctx)


# ---------------------------------------------------------------- a third independent round
@mutant("H85a", how="/sh recover acts on the first listed file, whichever was chosen", unreachable=_MENU)
class RecoverActsOnFirstFile(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = commands._recover_file

        async def first(handoff: Any, ctx: Any, path: str) -> bool:
            files = recovery.list_recovery_files(handoff.recovery_dir())
            return bool(await original(handoff, ctx, files[0].path if files else path))

        with patched(commands, "_recover_file", first):
            await super().run(args, ctx)


def _silent_remove(path: str) -> None:
    """Removes ``path`` and reports nothing, even a failure."""
    remove_exact(path)


@mutant("H85a", how="a Discard whose removal failed is announced as done", unreachable=_MENU)
class DiscardFailureReportedSuccess(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "remove_exact", _silent_remove):
            await super().run(args, ctx)


@mutant(
    "H84a",
    how="a recovery file that cannot be deleted after its completed turn is announced as deleted",
    unreachable=_RECOVERY_TURN,
)
class ExecutedCleanupFailureHidden(Mutant):
    def on_settled(self, event: Any, ctx: Any) -> None:
        with patched(commands, "remove_exact", _silent_remove):
            super().on_settled(event, ctx)


@mutant(
    "H82",
    "H86",
    how="Inspect decodes a recovery file that is not UTF-8 with replacement characters and shows it",
    unreachable=_MENU,
)
class InspectReplacesUndecodable(Mutant):
    """The third independent round's open survivor: ``errors="replace"`` on Inspect's read, so a
    file that is not UTF-8 is shown changed (U+FFFD for its bad bytes, H82 "entire unchanged
    contents") instead of reported as unreadable (H86). Only Inspect's read: the action chosen
    in the file's menu is remembered, and ``open`` in the commands module is shadowed for the
    command's duration (a module global before the builtin), then removed."""

    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() != "recover":
            await super().run(args, ctx)
            return
        select = ctx.ui.select
        chosen: list[Any] = [None]

        async def remembering(title: str, options: list[str], **kwargs: Any) -> Any:
            choice = await select(title, options, **kwargs)
            if "Inspect" in options:
                chosen[0] = choice
            return choice

        def replacing_open(file: Any, mode: str = "r", *rest: Any, **kwargs: Any) -> Any:
            if chosen[0] == "Inspect" and "b" not in mode:
                kwargs["errors"] = "replace"
            return open(file, mode, *rest, **kwargs)

        setattr(commands, "open", replacing_open)  # noqa: B010 (no such attribute for mypy)
        try:
            await super().run(args, with_ui(ctx, select=remembering))
        finally:
            delattr(commands, "open")
