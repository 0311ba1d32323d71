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
* ``odd_data``: ``/odd``, ``/oddmsg`` and ``/nan`` hand Pi data JSON cannot take as it is
  (a set, int keys, bytes, a NaN...) and notify what Pi stored.
* ``input_imager``: three ``input`` handlers, the first changing ``event.images`` in place.
* ``input_untexted``: an ``input`` transform without a (string) text.
* ``surrogate``: ``/surrogate`` appends a string with a lone surrogate.
* ``returner``: a compaction and a tool result whose details JSON cannot take as they are.
* ``loose_args``: ``/loose`` calls the API with arguments of other types than its own.
* ``unsubscriber``: the first ``agent_end`` handler unsubscribes the second during dispatch.
* ``thrower``: ``/throws`` makes the API calls where Pi throws an Error and notifies, per call,
  whether the exception is the API's ``PiError`` and its message.
* ``witness``: writes its summary to ``.pi/early.md`` in the hook and to ``.pi/late.md`` in
  ``session_compact`` (the ``summaryFiles`` witness must name the first only).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import pathlib
from typing import Any

from pi_continuity_harness.api import (
    ExtensionAPI,
    ExtensionContext,
    InputResult,
    PiError,
    ToolDefinition,
    ToolResult,
)
from pi_continuity_harness.simulator.model_service import PI_BUILTIN_PROVIDERS


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


