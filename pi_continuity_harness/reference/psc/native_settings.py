"""Pi's native compaction settings: reading, validating, deriving and displaying them.

``reserveTokens``/``keepRecentTokens`` are the authoritative, fixed token policy (spec §5,
§6). Percentages exist only to help a user choose tokens for the current model and to
display the effect of fixed tokens on whatever model is active, so every percentage here
is computed from tokens and a window, never stored as policy.

Arithmetic is exact (``Decimal``) and rounding follows JavaScript's ``Math.round`` (half
towards +infinity), because the spec's formulas are written for the TypeScript extension
and Python's ``round`` would turn 0.5 into 0 and 2.5 into 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

from pi_continuity_harness.api import CompactionSettings

__all__ = [
    "PI_DEFAULT_COMPACTION",
    "EffectivePercents",
    "NativeCompactionSettings",
    "NativeSettingsError",
    "PercentInputError",
    "derive_native_tokens",
    "effective_percents",
    "format_approximately",
    "format_percent",
    "js_round",
    "one_decimal",
    "parse_percent",
    "percent_for_frontmatter",
    "read_native_settings",
    "validate_native_settings",
]

_MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True)
class NativeCompactionSettings:
    """``{enabled, reserveTokens, keepRecentTokens}`` as Pi resolves them."""

    enabled: bool
    reserve_tokens: int
    keep_recent_tokens: int

    @classmethod
    def from_preparation(cls, settings: CompactionSettings) -> NativeCompactionSettings:
        """The exact values Pi used for this compaction (``event.preparation.settings``)."""
        return cls(settings.enabled, settings.reserve_tokens, settings.keep_recent_tokens)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


#: ``DEFAULT_COMPACTION_SETTINGS`` of Pi 1.6 (used when the settings leave a key out).
PI_DEFAULT_COMPACTION = NativeCompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=20000)


class NativeSettingsError(ValueError):
    """Pi's settings hold a value Pi itself would refuse (it throws when reading it)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _token_setting(value: object, name: str, problems: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_SAFE_INTEGER:
        if isinstance(value, float) and value.is_integer() and 0 <= value <= _MAX_SAFE_INTEGER:
            return int(value)  # JSON 100000.0 is the JavaScript number 100000
        problems.append(f"Invalid {name} setting: {value!r}. Expected a non-negative safe integer.")
        return None
    return value


def read_native_settings(
    pi_settings: Mapping[str, Any], model_full_id: str | None = None
) -> NativeCompactionSettings:
    """Effective native settings from a Pi ``get_settings()`` dict.

    Mirrors Pi's ``getCompactionSettings(model)``: ``compaction.modelOverrides["provider/id"]``
    wins for the token values, then ``compaction``, then Pi's defaults; ``enabled`` is global.
    Raises :class:`NativeSettingsError` wherever Pi would throw (an invalid ``compaction``
    token value even when an override hides it, an override entry that is not an object),
    and also for a non-boolean ``enabled`` or a non-object ``compaction``, which Pi reads
    leniently but which are structurally invalid all the same (spec §6: fail closed).
    """
    compaction = pi_settings.get("compaction")
    if compaction is None:
        compaction = {}
    if not isinstance(compaction, Mapping):
        raise NativeSettingsError([f"Invalid compaction setting: {compaction!r}. Expected an object."])
    problems: list[str] = []
    overrides: Mapping[str, Any] = {}
    override_name = ""
    raw_overrides = compaction.get("modelOverrides")
    if model_full_id is not None and isinstance(raw_overrides, Mapping) and model_full_id in raw_overrides:
        override_name = f'compaction.modelOverrides["{model_full_id}"]'
        candidate = raw_overrides[model_full_id]
        if isinstance(candidate, Mapping):
            overrides = candidate
        else:
            problems.append(f"Invalid {override_name} setting: {candidate!r}. Expected an object.")
    enabled = compaction.get("enabled", PI_DEFAULT_COMPACTION.enabled)
    if not isinstance(enabled, bool):
        problems.append(f"Invalid compaction.enabled setting: {enabled!r}. Expected a boolean.")

    def pick(key: str, default: int) -> int | None:
        value: int | None = default
        if key in compaction:
            value = _token_setting(compaction[key], f"compaction.{key}", problems)
        if key in overrides:
            value = _token_setting(overrides[key], f"{override_name}.{key}", problems)
        return value

    reserve = pick("reserveTokens", PI_DEFAULT_COMPACTION.reserve_tokens)
    keep = pick("keepRecentTokens", PI_DEFAULT_COMPACTION.keep_recent_tokens)
    if problems or reserve is None or keep is None or not isinstance(enabled, bool):
        raise NativeSettingsError(problems)
    return NativeCompactionSettings(enabled, reserve, keep)


