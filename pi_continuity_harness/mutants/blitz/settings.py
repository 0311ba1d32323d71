"""Mutants of /sh settings and the settings table (reference: Settings)."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, patched, with_ui
from pi_continuity_harness.reference.blitz import commands, templates
from pi_continuity_harness.reference.blitz import settings as settings_module
from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text
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


@mutant(
    "H102a",
    how="the default recovery directory is <root>/deferred",
    invariant="captured_prompts_kept_in_order",
)
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


_LOADED_ONCE = (
    "the explorer's invalid config files are judged by invalid_config_refuses_starts, which declares "
    "H106 only; this rule's own check is a feature's"
)


class _InvalidKeyAccepted(Mutant):
    """A config whose only error is about ``KEY`` loads as the defaults, with no error."""

    KEY = ""

    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if self.settings_error and self.KEY in self.settings_error.split(".json: ", 1)[-1]:
            self.settings_error = None


#: The keys whose invalid values the explorer writes (``generate._INVALID_CONFIGS``: a critical
#: level above 100, a warning level not below the critical one): a start the mutant accepts sends
#: a Call under the invalid file, which ``invalid_config_refuses_starts`` (H106) fails.
_EXPLORED_INVALID = frozenset({"contextWarningPercent", "criticalWarningPercent"})


def _accepts(key: str, rule: str) -> type[Mutant]:
    """Register ``Invalid<Key>Accepted``: the validation of ``key`` is skipped (rule ``rule``)."""
    name = f"Invalid{key[0].upper()}{key[1:]}Accepted"
    cls = type(name, (_InvalidKeyAccepted,), {"KEY": key, "__module__": __name__, "__qualname__": name})
    how = f"an invalid {key} in the config is ignored"
    if key in _EXPLORED_INVALID:
        registered = mutant(rule, how=how, invariant="invalid_config_refuses_starts")(cls)
    else:
        registered = mutant(rule, how=how, unreachable=_LOADED_ONCE)(cls)
    globals()[name] = registered
    return cls


for _key, _rule in (
    ("automaticSessionHandoff", "H96"),
    ("deferPromptsFrom", "H97"),
    ("deleteHandoffAfterReading", "H98"),
    ("contextWarningPercent", "H94b"),
    ("criticalWarningPercent", "H95b"),
    ("automaticSessionHandoffPercent", "H99b"),
    ("readinessRetrySeconds", "H100b"),
    ("maxSessionChainLength", "H101b"),
    ("recoveryDirectory", "H102b"),
    ("templateDirectory", "H103"),
    ("callTemplate", "H104b"),
    ("handoffTemplate", "H104b"),
    ("writerAttempts", "H119"),
    ("writerRetryDelaySeconds", "H119"),
    ("debugging", "H119"),
):
    _accepts(_key, _rule)


@mutant(
    "H104b",
    how="a template setting that names the other role's file (handoffTemplate call_default.cmpl) is "
    "not refused: the defaults load (an outside mutant; the features tried a path and a wrong "
    "extension)",
    unreachable=_LOADED_ONCE,
)
class TemplateOfTheOtherRoleAccepted(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not self.settings_error:
            return
        try:
            with open(self.managed().config, encoding="utf-8") as handle:
                written = json.load(handle)
        except (OSError, ValueError):
            return
        other = {"callTemplate": "handoff_", "handoffTemplate": "call_"}
        crossed = [key for key, prefix in other.items() if str(written.get(key, "")).startswith(prefix)]
        if crossed and all(key in self.settings_error for key in crossed):
            self.settings_error = None


@mutant(
    "H106",
    how="an invalid config file is repaired: rewritten with the defaults",
    invariant="invalid_config_refuses_starts",
)
class InvalidConfigRepaired(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if self.settings_error:
            save_settings(self.managed().config, self.settings)
            self.settings_error = None


@mutant("H118", how="retired keys of an older config are refused as unknown", unreachable=_LOADED_ONCE)
class RetiredKeysRefused(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        try:
            with open(self.managed().config, encoding="utf-8") as handle:
                given = json.load(handle)
        except (OSError, ValueError):
            return
        retired = [
            k for k in ("prepareWhileWaiting", "writerAttempts", "writerRetryDelaySeconds") if k in given
        ]
        if retired and not self.settings_error:
            self.settings_error = f"{retired[0]}: unknown key"


@mutant(
    "H120", how="an older config is rewritten in the current schema when it loads", unreachable=_LOADED_ONCE
)
class OldConfigRewritten(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not self.settings_error and os.path.exists(self.managed().config):
            with open(self.managed().config, encoding="utf-8") as handle:
                text = handle.read()
            if any(k in text for k in ("prepareWhileWaiting", "writerAttempts", "writerRetryDelaySeconds")):
                save_settings(self.managed().config, self.settings)


@mutant("H88c", how="a confirmed edit applies only after a reload", unreachable=_MENU)
class EditAppliesAfterReload(Mutant):
    def apply_settings(self, settings: Any) -> None:
        return None


@mutant(
    "H133",
    how="a /sh dialog's answer is echoed into the model's context",
    invariant="reminder_only_while_request_waits",
)
class AnswersEchoedToModel(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        ask = ctx.ui.input

        async def echoed(title: str, *rest: Any, **options: Any) -> Any:
            answer = await ask(title, *rest, **options)
            if answer:
                self.pi.send_message(
                    {"customType": "blitz-handoff-note", "content": f"{title}: {answer}", "display": True}
                )
            return answer

        await super().run(args, with_ui(ctx, input=echoed))


@mutant(
    "H92",
    how="Escape on an input throws away every edit of this /sh settings opening (a draft)",
    unreachable="the explorer never escapes a settings input",
)
class SettingsDraft(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() != "settings":
            await super().run(args, ctx)
            return
        config = self.managed().config
        saved = open(config, "rb").read() if os.path.exists(config) else None  # noqa: SIM115
        settings = self.settings
        ask = ctx.ui.input

        async def input_or_discard(*a: Any, **k: Any) -> Any:
            answer = await ask(*a, **k)
            if answer is None:
                if saved is None:
                    if os.path.exists(config):
                        os.remove(config)
                else:
                    with open(config, "wb") as handle:
                        handle.write(saved)
                self.apply_settings(settings)
            return answer

        await super().run(args, with_ui(ctx, input=input_or_discard))


@mutant(
    "H93",
    how="the template list of /sh settings offers both roles' templates",
    unreachable="no invariant reads the options of the settings template list",
)
class TemplateListMixesRoles(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.catalogue

        def both(role: str, directories: list[str]) -> list[str]:
            return sorted({*original("call", directories), *original("handoff", directories)})

        with patched(commands, "catalogue", both):
            await super().run(args, ctx)


@mutant(
    "H88b",
    how="a settings save leaves its temporary file next to config.json",
    unreachable="settings_file_valid reads config.json, not the files beside it",
)
class SettingsTempLeftOver(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        await super().run(args, ctx)
        config = self.managed().config
        if args.strip() == "settings" and os.path.exists(config):
            with open(config, "rb") as source, open(config + ".4f2a.tmp", "wb") as leftover:
                leftover.write(source.read())


@mutant(
    "H90b",
    how="a settings edit whose save fails is applied in memory all the same",
    unreachable="the explorer injects no write fault on the config",
)
class FailedSaveApplied(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        def save(path: str, updated: Any) -> None:
            try:
                save_settings(path, updated)
            except OSError:
                self.apply_settings(updated)
                raise

        with patched(commands, "save_settings", save):
            await super().run(args, ctx)


@mutant(
    "H101a",
    how="maxSessionChainLength defaults to 26",
    unreachable="the blitz explorer never builds a chain of 25 sessions",
)
class ChainDefault26(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if self.settings.max_session_chain_length == 25:
            self.settings = self.settings.model_copy(update={"max_session_chain_length": 26})


def _unchecked(handoff: Mutant, key: str, raw: str, field: str, value: Any) -> Any:
    """An edit of ``key`` to ``raw`` taken as ``value`` without the range check (None: not this edit)."""
    if raw.strip() != str(value) and raw.strip() != f"{value}.0":
        return None
    return handoff.settings.model_copy(update={field: value}), None


@mutant("H101b", how="/sh settings accepts maxSessionChainLength 0", unreachable=_MENU)
class ChainZeroAccepted(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        edit = (
            _unchecked(self, key, raw, "max_session_chain_length", 0)
            if key == "maxSessionChainLength"
            else None
        )
        return edit if edit is not None else super().validate_edit(key, raw)


@mutant("H100b", how="/sh settings accepts readinessRetrySeconds 0", invariant="settings_file_valid")
class RetryZeroAccepted(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        edit = (
            _unchecked(self, key, raw, "readiness_retry_seconds", 0)
            if key == "readinessRetrySeconds"
            else None
        )
        return edit if edit is not None else super().validate_edit(key, raw)


@mutant(
    "H94b",
    how="/sh settings accepts a contextWarningPercent equal to criticalWarningPercent",
    unreachable=_MENU,
)
class WarningEqualCriticalAccepted(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        critical = self.settings.critical_warning_percent
        if key == "contextWarningPercent" and raw.strip() in (f"{critical:g}", str(critical)):
            return self.settings.model_copy(update={"context_warning_percent": critical}), None
        return super().validate_edit(key, raw)


@mutant("H95b", how="/sh settings refuses criticalWarningPercent 100 (< instead of <=)", unreachable=_MENU)
class CriticalHundredRefused(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        if key == "criticalWarningPercent" and raw.strip() in ("100", "100.0"):
            return None, "criticalWarningPercent not changed: must be below 100"
        return super().validate_edit(key, raw)


@mutant(
    "H99b", how="/sh settings refuses automaticSessionHandoffPercent 100 (< instead of <=)", unreachable=_MENU
)
class AutomaticHundredRefused(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        if key == "automaticSessionHandoffPercent" and raw.strip() in ("100", "100.0"):
            return None, "automaticSessionHandoffPercent not changed: must be below 100"
        return super().validate_edit(key, raw)


def _merged_save(path: str, settings: Any) -> None:
    """The save merged into the file as it was: retired keys of an older config stay."""
    try:
        with open(path, encoding="utf-8") as handle:
            old = json.load(handle)
    except (OSError, ValueError):
        old = {}
    merged = {**(old if isinstance(old, dict) else {}), **settings.to_json()}
    atomic_write_text(path, json.dumps(merged, indent=2) + "\n")


@mutant(
    "H120",
    how="an explicit save merges into the older file: its retired keys stay in config.json",
    unreachable="the explorer writes no older config",
)
class SaveKeepsRetiredKeys(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "save_settings", _merged_save):
            await super().run(args, ctx)


@mutant(
    "H102b",
    how="a relative recoveryDirectory typed in /sh settings is resolved against the process cwd",
    unreachable=_MENU,
)
class RelativeRecoveryDirResolved(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        text = raw.strip()
        typed_path = text and text.lower() not in ("null", "none", "default")
        if key == "recoveryDirectory" and typed_path and not os.path.isabs(text):
            raw = os.path.abspath(text)
        return super().validate_edit(key, raw)


@mutant(
    "H103",
    how="a relative templateDirectory typed in /sh settings is resolved against the process cwd",
    unreachable=_MENU,
)
class RelativeTemplateDirResolved(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        text = raw.strip()
        typed_path = text and text.lower() not in ("null", "none", "default")
        if key == "templateDirectory" and typed_path and not os.path.isabs(text):
            raw = os.path.abspath(text)
        return super().validate_edit(key, raw)


@mutant(
    "H90a",
    how="a directory that cannot be created is ignored and the value saved anyway",
    unreachable=_MENU,
)
class DirectoryErrorSwallowed(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        def lenient(path: str, *args: Any, **kwargs: Any) -> None:
            with contextlib.suppress(OSError):
                os.makedirs(path, *args, **kwargs)

        with patched(commands, "os", Proxy(os, makedirs=lenient)):
            await super().run(args, ctx)


@mutant(
    "H88b",
    how="a settings save truncates config.json and writes it in place",
    unreachable="the explorer places no crash inside a settings save",
)
class SettingsWrittenInPlace(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        def in_place(path: str, text: str, *, mode: int = 0o600) -> None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)

        with patched(settings_module, "atomic_write_text", in_place):
            await super().run(args, ctx)


@mutant(
    "H118",
    how="an older config with prepareWhileWaiting true and no deferPromptsFrom captures from the request",
    unreachable=_LOADED_ONCE,
)
class PrepareMeansRequest(Mutant):
    def load(self, ctx: Any) -> None:
        original = settings_module.normalise_config

        def mapped(raw: Any) -> dict[str, Any]:
            prepare = raw.get("prepareWhileWaiting") if isinstance(raw, dict) else None
            data = original(raw)
            if prepare is True and "deferPromptsFrom" not in raw:
                data["deferPromptsFrom"] = "request"
            return data

        with patched(settings_module, "normalise_config", mapped):
            super().load(ctx)


# ---------------------------------------------------------------- a third independent round
def _number(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


@mutant("H94b", how="/sh settings accepts a contextWarningPercent above 0 but below 1", unreachable=_MENU)
class WarningBelowOneAccepted(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        value = _number(raw) if key == "contextWarningPercent" else None
        if value is not None and 0 < value < 1:
            return self.settings.model_copy(update={"context_warning_percent": value}), None
        return super().validate_edit(key, raw)


@mutant("H99b", how="/sh settings accepts a negative automaticSessionHandoffPercent", unreachable=_MENU)
class AutomaticNegativeAccepted(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        value = _number(raw) if key == "automaticSessionHandoffPercent" else None
        if value is not None and value < 0:
            return self.settings.model_copy(update={"automatic_session_handoff_percent": value}), None
        return super().validate_edit(key, raw)


@mutant("H94b", how="/sh settings takes whole-number percents only: '62.5' is refused", unreachable=_MENU)
class PercentEditIntegerOnly(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        if key.endswith("Percent") and not raw.strip().lstrip("-").isdigit():
            return None, f"{key} not changed: must be a whole number"
        return super().validate_edit(key, raw)


@mutant(
    "H100b",
    how="/sh settings truncates a fractional readinessRetrySeconds ('2.5' is saved as 2)",
    unreachable=_MENU,
)
class RetrySecondsTruncated(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        value = _number(raw) if key == "readinessRetrySeconds" else None
        if value is not None:
            raw = str(int(value))
        return super().validate_edit(key, raw)


@mutant(
    "H93", how="the settings template list leaves out the addendum directory's templates", unreachable=_MENU
)
class CatalogueWithoutAddendum(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.catalogue
        managed = self.managed().templates
        with patched(
            commands, "catalogue", lambda role, dirs: original(role, [d for d in dirs if d == managed])
        ):
            await super().run(args, ctx)


# ---------------------------------------------------------------- the fourth independent round
_DIALOG_ANSWER = commands._ask_value


@mutant("H92", how="Escape on a true/false setting's choice saves false", unreachable=_MENU)
class EscapeOnToggleSavesFalse(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        async def ask(handoff: Any, ctx: Any, key: str) -> str | None:
            answer = await _DIALOG_ANSWER(handoff, ctx, key)
            if answer is None and key in ("automaticSessionHandoff", "deleteHandoffAfterReading"):
                return "false"
            return answer

        with patched(commands, "_ask_value", ask):
            await super().run(args, ctx)


@mutant(
    "H119",
    how="debugging and speedMode are refused only when set to a true value",
    unreachable="the explorer's one unknown key is speedMode set to true, which the mutant refuses too",
)
class DebuggingFalseAccepted(Mutant):
    def load(self, ctx: Any) -> None:
        original = settings_module.normalise_config

        def lenient(raw: Any) -> dict[str, Any]:
            if isinstance(raw, dict):
                raw = {k: v for k, v in raw.items() if not (k in ("debugging", "speedMode") and not v)}
            return original(raw)

        with patched(settings_module, "normalise_config", lenient):
            super().load(ctx)