def surface(pi: ExtensionAPI) -> None:
    """The extension API's edge cases, each command notifying what the API returned as JSON (no
    ids or times: what is compared must be the same on both targets).

    * ``/sm``: the session manager's lookups of unknown ids, the header's fields, the leaf.
    * ``/name``: ``set_session_name`` with line breaks and blanks; what each getter then says.
    * ``/entries``: ``append_entry`` with data of every JSON kind (and none); the entries' keys.
    * ``/state``: settings, tools, thinking level, pending, idle, usage, system prompt, model.
    * ``/ui``: notify of each type, a status cleared with ``None``, widgets with placements,
      ``input`` without a placeholder, ``editor`` with a prefill.
    * ``/alias``: whether changing what the API returned (or the data given to ``append_entry``)
      changes the session.
    * ``/setmodel``: ``pi.set_model`` to a model without auth, then to one with.
    * ``/catalog``: ``get_all`` (count, digest, order of providers), ``find`` of a built-in and of
      a scenario model, ``get_available``, and ``set_model``/``complete`` of the built-in one.
    * ``/unknown``: ``complete``, ``has_configured_auth`` and ``set_model`` with models the
      registry does not know (another id, another provider, other fields).
    * ``agent_start``/``agent_end``/``message_end`` handlers: ``is_idle``, ``has_pending_messages``
      and ``get_context_usage`` inside them (notified only when ``/watch`` turned them on).
    """
    watching = {"on": False, "steer": False, "report": False, "before": None}

    def note(ctx: Any, label: str, value: Any) -> None:
        ctx.ui.notify(f"{label}: {json.dumps(value, sort_keys=True)}", "info")

    def usage(ctx: Any) -> Any:
        found = ctx.get_context_usage()
        if found is None:
            return None
        return {"tokens": found.tokens, "window": found.context_window, "percent": found.percent}

    async def sm(args: str, ctx: Any) -> None:
        manager = ctx.session_manager
        entries = manager.get_entries()
        header = manager.get_header() or {}
        leaf = manager.get_leaf_entry()
        first = entries[0]["id"] if entries else None
        note(
            ctx,
            "sm",
            {
                "branchUnknown": manager.get_branch("no-such-entry"),
                "entryUnknown": manager.get_entry("no-such-entry"),
                "entryHeader": manager.get_entry(manager.get_session_id()) is not None,
                "headerKeys": sorted(header),
                "headerVersion": header.get("version"),
                "headerCwd": header.get("cwd") == ctx.cwd,
                "headerId": header.get("id") == manager.get_session_id(),
                "cwd": manager.get_cwd() == ctx.cwd,
                "leafType": None if leaf is None else leaf.get("type"),
                "leafIsLast": leaf is not None and leaf["id"] == entries[-1]["id"],
                "branchFirst": [e["type"] for e in manager.get_branch(first)] if first else None,
                "branch": [e["type"] for e in manager.get_branch()],
                "branchLeaf": len(manager.get_branch(manager.get_leaf_id())),
                "entries": [e["type"] for e in entries],
                "name": manager.get_session_name(),
            },
        )

    async def name(args: str, ctx: Any) -> None:
        seen = []
        for value in ("a\r\nb", " x \n\n y ", "tab\there", "\u00a0nbsp\u00a0", "\x1fsep\x1f", "   ", ""):
            pi.set_session_name(value)
            seen.append([pi.get_session_name(), ctx.session_manager.get_session_name()])
        names = [e.get("name") for e in ctx.session_manager.get_entries() if e["type"] == "session_info"]
        note(ctx, "name", {"seen": seen, "stored": names})

    async def entries(args: str, ctx: Any) -> None:
        values: list[Any] = [None, {}, {"a": {"b": [1, 2.5, None, True]}}, [1, "two"], "text", 0, False, 1.5]
        for index, value in enumerate(values):
            pi.append_entry(f"probe-{index}", value)
        customs = [e for e in ctx.session_manager.get_entries() if e["type"] == "custom"]
        note(
            ctx,
            "entries",
            [
                {"keys": list(e), "customType": e["customType"], "has": "data" in e, "data": e.get("data")}
                for e in customs
            ],
        )

    async def state(args: str, ctx: Any) -> None:
        model = ctx.model
        note(
            ctx,
            "state",
            {
                "settings": pi.get_settings(),
                "tools": pi.get_active_tools(),
                "thinking": pi.get_thinking_level(),
                "pending": ctx.has_pending_messages(),
                "idle": ctx.is_idle(),
                "usage": usage(ctx),
                "prompt": len(ctx.get_system_prompt()),
                "model": None if model is None else model.to_json(),
                "name": pi.get_session_name(),
                "trusted": ctx.is_project_trusted(),
            },
        )

    async def ui(args: str, ctx: Any) -> None:
        for kind in ("info", "warning", "error"):
            ctx.ui.notify(f"kind {kind}", kind)
        ctx.ui.set_status("kept", "on")
        ctx.ui.set_status("gone", "soon")
        ctx.ui.set_status("gone", None)
        ctx.ui.set_status("never", None)
        ctx.ui.set_widget("above", ["one", "two"])
        ctx.ui.set_widget("below", ["three"], placement="belowEditor")
        ctx.ui.set_widget("cleared", ["x"], placement="aboveEditor")
        ctx.ui.set_widget("cleared", None)
        ctx.ui.set_widget("empty", [])
        typed = await ctx.ui.input("No placeholder")
        edited = await ctx.ui.editor("Edit", "pre\nfilled")
        unanswered = await ctx.ui.editor("Unanswered")
        note(ctx, "ui", {"input": typed, "editor": edited, "unanswered": unanswered})

    async def setmodel(args: str, ctx: Any) -> None:
        registry = ctx.model_registry
        locked = registry.find("locked", "big")
        big = registry.find("fake", "fake-big")
        results: dict[str, Any] = {"lockedFound": locked is not None}
        if locked is not None:
            results["lockedAuth"] = registry.has_configured_auth(locked)
            results["locked"] = await pi.set_model(locked)
            results["afterLocked"] = ctx.model.full_id
        if big is not None:
            results["big"] = await pi.set_model(big)
            results["again"] = await pi.set_model(big)
            results["afterBig"] = ctx.model.full_id
        results["thinking"] = pi.get_thinking_level()
        results["available"] = [m.full_id for m in registry.get_available()]
        note(ctx, "setmodel", results)

    async def catalog(args: str, ctx: Any) -> None:
        """The registry's whole catalogue: Pi's built-in models, then models.json's."""
        registry = ctx.model_registry
        every = registry.get_all()
        rows = json.dumps([m.to_json() for m in every], sort_keys=True).encode()
        builtin = registry.find("anthropic", "claude-sonnet-4-5")
        results: dict[str, Any] = {
            "count": len(every),
            "digest": hashlib.sha256(rows).hexdigest(),
            "first": every[0].to_json() if every else None,
            "last": every[-1].full_id if every else None,
            "providers": list(dict.fromkeys(m.provider for m in every)),
            "builtin": builtin.to_json() if builtin is not None else None,
            "missing": registry.find("anthropic", "no-such-model") is not None,
            "fake": registry.find("fake", "fake-model").to_json(),
            "available": [m.full_id for m in registry.get_available()],
        }
        if builtin is not None:
            results["builtinAuth"] = registry.has_configured_auth(builtin)
            results["builtinSet"] = await pi.set_model(builtin)
            context = {
                "systemPrompt": "You note.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 0}],
            }
            reply = await registry.complete(builtin, context, max_tokens=64)
            results["builtinComplete"] = [reply.get("stopReason"), reply.get("errorMessage")]
        results["after"] = ctx.model.full_id
        note(ctx, "catalog", results)

    async def unknown(args: str, ctx: Any) -> None:
        """``complete``, ``has_configured_auth`` and ``set_model`` with models the registry does
        not know, made as a TypeScript extension's ``{...ctx.model, id: "other-model"}``: a
        provider Pi does not know (``nowhere``), a built-in one without auth (``anthropic``), the
        current model with fields of its own (``max_tokens``, ``name``), and a new id of the
        current provider; then which built-in providers have auth (none)."""
        registry = ctx.model_registry
        current = ctx.model
        context = {
            "systemPrompt": "You note.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 0}],
        }
        results: dict[str, Any] = {}
        for label, model in (
            ("stranger", dataclasses.replace(current, provider="nowhere", id="x")),
            ("builtin", dataclasses.replace(current, provider="anthropic", id="claude-x")),
            ("narrow", dataclasses.replace(current, max_tokens=77, name="Narrow")),
            ("other", dataclasses.replace(current, id="other-model")),
        ):
            seen: dict[str, Any] = {}
            try:
                reply = await registry.complete(model, context, max_tokens=64)
                seen["complete"] = {
                    key: reply.get(key) for key in ("stopReason", "errorMessage", "provider", "model")
                }
                seen["text"] = "".join(b.get("text", "") for b in reply.get("content") or [])
            except Exception as error:  # the old bridge: unknown model
                seen["complete"] = f"{type(error).__name__}: {error}"
            try:
                seen["auth"] = registry.has_configured_auth(model)
            except Exception as error:
                seen["auth"] = f"{type(error).__name__}: {error}"
            try:
                seen["set"] = await pi.set_model(model)
            except Exception as error:
                seen["set"] = f"{type(error).__name__}: {error}"
            seen["after"] = ctx.model.to_json()
            results[label] = seen
        results["thinking"] = pi.get_thinking_level()
        results["builtinAuth"] = [
            provider
            for provider in sorted(PI_BUILTIN_PROVIDERS)
            if registry.has_configured_auth(dataclasses.replace(current, provider=provider))
        ]
        note(ctx, "unknown", results)

    async def alias(args: str, ctx: Any) -> None:
        """What the API hands out is a copy (the bridge's JSON): changing it changes nothing."""
        manager = ctx.session_manager
        data: dict[str, Any] = {"n": 1, "inner": {"k": [1]}}
        pi.append_entry("alias-dict", data)
        data["n"] = 2
        data["inner"]["k"].append(2)
        pi.append_entry("alias-tuple", (1, 2))
        stored = [e for e in manager.get_entries() if e["type"] == "custom"]
        for getter in (
            lambda: manager.get_entries()[-1],
            manager.get_leaf_entry,
            lambda: manager.get_entry(manager.get_leaf_id()),
            lambda: manager.get_branch()[-1],
            manager.get_header,
        ):
            got = getter()
            got["type"] = "changed"
            got.pop("id", None)
        settings = pi.get_settings()
        settings["compaction"]["enabled"] = "changed"
        note(
            ctx,
            "alias",
            {
                "data": [e.get("data") for e in stored],
                "tupleType": type(stored[-1].get("data")).__name__,
                "types": [e["type"] for e in manager.get_entries()],
                "header": (manager.get_header() or {}).get("type"),
                "leaf": (manager.get_leaf_entry() or {}).get("type"),
                "leafHasId": "id" in (manager.get_leaf_entry() or {}),
                "enabled": pi.get_settings()["compaction"]["enabled"],
            },
        )

    async def watch(args: str, ctx: Any) -> None:
        watching["on"] = args == ""
        watching["steer"] = args == "steer"

    def inside(label: str) -> Any:
        def handler(event: Any, ctx: Any) -> None:
            if watching["on"]:
                note(
                    ctx,
                    label,
                    {"idle": ctx.is_idle(), "pending": ctx.has_pending_messages(), "usage": usage(ctx)},
                )

        return handler

    async def queue(args: str, ctx: Any) -> None:
        pi.send_user_message("queued follow-up", deliver_as="followUp")

    def steer_on_turn_end(event: Any, ctx: Any) -> None:
        """With ``/watch steer``: the first ``turn_end`` queues a steer and a follow-up; the next
        ``turn_end`` handler (Pi has awaited this one) says what ``has_pending_messages`` and
        ``is_idle`` say then. (Right after the call, in the same handler, the answer depends on
        the bridge's round trip: Pi queues the message a few microtasks later.)"""
        if watching.get("steer"):
            watching["steer"] = False
            watching["report"] = True
            watching["before"] = ctx.has_pending_messages()
            pi.send_user_message("steered", deliver_as="steer")
            pi.send_user_message("followed", deliver_as="followUp")

    def steer_report(event: Any, ctx: Any) -> None:
        if watching.get("report"):
            watching["report"] = False
            after = ctx.has_pending_messages()
            note(ctx, "steer", {"before": watching["before"], "after": after, "idle": ctx.is_idle()})

    pi.on("agent_start", inside("agent_start"))
    pi.on("agent_end", inside("agent_end"))
    pi.on("turn_end", inside("turn_end"))
    pi.on("turn_end", steer_on_turn_end)
    pi.on("turn_end", steer_report)
    for command, handler in (
        ("sm", sm),
        ("name", name),
        ("entries", entries),
        ("state", state),
        ("ui", ui),
        ("setmodel", setmodel),
        ("unknown", unknown),
        ("catalog", catalog),
        ("alias", alias),
        ("watch", watch),
        ("queue", queue),
    ):
        pi.register_command(command, handler)


