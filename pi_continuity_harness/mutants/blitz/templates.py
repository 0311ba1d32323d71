"""Mutants of the template resolver and the project selections (reference: Managed paths,
templates and projects: the shared resolver, ``/sh project-template``, the upward lookup)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from collections.abc import Callable
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, mutant, patched, with_ui
from pi_continuity_harness.reference.blitz import commands, templates
from pi_continuity_harness.reference.blitz.atomic_io import atomic_write_text
from pi_continuity_harness.reference.blitz.constants import PROJECT_DEFAULT, ROLES
from pi_continuity_harness.reference.blitz.templates import (
    DEFAULT_ASSETS,
    ProjectSelection,
    ResolvedTemplate,
    TemplateResolutionError,
    role_default,
)

#: The reference's module (the package exports its factory under the same name).
blitz_extension = importlib.import_module("pi_continuity_harness.reference.blitz.wiring")

_NO_ADDENDUM = "the explorer configures no templateDirectory and plants no templates"
_NO_PROJECTS = (
    "the explorer selects one concrete Call template for the cwd itself: no parent or child directory,"
    " no <Default> or <Autodiscover>, no hand-written project-templates.json"
)


def _resolve_in_order(role: str, selected: str, order: list[tuple[str | None, str]]) -> ResolvedTemplate:
    """The reference resolver's loop (first readable, nonempty candidate; each failure listed)
    over candidates in the order a mutant gives them."""
    failures: list[str] = []
    seen: list[str] = []
    for directory, name in order:
        if directory is None or os.path.join(directory, name) in seen:
            continue
        path = os.path.join(directory, name)
        seen.append(path)
        text, failure = templates._readable_nonempty(path)
        if text is not None:
            return ResolvedTemplate(role, selected, path, text, tuple(failures))
        failures.append(str(failure))
    raise TemplateResolutionError(f"The {role} template cannot be resolved: " + "; ".join(failures) + ".")


def _managed_first(role: str, selected: str, managed_dir: str, addendum_dir: str | None) -> ResolvedTemplate:
    """The resolver with the first two candidates swapped: the selected managed template first."""
    default = role_default(role)
    order = [
        (managed_dir, selected),
        (addendum_dir, selected),
        (addendum_dir, default),
        (managed_dir, default),
    ]
    return _resolve_in_order(role, selected, order)


class _StartResolver(Mutant):
    """Starts resolve their templates with :meth:`resolver` (startup and settings checks do not)."""

    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        return original

    def start_request(self, ctx: Any, route: Any) -> Any:
        original = blitz_extension.resolve_template
        with patched(blitz_extension, "resolve_template", self.resolver(original)):
            return super().start_request(ctx, route)


@mutant(
    "H129",
    how="the selected managed template comes before the selected addendum one",
    unreachable=_NO_ADDENDUM,
)
class ManagedBeforeAddendum(_StartResolver):
    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        return _managed_first


@mutant(
    "H130a",
    how="a start falls back from a failed selection without a warning",
    unreachable="the explorer selects only templates that exist",
)
class SilentFallbackAtStart(_StartResolver):
    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        def silent(*args: Any) -> ResolvedTemplate:
            return dataclasses.replace(original(*args), failures=())

        return silent


@mutant(
    "H130b",
    how="an unresolvable role default falls back to an embedded copy instead of failing the start",
    unreachable="the explorer never removes a default template",
)
class EmbeddedDefaultFallback(_StartResolver):
    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        def embedded(role: str, selected: str, *rest: Any) -> ResolvedTemplate:
            try:
                return original(role, selected, *rest)
            except TemplateResolutionError:
                return ResolvedTemplate(role, selected, "<embedded>", DEFAULT_ASSETS[role_default(role)])

        return embedded


@mutant(
    "H131",
    how="startup and /sh settings do not check the selected templates",
    unreachable="the explorer selects only templates that exist",
)
class NoTemplateCheck(Mutant):
    def template_notes(self) -> list[tuple[str, bool]]:
        return []


def _lookup(*, upward: bool, default_stops: bool) -> Callable[[str, str, dict[str, str]], ProjectSelection]:
    """``resolve_project_selection`` with the upward walk or ``<Default>``'s stop switched off."""

    def resolve(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
        assignments, error = templates.load_project_selections(path)
        if error is not None:
            return ProjectSelection({role: role_default(role) for role in ROLES}, error)
        names: dict[str, str] = {}
        for role in ROLES:
            directory = os.path.abspath(cwd)
            names[role] = global_names[role]
            while True:
                chosen = assignments.get(directory, {}).get(role)
                if chosen and (default_stops or chosen != PROJECT_DEFAULT):
                    names[role] = role_default(role) if chosen == PROJECT_DEFAULT else chosen
                    break
                parent = os.path.dirname(directory)
                if not upward or parent == directory:
                    break
                directory = parent
        return ProjectSelection(names)

    return resolve


class _ProjectLookup(Mutant):
    lookup: Callable[[str, str, dict[str, str]], ProjectSelection]

    def start_request(self, ctx: Any, route: Any) -> Any:
        with patched(blitz_extension, "resolve_project_selection", type(self).lookup):
            return super().start_request(ctx, route)


@mutant("H127b", how="project selections are looked up in the cwd only, not upward", unreachable=_NO_PROJECTS)
class ProjectLookupCwdOnly(_ProjectLookup):
    lookup = staticmethod(_lookup(upward=False, default_stops=True))


@mutant("H116", how="<Default> in a directory inherits like <Autodiscover>", unreachable=_NO_PROJECTS)
class ProjectDefaultInherits(_ProjectLookup):
    lookup = staticmethod(_lookup(upward=True, default_stops=False))


@mutant(
    "H128",
    how="an unusable project templates file is repaired (rewritten empty) at a start",
    unreachable="the explorer never corrupts project-templates.json",
)
class ProjectFileRepaired(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        path = self.managed().project_templates
        if os.path.exists(path) and templates.load_project_selections(path)[1] is not None:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"projects": {}}) + "\n")
        return super().start_request(ctx, route)


