"""The session chain: how many parent-linked sessions lead to this one (the master counts).

The count follows the persisted native ``parentSession`` headers. An ancestor that the
count needs but cannot read is an error (no guessed count). At the limit the next
transfer starts an independent master: no ``parentSession``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["ChainDecision", "ChainError", "chain_length", "decide_parent"]


class ChainError(RuntimeError):
    """A required ancestor session cannot be read."""


def _header(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
        header = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ChainError(f"The ancestor session {path} cannot be read: {error}") from None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise ChainError(f"The ancestor session {path} has no session header")
    return header


def chain_length(parent_of_current: str | None, limit: int) -> int:
    """1 for a master; each readable parent adds one. Stops counting once ``limit`` is reached."""
    length = 1
    seen: set[str] = set()
    parent = parent_of_current
    while parent and length < limit:
        if parent in seen:
            raise ChainError(f"The session chain loops at {parent}")
        seen.add(parent)
        length += 1
        value = _header(parent).get("parentSession")
        parent = value if isinstance(value, str) and value else None
    return length


@dataclass(frozen=True)
class ChainDecision:
    parent_session: str | None
    independent_master: bool


def decide_parent(source_file: str, source_parent: str | None, limit: int) -> ChainDecision:
    """Link the receiver to the source unless the source's chain already has ``limit`` sessions."""
    if chain_length(source_parent, limit) >= limit:
        return ChainDecision(None, True)
    return ChainDecision(source_file, False)
