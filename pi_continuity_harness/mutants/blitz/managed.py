"""Mutants of managed paths, templates, project selections, the legacy config and the session
chain (reference: Managed paths, templates and projects)."""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.api import get_agent_dir
from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, patched
from pi_continuity_harness.reference.blitz import chain, commands, templates
from pi_continuity_harness.reference.blitz.constants import LEGACY_TEMPLATE_NAMES
from pi_continuity_harness.reference.blitz.paths import ManagedPaths, utc_file_timestamp
from pi_continuity_harness.reference.blitz.templates import DEFAULT_ASSETS


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


@mutant(
    "H108", how="the managed root is <agentDir>/blitz-handoff", invariant="reminder_only_while_request_waits"
)
class ManagedRootRenamed(Mutant):
    def managed(self) -> ManagedPaths:
        if self.paths is None:
            self.paths = _Renamed(get_agent_dir())
        return self.paths


class _Renamed(ManagedPaths):
    @property
    def root(self) -> str:
        return os.path.join(self.agent_dir, "blitz-handoff")


@mutant("H121", how="the chain count leaves out the master", invariant="receiver_link_follows_chain_limit")
class ChainWithoutMaster(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        original = chain.chain_length
        with patched(chain, "chain_length", lambda parent, limit: original(parent, limit + 1) - 1):
            await super().cutover(token, ctx)


@mutant(
    "H121",
    how=(
        "the chain length is carried in memory from source to receiver (with the receiver's duty), not read from "
        "the persisted parent headers: a receiver resumed later counts as a master again"
    ),
    invariant="receiver_link_follows_chain_limit",
)
class ChainCountedInMemory(Mutant):
    #: The source's length by source session file, until its receiver adopts it (as ``_DUTIES``).
    handed: dict[str, int] = {}  # noqa: RUF012 - the process's memory, shared by every instance
    length = 1

    def adopt_duty(self, duty: Any) -> None:
        super().adopt_duty(duty)
        self.length = ChainCountedInMemory.handed.pop(duty.source_session_file, 1) + 1

    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if request is not None:
            ChainCountedInMemory.handed[request.source_session_file] = self.length
        with patched(chain, "chain_length", lambda _parent, limit: min(self.length, limit)):
            await super().cutover(token, ctx)


@mutant(
    "H125", how="a project template choice is shown but not written", invariant="project_call_template_used"
)
class ProjectChoiceNotWritten(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "set_project_selection", lambda *a, **k: True):
            await super().run(args, ctx)


@mutant(
    "H114",
    how="the dossier is added to the project's .gitignore",
    unreachable="the explorer's projects have no .gitignore",
)
class DossierIgnored(Mutant):
    async def tool_get(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().tool_get(*args, **kwargs)
        request = self.request
        if request is not None and request.reservation_owned:
            ignore = os.path.join(os.path.dirname(os.path.dirname(request.dossier)), ".gitignore")
            if os.path.exists(ignore):
                with open(ignore, "a", encoding="utf-8") as handle:
                    handle.write(os.path.basename(request.dossier) + "\n")
        return result


@mutant(
    "H134",
    how="recovery files and the config are readable by everyone",
    unreachable="no invariant reads file modes",
)
class FilesWorldReadable(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        await super().run(args, ctx)
        config = self.managed().config
        if os.path.exists(config):
            os.chmod(config, 0o644)

    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        path = request.capture.path if request is not None and request.capture is not None else None
        if path and os.path.exists(path):
            os.chmod(path, 0o644)
        return result


class _NoRecoveryDir(ManagedPaths):
    def ensure(self) -> None:
        for directory in (self.root, self.templates, self.backups):
            os.makedirs(directory, exist_ok=True)


@mutant(
    "H109",
    how="loading does not create the recovery directory (it is made on first use)",
    unreachable="no invariant reads the managed directories at startup",
)
class RecoveryDirNotCreated(Mutant):
    def managed(self) -> ManagedPaths:
        if self.paths is None:
            self.paths = _NoRecoveryDir(get_agent_dir())
        return self.paths


class _SymlinksReplaced(ManagedPaths):
    def ensure(self) -> None:
        for directory in (self.root, self.recovery, self.templates, self.backups):
            if os.path.islink(directory):
                os.remove(directory)
            os.makedirs(directory, exist_ok=True)


@mutant(
    "H109",
    how="loading replaces a symlinked managed directory with a real, empty one",
    unreachable="the explorer plants no symbolic link (the suite does: edit_file kind symlink)",
)
class SymlinkedDirReplaced(Mutant):
    """From the independent round (docs/pi-blitz-handoff.md): a load that "repairs" every
    managed directory that is not a real one, which the reference forbids ("Load creates missing
    dirs; supports deliberate directory symlinks", Managed paths; rule H109). It survived while
    no scenario could plant a link."""

    def managed(self) -> ManagedPaths:
        if self.paths is None:
            self.paths = _SymlinksReplaced(get_agent_dir())
        return self.paths


@mutant(
    "H110",
    how="a changed default template is replaced without a backup",
    unreachable="the explorer never edits a default template",
)
class DefaultReplacedWithoutBackup(Mutant):
    def load(self, ctx: Any) -> None:
        templates_dir = self.managed().templates
        for name, text in DEFAULT_ASSETS.items():
            target = os.path.join(templates_dir, name)
            if os.path.isfile(target):
                with open(target, encoding="utf-8") as handle:
                    changed = handle.read() != text
                if changed:
                    os.remove(target)
        super().load(ctx)


@mutant(
    "H117",
    how="legacy templates are removed when the extension loads",
    unreachable="the explorer plants no legacy template",
)
class LegacyTemplatesRemoved(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        for name in LEGACY_TEMPLATE_NAMES:
            path = os.path.join(self.managed().templates, name)
            if os.path.isfile(path):
                os.remove(path)


@mutant(
    "H110",
    how="the backup of a changed default is named without a timestamp: a later backup overwrites it",
    unreachable="the explorer never edits a default template",
)
class BackupNotTimestamped(Mutant):
    def load(self, ctx: Any) -> None:
        with patched(templates, "utc_file_timestamp", lambda _now: "backup"):
            super().load(ctx)


# ---------------------------------------------------------------- a third independent round
@mutant(
    "H110",
    how="every load moves the default templates to backups/, changed or not",
    unreachable="no invariant reads templates/backups",
)
class BackupEveryLoad(Mutant):
    def load(self, ctx: Any) -> None:
        paths = self.managed()
        for name in DEFAULT_ASSETS:
            target = os.path.join(paths.templates, name)
            if os.path.isfile(target):
                os.makedirs(paths.backups, exist_ok=True)
                os.replace(target, os.path.join(paths.backups, f"{utc_file_timestamp(self.now())}-{name}"))
        super().load(ctx)
