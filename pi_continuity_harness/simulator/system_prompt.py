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
from functools import cache
from pathlib import Path
from typing import Any

from pi_continuity_harness.simulator.messages import system_message_text

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "builtin_tools",
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


def prompt_sections(cwd: str, package_dir: str) -> dict[str, str]:
    """``buildSystemPromptSections`` for the default tools, ``cwd`` and Pi's package directory
    ``package_dir`` (``getPackageDir()``; no context files, no skills)."""
    sections: dict[str, str] = _data()["sections"]
    out: dict[str, str] = {}
    for name, text in sections.items():
        out[name] = text.replace("$PI_PACKAGE", package_dir).replace("$CWD", cwd.replace("\\", "/"))
    return out


def system_message(cwd: str, timestamp: int, package_dir: str) -> dict[str, Any]:
    """The system message of a session's first run, with Pi's key order."""
    return {
        "role": "system",
        "content": "",
        "sections": prompt_sections(cwd, package_dir),
        "timestamp": timestamp,
        "toolsAdded": builtin_tools(),
    }


def render_system_prompt(message: dict[str, Any] | None) -> str:
    """The system prompt a request carries: pi-ai ``getSystemMessageText`` ("" without a message)."""
    return "" if message is None else system_message_text(message)
