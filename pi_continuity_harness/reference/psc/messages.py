"""Every user-visible notification text (spec §11), product-prefixed and exact.

One function per message keeps the wording in one place: the conformance suite and the
smoke checks match these strings, and users grep for them in logs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_continuity_harness.reference.psc.config import ConfigError
from pi_continuity_harness.reference.psc.constants import PRODUCT_NAME
from pi_continuity_harness.reference.psc.native_settings import NativeCompactionSettings

__all__ = [
    "archive_failed",
    "brief_reconciled",
    "brief_saved",
    "checkpoint_failed",
    "checkpoint_read_only",
    "compaction_committed",
    "config_saved",
    "continuation_submitted",
    "extension_disabled",
    "handoff_failed",
    "incompatible_compaction",
    "invalid_config",
    "invalid_native_settings",
    "native_settings_refused",
    "native_settings_unreadable",
    "operation_in_progress",
    "project_settings_invalid",
    "settings_cancelled",
    "settings_input_rejected",
    "settings_read_only",
    "settings_saved",
    "settings_write_failed",
    "stale_pending_found",
    "threshold_preparing",
    "unknown_subcommand",
    "untrusted_project",
]

_INFO = f"{PRODUCT_NAME}: "
_FAILED = f"{PRODUCT_NAME} failed: "
_REFUSED = f"{PRODUCT_NAME} refused: "


def _clause(reason: str) -> str:
    """A reason as a clause: one line, no trailing full stop (the sentence adds its own)."""
    return " ".join(reason.split()).rstrip(".") or "unknown error"


def threshold_preparing() -> str:
    return _INFO + "native compaction reached its threshold; preparing durable Brief."


def brief_saved(path: str) -> str:
    """Names the exact file just written, never only the directory (spec §7)."""
    return _INFO + f"Continuity Brief saved to {path}."


def compaction_committed(path: str) -> str:
    return _INFO + f"native compaction committed with disk-backed Brief {path}."


def continuation_submitted() -> str:
    return _INFO + "continuation submitted from saved Brief."


def handoff_failed(reason: str) -> str:
    return _FAILED + f"{_clause(reason)}. Native compaction was cancelled."


def checkpoint_failed(reason: str) -> str:
    """A manual checkpoint failure: no compaction was involved, so none is claimed cancelled."""
    return _FAILED + f"{_clause(reason)}. No Continuity Brief was saved."


def native_settings_refused() -> str:
    return (
        _REFUSED + "native compaction settings are invalid for the current model. "
        "Run /continuity settings and restart Pi."
    )


def invalid_native_settings(
    settings: NativeCompactionSettings,
    context_window: int | None,
    settings_path: str,
    problems: Sequence[str],
) -> str:
    """The refusal plus the values spec §11 requires: enabled, tokens, window, path."""
    window = "unknown" if context_window is None else str(context_window)
    enabled = "true" if settings.enabled else "false"
    return (
        native_settings_refused() + f"\nenabled: {enabled}, reserveTokens: {settings.reserve_tokens}, "
        f"keepRecentTokens: {settings.keep_recent_tokens}, contextWindow: {window}"
        + f"\nProject settings: {settings_path}"
        + "".join(f"\nProblem: {_clause(problem)}." for problem in problems)
    )


def settings_saved(path: str) -> str:
    return _INFO + f"settings saved to {path}; restart Pi to activate them."


def settings_cancelled() -> str:
    return _INFO + "settings unchanged."


def settings_read_only(settings_path: str) -> str:
    """Non-interactive modes never mutate configuration (spec §12)."""
    return (
        _INFO + "settings are read-only without an interactive UI; nothing was changed. "
        f"Project settings: {settings_path}"
    )


def checkpoint_read_only() -> str:
    """A checkpoint without an interactive UI: non-UI modes mutate nothing (spec §18)."""
    return _INFO + "checkpoint is read-only without an interactive UI; nothing was written."


def stale_pending_found() -> str:
    return _INFO + "stale pending Continuity Brief found for this session; leaving it inert."


def invalid_config(error: ConfigError) -> str:
    """Names the config file (spec §6, §11) and every invalid field."""
    return (
        _REFUSED
        + f"invalid extension config {error.path}: "
        + "; ".join(_clause(problem.describe()) for problem in error.problems)
        + ". Automatic Continuity Handoff is disabled until it is corrected."
    )


def incompatible_compaction(mismatches: Sequence[str]) -> str:
    """``session_compact`` did not commit our Brief (another extension replaced the result)."""
    detail = f" (mismatched: {', '.join(mismatches)})" if mismatches else ""
    return (
        _FAILED
        + "the committed compaction does not match the prepared Continuity Brief"
        + detail
        + "; another extension may have replaced the compaction result. "
        "The pending Brief was left inert and no continuation was submitted."
    )


def operation_in_progress() -> str:
    return _REFUSED + "a Continuity Brief is already being prepared for this session."


def untrusted_project() -> str:
    return (
        _REFUSED + "this project is not trusted, so its Continuity config, settings and "
        "artifacts are not read or written. Trust the project and restart Pi to enable it."
    )


# ---------------------------------------------------------------------------------------
# Messages the spec does not word itself; same prefixes, same one-line style.


def native_settings_unreadable(settings_path: str, problems: Sequence[str]) -> str:
    """Pi's settings hold a value Pi itself refuses, so no token values can be shown."""
    return (
        native_settings_refused()
        + f"\nProject settings: {settings_path}"
        + "".join(f"\nProblem: {_clause(problem)}." for problem in problems)
    )


