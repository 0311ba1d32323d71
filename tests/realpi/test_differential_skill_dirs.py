"""Differential: the skills Pi 1.6 loads without an extension naming them, real Pi against the simulator.

Pi's package manager collects skill files from the ``skills`` setting (project entries against
``<project>/.pi``, then global ones against the agent dir, ``sourceInfo`` ``local``) and from its
skill folders (``addAutoDiscoveredResources``, ``dist/core/package-manager.js:2161-2242``,
``sourceInfo`` ``auto``): ``<project>/.pi/skills`` and ``<project>/.agents/skills`` when the
project is trusted, ``<agentDir>/skills``; project before user (``resourcePrecedenceRank``,
:77-85). A ``pi`` folder takes ``.md`` files at its top level only, an ``.agents`` folder below
it only (``collectSkillEntries``, :222-289). The resource loader loads them before the
extensions' ``resources_discover`` paths (resource-loader.js:353, 441-445), so a name both have
is the folder's (``loadSkills``, skills.js:325-350). They are listed in the system prompt,
expand as ``/skill:<name>`` and are ``get_commands`` entries with their own ``sourceInfo``
(``findSourceInfoForPath``, resource-loader.js:734-760); each reload collects them anew.

Before, the simulator loaded only the skills an extension named: its system prompt listed the
extension's ``user-one`` and ``extra`` alone, ``/skill:group`` stayed text and ``get_commands``
had two skills.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import (
    _OPS,
    PASSIVE,
    Targets,
    assert_equivalent,
    play,
    scenario,
)

from pi_continuity_harness.scenario.operations import normalise_operation_input
from pi_continuity_harness.simulator.skill_dirs import SkillsNotModelledError

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json
import os

NAMED = {named!r}


def extension(pi):
    def discover(event, ctx):
        return {{"skillPaths": [NAMED]}}

    async def listing(args, ctx):
        # The workspace's root as <root>: real Pi's and the simulator's differ.
        root = os.path.dirname(ctx.cwd)
        found = []
        for c in pi.get_commands():
            if c.source != "skill":
                continue
            info = {{k: v.replace(root, "<root>") for k, v in c.source_info.items()}}
            if info["source"].startswith("extension:"):
                # The extension's file: the bridge's wrapper on real Pi, a name on the simulator.
                info["source"], info["baseDir"] = "extension:<probe>", "<probe dir>"
            found.append([c.name, c.description, info])
        ctx.ui.notify("skills" + args.strip() + ": " + json.dumps(found), "info")

    pi.on("resources_discover", discover)
    pi.register_command("list", listing, description="list the skills")
"""


def _front(front: str) -> dict[str, str]:
    return {"text": f"---\n{front}\n---\n\n# Body of {front.splitlines()[0]}\n"}


#: The scenario's files: the agent dir's and the project's skill folders, and a settings path.
FILES = {
    "$AGENT/skills/user-one/SKILL.md": _front("description: user one"),
    "$AGENT/skills/top.md": _front("name: user-top\ndescription: a top-level file of the agent folder"),
    "$AGENT/skills/shared/SKILL.md": _front("description: the user shared"),
    "$AGENT/skills/deep/inner.md": _front(
        "name: inner\ndescription: below the top of a pi folder, not collected"
    ),
    ".pi/skills/shared/SKILL.md": _front("description: the project shared"),
    ".pi/skills/proj/SKILL.md": _front("description: a project skill\ndisable-model-invocation: true"),
    ".agents/skills/top.md": _front(
        "name: agents-top\ndescription: the top of an agents folder, not collected"
    ),
    ".agents/skills/group/nested.md": _front("description: nested in an agents folder"),
    ".agents/skills/tool/SKILL.md": _front("description: an agents skill"),
    "from-settings/set/SKILL.md": _front("description: named by the skills setting"),
    "$AGENT/global.md": _front("name: global\ndescription: named by the global skills setting"),
}
LATE = "$AGENT/skills/late/SKILL.md"


