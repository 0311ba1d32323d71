"""Text of ``/continuity settings``: the preview shown before anything is written.

The preview shows the formulas with the numbers filled in, so the user can check the
exact tokens that will be written and see that percentages are only an input method.
"""

from __future__ import annotations

import json
from decimal import Decimal

from pi_continuity_harness.reference.psc.constants import PRODUCT_NAME
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    derive_native_tokens,
    effective_percents,
    format_approximately,
    js_round,
    parse_percent,
)

__all__ = ["INHERIT_MODEL_WARNING", "RESTART_NOTICE", "inherit_model_warning", "settings_preview"]

RESTART_NOTICE = "A full Pi restart is required; percentages are not saved."

INHERIT_MODEL_WARNING = (
    'Warning: synthesisModel "inherit" writes the Continuity Brief with the active Pi model, '
    "which can spend context and output budget near the native compaction threshold. "
    "Consider pinning a cheaper or larger-context synthesis model (provider/model)."
)


def inherit_model_warning(synthesis_model: str) -> str | None:
    """The spec §6 warning, only when synthesis inherits the active model."""
    return INHERIT_MODEL_WARNING if synthesis_model == "inherit" else None


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def settings_preview(
    context_window: int,
    trigger_percent: Decimal | int | float | str,
    keep_recent_percent: Decimal | int | float | str,
    settings_path: str,
    *,
    synthesis_model: str = "inherit",
) -> str:
    """Preview of the native tokens derived from the entered percentages.

    Raises :class:`~.native_settings.PercentInputError` for unusable input, so nothing
    invalid can ever be previewed as if it could be saved.
    """
    reserve, keep = derive_native_tokens(context_window, trigger_percent, keep_recent_percent)
    trigger = parse_percent(trigger_percent, "trigger percent")
    keep_pct = parse_percent(keep_recent_percent, "keep-recent percent")
    window = Decimal(context_window)
    trigger_tokens = js_round(window * trigger / 100)
    view = effective_percents(context_window, NativeCompactionSettings(True, reserve, keep))
    payload = json.dumps(
        {"compaction": {"enabled": True, "reserveTokens": reserve, "keepRecentTokens": keep}}
    )
    lines = [
        f"{PRODUCT_NAME} settings preview",
        f"Model window: {context_window:,}",
        f"Entered trigger: {_plain(trigger)}%",
        f"Entered keep recent: {_plain(keep_pct)}%",
        "reserveTokens = contextWindow - round(contextWindow × triggerPercent / 100)",
        f"  = {context_window} - round({context_window} × {_plain(trigger)} / 100)"
        f" = {context_window} - {trigger_tokens} = {reserve}",
        "keepRecentTokens = round(contextWindow × keepRecentPercent / 100)",
        f"  = round({context_window} × {_plain(keep_pct)} / 100) = {keep}",
        f"Effective trigger: {view.trigger_tokens:,} ({format_approximately(view.trigger_percent)})",
        f"Keep recent: {keep:,} ({format_approximately(view.keep_percent)})",
        f"Target: {settings_path}",
        f"Will write: {payload}",
        "Unrelated settings in that file are preserved.",
        RESTART_NOTICE,
    ]
    warning = inherit_model_warning(synthesis_model)
    if warning:
        lines.append(warning)
    return "\n".join(lines)
