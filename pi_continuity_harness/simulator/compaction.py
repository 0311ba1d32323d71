"""Compaction mechanics of Pi 1.6 (``dist/core/compaction/compaction.js``), ported.

Pure functions: the threshold rule, Pi's token estimates, the cut point and
``prepareCompaction``, and the prompts of the default summarizer. The session itself
decides *when* to call them (``agent_session.py``).

Modelled quirks, each named where it lives:

* the threshold is strict: ``tokens > contextWindow - reserveTokens`` (§9.2);
* small sessions never compact: when the cut point leaves nothing to summarise,
  ``prepare_compaction`` returns ``None`` and automatic compaction is skipped silently (§9.3);
* the cut moves back over context-invisible metadata entries, so ``firstKeptEntryId`` can
  be a ``custom`` or ``model_change`` entry, and the compaction is then a split turn (§9.10);
* usage captured before the latest compaction or context edit is not trusted: the estimate
  falls back to chars/4 of the whole projection, system message included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.api.events import CompactionPreparation, CompactionSettings
from pi_continuity_harness.simulator.messages import (
    Message,
    calculate_context_tokens,
    convert_to_llm,
    current_system_message,
    estimate_tokens,
    is_cut_point_message,
    is_turn_start_message,
    serialize_conversation,
)
from pi_continuity_harness.simulator.session_manager import (
    ProjectedEntry,
    SessionProjection,
    entry_to_context_messages,
)

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "SUMMARIZATION_PROMPT",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "TURN_PREFIX_SUMMARIZATION_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
    "ContextEstimate",
    "calculate_context_tokens",
    "combine_usage",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_projected_context_tokens",
    "format_file_operations",
    "prepare_compaction",
    "should_compact",
]

DEFAULT_COMPACTION_SETTINGS = CompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=20000)

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and an "
    "AI assistant, then produce a structured summary following the exact format specified.\n\nDo NOT "
    "continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the "
    "structured summary."
)
#: Pi 1.6's summarizer prompts, verbatim (``compaction.js``: SUMMARIZATION_PROMPT,
#: UPDATE_SUMMARIZATION_PROMPT with its instructions, TURN_PREFIX_SUMMARIZATION_PROMPT).
SUMMARIZATION_PROMPT = (
    "The messages above are a conversation to summarize. Create a structured context "
    "checkpoint summary that another LLM will use to continue the work.\n"
    "\n"
    "Use this EXACT format:\n"
    "\n"
    "## Goal\n"
    "[What is the user trying to accomplish? Can be multiple items if the session covers "
    "different tasks.]\n"
    "\n"
    "## Constraints & Preferences\n"
    "- [Any constraints, preferences, or requirements mentioned by user]\n"
    '- [Or "(none)" if none were mentioned]\n'
    "\n"
    "## Progress\n"
    "### Done\n"
    "- [x] [Completed tasks/changes]\n"
    "\n"
    "### In Progress\n"
    "- [ ] [Current work]\n"
    "\n"
    "### Blocked\n"
    "- [Issues preventing progress, if any]\n"
    "\n"
    "## Key Decisions\n"
    "- **[Decision]**: [Brief rationale]\n"
    "\n"
    "## Next Steps\n"
    "1. [Ordered list of what should happen next]\n"
    "\n"
    "## Critical Context\n"
    "- [Any data, examples, or references needed to continue]\n"
    '- [Or "(none)" if not applicable]\n'
    "\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)
UPDATE_SUMMARIZATION_PROMPT = (
    "The messages above are NEW conversation messages to incorporate into the existing "
    "summary provided in <previous-summary> tags.\n"
    "\n"
    "Update the existing structured summary with new information. RULES:\n"
    "- PRESERVE all existing information from the previous summary\n"
    "- ADD new progress, decisions, and context from the new messages\n"
    '- UPDATE the Progress section: move items from "In Progress" to "Done" when completed\n'
    '- UPDATE "Next Steps" based on what was accomplished\n'
    "- PRESERVE exact file paths, function names, and error messages\n"
    "- If something is no longer relevant, you may remove it\n"
    "\n"
    "Use this EXACT format:\n"
    "\n"
    "## Goal\n"
    "[Preserve existing goals, add new ones if the task expanded]\n"
    "\n"
    "## Constraints & Preferences\n"
    "- [Preserve existing, add new ones discovered]\n"
    "\n"
    "## Progress\n"
    "### Done\n"
    "- [x] [Include previously done items AND newly completed items]\n"
    "\n"
    "### In Progress\n"
    "- [ ] [Current work - update based on progress]\n"
    "\n"
    "### Blocked\n"
    "- [Current blockers - remove if resolved]\n"
    "\n"
    "## Key Decisions\n"
    "- **[Decision]**: [Brief rationale] (preserve all previous, add new)\n"
    "\n"
    "## Next Steps\n"
    "1. [Update based on current state]\n"
    "\n"
    "## Critical Context\n"
    "- [Preserve important context, add new if needed]\n"
    "\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)
TURN_PREFIX_SUMMARIZATION_PROMPT = (
    "The messages above are earlier context from an ongoing conversation. Later messages "
    "are stored separately and do not need to be reconstructed.\n"
    "\n"
    "Create a concise checkpoint of the user's request and the progress shown above. This "
    "checkpoint will be placed before the later messages so the conversation can continue "
    "with the necessary context.\n"
    "\n"
    "## Original Request\n"
    "[What did the user ask for?]\n"
    "\n"
    "## Progress So Far\n"
    "- [Key decisions and work completed in these messages]\n"
    "\n"
    "## Context Needed to Continue\n"
    "- [Information from these messages needed to understand the later work]\n"
    "\n"
    "Only summarize information explicitly present above. Do not infer or recreate later messages."
)


def combine_usage(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """``combineUsage`` (``usage-totals.js``): the usage of a split-turn summary's two calls."""
    out: dict[str, Any] = {k: first[k] + second[k] for k in ("input", "output", "cacheRead", "cacheWrite")}
    for optional in ("cacheWrite1h", "reasoning"):
        if first.get(optional) is not None or second.get(optional) is not None:
            out[optional] = (first.get(optional) or 0) + (second.get(optional) or 0)
    out["totalTokens"] = first["totalTokens"] + second["totalTokens"]
    a, b = first["cost"], second["cost"]
    out["cost"] = {
        **{k: a[k] + b[k] for k in ("input", "output", "cacheRead", "cacheWrite", "total")},
        # A sum is provider-reported only when every part is.
        "totalFromProvider": a.get("totalFromProvider") is True and b.get("totalFromProvider") is True,
    }
    return out