def _skill(path: Path, front: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n# Body\n", encoding="utf-8")


def _listed(prompt: str) -> list[tuple[str, str, str]]:
    """(name, description, location under ``agent/`` or ``project/``) of each listed skill."""
    section = prompt[prompt.index("<available_skills>") : prompt.index("</available_skills>")]
    found = re.findall(
        r"<name>(.*?)</name>\s*<description>(.*?)</description>\s*<location>(.*?)</location>", section
    )
    return [(n, d, re.sub(r"^.*?/(agent|project|extension-skills)/", r"\1/", loc)) for n, d, loc in found]


def _entry(
    name: str, description: str, path: str, source: str, scope: str, base_dir: str | None = None
) -> list[Any]:
    """A skill's ``get_commands`` entry as the probe reports it."""
    info = {"path": path, "source": source, "scope": scope, "origin": "top-level"}
    if base_dir is not None:
        info["baseDir"] = base_dir
    return [f"skill:{name}", description, info]


def _play(
    targets: Targets, tmp_path: Path, python_extension: Callable[[str, str], str], module: str, **fields: Any
) -> tuple[Any, Any, Path]:
    named = tmp_path / "extension-skills"
    _skill(named / "user-one" / "SKILL.md", "description: the extension user-one")
    _skill(named / "extra" / "SKILL.md", "description: the extension extra")
    # A module of its own per test: the simulator's process keeps the one it imported.
    spec = python_extension(f"skill_dirs_probe_{module}", _EXTENSION.format(named=str(named)))
    settings = {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
    sc = scenario(
        {"agent": [{"text": "first"}, {"text": "second"}]},
        files=FILES,
        settings={
            "project": {**settings, "skills": ["../from-settings"]},
            "global": {"skills": ["global.md"]},
        },
        **fields,
    )
    ops: list[Any] = [
        {"command": "/list 1"},
        {"prompt": "/skill:group go"},
        {"edit_file": {"path": LATE, "text": "---\ndescription: written before the reload\n---\n"}},
        {"command": "/list 2"},
        "reload",
        {"command": "/list 3"},
        {"prompt": "/skill:late now"},
    ]
    real, sim = play(targets, sc, ops, spec)
    return real, sim, named


def test_skill_folders_and_setting_are_loaded_before_extension_paths(
    targets: Targets, tmp_path: Path, python_extension: Callable[[str, str], str]
) -> None:
    real, sim, _ = _play(targets, tmp_path, python_extension, "trusted")
    first, second = real.requests("agent")
    expected_prompt = [
        # The skills setting's (rank 0), the project folders' (1), the agent folder's (3), then
        # the extension's; "shared" is the project's, "user-one" the agent folder's.
        ("set", "named by the skills setting", "project/from-settings/set/SKILL.md"),
        # "proj" may not be invoked by the model: not listed.
        ("shared", "the project shared", "project/.pi/skills/shared/SKILL.md"),
        ("group", "nested in an agents folder", "project/.agents/skills/group/nested.md"),
        ("tool", "an agents skill", "project/.agents/skills/tool/SKILL.md"),
        # The global setting's (rank 2), resolved against the agent dir.
        ("global", "named by the global skills setting", "agent/global.md"),
        # Byte order of the names: top.md before user-one.
        ("user-top", "a top-level file of the agent folder", "agent/skills/top.md"),
        ("user-one", "user one", "agent/skills/user-one/SKILL.md"),
        ("extra", "the extension extra", "extension-skills/extra/SKILL.md"),
    ]
    assert _listed(first.request.system_prompt) == expected_prompt
    # /skill:group expanded to the nested file's body.
    assert '<skill name="group" location="' in str(first.request.messages[-1])
    # After the reload the late skill is there and expands.
    assert ("late", "written before the reload", "agent/skills/late/SKILL.md") in _listed(
        second.request.system_prompt
    )
    assert '<skill name="late" location="' in str(second.request.messages[-1])
    project, agent = "<root>/project", "<root>/agent"
    pi, agents = f"{project}/.pi", f"{project}/.agents"
    listed = [
        _entry(
            "set", "named by the skills setting", f"{project}/from-settings/set/SKILL.md", "local", "project"
        ),
        _entry("proj", "a project skill", f"{pi}/skills/proj/SKILL.md", "auto", "project", pi),
        _entry("shared", "the project shared", f"{pi}/skills/shared/SKILL.md", "auto", "project", pi),
        _entry(
            "group",
            "nested in an agents folder",
            f"{agents}/skills/group/nested.md",
            "auto",
            "project",
            agents,
        ),
        _entry("tool", "an agents skill", f"{agents}/skills/tool/SKILL.md", "auto", "project", agents),
        _entry("global", "named by the global skills setting", f"{agent}/global.md", "local", "user"),
        _entry(
            "user-top",
            "a top-level file of the agent folder",
            f"{agent}/skills/top.md",
            "auto",
            "user",
            agent,
        ),
        _entry("user-one", "user one", f"{agent}/skills/user-one/SKILL.md", "auto", "user", agent),
    ]
    extra = ["skill:extra", "the extension extra"]
    real_notes = notes(real)
    assert [entry[:2] for entry in real_notes["skills1"]] == [entry[:2] for entry in listed] + [extra]
    assert real_notes["skills1"][:-1] == listed
    assert real_notes["skills2"] == real_notes["skills1"]  # not hot-reloaded
    late = _entry("late", "written before the reload", f"{agent}/skills/late/SKILL.md", "auto", "user", agent)
    # Read anew by the reload: "late" sorts first in the agent folder.
    assert real_notes["skills3"] == [*listed[:6], late, *real_notes["skills1"][6:]]

    assert _listed(sim.requests("agent")[0].request.system_prompt) == expected_prompt
    assert notes(sim) == real_notes
    assert_equivalent(real, sim)


def test_an_untrusted_project_has_no_project_skills(
    targets: Targets, tmp_path: Path, python_extension: Callable[[str, str], str]
) -> None:
    real, sim, _ = _play(targets, tmp_path, python_extension, "untrusted", trust="never")
    first = real.requests("agent")[0]
    # Neither the project folders nor the project's settings count; the global setting's and
    # the agent folder's do.
    assert [name for name, _, _ in _listed(first.request.system_prompt)] == [
        "global",
        "shared",
        "user-top",
        "user-one",
        "extra",
    ]
    assert _listed(sim.requests("agent")[0].request.system_prompt) == _listed(first.request.system_prompt)
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_an_ignore_file_hides_a_skill_on_real_pi_and_the_simulator_refuses_the_run(targets: Targets) -> None:
    """Pi reads the ignore files of a skill folder before its skills (``collectSkillEntries``,
    package-manager.js:222-228; ``addIgnoreRules``, :127-146): a ``.gitignore`` naming a skill's
    folder hides the skill. The simulator does not model ignore rules, so it refuses such a run
    (``SkillsNotModelledError``) rather than list a skill Pi hides; without the file both targets
    list both skills."""
    files = {
        "$AGENT/skills/kept/SKILL.md": _front("description: a kept skill"),
        "$AGENT/skills/hidden/SKILL.md": _front("description: a skill the ignore file hides"),
    }
    ignored = {**files, "$AGENT/skills/.gitignore": {"text": "hidden/\n"}}

    def listed(kind: str, layout: dict[str, Any]) -> list[str]:
        target = targets(kind, PASSIVE)
        target.start(scenario({"agent": [{"text": "done"}]}, files=layout))
        target.perform(_OPS.validate_python(normalise_operation_input({"prompt": "go"})))
        prompt = target.observe().requests("agent")[0].request.system_prompt
        return [name for name, _, _ in _listed(prompt)]

    assert listed("pi", files) == listed("sim", files) == ["hidden", "kept"]
    assert listed("pi", ignored) == ["kept"]
    with pytest.raises(SkillsNotModelledError, match=r"ignore file \(\.gitignore\)"):
        listed("sim", ignored)
