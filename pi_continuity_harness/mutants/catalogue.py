"""Mutants of the reference: each breaks exactly one spec rule, each must be caught.

A mutant is an extension factory, resolvable as
``pi_continuity_harness.mutants.catalogue:<name>`` (every name is a module attribute; the blitz
handoff mutants of :mod:`.blitz` as ``pi_continuity_harness.mutants.blitz:<Class>.extension``,
:attr:`Mutant.spec` names it) and listed by ``pi-continuity-harness mutants list``. Most wrap the reference's ``pi`` and
``ctx`` in proxies (one handler, one call changed, everything else passed through); where a
rule lives inside a module, the factory patches one attribute of a reference module *when it
runs* and never restores it. So always run a mutant in its own process: the ``mutants``
command does (``python -m pi_continuity_harness.cli run --extension ...`` per mutant).

``hardcoded_dot_pi`` builds its paths from a literal relative ``.pi``; the simulator runs
extensions with the project as working directory (as real Pi does), so the files land where
they belong and only the reported paths give it away. The ``mutants`` command still runs every
mutant from a fresh scratch directory, so a mutant can never write into the caller's tree.

The :data:`CANARY` mutant cancels every compaction; a detector that misses it is broken.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.api import BeforeCompactResult, CompactionResult, ExtensionAPI
from pi_continuity_harness.mutants import blitz
from pi_continuity_harness.mutants.pristine import from_pristine
from pi_continuity_harness.reference.psc import extension as reference_extension

__all__ = ["CANARY", "MUTANTS", "Mutant", "spec_for"]

CANARY = "canary_cancels_every_compaction"


@dataclass(frozen=True)
class Mutant:
    """One deliberately wrong implementation: the rule it breaks, and how."""

    name: str
    rule: str
    how: str
    factory: Callable[[ExtensionAPI], None]
    #: The ``--extension`` value that loads it in a fresh process.
    spec: str
    canary: bool = False
    #: The implementation it changes (a registered name); the kill matrix runs it as the control.
    reference: str = "reference"
    #: The ids of the catalogue rules it breaks (``pi_continuity_harness.rules``); the kill matrix
    #: runs the scenarios that prove them (plus a sample) instead of the whole suite. Empty: the suite.
    rules: tuple[str, ...] = ()
    #: Whether the explorer can reach what it breaks (False: judged by the features alone).
    explorable: bool = True
    #: The invariant expected to catch it (None: any).
    invariant: str | None = None


MUTANTS: dict[str, Mutant] = {}


def spec_for(name: str) -> str:
    """The ``--extension`` value that loads the mutant ``name``."""
    return MUTANTS[name].spec


def _module(name: str) -> Any:
    """A reference submodule (``psc.extension`` is shadowed by the factory of that name)."""
    return importlib.import_module(f"pi_continuity_harness.reference.psc.{name}")


def _mutant(
    rules: tuple[str, ...], rule: str, how: str, *, canary: bool = False
) -> Callable[[Callable[[ExtensionAPI], None]], Callable[[ExtensionAPI], None]]:
    def register(factory: Callable[[ExtensionAPI], None]) -> Callable[[ExtensionAPI], None]:
        name = factory.__name__
        load = from_pristine(factory)
        MUTANTS[name] = Mutant(name, rule, how, load, f"{__name__}:{name}", canary, rules=rules)
        return load

    return register


# ============================================================================ proxies
Handler = Callable[[Any, Any], Any]
Wrap = Callable[[Handler], Handler]


async def _call(handler: Handler, event: Any, ctx: Any) -> Any:
    result = handler(event, ctx)
    if inspect.isawaitable(result):
        result = await result
    return result


class _Pi:
    """``pi`` with some event handlers, the command handler or calls changed."""

    def __init__(
        self,
        pi: ExtensionAPI,
        *,
        on: dict[str, Wrap] | None = None,
        every: Wrap | None = None,
        command: Wrap | None = None,
        send_user_message: Callable[..., None] | None = None,
    ) -> None:
        self._pi = pi
        self._on = on or {}
        self._every = every
        self._command = command
        self._send = send_user_message

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pi, name)

    def on(self, event: str, handler: Handler) -> Any:
        if event in self._on:
            handler = self._on[event](handler)
        if self._every is not None:
            handler = self._every(handler)
        return self._pi.on(event, handler)

    def register_command(self, name: str, handler: Handler, **options: Any) -> None:
        if self._command is not None:
            handler = self._command(handler)
        if self._every is not None:
            handler = self._every(handler)
        self._pi.register_command(name, handler, **options)

    def send_user_message(self, content: Any, **options: Any) -> None:
        if self._send is not None:
            self._send(self._pi, content, **options)
        else:
            self._pi.send_user_message(content, **options)


class _UI:
    def __init__(self, ui: Any, **overrides: Any) -> None:
        self._ui = ui
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(self._ui, name)


class _Ctx:
    """``ctx`` whose ``ui`` has some methods replaced."""

    def __init__(self, ctx: Any, ui: Callable[[Any], Any]) -> None:
        self._ctx = ctx
        self._make_ui = ui

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    @property
    def ui(self) -> Any:
        return self._make_ui(self._ctx.ui)


def _with_ctx(make_ui: Callable[[Any], Any]) -> Wrap:
    def wrap(handler: Handler) -> Handler:
        async def wrapped(event: Any, ctx: Any) -> Any:
            return await _call(handler, event, _Ctx(ctx, make_ui))

        return wrapped

    return wrap


def _after_before_compact(
    change: Callable[[Any, Any, Any, BeforeCompactResult | None], Awaitable[Any] | Any],
) -> Wrap:
    """Wrap ``session_before_compact``: ``change(app, event, ctx, result)`` decides the result."""

    def wrap(handler: Handler) -> Handler:
        app = getattr(handler, "__self__", None)

        async def wrapped(event: Any, ctx: Any) -> Any:
            result = await _call(handler, event, ctx)
            changed = change(app, event, ctx, result)
            if inspect.isawaitable(changed):
                changed = await changed
            return changed

        return wrapped

    return wrap


def _reference(pi: ExtensionAPI, **proxy: Any) -> _Pi:
    wrapped = _Pi(pi, **proxy)
    reference_extension(wrapped)
    return wrapped


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


# ============================================================================ the canary
@_mutant(
    ("P19a", "P19b", "P19c"),
    "(canary) §3 core invariant: a valid Brief becomes the compaction summary; this mutant cancels every "
    "native compaction, so no Brief ever commits",
    "session_before_compact always returns {cancel: true}",
    canary=True,
)
def canary_cancels_every_compaction(pi: ExtensionAPI) -> None:
    _reference(
        pi,
        on={
            "session_before_compact": _after_before_compact(
                lambda a, e, c, r: BeforeCompactResult(cancel=True)
            )
        },
    )


# ============================================================================ the summary
def _regenerate(app: Any, event: Any, ctx: Any, result: BeforeCompactResult | None) -> Any:
    if isinstance(result, BeforeCompactResult) and result.compaction is not None:
        text = result.compaction.summary.rstrip("\n") + "\n\nSummary regenerated from memory.\n"
        return dataclasses.replace(result, compaction=dataclasses.replace(result.compaction, summary=text))
    return result


@_mutant(
    ("P2",),
    "§3: the extension must return the exact re-read artifact content as the custom compaction summary; it must "
    "not regenerate a separate summary from memory",
    "the returned summary is the Brief re-rendered with one extra line, not the disk bytes",
)
def summary_regenerated(pi: ExtensionAPI) -> None:
    _reference(pi, on={"session_before_compact": _after_before_compact(_regenerate)})


def _falls_back_on(phase: str) -> Callable[[Any, Any, Any, Any], Any]:
    def change(app: Any, event: Any, ctx: Any, result: Any) -> Any:
        failure = str(getattr(getattr(app, "state", None), "last_failure", "") or "")
        if isinstance(result, BeforeCompactResult) and result.cancel and failure.startswith(phase):
            return None  # no result: Pi falls back to its own summary
        return result

    return change


@_mutant(
    ("P3c", "P5a", "P73"),
    "§3: a failed write or re-read must cancel compaction (fail closed)",
    "when writing the pending Brief fails, the hook returns nothing and Pi summarises by itself",
)
def write_failure_falls_back(pi: ExtensionAPI) -> None:
    _reference(pi, on={"session_before_compact": _after_before_compact(_falls_back_on("write"))})


@_mutant(
    ("P3a", "P5a", "P120b"),
    "§5: on a synthesis failure the extension cancels compaction; it must never fall back to an independently "
    "generated native summary (the custom-compaction.ts example returns undefined)",
    "when synthesis fails, the hook returns nothing and Pi summarises by itself",
)
def synthesis_failure_falls_back(pi: ExtensionAPI) -> None:
    _reference(pi, on={"session_before_compact": _after_before_compact(_falls_back_on("synthesis"))})


@_mutant(
    ("P5a", "P19b"),
    "§5: threshold, overflow and manual compaction all use session_before_compact to create the durable Brief",
    "on overflow the hook returns nothing, so Pi's own summary is persisted",
)
def overflow_uses_pi_summary(pi: ExtensionAPI) -> None:
    def change(app: Any, event: Any, ctx: Any, result: Any) -> Any:
        return None if event.reason == "overflow" else result

    _reference(pi, on={"session_before_compact": _after_before_compact(change)})


@_mutant(
    ("P5a", "P24"),
    "§5: failures are visible and fail closed; there is no cooldown that silently permits later native "
    "compaction without a Brief",
    "after a failed handoff, the next check point is let through without a Brief (Pi summarises)",
)
def cooldown_after_failure(pi: ExtensionAPI) -> None:
    cooling = {"on": False}

    def wrap(handler: Handler) -> Handler:
        async def wrapped(event: Any, ctx: Any) -> Any:
            if cooling["on"]:
                cooling["on"] = False
                return None
            result = await _call(handler, event, ctx)
            if isinstance(result, BeforeCompactResult) and result.cancel:
                cooling["on"] = True
            return result

        return wrapped

    _reference(pi, on={"session_before_compact": wrap})


@_mutant(
    ("P7b", "P67"),
    "§8: a failed artifact is a postmortem only, never compaction or resume input",
    "when a failed postmortem of the session exists, its text is returned as the summary",
)
def failed_artifact_accepted(pi: ExtensionAPI) -> None:
    def change(app: Any, event: Any, ctx: Any, result: Any) -> Any:
        state = getattr(app, "state", None)
        if not isinstance(result, BeforeCompactResult) or result.compaction is None or state is None:
            return result
        failed_dir = state.layout.failed_dir
        names = (
            sorted(n for n in os.listdir(failed_dir) if n.endswith(".md"))
            if os.path.isdir(failed_dir)
            else []
        )
        text = _read(os.path.join(failed_dir, names[-1])) if names else None
        if text is None:
            return result
        return dataclasses.replace(result, compaction=dataclasses.replace(result.compaction, summary=text))

    _reference(pi, on={"session_before_compact": _after_before_compact(change)})


@_mutant(
    ("P59b", "P112"),
    "§13: a process death before session_compact leaves a same-session pending artifact inert; startup reports "
    "it but does not silently compact it",
    "the first compaction after a restart returns the stale pending Brief instead of a new one",
)
def stale_pending_used_as_summary(pi: ExtensionAPI) -> None:
    def wrap(handler: Handler) -> Handler:
        app = getattr(handler, "__self__", None)

        async def wrapped(event: Any, ctx: Any) -> Any:
            state = getattr(app, "state", None)
            stale = [p for p in (state.stale_pending_paths if state else ()) if os.path.isfile(p)]
            text = _read(stale[0]) if stale else None
            if text is None or state is None:
                return await _call(handler, event, ctx)
            state.stale_pending_paths = ()
            prep = event.preparation
            handoff = _module("handoff")
            frontmatter = _module("frontmatter").parse_brief(text).frontmatter
            prepared = handoff.PreparedHandoff(
                event_id=frontmatter.event_id,
                session_id=state.session_id,
                artifact_path=stale[0],
                text=text,
                compaction_reason=event.reason,
                settings=_module("native_settings").NativeCompactionSettings.from_preparation(prep.settings),
            )
            state.prepared = prepared
            return BeforeCompactResult(
                compaction=CompactionResult(
                    summary=text,
                    first_kept_entry_id=prep.first_kept_entry_id,
                    tokens_before=prep.tokens_before,
                    details=prepared.details(),
                )
            )

        return wrapped

    _reference(pi, on={"session_before_compact": wrap})


@_mutant(
    ("P121",),
    "§3 (pi-session-continuity CHANGELOG 0.1.4): the hook synthesizes the Brief before compaction proceeds; "
    "the extension must not abort the run (and with it its own synthesis)",
    "session_before_compact calls ctx.abort() before synthesizing",
)
def synthesis_aborted_by_extension(pi: ExtensionAPI) -> None:
    def wrap(handler: Handler) -> Handler:
        async def wrapped(event: Any, ctx: Any) -> Any:
            ctx.abort()
            return await _call(handler, event, ctx)

        return wrapped

    _reference(pi, on={"session_before_compact": wrap})


@_mutant(
    ("P108a", "P108b", "P110a", "P111a"),
    "§13: one in-memory active operation per session, released when the handoff ends (session_compact, "
    "session_compact_failed, or the failure itself)",
    "RuntimeState.clear_native_operation forgets the prepared Brief but never releases the gate",
)
def gate_never_released(pi: ExtensionAPI) -> None:
    state_module = _module("state")

    def clear_native_operation(self: Any) -> None:
        self.prepared = None

    state_module.RuntimeState.clear_native_operation = clear_native_operation
    reference_extension(pi)


# ============================================================================ commit and archive
@_mutant(
    ("P70b", "P70c", "P71b"),
    "§8: session_compact archives only when entry metadata, session id, event id, artifact path, hash and "
    "summary content all match the disk artifact",
    "the commit check ignores the disk bytes, the hash and the summary",
)
def archive_without_hash_check(pi: ExtensionAPI) -> None:
    module = _module("extension")
    original = module.commit_mismatches

    def commit_mismatches(*args: Any, **kwargs: Any) -> list[str]:
        return [m for m in original(*args, **kwargs) if m not in ("disk", "sha256", "summary")]

    module.commit_mismatches = commit_mismatches
    reference_extension(pi)


@_mutant(
    ("P6a",),
    "§7, §8: pending → archived only when session_compact confirms the matching custom CompactionEntry",
    "the Brief is archived in session_before_compact, before Pi commits anything",
)
def archive_before_commit(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")

    def change(app: Any, event: Any, ctx: Any, result: Any) -> Any:
        state = getattr(app, "state", None)
        if isinstance(result, BeforeCompactResult) and result.compaction is not None and state is not None:
            prepared = state.prepared
            if prepared is not None:
                lifecycle.archive_brief(state.layout, prepared.artifact_path, prepared.text)
        return result

    _reference(pi, on={"session_before_compact": _after_before_compact(change)})


@_mutant(
    ("P54",),
    "§7: after each archive only the newest 10 archived Briefs of the session are kept",
    "retention keeps 11",
)
def eleven_archives(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")
    original = lifecycle.prune_archive
    lifecycle.prune_archive = lambda directory, keep=11: original(directory, 11)
    reference_extension(pi)


@_mutant(
    ("P68c",),
    "§8, §18: CompactionEntry.details must include a SHA-256 of the exact Brief content returned as summary",
    "details carry no sha256 (and the commit check stops asking for it)",
)
def details_without_hash(pi: ExtensionAPI) -> None:
    handoff = _module("handoff")
    extension_module = _module("extension")
    original_details = handoff.PreparedHandoff.details
    original_check = extension_module.commit_mismatches

    def details(self: Any) -> dict[str, Any]:
        out = dict(original_details(self))
        out.pop("sha256", None)
        return out

    def commit_mismatches(*args: Any, **kwargs: Any) -> list[str]:
        return [m for m in original_check(*args, **kwargs) if m != "sha256"]

    handoff.PreparedHandoff.details = details
    extension_module.commit_mismatches = commit_mismatches
    reference_extension(pi)


# ============================================================================ continuation
def _send_continuation_after(reason: str) -> Wrap:
    handoff = _module("handoff")

    def wrap(handler: Handler) -> Handler:
        app: Any = getattr(handler, "__self__", None)

        async def wrapped(event: Any, ctx: Any) -> Any:
            prepared = getattr(getattr(app, "state", None), "prepared", None)
            await _call(handler, event, ctx)
            entry = event.compaction_entry or {}
            if event.reason == reason and prepared is not None and entry.get("summary") == prepared.text:
                app.pi.send_user_message(handoff.continuation_text(prepared.text), deliver_as="followUp")

        return wrapped

    return wrap


@_mutant(
    ("P21a", "P21b"),
    "§10: for overflow with willRetry: true, Pi's native retry is the continuation; the extension must not "
    "submit a duplicate resume message",
    "a continuation is also sent after overflow compaction",
)
def continuation_after_overflow(pi: ExtensionAPI) -> None:
    _reference(pi, on={"session_compact": _send_continuation_after("overflow")})


@_mutant(
    ("P22",),
    "§10: manual /compact creates the durable Brief but does not force automatic continuation",
    "a continuation is also sent after manual compaction",
)
def continuation_after_manual(pi: ExtensionAPI) -> None:
    _reference(pi, on={"session_compact": _send_continuation_after("manual")})


@_mutant(
    ("P59c",),
    "§7: same-session stale pending artifacts are inert after reload; v0.2.0 must not silently inject a stale "
    "pending artifact after reload",
    "after a reload the stale pending Brief is sent as a continuation",
)
def stale_pending_injected_after_reload(pi: ExtensionAPI) -> None:
    handoff = _module("handoff")

    def wrap(handler: Handler) -> Handler:
        app: Any = getattr(handler, "__self__", None)

        async def wrapped(event: Any, ctx: Any) -> Any:
            await _call(handler, event, ctx)
            state = getattr(app, "state", None)
            stale = [p for p in (state.stale_pending_paths if state else ()) if os.path.isfile(p)]
            text = _read(stale[0]) if stale and event.reason == "reload" else None
            if text is not None:
                app.pi.send_user_message(handoff.continuation_text(text), deliver_as="followUp")

        return wrapped

    _reference(pi, on={"session_start": wrap})


@_mutant(
    ("P82b",),
    "§10: the continuation is the disk-backed Brief plus the fixed continuation suffix",
    "the continuation is the Brief alone, without the suffix",
)
def continuation_without_suffix(pi: ExtensionAPI) -> None:
    module = _module("extension")
    module.continuation_text = lambda text: text
    reference_extension(pi)


@_mutant(
    ("P125",),
    '§18: the continuation is submitted with deliverAs: "followUp"',
    'the continuation is submitted with deliverAs: "steer"',
)
def continuation_as_steer(pi: ExtensionAPI) -> None:
    def send(real: Any, content: Any, **options: Any) -> None:
        real.send_user_message(content, **{**options, "deliver_as": "steer"})

    _reference(pi, send_user_message=send)


# ============================================================================ settings
@_mutant(
    ("P14",),
    "§12: percentages are not persisted as runtime policy; only the derived token values are written",
    "the settings merge also writes the percentages into compaction",
)
def percentages_persisted(pi: ExtensionAPI) -> None:
    commands = _module("commands")
    original_derive = commands.derive_native_tokens
    original_merge = commands.merge_project_compaction_settings
    last: dict[str, str] = {}

    def derive(window: int, trigger: Any, keep: Any) -> Any:
        last.update(trigger=str(trigger), keep=str(keep))
        return original_derive(window, trigger, keep)

    def merge(path: str, reserve: int, keep: int) -> Any:
        record = original_merge(path, reserve, keep)
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        data["compaction"]["triggerPercent"] = float(last.get("trigger", "0"))
        data["compaction"]["keepRecentPercent"] = float(last.get("keep", "0"))
        _module("atomic_io").atomic_write_text(path, json.dumps(data, indent=2) + "\n")
        return record

    commands.derive_native_tokens = derive
    commands.merge_project_compaction_settings = merge
    reference_extension(pi)


@_mutant(
    ("P42a",),
    "§6: settings writes require explicit interactive confirmation",
    "the confirmation dialog is shown, but its answer is ignored",
)
def settings_without_confirmation(pi: ExtensionAPI) -> None:
    def make_ui(ui: Any) -> Any:
        async def confirm(title: str, message: str, **options: Any) -> bool:
            await ui.confirm(title, message, **options)
            return True

        return _UI(ui, confirm=confirm)

    _reference(pi, command=_with_ctx(make_ui))


@_mutant(
    ("P43",),
    "§6: settings writes must preserve unrelated Pi settings",
    "the settings file is rewritten with only the compaction tokens",
)
def unrelated_settings_dropped(pi: ExtensionAPI) -> None:
    commands = _module("commands")
    atomic = _module("atomic_io")

    def merge(path: str, reserve: int, keep: int) -> Any:
        text = json.dumps(
            {"compaction": {"enabled": True, "reserveTokens": reserve, "keepRecentTokens": keep}}
        )
        return atomic.atomic_write_text(path, text + "\n")

    commands.merge_project_compaction_settings = merge
    reference_extension(pi)


@_mutant(
    ("P101a",),
    "§12: /continuity settings derives reserveTokens and keepRecentTokens from the current model window",
    "the tokens are derived for a 200,000-token window whatever the current model is",
)
def settings_for_wrong_window(pi: ExtensionAPI) -> None:
    commands = _module("commands")
    original = commands.derive_native_tokens
    commands.derive_native_tokens = lambda window, trigger, keep: original(200_000, trigger, keep)
    reference_extension(pi)


@_mutant(
    ("P89b",),
    "§11: when the active model window changes, the footer percentage is recalculated",
    "model_select updates nothing in the footer",
)
def footer_not_recomputed(pi: ExtensionAPI) -> None:
    def make_ui(ui: Any) -> Any:
        return _UI(ui, set_status=lambda key, text: None)

    _reference(pi, on={"model_select": _with_ctx(make_ui)})


# ============================================================================ Brief content and synthesis
@_mutant(
    ("P79a",),
    "§14: insertion of the event-freshness rule must be idempotent (exactly once)",
    "the freshness rule is inserted twice",
)
def freshness_rule_twice(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")
    rule = _module("constants").EVENT_FRESHNESS_RULE
    original = lifecycle.insert_event_freshness_rule
    lifecycle.insert_event_freshness_rule = lambda body: original(body).replace(rule, rule + "\n\n" + rule, 1)
    reference_extension(pi)


@_mutant(
    ("P78", "P80b", "P80c"),
    "§9, §14: the extension must deterministically insert the event-freshness rule under ## Recovery "
    "Instructions",
    "the freshness rule is never inserted",
)
def freshness_rule_missing(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")
    lifecycle.insert_event_freshness_rule = lambda body: body
    reference_extension(pi)


@_mutant(
    ("P115a",),
    "§14: the synthesis prompt must explicitly include the authority-boundary rule",
    "the authority-boundary rule is removed from the synthesis prompt",
)
def no_authority_rule_in_prompt(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")
    rule = _module("constants").AUTHORITY_BOUNDARY_RULE
    original = lifecycle.build_synthesis_request

    def build(*args: Any, **kwargs: Any) -> Any:
        request = original(*args, **kwargs)
        return request._replace(system_prompt=request.system_prompt.replace(rule, ""))

    lifecycle.build_synthesis_request = build
    reference_extension(pi)


@_mutant(
    ("P23",),
    "§5: Brief synthesis must reserve enough output budget for reasoning-capable models so effort tokens do "
    "not starve the final Markdown body",
    "max_tokens is sized for the body alone (2,048 tokens), with no reasoning allowance",
)
def reasoning_budget_not_reserved(pi: ExtensionAPI) -> None:
    lifecycle = _module("lifecycle")
    lifecycle.synthesis_output_budget = lambda model_max_tokens, effort: min(model_max_tokens, 2_048)
    reference_extension(pi)


@_mutant(
    ("P87a",),
    "§11: all user-visible messages are product-prefixed (Pi Session Continuity)",
    'notifications say "Session Continuity" instead of the product name',
)
def wrong_message_prefix(pi: ExtensionAPI) -> None:
    def make_ui(ui: Any) -> Any:
        def notify(message: str, notify_type: Any = "info") -> None:
            ui.notify(message.replace("Pi Session Continuity", "Session Continuity", 1), notify_type)

        return _UI(ui, notify=notify)

    _reference(pi, every=_with_ctx(make_ui))


# ============================================================================ lifecycle
@_mutant(
    ("P13a", "P13b"),
    "§18: do not use turn_end for threshold detection and do not call ctx.compact() for automatic handoffs",
    "a turn_end handler compacts by itself once usage passes 5% of the window",
)
def threshold_computed_by_extension(pi: ExtensionAPI) -> None:
    reference_extension(pi)

    def turn_end(event: Any, ctx: Any) -> None:
        usage = ctx.get_context_usage()
        model = ctx.model
        if (
            usage is not None
            and usage.tokens
            and model is not None
            and usage.tokens > model.context_window // 20
        ):
            ctx.compact()

    pi.on("turn_end", turn_end)


@_mutant(
    ("P97b",),
    "§12: /continuity checkpoint is save-only: it does not request compaction or submit a continuation",
    "a checkpoint also calls ctx.compact()",
)
def checkpoint_compacts(pi: ExtensionAPI) -> None:
    def wrap(handler: Handler) -> Handler:
        async def wrapped(args: Any, ctx: Any) -> Any:
            result = await _call(handler, args, ctx)
            if str(args).strip() == "checkpoint":
                ctx.compact()
            return result

        return wrapped

    _reference(pi, command=wrap)


@_mutant(
    ("P107a",),
    "§13: one in-memory active operation per session prevents a manual checkpoint from overlapping native Brief "
    "preparation (single flight)",
    "a checkpoint ignores the active operation and runs alongside native preparation",
)
def no_single_flight(pi: ExtensionAPI) -> None:
    def wrap(handler: Handler) -> Handler:
        app = getattr(handler, "__self__", None)

        async def wrapped(args: Any, ctx: Any) -> Any:
            state = getattr(app, "state", None)
            if str(args).strip() != "checkpoint" or state is None:
                return await _call(handler, args, ctx)
            held = state.active
            state.active = None
            try:
                return await _call(handler, args, ctx)
            finally:
                if state.active is None:
                    state.active = held

        return wrapped

    _reference(pi, command=wrap)


@_mutant(
    ("P40",),
    "§6: project-local files may be read or written only when ctx.isProjectTrusted() is true",
    "the extension config is read even in an untrusted project",
)
def untrusted_project_read(pi: ExtensionAPI) -> None:
    module = _module("extension")
    original = module.load_extension_config
    module.load_extension_config = lambda cwd, *, trusted: original(cwd, trusted=True)
    reference_extension(pi)


@_mutant(
    ("P39", "P53a", "P68b"),
    "§6: the implementation must use CONFIG_DIR_NAME (resolved under ctx.cwd); it must not hardcode .pi "
    "internally (§7: reported paths are resolved paths)",
    'every path is built from the literal relative ".pi": files land in the project only because Pi runs there, '
    "and every reported path (saved to, details.artifactPath, status) is the unresolved .pi/... string",
)
def hardcoded_dot_pi(pi: ExtensionAPI) -> None:
    config = _module("config")
    config.config_dir = lambda cwd: ".pi"
    reference_extension(pi)


# The blitz handoff mutants (mutants/blitz.py) join the kill matrix with the spec that loads them.
for _entry in blitz.BLITZ_MUTANTS.values():
    MUTANTS[_entry.name] = Mutant(
        _entry.name,
        _entry.rule,
        _entry.how,
        _entry.factory,
        _entry.spec,
        reference="blitz",
        rules=_entry.rules,
        explorable=_entry.invariant is not None,
        invariant=_entry.invariant,
    )

# The single-rule mutants of the rule catalogue (mutants/continuity_rules.py) register here too.
from pi_continuity_harness.mutants import continuity_rules  # noqa: E402, F401
