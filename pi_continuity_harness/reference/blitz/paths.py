"""Managed paths under ``<agentDir>/pi-blitz-handoff/``, the dossier reservation, file names.

* root ``<getAgentDir()>/pi-blitz-handoff/`` with ``config.json``,
  ``project-templates.json``, ``recovery/``, ``templates/`` and ``templates/backups/``;
* the dossier: ``<cwd>/<CONFIG_DIR_NAME>/handoff_<SESSION ID>.md`` (the native source
  session ID; no timestamp, no subdirectory);
* a recovery file: ``<UTC timestamp with milliseconds>-<normalised session ID>.md``, the
  timestamp filesystem-safe (``:`` and ``.`` become ``-``), the session component reduced
  to letters, digits and hyphens.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.reference.blitz.constants import MANAGED_DIR_NAME

__all__ = [
    "ManagedPaths",
    "dossier_path",
    "normalise_session_component",
    "recovery_file_name",
    "utc_file_timestamp",
]


@dataclass(frozen=True)
class ManagedPaths:
    """Every managed path, derived from the agent directory."""

    agent_dir: str

    @property
    def root(self) -> str:
        return os.path.join(self.agent_dir, MANAGED_DIR_NAME)

    @property
    def config(self) -> str:
        return os.path.join(self.root, "config.json")

    @property
    def project_templates(self) -> str:
        return os.path.join(self.root, "project-templates.json")

    @property
    def recovery(self) -> str:
        return os.path.join(self.root, "recovery")

    @property
    def templates(self) -> str:
        return os.path.join(self.root, "templates")

    @property
    def backups(self) -> str:
        return os.path.join(self.templates, "backups")

    def ensure(self) -> None:
        """Create the missing managed directories (a directory symlink counts as present)."""
        for directory in (self.root, self.recovery, self.templates, self.backups):
            os.makedirs(directory, exist_ok=True)


def dossier_path(cwd: str, session_id: str) -> str:
    return os.path.join(cwd, CONFIG_DIR_NAME, f"handoff_{session_id}.md")


def normalise_session_component(session_id: str) -> str:
    """Letters, digits and hyphens only (anything else becomes a hyphen)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", session_id) or "session"


def utc_file_timestamp(epoch_seconds: float) -> str:
    """``2026-11-30T00-03-33-483Z``: UTC, milliseconds, no ``:`` or ``.``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}Z"
    return text.replace(":", "-").replace(".", "-")


def recovery_file_name(epoch_seconds: float, session_id: str) -> str:
    return f"{utc_file_timestamp(epoch_seconds)}-{normalise_session_component(session_id)}.md"