def should_compact(context_tokens: float, context_window: int, settings: CompactionSettings) -> bool:
    """§9.2: strictly greater than ``window - reserve``; never when disabled (nor for a ``NaN``
    estimate: every comparison with ``NaN`` is false, in Python as in JavaScript)."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens


def _assistant_usage(message: Message) -> dict[str, Any] | None:
    if message.get("role") != "assistant":
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if usage and calculate_context_tokens(usage) > 0:
        return dict(usage)
    return None


@dataclass(frozen=True)
class ContextEstimate:
    """``tokens`` and ``trailing_tokens`` are ``NaN`` where a user message's text is a number
    (:func:`~.messages.estimate_tokens`), as in JavaScript: no threshold is then exceeded."""

    tokens: float
    usage_tokens: int
    trailing_tokens: float
    last_usage_index: int | None


def estimate_context_tokens(messages: list[Message]) -> ContextEstimate:
    """``estimateContextTokens``: last valid reported usage plus chars/4 of what follows."""
    for index in range(len(messages) - 1, -1, -1):
        usage = _assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(m) for m in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_messages_tokens(messages: list[Message]) -> float:
    return sum(estimate_tokens(m) for m in messages)


def estimate_projected_context_tokens(
    projection: SessionProjection, branch_position: Any, latest_invalidating: int
) -> ContextEstimate:
    """``estimateProjectedContextTokens``: distrust usage older than the latest edit/compaction.

    ``branch_position(entry_id)`` gives an entry's index on the current branch and
    ``latest_invalidating`` the index of the newest ``context_edit``/``compaction`` (-1 if none).
    """
    estimate = estimate_context_tokens(projection.messages)
    if estimate.last_usage_index is not None:
        # The entry whose messages hold the one with the usage, found from the newest entry
        # back: the projection's messages are its entries' messages in order, so the entries'
        # ends count down from their number, and the usage is almost always in the last reply.
        # Counting up from the first entry walked the whole context at every estimate (before
        # every turn, at every compaction check and ``getContextUsage``: 0.7 % of a blitz
        # handoff exploration, issue 16); it is the same entry either way.
        usage_index_in_messages = estimate.last_usage_index
        end = len(projection.messages)
        usage_entry_id: str | None = None
        for entry in reversed(projection.entries):
            start = end - len(entry.messages)
            if start <= usage_index_in_messages:
                usage_entry_id = entry.source["id"]
                break
            end = start
        usage_index = branch_position(usage_entry_id) if usage_entry_id else -1
        if usage_index > latest_invalidating:
            return estimate
    system = current_system_message(projection.messages)
    tokens = estimate_tokens(system) if system else 0
    for message in projection.messages:
        if message.get("role") != "system":
            tokens += estimate_tokens(message)
    return ContextEstimate(tokens, 0, tokens, None)


def _is_projected_turn_start(entry: ProjectedEntry) -> bool:
    if entry.source.get("type") == "compaction":
        return False
    return any(is_turn_start_message(m) for m in entry.messages)


def _contributes(source: dict[str, Any]) -> bool:
    """``sessionEntryToContextMessages(source).length > 0`` for an entry of the projection,
    without building the messages: a ``message`` or ``custom_message`` makes one, a
    ``branch_summary`` one when it has a summary, a ``compaction`` is asked as before, any other
    type makes none. The projection built the messages of every entry it holds but a later
    compaction (``_project_entry``), so building them again could not fail where this answers;
    it was most of the cut point's suffix check (a custom message parses its timestamp)."""
    kind = source.get("type")
    if kind in ("message", "custom_message"):
        return True
    if kind == "branch_summary":
        return bool(source.get("summary"))
    if kind == "compaction":
        return len(entry_to_context_messages(source)) > 0
    return False


