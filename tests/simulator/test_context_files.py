"""Pi 1.6's context files for the ``project_context`` section (``loadProjectContextFiles``,
``dist/core/resource-loader.js:129-210``; ``renderProjectContext``, system-prompt.js:25-30).
The differential test on real Pi is in ``tests/realpi/test_differential_prompt_sections.py``."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.simulator.context_files import (
    load_context_files,
    prompt_file,
    render_project_context,
)
from pi_continuity_harness.simulator.system_prompt import prompt_sections


def _layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "machine"
    agent, project = root / "agent", root / "project"
    agent.mkdir(parents=True)
    project.mkdir()
    return root, agent, project


def test_agent_dir_first_then_ancestors_outermost_first_up_to_the_root(tmp_path: Path) -> None:
    root, agent, project = _layout(tmp_path)
    (agent / "AGENTS.md").write_text("global", encoding="utf-8")
    (root / "CLAUDE.md").write_text("root", encoding="utf-8")
    (project / "AGENTS.md").write_text("\ufeffproject", encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("above the root: not read", encoding="utf-8")
    files = load_context_files(str(project), str(agent), str(root))
    assert files == [
        (str(agent / "AGENTS.md"), "global"),
        (str(root / "CLAUDE.md"), "root"),
        (str(project / "AGENTS.md"), "project"),
    ]


def test_the_first_candidate_name_wins_and_a_directory_is_skipped(tmp_path: Path) -> None:
    root, agent, project = _layout(tmp_path)
    (project / "AGENTS.override.md").mkdir()
    (project / "AGENTS.md").write_text("a", encoding="utf-8")
    (project / "CLAUDE.md").write_text("c", encoding="utf-8")
    assert load_context_files(str(project), str(agent), str(root)) == [(str(project / "AGENTS.md"), "a")]


def test_rendering_lists_each_file_in_project_instructions() -> None:
    assert render_project_context([]) == ""
    assert render_project_context([("/a/AGENTS.md", "x\n"), ("/b/CLAUDE.md", "y")]) == (
        "Project-specific instructions and guidelines:\n\n"
        '<project_instructions path="/a/AGENTS.md">\nx\n\n</project_instructions>\n\n'
        '<project_instructions path="/b/CLAUDE.md">\ny\n</project_instructions>'
    )


def test_prompt_files_prefer_the_trusted_projects_then_the_agent_dirs(tmp_path: Path) -> None:
    _, agent, project = _layout(tmp_path)
    assert prompt_file(str(project), str(agent), "SYSTEM.md", trusted=True) == ""
    (agent / "SYSTEM.md").write_text("\ufeffglobal", encoding="utf-8")
    (project / ".pi").mkdir()
    (project / ".pi" / "SYSTEM.md").write_text("project", encoding="utf-8")
    assert prompt_file(str(project), str(agent), "SYSTEM.md", trusted=True) == "project"
    assert prompt_file(str(project), str(agent), "SYSTEM.md", trusted=False) == "global"


def test_a_custom_prompt_replaces_the_preamble_and_drops_tools_rules_docs() -> None:
    sections = prompt_sections(
        "/p", "/pkg", custom_prompt="Mine $CWD", addendum="More", project_context="Ctx"
    )
    assert list(sections) == ["preamble", "addendum", "project_context", "cwd"]
    assert sections["preamble"] == "Mine $CWD"
    assert sections["addendum"] == "<addendum>\nMore\n</addendum>"
    assert sections["project_context"] == "<project_context>\nCtx\n</project_context>"


def test_a_candidate_named_by_a_link_is_read_and_a_differently_cased_name_is_not(tmp_path: Path) -> None:
    """The directory is listed once (issue 16); a candidate is still looked at as before:
    ``isfile`` follows a link, and on a filesystem that tells case apart ``agents.md`` is no
    candidate."""
    root, agent, project = _layout(tmp_path)
    (root / "notes.md").write_text("linked", encoding="utf-8")
    (project / "CLAUDE.md").symlink_to(root / "notes.md")
    (agent / "agents.md").write_text("lower case", encoding="utf-8")
    case_sensitive = not (agent / "AGENTS.md").exists()
    files = load_context_files(str(project), str(agent), str(root))
    expected = [(str(project / "CLAUDE.md"), "linked")]
    if not case_sensitive:
        expected.insert(0, (str(agent / "AGENTS.md"), "lower case"))
    assert files == expected