def mutator(pi: ExtensionAPI) -> None:
    """Changes, in place, what its handlers are given and returns nothing: a user and an
    assistant message at ``message_end``, the messages of ``agent_end``, a tool call's input at
    ``tool_call``, and the messages to summarise of ``session_before_compact``. On real Pi a
    Python extension's event is a JSON copy (the bridge), so none of it reaches Pi."""

    def on_message_end(event: Any, ctx: ExtensionContext) -> None:
        event.message["content"] = [{"type": "text", "text": "MUTATED-" + str(event.message.get("role"))}]
        event.message["role"] = "mutated"

    def on_agent_end(event: Any, ctx: ExtensionContext) -> None:
        for message in event.messages:
            message["content"] = "MUTATED-END"
        event.messages.clear()

    def before_compact(event: Any, ctx: ExtensionContext) -> None:
        prep = event.preparation
        for message in prep.messages_to_summarize:
            message["content"] = [{"type": "text", "text": "MUTATED-PREP"}]
        prep.messages_to_summarize.clear()

    def on_tool_call(event: Any, ctx: ExtensionContext) -> None:
        event.input["command"] = "echo MUTATED"
        event.input["extra"] = True

    pi.on("message_end", on_message_end)
    pi.on("agent_end", on_agent_end)
    pi.on("tool_call", on_tool_call)
    pi.on("session_before_compact", before_compact)


