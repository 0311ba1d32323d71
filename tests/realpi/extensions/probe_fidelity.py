"""Tiny implementations for the differential fidelity tests (same behaviour on both targets).

* ``passive``: no handlers at all (Pi's own summarizer does every compaction).
* ``own``: returns its own compaction (``OWN-SUMMARY-<n>``, details ``{"by": "own"}``).
* ``cancel``: cancels every compaction.
* ``same``: returns the same summary text every time.
* ``cwd``: ``/probe-cwd`` reports whether the process cwd is the project directory.
* ``synth``: ``/probe-synth`` calls the model from the extension (``complete()``) and reports
  the reply's shape: stop reason, content block types, text and thinking (and ``errorMessage``
  when the reply has one).
* ``session_id``: ``/probe-session`` reports the session id and the session file's name.
* ``witness``: writes its summary to ``.pi/early.md`` in the hook and to ``.pi/late.md`` in
  ``session_compact`` (the ``summaryFiles`` witness must name the first only).
"""

from __future__ import annotations

import json
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


def witness(pi: ExtensionAPI) -> None:
    summary = "WITNESS-SUMMARY\n"

    def write(ctx: Any, name: str) -> None:
        directory = os.path.join(ctx.cwd, ".pi")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
            handle.write(summary)

    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        write(ctx, "early.md")
        prep = event.preparation
        return {
            "compaction": {
                "summary": summary,
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
            }
        }

    pi.on("session_before_compact", before_compact)
    pi.on("session_compact", lambda event, ctx: write(ctx, "late.md"))


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


def synth(pi: ExtensionAPI) -> None:
    """``/probe-synth``: one extension model call; notifies the reply's shape as JSON."""

    async def probe(args: str, ctx: Any) -> None:
        model = ctx.model
        message = await ctx.model_registry.complete(
            model,
            {"systemPrompt": "You write a brief.", "messages": [{"role": "user", "content": "brief"}]},
            max_tokens=1000,
        )
        content = message.get("content") or []
        shape = {
            "stopReason": message.get("stopReason"),
            "blocks": [b.get("type") for b in content],
            "text": "".join(b.get("text", "") for b in content if b.get("type") == "text"),
            "thinking": "".join(b.get("thinking", "") for b in content if b.get("type") == "thinking"),
        }
        if message.get("errorMessage") is not None:
            shape["errorMessage"] = message.get("errorMessage")
        ctx.ui.notify(json.dumps(shape, sort_keys=True), "info")

    pi.register_command("probe-synth", probe)


def session_id(pi: ExtensionAPI) -> None:
    """``/probe-session``: the session id and the session file's base name (after the timestamp)."""

    async def probe(args: str, ctx: Any) -> None:
        manager = ctx.session_manager
        name = os.path.basename(manager.get_session_file() or "")
        inside = os.path.dirname(manager.get_session_file() or "") == manager.get_session_dir()
        ctx.ui.notify(f"{manager.get_session_id()} {name.partition('_')[2]} inside={inside}", "info")

    pi.register_command("probe-session", probe)
