"""Atomic merge of native compaction tokens into Pi's project settings (spec §6, §12).

The settings file belongs to Pi and the user; this extension owns exactly three keys in
it. Everything else (other top-level settings, ``compaction.modelOverrides``, key order)
is written back untouched, and a file that cannot be read faithfully is not written at all.
"""

from __future__ import annotations

import json
from typing import Any

from pi_continuity_harness.reference.psc.atomic_io import AtomicWriteRecord, atomic_write_text
from pi_continuity_harness.reference.psc.config import parse_json_object

__all__ = ["SettingsMergeError", "merge_project_compaction_settings", "merged_settings_text"]


class SettingsMergeError(ValueError):
    """The existing settings file cannot be merged safely; it was left untouched."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot update {path}: {reason}; the file was not changed")


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer (got {value!r})")
    return value


def merged_settings_text(
    existing: str | None, path: str, reserve_tokens: int, keep_recent_tokens: int
) -> str:
    """The new file text (pure): ``existing`` plus the explicit project compaction override."""
    reserve = _positive_int(reserve_tokens, "reserveTokens")
    keep = _positive_int(keep_recent_tokens, "keepRecentTokens")
    data: dict[str, Any]
    if existing is None:
        data = {}
    else:
        parsed, problem = parse_json_object(existing)
        if parsed is None:
            raise SettingsMergeError(path, problem or "not a JSON object")
        data = parsed
    compaction = data.get("compaction", {})
    if not isinstance(compaction, dict):
        raise SettingsMergeError(path, '"compaction" is not a JSON object')
    compaction = dict(compaction)
    compaction["enabled"] = True
    compaction["reserveTokens"] = reserve
    compaction["keepRecentTokens"] = keep
    data["compaction"] = compaction
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def merge_project_compaction_settings(
    settings_path: str, reserve_tokens: int, keep_recent_tokens: int
) -> AtomicWriteRecord:
    """Merge ``{"compaction": {"enabled": true, "reserveTokens": R, "keepRecentTokens": K}}``.

    Raises :class:`SettingsMergeError` (file untouched) when the existing file is not
    strict UTF-8 JSON holding an object. Only call after explicit interactive confirmation
    in a trusted project; Pi reads the result only after a full restart.
    """
    try:
        with open(settings_path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        existing: str | None = None
    except OSError as exc:
        raise SettingsMergeError(settings_path, f"it cannot be read ({exc.strerror or exc})") from exc
    else:
        try:
            existing = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise SettingsMergeError(settings_path, "it is not valid UTF-8") from None
    text = merged_settings_text(existing, settings_path, reserve_tokens, keep_recent_tokens)
    return atomic_write_text(settings_path, text)
