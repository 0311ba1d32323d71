"""Agent messages in pi-ai's shapes, and Pi's chars/4 token estimate.

Messages stay plain dicts with Pi's camelCase keys so session files and bridge traffic are
byte-compatible with real Pi. Ports of ``compaction.js`` (``estimateTokens``),
``messages.js`` (``convertToLlm``, the compaction-summary wrapper) and
``compaction/utils.js`` (``serializeConversation``).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "Message",
    "compaction_summary_message",
    "content_text",
    "convert_to_llm",
    "custom_message",
    "estimate_tokens",
    "is_cut_point_message",
    "is_turn_start_message",
    "serialize_conversation",
    "user_message",
]

Message = dict[str, Any]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
_ESTIMATED_IMAGE_CHARS = 4800
_TOOL_RESULT_MAX_CHARS = 2000


def content_text(content: Any, separator: str = "") -> str:
    """pi-ai ``contentText``: the text blocks of a content value, joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def user_message(text: str, timestamp: int) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def custom_message(custom_type: str, content: Any, display: bool, details: Any, timestamp: int) -> Message:
    message: Message = {"role": "custom", "customType": custom_type, "content": content, "display": display}
    if details is not None:
        message["details"] = details
    message["timestamp"] = timestamp
    return message


def compaction_summary_message(summary: str, tokens_before: int, timestamp: int) -> Message:
    return {
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": tokens_before,
        "timestamp": timestamp,
    }


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and block.get("text"):
                chars += len(block["text"])
            elif block.get("type") == "image":
                chars += _ESTIMATED_IMAGE_CHARS
    return chars


def _js_json_length(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def estimate_tokens(message: Message) -> int:
    """``estimateTokens``: chars/4 rounded up, per role (compaction.js:199)."""
    role = message.get("role")
    chars = 0
    if role == "system":
        chars = _content_chars(message.get("content"))
        sections = message.get("sections") or {}
        for section in sections.values():
            if section:
                chars += len(section)
        if message.get("toolsAdded"):
            chars += _js_json_length(message["toolsAdded"])
    elif role == "user" or role in ("custom", "toolResult"):
        chars = _content_chars(message.get("content"))
    elif role == "assistant":
        for block in message.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                chars += len(block.get("text", ""))
            elif kind == "thinking":
                chars += len(block.get("thinking", ""))
            elif kind == "toolCall":
                chars += len(block.get("name", "")) + _js_json_length(block.get("arguments", {}))
    elif role == "bashExecution":
        chars = len(message.get("command", "")) + len(message.get("output", ""))
    elif role in ("branchSummary", "compactionSummary"):
        chars = len(message.get("summary", ""))
    else:
        return 0
    return math.ceil(chars / 4)


def is_cut_point_message(message: Message) -> bool:
    return message.get("role") in (
        "user",
        "assistant",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    )


def is_turn_start_message(message: Message) -> bool:
    return message.get("role") in ("user", "bashExecution", "custom", "branchSummary", "compactionSummary")


def convert_to_llm(messages: list[Message]) -> list[Message]:
    """``convertToLlm``: custom and summary messages become user messages for the model."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "custom":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + m["summary"] + COMPACTION_SUMMARY_SUFFIX
            out.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": m.get("timestamp")}
            )
        elif role == "branchSummary":
            text = (
                "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
                + m["summary"]
                + "</summary>"
            )
            out.append(
                {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": m.get("timestamp")}
            )
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


def _truncate_for_summary(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n[... {len(text) - limit} more characters truncated]"


def serialize_conversation(messages: list[Message]) -> str:
    """``serializeConversation`` of compaction/utils.js, used by Pi's own summarizer."""
    parts: list[str] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            text = content_text(msg.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            content = msg.get("content") or []
            calls = []
            for block in content:
                if block.get("type") == "toolCall":
                    args = ", ".join(
                        f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
                        for k, v in (block.get("arguments") or {}).items()
                    )
                    calls.append(f"{block.get('name')}({args})")
            if any(block.get("type") == "text" for block in content):
                parts.append(f"[Assistant]: {content_text(content)}")
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif role == "toolResult":
            text = content_text(msg.get("content"))
            if text:
                parts.append(f"[Tool result]: {_truncate_for_summary(text, _TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)
