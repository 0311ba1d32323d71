"""A tiny Python continuity extension used to check the bridge on real Pi and the simulator.

* ``session_before_compact``: synthesises through ``ctx.model_registry.complete`` with the
  event's signal; a Brief that did not ``stop`` cancels the compaction, otherwise the Brief
  (made unique) is the compaction summary.
* ``session_compact``: on ``threshold`` sends a ``followUp`` continuation.
* ``/probe-ask``: three dialogs (answered by ``when`` rules), then a notify with the answers.
* ``/probe-unanswered SECONDS``: a timed confirm no answer meets; whether it waited the timeout.
* ``/probe-stale``: uses the ``ctx`` and ``pi`` captured by the *first* instance.
* ``/probe-write NAME``: writes ``probe-out/NAME.txt`` under the project (fs faults).
* ``/probe-info``: notifies what the context reports.
* ``/probe-pause MS``: returns after ``MS`` milliseconds (a ``during`` operation that takes that
  long on both targets: Pi answers a command when its handler has returned, a prompt when its
  run has started).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from pi_continuity_harness.api import (
    CONFIG_DIR_NAME,
    ExtensionAPI,
    ExtensionCommandContext,
    ExtensionContext,
    StaleContextError,
)

#: The first instance's ``pi`` and ``ctx`` (module state survives reloads in one process).
CAPTURED: dict[str, Any] = {}
CONTINUATION = "PROBE-CONTINUE: resume from the Brief."


def extension(pi: ExtensionAPI) -> None:
    state = {"briefs": 0}

    async def on_start(event: Any, ctx: ExtensionContext) -> None:
        CAPTURED.setdefault("ctx", ctx)
        CAPTURED.setdefault("pi", pi)
        ctx.ui.set_status("probe", f"started:{event.reason}")

    async def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        model = ctx.model
        assert model is not None
        prep = event.preparation
        transcript = "\n".join(
            f"[{m.get('role')}] {json.dumps(m.get('content'))[:200]}" for m in prep.messages_to_summarize
        )
        message = await ctx.model_registry.complete(
            model,
            {
                "systemPrompt": "You write a Continuity Brief.",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": f"<transcript>{transcript}</transcript>"}],
                    }
                ],
            },
            max_tokens=4000,
            signal=event.signal,
        )
        if message.get("stopReason") != "stop":
            ctx.ui.notify(f"probe: synthesis {message.get('stopReason')}", "error")
            return {"cancel": True}
        state["briefs"] += 1
        text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
        return {
            "compaction": {
                "summary": f"PROBE-BRIEF-{state['briefs']}\n{text}",
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
                "details": {"probe": True, "reason": event.reason},
            }
        }

    def on_compact(event: Any, ctx: ExtensionContext) -> None:
        ctx.ui.notify(f"probe: compacted {event.reason} fromExtension={event.from_extension}", "info")
        if event.reason == "threshold":
            pi.send_user_message(CONTINUATION, deliver_as="followUp")

    def on_model(event: Any, ctx: ExtensionContext) -> None:
        ctx.ui.notify(f"probe: model {event.model.full_id} window {event.model.context_window}", "info")

    async def ask(args: str, ctx: ExtensionCommandContext) -> None:
        confirm = await ctx.ui.confirm("Probe", f"Proceed with {args or 'nothing'}?")
        section = await ctx.ui.select("Pick a section", ["armed", "settings", "artifacts"])
        percent = await ctx.ui.input("Trigger percent", "75")
        answers = {"confirm": confirm, "select": section, "input": percent}
        ctx.ui.notify("Answers: " + json.dumps(answers, sort_keys=True), "info")

    async def held(args: str, ctx: ExtensionCommandContext) -> None:
        """A select, one model call (``ctx.model_registry.complete``: what a scenario holds),
        then another select: the held command's later dialog after a ``during`` command."""
        first = await ctx.ui.select("First", ["a", "b"])
        model = ctx.model
        if model is not None:
            text = {"type": "text", "text": "note"}
            context = {
                "systemPrompt": "You note.",
                "messages": [{"role": "user", "content": [text], "timestamp": 0}],
            }
            await ctx.model_registry.complete(model, context, max_tokens=64)
        second = await ctx.ui.select("Second", ["c", "d"])
        ctx.ui.notify(f"held: first={first} second={second}", "info")

    async def timed(args: str, ctx: ExtensionCommandContext) -> None:
        """A confirm with a 1 ms timeout (or the seconds given as the argument): Pi gives its
        default unless the answer comes first."""
        confirmed = await ctx.ui.confirm("Timed", "Wait?", timeout=float(args) if args.strip() else 0.001)
        ctx.ui.notify(f"timed: {json.dumps(confirmed)}", "info")

    async def unanswered(args: str, ctx: ExtensionCommandContext) -> None:
        """A confirm with a timeout of ``args`` seconds that no answer meets: Pi's timer gives its
        default. Notifies the default and whether the handler waited the timeout out
        (``time.time()``: wall time on real Pi, virtual time on the simulator; 2 ms of slack for
        Node's millisecond timers)."""
        timeout = float(args)
        start = time.time()
        confirmed = await ctx.ui.confirm("Unanswered", "Wait?", timeout=timeout)
        waited = time.time() - start >= timeout - 0.002
        ctx.ui.notify(f"unanswered: {json.dumps(confirmed)} waited: {json.dumps(waited)}", "info")

    async def stale(args: str, ctx: ExtensionCommandContext) -> None:
        outcomes = []
        old_ctx, old_pi = CAPTURED["ctx"], CAPTURED["pi"]
        for label, use in (
            ("ctx", old_ctx.is_idle),
            ("pi", lambda: old_pi.append_entry("probe-stale")),
            ("current", ctx.is_idle),
        ):
            try:
                use()
                outcomes.append(f"{label}:ok")
            except StaleContextError:
                outcomes.append(f"{label}:stale")
        ctx.ui.notify("stale: " + " ".join(outcomes), "info")

    async def write(args: str, ctx: ExtensionCommandContext) -> None:
        name = args or "note"
        target = os.path.join(ctx.cwd, "probe-out", f"{name}.txt")
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(name)
            ctx.ui.notify(f"write {name}: ok", "info")
        except OSError as error:
            ctx.ui.notify(f"write {name}: {error.strerror}", "error")

    async def pause(args: str, _ctx: ExtensionCommandContext) -> None:
        await asyncio.sleep(int(args) / 1000)

    async def info(args: str, ctx: ExtensionCommandContext) -> None:
        usage = ctx.get_context_usage()
        model = ctx.model
        data = {
            "mode": ctx.mode,
            "hasUI": ctx.has_ui,
            "idle": ctx.is_idle(),
            "trusted": ctx.is_project_trusted(),
            "configDir": CONFIG_DIR_NAME,
            "model": model.full_id if model else None,
            "window": usage.context_window if usage else None,
            "sessionId": ctx.session_manager.get_session_id(),
            "entries": len(ctx.session_manager.get_entries()),
        }
        ctx.ui.notify("info: " + json.dumps(data, sort_keys=True), "info")

    pi.on("session_start", on_start)
    pi.on("session_before_compact", before_compact)
    pi.on("session_compact", on_compact)
    pi.on("model_select", on_model)
    pi.register_command("probe-ask", ask, description="three dialogs")
    pi.register_command("probe-held", held, description="a select, a model call, a select")
    pi.register_command("probe-timed", timed, description="a confirm with a 1 ms timeout")
    pi.register_command("probe-unanswered", unanswered, description="a timed confirm nobody answers")
    pi.register_command("probe-stale", stale, description="use the first instance's ctx and pi")
    pi.register_command("probe-write", write, description="write a file under the project")
    pi.register_command("probe-info", info, description="report the context")
    pi.register_command("probe-pause", pause, description="return after MS milliseconds")
