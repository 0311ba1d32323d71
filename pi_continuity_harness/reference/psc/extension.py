"""The Pi Session Continuity v0.2.0 extension factory: Pi events wired to the pipeline.

``extension(pi)`` registers one command (``continuity``) and handlers for ``session_start``,
``model_select``, ``session_before_compact``, ``session_compact``,
``session_compact_failed`` and ``session_shutdown``. It computes no trigger of its own and
never calls ``ctx.compact()``: Pi's native compaction is the only automatic trigger, and
``session_before_compact`` turns each native compaction (threshold, overflow, manual) into
a Continuity Handoff whose exact re-read disk bytes become the compaction summary, or
cancels it (spec §3, §13, §18). ``session_compact`` is the commit boundary: archive, then
(threshold only) one visible ``followUp`` continuation built from the verified bytes.

Host behaviour followed here (``psc-lifecycle-on-real-pi.md``, "Consequences"):

* ``complete()`` resolves with ``stopReason: "aborted"`` on abort: stop reasons are checked;
* Pi re-invokes the hook at every check point while usage stays above the threshold, so a
  failure notifies and cancels each time, with no cooldown (consequence 6);
* a result returned after an abort is discarded by Pi, and ``session_compact_failed``
  (``fromExtension: true``) follows: the gate is cleared there (consequence 8);
* ``sendUserMessage`` is never an acknowledgement; manual compaction would reject it, so
  only threshold compaction submits a continuation (consequence 4).

Only ``pi_continuity_harness.api.extension_api``, ``.events`` and ``.abort`` are
imported from the host, so the same code runs on the simulator and through the real-Pi
bridge. All state is process-local (:mod:`.state`); nothing runs in the background.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pi_continuity_harness.api import (
    BeforeCompactResult,
    CompactionResult,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    Model,
    ModelSelectEvent,
    SessionBeforeCompactEvent,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionShutdownEvent,
    SessionStartEvent,
)
from pi_continuity_harness.reference.psc import messages
from pi_continuity_harness.reference.psc.atomic_io import read_text_exact
from pi_continuity_harness.reference.psc.commands import run_command
from pi_continuity_harness.reference.psc.config import load_extension_config, project_settings_problem
from pi_continuity_harness.reference.psc.constants import COMMAND_NAME, STATUS_KEY
from pi_continuity_harness.reference.psc.frontmatter import parse_brief
from pi_continuity_harness.reference.psc.handoff import (
    PreparedHandoff,
    brief_sha256,
    commit_mismatches,
    continuation_text,
    handoff_reason_for,
    resume_source_problems,
)
from pi_continuity_harness.reference.psc.lifecycle import (
    HandoffError,
    HandoffRequest,
    archive_brief,
    new_event_id,
    prepare_brief,
    write_failure_postmortem,
)
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    validate_native_settings,
)
from pi_continuity_harness.reference.psc.retention import leftover_temp_files, pending_briefs
from pi_continuity_harness.reference.psc.state import (
    ActiveOperation,
    LiveSettings,
    OperationKind,
    RuntimeState,
)
from pi_continuity_harness.reference.psc.status import footer_text

__all__ = ["Continuity", "extension"]


def _model_of(value: Any) -> Model | None:
    return value if isinstance(value, Model) else None


class Continuity:
    """One extension instance: its ``pi``, its state, and the event handlers."""

    def __init__(self, pi: ExtensionAPI) -> None:
        self.pi = pi
        self.state: RuntimeState | None = None

    # ================================================================== state
    def _load_state(self, ctx: ExtensionContext) -> RuntimeState:
        trusted = ctx.is_project_trusted()
        config = load_extension_config(ctx.cwd, trusted=trusted)
        try:
            live = LiveSettings.capture(self.pi.get_settings())
        except Exception as exc:  # the bridge may fail to read settings; report, never crash
            live = LiveSettings.capture(None, f"Pi's settings could not be read: {exc}")
        return RuntimeState(
            cwd=ctx.cwd,
            session_id=ctx.session_manager.get_session_id(),
            trusted=trusted,
            config=config,
            live=live,
            project_settings_error=project_settings_problem(ctx.cwd) if trusted else None,
        )

    def ensure_state(self, ctx: ExtensionContext) -> RuntimeState:
        """The state of this runtime (created silently if an event precedes session_start)."""
        if self.state is None:
            self.state = self._load_state(ctx)
        return self.state

    def update_footer(self, ctx: ExtensionContext, model: Model | None = None) -> None:
        state = self.ensure_state(ctx)
        ctx.ui.set_status(STATUS_KEY, footer_text(state.snapshot(model or ctx.model)))

    def settings_refusal(self, state: RuntimeState, model: Model | None) -> str | None:
        """The refusal notification for the live native settings and ``model``, if any."""
        if state.project_settings_error is not None:
            return messages.project_settings_invalid(state.project_settings_error)
        settings, error = state.native_settings(model)
        if settings is None:
            return messages.native_settings_unreadable(state.settings_path, [error or "unreadable"])
        window = model.context_window if model is not None else 0
        problems = validate_native_settings(settings, window)
        if not problems:
            return None
        return messages.invalid_native_settings(
            settings, model.context_window if model is not None else None, state.settings_path, problems
        )

    # ================================================================== session_start
    async def on_session_start(self, event: SessionStartEvent, ctx: ExtensionContext) -> None:
        state = self._load_state(ctx)
        self.state = state
        if state.config.error is not None:
            ctx.ui.notify(messages.invalid_config(state.config.error), "warning")
        elif state.automatic_allowed:
            self._inspect_pending(state, ctx)
            refusal = self.settings_refusal(state, ctx.model)
            if refusal is not None:
                ctx.ui.notify(refusal, "warning")
        self.update_footer(ctx)

    def _inspect_pending(self, state: RuntimeState, ctx: ExtensionContext) -> None:
        """Report same-session pending Briefs as stale and inert; reconcile committed ones.

        Other sessions' files live in other directories and are never opened; legacy v1,
        failed, archived and malformed files in this session's ``pending/`` are ignored.
        """
        self._remove_leftover_temps(state, ctx)
        stale: list[str] = []
        found = pending_briefs(state.layout.pending_dir)
        # The entries (a copy of the whole session) only when there is a Brief to match them
        # against: almost every session start finds none. Listing the directory is no operation
        # the monitor sees, so the entries read here are the ones read before it.
        committed = (
            {
                str((entry.get("details") or {}).get("continuityEventId")): entry
                for entry in ctx.session_manager.get_entries()
                if entry.get("type") == "compaction" and isinstance(entry.get("details"), Mapping)
            }
            if found
            else {}
        )
        for path in found:
            try:
                text = read_text_exact(path)
            except (OSError, UnicodeDecodeError):
                continue
            if resume_source_problems(text, session_id=state.session_id):
                continue
            entry = self._matching_entry(committed, text)
            if entry is not None:
                try:
                    archived = archive_brief(state.layout, path, text)
                except (OSError, ValueError):
                    stale.append(path)
                    continue
                state.last_artifact_path = archived
                ctx.ui.notify(messages.brief_reconciled(archived), "info")
                continue
            stale.append(path)
        state.stale_pending_paths = tuple(stale)
        if stale:
            ctx.ui.notify(messages.stale_pending_found(), "warning")

    @staticmethod
    def _remove_leftover_temps(state: RuntimeState, ctx: ExtensionContext) -> None:
        """Remove (and name, once each) the temporary files of writes that a crash stopped before
        their rename in this session's directories (rule P136; issue 10 item 6): the rename is the
        commit point, so such a file is never a Brief, and it is never left silently."""
        layout = state.layout
        for path in leftover_temp_files(layout.pending_dir, layout.archive_dir, layout.failed_dir):
            try:
                os.remove(path)
            except FileNotFoundError:
                continue
            except OSError as error:
                ctx.ui.notify(messages.temp_file_left(path, error), "warning")
                continue
            ctx.ui.notify(messages.temp_file_removed(path), "warning")

    @staticmethod
    def _matching_entry(committed: Mapping[str, Mapping[str, Any]], text: str) -> Mapping[str, Any] | None:
        """The persisted custom CompactionEntry whose metadata and bytes match ``text``."""
        event_id = parse_brief(text).frontmatter.event_id
        entry = committed.get(event_id)
        if entry is None:
            return None
        details = entry.get("details") or {}
        if entry.get("summary") == text and details.get("sha256") == brief_sha256(text):
            return entry
        return None

    # ================================================================== model_select
    async def on_model_select(self, event: ModelSelectEvent, ctx: ExtensionContext) -> None:
        """Recompute the displayed percentage; re-validate; never write settings (spec §11)."""
        state = self.ensure_state(ctx)
        model = _model_of(event.model) or ctx.model
        if state.automatic_allowed:
            refusal = self.settings_refusal(state, model)
            if refusal is not None:
                ctx.ui.notify(refusal, "warning")
        self.update_footer(ctx, model)

    # ================================================================== session_before_compact
    def _refusal(
        self, state: RuntimeState, event: SessionBeforeCompactEvent, model: Model | None
    ) -> str | None:
        if not state.trusted:
            return "this project is not trusted, so no Continuity Brief can be made durable"
        if state.config.error is not None:
            return f"the extension config {state.config.path} is invalid ({state.config.error.describe()})"
        if not state.config.config.enabled:
            return f"the extension is disabled (enabled: false in {state.config.path})"
        if state.project_settings_error is not None:
            # Pi runs on its defaults; what the user configured is unknown until the file is fixed.
            return f"the project settings {state.project_settings_error}"
        if model is None:
            return "no active model"
        settings = NativeCompactionSettings.from_preparation(event.preparation.settings)
        problems = validate_native_settings(settings, model.context_window)
        if problems:
            return "native compaction settings are invalid for the current model: " + "; ".join(problems)
        prep = event.preparation
        if not prep.first_kept_entry_id or not (prep.messages_to_summarize or prep.turn_prefix_messages):
            return "the prepared compaction has no viable cut point"
        active = state.active
        if active is not None:
            if active.native and active.phase == "awaiting-commit":
                # Pi serializes compaction: a new hook means the previous result was resolved
                # without reaching us. Its pending Brief stays inert.
                state.stale_pending_paths = (*state.stale_pending_paths, *self._prepared_path(state))
                state.clear_native_operation()
            else:
                return f"a Continuity Brief is already being prepared for this session ({active.describe()})"
        return None

    @staticmethod
    def _prepared_path(state: RuntimeState) -> tuple[str, ...]:
        return (state.prepared.artifact_path,) if state.prepared is not None else ()

    async def on_before_compact(
        self, event: SessionBeforeCompactEvent, ctx: ExtensionContext
    ) -> BeforeCompactResult:
        state = self.ensure_state(ctx)
        model = ctx.model
        refusal = self._refusal(state, event, model)
        if refusal is not None or model is None:
            reason = refusal or "no active model"
            state.last_failure = f"{event.reason} compaction refused: {reason}"
            ctx.ui.notify(messages.handoff_failed(reason), "error")
            return BeforeCompactResult(cancel=True)
        if event.reason == "threshold":
            # Announced only for a handoff the extension really prepares (never in a refused state).
            ctx.ui.notify(messages.threshold_preparing(), "info")

        prep = event.preparation
        settings = NativeCompactionSettings.from_preparation(prep.settings)
        kind: OperationKind = event.reason
        operation = ActiveOperation(kind, new_event_id())
        state.active = operation
        request = HandoffRequest(
            handoff_reason=handoff_reason_for(event.reason),
            event_id=operation.event_id,
            session_id=state.session_id,
            session_file=ctx.session_manager.get_session_file(),
            layout=state.layout,
            config=state.config.config,
            active_model=model,
            settings=settings,
            token_count=prep.tokens_before,
            branch_leaf_before=ctx.session_manager.get_leaf_id(),
            messages=[*prep.messages_to_summarize, *prep.turn_prefix_messages],
            previous_summary=prep.previous_summary,
            custom_instructions=event.custom_instructions,
            signal=event.signal,
            thinking_level=self.pi.get_thinking_level(),
        )

        def on_phase(name: str) -> None:
            operation.phase = name

        try:
            saved = await prepare_brief(request, ctx.model_registry, on_phase)
        except HandoffError as failure:
            return self._fail(state, ctx, request, failure, operation)
        except Exception as exc:  # never let an unexpected error fall through to Pi's summary
            return self._fail(state, ctx, request, HandoffError("internal", repr(exc)), operation)

        prepared = PreparedHandoff(
            event_id=request.event_id,
            session_id=state.session_id,
            artifact_path=saved.path,
            text=saved.text,
            compaction_reason=event.reason,
            settings=settings,
        )
        state.prepared = prepared
        state.last_pending_path = saved.path
        state.last_artifact_path = saved.path
        operation.phase = "awaiting-commit"

        def on_abort() -> None:
            # Pi aborted after the Brief was prepared: it will discard the result. The
            # pending Brief stays on disk, inert (spec §13).
            if state.active is operation:
                state.stale_pending_paths = (*state.stale_pending_paths, saved.path)
                state.clear_native_operation()

        event.signal.add_listener(on_abort)
        ctx.ui.notify(messages.brief_saved(saved.path), "info")
        return BeforeCompactResult(
            compaction=CompactionResult(
                summary=saved.text,
                first_kept_entry_id=prep.first_kept_entry_id,
                tokens_before=prep.tokens_before,
                details=prepared.details(),
            )
        )

    def _fail(
        self,
        state: RuntimeState,
        ctx: ExtensionContext,
        request: HandoffRequest,
        failure: HandoffError,
        operation: ActiveOperation,
    ) -> BeforeCompactResult:
        postmortem = write_failure_postmortem(request, failure)
        if state.active is operation:
            state.clear_native_operation()
        state.last_artifact_path = postmortem
        state.last_failure = f"{failure.phase}: {failure.reason}" + (
            f" (failed artifact: {postmortem})" if postmortem else " (no failed artifact could be written)"
        )
        ctx.ui.notify(messages.handoff_failed(f"{failure.phase}: {failure.reason}"), "error")
        return BeforeCompactResult(cancel=True)

    # ================================================================== session_compact
    async def on_compact(self, event: SessionCompactEvent, ctx: ExtensionContext) -> None:
        state = self.state
        if state is None or state.prepared is None:
            return
        prepared = state.prepared
        try:
            disk: str | None = read_text_exact(prepared.artifact_path)
        except (OSError, UnicodeDecodeError):
            disk = None
        mismatches = commit_mismatches(
            prepared,
            from_extension=event.from_extension,
            reason=event.reason,
            session_id=ctx.session_manager.get_session_id(),
            compaction_entry=event.compaction_entry,
            disk_text=disk,
        )
        state.clear_native_operation()
        if mismatches or disk is None:
            state.stale_pending_paths = (*state.stale_pending_paths, prepared.artifact_path)
            state.last_failure = "committed compaction did not match the prepared Brief: " + ", ".join(
                mismatches
            )
            ctx.ui.notify(messages.incompatible_compaction(mismatches), "warning")
            return
        # Built from the verified pending bytes before archival rewrites the status (§18).
        continuation = continuation_text(disk) if event.reason == "threshold" else None
        try:
            archived = archive_brief(state.layout, prepared.artifact_path, disk)
        except (OSError, ValueError) as exc:
            state.last_failure = f"archiving {prepared.artifact_path} failed: {exc}"
            ctx.ui.notify(messages.archive_failed(prepared.artifact_path, str(exc)), "error")
            return
        state.last_artifact_path = archived
        ctx.ui.notify(messages.compaction_committed(archived), "info")
        if continuation is not None:
            self.pi.send_user_message(continuation, deliver_as="followUp")
            ctx.ui.notify(messages.continuation_submitted(), "info")

    async def on_compact_failed(self, event: SessionCompactFailedEvent, ctx: ExtensionContext) -> None:
        """Pi persisted nothing: release the gate; a prepared Brief stays pending and inert."""
        state = self.state
        if state is None:
            return
        if state.prepared is not None:
            state.stale_pending_paths = (*state.stale_pending_paths, state.prepared.artifact_path)
            state.last_failure = (
                f"Pi did not commit the prepared Brief ({'aborted' if event.aborted else event.error_message}); "
                f"{state.prepared.artifact_path} stays pending and inert"
            )
        state.clear_native_operation()

    # ================================================================== session_shutdown
    async def on_shutdown(self, event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
        """Process-local cleanup only: abort a running checkpoint, drop the state."""
        state = self.state
        if state is not None and state.active is not None and state.active.controller is not None:
            state.active.controller.abort("session shutdown")
        self.state = None

    # ================================================================== command
    async def on_command(self, args: str, ctx: ExtensionCommandContext) -> None:
        await run_command(self, args, ctx)


def _completions(prefix: str) -> list[dict[str, Any]] | None:
    items = [
        {"value": "status", "label": "status", "description": "Show the Continuity status panel"},
        {"value": "checkpoint", "label": "checkpoint", "description": "Save a Continuity Brief now"},
        {"value": "settings", "label": "settings", "description": "Configure Pi Session Continuity"},
    ]
    matching = [item for item in items if str(item["value"]).startswith(prefix.strip())]
    return matching or None


def extension(pi: ExtensionAPI) -> None:
    """The Pi Session Continuity factory (Pi's ``export default function (pi) {...}``)."""
    app = Continuity(pi)
    pi.on("session_start", app.on_session_start)
    pi.on("model_select", app.on_model_select)
    pi.on("session_before_compact", app.on_before_compact)
    pi.on("session_compact", app.on_compact)
    pi.on("session_compact_failed", app.on_compact_failed)
    pi.on("session_shutdown", app.on_shutdown)
    pi.register_command(
        COMMAND_NAME,
        app.on_command,
        description="Pi Session Continuity: status, checkpoint, settings",
        get_argument_completions=_completions,
    )


# The system this factory implements, said as the blitz reference says its own: ``run --system
# pi-blitz-handoff --extension reference`` is then refused (scenario/implementations.py
# check_chosen_system) instead of failing every handoff scenario against the wrong product.
extension.pi_continuity_system = "pi-session-continuity"  # type: ignore[attr-defined]