def keeper(pi: ExtensionAPI) -> None:
    """Keeps what it gave Pi and changes it afterwards: ``/keep`` sends a custom message (no
    turn) and then changes the message's content; its ``session_before_compact`` returns a
    compaction whose ``details`` it changes at ``session_compact``. ``/kept`` notifies what the
    session holds. On real Pi both crossed the bridge as JSON when they were given."""
    kept: dict[str, Any] = {}

    async def keep(args: str, ctx: Any) -> None:
        message = {"customType": "kept", "content": [{"type": "text", "text": "ORIGINAL"}], "display": True}
        pi.send_message(message)
        message["content"][0]["text"] = "CHANGED"
        message["content"].append({"type": "text", "text": "ADDED"})

    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        kept["details"] = {"state": "ORIGINAL", "list": [1]}
        prep = event.preparation
        return {
            "compaction": {
                "summary": "KEPT-SUMMARY",
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
                "details": kept["details"],
            }
        }

    def on_compact(event: Any, ctx: ExtensionContext) -> None:
        kept["details"]["state"] = "CHANGED"
        kept["details"]["list"].append(2)

    async def report(args: str, ctx: Any) -> None:
        entries = ctx.session_manager.get_entries()
        ctx.ui.notify(
            "kept: "
            + json.dumps(
                {
                    "custom": [e.get("content") for e in entries if e["type"] == "custom_message"],
                    "details": [e.get("details") for e in entries if e["type"] == "compaction"],
                },
                sort_keys=True,
            ),
            "info",
        )

    pi.register_command("keep", keep)
    pi.register_command("kept", report)
    pi.on("session_before_compact", before_compact)
    pi.on("session_compact", on_compact)


