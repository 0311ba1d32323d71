"""Tiny implementations for the differential fidelity tests (same behaviour on both targets).

* ``passive``: no handlers at all (Pi's own summarizer does every compaction).
* ``own``: returns its own compaction (``OWN-SUMMARY-<n>``, details ``{"by": "own"}``).
* ``cancel``: cancels every compaction.
* ``same``: returns the same summary text every time.
* ``cwd``: ``/probe-cwd`` reports whether the process cwd is the project directory.
"""

from __future__ import annotations

import os
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ExtensionContext


def passive(pi: ExtensionAPI) -> None:
    """Registers nothing."""


def own(pi: ExtensionAPI) -> None:
    count = {"n": 0}

    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        count["n"] += 1
        return {
            "compaction": {
                "summary": f"OWN-SUMMARY-{count['n']}",
                "firstKeptEntryId": event.preparation.first_kept_entry_id,
                "tokensBefore": event.preparation.tokens_before,
                "details": {"by": "own"},
            }
        }

    pi.on("session_before_compact", before_compact)


def cancel(pi: ExtensionAPI) -> None:
    pi.on("session_before_compact", lambda event, ctx: {"cancel": True})


def same(pi: ExtensionAPI) -> None:
    """Returns the same summary text for every compaction (§9.9: Pi's summary-text lookup)."""

    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        prep = event.preparation
        return {
            "compaction": {
                "summary": "SAME-SUMMARY",
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
            }
        }

    pi.on("session_before_compact", before_compact)


def cwd(pi: ExtensionAPI) -> None:
    """``/probe-cwd``: is the process cwd the project directory? (writes ``relative.txt`` there)."""

    async def probe(args: str, ctx: Any) -> None:
        with open("relative.txt", "w", encoding="utf-8") as handle:
            handle.write("written with a relative path")
        ctx.ui.notify(f"cwd is the project: {os.getcwd() == ctx.cwd}", "info")

    pi.register_command("probe-cwd", probe)
