"""Differential: prompt templates (``/name args``), real Pi 1.6 against the simulator.

Pi loads the ``.md`` files of ``<project>/.pi/prompts`` (trusted projects only) and then
``<agentDir>/prompts`` (package-manager.js:2226, 2240, ``collectAutoPromptEntries`` :324-358);
a name's first template wins (``dedupePrompts``, resource-loader.js:912-935); the description is
the frontmatter's or the body's first non-blank line cut to 60 characters (prompt-templates.js:
123-134). ``pi.get_commands`` lists them after the extensions' commands with their folder's
``sourceInfo`` (agent-session.js:2857-2862). A prompt ``/name args`` is first an extension
command's if one has the name (:1713), then the ``input`` handlers see it unexpanded (:1744),
then it expands with its arguments substituted (:1753-1756; ``parseCommandArgs`` and
``substituteArgs``, prompt-templates.js:11-101); ``sendUserMessage`` does not expand (:2045).

The extension writes the run's machine root (the cwd's parent, a different path on each target)
as ``<root>``. Each test asserts real Pi's record, then the simulator's, then compares the runs
whole. Before the simulator modelled templates its ``get_commands`` refused (an
``extension_error``) and ``/name`` prompts reached the model as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json
import os


def extension(pi):
    seen = []

    def neutral(text, ctx):
        return text.replace(os.path.dirname(ctx.cwd.rstrip("/")), "<root>")

    async def listing(args, ctx):
        # The extensions' commands without their sourceInfo (the bridge's file on real Pi).
        found = [
            [c.name, c.description, c.source]
            + ([json.loads(neutral(json.dumps(c.source_info), ctx))] if c.source == "prompt" else [])
            for c in pi.get_commands()
        ]
        ctx.ui.notify("commands: " + json.dumps(found), "info")

    async def only(args, ctx):
        ctx.ui.notify("only: " + json.dumps(args), "info")

    async def send(args, ctx):
        await pi.send_user_message("/review sent by the extension")

    def on_input(event, ctx):
        seen.append(event.text)
        ctx.ui.notify("inputs: " + json.dumps(seen), "info")

    pi.register_command("list", listing)
    pi.register_command("only", only, description="an extension command named like a template")
    pi.register_command("send", send)
    pi.on("input", on_input)
"""

_REVIEW = (
    "---\ndescription: review the diff\n---\n"
    "one=$1 two=${2:-none} three=${3:-none} all=[$@] args=[$ARGUMENTS] rest=[${@:2}] "
    "slice=[${@:1:2}] zero=[$0] ten=[$10] empty=[${@:-nothing}]\n"
)
_LONG = "\n\n   \nThis first line is longer than sixty characters, so Pi cuts it off here.\nSecond $1\n"

_FILES: dict[str, Any] = {
    "$AGENT/prompts/review.md": {"text": "user review, shadowed by the project's\n"},
    "$AGENT/prompts/long.md": {"text": _LONG},
    "$AGENT/prompts/.hidden.md": {"text": "hidden\n"},
    "$AGENT/prompts/notes.txt": {"text": "not markdown\n"},
    "$AGENT/prompts/only.md": {"text": "the only template\n"},
    ".pi/prompts/review.md": {"text": _REVIEW},
    ".pi/prompts/bare.md": {"text": "---\nargument-hint: <x>\n---\n\nBare body $@\n"},
}


_MCP = "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"


def _info(path: str, scope: str) -> dict[str, Any]:
    base = "<root>/agent" if scope == "user" else "<root>/project/.pi"
    return {
        "path": f"{base}/prompts/{path}",
        "source": "auto",
        "scope": scope,
        "origin": "top-level",
        "baseDir": base,
    }


def _user_texts(observation: Any) -> list[str]:
    texts = []
    for request in observation.requests("agent"):
        content = request.request.messages[-1]["content"]
        texts.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return texts