@dataclass(frozen=True)
class _CutPoint:
    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _find_projected_cut_point(
    entries: list[ProjectedEntry], start: int, end: int, keep_recent_tokens: int
) -> _CutPoint:
    """``findProjectedCutPoint`` (C:555-608), including the recovery-omission suffix rule."""
    cut_points = [
        i
        for i in range(start, end)
        if entries[i].source.get("type") != "compaction"
        and any(is_cut_point_message(m) for m in entries[i].messages)
    ]
    if not cut_points:
        return _CutPoint(start, -1, False)
    accumulated: float = 0
    exceeded = False
    cut_index = cut_points[0]
    for i in range(end - 1, start - 1, -1):
        tokens = sum(estimate_tokens(m) for m in entries[i].messages)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            exceeded = True
            cut_index = next((c for c in cut_points if c >= i), cut_points[-1])
            break

    suffix = entries[cut_index + 1 : end]

    def visible(entry: ProjectedEntry) -> bool:
        return entry.source.get("type") != "context_edit" and _contributes(entry.source)

    def omitted(entry: ProjectedEntry) -> bool:
        return visible(entry) and len(entry.messages) == 0

    omitted_ids = {e.source["id"] for e in suffix if omitted(e)}
    external_replacement = any(
        e.source.get("type") == "context_edit"
        and e.source.get("replacement") is not None
        and e.source.get("targetId") not in omitted_ids
        for e in suffix
    )
    recovery_suffix = (
        exceeded
        and not external_replacement
        and any(
            e.source.get("type") == "message"
            and e.source["message"].get("role") == "assistant"
            and omitted(e)
            for e in suffix
        )
        and all(e.source.get("type") != "compaction" and (not visible(e) or omitted(e)) for e in suffix)
    )
    if recovery_suffix:
        cut_index += 1
    # §9.10: move back over adjacent context-invisible metadata (custom, model_change, ...).
    while cut_index > start:
        previous = entries[cut_index - 1]
        if previous.source.get("type") == "compaction" or len(previous.messages) > 0:
            break
        cut_index -= 1
    starts_turn = cut_index < len(entries) and _is_projected_turn_start(entries[cut_index])
    turn_start = -1
    if not starts_turn:
        for i in range(min(cut_index, len(entries) - 1), start - 1, -1):
            if _is_projected_turn_start(entries[i]):
                turn_start = i
                break
    return _CutPoint(cut_index, turn_start, (not starts_turn) and turn_start != -1)


