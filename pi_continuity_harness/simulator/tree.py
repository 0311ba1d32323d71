"""Tree navigation as Pi 1.6 does it (``AgentSession.navigateTree``,
``dist/core/agent-session.js:3370-3535``): the pure parts, apart from the session.

* :func:`collect_entries_for_branch_summary` is ``collectEntriesForBranchSummary``
  (``core/compaction/branch-summarization.js:27-56``): the deepest entry on both the old leaf's
  path and the target's, and the abandoned entries from the old leaf back to it, oldest first.
* :func:`new_leaf_for` is the new-leaf rule (``agent-session.js:3466-3482``): a user message or a
  custom message puts the leaf on its *parent* (``None`` at the root) and hands its text to the
  editor; any other entry becomes the leaf itself.

Pi's messages (thrown as ``Error``) are kept here verbatim so the simulator and the steps that
check them quote the same text.
"""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.scenario.transcript import content_text

__all__ = [
    "NAVIGATE_WHILE_COMPACTING",
    "NAVIGATE_WHILE_STREAMING",
    "NO_SUMMARY_MODEL",
    "SUMMARY_NOT_MODELLED",
    "collect_entries_for_branch_summary",
    "entry_not_found",
    "new_leaf_for",
]

#: ``agent-session.js:3371-3372``: while a run streams or a prompt is in preflight.
NAVIGATE_WHILE_STREAMING = "Wait for the current response to finish before navigating the session tree."
#: ``agent-session.js:3374-3375``: while a compaction (or another navigation) runs.
NAVIGATE_WHILE_COMPACTING = (
    "Wait for the current compaction or tree navigation to finish before navigating the session tree."
)
#: ``agent-session.js:3383-3384``.
NO_SUMMARY_MODEL = "No model available for summarization"
#: The simulator's own refusal: it does not model Pi's branch summariser (``generateBranchSummary``).
SUMMARY_NOT_MODELLED = (
    "The simulator does not model branch summaries (navigateTree with summarize); use --target pi"
)


def entry_not_found(target_id: str) -> str:
    """``agent-session.js:3387-3388``."""
    return f"Entry {target_id} not found"


def collect_entries_for_branch_summary(
    manager: Any, old_leaf_id: str | None, target_id: str
) -> tuple[list[dict[str, Any]], str | None]:
    """``(entries, commonAncestorId)`` (``branch-summarization.js:27-56``)."""
    if not old_leaf_id:
        return [], None
    old_path = {entry["id"] for entry in manager.get_branch(old_leaf_id)}
    common: str | None = None
    for entry in reversed(manager.get_branch(target_id)):
        if entry["id"] in old_path:
            common = str(entry["id"])
            break
    entries: list[dict[str, Any]] = []
    current: str | None = old_leaf_id
    while current and current != common:
        found = manager.get_entry(current)
        if found is None:
            break
        entries.append(found)
        current = found.get("parentId")
    entries.reverse()
    return entries, common


def new_leaf_for(target: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(newLeafId, editorText)`` for a navigation to ``target`` (``agent-session.js:3466-3482``)."""
    if target.get("type") == "message" and (target.get("message") or {}).get("role") == "user":
        return target.get("parentId"), content_text(target["message"].get("content"), "")
    if target.get("type") == "custom_message":
        return target.get("parentId"), content_text(target.get("content"), "")
    return str(target["id"]), None
