"""The pi-blitz-handoff extension factory: Pi's events, tools and ``/sh`` wired to the modules.

One :class:`BlitzHandoff` per extension instance (Pi re-runs the factory after a reload or a
session replacement). Host behaviour relied on (``handoff-host-on-real-pi.md``):

* tools cannot call ``new_session`` (§1): Finish only records the accepted dossier; at the
  next idle settlement (``agent_settled`` with nothing pending) the private, correlated
  ``/sh __cutover <token>`` is sent with ``expand_prompt_templates``, Pi runs it after the
  settled handlers, and the command calls ``ctx.new_session(parent_session=...,
  with_session=...)``; the bootstrap prompt goes out through the replaced-session context;
* ``new_session`` aborts a running turn rather than waiting (§2c), so the bridge is only
  sent once the source is idle;
* ``input`` fires for every non-command input with its ``source``; ``handled`` keeps a
  captured prompt from the model (§3); extension inputs pass through;
* ``pi.send_message(..., deliver_as="steer")`` lands before the next model call, even after
  a final reply (§5): automatic requests, the reminder and the emergency use it;
* the old instance is stale once the switch starts: nothing here touches ``pi`` or an old
  ``ctx`` after ``new_session``; the new instance takes over through :mod:`.receiver`.

No timers or threads: the one reminder is checked at host boundaries (turn end, tool
calls, input, settlement) and delivered at the first one at or after the delay.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

from pi_continuity_harness.api import (
    AbortSignal,
    AgentSettledEvent,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    InputEvent,
    MessageEndEvent,
    ReplacedSessionContext,
    SessionStartEvent,
    ToolDefinition,
    ToolResult,
    TurnEndEvent,
    get_agent_dir,
)
from pi_continuity_harness.reference.blitz import messages, status
from pi_continuity_harness.reference.blitz.atomic_io import (
    ReservationError,
    is_nonempty_regular_file,
    remove_exact,
    reserve_exclusive,
)
from pi_continuity_harness.reference.blitz.chain import ChainError, decide_parent
from pi_continuity_harness.reference.blitz.commands import run_command
from pi_continuity_harness.reference.blitz.constants import (
    AUTO_BUDGET_ENTRY,
    CALL_TYPE,
    COMMAND_NAME,
    CUTOVER_SUBCOMMAND,
    EMERGENCY_INSTRUCTION,
    EMERGENCY_PERCENT,
    EMERGENCY_TYPE,
    FINISH_TOOL,
    GET_TOOL,
    REMINDER_TEXT,
    REMINDER_TYPE,
    ROLES,
    STATUS_TOOL,
    SUBCOMMANDS,
    WIDGET_KEY,
)
from pi_continuity_harness.reference.blitz.paths import ManagedPaths, dossier_path
from pi_continuity_harness.reference.blitz.receiver import (
    ReceiverDuty,
    TurnTracker,
    claim_duty,
    register_duty,
)
from pi_continuity_harness.reference.blitz.recovery import CaptureWindow, format_deferred
from pi_continuity_harness.reference.blitz.settings import BlitzSettings, apply_edit, load_settings
from pi_continuity_harness.reference.blitz.state import BlitzHandoffError, BlitzRequest, Route, check_finish
from pi_continuity_harness.reference.blitz.templates import (
    TemplateResolutionError,
    install_default_templates,
    resolve_project_selection,
    resolve_template,
)

__all__ = ["BlitzHandoff", "extension"]


def _text(text: str, *, error: bool = False, details: Any = None) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": text}], details=details or {}, is_error=error)


class BlitzHandoff:
    """One extension instance: settings, the active request, trackers, handlers."""

    def __init__(self, pi: ExtensionAPI) -> None:
        self.pi = pi
        self.paths: ManagedPaths | None = None
        self.settings = BlitzSettings()
        self.settings_error: str | None = None
        self.request: BlitzRequest | None = None
        self.cleaning = False
        self.in_settings = False
        self.automatic_attempts = 0
        self.warned = False
        self.trackers: list[TurnTracker] = []
        self.duty: ReceiverDuty | None = None
        self.finished_widget = False

    # ================================================================== loading
    def now(self) -> float:
        return time.time()

    @contextlib.contextmanager
    def settings_open(self) -> Iterator[None]:
        """While the settings menu is open no handoff starts (reference §6: no overlap)."""
        self.in_settings = True
        try:
            yield
        finally:
            self.in_settings = False

    def apply_settings(self, settings: BlitzSettings) -> None:
        """Saved settings apply at once, without a reload (reference §6); they are valid now."""
        self.settings = settings
        self.settings_error = None

    def track_turn(self, tracker: TurnTracker) -> None:
        """Watch the next delivered turn (a recovery execution) for its completion."""
        self.trackers.append(tracker)

    def managed(self) -> ManagedPaths:
        if self.paths is None:
            self.paths = ManagedPaths(get_agent_dir())
        return self.paths

    def recovery_dir(self) -> str:
        return self.settings.recovery_dir(self.managed().recovery)

    def load(self, ctx: ExtensionContext) -> None:
        paths = self.managed()
        notes: list[str] = []
        try:
            paths.ensure()
            backups = install_default_templates(paths, self.now())
            notes += [f"Replaced a changed default template; the old one is kept at {b}." for b in backups]
        except OSError as error:
            notes.append(f"The managed directory {paths.root} is not usable: {error.strerror or error}.")
        loaded = load_settings(paths.config)
        self.settings = loaded.settings
        self.settings_error = loaded.error
        if loaded.error:
            ctx.ui.notify(
                f"pi-blitz-handoff settings are invalid and no handoff can start: {loaded.error}", "error"
            )
        notes += [note for note, _failed in self.template_notes()]
        for note in notes:
            ctx.ui.notify(note, "warning")

    def template_notes(self) -> list[tuple[str, bool]]:
        """The startup and settings-open check of both roles' global selections: each fallback
        warning, and each role that does not resolve at all (``True``)."""
        paths = self.managed()
        notes: list[tuple[str, bool]] = []
        for role in ROLES:
            try:
                resolved = resolve_template(
                    role, self.settings.template_for(role), paths.templates, self.settings.template_directory
                )
            except TemplateResolutionError as error:
                notes.append((str(error), True))
                continue
            if resolved.warning:
                notes.append((resolved.warning, False))
        return notes

    def validate_edit(self, key: str, raw: str) -> tuple[BlitzSettings | None, str | None]:
        """One settings edit validated against the whole current config (see :func:`apply_edit`)."""
        return apply_edit(self.settings, key, raw)

    def restore_budget(self, ctx: ExtensionContext) -> None:
        attempts = 0
        for entry in ctx.session_manager.get_entries():
            if entry.get("type") == "custom" and entry.get("customType") == AUTO_BUDGET_ENTRY:
                data = entry.get("data")
                if isinstance(data, dict) and isinstance(data.get("attempts"), int):
                    attempts = data["attempts"]
        self.automatic_attempts = attempts

    def spend_budget(self, attempts: int) -> None:
        self.automatic_attempts = attempts
        self.pi.append_entry(AUTO_BUDGET_ENTRY, {"attempts": attempts})

    # ================================================================== widget
    def show(self, ctx: ExtensionContext, lines: list[str] | None) -> None:
        ctx.ui.set_widget(WIDGET_KEY, lines)

    def refresh(self, ctx: ExtensionContext) -> None:
        if self.request is not None and self.request.active:
            lines = status.request_lines(self.request, self.now())
            if self.request.phase == "requested":
                # "Yellow `Waiting for Session Handoff`" in the current theme (reference: Status):
                # the theme's warning token, which Pi's themes draw in their yellow family.
                lines[0] = ctx.ui.theme.fg("warning", lines[0])
            self.show(ctx, lines)

    def status_word(self) -> str:
        request = self.request
        if request is None:
            return "idle"
        return {
            "requested": "waiting for the handoff",
            "writing": "writing the handoff",
            "finished": "handoff finished; switching at the next idle moment",
            "cutover": "switching sessions",
        }[request.phase]

    def context_percent(self, ctx: ExtensionContext) -> float | None:
        usage = ctx.get_context_usage()
        return None if usage is None else usage.percent

    # ================================================================== starting
    def start_request(self, ctx: ExtensionContext, route: Route) -> BlitzRequest:
        """Accept a request (explicit routes ignore thresholds) or raise :class:`BlitzHandoffError`."""
        if self.request is not None and self.request.active:
            raise BlitzHandoffError("A Session Handoff is already active; it was left unchanged.")
        if self.cleaning:
            raise BlitzHandoffError(
                "A cancelled Session Handoff is still being cleaned up; try again shortly."
            )
        if self.in_settings:
            raise BlitzHandoffError("Close /sh settings before starting a Session Handoff.")
        if self.settings_error:
            raise BlitzHandoffError(f"The pi-blitz-handoff settings are invalid: {self.settings_error}")
        manager = ctx.session_manager
        source_file = manager.get_session_file()
        if not source_file:
            raise BlitzHandoffError(
                "This session is not persisted (--no-session or in-memory): a handoff needs a transcript "
                "path and a native parent link."
            )
        session_id = manager.get_session_id()
        dossier = dossier_path(ctx.cwd, session_id)
        if os.path.lexists(dossier):
            raise BlitzHandoffError(
                f"A leftover dossier blocks this session's reservation: {dossier}. Remove it explicitly first."
            )
        paths = self.managed()
        selection = resolve_project_selection(
            paths.project_templates,
            ctx.cwd,
            {"call": self.settings.call_template, "handoff": self.settings.handoff_template},
        )
        if selection.warning:
            ctx.ui.notify(selection.warning, "warning")
        try:
            call = resolve_template(
                "call", selection.names["call"], paths.templates, self.settings.template_directory
            )
            handoff = resolve_template(
                "handoff", selection.names["handoff"], paths.templates, self.settings.template_directory
            )
        except TemplateResolutionError as error:
            raise BlitzHandoffError(str(error)) from None
        for resolved in (call, handoff):
            if resolved.warning:
                ctx.ui.notify(resolved.warning, "warning")
        now = self.now()
        request = BlitzRequest(
            route=route,
            requested_at=now,
            defer_mode=self.settings.defer_prompts_from,
            call_text=messages.call_instruction(call.text),
            handoff_template=handoff,
            dossier=dossier,
            source_session_id=session_id,
            source_session_file=source_file,
        )
        if request.defer_mode == "request":
            request.capture = self.new_capture(session_id, now)
        self.request = request
        self.finished_widget = False
        self.refresh(ctx)
        return request

    def new_capture(self, session_id: str, now: float) -> CaptureWindow:
        """The capture window of a request (its prompts and its one recovery file)."""
        return CaptureWindow(self.recovery_dir(), session_id, now)

    def dispatch_call(self, request: BlitzRequest) -> None:
        """Send the Call instruction once (it starts a run from idle)."""
        if request.call_dispatched:
            return
        request.call_dispatched = True
        if request.reminder_started_at is None:
            request.reminder_started_at = self.now()
        self.pi.send_user_message(request.call_text)

    # ================================================================== reminder, emergency
    def check_reminder(self, ctx: ExtensionContext) -> None:
        request = self.request
        if request is None or not request.reminder_due(self.now(), self.settings.readiness_retry_seconds):
            return
        request.reminded = True
        message = {"customType": REMINDER_TYPE, "content": REMINDER_TEXT, "display": True}
        if ctx.is_idle():
            self.pi.send_message(message)
        else:
            self.pi.send_message(message, deliver_as="steer")
        ctx.ui.notify(REMINDER_TEXT, "warning")

    def on_turn_end(self, event: TurnEndEvent, ctx: ExtensionContext) -> None:
        if event.outcome != "completed":
            return
        percent = self.context_percent(ctx)
        request = self.request
        if percent is not None:
            if not self.warned and percent >= self.settings.context_warning_percent:
                self.warned = True
                ctx.ui.notify(
                    f"Context use is {percent:.0f}%: consider a Session Handoff (/sh start).", "warning"
                )
            if (
                request is not None
                and request.active
                and not request.submitted
                and not request.escalated
                and percent >= EMERGENCY_PERCENT
            ):
                request.escalated = True
                request.reminded = True
                self.pi.send_message(
                    {
                        "customType": EMERGENCY_TYPE,
                        "content": EMERGENCY_INSTRUCTION,
                        "display": True,
                    },
                    deliver_as="steer",
                )
                return
            if request is None and self.automatic_due(percent):
                self.start_automatic(ctx)
                return
        self.check_reminder(ctx)

    def automatic_due(self, percent: float) -> bool:
        settings = self.settings
        if not settings.automatic_enabled or self.cleaning or self.in_settings:
            return False
        if self.automatic_attempts == 0:
            return percent >= settings.automatic_session_handoff_percent
        if self.automatic_attempts == 1:
            return percent >= settings.critical_warning_percent
        return False

    def start_automatic(self, ctx: ExtensionContext) -> None:
        try:
            request = self.start_request(ctx, "automatic")
        except BlitzHandoffError as error:
            ctx.ui.notify(f"Automatic Session Handoff not started: {error}", "warning")
            return
        self.spend_budget(self.automatic_attempts + 1)
        request.call_dispatched = True
        request.reminder_started_at = self.now()
        self.pi.send_message(
            {"customType": CALL_TYPE, "content": request.call_text, "display": True},
            deliver_as="steer",
        )

    # ================================================================== tools
    async def tool_status(
        self, _call_id: str, params: dict[str, Any], _signal: AbortSignal | None, ctx: ExtensionContext
    ) -> ToolResult:
        action = params.get("action", "status")
        if action == "start":
            try:
                request = self.start_request(ctx, "model")
            except BlitzHandoffError as error:
                return _text(f"Session Handoff not started: {error}", error=True)
            return _text(
                f"Session Handoff requested. Call {GET_TOOL}({{}}) to receive the template, the exact file and "
                "the Finish ID; write nothing for the handoff before that.",
                details={"phase": request.phase},
            )
        if action != "status":
            return _text(
                "Unknown action; use 'status' or 'start' (start only on the user's explicit request).",
                error=True,
            )
        return _text(messages.status_text(self.settings, self.context_percent(ctx), self.status_word()))

    async def tool_get(
        self, _call_id: str, _params: dict[str, Any], signal: AbortSignal | None, ctx: ExtensionContext
    ) -> ToolResult:
        request = self.request
        if request is None or not request.active:
            return _text("No active Session Handoff request: nothing to retrieve.", error=True)
        if request.finish_id is not None:
            self.check_reminder(ctx)
            return self.template_result(request, request.finish_id, pending_call=None, repeated=True)
        # No await from here on: a cancel cannot interleave, so no late reservation or live ID.
        if not request.reservation_owned:
            try:
                reserve_exclusive(request.dossier)
            except ReservationError as error:
                return _text(f"The dossier file cannot be reserved: {error}", error=True)
            except OSError as error:
                return _text(
                    f"The dossier file {request.dossier} cannot be reserved: {error.strerror}", error=True
                )
            request.reservation_owned = True
        if signal is not None and signal.aborted:
            # The reservation stays owned and may be reused; no Finish is authorised.
            return _text("Template retrieval was aborted.", error=True)
        now = self.now()
        finish_id = request.finish_id = str(uuid.uuid4())
        request.retrieved_at = now
        request.phase = "writing"
        if request.capture is None and request.defer_mode == "writing":
            request.capture = self.new_capture(request.source_session_id, now)
        pending_call = None
        if not request.call_dispatched:
            request.call_dispatched = True
            pending_call = request.call_text
        if request.reminder_started_at is None:
            request.reminder_started_at = now
        self.refresh(ctx)
        return self.template_result(request, finish_id, pending_call=pending_call, repeated=False)

    def template_result(
        self, request: BlitzRequest, finish_id: str, *, pending_call: str | None, repeated: bool
    ) -> ToolResult:
        """The GET response: the request's snapshot, the same for every repeated GET."""
        text = messages.get_response(
            template_text=request.handoff_template.text,
            dossier=request.dossier,
            transcript=request.source_session_file,
            session_id=request.source_session_id,
            finish_id=finish_id,
            pending_call=pending_call,
            repeated=repeated,
        )
        return _text(text, details={"dossier": request.dossier})

    async def tool_finish(
        self, _call_id: str, params: dict[str, Any], _signal: AbortSignal | None, ctx: ExtensionContext
    ) -> ToolResult:
        request = self.request
        verdict = check_finish(request, params.get("id"))
        if not verdict.ok or request is None:
            return _text(verdict.message, error=True)
        if not is_nonempty_regular_file(request.dossier):
            return _text(
                f"Rejected: {request.dossier} is not a nonempty regular file yet. Write the complete dossier "
                "there first.",
                error=True,
            )
        request.phase = "finished"
        self.refresh(ctx)
        return _text(
            "Finish accepted. The transfer to a fresh session starts once this session is idle; "
            "start no further work."
        )

    # ================================================================== settlement and cutover
    def on_settled(self, event: AgentSettledEvent, ctx: ExtensionContext) -> None:
        for tracker in list(self.trackers):
            tracker.on_settled(event.aborted, ctx)
            if tracker.decided:
                self.trackers.remove(tracker)
        request = self.request
        percent = self.context_percent(ctx)
        if percent is not None and percent >= self.settings.critical_warning_percent:
            ctx.ui.notify(f"Context use is {percent:.0f}%, at or above the critical level.", "warning")
        if request is None or not request.active:
            return
        if ctx.has_pending_messages():
            return
        if request.phase == "finished" and request.cutover_token is None:
            # The token is issued with the bridge: a request has at most one bridge in flight.
            request.cutover_token = uuid.uuid4().hex
            self.pi.send_user_message(
                f"/{COMMAND_NAME} {CUTOVER_SUBCOMMAND} {request.cutover_token}", expand_prompt_templates=True
            )
            return
        if request.route == "model" and not request.call_dispatched:
            self.dispatch_call(request)
            return
        self.check_reminder(ctx)

    async def cutover(self, token: str, ctx: ExtensionCommandContext) -> None:
        request = self.request
        if request is None or request.phase != "finished" or not token or token != request.cutover_token:
            return
        if not ctx.is_idle():
            await ctx.wait_for_idle()
        if self.request is not request or request.phase != "finished":
            return
        if ctx.has_pending_messages():
            request.cutover_token = None  # a new bridge at the next idle settlement
            return
        header = ctx.session_manager.get_header() or {}
        parent_of_source = header.get("parentSession")
        try:
            decision = decide_parent(
                request.source_session_file,
                parent_of_source if isinstance(parent_of_source, str) else None,
                self.settings.max_session_chain_length,
            )
        except ChainError as error:
            self.fail(ctx, request, str(error))
            return
        request.phase = "cutover"
        recovery_file = None
        if request.capture is not None and request.capture.prompts:
            request.capture.flush()
            recovery_file = request.capture.path
            try:
                with open(request.dossier, "a", encoding="utf-8") as handle:
                    handle.write("\n\n# Deferred prompts\n\n" + format_deferred(request.capture.prompts))
            except OSError as error:
                ctx.ui.notify(
                    f"The deferred prompts could not be appended to {request.dossier}: {error}", "error"
                )
        started = request.retrieved_at or request.requested_at
        bootstrap = messages.bootstrap_prompt(request.dossier, self.settings.delete_handoff_after_reading)
        register_duty(
            ReceiverDuty(
                source_session_file=request.source_session_file,
                bootstrap=bootstrap,
                recovery_file=recovery_file,
                wait_time=status.format_duration(started - request.requested_at),
                retrieved_at=started,
                notes=["The session chain reached its limit: this is an independent master session."]
                if decision.independent_master
                else [],
            )
        )
        self.show(
            ctx,
            status.finished_lines(
                status.format_duration(started - request.requested_at),
                status.format_duration(self.now() - started),
            ),
        )

        async def with_session(new_ctx: ReplacedSessionContext) -> None:
            await new_ctx.send_user_message(bootstrap)

        result = await ctx.new_session(parent_session=decision.parent_session, with_session=with_session)
        if result.get("cancelled"):
            # The switch was cancelled by another extension: this instance is still current.
            request.phase = "finished"
            self.fail(
                ctx, request, "the native session switch was cancelled; use /sh cancel to clean up", keep=True
            )

    def fail(self, ctx: ExtensionContext, request: BlitzRequest, reason: str, *, keep: bool = False) -> None:
        if not keep:
            self.request = None
        self.show(ctx, status.failed_lines(reason))
        capture = request.capture
        kept = f" Deferred prompts are kept in {capture.path}." if capture and capture.path else ""
        ctx.ui.notify(f"Session Handoff failed: {reason}.{kept}", "error")

    # ================================================================== receiving side
    def adopt_duty(self, duty: ReceiverDuty) -> None:
        self.duty = duty
        self.finished_widget = True

        def completed(ctx: ExtensionContext) -> None:
            notes = list(duty.notes)
            error = remove_exact(duty.recovery_file) if duty.recovery_file else None
            if duty.recovery_file:
                notes.append(
                    f"Could not delete the recovery file: {error}"
                    if error
                    else "Deferred prompts were delivered."
                )
            self.show(
                ctx,
                status.finished_lines(duty.wait_time, status.format_duration(self.now() - duty.retrieved_at)),
            )
            # A cleanup failure is reported as one (H44b), never as a plain success.
            ctx.ui.notify(" ".join(["Session Handoff completed.", *notes]), "warning" if error else "info")

        def failed(ctx: ExtensionContext, reason: str) -> None:
            kept = f" The recovery file {duty.recovery_file} is kept." if duty.recovery_file else ""
            ctx.ui.notify(f"Session Handoff bootstrap did not complete ({reason}).{kept}", "error")

        self.trackers.append(TurnTracker(duty.bootstrap, completed, failed))

    def on_message_end(self, event: MessageEndEvent) -> None:
        for tracker in self.trackers:
            tracker.on_message_end(event.message)

    # ================================================================== input capture
    def on_input(self, event: InputEvent, ctx: ExtensionContext) -> Any:
        if event.source == "extension":
            return None
        request = self.request
        if request is not None and request.active and request.capture is not None:
            request.capture.capture(event.text)
            if request.capture.last_error:
                ctx.ui.notify(
                    f"The recovery file could not be written: {request.capture.last_error}", "error"
                )
            self.refresh(ctx)
            self.check_reminder(ctx)
            return {"action": "handled"}
        if self.finished_widget and (request is None or not request.active):
            self.finished_widget = False
            self.show(ctx, None)
        return None

    def protected(self) -> bool:
        request = self.request
        if self.cleaning:
            return True
        return request is not None and request.active and (request.capture is not None or request.submitted)

    def on_before_switch(self, _event: Any, ctx: ExtensionContext) -> Any:
        """A user session switch in the protected window is blocked (H77a), whichever it is: a new
        session (``/new``, ``reason: "new"``) or another session resumed (``/resume``, ``reason:
        "resume"``); Pi asks through ``session_before_switch`` for both
        (agent-session-runtime.js:97-108, :148, :167)."""
        return self.guard(ctx, "Switching sessions")

    def guard(self, ctx: ExtensionContext, what: str) -> Any:
        if not self.protected():
            return None
        ctx.ui.notify(f"{what} is blocked while a Session Handoff is active (/sh cancel first).", "warning")
        return {"cancel": True}

    # ================================================================== cancel
    async def cancel(self, ctx: ExtensionCommandContext) -> None:
        request = self.request
        if request is None or not request.active:
            if request is not None and request.phase == "cutover":
                ctx.ui.notify("The native cutover was already invoked; it cannot be cancelled.", "warning")
            else:
                ctx.ui.notify("No active Session Handoff to cancel.", "info")
            return
        self.request = None
        self.cleaning = True
        self.show(ctx, status.cancelled_lines())
        problems: list[str] = []
        try:
            if not ctx.is_idle():
                await ctx.wait_for_idle()
            if request.reservation_owned:
                error = remove_exact(request.dossier)
                if error:
                    problems.append(error)
        finally:
            self.cleaning = False
        kept = (
            f" Deferred prompts are kept in {request.capture.path} (/sh recover)."
            if request.capture is not None and request.capture.path
            else ""
        )
        if problems:
            ctx.ui.notify(
                "Session Handoff cancelled, but cleanup failed: " + "; ".join(problems) + "." + kept, "error"
            )
        else:
            removed = f" Removed {request.dossier}." if request.reservation_owned else ""
            ctx.ui.notify("Session Handoff cancelled." + removed + kept, "info")

    # ================================================================== registration
    async def run(self, args: str, ctx: ExtensionCommandContext) -> None:
        """``/sh <args>`` (see :mod:`.commands`)."""
        await run_command(self, args, ctx)

    def register(self) -> None:
        pi = self.pi

        async def on_start(event: SessionStartEvent, ctx: ExtensionContext) -> None:
            self.load(ctx)
            self.restore_budget(ctx)
            if event.reason == "new":
                duty = claim_duty(event.previous_session_file)
                if duty is not None:
                    self.adopt_duty(duty)

        pi.on("session_start", on_start)
        pi.on("input", self.on_input)
        pi.on("turn_end", self.on_turn_end)
        pi.on("message_end", lambda event, _ctx: self.on_message_end(event))
        pi.on("agent_settled", self.on_settled)
        pi.on("session_before_switch", self.on_before_switch)
        pi.on("session_before_fork", lambda _e, ctx: self.guard(ctx, "Forking"))
        pi.on("session_before_compact", lambda _e, ctx: self.guard(ctx, "Compaction"))
        pi.on(
            "session_before_tree",
            lambda _e, ctx: self.guard(ctx, "Tree navigation") if self.cleaning else None,
        )

        def on_compact(_event: Any, _ctx: ExtensionContext) -> None:
            if self.automatic_attempts:
                self.spend_budget(0)

        pi.on("session_compact", on_compact)

        async def command(args: str, ctx: ExtensionCommandContext) -> None:
            await self.run(args, ctx)

        pi.register_command(
            COMMAND_NAME,
            command,
            description="Session Handoff: transfer to a fresh, parent-linked session",
            get_argument_completions=lambda prefix: [
                {"value": name, "label": name} for name in SUBCOMMANDS if name.startswith(prefix.strip())
            ],
        )
        pi.register_tool(
            ToolDefinition(
                name=STATUS_TOOL,
                label="Session Handoff",
                description=(
                    "Session Handoff status, or start a handoff. Use action 'start' only when the user "
                    "explicitly asks for a handoff; discussing, questioning, criticising, testing or mentioning it "
                    "is not a request."
                ),
                parameters={
                    "type": "object",
                    "properties": {"action": {"type": "string", "enum": ["status", "start"]}},
                    "required": ["action"],
                },
                execute=self.tool_status,
            )
        )
        pi.register_tool(
            ToolDefinition(
                name=GET_TOOL,
                label="Get handoff template",
                description="Retrieve the handoff template, the exact dossier file and the Finish ID.",
                parameters={"type": "object", "properties": {}},
                execute=self.tool_get,
            )
        )
        pi.register_tool(
            ToolDefinition(
                name=FINISH_TOOL,
                label="Finish handoff",
                description="Submit the written dossier, once, with the exact Finish ID.",
                parameters={
                    "type": "object",
                    "properties": {"id": {"type": "string"}},
                    "required": ["id"],
                },
                execute=self.tool_finish,
            )
        )


def extension(pi: ExtensionAPI) -> None:
    """The pi-blitz-handoff factory."""
    BlitzHandoff(pi).register()


extension.pi_continuity_system = "pi-blitz-handoff"  # type: ignore[attr-defined]
