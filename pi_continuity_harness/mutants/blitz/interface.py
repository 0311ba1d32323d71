"""Mutants of the public interface (reference: Requirements, Public interface): /sh, its menu and
help, the tools and their declarations, the status tool, in-memory sessions."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, with_ui
from pi_continuity_harness.reference.blitz import commands, messages
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact
from pi_continuity_harness.reference.blitz.constants import FINISH_TOOL, GET_TOOL, STATUS_TOOL, WIDGET_KEY
from pi_continuity_harness.reference.blitz.paths import dossier_path
from pi_continuity_harness.reference.blitz.state import BlitzHandoffError

_TEXT = "a fixed text of the interface, not a property of a session's course (the features check it)"
#: The ``/sh`` subcommands the explorer types: ``start``, ``cancel``, ``settings``,
#: ``project-template`` and the bare menu (``explore/blitz/generate.py``).
_UNTYPED = "the explorer types no /sh subcommand but start, cancel, settings, project-template and the menu"


def _replace_text(result: Any, edit: Any) -> Any:
    text = "".join(str(b.get("text", "")) for b in result.content if isinstance(b, dict))
    return type(result)(
        content=[{"type": "text", "text": edit(text)}], details=result.details, is_error=result.is_error
    )


@mutant(
    "H5",
    how="dismissing the /sh menu starts a handoff",
    unreachable=(
        "the explorer dismisses the menu, but the invariants forbid no Call that follows a /sh command: "
        "automatic_initiation_budget takes it for an explicit start"
    ),
)
class MenuDismissStarts(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip():
            await super().run(args, ctx)
            return
        dismissed: list[bool] = []
        select = ctx.ui.select

        async def recording(title: str, options: list[str], **kw: Any) -> str | None:
            answer: str | None = await select(title, options, **kw)
            dismissed.append(answer is None)
            return answer

        await super().run(args, with_ui(ctx, select=recording))
        if dismissed and dismissed[0]:
            await commands.start(self, ctx)


@mutant("H8", how="the cutover waits for a GO confirmation", invariant="dialog_only_for_a_command")
class GoDialogBeforeCutover(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        if not await ctx.ui.confirm("Ready to switch?", "Switch to the new session now?"):
            return
        await super().cutover(token, ctx)


@mutant("H9a", how="the status tool leaves out the warning threshold", unreachable=_TEXT)
class StatusWithoutWarning(Mutant):
    async def tool_status(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_status(call_id, params, signal, ctx)
        return _replace_text(result, lambda t: "\n".join(x for x in t.splitlines() if "Warning" not in x))


@mutant("H9b", how="the status tool always says idle", unreachable=_TEXT)
class StatusAlwaysIdle(Mutant):
    def status_word(self) -> str:
        return "idle"


@mutant(
    "H13",
    how="a model start while a request is active replaces it (an outside mutant; the features tried a "
    "second /sh start only)",
    invariant="one_active_request",
)
class ModelStartReplacesRequest(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        if route == "model" and self.request is not None and self.request.active:
            self.request = None
        return super().start_request(ctx, route)


@mutant(
    "H12",
    how="a model start at or above criticalWarningPercent is refused (an outside mutant; the features "
    "started at low context only)",
    unreachable="the explorer's model starts come in a reply at 11,000 context tokens (5.5 % of its window), "
    "below every critical level it sets (50 % at the lowest)",
)
class ModelStartRefusedAboveCritical(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        percent = self.context_percent(ctx)
        if route == "model" and percent is not None and percent >= self.settings.critical_warning_percent:
            raise BlitzHandoffError("Context use is above the critical level.")
        return super().start_request(ctx, route)


@mutant(
    "H9c",
    how="the status tool always reports the default reminder delay, 60 s (an outside mutant; the features "
    "checked only the default)",
    unreachable=_TEXT,
)
class StatusReportsDefaultDelay(Mutant):
    async def tool_status(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_status(call_id, params, signal, ctx)
        delay = f"Reminder delay: {self.settings.readiness_retry_seconds} s"
        return _replace_text(result, lambda t: t.replace(delay, "Reminder delay: 60 s"))


@mutant("H9c", how="the status tool leaves out the reminder delay", unreachable=_TEXT)
class StatusWithoutReminderDelay(Mutant):
    async def tool_status(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_status(call_id, params, signal, ctx)
        return _replace_text(result, lambda t: "\n".join(x for x in t.splitlines() if "Reminder" not in x))


@mutant(
    "H135",
    how="the template tool is registered as session_handoff_template",
    unreachable=_TEXT,
)
class GetToolRenamed(Mutant):
    def register(self) -> None:
        pi = self.pi

        def register_tool(tool: Any) -> None:
            if tool.name == GET_TOOL:
                tool = dataclasses.replace(tool, name="session_handoff_template")
            pi.register_tool(tool)

        self.pi = Proxy(pi, register_tool=register_tool)
        super().register()


@mutant("H11a", how="/sh start opens the menu instead of starting", invariant="explicit_start_makes_request")
class StartOpensMenu(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        await super().run("" if args.strip() == "start" else args, ctx)


@mutant(
    "H11b",
    how="blitz_handoff start is refused",
    invariant="user_operation_blocked_while_protected",
)
class ModelStartRefused(Mutant):
    async def tool_status(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        if params.get("action") == "start":
            return _replace_text(
                await super().tool_status(call_id, {"action": "status"}, signal, ctx),
                lambda t: "Session Handoff not started.",
            )
        return await super().tool_status(call_id, params, signal, ctx)


@mutant("H11c", how="a prompt that mentions a handoff starts one", invariant="automatic_initiation_budget")
class PromptMentionStarts(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        if (
            result is None
            and event.source != "extension"
            and "hand" in event.text.lower()
            and self.request is None
        ):
            try:
                request = self.start_request(ctx, "command")
            except Exception:
                return result
            request.call_dispatched = True
            request.reminder_started_at = self.now()
            self.pi.send_message(
                {"customType": "pi-blitz-handoff-call", "content": request.call_text, "display": True},
                deliver_as="followUp",
            )
        return result


@mutant(
    "H12",
    how="explicit starts are refused below the warning threshold",
    invariant="explicit_start_makes_request",
)
class ExplicitStartsGated(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        percent = self.context_percent(ctx)
        if route != "automatic" and (percent is None or percent < self.settings.context_warning_percent):
            raise BlitzHandoffError("The context is not full enough for a Session Handoff yet.")
        return super().start_request(ctx, route)


@mutant(
    "H2",
    how="while a handoff is written, every tool but the handoff's own and write is blocked",
    unreachable="no invariant reads which tools ran while a handoff was written",
)
class UnrelatedToolsBlocked(Mutant):
    def register(self) -> None:
        super().register()

        def block(event: Any, _ctx: Any) -> Any:
            request = self.request
            if (
                request is not None
                and request.phase == "writing"
                and event.tool_name
                not in (
                    GET_TOOL,
                    "session_handoff_finish",
                    STATUS_TOOL,
                    "write",
                )
            ):
                return {"block": True, "reason": "Blocked while a Session Handoff is written."}
            return None

        self.pi.on("tool_call", block)


class _InMemoryAccepted(Mutant):
    routes: tuple[str, ...] = ()

    def start_request(self, ctx: Any, route: Any) -> Any:
        manager = ctx.session_manager
        if route in self.routes and not manager.get_session_file():
            fake = f"{ctx.cwd}/in-memory-{manager.get_session_id()}.jsonl"
            ctx = Proxy(ctx, session_manager=Proxy(manager, get_session_file=lambda: fake))
        return super().start_request(ctx, route)


@mutant("H1a", "H13", "H106", how="a refused /sh start says nothing", invariant="refused_start_said_aloud")
class RefusalSilent(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() == "start":
            notify = ctx.ui.notify

            def quiet(message: str, level: str = "info") -> None:
                if level != "error":
                    notify(message, level)

            ctx = with_ui(ctx, notify=quiet)
        await super().run(args, ctx)


@mutant(
    "H1a", how="/sh start in an in-memory session is accepted", invariant="in_memory_session_starts_nothing"
)
class InMemoryCommandStart(_InMemoryAccepted):
    routes = ("command",)


@mutant(
    "H1b",
    how="model and automatic starts in an in-memory session are accepted",
    invariant="in_memory_session_starts_nothing",
)
class InMemoryModelStart(_InMemoryAccepted):
    routes = ("model", "automatic")


class _WidgetEdited(Mutant):
    """Every widget update goes through :meth:`edit` (lines of a cleared widget stay None)."""

    def edit(self, lines: list[str]) -> list[str]:
        return lines

    def show(self, ctx: Any, lines: list[str] | None) -> None:
        super().show(ctx, None if lines is None else self.edit(list(lines)))


@mutant("H68b", how="'Inputs deferred' appears only from the first captured prompt", unreachable=_TEXT)
class DeferredCountFromOne(_WidgetEdited):
    def edit(self, lines: list[str]) -> list[str]:
        return [line.replace("Inputs deferred (0) · ", "") for line in lines]


@mutant("H68c", how="the widget does not advertise /sh cancel", unreachable=_TEXT)
class WidgetWithoutCancel(_WidgetEdited):
    def edit(self, lines: list[str]) -> list[str]:
        return [line.replace(" · /sh cancel", "") for line in lines]


@mutant("H69", how="the widget shows a numbered step", unreachable=_TEXT)
class WidgetNumberedProgress(_WidgetEdited):
    def edit(self, lines: list[str]) -> list[str]:
        return [*lines[:1], "Step 2/3", *lines[1:]] if lines else lines


@mutant("H7", how="/sh help leaves out recover", unreachable=_TEXT)
class HelpWithoutRecover(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        notify = ctx.ui.notify

        def without_recover(message: str, notify_type: str = "info") -> None:
            lines = [line for line in message.splitlines() if "recover" not in line]
            notify("\n".join(lines), notify_type)

        await super().run(args, with_ui(ctx, notify=without_recover) if args.strip() == "help" else ctx)


@mutant("H64a", how="the widget keeps saying Waiting once the handoff is being written", unreachable=_TEXT)
class WritingShownAsWaiting(_WidgetEdited):
    def edit(self, lines: list[str]) -> list[str]:
        return [line.replace("Writing Session Handoff", "Waiting for Session Handoff") for line in lines]


@mutant("H68a", how="'Inputs deferred' stops counting at 1", unreachable=_TEXT)
class DeferredCountStuck(_WidgetEdited):
    def edit(self, lines: list[str]) -> list[str]:
        return [re.sub(r"Inputs deferred \((?!0\))\d+\)", "Inputs deferred (1)", line) for line in lines]


@mutant("H64b", how="the widget is placed below the editor", unreachable=_TEXT)
class WidgetBelowEditor(Mutant):
    def show(self, ctx: Any, lines: list[str] | None) -> None:
        ctx.ui.set_widget(WIDGET_KEY, lines, placement="belowEditor")


@mutant(
    "H6", how="the /sh menu offers Start first even while a handoff is active", invariant="one_active_request"
)
class MenuAlwaysStart(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip():
            await super().run(args, ctx)
            return
        request, self.request = self.request, None
        try:
            await super().run(args, ctx)
        finally:
            if self.request is None:
                self.request = request


@mutant("H3", how="/sh config is an alias of /sh settings", unreachable=_UNTYPED)
class ConfigAlias(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        words = args.split()
        if words[:1] == ["config"]:
            args = " ".join(["settings", *words[1:]])
        await super().run(args, ctx)


class _Redeclared(Mutant):
    """Registers one tool with an edited declaration (``tool`` names it, ``edit`` changes it)."""

    tool = ""

    def edit(self, tool: Any) -> Any:
        return tool

    def register(self) -> None:
        pi = self.pi

        def register_tool(tool: Any) -> None:
            pi.register_tool(self.edit(tool) if tool.name == self.tool else tool)

        self.pi = Proxy(pi, register_tool=register_tool)
        super().register()


@mutant("H10", how="the blitz_handoff description no longer restricts start", unreachable=_TEXT)
class StartDescriptionUnrestricted(_Redeclared):
    tool = STATUS_TOOL

    def edit(self, tool: Any) -> Any:
        return dataclasses.replace(tool, description="Session Handoff status, or start a handoff.")


@mutant("H29c", how="Finish also declares an optional content argument", unreachable=_TEXT)
class FinishTakesContent(_Redeclared):
    tool = FINISH_TOOL

    def edit(self, tool: Any) -> Any:
        properties = {**tool.parameters["properties"], "content": {"type": "string"}}
        return dataclasses.replace(tool, parameters={**tool.parameters, "properties": properties})


@mutant("H7", how="/sh help also lists the private cutover bridge", unreachable=_TEXT)
class HelpListsBridge(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() == "help":
            ctx.ui.notify(messages.help_text() + "\n/sh __cutover <token>: switch sessions now", "info")
            return
        await super().run(args, ctx)


@mutant("H3", how="a public /sh cleanup removes this session's leftover dossier", unreachable=_UNTYPED)
class CleanupSubcommand(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.split()[:1] == ["cleanup"]:
            path = dossier_path(ctx.cwd, ctx.session_manager.get_session_id())
            error = remove_exact(path)
            ctx.ui.notify(f"Cleanup failed: {error}" if error else f"Removed {path}.", "info")
            return
        await super().run(args, ctx)


@mutant(
    "H3", how="a public /sh retry sends the active request's Call instruction again", unreachable=_UNTYPED
)
class RetrySubcommand(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.split()[:1] == ["retry"]:
            request = self.request
            if request is not None and request.active:
                self.pi.send_user_message(request.call_text)
                ctx.ui.notify("Session Handoff Call sent again.", "info")
            else:
                ctx.ui.notify("No active Session Handoff to retry.", "info")
            return
        await super().run(args, ctx)