def project_settings_invalid(problem: str) -> str:
    """The project settings file is unusable (Pi silently fell back to its defaults)."""
    return (
        _REFUSED + f"the project settings {_clause(problem)}; Pi ignores it and runs on its defaults. "
        "Fix the file and restart Pi; native compaction is cancelled until then."
    )


def extension_disabled(config_path: str) -> str:
    return (
        _REFUSED + f"the extension is disabled (enabled: false in {config_path}); "
        "no Continuity Brief is prepared and native compaction is cancelled."
    )


def config_saved(path: str) -> str:
    return _INFO + f"extension config saved to {path}; it applies from now on in this session."


def settings_input_rejected(reason: str) -> str:
    return _REFUSED + f"{_clause(reason)}. Nothing was written."


def settings_write_failed(reason: str) -> str:
    return _FAILED + f"{_clause(reason)}. Nothing was written."


def archive_failed(pending_path: str, reason: str) -> str:
    """Pi committed the Brief, but moving it to the archive failed; no continuation follows."""
    return (
        _FAILED + f"native compaction committed the Brief {pending_path}, but archiving it failed: "
        f"{_clause(reason)}. No continuation was submitted."
    )


def temp_file_removed(path: str) -> str:
    """A temporary file of an interrupted write, removed at startup (rule P136): never silent."""
    return _INFO + f"removed an incomplete temporary file left by an interrupted write: {path}."


def temp_file_left(path: str, error: OSError) -> str:
    """A temporary file of an interrupted write that could not be removed (rule P136)."""
    reason = error.strerror or type(error).__name__
    return (
        _INFO
        + f"an incomplete temporary file left by an interrupted write could not be removed: {path} ({reason})."
    )


def brief_reconciled(path: str) -> str:
    """A stale pending Brief whose compaction Pi had already persisted (found at startup)."""
    return (
        _INFO + f"a pending Continuity Brief already committed by native compaction was archived to {path}; "
        "nothing was compacted or submitted again."
    )


def unknown_subcommand(text: str) -> str:
    return (
        _REFUSED + f"unknown command '/continuity {_clause(text)}'. "
        "Use /continuity status, /continuity checkpoint or /continuity settings."
    )
