"""The system message Pi 1.6 persists before a session's first request, as the simulator writes it.

Pi 1.6 keeps its system prompt in the transcript: the first run of a session appends a
``message`` entry with role ``system``, empty ``content``, the prompt as named ``sections``
(``preamble``, ``tools``, ``rules``, ``docs``, ``cwd``; ``buildSystemPromptSections``) and
the declared tools as ``toolsAdded`` (each tool's ``toToolDeclaration``: name, description,
JSON schema, ``constrainedSampling``). Pi's chars/4 estimate counts all of it (the sections'
text and ``JSON.stringify(toolsAdded)``), about 1,200 tokens, so a simulated session must
carry the same message for threshold and overflow figures to agree with real Pi.

``pi-1.6-system-prompt.json`` beside this module is the output of
``targets/realpi/dump_system_prompt.mjs`` run against the installed package, with the
package directory written ``$PI_PACKAGE`` and the cwd ``$CWD``. The simulator fills in the
project directory for ``$CWD`` and the machine's Pi package directory for ``$PI_PACKAGE``:
``<machine root>/pi-package``, which is where the real-Pi target points ``PI_PACKAGE_DIR``
(``dist/config.js:334-345``), so both name paths of the same lengths and every estimate agrees
to the character (``scenario/layout.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pi_continuity_harness.simulator.messages import system_message_text

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "builtin_tools",
    "current_sections",
    "diff_sections",
    "prompt_sections",
    "render_system_prompt",
    "system_message",
]

DATA_PATH = Path(__file__).with_name("pi-1.6-system-prompt.json")
BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    return data


@cache
def _tools_text() -> str:
    return json.dumps(_data()["toolsAdded"], ensure_ascii=False)


def builtin_tools() -> list[dict[str, Any]]:
    """The four built-in tools' declarations, exactly as Pi 1.6 persists them (a fresh copy).

    The copy is parsed from their JSON text: plain JSON data, so the same values as
    :func:`copy.deepcopy` gives, at a fraction of its cost (every request declares them).
    """
    tools: list[dict[str, Any]] = json.loads(_tools_text())
    return tools


def _normalize_snippet(text: str | None) -> str | None:
    """``_normalizePromptSnippet`` (agent-session.js:1336-1344): line breaks and runs of
    whitespace become one space, trimmed; None for nothing left."""
    if not text:
        return None
    one_line = " ".join(re.sub(r"[\r\n]+", " ", text).split())
    return one_line or None


def _tools_and_rules(extension_tools: Sequence[tuple[str, str | None]]) -> tuple[str, str]:
    """The ``tools`` and ``rules`` sections' texts (without placeholders) for the built-ins plus
    ``extension_tools`` (name, ``promptSnippet``) in registration order.

    Pi lists each active tool with a snippet, ``- <name>: <snippet>`` (system-prompt.js:83-85),
    the tools in registry order (``_refreshToolRegistry``'s Map, agent-session.js:2976-3000: a
    tool named like a built-in replaces its definition in its place); ``buildRules``
    (system-prompt.js:31-62) keeps "Use bash for file operations" only while no tool is named
    ``grep``, ``find`` or ``ls``. Without extension tools these are the dumped sections."""
    sections: dict[str, str] = _data()["sections"]
    if not extension_tools:
        return sections["tools"], sections["rules"]
    snippets: dict[str, str | None] = dict(_builtin_snippets())
    for name, snippet in extension_tools:
        snippets[name] = _normalize_snippet(snippet)
    listed = "\n".join(f"- {name}: {text}" for name, text in snippets.items() if text) or "(none)"
    tools = f"<tools>\n{listed}\n\nAdditional tools may be available.\n</tools>"
    rules = sections["rules"]
    if any(name in snippets for name in ("grep", "find", "ls")):
        rules = rules.replace(f"\n- {_BASH_FILE_RULE}\n", "\n", 1)
    return tools, rules


_BASH_FILE_RULE = "Use bash for file operations like ls, rg, find"


@cache
def _builtin_snippets() -> tuple[tuple[str, str], ...]:
    """The built-in tools' snippets, read back from the dumped ``tools`` section."""
    text: str = _data()["sections"]["tools"]
    lines = text.split("\n")[1 : 1 + len(BUILTIN_TOOL_NAMES)]
    pairs = tuple((line[2:].split(": ", 1)[0], line[2:].split(": ", 1)[1]) for line in lines)
    assert tuple(name for name, _ in pairs) == BUILTIN_TOOL_NAMES, pairs
    return pairs


