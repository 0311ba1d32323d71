"""Single-rule mutants of the Pi Session Continuity reference, one (or a few) per catalogue rule.

Each breaks the rule (or rules) it declares and nothing else it can avoid breaking, so the kill
matrix can check the claim of every ``@rule-<id>`` tag: the scenarios that prove a rule must fail
for its mutant. Most are *patches*: the factory replaces one attribute of a reference module when
it runs (never restored), so every mutant runs in its own process, as the ``mutants`` command does.
Where a reference module imported a name from another, the patch is made where it is looked up.

They register into :data:`~pi_continuity_harness.mutants.catalogue.MUTANTS` with the spec
``pi_continuity_harness.mutants.continuity_rules:<name>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.mutants.catalogue import MUTANTS, Mutant, _module
from pi_continuity_harness.reference.psc import extension as reference_extension

__all__ = ["patched", "registered"]

Factory = Callable[[ExtensionAPI], None]


def registered(name: str, rules: tuple[str, ...], rule: str, how: str, factory: Factory) -> Factory:
    """Register ``factory`` as the mutant ``name`` (a module attribute, so its spec resolves)."""
    factory.__name__ = factory.__qualname__ = name
    globals()[name] = factory
    MUTANTS[name] = Mutant(name, rule, how, factory, f"{__name__}:{name}", rules=rules)
    return factory


def patched(
    name: str, rules: tuple[str, ...], rule: str, how: str, where: str, make: Callable[[Any], Any]
) -> Factory:
    """A mutant that sets ``<module>.<attribute>`` (``where``: ``"module:attr"`` or
    ``"module:Class.method"``) to ``make(original)`` when its factory runs, then loads the
    reference."""
    module_name, _, path = where.partition(":")

    def factory(pi: ExtensionAPI) -> None:
        owner: Any = _module(module_name)
        *parents, attribute = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, attribute, make(getattr(owner, attribute)))
        reference_extension(pi)

    return registered(name, rules, rule, how, factory)


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda _original: value


# ============================================================================ §12, §18: no UI
patched(
    "settings_written_without_ui",
    ("P103a",),
    "§12, §18: non-interactive mode is read-only; /continuity settings must not mutate configuration",
    "without a UI, /continuity settings merges 75% / 15% of the current window into the project settings",
    "commands:_read_only_text",
    lambda original: (
        lambda state, model: (
            _module("commands").merge_project_compaction_settings(
                state.settings_path,
                *_module("commands").derive_native_tokens(model.context_window, "75", "15"),
            ),
            original(state, model),
        )[1]
    ),
)


def _menu_without_ui(original: Any) -> Any:
    async def run_settings(app: Any, ctx: Any) -> None:
        state = app.ensure_state(ctx)
        if not ctx.has_ui:
            await ctx.ui.select(_module("commands").MENU_TITLE, _module("commands")._menu(state, ctx.model))
        await original(app, ctx)

    return run_settings


patched(
    "settings_dialog_without_ui",
    ("P103b",),
    "§18: in non-UI modes commands return textual status without dialogs",
    "without a UI, /continuity settings first opens the settings menu (Pi answers nothing)",
    "commands:run_settings",
    _menu_without_ui,
)
patched(
    "settings_text_without_values",
    ("P103c",),
    "§12: non-interactive mode prints current/effective values plus the exact settings path",
    "without a UI, /continuity settings prints only that settings are read-only, with the path",
    "commands:_read_only_text",
    lambda original: lambda state, model: _module("messages").settings_read_only(state.settings_path),
)
patched(
    "settings_text_without_path",
    ("P103d",),
    "§12: non-interactive mode prints the exact settings path",
    "without a UI, /continuity settings prints every value but says 'the project settings file' for its path",
    "commands:_read_only_text",
    lambda original: (
        lambda state, model: original(state, model).replace(state.settings_path, "the project settings file")
    ),
)


def _silent_status(original: Any) -> Any:
    def run_status(app: Any, ctx: Any) -> None:
        if ctx.has_ui:
            original(app, ctx)

    return run_status


patched(
    "status_silent_without_ui",
    ("P104a",),
    "§18: in non-UI modes commands return textual status",
    "without a UI, /continuity status shows nothing",
    "commands:run_status",
    _silent_status,
)


def _checkpoint_without_ui(original: Any) -> Any:
    async def run_checkpoint(app: Any, ctx: Any) -> None:
        await original(app, _WithUI(ctx))

    return run_checkpoint


class _WithUI:
    """``ctx`` claiming a UI (so the checkpoint's non-UI branch is skipped)."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    @property
    def has_ui(self) -> bool:
        return True


patched(
    "checkpoint_writes_without_ui",
    ("P104b",),
    "§18: in non-UI modes commands mutate nothing; /continuity checkpoint included",
    "without a UI, /continuity checkpoint synthesizes and writes a pending Brief as with a UI",
    "commands:run_checkpoint",
    _checkpoint_without_ui,
)


def _bare_is_status(original: Any) -> Any:
    async def run_command(app: Any, args: str, ctx: Any) -> None:
        if not args.split() and not ctx.has_ui:
            _module("commands").run_status(app, ctx)
            return
        await original(app, args, ctx)

    return run_command


patched(
    "bare_command_is_status_without_ui",
    ("P104c",),
    "§12, §18: bare /continuity is the settings shortcut; without a UI it is the read-only settings text",
    "without a UI, bare /continuity shows the status panel instead of the read-only settings text",
    "extension:run_command",
    _bare_is_status,
)


# ============================================================================ §11, §12: the status panel
def _without_lines(*prefixes: str) -> Callable[[Any], Any]:
    """``format_status_panel`` with the lines that start with any of ``prefixes`` left out."""

    def make(original: Any) -> Any:
        def format_status_panel(snapshot: Any) -> str:
            lines = original(snapshot).split("\n")
            return "\n".join(line for line in lines if not line.startswith(prefixes))

        return format_status_panel

    return make


for _name, _rules, _rule, _prefixes in (
    ("status_without_extension_state", ("P95a",), "extension enabled/disabled", ("Extension:",)),
    ("status_without_trust", ("P95b",), "trust state", ("Project trust:",)),
    ("status_without_config_validity", ("P95c",), "config validity", ("Config:",)),
    ("status_without_native_state", ("P95d",), "native compaction enabled/disabled", ("Native compaction:",)),
    ("status_without_window", ("P95f",), "active model context window", ("Model window:",)),
    (
        "status_without_synthesis",
        ("P95h",),
        "synthesis model and effort",
        ("Synthesis model:", "Synthesis effort:"),
    ),
    ("status_without_settings_path", ("P95i",), "project settings path", ("Project settings:",)),
    ("status_without_restart_state", ("P95j",), "whether restart is required", ("Restart required:",)),
    ("status_without_artifact_directory", ("P95k",), "artifact directory", ("Artifact directory:",)),
    ("status_without_last_failure", ("P95n",), "last failure", ("Last failure:",)),
    (
        "status_without_written_values",
        ("P96",),
        "written-after-restart values",
        ("Written for after restart:",),
    ),
):
    patched(
        _name,
        _rules,
        f"§12: /continuity status shows the {_rule}",
        f"the status panel leaves out its {' / '.join(_prefixes)} line(s)",
        "commands:format_status_panel",
        _without_lines(*_prefixes),
    )


def _tokens_as_percent(original: Any) -> Any:
    def format_status_panel(snapshot: Any) -> str:
        text: str = original(snapshot)
        live = snapshot.live_settings
        if live is not None:
            text = text.replace(f"Reserve: {live.reserve_tokens:,}", "Reserve: (see percentages)")
            text = text.replace(f"Keep recent: {live.keep_recent_tokens:,}", "Keep recent:")
        return text

    return format_status_panel


patched(
    "status_without_tokens",
    ("P95e",),
    "§11, §12: status shows the authoritative reserveTokens and keepRecentTokens",
    "the status panel shows the percentages but not the reserve and keep-recent tokens",
    "commands:format_status_panel",
    _tokens_as_percent,
)
patched(
    "status_without_approximately",
    ("P95g",),
    "§11, §12: status shows the trigger boundary and the approximate effective percentages",
    "the status panel prints the percentages without 'approximately' (as if they were exact)",
    "commands:format_status_panel",
    lambda original: lambda snapshot: original(snapshot).replace("approximately ", ""),
)


def _block_reordered(original: Any) -> Any:
    def format_status_panel(snapshot: Any) -> str:
        lines = original(snapshot).split("\n")
        restart = [line for line in lines if line.startswith("Restart required:")]
        rest = [line for line in lines if not line.startswith("Restart required:")]
        at = next((i for i, line in enumerate(rest) if line.startswith("Artifact directory:")), len(rest))
        return "\n".join([*rest[: at + 1], *restart, *rest[at + 1 :]])

    return format_status_panel


patched(
    "status_block_out_of_order",
    ("P88",),
    "§11: status opens with the spec's block, 'Restart required' its seventh line",
    "the 'Restart required' line moves after 'Artifact directory'",
    "commands:format_status_panel",
    _block_reordered,
)


def _snapshot_with(**changes: Any) -> Callable[[Any], Any]:
    """``RuntimeState.snapshot`` with some fields of the snapshot replaced."""

    def make(original: Any) -> Any:
        import dataclasses  # noqa: PLC0415 (only the mutant needs it)

        def snapshot(self: Any, model: Any) -> Any:
            return dataclasses.replace(original(self, model), **changes)

        return snapshot

    return make


patched(
    "status_without_current_operation",
    ("P95l",),
    "§12: status shows the current operation",
    "the status snapshot never has a current operation",
    "state:RuntimeState.snapshot",
    _snapshot_with(current_operation=None),
)
patched(
    "status_without_stale_paths",
    ("P60",),
    "§7, §12: /continuity status shows the stale same-session pending path",
    "the status snapshot never lists stale pending Briefs",
    "state:RuntimeState.snapshot",
    _snapshot_with(stale_pending_paths=()),
)
patched(
    "status_without_last_artifact",
    ("P95m",),
    "§12: status shows the last artifact",
    "the status snapshot never has a last artifact",
    "state:RuntimeState.snapshot",
    _snapshot_with(last_artifact_path=None, last_pending_path=None),
)
patched(
    "status_restart_never_required",
    ("P15",),
    "§5, §18: a settings write requires a restart; status never claims immediate activation",
    "status always says 'Restart required: no' (the written settings are never pending)",
    "state:RuntimeState.snapshot",
    _snapshot_with(written_settings=None),
)


def _first_window(original: Any) -> Any:
    first: dict[str, Any] = {}

    def snapshot(self: Any, model: Any) -> Any:
        first.setdefault("model", model)
        return original(self, first["model"])

    return snapshot


patched(
    "status_keeps_first_window",
    ("P17",),
    "§5, §11: /continuity status recalculates the effective percentages for the current window",
    "status (and footer) keep computing with the first model they saw",
    "state:RuntimeState.snapshot",
    _first_window,
)


def _archive_not_reported(original: Any) -> Any:
    async def on_compact(self: Any, event: Any, ctx: Any) -> None:
        state = self.state
        pending = state.prepared.artifact_path if state is not None and state.prepared is not None else None
        await original(self, event, ctx)
        if pending is not None and state is not None and state.last_artifact_path != pending:
            state.last_artifact_path = pending

    return on_compact


patched(
    "status_keeps_pending_path_after_archive",
    ("P55",),
    "§7: after a successful archive, status reports the final archive path as the last artifact",
    "after archiving, status keeps the (now removed) pending path as the last artifact",
    "extension:Continuity.on_compact",
    _archive_not_reported,
)


def _failed_path_forgotten(original: Any) -> Any:
    def fail(self: Any, state: Any, ctx: Any, request: Any, failure: Any, operation: Any) -> Any:
        result = original(self, state, ctx, request, failure, operation)
        state.last_artifact_path = None
        if state.last_failure:
            state.last_failure = state.last_failure.split(" (failed artifact:")[0]
        return result

    return fail


patched(
    "status_without_failed_path",
    ("P56",),
    "§7: failed artifacts report the failed artifact path when one exists",
    "after a failed handoff, status names no failed artifact",
    "extension:Continuity._fail",
    _failed_path_forgotten,
)


def _unwritten_failed_path(original: Any) -> Any:
    def fail(self: Any, state: Any, ctx: Any, request: Any, failure: Any, operation: Any) -> Any:
        result = original(self, state, ctx, request, failure, operation)
        if state.last_artifact_path is None:
            import datetime  # noqa: PLC0415 (only the mutant needs it)

            moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
            state.last_artifact_path = request.layout.failed_path(moment, request.event_id)
        return result

    return fail


patched(
    "status_names_unwritten_failed_path",
    ("P57",),
    "§7: if no failed artifact could be written, status reports the failure and no artifact path for that event",
    "when the failed postmortem could not be written, status still names a failed artifact path",
    "extension:Continuity._fail",
    _unwritten_failed_path,
)