def tool_keeper(pi: ExtensionAPI) -> None:
    """A tool ``keep_items`` whose ``execute`` changes its params in place and returns content
    and details it keeps and changes at ``agent_end``. On real Pi the params reach Python as JSON
    and the result goes back as JSON, so none of the changes is Pi's."""
    kept: dict[str, Any] = {}

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        params["items"].append("ADDED-BY-EXECUTE")
        kept["content"] = [{"type": "text", "text": "ORIGINAL"}]
        kept["details"] = {"state": "ORIGINAL"}
        return ToolResult(content=kept["content"], details=kept["details"])

    def on_agent_end(event: Any, ctx: ExtensionContext) -> None:
        if kept:
            kept["content"][0]["text"] = "CHANGED"
            kept["details"]["state"] = "CHANGED"

    pi.register_tool(
        ToolDefinition(
            name="keep_items",
            label="Keep items",
            description="Keeps items.",
            parameters={
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"type": "string"}}},
                "required": ["items"],
            },
            execute=execute,
        )
    )
    pi.on("agent_end", on_agent_end)


def call_keeper(pi: ExtensionAPI) -> None:
    """``/twice``: two ``complete()`` calls on one message list, changing the first request's
    message and the first reply in place after the call (the list reused, as a chat loop does)."""

    async def twice(args: str, ctx: Any) -> None:
        messages: list[Any] = [
            {"role": "user", "content": [{"type": "text", "text": "first"}], "timestamp": 0}
        ]
        context = {"systemPrompt": "You answer.", "messages": messages}
        first = await ctx.model_registry.complete(ctx.model, context, max_tokens=1000)
        messages[0]["content"][0]["text"] = "CHANGED-REQUEST"
        first["content"] = [{"type": "text", "text": "CHANGED-REPLY"}]
        messages.append(first)
        messages.append({"role": "user", "content": [{"type": "text", "text": "second"}], "timestamp": 0})
        second = await ctx.model_registry.complete(ctx.model, context, max_tokens=1000)
        ctx.ui.notify(json.dumps([first.get("stopReason"), second.get("stopReason")]), "info")

    pi.register_command("twice", twice)


#: A 1x1 black RGB PNG (``tests/realpi/test_differential_images.py``).
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC"


