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
project directory for ``$CWD`` and :data:`SIMULATED_PI_PACKAGE_DIR` for ``$PI_PACKAGE`` (a
fixed path, so simulations do not depend on where Pi is installed; real Pi's own path differs
in length, which moves its estimates by a few tokens, see docs/architecture.md).
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from pi_continuity_harness.simulator.messages import system_message_text

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "SIMULATED_PI_PACKAGE_DIR",
    "builtin_tools",
    "prompt_sections",
    "render_system_prompt",
    "system_message",
]

DATA_PATH = Path(__file__).with_name("pi-1.6-system-prompt.json")
#: Where the simulated Pi "is installed" (the ``docs`` section names its README, docs, examples).
SIMULATED_PI_PACKAGE_DIR = "/usr/local/lib/node_modules/@earendil-works/pi-coding-agent"
BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    return data


def builtin_tools() -> list[dict[str, Any]]:
    """The four built-in tools' declarations, exactly as Pi 1.6 persists them (a fresh copy)."""
    return copy.deepcopy(_data()["toolsAdded"])


def prompt_sections(cwd: str) -> dict[str, str]:
    """``buildSystemPromptSections`` for the default tools and ``cwd`` (no context files, skills)."""
    sections: dict[str, str] = _data()["sections"]
    out: dict[str, str] = {}
    for name, text in sections.items():
        out[name] = text.replace("$PI_PACKAGE", SIMULATED_PI_PACKAGE_DIR).replace(
            "$CWD", cwd.replace("\\", "/")
        )
    return out


def system_message(cwd: str, timestamp: int) -> dict[str, Any]:
    """The system message of a session's first run, with Pi's key order."""
    return {
        "role": "system",
        "content": "",
        "sections": prompt_sections(cwd),
        "timestamp": timestamp,
        "toolsAdded": builtin_tools(),
    }


def render_system_prompt(message: dict[str, Any] | None) -> str:
    """The system prompt a request carries: pi-ai ``getSystemMessageText`` ("" without a message)."""
    return "" if message is None else system_message_text(message)
