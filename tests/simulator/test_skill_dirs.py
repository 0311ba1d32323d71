"""Pi 1.6's skill folders and ``skills`` setting on the simulator (``simulator/skill_dirs.py``);
the differential twin is ``tests/realpi/test_differential_skill_dirs.py``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.skill_dirs import (
    SkillOrigin,
    SkillsNotModelledError,
    collect_skill_entries,
    default_skill_paths,
    skill_source,
)

from .helpers import agent_requests, base, run


def _skill(path: Path, front: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\nbody\n", encoding="utf-8")
    return path


def _rel(paths: list[str], root: Path) -> list[str]:
    return [os.path.relpath(p, root) for p in paths]


def test_a_pi_folder_takes_its_top_level_md_files_and_skill_md_below(tmp_path: Path) -> None:
    """``collectSkillEntries`` mode ``pi`` (package-manager.js:222-289): ``.md`` files at the top
    only, each subdirectory's ``SKILL.md`` (ending the search there), dot entries and
    ``node_modules`` skipped, names in byte order."""
    root = tmp_path / "skills"
    _skill(root / "top.md", "description: top")
    _skill(root / "b" / "SKILL.md", "description: b")
    _skill(root / "b" / "inner" / "SKILL.md", "description: not searched")
    _skill(root / "a" / "loose.md", "description: below the top")
    _skill(root / "a" / "deep" / "SKILL.md", "description: deep")
    _skill(root / ".hidden" / "SKILL.md", "description: hidden")
    _skill(root / "node_modules" / "x" / "SKILL.md", "description: dependency")
    assert _rel(collect_skill_entries(str(root), "pi"), root) == ["a/deep/SKILL.md", "b/SKILL.md", "top.md"]


def test_an_agents_folder_takes_md_files_below_its_top_only(tmp_path: Path) -> None:
    """Mode ``agents`` (package-manager.js:271-273): the folder's own ``.md`` files are no
    entries, those of its subdirectories are."""
    root = tmp_path / "skills"
    _skill(root / "top.md", "description: top")
    _skill(root / "group" / "nested.md", "description: nested")
    _skill(root / "group" / "sub" / "deeper.md", "description: deeper")
    assert _rel(collect_skill_entries(str(root), "agents"), root) == [
        "group/nested.md",
        "group/sub/deeper.md",
    ]


def test_a_folder_with_skill_md_at_its_top_is_one_skill(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _skill(root / "SKILL.md", "description: the folder itself")
    _skill(root / "other.md", "description: not collected")
    assert _rel(collect_skill_entries(str(root), "pi"), root) == ["SKILL.md"]


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    project, agent = tmp_path / "project", tmp_path / "agent"
    _skill(agent / "skills" / "u" / "SKILL.md", "description: user")
    _skill(project / ".pi" / "skills" / "p" / "SKILL.md", "description: project")
    _skill(project / ".agents" / "skills" / "g" / "a.md", "description: agents")
    _skill(project / "set" / "s" / "SKILL.md", "description: set")
    _skill(agent / "gset.md", "description: global set")
    return project, agent


def test_setting_entries_come_first_then_project_folders_then_the_agent_folder(tmp_path: Path) -> None:
    """``resourcePrecedenceRank`` (package-manager.js:77-85): project ``local`` (the project
    setting), project ``auto`` (``.pi/skills``, ``.agents/skills``), user ``local`` (the global
    setting), user ``auto`` (``<agentDir>/skills``); each with its ``sourceInfo`` metadata."""
    project, agent = _layout(tmp_path)
    found = default_skill_paths(
        str(project),
        str(agent),
        trusted=True,
        global_settings={"skills": ["gset.md"]},
        project_settings={"skills": ["../set"]},
    )
    assert [(os.path.relpath(p, tmp_path), o) for p, o in found] == [
        ("project/set/s/SKILL.md", SkillOrigin("local", "project", None)),
        ("project/.pi/skills/p/SKILL.md", SkillOrigin("auto", "project", str(project / ".pi"))),
        ("project/.agents/skills/g/a.md", SkillOrigin("auto", "project", str(project / ".agents"))),
        ("agent/gset.md", SkillOrigin("local", "user", None)),
        ("agent/skills/u/SKILL.md", SkillOrigin("auto", "user", str(agent))),
    ]


def test_an_untrusted_project_has_no_project_folders(tmp_path: Path) -> None:
    """package-manager.js:2199-2215: ``.pi/skills`` and the ``.agents/skills`` folders only when
    the project is trusted (its settings are not read then either, :mod:`.settings`)."""
    project, agent = _layout(tmp_path)
    found = default_skill_paths(
        str(project), str(agent), trusted=False, global_settings={}, project_settings={}
    )
    assert [os.path.relpath(p, tmp_path) for p, _ in found] == ["agent/skills/u/SKILL.md"]


def test_the_same_real_file_is_kept_once_at_its_best_rank(tmp_path: Path) -> None:
    """``toResolvedPaths`` (package-manager.js:2294-2306): sorted by rank, then one path per
    real file."""
    project, agent = _layout(tmp_path)
    found = default_skill_paths(
        str(project),
        str(agent),
        trusted=True,
        global_settings={},
        project_settings={"skills": [str(agent / "skills")]},
    )
    assert [(os.path.relpath(p, tmp_path), o.scope, o.source) for p, o in found] == [
        ("agent/skills/u/SKILL.md", "project", "local"),
        ("project/.pi/skills/p/SKILL.md", "project", "auto"),
        ("project/.agents/skills/g/a.md", "project", "auto"),
    ]


@pytest.mark.parametrize("entry", ["!x", "+x", "-x", "*.md", "a?", "~/skills", 3])
def test_setting_patterns_overrides_and_home_are_refused(tmp_path: Path, entry: Any) -> None:
    project, agent = _layout(tmp_path)
    with pytest.raises(SkillsNotModelledError):
        default_skill_paths(
            str(project), str(agent), trusted=True, global_settings={"skills": [entry]}, project_settings={}
        )


def test_source_info_is_the_naming_extensions_first_then_the_folders(tmp_path: Path) -> None:
    """``findSourceInfoForPath`` (resource-loader.js:734-760): an extension's named path that
    holds the file wins over the folder's metadata; ``baseDir`` is left out when undefined."""
    origin = SkillOrigin("auto", "user", "/a")
    origins = {"/a/skills/x/SKILL.md": origin, "/p/set.md": SkillOrigin("local", "project", None)}
    assert skill_source("/a/skills/x/SKILL.md", {"/a/skills": "ext.py"}, origins) == "ext.py"
    assert skill_source("/a/skills/x/SKILL.md", {"/b": "ext.py"}, origins) == {
        "path": "/a/skills/x/SKILL.md",
        "source": "auto",
        "scope": "user",
        "origin": "top-level",
        "baseDir": "/a",
    }
    assert "baseDir" not in skill_source("/p/set.md", {}, origins)  # type: ignore[operator]


