"""Mutants of managed paths, templates, project selections, the legacy config and the session
chain (reference: Managed paths, templates and projects)."""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant


@mutant("H122", how="the chain limit is ignored", invariant="receiver_link_follows_chain_limit")
class ChainLimitIgnored(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.settings = self.settings.model_copy(update={"max_session_chain_length": 10_000})


@mutant("H127a", how="project selections are ignored", invariant="project_call_template_used")
class ProjectTemplatesIgnored(Mutant):
    def managed(self) -> Any:
        paths = super().managed()
        return _NoProjects(paths)


class _NoProjects:
    def __init__(self, paths: Any) -> None:
        self._paths = paths

    def __getattr__(self, name: str) -> Any:
        if name == "project_templates":
            return os.path.join(self._paths.root, "ignored-project-templates.json")
        return getattr(self._paths, name)
