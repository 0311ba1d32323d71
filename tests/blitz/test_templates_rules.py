"""Default templates with backups, the role catalogue, the shared resolver, project selections."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pi_continuity_harness.reference.blitz.constants import (
    DEFAULT_CALL_TEMPLATE,
    LEGACY_TEMPLATE_NAMES,
    PROJECT_DEFAULT,
)
from pi_continuity_harness.reference.blitz.paths import ManagedPaths
from pi_continuity_harness.reference.blitz.templates import (
    TemplateResolutionError,
    catalogue,
    install_default_templates,
    resolve_project_selection,
    resolve_template,
    set_project_selection,
)

GLOBAL = {"call": "call_default.cmpl", "handoff": "handoff_default.cmpl"}


def _paths(tmp_path: Path) -> ManagedPaths:
    paths = ManagedPaths(str(tmp_path / "agent"))
    paths.ensure()
    return paths


def test_default_templates_are_installed_and_changed_ones_backed_up(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    assert install_default_templates(paths, 0.0) == []
    call = Path(paths.templates) / "call_default.cmpl"
    assert call.read_text() == DEFAULT_CALL_TEMPLATE
    (Path(paths.templates) / "call_mine.cmpl").write_text("mine", encoding="utf-8")
    call.write_text("customised", encoding="utf-8")
    backups = install_default_templates(paths, 1.0)
    assert len(backups) == 1 and Path(backups[0]).read_text() == "customised"
    assert Path(backups[0]).parent == Path(paths.backups)
    assert call.read_text() == DEFAULT_CALL_TEMPLATE
    assert (Path(paths.templates) / "call_mine.cmpl").read_text() == "mine"
    assert install_default_templates(paths, 2.0) == []


def test_catalogue_is_readable_nonempty_role_files_nonrecursive(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    install_default_templates(paths, 0.0)
    templates = Path(paths.templates)
    (templates / "call_empty.cmpl").write_text("  \n", encoding="utf-8")
    (templates / "call_x.cmpl").write_text("x", encoding="utf-8")
    (templates / "call_y.txt").write_text("y", encoding="utf-8")
    (templates / "backups" / "call_old.cmpl").write_text("old", encoding="utf-8")
    assert catalogue("call", [paths.templates]) == ["call_default.cmpl", "call_x.cmpl"]
    assert catalogue("handoff", [paths.templates]) == ["handoff_default.cmpl"]


def test_resolver_order_addendum_then_managed_then_defaults(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    install_default_templates(paths, 0.0)
    addendum = tmp_path / "addendum"
    addendum.mkdir()
    (addendum / "call_x.cmpl").write_text("addendum x", encoding="utf-8")
    (Path(paths.templates) / "call_x.cmpl").write_text("managed x", encoding="utf-8")
    assert resolve_template("call", "call_x.cmpl", paths.templates, str(addendum)).text == "addendum x"
    assert resolve_template("call", "call_x.cmpl", paths.templates, None).text == "managed x"
    (addendum / "call_default.cmpl").write_text("shadowing default", encoding="utf-8")
    resolved = resolve_template("call", "call_missing.cmpl", paths.templates, str(addendum))
    assert resolved.text == "shadowing default"
    assert resolved.warning is not None and "call_missing.cmpl" in resolved.warning
    assert len(resolved.failures) == 2  # each physical candidate once


def test_a_failing_default_selection_fails_visibly_without_a_warning_path(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    with pytest.raises(TemplateResolutionError, match="call template cannot be resolved"):
        resolve_template("call", "call_default.cmpl", paths.templates, None)
    install_default_templates(paths, 0.0)
    assert resolve_template("call", "call_default.cmpl", paths.templates, None).warning is None


def test_project_resolution_is_nearest_concrete_selection_upward_per_role(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    top = tmp_path / "repo"
    sub = top / "pkg" / "mod"
    sub.mkdir(parents=True)
    set_project_selection(paths.project_templates, str(top), "call", "call_top.cmpl")
    set_project_selection(paths.project_templates, str(top), "handoff", "handoff_top.cmpl")
    set_project_selection(paths.project_templates, str(top / "pkg"), "handoff", PROJECT_DEFAULT)
    set_project_selection(paths.project_templates, str(sub / "deeper"), "call", "call_descendant.cmpl")
    selection = resolve_project_selection(paths.project_templates, str(sub), GLOBAL)
    assert selection.names == {"call": "call_top.cmpl", "handoff": "handoff_default.cmpl"}
    elsewhere = resolve_project_selection(paths.project_templates, str(tmp_path / "other"), GLOBAL)
    assert elsewhere.names == GLOBAL


def test_autodiscover_on_both_roles_removes_the_exact_assignment(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    cwd = str(tmp_path / "p")
    assert set_project_selection(paths.project_templates, cwd, "call", "call_a.cmpl")
    assert not set_project_selection(paths.project_templates, cwd, "handoff", None)
    assert set_project_selection(paths.project_templates, cwd, "call", None)
    assert json.loads(Path(paths.project_templates).read_text()) == {"projects": {}}


def test_an_unreadable_project_file_is_one_warning_and_role_defaults(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    Path(paths.project_templates).write_text("{broken", encoding="utf-8")
    selection = resolve_project_selection(
        paths.project_templates, str(tmp_path), GLOBAL | {"call": "call_x.cmpl"}
    )
    assert selection.warning is not None
    assert selection.names == GLOBAL
    Path(paths.project_templates).write_text(json.dumps({"projects": {"relative": {}}}), encoding="utf-8")
    assert resolve_project_selection(paths.project_templates, str(tmp_path), GLOBAL).warning is not None
    assert os.path.exists(paths.project_templates)


def test_legacy_templates_are_never_removed_automatically_and_stay_selectable(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    templates = Path(paths.templates)
    for name in LEGACY_TEMPLATE_NAMES:
        (templates / name).write_text(f"legacy {name}\n", encoding="utf-8")
    install_default_templates(paths, 0.0)
    assert all((templates / n).read_text() == f"legacy {n}\n" for n in LEGACY_TEMPLATE_NAMES)
    assert {"call_fast.cmpl", "call_balanced.cmpl", "call_next.cmpl"} <= set(
        catalogue("call", [paths.templates])
    )
    assert resolve_template("call", "call_fast.cmpl", paths.templates, None).text == "legacy call_fast.cmpl\n"
