"""The Continuity Handoff pipeline: synthesize, validate, write, re-read, hash; archive.

One pipeline serves native compaction (threshold, overflow, manual) and the save-only
``/continuity checkpoint``. It either returns a :class:`SavedBrief` whose ``text`` is the
exact bytes re-read from disk, or raises :class:`HandoffError` naming the phase; nothing
in between ever reaches Pi (spec §3: durable Brief first, exact disk bytes as summary).

Phases can be timed: :func:`set_timing_observer` installs a callback that receives each
phase's ``time.perf_counter`` duration (used by ``bench/bench_reference.py``; off by default).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pi_continuity_harness.api import AbortSignal, Model, ModelRegistry
from pi_continuity_harness.reference.psc.atomic_io import atomic_write_text, read_text_exact, remove_file
from pi_continuity_harness.reference.psc.brief import (
    MissingRecoveryHeadingError,
    failure_brief_body,
    insert_event_freshness_rule,
    validate_brief_body,
)
from pi_continuity_harness.reference.psc.config import ExtensionConfig
from pi_continuity_harness.reference.psc.frontmatter import (
    BriefParseError,
    BriefStatus,
    ContinuityBriefFrontmatter,
    HandoffReason,
    build_frontmatter,
    parse_brief,
    serialize_brief,
    with_status,
)
from pi_continuity_harness.reference.psc.handoff import brief_sha256, resume_source_problems
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    effective_percents,
    percent_for_frontmatter,
)
from pi_continuity_harness.reference.psc.paths import ArtifactLayout, iso_timestamp
from pi_continuity_harness.reference.psc.retention import prune_archive
from pi_continuity_harness.reference.psc.synthesis import (
    OutputBudgetError,
    SynthesisFailure,
    brief_from_synthesis,
    build_synthesis_request,
    resolve_synthesis_effort,
    synthesis_output_budget,
    transcript_token_budget,
)

__all__ = [
    "HandoffError",
    "HandoffRequest",
    "SavedBrief",
    "TimingObserver",
    "archive_brief",
    "context_messages",
    "new_event_id",
    "now",
    "prepare_brief",
    "set_timing_observer",
    "write_failure_postmortem",
]

#: ``observer(phase, seconds, data)``; phases: synthesis, validation, write, reread, hash.
TimingObserver = Callable[[str, float, Mapping[str, Any]], None]
_observer: list[TimingObserver | None] = [None]


def set_timing_observer(observer: TimingObserver | None) -> TimingObserver | None:
    """Install (or remove, with None) the phase timing observer; returns the previous one."""
    previous = _observer[0]
    _observer[0] = observer
    return previous


class _timed:  # noqa: N801  (used as a context manager, as the function it replaced)
    """``with _timed(phase, data) as extra:`` times the block for the installed observer.

    A class, not a ``@contextmanager`` generator: five blocks time every Brief prepared, and
    with no observer (always, outside ``bench/``) the generator and its manager were most of
    their cost (issue 16). The observer is the one installed when the block starts."""

    __slots__ = ("_extra", "_observer", "_phase", "_started")

    def __init__(self, phase: str, data: dict[str, Any] | None = None) -> None:
        self._phase = phase
        self._extra: dict[str, Any] = data if data is not None else {}
        self._observer: TimingObserver | None = None
        self._started = 0.0

    def __enter__(self) -> dict[str, Any]:
        self._observer = observer = _observer[0]
        if observer is not None:
            self._started = time.perf_counter()
        return self._extra

    def __exit__(self, *exc_info: object) -> None:
        observer = self._observer
        if observer is not None:
            observer(self._phase, time.perf_counter() - self._started, self._extra)


def now() -> datetime:
    """Wall time from ``time.time()`` (virtualised by the simulator; never ``datetime.now()``)."""
    return datetime.fromtimestamp(time.time(), tz=UTC)


def new_event_id() -> str:
    """A fresh ``eventId`` (``os.urandom``-backed, so seeded in the simulator)."""
    return str(uuid.uuid4())


# ---------------------------------------------------------------------------- request


@dataclass(frozen=True)
class HandoffRequest:
    """Everything one handoff needs, captured when it starts."""

    handoff_reason: HandoffReason
    event_id: str
    session_id: str
    session_file: str | None
    layout: ArtifactLayout
    config: ExtensionConfig
    active_model: Model
    settings: NativeCompactionSettings
    token_count: int
    branch_leaf_before: str | None
    messages: Sequence[Mapping[str, Any]]
    previous_summary: str | None
    custom_instructions: str | None
    signal: AbortSignal | None
    thinking_level: str

    @property
    def compaction_cancelled(self) -> bool:
        """Whether a failure cancels a native compaction (a checkpoint has none)."""
        return self.handoff_reason != "checkpoint"


@dataclass(frozen=True)
class SavedBrief:
    path: str
    text: str
    sha256: str


class HandoffError(Exception):
    """Why no Brief became durable. ``partial_body`` feeds the failed postmortem."""

    def __init__(
        self,
        phase: str,
        reason: str,
        *,
        partial_body: str | None = None,
        frontmatter: ContinuityBriefFrontmatter | None = None,
        synthesis_model: str | None = None,
        synthesis_effort: str | None = None,
        pending_path: str | None = None,
    ) -> None:
        super().__init__(f"{phase}: {reason}")
        self.phase = phase
        self.reason = reason
        self.partial_body = partial_body
        self.frontmatter = frontmatter
        self.synthesis_model = synthesis_model
        self.synthesis_effort = synthesis_effort
        self.pending_path = pending_path


PhaseCallback = Callable[[str], None]


def _resolve_model(request: HandoffRequest, registry: ModelRegistry) -> Model:
    ref = request.config.synthesis_model_ref
    if ref is None:
        model = request.active_model
    else:
        found = registry.find(*ref)
        if found is None:
            raise HandoffError(
                "synthesis model",
                f"synthesis model {request.config.synthesis_model} is not in Pi's model registry",
            )
        model = found
    if not registry.has_configured_auth(model):
        raise HandoffError(
            "synthesis model",
            f"no API key is configured for the synthesis model {model.full_id}",
            synthesis_model=model.full_id,
        )
    return model


def _frontmatter(
    request: HandoffRequest, synthesis_model: str, effort: str, status: BriefStatus, moment: datetime
) -> ContinuityBriefFrontmatter:
    window = request.active_model.context_window
    view = effective_percents(window, request.settings)
    stamp = iso_timestamp(moment)
    return build_frontmatter(
        status=status,
        event_id=request.event_id,
        session_id=request.session_id,
        session_file=request.session_file,
        created_at=stamp,
        updated_at=stamp,
        model_id=request.active_model.full_id,
        synthesis_model=synthesis_model,
        synthesis_effort=effort,
        token_count_at_trigger=max(0, request.token_count),
        context_window=window,
        reserve_tokens=request.settings.reserve_tokens,
        keep_recent_tokens=request.settings.keep_recent_tokens,
        effective_trigger_percent=percent_for_frontmatter(view.trigger_percent),
        effective_keep_recent_percent=percent_for_frontmatter(view.keep_percent),
        handoff_reason=request.handoff_reason,
        branch_leaf_before=request.branch_leaf_before,
    )


async def prepare_brief(
    request: HandoffRequest, registry: ModelRegistry, on_phase: PhaseCallback | None = None
) -> SavedBrief:
    """Synthesize, validate, write, re-read, validate again and hash one Brief.

    Returns the Brief exactly as re-read from disk; raises :class:`HandoffError` (with the
    phase and any partial body) on every other outcome. A pending file written before a
    later phase failed is reported in ``pending_path`` for the caller to retire.
    """

    def phase(name: str) -> None:
        if on_phase is not None:
            on_phase(name)

    phase("synthesizing")
    model = _resolve_model(request, registry)
    try:
        effort = resolve_synthesis_effort(
            request.config.synthesis_effort, request.thinking_level, model.reasoning
        )
        budget = synthesis_output_budget(model.max_tokens, effort)
    except (OutputBudgetError, ValueError) as exc:
        raise HandoffError("synthesis budget", str(exc), synthesis_model=model.full_id) from None
    synthesis = build_synthesis_request(
        request.messages,
        handoff_reason=request.handoff_reason,
        previous_summary=request.previous_summary,
        custom_instructions=request.custom_instructions,
        max_transcript_tokens=transcript_token_budget(model.context_window, budget),
    )
    context = {
        "systemPrompt": synthesis.system_prompt,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": synthesis.user_text}],
                "timestamp": int(time.time() * 1000),
            }
        ],
    }

    def failure(
        name: str,
        reason: str,
        *,
        partial_body: str | None = None,
        frontmatter: ContinuityBriefFrontmatter | None = None,
        pending_path: str | None = None,
    ) -> HandoffError:
        return HandoffError(
            name,
            reason,
            partial_body=partial_body,
            frontmatter=frontmatter,
            synthesis_model=model.full_id,
            synthesis_effort=request.config.synthesis_effort,
            pending_path=pending_path,
        )

    with _timed("synthesis", {"maxTokens": budget}):
        try:
            reply = await registry.complete(
                model,
                context,
                max_tokens=budget,
                signal=request.signal,
                reasoning=None if effort == "off" else effort,
            )
        except Exception as exc:  # a provider/bridge error must cancel, never escape to Pi
            raise failure("synthesis", f"synthesis call failed: {exc}") from None
    outcome = brief_from_synthesis(reply)
    if isinstance(outcome, SynthesisFailure):
        raise failure(outcome.phase, outcome.reason, partial_body=outcome.partial_text or None)
    body = outcome

    phase("validating")
    moment = now()
    with _timed("validation", {"bodyChars": len(body)}):
        problems = validate_brief_body(body)
        if problems:
            raise failure("validation", "; ".join(problems), partial_body=body)
        try:
            enriched = insert_event_freshness_rule(body)
        except MissingRecoveryHeadingError as exc:
            raise failure("validation", str(exc), partial_body=body) from None
        try:
            # The configured label (one of the spec's six), never the level Pi clamps it to: a
            # model that does not reason gets no reasoning ("off"), which is not a label (§6, §8).
            frontmatter = _frontmatter(
                request, model.full_id, request.config.synthesis_effort, "pending", moment
            )
        except (ValueError, BriefParseError) as exc:
            raise failure("validation", f"frontmatter: {exc}", partial_body=enriched) from None
        text = serialize_brief(frontmatter, enriched)
        problems = resume_source_problems(text, session_id=request.session_id, event_id=request.event_id)
        if problems:
            raise failure("validation", "; ".join(problems), partial_body=enriched, frontmatter=frontmatter)

    if request.signal is not None and request.signal.aborted:
        # Aborted after the reply arrived: nothing is written, so nothing can linger pending.
        raise failure("synthesis", "aborted before the Brief was written", partial_body=enriched)

    phase("writing")
    path = request.layout.pending_path(request.event_id)
    with _timed("write", {"bytes": len(text.encode("utf-8"))}) as info:
        try:
            record = atomic_write_text(path, text)
        except OSError as exc:
            raise failure(
                "write",
                f"writing {path} failed: {exc.strerror or exc}",
                partial_body=enriched,
                frontmatter=frontmatter,
            ) from None
        info["fsyncs"] = record.fsync_count

    phase("re-reading")
    with _timed("reread"):
        try:
            disk = read_text_exact(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise failure(
                "re-read",
                f"re-reading {path} failed: {exc}",
                partial_body=enriched,
                frontmatter=frontmatter,
                pending_path=path,
            ) from None
        if disk != text:
            raise failure(
                "re-read",
                f"the re-read bytes of {path} differ from what was written",
                partial_body=enriched,
                frontmatter=frontmatter,
                pending_path=path,
            )
        problems = resume_source_problems(disk, session_id=request.session_id, event_id=request.event_id)
        if problems:
            raise failure(
                "re-read",
                "; ".join(problems),
                partial_body=enriched,
                frontmatter=frontmatter,
                pending_path=path,
            )
    with _timed("hash"):
        digest = brief_sha256(disk)
    return SavedBrief(path, disk, digest)


# ---------------------------------------------------------------------------- failure


def write_failure_postmortem(request: HandoffRequest, failure: HandoffError) -> str | None:
    """Retire a written pending file and write the failed postmortem; its path or None.

    Schema v2 with ``status: failed`` whenever a frontmatter can be built, the partial body
    (headings as far as they exist) when there is one, and always the failure record (phase,
    error, identity, compaction cancelled, no continuation). A postmortem is never input.
    """
    if failure.pending_path is not None:
        with suppress(OSError):
            remove_file(failure.pending_path)
    moment = now()
    record = failure_brief_body(
        phase=failure.phase,
        error=failure.reason,
        event_id=request.event_id,
        session_id=request.session_id,
        compaction_cancelled=request.compaction_cancelled,
    )
    body = record
    if failure.partial_body and failure.partial_body.strip():
        body = failure.partial_body.rstrip("\n") + "\n\n" + record
    try:
        if failure.frontmatter is not None:
            frontmatter = with_status(failure.frontmatter, "failed", iso_timestamp(moment))
        else:
            frontmatter = _frontmatter(
                request,
                failure.synthesis_model or request.config.synthesis_model,
                failure.synthesis_effort or request.config.synthesis_effort,
                "failed",
                moment,
            )
        text = serialize_brief(frontmatter, body)
    except (ValueError, BriefParseError):
        text = record
    path = request.layout.failed_path(moment, request.event_id)
    try:
        atomic_write_text(path, text)
    except OSError:
        return None
    return path


# ---------------------------------------------------------------------------- archive


def archive_brief(layout: ArtifactLayout, pending_path: str, verified_text: str) -> str:
    """pending → archived: rewrite status/updatedAt, write under ``archive/`` atomically,
    verify the archived bytes, remove the pending file, keep the newest 10 (spec §7);
    returns the archive path.

    Raises ``OSError``/``ValueError`` when any step fails (the pending file then stays).
    """
    parsed = parse_brief(verified_text)
    moment = now()
    archived = serialize_brief(
        with_status(parsed.frontmatter, "archived", iso_timestamp(moment)), parsed.body
    )
    path = layout.archive_path(moment, parsed.frontmatter.event_id)
    atomic_write_text(path, archived)
    if read_text_exact(path) != archived:
        raise ValueError(f"the archived bytes of {path} differ from what was written")
    remove_file(pending_path)
    prune_archive(layout.archive_dir)
    return path


# ---------------------------------------------------------------------------- transcript


def _entry_message(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if isinstance(message, Mapping) and message.get("role") != "system":
            return dict(message)
        return None
    if kind == "custom_message":
        return {"role": "custom", "customType": entry.get("customType"), "content": entry.get("content")}
    if kind == "branch_summary":
        return {"role": "branchSummary", "summary": entry.get("summary")}
    return None


def context_messages(branch: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """The session's current context as messages, and the latest compaction summary.

    Mirrors Pi's ``buildContextEntries``: after the newest compaction only its kept entries
    (from ``firstKeptEntryId``) and what follows are context; ``context_edit`` entries hide
    or replace their targets. Used by ``/continuity checkpoint``, which has no preparation.
    """
    hidden: set[str] = set()
    replaced: dict[str, Any] = {}
    for entry in branch:
        if entry.get("type") == "context_edit":
            target = entry.get("targetId")
            replacement = entry.get("replacement")
            if isinstance(target, str):
                if replacement is None:
                    hidden.add(target)
                elif isinstance(replacement, Mapping):
                    replaced[target] = replacement.get("content")
    last_compaction = max(
        (i for i, entry in enumerate(branch) if entry.get("type") == "compaction"), default=None
    )
    previous_summary: str | None = None
    selected: list[Mapping[str, Any]] = list(branch)
    if last_compaction is not None:
        compaction = branch[last_compaction]
        summary = compaction.get("summary")
        previous_summary = summary if isinstance(summary, str) else None
        first_kept = compaction.get("firstKeptEntryId")
        start = next(
            (i for i, entry in enumerate(branch[:last_compaction]) if entry.get("id") == first_kept),
            last_compaction,
        )
        selected = [*branch[start:last_compaction], *branch[last_compaction + 1 :]]
    messages: list[dict[str, Any]] = []
    for entry in selected:
        entry_id = entry.get("id")
        if entry_id in hidden:
            continue
        message = _entry_message(entry)
        if message is None:
            continue
        if entry_id in replaced:
            message = {**message, "content": replaced[entry_id]}
        messages.append(message)
    return messages, previous_summary
