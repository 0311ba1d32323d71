"""``/continuity status`` panel and footer text (spec §11, §12).

Tokens are shown as the authority; percentages are always recomputed from the active
window and marked "approximately", so a model change visibly moves the percentages and
never the tokens. Live and written-after-restart values are shown separately because the
extension cannot make Pi reload its settings (spec §18).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from pi_continuity_harness.reference.psc.constants import PRODUCT_NAME
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    effective_percents,
    format_approximately,
    format_percent,
    validate_native_settings,
)

__all__ = [
    "StatusSnapshot",
    "StatusWord",
    "footer_status",
    "footer_text",
    "format_status_panel",
    "status_notify_type",
    "status_word",
]

StatusWord = Literal["armed", "disabled", "refused", "untrusted", "invalid-config"]


@dataclass(frozen=True)
class StatusSnapshot:
    """Everything the panel shows. The wiring fills it; this module only formats it."""

    trusted: bool
    extension_enabled: bool
    config_path: str
    project_settings_path: str
    artifact_directory: str
    synthesis_model: str
    synthesis_effort: str
    #: Pi's live effective settings (None when Pi's settings could not be read).
    live_settings: NativeCompactionSettings | None
    context_window: int | None
    config_error: str | None = None
    native_settings_error: str | None = None
    #: Settings written by ``/continuity settings`` in this runtime, active after restart.
    written_settings: NativeCompactionSettings | None = None
    current_operation: str | None = None
    last_artifact_path: str | None = None
    last_pending_path: str | None = None
    last_failure: str | None = None
    stale_pending_paths: tuple[str, ...] = field(default_factory=tuple)

    @property
    def native_problems(self) -> list[str]:
        if self.native_settings_error is not None:
            return [self.native_settings_error]
        if self.live_settings is None:
            return ["native compaction settings are unavailable"]
        if self.context_window is None:
            return ["the active model's context window is unknown"]
        return validate_native_settings(self.live_settings, self.context_window)

    @property
    def restart_required(self) -> bool:
        return self.written_settings is not None and self.written_settings != self.live_settings


def status_word(snapshot: StatusSnapshot) -> StatusWord:
    """Most fundamental problem first: trust, then config, then the switch, then settings."""
    if not snapshot.trusted:
        return "untrusted"
    if snapshot.config_error is not None:
        return "invalid-config"
    if not snapshot.extension_enabled:
        return "disabled"
    if snapshot.native_problems:
        return "refused"
    return "armed"


def status_notify_type(snapshot: StatusSnapshot) -> Literal["info", "warning"]:
    """Warnings only for disabled, invalid, failed, stale or restart-required states (§11)."""
    if (
        status_word(snapshot) != "armed"
        or snapshot.restart_required
        or snapshot.stale_pending_paths
        or snapshot.last_failure is not None
    ):
        return "warning"
    return "info"


def _tokens(value: int) -> str:
    return f"{value:,}"


def _settings_lines(settings: NativeCompactionSettings, window: int | None) -> tuple[str, str, str]:
    reserve = f"Reserve: {_tokens(settings.reserve_tokens)}"
    if window is None or window <= 0:
        return (
            reserve,
            "Effective trigger: unknown (no active model window)",
            f"Keep recent: {_tokens(settings.keep_recent_tokens)}",
        )
    view = effective_percents(window, settings)
    return (
        reserve,
        f"Effective trigger: {_tokens(view.trigger_tokens)} ({format_approximately(view.trigger_percent)})",
        f"Keep recent: {_tokens(settings.keep_recent_tokens)} ({format_approximately(view.keep_percent)})",
    )


def _restart_lines(snapshot: StatusSnapshot) -> list[str]:
    if not snapshot.restart_required:
        if snapshot.trusted and snapshot.native_problems:
            # The refusal tells the user to fix the settings and restart Pi: say the same here.
            return [
                "Restart required: yes (after valid native settings are written; Pi reads them at startup)"
            ]
        return ["Restart required: no"]
    written = snapshot.written_settings
    assert written is not None
    lines = ["Restart required: yes (a full Pi restart activates the written settings)"]
    live = snapshot.live_settings
    if live is not None:
        lines.append(
            f"Live until restart: reserve {_tokens(live.reserve_tokens)}, "
            f"keep recent {_tokens(live.keep_recent_tokens)}"
        )
    written_line = (
        f"Written for after restart: reserve {_tokens(written.reserve_tokens)}, "
        f"keep recent {_tokens(written.keep_recent_tokens)}"
    )
    window = snapshot.context_window
    if window is not None and window > 0:
        view = effective_percents(window, written)
        written_line += (
            f" (trigger {_tokens(view.trigger_tokens)}, {format_approximately(view.trigger_percent)})"
        )
    lines.append(written_line)
    return lines


def format_status_panel(snapshot: StatusSnapshot) -> str:
    """The textual status panel: the spec §11 block first, then the §12 details."""
    window = snapshot.context_window
    lines = [
        PRODUCT_NAME,
        f"Status: {status_word(snapshot)}",
        f"Model window: {_tokens(window) if window is not None else 'unknown'}",
    ]
    live = snapshot.live_settings
    if live is not None:
        lines.extend(_settings_lines(live, window))
    else:
        lines.extend(["Reserve: unknown", "Effective trigger: unknown", "Keep recent: unknown"])
    lines.extend(_restart_lines(snapshot))
    lines.append(f"Extension: {'enabled' if snapshot.extension_enabled else 'disabled'}")
    lines.append(f"Project trust: {'trusted' if snapshot.trusted else 'untrusted (project files not read)'}")
    if not snapshot.trusted:
        lines.append(f"Config: not read ({snapshot.config_path})")
    elif snapshot.config_error is not None:
        lines.append(f"Config: invalid ({snapshot.config_error})")
    else:
        lines.append(f"Config: valid ({snapshot.config_path})")
    if live is not None:
        lines.append(f"Native compaction: {'enabled' if live.enabled else 'disabled'}")
    else:
        lines.append("Native compaction: unknown")
    lines.extend(f"Problem: {problem}" for problem in snapshot.native_problems)
    lines.append(f"Synthesis model: {snapshot.synthesis_model}")
    lines.append(f"Synthesis effort: {snapshot.synthesis_effort}")
    lines.append(f"Project settings: {snapshot.project_settings_path}")
    lines.append(f"Artifact directory: {snapshot.artifact_directory}")
    lines.append(f"Current operation: {snapshot.current_operation or 'none'}")
    lines.append(f"Last artifact: {snapshot.last_artifact_path or 'none'}")
    if snapshot.last_pending_path and snapshot.last_pending_path != snapshot.last_artifact_path:
        lines.append(f"Last pending path: {snapshot.last_pending_path}")
    lines.append(f"Last failure: {snapshot.last_failure or 'none'}")
    if snapshot.stale_pending_paths:
        lines.extend(f"Stale pending Brief (inert): {path}" for path in snapshot.stale_pending_paths)
    else:
        lines.append("Stale pending Brief: none")
    return "\n".join(lines)


def footer_status(trigger_percent: Decimal | float | int) -> str:
    """``Continuity @ ~75.0%``: the ``~`` marks that tokens, not percentages, are authoritative."""
    value = trigger_percent if isinstance(trigger_percent, Decimal) else Decimal(str(trigger_percent))
    return f"Continuity @ ~{format_percent(value)}"


def footer_text(snapshot: StatusSnapshot) -> str:
    """Footer for any state: the approximate trigger when armed, else the status word."""
    word = status_word(snapshot)
    live, window = snapshot.live_settings, snapshot.context_window
    if word == "armed" and live is not None and window is not None and window > 0:
        return footer_status(effective_percents(window, live).trigger_percent)
    return f"Continuity {word}"