def prompt_sections(
    cwd: str,
    package_dir: str,
    skills: str = "",
    extension_tools: Sequence[tuple[str, str | None]] = (),
    project_context: str = "",
    custom_prompt: str = "",
    addendum: str = "",
    tools_and_rules: tuple[str, str] | None = None,
) -> dict[str, str]:
    """``buildSystemPromptSections`` for the built-in tools plus ``extension_tools`` (each
    extension tool's name and ``promptSnippet``, :func:`_tools_and_rules`), ``cwd`` and Pi's
    package directory ``package_dir`` (``getPackageDir()``; no context files). ``skills``: the
    skills section's text (:func:`.skills.format_skills_for_prompt`), "" for none; Pi places it
    just before ``cwd`` (``system-prompt.js:99-119``). ``project_context``: the context files'
    text (:func:`.context_files.render_project_context`), "" for none; before ``skills``
    (:96-97). ``custom_prompt`` (``SYSTEM.md``) replaces the preamble and drops ``tools``,
    ``rules`` and ``docs`` (:77-94); ``addendum`` (``APPEND_SYSTEM.md``) follows them (:95-96);
    "" for none (:mod:`.context_files`). ``tools_and_rules``: the two sections' texts once an
    extension set the active tools (:func:`.active_tools.prompt_tools_and_rules`), else None."""
    sections: dict[str, str] = _data()["sections"]
    tools, rules = tools_and_rules or _tools_and_rules(extension_tools)
    built = {"tools": tools, "rules": rules}
    out: dict[str, str] = {}
    for name, dumped in sections.items():
        if custom_prompt and name in ("tools", "rules", "docs"):
            continue
        if name == "cwd" and addendum:
            out["addendum"] = f"<addendum>\n{addendum}\n</addendum>"
        if name == "cwd" and project_context:
            out["project_context"] = f"<project_context>\n{project_context}\n</project_context>"
        if name == "cwd" and skills:
            out["skills"] = f"<skills>\n{skills}\n</skills>"
        if name == "preamble" and custom_prompt:
            out[name] = custom_prompt
            continue
        text = built.get(name, dumped)
        out[name] = text.replace("$PI_PACKAGE", package_dir).replace("$CWD", cwd.replace("\\", "/"))
    return out


def system_message(
    cwd: str,
    timestamp: int,
    package_dir: str,
    skills: str = "",
    extension_tools: Sequence[tuple[str, str | None]] = (),
    project_context: str = "",
    custom_prompt: str = "",
    addendum: str = "",
    tools_and_rules: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The system message of a session's first run, with Pi's key order (the optional
    arguments as in :func:`prompt_sections`)."""
    return {
        "role": "system",
        "content": "",
        "sections": prompt_sections(
            cwd,
            package_dir,
            skills,
            extension_tools,
            project_context,
            custom_prompt,
            addendum,
            tools_and_rules,
        ),
        "timestamp": timestamp,
        "toolsAdded": builtin_tools(),
    }


def render_system_prompt(message: dict[str, Any] | None) -> str:
    """The system prompt a request carries: pi-ai ``getSystemMessageText`` ("" without a message)."""
    return "" if message is None else system_message_text(message)


def current_sections(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The prompt sections the transcript's system messages give the model (later ones win,
    ``null`` deletes: pi-ai ``getCurrentSystemMessage``'s ``sections``); None without any
    system message."""
    sections: dict[str, Any] | None = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if sections is None:
            sections = {}
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    return sections


def diff_sections(previous: dict[str, Any], current: dict[str, str]) -> dict[str, str | None] | None:
    """``diffSystemPromptSections`` (``system-prompt.js:139-150``): the sections that changed
    or are new, then ``null`` for each that is gone; None when nothing changed."""
    patch: dict[str, str | None] = {
        name: text for name, text in current.items() if previous.get(name) != text
    }
    for name in previous:
        if name not in current:
            patch[name] = None
    return patch or None
