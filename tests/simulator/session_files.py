"""Hand-written session files for the session manager's tests (``get_tree``, forks): a header and
entries with ids, parents and timestamps chosen by the test, so a rule no live session reaches can
be tested too."""

from __future__ import annotations

from typing import Any

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}


def entry(entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    """A ``custom`` entry (``fields`` override anything, the type too) stamped at ``second``."""
    made = {"type": "custom", "customType": entry_id, "id": entry_id, "parentId": parent}
    made["timestamp"] = f"2026-01-01T00:00:{second:02d}.000Z"
    made.update(fields)
    return made
