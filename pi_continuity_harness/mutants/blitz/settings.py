"""Mutants of /sh settings and the settings table (reference: Settings)."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant


@mutant("H89", how="an out-of-range percent is saved", invariant="settings_file_valid")
class InvalidSettingSaved(Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        updated, hint = super().validate_edit(key, raw)
        if updated is None and key.endswith("Percent"):
            data = {**self.settings.to_json(), key: float(raw)}
            fields = type(self.settings).model_fields.items()
            return type(self.settings).model_construct(**{n: data[str(f.alias)] for n, f in fields}), None
        return updated, hint
