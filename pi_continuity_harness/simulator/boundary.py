"""The session-entry drafts of Pi 1.6's run boundaries (``dist/core/agent-session.js:636-706``).

An ``agent_before_settle`` handler may return ``{entries: [...drafts], continue}``
(``BoundaryResult``, ``core/extensions/types.d.ts:772-816``). Pi applies the drafts to a
preview of the current branch after every handler (``_buildBoundaryContext``, :674-693: an
invalid draft throws there, and the runner reports it), then to the session
(``_commitBoundaryDrafts``, :694-699). This module applies drafts to a session manager and
tells whether the previewed context can go on; ``AgentSession`` runs the boundary.
"""

from __future__ import annotations

from typing import Any, cast

from pi_continuity_harness.simulator.compaction import estimate_projected_context_tokens
from pi_continuity_harness.simulator.messages import UNDEFINED, convert_to_llm
from pi_continuity_harness.simulator.session_manager import Entry, SessionManager

__all__ = ["BoundaryDraftError", "apply_boundary_drafts", "boundary_can_continue", "preview_boundary_drafts"]


class BoundaryDraftError(ValueError):
    """A draft Pi cannot apply: the TypeError JavaScript throws on it (V8's message)."""


def apply_boundary_drafts(manager: SessionManager, drafts: Any) -> list[Entry]:
    """``_applyBoundaryDrafts`` (agent-session.js:636-660): each draft appended by its ``type``
    (``custom``, ``custom_message``, ``context_edit``, ``compaction``; any other type appends
    nothing); returns the appended entries. A ``context_edit`` the manager refuses raises its
    error (``Entry <id> not found``, ...); ``for (const draft of drafts)`` over what is not a
    list, or a ``null`` draft, raises V8's TypeError message.

    A ``custom_message`` draft's missing ``customType``, ``content``, ``display`` or ``details``,
    a ``custom`` draft's missing ``data`` and a ``compaction`` draft's missing ``details`` or
    ``usage`` are passed as :data:`UNDEFINED`, which the manager writes as no key, and an
    explicit ``None`` as it is, JSON's ``null`` (session-manager.js:901-932, 968-981 put the
    fields in the entry as given).
    """
    if isinstance(drafts, str):
        return []  # a string iterates over its characters, whose ``type`` is undefined
    if not isinstance(drafts, list):
        raise BoundaryDraftError("drafts is not iterable")
    appended: list[Entry] = []
    for draft in drafts:
        if draft is None:
            raise BoundaryDraftError("Cannot read properties of null (reading 'type')")
        if not isinstance(draft, dict):
            continue
        kind = draft.get("type")
        if kind == "custom":
            entry_id = manager.append_custom_entry(draft.get("customType"), draft.get("data", UNDEFINED))  # type: ignore[arg-type]
        elif kind == "custom_message":
            entry_id = manager.append_custom_message_entry(
                draft.get("customType", UNDEFINED),
                draft.get("content", UNDEFINED),
                draft.get("display", UNDEFINED),
                draft.get("details", UNDEFINED),
            )
        elif kind == "context_edit":
            entry_id = manager.append_context_edit(draft.get("targetId"), draft.get("replacement"))  # type: ignore[arg-type]
        elif kind == "compaction":
            tokens_before = estimate_projected_context_tokens(
                manager.build_session_projection(),
                manager.branch_position,
                manager.latest_invalidating_position(),
            ).tokens
            entry_id = manager.append_compaction(
                draft.get("summary"),  # type: ignore[arg-type]
                draft.get("firstKeptEntryId"),
                cast(int, tokens_before),  # a float only where JavaScript's would be NaN
                draft.get("details", UNDEFINED),
                True,
                draft.get("usage", UNDEFINED),
            )
        else:
            continue
        entry = manager.get_entry(entry_id)
        if entry is not None:
            appended.append(entry)
    return appended


def preview_boundary_drafts(manager: SessionManager, drafts: Any) -> list[Entry]:
    """``drafts`` applied to a preview of ``manager``'s branch (``_buildBoundaryContext``,
    agent-session.js:674-693, after every boundary handler), for the error an invalid draft
    raises there.

    No drafts (an empty list, what every handler that returns none leaves) append nothing and
    raise nothing, so no preview is built for them: copying the branch into a new manager after
    every ``turn_end`` handler was 3 % of a blitz exploration (issue 16). Only a missing header
    still raises, as :meth:`SessionManager.branch_preview` does."""
    if isinstance(drafts, list) and not drafts and manager.get_header() is not None:
        return []
    return apply_boundary_drafts(manager.branch_preview(), drafts)


def boundary_can_continue(
    manager: SessionManager, *, pending_custom: bool, has_queued_messages: bool, boundary: str
) -> bool:
    """``canContinue`` of ``_buildBoundaryContext`` (agent-session.js:674-693) for ``manager``'s
    projection: the model context has more than system messages and does not end with an
    assistant message, or custom messages wait to be delivered, or (``turn_end``) messages are
    queued, or (``agent_before_settle``) the context ends with an assistant message and
    messages are queued."""
    llm = convert_to_llm(manager.build_session_projection().messages)
    final_role = llm[-1].get("role") if llm else None
    has_non_system = any(m.get("role") != "system" for m in llm)
    if (has_non_system and final_role != "assistant") or pending_custom:
        return True
    if boundary == "turn_end":
        return has_queued_messages
    return final_role == "assistant" and has_queued_messages
