"""Shared helpers of the step library: number parsing, marks (what was observed before the
last action, and what came after it), finding Briefs and continuations."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.features.collect import ArgumentCheck
from pi_continuity_harness.features.oracle import CONTINUATION_SUFFIX, Brief, parse_brief
from pi_continuity_harness.features.world import World
from pi_continuity_harness.targets import ObservedRequest

__all__ = [
    "Mark",
    "begin",
    "briefs_in",
    "continuations_since",
    "current_mark",
    "json_argument",
    "labelled_numbers",
    "last_mark",
    "new_command_output",
    "new_dialogs",
    "new_extension_events",
    "new_notifications",
    "new_requests",
    "new_session_events",
    "number",
    "numbers_in",
    "status_output",
    "text_mentions_number",
]


def json_argument(name: str) -> ArgumentCheck:
    """The check (``collect.checks_arguments``) that a step's argument ``name`` (its docstring,
    or a part of its text) is JSON: a feature's typo, found before any scenario runs, not a
    ``JSONDecodeError`` failing the scenario as if the implementation had."""

    def check(arguments: Mapping[str, Any], _feature_dir: Path) -> str | None:
        try:
            json.loads(str(arguments[name]))
        except json.JSONDecodeError as error:
            return f"its {name} is not JSON: {error}"
        return None

    return check


def number(text: str) -> int:
    """``372,000`` / ``372000`` / ``372 000`` -> 372000."""
    return int(re.sub(r"[,_\s]", "", text))


def numbers_in(text: str) -> set[int]:
    return {number(m) for m in re.findall(r"\d[\d,]*", text)}


def labelled_numbers(text: str, label: str) -> list[int]:
    """The numbers ``text`` gives the camel-case setting ``label`` (``reserveTokens``): the name,
    spelled as one word or as words in any case (``reserve tokens``), then only spaces or
    punctuation (``: ``, `` (``, `` = ``, ``": ``) before the number, thousands separators allowed."""
    words = re.findall(r"[a-z]+|[A-Z][a-z]*", label)
    name = r"[\s_-]*".join(re.escape(word) for word in words)
    number_text = r"(\d{1,3}(?:,\d{3})+|\d+)(?!\d|,\d)"
    pattern = re.compile(rf"(?<![A-Za-z]){name}(?![A-Za-z])[^\w\n]{{0,4}}{number_text}", re.I)
    return [int(match.group(1).replace(",", "")) for match in pattern.finditer(text)]


def text_mentions_number(text: str, value: int) -> bool:
    """Whether ``value`` appears in ``text`` with or without thousands separators."""
    return value in numbers_in(text)


@dataclass(frozen=True)
class Mark:
    """How much had been observed when an action began."""

    session_events: int
    extension_events: int
    model_requests: int
    entries: int
    notifications: int
    dialogs: int
    outputs: int = 0


_NOTHING = Mark(0, 0, 0, 0, 0, 0)


def current_mark(world: World) -> Mark:
    if not world.started:
        return _NOTHING
    return Mark(*world.observed_counts())


def begin(world: World) -> None:
    """Mark what has been observed so far: When steps call it as their action begins."""
    world.remembered["mark"] = current_mark(world)


def last_mark(world: World) -> Mark:
    """The mark of the last action (nothing observed, when no action has marked yet)."""
    mark = world.remembered.get("mark")
    return mark if isinstance(mark, Mark) else _NOTHING


def new_notifications(world: World) -> list[tuple[str, str]]:
    return world.observe().notifications[last_mark(world).notifications :]


def new_command_output(world: World) -> str:
    """What the commands since the last action showed without a UI (stdout/stderr text)."""
    return "\n".join(world.observe().command_output[last_mark(world).outputs :])


def status_output(world: World) -> str:
    """What a status (or settings) command showed since the last action: its notifications,
    its dialogs' texts and, without a UI, its command output."""
    parts = [message for message, _ in new_notifications(world)]
    for dialog in new_dialogs(world):
        parts.extend(str(dialog.get(k) or "") for k in ("title", "message"))
        parts.extend(str(o) for o in dialog.get("options") or [])
    output = new_command_output(world)
    if output:
        parts.append(output)
    return "\n".join(parts)


def new_dialogs(world: World, method: str | None = None) -> list[dict[str, Any]]:
    """The dialogs since the last mark (only those of ``method``, e.g. ``select``, if given)."""
    dialogs = world.observe().dialogs[last_mark(world).dialogs :]
    return dialogs if method is None else [d for d in dialogs if d.get("method") == method]


def new_session_events(world: World, kind: str | None = None) -> list[dict[str, Any]]:
    events = world.observe().session_events[last_mark(world).session_events :]
    return [e for e in events if kind is None or e.get("type") == kind]


def new_extension_events(world: World, kind: str | None = None) -> list[dict[str, Any]]:
    events = world.observe().extension_events[last_mark(world).extension_events :]
    return [e for e in events if kind is None or e.get("type") == kind]


def new_requests(world: World, kind: str | None = None) -> list[ObservedRequest]:
    requests = world.observe().model_requests[last_mark(world).model_requests :]
    return [r for r in requests if kind is None or r.kind == kind]


def briefs_in(files: dict[str, bytes]) -> list[tuple[str, Brief]]:
    out = []
    for name, data in files.items():
        brief = parse_brief(data.decode("utf-8", errors="replace"))
        if brief is not None:
            out.append((name, brief))
    return out


def _is_continuation(text: str) -> bool:
    return CONTINUATION_SUFFIX in text or text.startswith("---\nkind: pi-session-continuity/")


def continuations_since(world: World, entries_mark: int = 0) -> list[str]:
    """Continuation messages (Brief + suffix) among the user messages appended since a mark."""
    out = []
    for entry in world.observe().entries[entries_mark:]:
        if entry.get("type") != "message":
            continue
        message: dict[str, Any] = entry.get("message") or {}
        if message.get("role") != "user":
            continue
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
        )
        if _is_continuation(text):
            out.append(text)
    return out
