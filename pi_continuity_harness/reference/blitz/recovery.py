"""Deferred prompts: the capture snapshot and its one atomic recovery file per window.

Captured strings are never parsed, classified, summarised or rewritten: the file is the
prompts in capture order, each preceded by ``--- Deferred Prompt N of M ---``. No captured
input means no file. The same name is kept for the whole capture window; each new prompt
atomically replaces the file with the latest snapshot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text
from pi_continuity_harness.reference.blitz.constants import DEFERRED_BOUNDARY
from pi_continuity_harness.reference.blitz.paths import recovery_file_name

__all__ = ["CaptureWindow", "RecoveryFile", "format_deferred", "list_recovery_files"]


def format_deferred(prompts: list[str]) -> str:
    """The prompts, unchanged and in order, each after its boundary line."""
    total = len(prompts)
    parts = []
    for index, prompt in enumerate(prompts, start=1):
        parts.append(DEFERRED_BOUNDARY.format(n=index, m=total) + "\n" + prompt)
    return "\n\n".join(parts) + "\n"


@dataclass
class CaptureWindow:
    """The prompts captured in one deferral window, in memory and in one recovery file."""

    directory: str
    session_id: str
    started_at: float
    prompts: list[str] = field(default_factory=list)
    path: str | None = None
    last_error: str | None = None

    def capture(self, text: str) -> None:
        """Keep ``text`` unchanged, then atomically replace the file with the snapshot."""
        self.prompts.append(text)
        self.flush()

    def flush(self) -> None:
        if not self.prompts:
            return
        if self.path is None:
            self.path = os.path.join(self.directory, recovery_file_name(self.started_at, self.session_id))
        try:
            atomic_write_text(self.path, format_deferred(self.prompts))
            self.last_error = None
        except OSError as error:
            self.last_error = f"{self.path}: {error.strerror or error}"

    @property
    def count(self) -> int:
        return len(self.prompts)


@dataclass(frozen=True)
class RecoveryFile:
    name: str
    path: str
    modified: str


def list_recovery_files(directory: str) -> list[RecoveryFile]:
    """Top-level ``*.md`` files of the recovery directory, oldest first."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        path = os.path.join(directory, name)
        if name.endswith(".md") and not name.startswith(".") and os.path.isfile(path):
            stamp = datetime.fromtimestamp(os.stat(path).st_mtime, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
            out.append(RecoveryFile(name, path, stamp))
    return out
