"""The global settings (``<agentDir>/pi-blitz-handoff/config.json``): schema, loading, edits.

* :class:`BlitzSettings` is the current schema: every key of the reference's settings
  table with its default and constraint. Unknown keys are rejected.
* :func:`normalise_config` is the narrow in-memory normalisation of a previously supported
  config: retired keys (``prepareWhileWaiting``, ``writerAttempts``,
  ``writerRetryDelaySeconds``) are dropped after their values are checked, and keys that
  older versions omitted get their current defaults. ``debugging``/``speedMode`` and any
  other unknown key stay errors. The file is never rewritten by loading.
* :func:`apply_edit` is one confirmed settings edit: parse the raw input for the key,
  validate the *whole* config, and return either the new settings or a concrete hint
  (the prior value stays in force).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text

__all__ = [
    "SETTING_KEYS",
    "BlitzSettings",
    "SettingsLoad",
    "apply_edit",
    "describe_value",
    "load_settings",
    "normalise_config",
    "save_settings",
]


def _finite(value: float, name: str) -> float:
    if isinstance(value, bool) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    return value


class BlitzSettings(BaseModel):
    """The settings table of the reference (defaults and constraints)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    context_warning_percent: float = Field(default=60, alias="contextWarningPercent")
    critical_warning_percent: float = Field(default=90, alias="criticalWarningPercent")
    automatic_session_handoff: bool = Field(default=False, alias="automaticSessionHandoff")
    defer_prompts_from: Literal["request", "writing"] = Field(default="writing", alias="deferPromptsFrom")
    delete_handoff_after_reading: bool = Field(default=True, alias="deleteHandoffAfterReading")
    automatic_session_handoff_percent: float = Field(default=70, alias="automaticSessionHandoffPercent")
    readiness_retry_seconds: int = Field(default=60, alias="readinessRetrySeconds")
    max_session_chain_length: int = Field(default=25, alias="maxSessionChainLength")
    recovery_directory: str | None = Field(default=None, alias="recoveryDirectory")
    template_directory: str | None = Field(default=None, alias="templateDirectory")
    call_template: str = Field(default="call_default.cmpl", alias="callTemplate")
    handoff_template: str = Field(default="handoff_default.cmpl", alias="handoffTemplate")

    @field_validator(
        "context_warning_percent",
        "critical_warning_percent",
        "automatic_session_handoff_percent",
        mode="before",
    )
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("must be a number")
        return float(_finite(float(value), "value"))

    @field_validator("readiness_retry_seconds", "max_session_chain_length", mode="before")
    @classmethod
    def _integer(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be an integer")
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int):
            raise ValueError("must be an integer")
        return value

    @field_validator("recovery_directory", "template_directory")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError("must be an absolute directory path")
        return value

    @model_validator(mode="after")
    def _ranges(self) -> BlitzSettings:
        if not 1 <= self.context_warning_percent < self.critical_warning_percent:
            raise ValueError("contextWarningPercent must be at least 1 and below criticalWarningPercent")
        if not self.critical_warning_percent <= 100:
            raise ValueError("criticalWarningPercent must be above contextWarningPercent and at most 100")
        if not 0 <= self.automatic_session_handoff_percent <= 100:
            raise ValueError("automaticSessionHandoffPercent must be between 0 and 100 (0 disables)")
        if not 1 <= self.readiness_retry_seconds <= 300:
            raise ValueError("readinessRetrySeconds must be an integer from 1 to 300")
        if self.max_session_chain_length < 1:
            raise ValueError("maxSessionChainLength must be a positive integer (the master counts)")
        for key, name, prefix in (
            ("callTemplate", self.call_template, "call_"),
            ("handoffTemplate", self.handoff_template, "handoff_"),
        ):
            if "/" in name or "\\" in name or name in (".", ".."):
                raise ValueError(f"{key} must be a file name, not a path")
            if not (name.startswith(prefix) and name.endswith(".cmpl")):
                raise ValueError(f"{key} must be a {prefix}*.cmpl file name")
        return self

    @property
    def automatic_enabled(self) -> bool:
        """Automatic initiation is on only when enabled *and* its percent is above zero."""
        return self.automatic_session_handoff and self.automatic_session_handoff_percent > 0

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True)

    def recovery_dir(self, managed_recovery: str) -> str:
        return self.recovery_directory or managed_recovery

    def template_for(self, role: str) -> str:
        return self.call_template if role == "call" else self.handoff_template