def test_a_folder_skill_wins_its_name_over_an_extension_skill_and_a_reload_reads_the_folders_anew(
    tmp_path: Path,
) -> None:
    """resource-loader.js:353 (the extensions' paths merged after the folders'), skills.js:
    325-350 (the first of a name wins), and ``reload`` (resource-loader.js:395) collecting
    again: a skill written before the reload is listed after it, and expands."""
    named = _skill(tmp_path / "named" / "mine" / "SKILL.md", "description: the extension mine").parent.parent
    _skill(tmp_path / "named" / "extra" / "SKILL.md", "description: the extension extra")

    def extension(pi: ExtensionAPI) -> None:
        def discover(event: Any, ctx: Any) -> Any:
            return {"skillPaths": [str(named)]}

        pi.on("resources_discover", discover)

    late = {"path": "$AGENT/skills/late/SKILL.md", "text": "---\ndescription: late\n---\nlate body\n"}
    scenario = base(
        model={"agent": [{"text": "first"}, {"text": "second"}]},
        files={"$AGENT/skills/mine/SKILL.md": {"text": "---\ndescription: the folder mine\n---\nbody\n"}},
        operations=[{"prompt": "one"}, {"edit_file": late}, "reload", {"prompt": "/skill:late go"}],
    )
    first, second = agent_requests(run(tmp_path, scenario, extension))
    assert "the folder mine" in first.system_prompt
    assert "the extension mine" not in first.system_prompt
    assert first.system_prompt.index("the folder mine") < first.system_prompt.index("the extension extra")
    assert "<description>late</description>" not in first.system_prompt
    assert "<description>late</description>" in second.system_prompt
    assert "late body" in str(second.messages[-1])


