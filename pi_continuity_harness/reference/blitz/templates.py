"""Templates: the two default assets, the role catalogue, the shared resolver, project selections.

Resolver (nonrecursive, per role): the selected name in the addendum directory (when
``templateDirectory`` is configured), the selected name among the managed templates, the
role default in the addendum directory, the role default among the managed templates.
Each physical candidate is tried once; a candidate must be a readable, nonempty ``.cmpl``
file. Every failure is reported. A failed non-default selection warns with the failure
and the fallback actually used; an unresolvable role default fails visibly. There is no
placeholder engine and no embedded fourth fallback.

Project selections (``project-templates.json``): ``{"projects": {"<abs dir>": {"call":
name, "handoff": name}}}``. Each start rereads the file; each role is looked up
independently from the cwd upward (never descendants), the nearest concrete selection
wins, ``<Default>`` selects the role default and stops the lookup, nothing found falls
back to the global setting. A read/JSON/shape failure is one warning, and the role
defaults are used.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text
from pi_continuity_harness.reference.blitz.constants import (
    DEFAULT_CALL_TEMPLATE,
    DEFAULT_HANDOFF_TEMPLATE,
    PROJECT_DEFAULT,
    ROLES,
)
from pi_continuity_harness.reference.blitz.paths import ManagedPaths, utc_file_timestamp

__all__ = [
    "DEFAULT_ASSETS",
    "ProjectSelection",
    "ResolvedTemplate",
    "TemplateResolutionError",
    "catalogue",
    "install_default_templates",
    "load_project_selections",
    "resolve_project_selection",
    "resolve_template",
    "role_default",
    "set_project_selection",
]

DEFAULT_ASSETS: dict[str, str] = {
    "call_default.cmpl": DEFAULT_CALL_TEMPLATE,
    "handoff_default.cmpl": DEFAULT_HANDOFF_TEMPLATE,
}


def role_default(role: str) -> str:
    return f"{role}_default.cmpl"


def install_default_templates(paths: ManagedPaths, now: float) -> list[str]:
    """Install both default assets; a different same-name file is backed up first.

    Returns the backup paths made. Other templates (and their selections) are untouched.
    """
    backups: list[str] = []
    for name, text in DEFAULT_ASSETS.items():
        target = os.path.join(paths.templates, name)
        try:
            with open(target, encoding="utf-8") as handle:
                current: str | None = handle.read()
        except FileNotFoundError:
            current = None
        except (OSError, UnicodeDecodeError):
            current = ""
        if current == text:
            continue
        if current is not None:
            os.makedirs(paths.backups, exist_ok=True)
            backup = os.path.join(paths.backups, f"{utc_file_timestamp(now)}-{name}")
            shutil.move(target, backup)
            backups.append(backup)
        atomic_write_text(target, text, mode=0o644)
    return backups


def _readable_nonempty(path: str) -> tuple[str | None, str | None]:
    """The template text, or the reason it cannot be used."""
    if not path.endswith(".cmpl"):
        return None, f"{path}: not a .cmpl file"
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None, f"{path}: not found"
    except IsADirectoryError:
        return None, f"{path}: is a directory"
    except (OSError, UnicodeDecodeError) as error:
        return None, f"{path}: unreadable ({getattr(error, 'strerror', None) or error})"
    if not text.strip():
        return None, f"{path}: empty"
    return text, None


def catalogue(role: str, directories: list[str]) -> list[str]:
    """Readable nonempty ``<role>_*.cmpl`` names in the directories (nonrecursive, no backups)."""
    names: set[str] = set()
    for directory in directories:
        try:
            # Sorted: each candidate is read (and a run's trace records the read), so the
            # directory's listing order (ext4 and tmpfs differ) must not decide the trace.
            entries = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in entries:
            if name.startswith(f"{role}_") and name.endswith(".cmpl"):
                text, _ = _readable_nonempty(os.path.join(directory, name))
                if text is not None:
                    names.add(name)
    return sorted(names)


class TemplateResolutionError(RuntimeError):
    """Not even the role default resolves: a start must fail visibly."""


@dataclass(frozen=True)
class ResolvedTemplate:
    role: str
    selected: str
    path: str
    text: str
    failures: tuple[str, ...] = ()

    @property
    def warning(self) -> str | None:
        """A warning when a non-default selection failed and a fallback is used."""
        if not self.failures or self.selected == role_default(self.role):
            return None
        return (
            f"The {self.role} template {self.selected!r} could not be used ("
            + "; ".join(self.failures)
            + f"); using {self.path}."
        )


def resolve_template(
    role: str, selected: str, managed_dir: str, addendum_dir: str | None
) -> ResolvedTemplate:
    default = role_default(role)
    candidates: list[str] = []
    for directory, name in (
        (addendum_dir, selected),
        (managed_dir, selected),
        (addendum_dir, default),
        (managed_dir, default),
    ):
        if directory is None:
            continue
        path = os.path.join(directory, name)
        if path not in candidates:
            candidates.append(path)
    failures: list[str] = []
    for path in candidates:
        text, failure = _readable_nonempty(path)
        if text is not None:
            return ResolvedTemplate(role, selected, path, text, tuple(failures))
        failures.append(str(failure))
    raise TemplateResolutionError(f"The {role} template cannot be resolved: " + "; ".join(failures) + ".")


@dataclass(frozen=True)
class ProjectSelection:
    """The effective selection per role, and the warning when the project file is unusable."""

    names: dict[str, str] = field(default_factory=dict)
    warning: str | None = None


def load_project_selections(path: str) -> tuple[dict[str, dict[str, str]], str | None]:
    """The assignments by absolute directory, or an error (one category warning)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}, None
    except OSError as error:
        return {}, f"Project templates could not be read ({path}: {error.strerror or error})."
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as error:
        return {}, f"Project templates are not valid JSON ({path}: {error.msg})."
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict) or any(
        not isinstance(k, str)
        or not os.path.isabs(k)
        or not isinstance(v, dict)
        or any(role not in ROLES or not isinstance(name, str) for role, name in v.items())
        for k, v in projects.items()
    ):
        return {}, f"Project templates have an invalid shape ({path}); role defaults are active."
    return {k: dict(v) for k, v in projects.items()}, None


def resolve_project_selection(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
    assignments, error = load_project_selections(path)
    if error is not None:
        return ProjectSelection({role: role_default(role) for role in ROLES}, error)
    names: dict[str, str] = {}
    for role in ROLES:
        directory = os.path.abspath(cwd)
        while True:
            chosen = assignments.get(directory, {}).get(role)
            if chosen:
                names[role] = role_default(role) if chosen == PROJECT_DEFAULT else chosen
                break
            parent = os.path.dirname(directory)
            if parent == directory:
                names[role] = global_names[role]
                break
            directory = parent
    return ProjectSelection(names)


def set_project_selection(path: str, cwd: str, role: str, name: str | None) -> bool:
    """Persist one role for ``cwd`` (``None``: Autodiscover). Returns whether the file changed.

    Both roles on Autodiscover remove the directory's assignment; an absent assignment
    with nothing to set writes nothing.
    """
    assignments, error = load_project_selections(path)
    if error is not None:
        raise ValueError(error)
    directory = os.path.abspath(cwd)
    current = dict(assignments.get(directory, {}))
    if name is None:
        if role not in current:
            return False
        del current[role]
    else:
        if current.get(role) == name:
            return False
        current[role] = name
    if current:
        assignments[directory] = current
    else:
        assignments.pop(directory, None)
    atomic_write_text(path, json.dumps({"projects": assignments}, indent=2, sort_keys=True) + "\n")
    return True
