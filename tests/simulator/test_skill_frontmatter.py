"""A skill's frontmatter as Pi 1.6's ``yaml`` package reads it (YAML 1.2 core schema, unique keys:
``dist/utils/frontmatter.js``, ``dist/core/skills.js:212-260``), on the simulator alone;
``tests/realpi/test_differential_skill_frontmatter.py`` compares it with real Pi."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.simulator.skills import load_skills


def _load(tmp_path: Path, front: str) -> list[tuple[str, str, bool]]:
    skill = tmp_path / "skills" / "probe" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\n{front}\n---\n\nBody\n", encoding="utf-8")
    found = load_skills([str(tmp_path / "skills")], str(tmp_path))
    return [(s.name, s.description, s.disable_model_invocation) for s in found]


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("description: yes", [("probe", "yes", False)]),
        ("description: on\nname: off", [("off", "on", False)]),
        ("description: 2024-01-01", [("probe", "2024-01-01", False)]),
        ("description: 1:30", [("probe", "1:30", False)]),
        ("description: d\ndisable-model-invocation: yes", [("probe", "d", False)]),
        ("description: d\ndisable-model-invocation: true", [("probe", "d", True)]),
        ("description: 0o17", []),
        ("description: first\ndescription: second", []),
        ("name: a\nname: b\ndescription: d", []),
    ],
)
def test_skill_frontmatter_is_read_as_yaml_1_2_core_refusing_a_repeated_key(
    tmp_path: Path, front: str, expected: list[tuple[str, str, bool]]
) -> None:
    assert _load(tmp_path, front) == expected
