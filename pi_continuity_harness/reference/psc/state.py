"""Process-local state of one extension instance (one Pi runtime), and how it is read.

Everything here lives in memory only and dies with the instance: Pi replaces extension
instances on reload and on session replacement, so a fresh instance starts from disk and
from Pi's settings again. Nothing here starts timers, threads or watchers.

The live native settings are an immutable snapshot taken at ``session_start``: Pi's
``SettingsManager`` does not watch files, so what ``/continuity settings`` writes only takes
effect after a restart, and the snapshot is what Pi actually uses until then (spec §18).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_continuity_harness.api import AbortController, Model
from pi_continuity_harness.reference.psc.config import (
    ConfigLoad,
    project_settings_path,
    resolve_artifact_directory,
)
from pi_continuity_harness.reference.psc.handoff import PreparedHandoff
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    NativeSettingsError,
    read_native_settings,
)
from pi_continuity_harness.reference.psc.paths import ArtifactLayout
from pi_continuity_harness.reference.psc.status import StatusSnapshot

__all__ = [
    "ActiveOperation",
    "LiveSettings",
    "OperationKind",
    "RuntimeState",
]

OperationKind = Literal["threshold", "overflow", "manual", "checkpoint"]

_KIND_LABELS: dict[str, str] = {
    "threshold": "native threshold handoff",
    "overflow": "native overflow handoff",
    "manual": "manual /compact handoff",
    "checkpoint": "manual checkpoint",
}


@dataclass(frozen=True)
class LiveSettings:
    """Immutable snapshot of ``pi.get_settings()`` taken when the runtime started.

    Stored as canonical JSON text, so nothing can mutate it; native values are resolved
    per model on demand (``compaction.modelOverrides`` makes them model-specific).
    """

    json_text: str | None
    error: str | None = None
    #: ``native_for``'s settings per model id, read once from ``json_text`` (a runtime reads
    #: them at its start for the refusal and again for the footer, and at every model_select
    #: and status); an error is raised again from the text each time, as before.
    _native: dict[str | None, NativeCompactionSettings] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def capture(cls, settings: Mapping[str, Any] | None, error: str | None = None) -> LiveSettings:
        if settings is None:
            return cls(None, error or "Pi's settings could not be read")
        try:
            return cls(json.dumps(settings, sort_keys=True, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as exc:
            return cls(None, f"Pi's settings could not be read: {exc}")

    def native_for(self, model: Model | None) -> NativeCompactionSettings:
        """Effective native compaction settings for ``model``; raises NativeSettingsError."""
        if self.json_text is None:
            raise NativeSettingsError([self.error or "Pi's settings could not be read"])
        model_id = model.full_id if model is not None else None
        known = self._native.get(model_id)
        if known is not None:
            return known
        data = json.loads(self.json_text)
        if not isinstance(data, dict):
            raise NativeSettingsError(["Pi's settings are not an object"])
        settings = read_native_settings(data, model_id)
        self._native[model_id] = settings
        return settings


@dataclass
class ActiveOperation:
    """The one in-memory operation a session may have at a time (spec §13 single flight)."""

    kind: OperationKind
    event_id: str
    phase: str = "starting"
    #: A checkpoint's own controller; native operations use Pi's ``event.signal``.
    controller: AbortController | None = None

    @property
    def native(self) -> bool:
        return self.kind != "checkpoint"

    def describe(self) -> str:
        return f"{_KIND_LABELS[self.kind]}: {self.phase} (event {self.event_id})"


@dataclass
class RuntimeState:
    """What one extension instance knows about its session."""

    cwd: str
    session_id: str
    trusted: bool
    config: ConfigLoad
    live: LiveSettings
    #: Settings written by ``/continuity settings`` in this runtime (active after restart).
    written_settings: NativeCompactionSettings | None = None
    active: ActiveOperation | None = None
    #: What ``session_before_compact`` returned, until ``session_compact`` (or a failure).
    prepared: PreparedHandoff | None = None
    last_artifact_path: str | None = None
    last_pending_path: str | None = None
    last_failure: str | None = None
    stale_pending_paths: tuple[str, ...] = field(default_factory=tuple)
    #: Why Pi cannot use the project settings file (it dropped it for its defaults), or None.
    project_settings_error: str | None = None

    # ------------------------------------------------------------------ derived
    @property
    def artifact_dir(self) -> str:
        return resolve_artifact_directory(self.cwd, self.config.config.artifact_directory)

    @property
    def layout(self) -> ArtifactLayout:
        return ArtifactLayout(self.artifact_dir, self.session_id)

    @property
    def settings_path(self) -> str:
        return project_settings_path(self.cwd)

    @property
    def automatic_allowed(self) -> bool:
        """Trusted, config valid and enabled: the extension may make Briefs durable."""
        return self.trusted and self.config.ok and self.config.config.enabled

    def native_settings(self, model: Model | None) -> tuple[NativeCompactionSettings | None, str | None]:
        """``(settings, None)`` or ``(None, why they cannot be read)`` for ``model``."""
        if self.project_settings_error is not None:
            return None, self.project_settings_error
        try:
            return self.live.native_for(model), None
        except NativeSettingsError as exc:
            return None, "; ".join(exc.problems) or str(exc)

    def clear_native_operation(self) -> None:
        """Release the gate held by a native handoff (never a running checkpoint's)."""
        if self.active is not None and self.active.native:
            self.active = None
        self.prepared = None

    def existing_stale_paths(self) -> tuple[str, ...]:
        return tuple(path for path in self.stale_pending_paths if os.path.isfile(path))

    def snapshot(self, model: Model | None) -> StatusSnapshot:
        """The status panel's view of this runtime for the active model."""
        live, native_error = self.native_settings(model)
        config = self.config.config
        return StatusSnapshot(
            trusted=self.trusted,
            extension_enabled=config.enabled,
            config_path=self.config.path,
            project_settings_path=self.settings_path,
            artifact_directory=self.artifact_dir,
            synthesis_model=config.synthesis_model,
            synthesis_effort=config.synthesis_effort,
            live_settings=live,
            context_window=model.context_window if model is not None else None,
            config_error=self.config.error.describe() if self.config.error is not None else None,
            native_settings_error=native_error,
            written_settings=self.written_settings,
            current_operation=self.active.describe() if self.active is not None else None,
            last_artifact_path=self.last_artifact_path,
            last_pending_path=self.last_pending_path,
            last_failure=self.last_failure,
            stale_pending_paths=self.existing_stale_paths() if self.trusted else (),
        )
