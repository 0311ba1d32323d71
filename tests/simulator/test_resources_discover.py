"""``resources_discover`` on the simulator (``simulator/resources.py``, ``simulator/skills.py``):
after each runtime's ``session_start`` the handlers may name skill paths, and the skills found
there are listed in the system prompt as real Pi 1.6 lists them; the differential twin is
``tests/realpi/test_differential_resources_discover.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.skills import (
    expand_skill_command,
    format_skills_for_prompt,
    load_skills,
    merge_paths,
)
from pi_continuity_harness.simulator.system_prompt import current_sections, diff_sections

from .helpers import agent_requests, base, entries, event_records, run, session_records


def _skill(path: Path, front: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\nbody\n", encoding="utf-8")
    return path


def test_resources_discover_follows_each_session_start_with_startup_or_reload(tmp_path: Path) -> None:
    """agent-session.js:2786-2788 (``bindExtensions``: startup, new session) and :3136-3139
    (reload): the event comes after ``session_start``, with the project directory; a handler
    that raises is an ``extension_error``."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def record(event: Any, ctx: Any) -> None:
            seen.append(
                (event.type, getattr(event, "reason", None), getattr(event, "cwd", ctx.cwd) == ctx.cwd)
            )

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError("discover failed")

        pi.on("session_start", record)
        pi.on("resources_discover", record)
        pi.on("resources_discover", fail)

    result = run(tmp_path, base(operations=["reload", "new_session"]), extension)
    assert seen == [
        ("session_start", "startup", True),
        ("resources_discover", "startup", True),
        ("session_start", "reload", True),
        ("resources_discover", "reload", True),
        ("session_start", "new", True),
        ("resources_discover", "startup", True),
    ]
    assert [r["event"] for r in session_records(result, "extension_error")] == ["resources_discover"] * 3


def test_skills_a_handler_names_are_in_the_first_system_message_and_a_reload_patches_them(
    tmp_path: Path,
) -> None:
    """The skills section sits before ``cwd`` (system-prompt.js:99-119); after a reload that
    names none the next run's system message deletes it (``null``, system-prompt.js:139-150)."""
    skill = _skill(tmp_path / "skills" / "probe" / "SKILL.md", "description: a probe")

    def extension(pi: ExtensionAPI) -> None:
        def discover(event: Any, ctx: Any) -> Any:
            return {"skillPaths": [str(skill.parent.parent)]} if event.reason == "startup" else None

        pi.on("resources_discover", discover)

    scenario = base(
        model={"agent": [{"text": "first"}, {"text": "second"}]},
        operations=[{"prompt": "one"}, "reload", {"prompt": "two"}],
    )
    result = run(tmp_path, scenario, extension)
    first, second = agent_requests(result)
    assert (
        f"<name>probe</name>\n    <description>a probe</description>\n    <location>{skill}</location>"
        in (first.system_prompt)
    )
    assert first.system_prompt.index("<skills>") < first.system_prompt.index("<cwd>")
    assert "<skills>" not in second.system_prompt
    system = [
        e["message"] for e in entries(result) if e["type"] == "message" and e["message"]["role"] == "system"
    ]
    assert list(system[0]["sections"]) == ["preamble", "tools", "rules", "docs", "skills", "cwd"]
    assert system[1]["sections"] == {"skills": None}


def test_without_a_resources_discover_handler_nothing_is_dispatched_and_the_prompt_is_unchanged(
    tmp_path: Path,
) -> None:
    result = run(tmp_path, base(model={"agent": [{"text": "first"}]}, operations=[{"prompt": "one"}]))
    assert event_records(result, "resources_discover") == []
    assert "<skills>" not in agent_requests(result)[0].system_prompt


def test_skill_discovery_follows_pis_directory_rules(tmp_path: Path) -> None:
    """skills.js:124-211 and :316-403: a directory's ``SKILL.md`` ends the search there; root
    ``.md`` files with a description are skills; dot and ``node_modules`` entries are skipped;
    the first of a name wins; a missing path or a non-markdown file loads nothing."""
    root = tmp_path / "skills"
    _skill(root / "a" / "SKILL.md", "name: alpha\ndescription: first alpha")
    _skill(root / "a" / "inner" / "SKILL.md", "description: not searched")
    _skill(root / "b" / "deep" / "SKILL.md", "name: alpha\ndescription: a collision")
    _skill(root / "c" / "SKILL.md", "description: hidden\ndisable-model-invocation: true")
    _skill(root / "loose.md", "name: loose\ndescription: root file")
    _skill(root / "nodesc.md", "name: nodesc")
    _skill(root / ".dot" / "SKILL.md", "description: skipped")
    _skill(root / "node_modules" / "x" / "SKILL.md", "description: skipped")
    (tmp_path / "plain.txt").write_text("x", encoding="utf-8")
    paths = merge_paths(["skills", str(root), "missing", "plain.txt"], [], str(tmp_path))
    assert paths == [str(root), str(tmp_path / "missing"), str(tmp_path / "plain.txt")]
    skills = load_skills(paths, str(tmp_path))
    assert [(s.name, s.description) for s in skills] == [
        ("alpha", "first alpha"),
        ("c", "hidden"),
        ("loose", "root file"),
    ]
    text = format_skills_for_prompt(skills)
    assert "<name>alpha</name>" in text and "<name>c</name>" not in text
    assert text.startswith("The following skills provide specialized instructions")
    assert format_skills_for_prompt([s for s in skills if s.name == "c"]) == ""


def test_a_system_prompt_patch_names_changed_sections_then_deleted_ones() -> None:
    """``diffSystemPromptSections`` (system-prompt.js:139-150) against the transcript's sections."""
    messages = [
        {"role": "system", "sections": {"a": "A", "b": "B"}},
        {"role": "user", "content": "u"},
        {"role": "system", "sections": {"b": None, "c": "C"}},
    ]
    sections = current_sections(messages)
    assert sections == {"a": "A", "c": "C"}
    assert current_sections([{"role": "user", "content": "u"}]) is None
    assert diff_sections(sections, {"a": "A", "c": "C"}) is None
    assert diff_sections(sections, {"a": "A2", "d": "D"}) == {"a": "A2", "d": "D", "c": None}


def test_a_skill_command_expands_to_the_skills_body_and_an_unreadable_file_keeps_the_text(
    tmp_path: Path,
) -> None:
    """``_expandSkillCommand`` (agent-session.js:1820-1844): the body without frontmatter,
    trimmed, in a ``<skill>`` block, the trimmed arguments after a blank line; a name no skill
    has, or a file that cannot be read (then an error to report), leaves the text."""
    path = _skill(tmp_path / "s" / "SKILL.md", "description: d")
    skills = load_skills([str(path)], str(tmp_path))
    block = f'<skill name="s" location="{path}">\nReferences are relative to {path.parent}.\n\nbody\n</skill>'
    assert expand_skill_command("/skill:s", skills) == (block, skills[0], None)
    assert expand_skill_command("/skill:s   a b  ", skills)[0] == f"{block}\n\na b"
    assert expand_skill_command("/skill:other x", skills) == ("/skill:other x", None, None)
    assert expand_skill_command("please /skill:s", skills)[0] == "please /skill:s"
    path.unlink()
    text, skill, error = expand_skill_command("/skill:s", skills)
    assert (text, skill) == ("/skill:s", skills[0]) and error
