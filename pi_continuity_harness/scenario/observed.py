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
from collections.abc import Callable
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
    summary = _SUMMARIES.get(event.type)
    return {} if summary is None else summary(event)


def _compact_summary(event: Any) -> dict[str, Any]:
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


def _switch_summary(event: Any) -> dict[str, Any]:
    return {"reason": event.reason, "targetSessionFile": event.target_session_file}


def _turn_summary(event: Any) -> dict[str, Any]:
    return {"turnIndex": event.turn_index}


def _message_summary(event: Any) -> dict[str, Any]:
    return {"role": event.message.get("role")}


def _tool_summary(event: Any) -> dict[str, Any]:
    return {"toolName": event.tool_name}


#: :func:`event_summary` of each kind of event with fields (any other kind has none), found by
#: one look-up: a chain of ``if kind == ...`` tests went past a dozen kinds for the commonest
#: events (``turn_start``, ``agent_start``), at every event dispatched (issue 16).
_SUMMARIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "session_before_compact": lambda event: {
        "reason": event.reason,
        "willRetry": event.will_retry,
        "customInstructions": event.custom_instructions,
        "preparation": preparation_summary(event.preparation),
    },
    "session_tree": lambda event: {
        "newLeafId": event.new_leaf_id,
        "oldLeafId": event.old_leaf_id,
        "fromExtension": event.from_extension,
    },
    "session_compact": _compact_summary,
    "session_compact_failed": lambda event: {
        "reason": event.reason,
        "errorMessage": event.error_message,
        "aborted": event.aborted,
        "willRetry": event.will_retry,
        "fromExtension": event.from_extension,
    },
    "session_start": lambda event: {
        "reason": event.reason,
        "previousSessionFile": event.previous_session_file,
    },
    "session_before_fork": lambda event: {"entryId": event.entry_id, "position": event.position},
    "session_shutdown": _switch_summary,
    "session_before_switch": _switch_summary,
    "model_select": lambda event: {
        "source": event.source,
        "model": _model_name(event.model),
        "contextWindow": event.model.context_window if event.model else None,
        "previousModel": _model_name(event.previous_model),
    },
    "input": lambda event: {
        "text": event.text,
        "source": event.source,
        "streamingBehavior": event.streaming_behavior,
    },
    "agent_end": lambda event: {"messages": len(event.messages)},
    "agent_settled": lambda event: {"aborted": event.aborted},
    "turn_start": _turn_summary,
    "turn_end": _turn_summary,
    "message_start": _message_summary,
    "message_end": _message_summary,
    "tool_execution_start": _tool_summary,
    "tool_execution_end": _tool_summary,
    "tool_result": _tool_summary,
}


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