def _file_ops(messages: list[Message], previous: dict[str, Any] | None) -> dict[str, set[str]]:
    ops: dict[str, set[str]] = {"read": set(), "written": set(), "edited": set()}
    if previous is not None and not previous.get("fromHook") and isinstance(previous.get("details"), dict):
        details = previous["details"]
        for f in details.get("readFiles") or []:
            ops["read"].add(f)
        for f in details.get("modifiedFiles") or []:
            ops["edited"].add(f)
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for block in message.get("content") or []:
            if block.get("type") != "toolCall":
                continue
            path = (block.get("arguments") or {}).get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.get("name") == "read":
                ops["read"].add(path)
            elif block.get("name") == "write":
                ops["written"].add(path)
            elif block.get("name") == "edit":
                ops["edited"].add(path)
    return ops


def compute_file_lists(ops: dict[str, set[str]]) -> tuple[list[str], list[str]]:
    modified = ops["edited"] | ops["written"]
    read_only = sorted(f for f in ops["read"] if f not in modified)
    return read_only, sorted(modified)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


@dataclass(frozen=True)
class Prepared:
    """A preparation plus the raw file operations the default summarizer appends."""

    preparation: CompactionPreparation
    file_ops: dict[str, set[str]]


def prepare_compaction(
    path_entries: list[dict[str, Any]],
    projection: SessionProjection,
    settings: CompactionSettings,
    tokens_before: int,
) -> Prepared | None:
    """``prepareCompaction`` (C:609-662). None when nothing can be summarised (§9.3)."""
    if path_entries and path_entries[-1].get("type") == "compaction":
        return None
    entries = projection.entries
    previous_index = next(
        (i for i, e in enumerate(entries) if e.source.get("type") == "compaction" and len(e.messages) > 0), -1
    )
    previous_summary: str | None = None
    start = 0
    previous_entry = None
    if previous_index >= 0:
        previous_entry = entries[previous_index].source
        previous_summary = previous_entry["summary"]
        start = previous_index + 1
    cut = _find_projected_cut_point(entries, start, len(entries), settings.keep_recent_tokens)
    if cut.first_kept_index >= len(entries):
        return None
    first_kept = entries[cut.first_kept_index].source
    if not first_kept.get("id"):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index

    def summarisable(slice_: list[ProjectedEntry]) -> list[Message]:
        out: list[Message] = []
        for entry in slice_:
            if entry.source.get("type") == "compaction":
                continue
            out.extend(m for m in entry.messages if m.get("role") != "system")
        return out

    to_summarize = summarisable(entries[start:history_end])
    prefix = summarisable(entries[cut.turn_start_index : cut.first_kept_index]) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    ops = _file_ops(to_summarize + prefix, previous_entry)
    preparation = CompactionPreparation(
        first_kept_entry_id=first_kept["id"],
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops={k: sorted(v) for k, v in ops.items()},
        settings=settings,
    )
    return Prepared(preparation, ops)


def summary_request_text(
    messages: list[Message], *, previous_summary: str | None, custom_instructions: str | None
) -> str:
    """The user text of Pi's history-summary request (``generateSummaryWithUsage``)."""
    prompt = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        prompt = f"{prompt}\n\nAdditional focus: {custom_instructions}"
    text = f"<conversation>\n{serialize_conversation(convert_to_llm(messages))}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return text + prompt


def turn_prefix_request_text(messages: list[Message], *, custom_instructions: str | None) -> str:
    text = (
        f"# Conversation\n{serialize_conversation(convert_to_llm(messages))}\n\n# Instructions\n"
        f"{TURN_PREFIX_SUMMARIZATION_PROMPT}"
    )
    if custom_instructions:
        text = f"{text}\n\nAdditional focus: {custom_instructions}"
    return text