def test_get_commands_lists_the_default_folders_templates_project_first(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("templates_listing", _EXTENSION)
    sc = scenario({"agent": [{"text": "hello back"}]}, files=_FILES)
    real, sim = play(targets, sc, [{"command": "/list"}], spec)

    long_line = "This first line is longer than sixty characters, so Pi cuts it off here."
    assert notes(real)["commands"] == [
        ["list", None, "extension"],
        ["only", "an extension command named like a template", "extension"],
        ["send", None, "extension"],
        ["llama", "Manage llama.cpp router models", "extension"],
        ["mcp", _MCP, "extension"],
        # The project's folder first (trusted), each folder in name order; the user's review.md
        # loses to the project's; dot files and non-markdown files are skipped.
        ["bare", "Bare body $@", "prompt", _info("bare.md", "project")],
        ["review", "review the diff", "prompt", _info("review.md", "project")],
        ["long", long_line[:60] + "...", "prompt", _info("long.md", "user")],
        # A template named like an extension command is listed too.
        ["only", "the only template", "prompt", _info("only.md", "user")],
    ]
    assert notes(sim)["commands"] == notes(real)["commands"]
    assert_equivalent(real, sim)


def test_an_untrusted_projects_templates_are_not_loaded(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("templates_untrusted", _EXTENSION)
    sc = scenario({"agent": [{"text": "hello back"}]}, files=_FILES, trust="never")
    real, sim = play(targets, sc, [{"command": "/list"}], spec)

    assert [c[0] for c in notes(real)["commands"] if c[2] == "prompt"] == ["long", "only", "review"]
    assert notes(sim)["commands"] == notes(real)["commands"]
    assert_equivalent(real, sim)


def test_a_template_prompt_expands_after_the_input_event_and_extension_commands(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("templates_expansion", _EXTENSION)
    sc = scenario({"agent": [{"text": t} for t in ("one", "two", "three", "four", "five")]}, files=_FILES)
    prompts = [
        "/review src/a.py \"two words\" it's 'x\\'y' \"open",
        "/only x y",
        "/long",
        "/review",
        "/missing a b",
    ]
    ops: list[Any] = [{"prompt": p} for p in prompts] + [{"command": "/send"}]
    real, sim = play(targets, sc, ops, spec)

    assert _user_texts(real) == [
        # Quotes open an argument only at its start; \\' inside one is a quote; an unclosed
        # quote is text. $0 and a missing $10 are empty; ${N:-d} takes d for a missing argument.
        "one=src/a.py two=two words three=it's all=[src/a.py two words it's x'y \"open] "
        "args=[src/a.py two words it's x'y \"open] rest=[two words it's x'y \"open] "
        "slice=[src/a.py two words] zero=[] ten=[] empty=[src/a.py two words it's x'y \"open]",
        # /only is the extension's command (no request); /long's whole body (no frontmatter).
        "\n\n   \nThis first line is longer than sixty characters, so Pi cuts it off here.\nSecond \n",
        "one= two=none three=none all=[] args=[] rest=[] slice=[] zero=[] ten=[] empty=[nothing]",
        # No such template: sent as written.
        "/missing a b",
        # sendUserMessage does not expand templates.
        "/review sent by the extension",
    ]
    # The input handlers saw every prompt unexpanded (not the extension command's).
    assert notes(real)["inputs"] == [p for p in prompts if not p.startswith("/only")] + [
        "/review sent by the extension"
    ]
    assert notes(real)["only"] == "x y"
    assert _user_texts(sim) == _user_texts(real)
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_templates_load_at_the_runtimes_start_and_again_on_reload(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``reload()`` reads the folders again (resource-loader.js:454-458); nothing else does."""
    spec = python_extension("templates_reload", _EXTENSION)
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}]})
    write = {"edit_file": {"path": "$AGENT/prompts/late.md", "text": "Late $@"}}
    ops = [write, {"prompt": "/late 1"}, "reload", {"prompt": "/late 2"}]
    real, sim = play(targets, sc, ops, spec)

    assert _user_texts(real) == ["/late 1", "Late 2"]
    assert _user_texts(sim) == _user_texts(real)
    assert_equivalent(real, sim)


_NAMING = (
    _EXTENSION.replace("def extension(pi):", 'def extension(pi):\n    pi.on("resources_discover", discover)')
    + """

def discover(event, ctx):
    return {"promptPaths": ["named", "one.md", "missing"]}


def source_neutral(commands):
    # The naming extension's file (the bridge's wrapper on real Pi) as <ext>.
    for c in commands:
        if c[2] == "prompt" and c[3]["source"].startswith("extension:"):
            c[3].update({"source": "extension:<ext>", "baseDir": "<ext dir>"})
    return commands
"""
).replace(
    'ctx.ui.notify("commands: " + json.dumps(found), "info")',
    'ctx.ui.notify("commands: " + json.dumps(source_neutral(found)), "info")',
)


def test_prompt_paths_a_resources_discover_handler_names_load_after_the_default_folders(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """``extendResources`` (resource-loader.js:341-358): the named folder's ``.md`` files (dot
    files too, unlike the default folders) and a named ``.md`` file load after the default
    folders' (a name's first template wins), with the naming extension's ``sourceInfo``
    (agent-session.js:2806-2828); a missing path is skipped."""
    spec = python_extension("templates_named", _NAMING)
    files = {
        "$AGENT/prompts/review.md": {"text": "user review $1\n"},
        "named/review.md": {"text": "named review, shadowed\n"},
        "named/.dot.md": {"text": "dot $@\n"},
        "named/a.md": {"text": "named a\n"},
        "one.md": {"text": "one [$1]\n"},
    }
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}]}, files=files)
    real, sim = play(targets, sc, [{"command": "/list"}, {"prompt": "/.dot x y"}, {"prompt": "/one z"}], spec)

    ext = {"source": "extension:<ext>", "scope": "temporary", "origin": "top-level", "baseDir": "<ext dir>"}
    prompts = [c for c in notes(real)["commands"] if c[2] == "prompt"]
    assert prompts == [
        ["review", "user review $1", "prompt", _info("review.md", "user")],
        [".dot", "dot $@", "prompt", {"path": "<root>/project/named/.dot.md", **ext}],
        ["a", "named a", "prompt", {"path": "<root>/project/named/a.md", **ext}],
        ["one", "one [$1]", "prompt", {"path": "<root>/project/one.md", **ext}],
    ]
    assert _user_texts(real) == ["dot x y\n", "one [z]\n"]
    assert notes(sim)["commands"] == notes(real)["commands"]
    assert _user_texts(sim) == _user_texts(real)
    assert_equivalent(real, sim)