def test_a_skills_setting_pattern_refuses_the_run(tmp_path: Path) -> None:
    """A run is refused rather than run without the skills Pi would have."""
    scenario = base(
        model={"agent": [{"text": "first"}]},
        settings={"global": {"skills": ["!skills/x"]}},
        operations=[{"prompt": "one"}],
    )
    with pytest.raises(SkillsNotModelledError, match="not modelled"):
        run(tmp_path, scenario)


@pytest.mark.parametrize("name", [".gitignore", ".ignore", ".fdignore"])
@pytest.mark.parametrize("where", ["skills", "skills/p"])
def test_an_ignore_file_in_a_skill_folder_pi_reads_refuses_the_run(
    tmp_path: Path, name: str, where: str
) -> None:
    """Pi reads the ignore files of every skill folder it walks, before ``SKILL.md``
    (``collectSkillEntries``, package-manager.js:222-228; ``addIgnoreRules``, :127-146), and
    their rules hide skills; the simulator does not model them, so the run is refused rather
    than given skills Pi would hide. Without the folder, nothing is refused."""
    project, agent = _layout(tmp_path)
    (project / ".pi" / where / name).write_text("SKILL.md\n", encoding="utf-8")
    with pytest.raises(SkillsNotModelledError, match=f"ignore file \\({name}\\)"):
        default_skill_paths(str(project), str(agent), trusted=True, global_settings={}, project_settings={})
    # An untrusted project's folders are not read (package-manager.js:2225): no refusal.
    assert default_skill_paths(
        str(project), str(agent), trusted=False, global_settings={}, project_settings={}
    )


def test_a_scenario_with_an_ignore_file_in_the_agents_skill_folder_is_refused(tmp_path: Path) -> None:
    scenario = base(
        model={"agent": [{"text": "first"}]},
        files={
            "$AGENT/skills/mine/SKILL.md": {"text": "---\ndescription: the folder mine\n---\nbody\n"},
            "$AGENT/skills/.gitignore": {"text": "mine/\n"},
        },
        operations=[{"prompt": "one"}],
    )
    with pytest.raises(SkillsNotModelledError, match="not model"):
        run(tmp_path, scenario)


def test_an_ignore_file_in_a_skill_directory_an_extension_names_refuses_the_run(tmp_path: Path) -> None:
    """The same for a directory a ``resources_discover`` handler names (``loadSkillsFromDirInternal``,
    skills.js:124-133, ``addIgnoreRules`` :38-55), in a subdirectory too."""
    from pi_continuity_harness.simulator.skills import load_skills  # noqa: PLC0415

    _skill(tmp_path / "named" / "a" / "SKILL.md", "description: a")
    _skill(tmp_path / "named" / "b" / "c" / "SKILL.md", "description: c")
    assert [s.name for s in load_skills([str(tmp_path / "named")], str(tmp_path))] == ["a", "c"]
    (tmp_path / "named" / "b" / ".ignore").write_text("c/\n", encoding="utf-8")
    with pytest.raises(SkillsNotModelledError, match=r"'b' has an ignore file \(\.ignore\)"):
        load_skills([str(tmp_path / "named")], str(tmp_path))
