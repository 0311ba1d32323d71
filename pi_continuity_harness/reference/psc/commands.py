"""``/continuity``: status, checkpoint and settings (spec §11, §12, §18).

* ``/continuity status``: the status panel, as one notification.
* ``/continuity checkpoint``: a save-only pending Brief (handoffReason ``checkpoint``) through
  the same synthesis/validation/write/re-read pipeline, with its own AbortController;
  refused while any other Continuity operation holds the session's gate.
* ``/continuity settings`` (and bare ``/continuity``): one menu when there is a UI and the
  project is trusted; otherwise read-only text with the exact settings path.

Without a UI (print and json modes) every command returns text and mutates nothing (spec
§18): ``ctx.ui`` is Pi's no-op context there, so the text goes to stdout, which Pi shows the
user on stderr (``output-guard.js`` ``takeOverStdout``); a checkpoint writes no Brief.

The settings menu follows fixed conventions so any script can drive it: a
``ctx.ui.select`` whose native option contains the word "compaction", two ``ctx.ui.input``
prompts whose titles contain "Trigger" and "Keep-recent", and a ``ctx.ui.confirm`` whose
message is the preview. Percentages are only an input method and are never written.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal
from typing import Any, Literal, Protocol

from pi_continuity_harness.api import (
    AbortController,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    Model,
)
from pi_continuity_harness.reference.psc import messages
from pi_continuity_harness.reference.psc.atomic_io import atomic_write_text
from pi_continuity_harness.reference.psc.config import (
    SYNTHESIS_EFFORTS,
    ConfigError,
    load_extension_config,
    parse_json_object,
    validate_extension_config,
)
from pi_continuity_harness.reference.psc.lifecycle import (
    HandoffError,
    HandoffRequest,
    context_messages,
    new_event_id,
    prepare_brief,
    write_failure_postmortem,
)
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    NativeSettingsError,
    PercentInputError,
    derive_native_tokens,
    effective_percents,
    one_decimal,
    read_native_settings,
)
from pi_continuity_harness.reference.psc.settings_merge import (
    SettingsMergeError,
    merge_project_compaction_settings,
)
from pi_continuity_harness.reference.psc.settings_preview import inherit_model_warning, settings_preview
from pi_continuity_harness.reference.psc.state import ActiveOperation, RuntimeState
from pi_continuity_harness.reference.psc.status import format_status_panel, status_notify_type

__all__ = [
    "DONE_OPTION",
    "MENU_TITLE",
    "CommandHost",
    "run_checkpoint",
    "run_command",
    "run_settings",
    "run_status",
    "say",
]


class CommandHost(Protocol):
    """What ``/continuity`` needs from the extension instance that registered it (``Continuity``):
    its ``pi`` and the runtime state of the current session."""

    pi: ExtensionAPI

    def ensure_state(self, ctx: ExtensionContext) -> RuntimeState: ...


MENU_TITLE = "Pi Session Continuity settings"
DONE_OPTION = "Done"
_CANCEL_OPTION = "Cancel"


def say(ctx: ExtensionContext, text: str, kind: Literal["info", "warning", "error"] = "info") -> None:
    """Show a command's text: a notification with a UI; without one (print, json) stdout, which
    is all a user sees of an extension command there (Pi's no-op UI drops notifications)."""
    if ctx.has_ui:
        ctx.ui.notify(text, kind)
    else:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


async def run_command(app: CommandHost, args: str, ctx: ExtensionCommandContext) -> None:
    words = args.split()
    sub = words[0].lower() if words else ""
    if sub in ("", "settings"):
        await run_settings(app, ctx)
    elif sub == "status":
        run_status(app, ctx)
    elif sub == "checkpoint":
        await run_checkpoint(app, ctx)
    else:
        say(ctx, messages.unknown_subcommand(args.strip()), "warning")


# =============================================================================== status


def run_status(app: CommandHost, ctx: ExtensionCommandContext) -> None:
    state = app.ensure_state(ctx)
    snapshot = state.snapshot(ctx.model)
    if not state.trusted:
        say(ctx, messages.untrusted_project(), "warning")
    say(ctx, format_status_panel(snapshot), status_notify_type(snapshot))


# =============================================================================== checkpoint


def _estimate_tokens(items: list[dict[str, Any]]) -> int:
    """chars/4 of the context's texts, for when Pi reports no usage (after a compaction)."""
    chars = sum(len(str(item.get(key) or "")) for item in items for key in ("content", "summary"))
    return math.ceil(chars / 4)


async def run_checkpoint(app: CommandHost, ctx: ExtensionCommandContext) -> None:
    state = app.ensure_state(ctx)
    if not ctx.has_ui:
        # Non-UI modes are read-only (spec §18): the checkpoint answers with text, writes nothing.
        say(ctx, messages.checkpoint_read_only() + "\n" + format_status_panel(state.snapshot(ctx.model)))
        return
    if not state.trusted:
        ctx.ui.notify(messages.untrusted_project(), "warning")
        return
    if state.config.error is not None:
        ctx.ui.notify(messages.invalid_config(state.config.error), "warning")
        return
    if not state.config.config.enabled:
        ctx.ui.notify(messages.extension_disabled(state.config.path), "warning")
        return
    if state.active is not None:
        ctx.ui.notify(messages.operation_in_progress(), "warning")
        return
    model = ctx.model
    if model is None or model.context_window <= 0:
        ctx.ui.notify(messages.checkpoint_failed("no active model with a usable context window"), "error")
        return
    settings, error = state.native_settings(model)
    if settings is None:
        ctx.ui.notify(
            messages.checkpoint_failed(f"native compaction settings cannot be read: {error}"), "error"
        )
        return

    controller = AbortController()
    operation = ActiveOperation("checkpoint", new_event_id(), controller=controller)
    state.active = operation
    try:
        branch = ctx.session_manager.get_branch()
        context, previous_summary = context_messages(branch)
        usage = ctx.get_context_usage()
        tokens = usage.tokens if usage is not None and usage.tokens is not None else _estimate_tokens(context)
        request = HandoffRequest(
            handoff_reason="checkpoint",
            event_id=operation.event_id,
            session_id=state.session_id,
            session_file=ctx.session_manager.get_session_file(),
            layout=state.layout,
            config=state.config.config,
            active_model=model,
            settings=settings,
            token_count=tokens,
            branch_leaf_before=ctx.session_manager.get_leaf_id(),
            messages=context,
            previous_summary=previous_summary,
            custom_instructions=None,
            signal=controller.signal,
            thinking_level=app.pi.get_thinking_level(),
        )

        def on_phase(name: str) -> None:
            operation.phase = name

        try:
            saved = await prepare_brief(request, ctx.model_registry, on_phase)
        except HandoffError as failure:
            postmortem = write_failure_postmortem(request, failure)
            state.last_artifact_path = postmortem
            state.last_failure = f"checkpoint {failure.phase}: {failure.reason}" + (
                f" (failed artifact: {postmortem})"
                if postmortem
                else " (no failed artifact could be written)"
            )
            ctx.ui.notify(messages.checkpoint_failed(f"{failure.phase}: {failure.reason}"), "error")
            return
        state.last_artifact_path = saved.path
        state.last_pending_path = saved.path
        ctx.ui.notify(messages.brief_saved(saved.path), "info")
    finally:
        if state.active is operation:
            state.active = None


# =============================================================================== settings


def _read_only_text(state: RuntimeState, model: Model | None) -> str:
    return (
        messages.settings_read_only(state.settings_path) + "\n" + format_status_panel(state.snapshot(model))
    )


def _percent_text(value: Decimal) -> str:
    """A live percentage as the status panel rounds it, without trailing zeros (``75``)."""
    return format(one_decimal(value).normalize(), "f")


def _menu(state: RuntimeState, model: Model | None) -> list[str]:
    config = state.config.config
    live, _error = state.native_settings(model)
    if live is not None:
        native = (
            f"Native compaction setup for the current model (live reserve {live.reserve_tokens:,}, "
            f"keep recent {live.keep_recent_tokens:,})"
        )
    else:
        native = "Native compaction setup for the current model (live settings unreadable)"
    return [
        f"Extension enabled: {'yes' if config.enabled else 'no'}",
        native,
        f"Synthesis model: {config.synthesis_model}",
        f"Synthesis effort: {config.synthesis_effort}",
        f"Artifact directory: {config.artifact_directory}",
        DONE_OPTION,
    ]


async def run_settings(app: CommandHost, ctx: ExtensionCommandContext) -> None:
    state = app.ensure_state(ctx)
    if not ctx.has_ui:
        say(ctx, _read_only_text(state, ctx.model), "info")
        return
    if not state.trusted:
        ctx.ui.notify(messages.untrusted_project(), "warning")
        ctx.ui.notify(_read_only_text(state, ctx.model), "info")
        return
    while True:
        options = _menu(state, ctx.model)
        choice = await ctx.ui.select(MENU_TITLE, options)
        if choice is None or choice == DONE_OPTION or choice not in options:
            return
        index = options.index(choice)
        if index == 0:
            await _toggle_enabled(state, ctx)
        elif index == 1:
            await _native_setup(state, ctx)
        elif index == 2:
            await _synthesis_model(state, ctx)
        elif index == 3:
            await _synthesis_effort(state, ctx)
        else:
            await _artifact_directory(state, ctx)


def _written_effective(
    state: RuntimeState, model: Model | None, reserve: int, keep: int
) -> NativeCompactionSettings:
    """What Pi will use for ``model`` after a restart: the live settings with the project
    override merged in (a ``modelOverrides`` entry for the model still wins, as in Pi)."""
    fallback = NativeCompactionSettings(True, reserve, keep)
    if state.live.json_text is None:
        return fallback
    data = json.loads(state.live.json_text)
    compaction = data.get("compaction")
    merged = dict(compaction) if isinstance(compaction, dict) else {}
    merged.update({"enabled": True, "reserveTokens": reserve, "keepRecentTokens": keep})
    data["compaction"] = merged
    try:
        return read_native_settings(data, model.full_id if model is not None else None)
    except NativeSettingsError:
        return fallback


async def _native_setup(state: RuntimeState, ctx: ExtensionCommandContext) -> None:
    model = ctx.model
    window = model.context_window if model is not None else 0
    if window <= 0:
        ctx.ui.notify(
            messages.settings_input_rejected("the current model has no usable context window"), "warning"
        )
        return
    live, _error = state.native_settings(model)
    trigger_hint, keep_hint = "75", "15"
    if live is not None and live.reserve_tokens < window:
        view = effective_percents(window, live)
        trigger_hint, keep_hint = _percent_text(view.trigger_percent), _percent_text(view.keep_percent)
    trigger = await ctx.ui.input(
        f"Trigger percent of the current model window ({window:,} tokens)", trigger_hint
    )
    if trigger is None:
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    keep = await ctx.ui.input(
        f"Keep-recent percent of the current model window ({window:,} tokens)", keep_hint
    )
    if keep is None:
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    try:
        preview = settings_preview(
            window, trigger, keep, state.settings_path, synthesis_model=state.config.config.synthesis_model
        )
        reserve, keep_tokens = derive_native_tokens(window, trigger, keep)
    except PercentInputError as exc:
        ctx.ui.notify(messages.settings_input_rejected(str(exc)), "warning")
        return
    if not await ctx.ui.confirm("Write these native compaction settings?", preview):
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    try:
        merge_project_compaction_settings(state.settings_path, reserve, keep_tokens)
    except (SettingsMergeError, OSError) as exc:
        ctx.ui.notify(messages.settings_write_failed(str(exc)), "error")
        return
    state.written_settings = _written_effective(state, model, reserve, keep_tokens)
    ctx.ui.notify(messages.settings_saved(state.settings_path), "warning")


def _write_config_field(state: RuntimeState, key: str, value: Any) -> str | None:
    """Merge one field into the extension config (atomic); an error text or None."""
    path = state.config.path
    try:
        with open(path, "rb") as handle:
            existing: str | None = handle.read().decode("utf-8")
    except FileNotFoundError:
        existing = None
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read {path}: {exc}"
    data: dict[str, Any] = {}
    if existing is not None:
        parsed, problem = parse_json_object(existing)
        if parsed is None:
            return f"cannot update {path}: {problem}"
        data = parsed
    data[key] = value
    result = validate_extension_config(data, path)
    if isinstance(result, ConfigError):
        return f"the new config would be invalid: {result.describe()}"
    try:
        atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        return f"writing {path} failed: {exc.strerror or exc}"
    state.config = load_extension_config(state.cwd, trusted=True)
    return None


async def _confirm_and_write(
    state: RuntimeState, ctx: ExtensionCommandContext, key: str, value: Any, extra: str | None = None
) -> None:
    preview = f"Set {key} to {json.dumps(value)} in {state.config.path}."
    if extra:
        preview += "\n" + extra
    if not await ctx.ui.confirm("Update the Pi Session Continuity config?", preview):
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    error = _write_config_field(state, key, value)
    if error is not None:
        ctx.ui.notify(messages.settings_write_failed(error), "error")
        return
    ctx.ui.notify(messages.config_saved(state.config.path), "info")


async def _toggle_enabled(state: RuntimeState, ctx: ExtensionCommandContext) -> None:
    value = not state.config.config.enabled
    extra = None if value else "Native compaction will be cancelled while the extension is disabled."
    await _confirm_and_write(state, ctx, "enabled", value, extra)


async def _synthesis_model(state: RuntimeState, ctx: ExtensionCommandContext) -> None:
    models = [m.full_id for m in ctx.model_registry.get_available()]
    options = ["inherit", *models, _CANCEL_OPTION]
    choice = await ctx.ui.select("Synthesis model for Continuity Briefs", options)
    if choice is None or choice == _CANCEL_OPTION:
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    await _confirm_and_write(state, ctx, "synthesisModel", choice, inherit_model_warning(choice))


async def _synthesis_effort(state: RuntimeState, ctx: ExtensionCommandContext) -> None:
    options = [*SYNTHESIS_EFFORTS, _CANCEL_OPTION]
    choice = await ctx.ui.select("Synthesis effort for Continuity Briefs", options)
    if choice is None or choice == _CANCEL_OPTION:
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    await _confirm_and_write(state, ctx, "synthesisEffort", choice)


async def _artifact_directory(state: RuntimeState, ctx: ExtensionCommandContext) -> None:
    value = await ctx.ui.input(
        "Artifact directory (relative to the project config directory, or absolute)",
        state.config.config.artifact_directory,
    )
    if value is None or not value.strip():
        ctx.ui.notify(messages.settings_cancelled(), "info")
        return
    await _confirm_and_write(state, ctx, "artifactDirectory", value.strip())
