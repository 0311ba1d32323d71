"""Prompt templates on the simulator (``simulator/prompt_templates.py``), one test per rule of
Pi 1.6 (``dist/core/prompt-templates.js``; ``collectAutoPromptEntries`` and
``addAutoDiscoveredResources``, package-manager.js:324-358, 2160-2243; ``dedupePrompts``,
resource-loader.js:912-935; ``AgentSession.prompt``, agent-session.js:1704-1786). The
differential twin is ``tests/realpi/test_differential_prompt_templates.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.simulator.commands import command_infos
from pi_continuity_harness.simulator.prompt_templates import (
    PromptTemplate,
    PromptTemplates,
    PromptTemplatesNotModelledError,
    expand_prompt_template,
    parse_command_args,
    substitute_args,
)

from .helpers import agent_requests, base, run


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name, "", content, f"/x/{name}.md")


def _user_texts(result: Any) -> list[str]:
    texts = []
    for request in agent_requests(result):
        content = request.messages[-1]["content"]
        texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


# -- argument parsing (parseCommandArgs, prompt-templates.js:11-63) ------------------------------


def test_arguments_split_on_whitespace() -> None:
    assert parse_command_args("  a\tb \n c  ") == ["a", "b", "c"]


def test_a_quote_opens_an_argument_only_at_its_start() -> None:
    assert parse_command_args("\"two words\" it's 'x y'") == ["two words", "it's", "x y"]


def test_a_backslash_keeps_the_open_quote_as_text_and_an_empty_quote_is_an_argument() -> None:
    assert parse_command_args('"say \\"hi\\"" "" b') == ['say "hi"', "", "b"]


def test_an_unclosed_quote_is_text() -> None:
    assert parse_command_args('a "open b') == ["a", '"open', "b"]
    assert parse_command_args('"') == ['"']


# -- substitution (substituteArgs, prompt-templates.js:77-101) -----------------------------------


def test_positional_placeholders_and_missing_ones_are_empty() -> None:
    assert substitute_args("$1-$2-$3-$0-$10", ["a", "b"]) == "a-b---"


def test_all_arguments_placeholders_join_with_spaces() -> None:
    assert substitute_args("[$@] [$ARGUMENTS]", ["a", "b c"]) == "[a b c] [a b c]"


def test_defaults_apply_to_a_missing_or_empty_argument() -> None:
    assert substitute_args("${1:-x} ${2:-y} ${@:-z} ${ARGUMENTS:-w}", ["", "b"]) == "x b  b  b"
    assert substitute_args("${1:-x} ${@:-z} ${ARGUMENTS:-w}", []) == "x z w"


def test_slices_count_from_one_and_zero_is_one() -> None:
    args = ["a", "b", "c", "d"]
    assert substitute_args("${@:2}|${@:2:2}|${@:0}|${@:9}", args) == "b c d|b c|a b c d|"


def test_substitution_is_not_recursive() -> None:
    assert substitute_args("$1 $2", ["$2", "${1:-q}"]) == "$2 ${1:-q}"


# -- expansion (expandPromptTemplate, prompt-templates.js:268-282) --------------------------------


def test_only_a_known_template_name_after_a_slash_expands() -> None:
    templates = [_template("review", "R:$@")]
    assert expand_prompt_template("/review a b", templates) == "R:a b"
    assert expand_prompt_template("/review\n\tx", templates) == "R:x"
    assert expand_prompt_template("/review", templates) == "R:"
    assert expand_prompt_template("/reviewer a", templates) == "/reviewer a"
    assert expand_prompt_template("review a", templates) == "review a"
    assert expand_prompt_template("/", templates) == "/"


# -- loading (package-manager.js:324-358, 2160-2243; prompt-templates.js:102-147) -----------------


def test_the_project_folder_comes_first_when_trusted_and_a_names_first_template_wins(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    _write(agent / "prompts" / "b.md", "user b\n")
    _write(agent / "prompts" / "a.md", "user a\n")
    _write(cwd / ".pi" / "prompts" / "b.md", "project b\n")
    trusted = PromptTemplates.discover(str(agent), str(cwd), trusted=True).templates
    assert [(t.name, t.content) for t in trusted] == [("b", "project b\n"), ("a", "user a\n")]
    assert trusted[0].source_info == {
        "path": str(cwd / ".pi" / "prompts" / "b.md"),
        "source": "auto",
        "scope": "project",
        "origin": "top-level",
        "baseDir": str(cwd / ".pi"),
    }
    assert trusted[1].source_info["scope"] == "user"
    assert trusted[1].source_info["baseDir"] == str(agent)
    untrusted = PromptTemplates.discover(str(agent), str(cwd), trusted=False).templates
    assert [(t.name, t.content) for t in untrusted] == [("a", "user a\n"), ("b", "user b\n")]


def test_only_visible_markdown_files_of_the_folder_itself_load(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    for name in ("ok.md", ".hidden.md", "notes.txt", "sub/deep.md", "node_modules/x.md"):
        _write(agent / "prompts" / name, "body\n")
    (agent / "prompts" / "dir.md").mkdir()
    assert [t.name for t in PromptTemplates.discover(str(agent), str(tmp_path), trusted=True).templates] == [
        "ok"
    ]


def test_the_description_is_the_frontmatters_else_the_first_line_cut_to_60(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    _write(agent / "prompts" / "a.md", "---\ndescription: from front\n---\n\nBody $1\n")
    _write(agent / "prompts" / "b.md", "\n  \n" + "x" * 61 + "\nmore\n")
    _write(agent / "prompts" / "c.md", "---\ndescription: 5\n---\nfirst line\n")
    _write(agent / "prompts" / "d.md", "---\n: [bad\n---\nbody\n")
    found = {t.name: t for t in PromptTemplates.discover(str(agent), str(tmp_path), trusted=True).templates}
    assert (found["a"].description, found["a"].content) == ("from front", "Body $1")
    assert (found["b"].description, found["b"].content) == (
        "x" * 60 + "...",
        "\n  \n" + "x" * 61 + "\nmore\n",
    )
    assert found["c"].description == "first line"
    assert "d" not in found


# -- the session: get_commands, expansion order, reload --------------------------------------------


def _extension(seen: list[Any]) -> Any:
    def extension(pi: ExtensionAPI) -> None:
        async def probe(args: str, ctx: Any) -> None:
            seen.append([(c.name, c.source) for c in pi.get_commands()])

        async def only(args: str, ctx: Any) -> None:
            seen.append(("only", args))

        def on_input(event: Any, ctx: Any) -> None:
            seen.append(("input", event.text))

        pi.register_command("probe", probe)
        pi.register_command("only", only)
        pi.on("input", on_input)

    return extension


def test_get_commands_lists_templates_between_extension_commands_and_skills(tmp_path: Path) -> None:
    seen: list[Any] = []
    files = {"$AGENT/prompts/review.md": {"text": "Review\n"}, "$AGENT/prompts/only.md": {"text": "o\n"}}
    run(tmp_path, base(files=files, operations=[{"command": "/probe"}]), _extension(seen))
    assert seen == [
        [
            ("probe", "extension"),
            ("only", "extension"),
            ("llama", "extension"),
            ("mcp", "extension"),
            ("only", "prompt"),
            ("review", "prompt"),
        ]
    ]


def test_command_infos_put_templates_after_extension_commands_and_before_skills() -> None:
    """agent-session.js:2850-2870: ``[...extensionCommands, ...templates, ...skills]``."""
    info = {
        "path": "/a/prompts/t.md",
        "source": "auto",
        "scope": "user",
        "origin": "top-level",
        "baseDir": "/a",
    }
    infos = command_infos(
        [("probe", "ext.py", None)], [("s", "a skill", "/s/SKILL.md", "ext.py")], [("t", "a template", info)]
    )
    assert [(c.name, c.source) for c in infos] == [
        ("probe", "extension"),
        ("t", "prompt"),
        ("skill:s", "skill"),
    ]
    assert (infos[1].description, infos[1].source_info) == ("a template", info)


def test_a_template_expands_after_extension_commands_and_the_input_event(tmp_path: Path) -> None:
    seen: list[Any] = []
    files = {"$AGENT/prompts/review.md": {"text": "Review $1"}, "$AGENT/prompts/only.md": {"text": "o\n"}}
    model = {"agent": [{"text": "a"}, {"text": "b"}]}
    ops = [{"prompt": "/only x"}, {"prompt": "/review 'a b' c"}, {"prompt": "/other y"}]
    result = run(tmp_path, base(files=files, model=model, operations=ops), _extension(seen))
    assert seen == [("only", "x"), ("input", "/review 'a b' c"), ("input", "/other y")]
    assert _user_texts(result) == ["Review a b", "/other y"]


def test_templates_load_at_the_runtimes_start_and_again_on_reload(tmp_path: Path) -> None:
    seen: list[Any] = []
    model = {"agent": [{"text": "a"}, {"text": "b"}]}
    write = {"edit_file": {"path": "$AGENT/prompts/late.md", "text": "Late $@"}}
    ops = [write, {"prompt": "/late 1"}, "reload", {"prompt": "/late 2"}]
    result = run(tmp_path, base(model=model, operations=ops), _extension(seen))
    assert _user_texts(result) == ["/late 1", "Late 2"]


def test_a_run_with_the_prompts_setting_is_refused_at_start_and_at_a_reload(tmp_path: Path) -> None:
    """The ``prompts`` setting is not modelled: a run with it is refused when the runtime
    starts, and when a reload reads a setting written since (package-manager.js:2175-2184)."""
    message = (
        "prompt templates beyond Pi's default folders are not modelled by the simulator "
        "(the settings name prompt templates (prompts))"
    )
    overrides = {"settings": {"global": {"prompts": ["elsewhere"]}}}
    with pytest.raises(PromptTemplatesNotModelledError) as raised:
        run(tmp_path / "start", base(operations=[{"prompt": "one"}], **overrides))
    assert str(raised.value) == message
    write = {"edit_file": {"path": "$AGENT/settings.json", "text": '{"prompts": ["elsewhere"]}'}}
    with pytest.raises(PromptTemplatesNotModelledError) as raised:
        run(
            tmp_path / "reload",
            base(model={"agent": [{"text": "a"}]}, operations=[{"prompt": "one"}, write, "reload"]),
        )
    assert str(raised.value) == message


def test_prompt_paths_a_handler_names_load_after_the_default_folders_with_its_source_info(
    tmp_path: Path,
) -> None:
    """``extendResources`` (resource-loader.js:341-358): a named folder's ``.md`` files (dot
    files too) or a named ``.md`` file, merged after the default folders' (a name's first
    template wins); their ``sourceInfo`` is the naming extension's (agent-session.js:2806-2828)."""
    seen: list[Any] = []
    _write(tmp_path / "named" / "a.md", "named a")
    _write(tmp_path / "named" / ".dot.md", "dot")
    _write(tmp_path / "named" / "review.md", "named review")
    _write(tmp_path / "one.md", "one $1")

    def extension(pi: ExtensionAPI) -> None:
        async def probe(args: str, ctx: Any) -> None:
            seen.append(
                [(c.name, c.source, c.source_info) for c in pi.get_commands() if c.source == "prompt"]
            )

        pi.register_command("probe", probe)
        pi.on(
            "resources_discover",
            lambda event, ctx: {"promptPaths": [str(tmp_path / "named"), str(tmp_path / "one.md")]},
        )

    files = {"$AGENT/prompts/review.md": {"text": "Review\n"}}
    model = {"agent": [{"text": "a"}]}
    ops = [{"command": "/probe"}, {"prompt": "/one x"}]
    result = run(tmp_path / "w", base(files=files, model=model, operations=ops), extension)
    [listed] = seen
    assert [(name, source) for name, source, _ in listed] == [
        ("review", "prompt"),
        (".dot", "prompt"),
        ("a", "prompt"),
        ("one", "prompt"),
    ]
    assert listed[0][2]["source"] == "auto"
    label = listed[1][2]["source"]
    assert label.startswith("extension:")
    assert listed[1][2] == {
        "path": str(tmp_path / "named" / ".dot.md"),
        "source": label,
        "scope": "temporary",
        "origin": "top-level",
        "baseDir": ".",
    }
    assert _user_texts(result) == ["one x"]