def imager(pi: ExtensionAPI) -> None:
    """``/img``: ``send_user_message`` with a text part and an image part."""

    async def img(args: str, ctx: Any) -> None:
        pi.send_user_message(
            [{"type": "text", "text": "look"}, {"type": "image", "data": PIXEL, "mimeType": "image/png"}]
        )

    pi.register_command("img", img)


def odd_data(pi: ExtensionAPI) -> None:
    """What a Python extension's data that JSON cannot take as it is becomes on its way to Pi.

    * ``/odd``: ``append_entry`` with a set, a frozenset, a tuple, dicts with int, float, bool
      and ``None`` keys, a tuple key, bytes, a ``Path``, a dataclass; notifies each call's
      outcome (``ok`` or the exception's type) and then the custom entries' data.
    * ``/oddmsg``: ``send_message`` whose ``details`` hold a set and bytes; notifies the custom
      message entry's details.
    * ``/nan``: ``append_entry`` with NaN, then with infinity, then with 1, ``send_message``,
      ``notify`` and ``set_status`` with a NaN or an infinity; notifies outcomes, the custom
      entries' data and the custom messages.
    """

    @dataclasses.dataclass
    class Point:
        x: int
        y: list[int]

    def note(ctx: Any, label: str, value: Any) -> None:
        ctx.ui.notify(f"{label}: {json.dumps(value, sort_keys=True)}", "info")

    def customs(ctx: Any) -> list[Any]:
        return [
            [e["customType"], e.get("data"), "data" in e]
            for e in ctx.session_manager.get_entries()
            if e["type"] == "custom"
        ]

    def outcome(call: Any) -> str:
        try:
            call()
        except Exception as error:
            return type(error).__name__
        return "ok"

    async def odd(args: str, ctx: Any) -> None:
        values: list[tuple[str, Any]] = [
            ("set", {3, 1, 2}),
            ("frozenset", frozenset({"a"})),
            ("nested-set", {"s": {5}, "t": (1, (2, 3))}),
            ("int-keys", {1: "one", 2: {3: "three"}}),
            ("float-key", {2.5: "x"}),
            ("bool-key", {True: "t", False: "f"}),
            ("none-key", {None: "n"}),
            ("tuple-key", {(1, 2): "x"}),
            ("bytes", b"ab"),
            ("path", pathlib.PurePosixPath("a/b")),
            ("dataclass", Point(1, [2])),
            ("numbers", [1.0, -0.0, 2**64, 10**400, 1e21, 1e300, 0.1, 2**53 + 1]),
        ]
        outcomes = {label: outcome(lambda v=value, n=label: pi.append_entry(n, v)) for label, value in values}
        note(ctx, "odd", {"outcomes": outcomes, "entries": customs(ctx)})

    async def oddmsg(args: str, ctx: Any) -> None:
        message = {
            "customType": "odd",
            "content": "odd content",
            "display": True,
            "details": {"s": {1}, "b": b"x"},
        }
        sent = outcome(lambda: pi.send_message(message))
        details = [
            e.get("details") for e in ctx.session_manager.get_entries() if e["type"] == "custom_message"
        ]
        note(ctx, "oddmsg", {"outcome": sent, "details": details})

    async def nan(args: str, ctx: Any) -> None:
        outcomes = [
            outcome(lambda: pi.append_entry("nan", {"x": float("nan")})),
            outcome(lambda: pi.append_entry("inf", [float("inf")])),
            outcome(lambda: pi.append_entry("one", 1)),
            outcome(lambda: pi.send_message({"customType": "nan", "content": "c", "details": float("nan")})),
            outcome(lambda: ctx.ui.notify({"n": float("-inf")}, "info")),
            outcome(lambda: ctx.ui.set_status("nan", float("nan"))),
        ]
        messages = [
            e["customType"] for e in ctx.session_manager.get_entries() if e["type"] == "custom_message"
        ]
        note(ctx, "nan", {"outcomes": outcomes, "entries": customs(ctx), "messages": messages})

    pi.register_command("odd", odd)
    pi.register_command("oddmsg", oddmsg)
    pi.register_command("nan", nan)


