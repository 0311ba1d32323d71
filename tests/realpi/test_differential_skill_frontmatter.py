"""Differential: how Pi 1.6 reads a skill's YAML frontmatter, real Pi against the simulator.

Pi parses the frontmatter with the ``yaml`` package (2.9.0; ``dist/utils/frontmatter.js``
``parse``), whose default is YAML 1.2's core schema and unique keys: ``yes``, ``on``, ``off``,
a date or ``1:30`` are strings there (YAML 1.1, PyYAML's ``safe_load``, reads booleans, a date
and the integer 90), ``0o17`` is the integer 15 (a string in YAML 1.1), and a mapping that
names a key twice is an error, so ``parseFrontmatter`` throws and the file is no skill
(``loadSkillFromFile``, ``dist/core/skills.js:212-260``: ``description`` must be a non-empty
string, ``name`` a string or the directory's name, ``disable-model-invocation`` exactly
``true``). Before, the simulator read them as YAML 1.1 and kept a repeated key's last value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
SKILLS = {skills!r}


def extension(pi):
    def discover(event, ctx):
        return {{"skillPaths": [SKILLS]}}

    pi.on("resources_discover", discover)
"""

#: Each skill's directory and frontmatter.
SKILLS = {
    "plain": "name: plain\ndescription: an ordinary skill",
    "dup": "name: dup\ndescription: first\ndescription: second",
    "dup-name": "name: one\nname: two\ndescription: names itself twice",
    "yes-desc": "name: yes-desc\ndescription: yes",
    "flagged": "name: flagged\ndescription: hidden in YAML 1.1 only\ndisable-model-invocation: yes",
    "hidden": "name: hidden\ndescription: hidden in both\ndisable-model-invocation: true",
    "off-dir": "name: off\ndescription: named off",
    "date-desc": "name: date-desc\ndescription: 2024-01-01",
    "clock": "name: clock\ndescription: 1:30",
    "octal": "name: octal\ndescription: 0o17",
}


def _listed(prompt: str) -> list[tuple[str, str]]:
    """The (name, description) of each skill the system prompt lists."""
    section = prompt[prompt.index("<available_skills>") : prompt.index("</available_skills>")]
    names = [part.split("</name>")[0] for part in section.split("<name>")[1:]]
    descriptions = [part.split("</description>")[0] for part in section.split("<description>")[1:]]
    return list(zip(names, descriptions, strict=True))


def test_skill_frontmatter_is_yaml_1_2_core_with_unique_keys(
    targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = tmp_path / "skills"
    for directory, front in SKILLS.items():
        (skills / directory).mkdir(parents=True)
        (skills / directory / "SKILL.md").write_text(f"---\n{front}\n---\n\n# Body\n", encoding="utf-8")
    directory = tmp_path / "extension"
    directory.mkdir()
    (directory / "frontmatter_probe.py").write_text(_EXTENSION.format(skills=str(skills)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(directory))  # the bridge inherits it as PYTHONPATH
    sc = scenario({"agent": [{"text": "reply"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "frontmatter_probe:extension")

    [request] = real.requests("agent")
    # Byte order of the directories; dup and dup-name are no skills (a repeated key), hidden is
    # kept out of the prompt, clock and yes-desc and date-desc have string descriptions, octal
    # an integer one (no skill), and "off" is a name.
    assert _listed(request.request.system_prompt) == [
        ("clock", "1:30"),
        ("date-desc", "2024-01-01"),
        ("flagged", "hidden in YAML 1.1 only"),
        ("off", "named off"),
        ("plain", "an ordinary skill"),
        ("yes-desc", "yes"),
    ]
    [sim_request] = sim.requests("agent")
    assert _listed(sim_request.request.system_prompt) == _listed(request.request.system_prompt)
    assert_equivalent(real, sim)
