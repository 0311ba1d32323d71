"""Builders shared by the Pi Session Continuity reference tests."""

from __future__ import annotations

from typing import Any

# The spec §9 headings, written out here independently of the package constant, so a
# typo in the constant is caught rather than mirrored.
SPEC_HEADINGS = [
    "# Continuity Brief",
    "## Task",
    "## Done When",
    "## Constraints / Forbid",
    "## Established Facts",
    "## Current State",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Files and Artifacts",
    "## Validation Evidence",
    "## Open Questions",
    "## Next Actions",
    "## Do Not Repeat / Lessons Learned",
    "## Reference Context",
    "## External State / Assumptions",
    "## Recovery Instructions",
]


def make_body(overrides: dict[str, str] | None = None, *, omit: tuple[str, ...] = ()) -> str:
    """A valid Brief body; ``overrides`` replaces a section's text, ``omit`` drops headings."""
    sections = {heading: "None known." for heading in SPEC_HEADINGS}
    sections["# Continuity Brief"] = ""
    sections["## Current State"] = ""
    sections["## Task"] = "Fix the flaky upload test in tests/test_upload.py."
    sections["## Next Actions"] = "1. Re-run `pytest tests/test_upload.py -q`."
    sections["## Recovery Instructions"] = "Read this Brief first, then continue from Next Actions."
    sections.update(overrides or {})
    lines: list[str] = []
    for heading in SPEC_HEADINGS:
        if heading in omit:
            continue
        lines.append(heading)
        lines.append("")
        if sections[heading]:
            lines.append(sections[heading])
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def frontmatter_kwargs(**changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "status": "pending",
        "event_id": "0b7e6a52-3f4d-4a51-9b61-6d8b8c1f2a10",
        "session_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        "session_file": "/home/dev/.pi/agent/sessions/--work--/2026-11-30T00-00-00-000Z_s.jsonl",
        "created_at": "2026-11-30T00:01:02.123Z",
        "updated_at": "2026-11-30T00:01:02.123Z",
        "model_id": "anthropic/claude-sonnet",
        "synthesis_model": "anthropic/claude-sonnet",
        "synthesis_effort": "medium",
        "token_count_at_trigger": 279512,
        "context_window": 372000,
        "reserve_tokens": 93000,
        "keep_recent_tokens": 55800,
        "effective_trigger_percent": 75.0,
        "effective_keep_recent_percent": 15.0,
        "handoff_reason": "threshold",
        "branch_leaf_before": "710bafea",
    }
    values.update(changes)
    return values