def input_imager(pi: ExtensionAPI) -> None:
    """Three ``input`` handlers on a prompt with one image: the first changes ``event.images``
    in place (adds a key to the image and a second image) and returns nothing; the second
    notifies what it sees and transforms the text, returning copies of the images it keeps; the
    third changes those kept images. On real Pi each handler's event is parsed anew from JSON
    and a handler's result crosses back as JSON (the bridge), so none of it reaches Pi."""
    kept: list[Any] = []

    def change(event: Any, ctx: Any) -> None:
        if event.images:
            event.images[0]["extra"] = "MUTATED"
            event.images.append(dict(event.images[0]))

    def look(event: Any, ctx: Any) -> Any:
        seen = [sorted(image) for image in event.images or []]
        ctx.ui.notify("input: " + json.dumps({"text": event.text, "images": seen}), "info")
        kept.extend(dict(image) for image in event.images or [])
        return {"action": "transform", "text": event.text + " (transformed)", "images": kept}

    def later(event: Any, ctx: Any) -> None:
        for image in kept:
            image["data"] = "CHANGED-AFTER-RETURN"

    pi.on("input", change)
    pi.on("input", look)
    pi.on("input", later)


def input_untexted(pi: ExtensionAPI) -> None:
    """An ``input`` handler whose transform has no usable text, and one that notifies the text it
    sees. ``/how <kind>`` picks the transform: ``missing`` (no ``text`` key), ``none`` (``text:
    None``), ``number`` (``text: 5``), ``result`` (``InputResult("transform")``), ``off``.
    ``/send <text>``: ``send_user_message`` of the text (``sent`` without one)."""
    how = {"kind": "off"}

    def transform(event: Any, ctx: Any) -> Any:
        kind = how["kind"]
        if kind == "missing":
            return {"action": "transform"}
        if kind == "none":
            return {"action": "transform", "text": None}
        if kind == "number":
            return {"action": "transform", "text": 5}
        if kind == "result":
            return InputResult("transform")
        return None

    def look(event: Any, ctx: Any) -> None:
        ctx.ui.notify("input: " + json.dumps({"text": event.text}), "info")

    async def choose(args: str, ctx: Any) -> None:
        how["kind"] = args

    async def send(args: str, ctx: Any) -> None:
        pi.send_user_message(args or "sent")

    pi.on("input", transform)
    pi.on("input", look)
    pi.register_command("how", choose)
    pi.register_command("send", send)


def surrogate(pi: ExtensionAPI) -> None:
    """``/surrogate``: ``append_entry`` with a lone surrogate in a string, then a plain one;
    notifies the outcomes and the custom entries' data (the surrogate escaped)."""

    async def probe(args: str, ctx: Any) -> None:
        results = []
        for value in ("lone \ud800 surrogate", "plain"):
            try:
                pi.append_entry("text", value)
                results.append("ok")
            except Exception as error:
                results.append(type(error).__name__)
        try:
            data = [e.get("data") for e in ctx.session_manager.get_entries() if e["type"] == "custom"]
        except Exception as error:
            data = [type(error).__name__]
        ctx.ui.notify("surrogate: " + json.dumps({"outcomes": results, "data": data}), "info")

    pi.register_command("surrogate", probe)


def returner(pi: ExtensionAPI) -> None:
    """What a handler or a tool returns that JSON cannot take as it is: a compaction whose
    ``details`` hold a set, a float 2.0, bytes and a tuple; a tool ``odd_result`` whose details
    hold a set and 1.0."""

    def before_compact(event: Any, ctx: ExtensionContext) -> Any:
        prep = event.preparation
        return {
            "compaction": {
                "summary": "RETURNED",
                "firstKeptEntryId": prep.first_kept_entry_id,
                "tokensBefore": prep.tokens_before,
                "details": {"s": {2, 1}, "f": 2.0, "b": b"x", "t": (1, 2)},
            }
        }

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "done"}], details={"s": {3}, "f": 1.0})

    pi.on("session_before_compact", before_compact)
    pi.register_tool(
        ToolDefinition(
            name="odd_result",
            label="Odd result",
            description="Returns odd details.",
            parameters={"type": "object", "properties": {}},
            execute=execute,
        )
    )


