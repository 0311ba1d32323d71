"""Extension events as both targets record them: the observation format of extension events.

The simulated host traces every extension event it dispatches (``event`` records of the
trace); on real Pi the observer extension (``targets/realpi/observer.ts``) logs the same
events with the same fields. :data:`OBSERVABLE_EVENTS` are the events every target observes
(the observer logs exactly these), :func:`event_summary` the fields of one, in Pi's camelCase.

``session_compact`` carries one field more on both targets, ``summaryFiles``: the witness of
"durable Brief first" (spec §3), :func:`summary_files` taken when Pi announces the entry it has
just appended, before any extension's handler runs (Pi appends the entry and emits the event
with no await in between: ``agent-session.js:2402-2409, 2691-2698``).
"""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.api.events import CompactionPreparation
from pi_continuity_harness.scenario.tree_walk import walk_sorted

__all__ = ["OBSERVABLE_EVENTS", "event_summary", "preparation_summary", "summary_files"]


#: Extension events every target observes (the real-Pi observer extension logs the same).
OBSERVABLE_EVENTS = frozenset(
    {
        "session_start",
        "session_before_switch",
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_shutdown",
        "model_select",
        "input",
        "agent_start",
        "agent_end",
        "agent_settled",
        "turn_start",
        "turn_end",
        # ``session_tree`` (agent-session.js:3518-3524) and the harness's own record of a
        # ``tree`` operation (the observer's ``/harness-tree`` command logs it on real Pi).
        "session_tree",
        "tree_navigation",
    }
)


def _model_name(model: Any) -> str | None:
    return None if model is None else f"{model.provider}/{model.id}"


def event_summary(event: Any) -> dict[str, Any]:
    """An extension event as the trace (and the real-Pi observer) records it."""
    kind = event.type
    if kind == "session_before_compact":
        return {
            "reason": event.reason,
            "willRetry": event.will_retry,
            "customInstructions": event.custom_instructions,
            "preparation": preparation_summary(event.preparation),
        }
    if kind == "session_tree":
        return {
            "newLeafId": event.new_leaf_id,
            "oldLeafId": event.old_leaf_id,
            "fromExtension": event.from_extension,
        }
    if kind == "session_compact":
        entry = event.compaction_entry
        return {
            "reason": event.reason,
            "willRetry": event.will_retry,
            "fromExtension": event.from_extension,
            "compactionEntry": {
                "id": entry.get("id"),
                "summary": entry.get("summary"),
                "firstKeptEntryId": entry.get("firstKeptEntryId"),
                "tokensBefore": entry.get("tokensBefore"),
                "details": entry.get("details"),
                "fromHook": entry.get("fromHook"),
            },
        }
    if kind == "session_compact_failed":
        return {
            "reason": event.reason,
            "errorMessage": event.error_message,
            "aborted": event.aborted,
            "willRetry": event.will_retry,
            "fromExtension": event.from_extension,
        }
    if kind == "session_start":
        return {"reason": event.reason, "previousSessionFile": event.previous_session_file}
    if kind == "session_before_fork":
        return {"entryId": event.entry_id, "position": event.position}
    if kind in ("session_shutdown", "session_before_switch"):
        return {"reason": event.reason, "targetSessionFile": event.target_session_file}
    if kind == "model_select":
        return {
            "source": event.source,
            "model": _model_name(event.model),
            "contextWindow": event.model.context_window if event.model else None,
            "previousModel": _model_name(event.previous_model),
        }
    if kind == "input":
        return {"text": event.text, "source": event.source, "streamingBehavior": event.streaming_behavior}
    if kind == "agent_end":
        return {"messages": len(event.messages)}
    if kind == "agent_settled":
        return {"aborted": event.aborted}
    if kind in ("turn_start", "turn_end"):
        return {"turnIndex": event.turn_index}
    if kind in ("message_start", "message_end"):
        return {"role": event.message.get("role")}
    if kind in ("tool_execution_start", "tool_execution_end", "tool_result"):
        return {"toolName": event.tool_name}
    return {}


def preparation_summary(preparation: CompactionPreparation) -> dict[str, Any]:
    """A compact, JSON-able view of a preparation for traces."""
    return {
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "tokensBefore": preparation.tokens_before,
        "isSplitTurn": preparation.is_split_turn,
        "messagesToSummarize": len(preparation.messages_to_summarize),
        "turnPrefixMessages": len(preparation.turn_prefix_messages),
        "previousSummary": preparation.previous_summary,
        "settings": preparation.settings.to_json(),
    }


def summary_files(root: str, summary: str) -> list[str]:
    """The regular files under ``root`` (the project: Pi's ``ctx.cwd``) whose bytes are exactly
    the UTF-8 bytes of ``summary``, as sorted absolute paths.

    The witness of spec §3 "Durable Continuity Brief first": taken at the moment Pi appends the
    compaction entry, it shows whether a pending Brief holding the summary was already on disk.
    The real-Pi observer (``targets/realpi/observer.ts`` ``summaryFiles``) computes the same.
    Symbolic links are not followed; an unreadable file or directory is left out.

    The walk is :func:`~pi_continuity_harness.scenario.tree_walk.walk_sorted` (``os.walk``'s
    directories and order, without its ``lstat`` per subdirectory), and a file's link test and
    size come from its directory entry (the listing's type, one ``stat``) instead of
    ``os.path.islink`` and ``os.path.getsize`` (two): the same files are read, in the same
    order; this witness is taken at every compaction.
    """
    data = summary.encode("utf-8")
    size = len(data)
    found: list[str] = []
    for directory, files in walk_sorted(root):
        for entry in sorted(files, key=_entry_name):
            path = os.path.join(directory, entry.name)
            try:
                # ``is_symlink`` answers False for a vanished entry, as ``islink`` does; the
                # size is then unreadable, and the file left out, as ``getsize`` left it out.
                if entry.is_symlink() or entry.stat().st_size != size:
                    continue
                with open(path, "rb") as handle:
                    if handle.read() == data:
                        found.append(path)
            except OSError:
                continue
    return sorted(found)


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name
