"""What a transcript's messages say, in pi-ai's and Pi's own words, as both targets show it.

Steps and invariants read message texts the way Pi writes them: pi-ai's ``contentText``
(:func:`content_text`) and the wrapper Pi's ``convertToLlm`` puts around a compaction summary
before a request reaches the model (``messages.js``), which a step looks for in the requests
the model received, on the simulator and on real Pi alike. The simulated host's port of
``messages.js`` (``simulator/messages.py``) uses these same definitions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMPACTION_SUMMARY_PREFIX", "COMPACTION_SUMMARY_SUFFIX", "content_text"]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"


def content_text(content: Any, separator: str = "") -> str:
    """pi-ai ``contentText``: the text blocks of a content value, joined (utils/text.js:2-9:
    ``.map((block) => block.text).join(separator)``, so a block without a text or with
    ``null`` adds ``""`` and a number its JavaScript string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        _joined(block.get("text"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _joined(value: Any) -> str:
    """A value as ``Array.prototype.join`` writes it: ``undefined``/``null`` as ``""``."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_joined(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)