def loose_args(pi: ExtensionAPI) -> None:
    """``/loose``: API calls with arguments of another type than the API's: a session name that
    is a number, ``None`` or a tuple, a notification whose message is a dict or whose type is
    unknown, a status that is a number, widget lines as a tuple, a custom type that is a
    number; notifies each call's outcome and what the session then holds."""

    async def run(args: str, ctx: Any) -> None:
        out: dict[str, Any] = {}

        def attempt(label: str, call: Any) -> None:
            try:
                call()
                out[label] = "ok"
            except Exception as error:
                out[label] = type(error).__name__ + ": " + str(error)

        attempt("name-int", lambda: pi.set_session_name(5))
        attempt("name-none", lambda: pi.set_session_name(None))
        attempt("name-tuple", lambda: pi.set_session_name(("a", "b")))
        attempt("notify-dict", lambda: ctx.ui.notify({"a": 1}, "info"))
        attempt("notify-bogus", lambda: ctx.ui.notify("bogus kind", "bogus"))
        attempt("status-int", lambda: ctx.ui.set_status("k", 5))
        attempt("widget-tuple", lambda: ctx.ui.set_widget("w", ("a", "b")))
        attempt("entry-type-int", lambda: pi.append_entry(7, {"x": 1}))
        out["name"] = pi.get_session_name()
        out["infos"] = [
            e.get("name") for e in ctx.session_manager.get_entries() if e["type"] == "session_info"
        ]
        entries = ctx.session_manager.get_entries()
        out["customs"] = [[e.get("customType"), e.get("data")] for e in entries if e["type"] == "custom"]
        ctx.ui.notify("loose: " + json.dumps(out), "info")

    pi.register_command("loose", run)


def unsubscriber(pi: ExtensionAPI) -> None:
    """Two ``agent_end`` handlers: the first unsubscribes the second (once) and notifies; the
    second notifies when it runs."""
    state: dict[str, Any] = {"off": None}

    def first(event: Any, ctx: Any) -> None:
        ctx.ui.notify("first ran", "info")
        if state["off"] is not None:
            state["off"]()
            state["off"] = None

    def second(event: Any, ctx: Any) -> None:
        ctx.ui.notify("second ran", "info")

    pi.on("agent_end", first)
    state["off"] = pi.on("agent_end", second)


def thrower(pi: ExtensionAPI) -> None:
    """``/throws``: the API calls where Pi 1.6 throws an Error, each notifying ``[isinstance(error,
    PiError), str(error)]``. Idle: ``ctx.ui.theme.fg`` of an unknown token, ``navigate_tree`` to an
    unknown entry (``idle: {...}``), then ``ctx.compact`` of a session too small, whose
    ``on_error`` notifies ``compact: [...]``. ``/throws busy`` (sent while a reply streams):
    ``reload`` and ``navigate_tree`` (``busy: {...}``)."""

    def outcome(error: BaseException) -> list[Any]:
        return [isinstance(error, PiError), str(error)]

    async def run(args: str, ctx: Any) -> None:
        out: dict[str, Any] = {}

        async def attempt(label: str, call: Any) -> None:
            try:
                value = call()
                if inspect.isawaitable(value):
                    await value
                out[label] = "no error"
            except Exception as error:
                out[label] = outcome(error)

        if args == "busy":
            await attempt("reload", ctx.reload)
            await attempt("navigate", lambda: ctx.navigate_tree("nope"))
            ctx.ui.notify("busy: " + json.dumps(out), "info")
            return
        await attempt("theme", lambda: ctx.ui.theme.fg("bogus", "x"))
        await attempt("navigate", lambda: ctx.navigate_tree("nope"))
        ctx.ui.notify("idle: " + json.dumps(out), "info")
        ctx.compact(on_error=lambda error: ctx.ui.notify("compact: " + json.dumps(outcome(error)), "info"))

    pi.register_command("throws", run)
