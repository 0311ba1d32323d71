"""A minimal continuity-like extension, for running the examples without the reference.

It does what a session-continuity extension does at the host seam, and nothing more:

* ``session_before_compact``: synthesises a summary with ``ctx.model_registry.complete``
  (passing ``event.signal``), writes it under ``<project>/.pi/probe/`` (so runs have
  project files to compare), and returns a custom compaction whose summary is unique
  (an event counter and a seeded random id, so Pi's first-equal-summary lookup never
  returns an older entry). A synthesis that does not end with ``stop`` cancels.
* ``session_compact``: for ``reason == "threshold"`` sends a ``followUp`` continuation.
* ``session_compact_failed``: notifies.
* ``/probe``: a command that asks one ``confirm`` and one ``select`` dialog and notifies.

It reads wall time through ``time.time()`` and randomness through ``uuid.uuid4()`` on
purpose: the simulator virtualises both, and the determinism tests prove it.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from pi_continuity_harness.api import CONFIG_DIR_NAME, ExtensionAPI, ExtensionContext
from pi_continuity_harness.scenario.transcript import content_text

__all__ = ["CONTINUATION_MARKER", "SYNTH_MARKER", "extension"]

SYNTH_MARKER = "[PROBE-SYNTH]"
CONTINUATION_MARKER = "PROBE-CONTINUE"


def _transcript(messages: list[dict[str, Any]]) -> str:
    lines = []
    for message in messages:
        text = content_text(message.get("content")) if message.get("role") != "compactionSummary" else ""
        if text:
            lines.append(f"[{message.get('role')}]: {text[:200]}")
    return "\n".join(lines) or "(nothing)"


def extension(pi: ExtensionAPI) -> None:
    state = {"events": 0}

    async def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        state["events"] += 1
        number = state["events"]
        prep = event.preparation
        messages = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
        reply = await ctx.model_registry.complete(
            ctx.model,  # type: ignore[arg-type]
            {
                "systemPrompt": f"{SYNTH_MARKER} Summarise the session.",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": _transcript(messages)}],
                        "timestamp": int(time.time() * 1000),
                    }
                ],
            },
            max_tokens=4000,
            signal=event.signal,
        )
        if reply.get("stopReason") != "stop":
            ctx.ui.notify(f"probe: synthesis ended with {reply.get('stopReason')}", "error")
            return {"cancel": True}
        body = content_text(reply.get("content"))
        event_id = str(uuid.uuid4())
        summary = f"PROBE-SUMMARY {number} {event.reason} {event_id}\n\n{body}"
        directory = os.path.join(ctx.cwd, CONFIG_DIR_NAME, "probe")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"brief-{number}.md"), "w", encoding="utf-8") as handle:
            handle.write(summary)
        return {
            "compaction": {
                "summary": summary,
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
                "details": {"probe": number, "eventId": event_id, "writtenAt": int(time.time())},
            }
        }

    def on_compact(event: Any, ctx: ExtensionContext) -> None:
        if event.reason == "threshold":
            pi.send_user_message(
                f"{CONTINUATION_MARKER} {event.compaction_entry.get('id')}", deliver_as="followUp"
            )

    def on_failed(event: Any, ctx: ExtensionContext) -> None:
        ctx.ui.notify(f"probe: compaction {event.reason} failed (aborted={event.aborted})", "warning")

    async def probe_command(args: str, ctx: Any) -> None:
        sure = await ctx.ui.confirm("Probe", "Show the probe status?")
        section = await ctx.ui.select("Probe section", ["summary", "settings"]) if sure else None
        ctx.ui.notify(f"probe: confirm={sure} section={section} args={args}", "info")

    pi.on("session_before_compact", before_compact)
    pi.on("session_compact", on_compact)
    pi.on("session_compact_failed", on_failed)
    pi.register_command("probe", probe_command, description="Probe status")