#: The keys in the settings table's order, as ``/sh settings`` lists them.
SETTING_KEYS: tuple[str, ...] = tuple(
    str(field.alias) for field in BlitzSettings.model_fields.values() if field.alias
)


def normalise_config(raw: Any) -> dict[str, Any]:
    """A previously supported config in the current shape (in memory only); raises ValueError."""
    if not isinstance(raw, dict):
        raise ValueError("config.json must hold a JSON object")
    data = dict(raw)
    for key in ("debugging", "speedMode"):
        if key in data:
            raise ValueError(f"{key} is not supported")
    attempts = data.pop("writerAttempts", None)
    delay = data.pop("writerRetryDelaySeconds", None)
    prepare = data.pop("prepareWhileWaiting", None)
    if prepare is not None and not isinstance(prepare, bool):
        raise ValueError("retired prepareWhileWaiting must be a boolean")
    for key, value in (("writerAttempts", attempts), ("writerRetryDelaySeconds", delay)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0
        ):
            raise ValueError(f"retired {key} must be a non-negative number")
    data.setdefault("deferPromptsFrom", "writing")
    data.setdefault("deleteHandoffAfterReading", True)
    data.setdefault("maxSessionChainLength", 25)
    data.setdefault("callTemplate", "call_default.cmpl")
    return data


@dataclass(frozen=True)
class SettingsLoad:
    """The loaded settings, or the defaults with the error that made the file unusable."""

    settings: BlitzSettings
    error: str | None = None


def _errors(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()))
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def load_settings(path: str) -> SettingsLoad:
    """Read ``config.json``; a missing file is the defaults, a broken one an error."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return SettingsLoad(BlitzSettings())
    except OSError as error:
        return SettingsLoad(BlitzSettings(), f"{path}: cannot be read: {error.strerror or error}")
    try:
        data = normalise_config(json.loads(text))
        return SettingsLoad(BlitzSettings.model_validate(data))
    except json.JSONDecodeError as error:
        return SettingsLoad(BlitzSettings(), f"{path}: not valid JSON: {error.msg}")
    except ValidationError as error:
        return SettingsLoad(BlitzSettings(), f"{path}: {_errors(error)}")
    except ValueError as error:
        return SettingsLoad(BlitzSettings(), f"{path}: {error}")


def save_settings(path: str, settings: BlitzSettings) -> None:
    """Persist the current schema only, atomically."""
    atomic_write_text(path, json.dumps(settings.to_json(), indent=2) + "\n")


def _parse_raw(key: str, raw: str) -> Any:
    text = raw.strip()
    field = next(f for f in BlitzSettings.model_fields.values() if f.alias == key)
    annotation = field.annotation
    if annotation is bool:
        lowered = text.lower()
        if lowered in ("true", "on", "yes", "enabled"):
            return True
        if lowered in ("false", "off", "no", "disabled"):
            return False
        raise ValueError(f"{key} must be true or false")
    if annotation is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key} must be a number, got {raw!r}") from None
    if annotation is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{key} must be an integer, got {raw!r}") from None
    if key in ("recoveryDirectory", "templateDirectory"):
        if text.lower() in ("", "null", "none", "default"):
            return None
        return text
    if key == "deferPromptsFrom":
        lowered = text.lower()
        if lowered.startswith("request"):
            return "request"
        if lowered.startswith("writing"):
            return "writing"
        raise ValueError("deferPromptsFrom must be request or writing")
    return text


def apply_edit(settings: BlitzSettings, key: str, raw: str) -> tuple[BlitzSettings | None, str | None]:
    """One edit: the new settings, or None and a concrete hint (the prior value stays)."""
    if key not in SETTING_KEYS:
        return None, f"Unknown setting {key!r}."
    try:
        value = _parse_raw(key, raw)
        data = {**settings.to_json(), key: value}
        return BlitzSettings.model_validate(data), None
    except ValidationError as error:
        return None, f"{key} not changed: {_errors(error)}"
    except ValueError as error:
        return None, f"{key} not changed: {error}"


def describe_value(settings: BlitzSettings, key: str, managed_recovery: str) -> str:
    value = settings.to_json()[key]
    if key == "recoveryDirectory" and value is None:
        return f"{managed_recovery} (managed)"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
