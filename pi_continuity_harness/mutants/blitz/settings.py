"""Mutants of /sh settings and the settings table (reference: Settings)."""

from __future__ import annotations

import json
import os
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, patched, with_ui
from pi_continuity_harness.reference.blitz import commands
from pi_continuity_harness.reference.blitz.settings import save_settings


@mutant("H89", how="an out-of-range percent is saved", invariant="settings_file_valid")
class InvalidSettingSaved(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        updated, hint = super().validate_edit(key, raw)
        if updated is None and key.endswith("Percent"):
            data = {**self.settings.to_json(), key: float(raw)}
            fields = type(self.settings).model_fields.items()
            return type(self.settings).model_construct(**{n: data[str(f.alias)] for n, f in fields}), None
        return updated, hint


_ONE_RUN = "a fixed text or the order of one start's messages (the features check it)"
_MENU = "the explorer edits settings only with invalid values"


def _defaults(handoff: Mutant, **changes: Any) -> None:
    """Change defaults: the keys the config file does not set."""
    try:
        with open(handoff.managed().config, encoding="utf-8") as handle:
            given = json.load(handle)
    except (OSError, ValueError):
        given = {}
    fields = type(handoff.settings).model_fields
    update = {name: value for name, value in changes.items() if fields[name].alias not in given}
    handoff.settings = handoff.settings.model_copy(update=update)


@mutant("H88a", how="a confirmed edit applies but is never written", unreachable=_MENU)
class EditNotSaved(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "save_settings", lambda path, settings: None):
            await super().run(args, ctx)


@mutant(
    "H88d",
    how="an edit is checked against its own range only, not the other keys",
    invariant="settings_file_valid",
)
class EditCheckedAlone(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        updated, hint = super().validate_edit(key, raw)
        if updated is None and key in ("contextWarningPercent", "criticalWarningPercent"):
            try:
                value = float(raw)
            except ValueError:
                return updated, hint
            if 1 <= value <= 100:
                data = {**self.settings.to_json(), key: value}
                fields = type(self.settings).model_fields.items()
                return type(self.settings).model_construct(**{n: data[str(f.alias)] for n, f in fields}), None
        return updated, hint


@mutant("H91a", "H91b", how="a new directory is created before its confirmation is asked", unreachable=_MENU)
class DirectoryCreatedFirst(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        confirm = ctx.ui.confirm

        async def create_first(title: str, message: str, **options: Any) -> bool:
            for word in message.split():
                if os.path.isabs(word.rstrip("?")):
                    os.makedirs(word.rstrip("?"), exist_ok=True)
            return bool(await confirm(title, message, **options))

        await super().run(args, with_ui(ctx, confirm=create_first))


@mutant("H94a", how="contextWarningPercent defaults to 50", unreachable=_ONE_RUN)
class WarningDefault50(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        _defaults(self, context_warning_percent=50.0)


@mutant("H95a", how="criticalWarningPercent defaults to 95", unreachable=_ONE_RUN)
class CriticalDefault95(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        _defaults(self, critical_warning_percent=95.0)


@mutant("H99a", how="automaticSessionHandoffPercent defaults to 75", unreachable=_ONE_RUN)
class AutomaticDefault75(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        _defaults(self, automatic_session_handoff_percent=75.0)


@mutant("H100a", how="readinessRetrySeconds defaults to 1", unreachable=_ONE_RUN)
class RetryDefault1(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        _defaults(self, readiness_retry_seconds=1)


@mutant("H102a", how="the default recovery directory is <root>/deferred", unreachable=_ONE_RUN)
class RecoveryDirDeferred(Mutant):
    def recovery_dir(self) -> str:
        if self.settings.recovery_directory:
            return self.settings.recovery_directory
        return os.path.join(self.managed().root, "deferred")


@mutant("H91b", how="a declined directory is created anyway", unreachable=_MENU)
class DeclinedDirectoryCreated(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        confirm = ctx.ui.confirm

        async def create_anyway(title: str, message: str, **options: Any) -> bool:
            answer = bool(await confirm(title, message, **options))
            if not answer:
                for word in message.split():
                    if os.path.isabs(word.rstrip("?")):
                        os.makedirs(word.rstrip("?"), exist_ok=True)
            return answer

        await super().run(args, with_ui(ctx, confirm=create_anyway))


@mutant("H90a", how="a declined directory creation still saves the new value", unreachable=_MENU)
class DeclinedValueSaved(Mutant):
    last_edit: Any = None

    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        updated, hint = super().validate_edit(key, raw)
        self.last_edit = updated
        return updated, hint

    async def run(self, args: str, ctx: Any) -> None:
        confirm = ctx.ui.confirm

        async def saved_anyway(title: str, message: str, **options: Any) -> bool:
            answer = bool(await confirm(title, message, **options))
            if not answer and self.last_edit is not None:
                save_settings(self.managed().config, self.last_edit)
                self.apply_settings(self.last_edit)
            return answer

        await super().run(args, with_ui(ctx, confirm=saved_anyway))