def _keep_empty_entry(original: Callable[..., bool]) -> Callable[..., bool]:
    def set_selection(path: str, cwd: str, role: str, name: str | None) -> bool:
        changed = original(path, cwd, role, name)
        assignments, error = templates.load_project_selections(path)
        directory = os.path.abspath(cwd)
        if changed and error is None and directory not in assignments:
            assignments[directory] = {}
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"projects": assignments}, indent=2, sort_keys=True) + "\n")
        return changed

    return set_selection


@mutant(
    "H126",
    how="both roles on <Autodiscover> leave an empty assignment for the directory",
    unreachable=_NO_PROJECTS,
)
class AutodiscoverLeavesEntry(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.set_project_selection
        with patched(commands, "set_project_selection", _keep_empty_entry(original)):
            await super().run(args, ctx)


@mutant(
    "H124",
    how="the project template list offers the role default a second time, by its file name",
    unreachable="no invariant reads the options of the project template list",
)
class ProjectListRepeatsDefault(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        with patched(commands, "role_default", lambda role: f"{role}_unnamed.cmpl"):
            await super().run(args, ctx)


@mutant(
    "H111",
    how="the template catalogue also lists templates/backups/",
    unreachable="no invariant reads the options of the settings template list",
)
class CatalogueIncludesBackups(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.catalogue

        def with_backups(role: str, directories: list[str]) -> list[str]:
            return original(role, [*directories, *(os.path.join(d, "backups") for d in directories)])

        with patched(commands, "catalogue", with_backups):
            await super().run(args, ctx)


def _concrete(role: str, chosen: str) -> str:
    return role_default(role) if chosen == PROJECT_DEFAULT else chosen


def _with_descendants(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
    """The reference's lookup; a role nothing upward selects takes a descendant's selection."""
    found = templates.resolve_project_selection(path, cwd, global_names)
    if found.warning:
        return found
    assignments, _ = templates.load_project_selections(path)
    here = os.path.abspath(cwd)
    names = dict(found.names)
    for role in ROLES:
        upward = any(
            assignments.get(d, {}).get(role) for d in assignments if here == d or here.startswith(d + os.sep)
        )
        below = [d for d in sorted(assignments) if d.startswith(here + os.sep) and assignments[d].get(role)]
        if not upward and below:
            names[role] = _concrete(role, assignments[below[0]][role])
    return ProjectSelection(names)


def _string_prefix(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
    """'Upward' as a string prefix test: /w/proj counts as an ancestor of /w/project."""
    assignments, error = templates.load_project_selections(path)
    if error is not None:
        return templates.resolve_project_selection(path, cwd, global_names)
    here = os.path.abspath(cwd)
    names: dict[str, str] = {}
    for role in ROLES:
        owners = [d for d in assignments if here.startswith(d) and assignments[d].get(role)]
        nearest = max(owners, key=len, default=None)
        names[role] = global_names[role] if nearest is None else _concrete(role, assignments[nearest][role])
    return ProjectSelection(names)


@mutant(
    "H127b",
    how="a role nothing upward selects takes a descendant directory's selection",
    unreachable=_NO_PROJECTS,
)
class ProjectLookupUsesDescendant(_ProjectLookup):
    lookup = staticmethod(_with_descendants)


@mutant(
    "H127b",
    how="the upward lookup is a string prefix test (a sibling '/w/proj' counts for '/w/project')",
    unreachable=_NO_PROJECTS,
)
class ProjectLookupStringPrefix(_ProjectLookup):
    lookup = staticmethod(_string_prefix)


@mutant(
    "H128",
    how="an unusable project templates file warns once per role (two warnings per start)",
    unreachable="the explorer never corrupts project-templates.json",
)
class ProjectWarningPerRole(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        notify = ctx.ui.notify

        def per_role(message: str, level: str = "info") -> None:
            for _role in ROLES if message.startswith("Project templates") else ROLES[:1]:
                notify(message, level)

        return super().start_request(with_ui(ctx, notify=per_role), route)


class _WarnsForDefaults(ResolvedTemplate):
    """A resolved template that warns whenever a candidate failed, even for the role default."""

    @property
    def warning(self) -> str | None:
        if not self.failures:
            return None
        return (
            f"The {self.role} template {self.selected!r} could not be used ("
            + "; ".join(self.failures)
            + f"); using {self.path}."
        )


@mutant(
    "H130b",
    how="a selected role default missing from the addendum directory warns although the managed one resolves",
    unreachable=_NO_ADDENDUM,
)
class DefaultSelectionWarns(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        original = blitz_extension.resolve_template

        def warns(role: str, selected: str, managed_dir: str, addendum_dir: str | None) -> ResolvedTemplate:
            found = original(role, selected, managed_dir, addendum_dir)
            return _WarnsForDefaults(found.role, found.selected, found.path, found.text, found.failures)

        with patched(blitz_extension, "resolve_template", warns):
            return super().start_request(ctx, route)


@mutant(
    "H125",
    how="choosing one role's project template also writes the other role as <Default>",
    unreachable=(
        "the explorer checks the Call template a start uses (project_call_template_used); the other role"
        " written as <Default> resolves as its absence does with the explorer's default Handoff template"
    ),
)
class OtherRoleWrittenDefault(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.set_project_selection

        def both(path: str, cwd: str, role: str, name: str | None) -> bool:
            changed = original(path, cwd, role, name)
            if changed and name is not None:
                other = "handoff" if role == "call" else "call"
                assignments, _error = templates.load_project_selections(path)
                entry = assignments.setdefault(os.path.abspath(cwd), {})
                if other not in entry:
                    entry[other] = PROJECT_DEFAULT
                    text = json.dumps({"projects": assignments}, indent=2, sort_keys=True) + "\n"
                    atomic_write_text(path, text)
            return changed

        with patched(commands, "set_project_selection", both):
            await super().run(args, ctx)


# ---------------------------------------------------------------- a third independent round
def _swapped_middle(role: str, selected: str, managed_dir: str, addendum_dir: str | None) -> ResolvedTemplate:
    """The resolver with the middle two candidates swapped: the addendum role default before the
    selected managed template."""
    default = role_default(role)
    order = [
        (addendum_dir, selected),
        (addendum_dir, default),
        (managed_dir, selected),
        (managed_dir, default),
    ]
    return _resolve_in_order(role, selected, order)


@mutant(
    "H129",
    how="the addendum's role default comes before the selected managed template",
    unreachable=_NO_ADDENDUM,
)
class AddendumDefaultBeforeManagedSelection(_StartResolver):
    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        return _swapped_middle


@mutant("H129", how="a fallback warning names only the last candidate that failed", unreachable=_NO_ADDENDUM)
class ResolverReportsLastFailure(_StartResolver):
    def resolver(self, original: Callable[..., ResolvedTemplate]) -> Callable[..., ResolvedTemplate]:
        def last_failure(*args: Any) -> ResolvedTemplate:
            resolved = original(*args)
            return dataclasses.replace(resolved, failures=resolved.failures[-1:])

        return last_failure


def _stop_at_entry(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
    """The upward lookup stops at the first directory with any assignment, whatever its roles."""
    assignments, error = templates.load_project_selections(path)
    if error is not None:
        return templates.resolve_project_selection(path, cwd, global_names)
    directory = os.path.abspath(cwd)
    while directory not in assignments and os.path.dirname(directory) != directory:
        directory = os.path.dirname(directory)
    entry = assignments.get(directory, {})
    names = {}
    for role in ROLES:
        chosen = entry.get(role)
        names[role] = role_default(role) if chosen == PROJECT_DEFAULT else chosen or global_names[role]
    return ProjectSelection(names)


@mutant(
    "H127b",
    how="the upward lookup stops at the first directory with an assignment, even one of the other role only",
    unreachable=_NO_PROJECTS,
)
class ProjectLookupStopsAtEntry(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        with patched(blitz_extension, "resolve_project_selection", _stop_at_entry):
            return super().start_request(ctx, route)


@mutant(
    "H127a",
    how="the project assignments are read at the first start of the runtime only, then reused",
    unreachable=_NO_PROJECTS,
)
class ProjectFileCached(Mutant):
    cached: ProjectSelection | None = None

    def start_request(self, ctx: Any, route: Any) -> Any:
        original = templates.resolve_project_selection

        def cached(path: str, cwd: str, global_names: dict[str, str]) -> ProjectSelection:
            if self.cached is None:
                self.cached = original(path, cwd, global_names)
            return self.cached

        with patched(blitz_extension, "resolve_project_selection", cached):
            return super().start_request(ctx, route)


@mutant(
    "H125",
    how="a project template choice that cannot be written is announced as set",
    unreachable="the explorer makes no write of project-templates.json fail",
)
class ProjectWriteFailureHidden(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        original = templates.set_project_selection

        def setter(*args: Any) -> bool:
            try:
                return original(*args)
            except OSError:
                return True

        with patched(commands, "set_project_selection", setter):
            await super().run(args, ctx)


def _shape_silent(original: Callable[[str], tuple[dict[str, dict[str, str]], str | None]]) -> Any:
    def load(path: str) -> tuple[dict[str, dict[str, str]], str | None]:
        assignments, error = original(path)
        return ({}, None) if error is not None and "invalid shape" in error else (assignments, error)

    return load


@mutant(
    "H128",
    how="a project templates file of an invalid shape (valid JSON, a relative directory key) falls back "
    "to the role defaults in silence (an outside mutant; the features tried malformed JSON only)",
    unreachable=_NO_PROJECTS,
)
class ProjectShapeSilent(Mutant):
    def start_request(self, ctx: Any, route: Any) -> Any:
        with patched(templates, "load_project_selections", _shape_silent(templates.load_project_selections)):
            return super().start_request(ctx, route)
