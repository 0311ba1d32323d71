"""The system prompt's ``tools`` and ``rules`` sections with extension tools
(``buildSystemPromptSections``, Pi 1.6 ``dist/core/system-prompt.js:31-122``;
``_normalizePromptSnippet``, agent-session.js:1336-1344). The differential test on real Pi is
``tests/realpi/test_differential_prompt_sections.py``."""

from __future__ import annotations

from pi_continuity_harness.simulator.system_prompt import _data, prompt_sections

_BASH_RULE = "- Use bash for file operations like ls, rg, find\n"


def _sections(*tools: tuple[str, str | None]) -> dict[str, str]:
    return prompt_sections("/p", "/pkg", "", tools)


def test_without_extension_tools_the_sections_are_the_dumped_ones() -> None:
    dumped = _data()["sections"]
    sections = _sections()
    assert sections["tools"] == dumped["tools"] and sections["rules"] == dumped["rules"]


def test_a_snippet_is_listed_after_the_builtins_on_one_line() -> None:
    tools = _sections(("probe", "  two\r\nlines \t here "))["tools"]
    assert "- write: Create or overwrite files\n- probe: two lines here\n\nAdditional" in tools


def test_a_tool_named_like_a_builtin_replaces_its_line_in_place() -> None:
    tools = _sections(("read", "Mine"), ("bash", None))["tools"]
    assert tools.startswith("<tools>\n- read: Mine\n- edit: ")
    assert "- bash:" not in tools


def test_a_grep_find_or_ls_tool_drops_the_bash_file_operations_rule() -> None:
    assert _BASH_RULE in _sections(("probe", "x"))["rules"]
    for name in ("grep", "find", "ls"):
        assert _BASH_RULE not in _sections((name, None))["rules"]