def validate_native_settings(settings: NativeCompactionSettings, context_window: int) -> list[str]:
    """Problems that make the settings structurally invalid for this window (spec §6/§18).

    Empty means usable. Native auto-compaction being disabled is a refused state: without
    it no ``session_before_compact`` runs at the threshold, so no Brief would ever be made.
    """
    problems: list[str] = []
    if not settings.enabled:
        problems.append("native auto-compaction is disabled (compaction.enabled is false)")
    if context_window <= 0:
        problems.append(f"the active model has no usable context window (contextWindow {context_window})")
        return problems
    reserve, keep = settings.reserve_tokens, settings.keep_recent_tokens
    reserve_ok = True
    if reserve <= 0:
        problems.append(f"reserveTokens ({reserve}) must be positive")
        reserve_ok = False
    elif reserve >= context_window:
        problems.append(f"reserveTokens ({reserve}) must be lower than the context window ({context_window})")
        reserve_ok = False
    if keep <= 0:
        problems.append(f"keepRecentTokens ({keep}) must be positive")
    elif reserve_ok and keep >= context_window - reserve:
        problems.append(
            f"keepRecentTokens ({keep}) must be lower than contextWindow - reserveTokens "
            f"({context_window} - {reserve} = {context_window - reserve})"
        )
    return problems


def js_round(value: Decimal) -> int:
    """JavaScript ``Math.round``: the nearest integer, halves towards +infinity."""
    return int((value + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))


class PercentInputError(ValueError):
    """A percentage entered in ``/continuity settings`` cannot produce valid settings."""


def parse_percent(value: Decimal | int | float | str, name: str) -> Decimal:
    """Exact decimal of a user-entered percentage ("75", "75.5", "75%")."""
    if isinstance(value, bool):
        raise PercentInputError(f"{name} must be a number")
    if isinstance(value, Decimal):
        result = value
    else:
        text = str(value).strip().removesuffix("%").strip()
        try:
            result = Decimal(text)
        except InvalidOperation:
            raise PercentInputError(f"{name} must be a number, got {str(value)!r}") from None
    if not result.is_finite():
        raise PercentInputError(f"{name} must be a finite number, got {str(value)!r}")
    return result


def derive_native_tokens(
    context_window: int,
    trigger_percent: Decimal | int | float | str,
    keep_recent_percent: Decimal | int | float | str,
) -> tuple[int, int]:
    """``(reserveTokens, keepRecentTokens)`` by the exact formulas of spec §12.

    ``reserveTokens = contextWindow - round(contextWindow × triggerPercent / 100)`` and
    ``keepRecentTokens = round(contextWindow × keepRecentPercent / 100)``. Raises
    :class:`PercentInputError` when the inputs are out of range or the rounded tokens would
    not pass :func:`validate_native_settings` (tiny windows can round a valid percent away).
    """
    if isinstance(context_window, bool) or context_window <= 0:
        raise PercentInputError(f"the current model has no usable context window ({context_window})")
    trigger = parse_percent(trigger_percent, "trigger percent")
    keep = parse_percent(keep_recent_percent, "keep-recent percent")
    problems: list[str] = []
    if not Decimal(0) < trigger < Decimal(100):
        problems.append(f"trigger percent must be greater than 0 and lower than 100 (got {trigger})")
    if not Decimal(0) < keep < Decimal(100):
        problems.append(f"keep-recent percent must be greater than 0 and lower than 100 (got {keep})")
    if not problems and keep >= trigger:
        problems.append(f"keep-recent percent ({keep}) must be lower than the trigger percent ({trigger})")
    if problems:
        raise PercentInputError("; ".join(problems))
    window = Decimal(context_window)
    reserve = context_window - js_round(window * trigger / 100)
    keep_tokens = js_round(window * keep / 100)
    derived = NativeCompactionSettings(True, reserve, keep_tokens)
    invalid = validate_native_settings(derived, context_window)
    if invalid:
        raise PercentInputError(
            f"{trigger}% / {keep}% of a {context_window}-token window give reserveTokens {reserve} "
            f"and keepRecentTokens {keep_tokens}, which are invalid: " + "; ".join(invalid)
        )
    return reserve, keep_tokens


class EffectivePercents(NamedTuple):
    """Display-only view of fixed tokens against one window."""

    trigger_tokens: int
    trigger_percent: Decimal
    keep_percent: Decimal


def effective_percents(context_window: int, settings: NativeCompactionSettings) -> EffectivePercents:
    """Trigger boundary and approximate percentages of the fixed tokens for this window.

    Recomputed for every display, so a model change changes the percentages and never the
    tokens (spec §11).
    """
    if context_window <= 0:
        raise ValueError(f"no usable context window ({context_window})")
    window = Decimal(context_window)
    trigger_tokens = context_window - settings.reserve_tokens
    return EffectivePercents(
        trigger_tokens,
        Decimal(trigger_tokens) * 100 / window,
        Decimal(settings.keep_recent_tokens) * 100 / window,
    )


def one_decimal(value: Decimal) -> Decimal:
    """``value`` to one decimal, halves away from zero: every displayed percentage."""
    return value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def format_percent(value: Decimal) -> str:
    """``75.0%``: one decimal, halves away from zero (stable across platforms)."""
    return f"{one_decimal(value)}%"


def format_approximately(value: Decimal) -> str:
    """``approximately 75.0%``; the word is required because tokens are authoritative."""
    return f"approximately {format_percent(value)}"


def percent_for_frontmatter(value: Decimal) -> float:
    """The one-decimal percentage recorded in a Brief (``effectiveTriggerPercent: 75``)."""
    return float(one_decimal(value))
