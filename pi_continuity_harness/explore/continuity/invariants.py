"""Pi Session Continuity's invariants, checked on a running simulation after every effect and operation.

An :class:`InvariantChecker` is attached to a
:class:`~pi_continuity_harness.simulator.simulation.Simulation` as a trace sink. Trace
records arrive synchronously, at the moment the effect happens, so the checker can look at
the disk exactly when Pi appends a compaction entry or when the implementation renames a
file into ``archive/`` (the audit hook fires *before* the rename: the new bytes are still in
the temporary source file, the old ones at the destination). Everything else is checked
after each operation.

Each invariant is a named function with a docstring citing the spec and the ids of the rules
(``pi_continuity_harness/rules/psc.yaml``) it checks; the registry :data:`INVARIANTS` maps the name to its function.
A function receives the :class:`Tracker` (what the run has shown so far) and either the trace
record that triggers it or nothing (after-operation invariants), and yields the problems it
finds.

The checker judges artifacts with :mod:`pi_continuity_harness.features.oracle`, the
suite's independent reading of the spec, never with the reference's code.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.explore.plugin import (
    LIVENESS,
    LOAD_FAILURE,
    WITHIN_BUDGET,
    InvariantSpec,
    Violation,
)
from pi_continuity_harness.features.oracle import (
    ARTIFACT_EVENT_NAME,
    ARTIFACT_KIND,
    AUTHORITY_BOUNDARY_RECORD,
    AUTHORITY_BOUNDARY_SENTENCE,
    CONTINUATION_SUFFIX,
    HANDOFF_REASON_OF_COMPACTION,
    MESSAGE_PREFIX,
    SAFE_PATH_COMPONENT,
    Brief,
    brief_problems,
    current_state_snapshot_problem,
    details_context_problems,
    failure_record_problems,
    freshness_rule_paragraphs,
    frontmatter_order_problem,
    handoff_context,
    has_freshness_rule,
    headings_listed_problem,
    inference_forbidden_problem,
    leaf_values,
    line_says,
    names_directory,
    parse_brief,
    promoted_directives,
    records_phase,
    sha256_hex,
    status_lines,
)
from pi_continuity_harness.scenario.identity_memo import IdentityMemo
from pi_continuity_harness.scenario.model_script import ModelRequest, SynthesisReply, estimate_request_tokens
from pi_continuity_harness.scenario.operations import CommandOp, DialogAnswer, Operation
from pi_continuity_harness.scenario.tree_walk import walk_sorted
from pi_continuity_harness.simulator.provider import clamp_thinking_level
from pi_continuity_harness.simulator.settings import SettingsError
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.simulator.virtual_root import disk_path

__all__ = [
    "ARCHIVE_LIMIT",
    "ARTIFACT_FOLDERS",
    "INVARIANTS",
    "MIN_SYNTHESIS_TRANSCRIPT_TOKENS",
    "CheckPoint",
    "InvariantChecker",
    "Tracker",
    "artifact_name_problems",
    "describe_invariants",
    "effort_label_problems",
    "hidden_continuation_problems",
    "invariant_specs",
    "native_settings_problem",
    "run_checker",
]

#: Spec §6/§7: ``archiveRetention = 10``.
ARCHIVE_LIMIT = 10
#: Spec §6: ``minSynthesisTranscriptTokens = 32000`` (a window smaller than this plus the
#: output budget cannot hold the transcript floor, so the fit invariant does not apply).
MIN_SYNTHESIS_TRANSCRIPT_TOKENS = 32_000
#: Tokens a synthesis request may spend on its own framing (system prompt, delimiters).
_PROMPT_ALLOWANCE = 4_096
_SETTINGS_KEYS = frozenset({"enabled", "reserveTokens", "keepRecentTokens"})
_FOOTER_PERCENT = re.compile(r"@ ~(\d+(?:\.\d+)?)%")
#: A Brief's ``eventId`` line (its frontmatter), the value quoted with either quote or not (YAML
#: reads them alike; the reference writes double quotes).
_EVENT_ID = re.compile(r"^eventId:[ \t]*[\"']?([^\"'\s]+)[\"']?\s*$", re.MULTILINE)


@dataclass
class CheckPoint:
    """One ``session_before_compact`` dispatch and what it cost."""

    reason: str
    will_retry: bool
    operation: int | None
    seq: int
    synthesis_requests: int = 0
    failure_notifications: int = 0
    failed_postmortems: int = 0
    outcome: str = "open"  # open | committed | cancelled | failed | crashed
    verified: bool = False
    #: Continuations (``send_user_message`` of the extension) between this check point's
    #: ``session_compact`` and its ``compaction_end``.
    continuations: int = 0
    #: ``event.preparation.settings``: the native settings Pi prepared this compaction with.
    settings: dict[str, Any] = field(default_factory=dict)
    #: ``event.preparation.tokensBefore``, and the active model (``provider/id``), its context
    #: window and the session's leaf when the hook fired (:func:`brief_records_its_compaction`).
    tokens_before: Any = None
    model: str | None = None
    window: int | None = None
    leaf: str | None = None
    #: Pi's session file when the hook fired (None: an in-memory session).
    session_file: str | None = None
    #: The model the implementation's last synthesis request of this check point asked.
    synthesis_model: str | None = None
    #: ``event.preparation.firstKeptEntryId`` (:func:`commit_keeps_prepared_cut`).
    first_kept: Any = None
    #: Why each of the implementation's synthesis replies of this check point failed
    #: (:func:`failed_synthesis_never_commits`).
    failed_syntheses: list[str] = field(default_factory=list)
    #: Spec §11's failure message ("... failed: <reason>. Native compaction was cancelled.")
    #: shown during this check point (:func:`one_failure_notice_per_check_point`).
    cancel_notices: int = 0
    #: Spec §11's threshold message shown during this check point (:func:`threshold_announced`).
    announced: bool = False
    #: A synthesis reply of this check point resolved ``aborted``: Pi's abort signal.
    aborted_synthesis: bool = False
    #: The provider's error messages of this check point's synthesis replies (:func:`failure_record_complete`).
    errors: list[str] = field(default_factory=list)
    #: The kinds of the scripted synthesis replies this check point got (``valid``,
    #: ``missing_heading``, ...: :func:`partial_brief_kept_as_failed`).
    scripted_kinds: list[str] = field(default_factory=list)
    #: The reasoning (thinking blocks) of this check point's synthesis replies, as Pi received
    #: them (:func:`reasoning_never_in_brief`).
    reasonings: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"{self.reason} check point at operation {self.operation}: {self.outcome}"
            f" ({self.synthesis_requests} synthesis request(s), {self.failure_notifications} failure"
            f" notification(s), {self.failed_postmortems} failed postmortem(s))"
        )


@dataclass
class _Op:
    name: str
    index: int | None
    during: bool
    op: Operation | None = None
    confirmed: bool = False


@dataclass
class _Written:
    """An artifact file the implementation wrote or renamed into place during the operation."""

    path: str
    #: The folder it lies in: ``pending``, ``archive`` or ``failed`` (spec §7).
    folder: str
    #: Its bytes once in place: read at ``fs:replace`` (the rename is done), after the operation
    #: for ``fs:write`` (that record comes when the file was opened, before anything is in it).
    data: bytes | None
    #: The handoff it belongs to: the open check point's ``seq``, else the operation.
    handoff: tuple[Any, ...]


@dataclass
class _Window:
    """Between ``session_compact`` and the ``compaction_end`` that follows it."""

    reason: str
    entry_id: str | None
    continuations: int = 0
    checkpoint: CheckPoint | None = None


@dataclass
class Tracker:
    """What the run has shown so far: the state the invariants reason over."""

    simulation: Simulation
    markers: tuple[str, ...] = ()
    competitors: tuple[str, ...] = ()
    workdir: str = ""
    runtime_generation: int = 0
    trusted: bool = True
    session_id: str | None = None
    ops: list[_Op] = field(default_factory=list)
    current_top: _Op | None = None
    pending_written: dict[str, int] = field(default_factory=dict)
    failed_event_ids: set[str] = field(default_factory=set)
    checkpoints: list[CheckPoint] = field(default_factory=list)
    open_checkpoint: CheckPoint | None = None
    window: _Window | None = None
    verified: dict[str, str] = field(default_factory=dict)  # entry id -> summary
    continuations: deque[str | None] = field(default_factory=deque)
    synthesis_in_flight: int = 0
    synthesis_scripted: dict[int, SynthesisReply | None] = field(default_factory=dict)
    archives_checked: set[str] = field(default_factory=set)
    requests_seen: int = 0
    #: The artifact files written in the current operation (:class:`_Written`), emptied after it.
    written: list[_Written] = field(default_factory=list)
    #: Every pending Brief's ``eventId`` with the handoff that wrote it, and the ``createdAt``
    #: of the latest handoff's Brief (:func:`fresh_event_per_handoff`).
    event_handoffs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    last_created: tuple[tuple[Any, ...], datetime, str] | None = None
    #: Between ``session_shutdown`` and the host's next step (:func:`shutdown_changes_nothing`).
    shutting_down: bool = False
    #: The extension config as read at the latest ``session_start`` (spec §6: it is read at
    #: startup and after a reload): :func:`config_state` of its bytes, and its fields.
    config_state: str = "absent"
    config: dict[str, Any] = field(default_factory=dict)
    #: Pi's mode has a UI (``rpc``, ``tui``); ``print`` and ``json`` have none (spec §18).
    has_ui: bool = True
    #: A competing extension loads after the implementation and may replace its compaction
    #: result (Pi keeps the last truthy one: :func:`mismatch_reported`).
    replaceable: bool = False
    #: :func:`mismatch_reported`: the ``session_compact`` records of this operation that did not
    #: commit the implementation's verified Brief (their seq).
    unmatched: list[int] = field(default_factory=list)
    #: :func:`every_commit_archived`: the ``session_compact`` records of this operation that
    #: committed the verified Brief, with its event id.
    committed: list[tuple[int, str]] = field(default_factory=list)
    #: A tamper rule of the scenario changed a file (``fault:tamper``; :func:`every_commit_archived`).
    tampered: bool = False
    #: The seq of the latest filesystem fault on an archive path (:func:`every_commit_archived`).
    last_archive_fault: int = -1
    #: The seq of the latest product-prefixed warning or error: a reported failure.
    last_alarm: int = -1
    #: The Brief paths announced as committed in this run (:func:`commit_announced_once`).
    announced_commits: set[str] = field(default_factory=set)
    #: The product's notifications of the current operation, in order (:func:`handoff_messages_exact`).
    notices: list[str] = field(default_factory=list)
    #: :func:`handoff_messages_exact`: the pending Brief paths committed in this operation, and
    #: whether a continuation was submitted in it.
    committed_paths: list[str] = field(default_factory=list)
    continued: bool = False
    #: :func:`stale_pending_reported`: the stale pending Briefs a session start of this operation
    #: found (their paths), until the stale message reports them.
    stale_found: list[str] = field(default_factory=list)
    #: :func:`pending_brief_never_deleted`: the pending Brief files this operation removed, each
    #: with its event id (from :attr:`pending_events`, else its file name's stem).
    removed_pending: list[tuple[str, str]] = field(default_factory=list)
    #: The event id of each pending Brief the run wrote (path: ``eventId``), read at its rename.
    pending_events: dict[str, str] = field(default_factory=dict)
    #: :func:`stale_pending_left_unchanged`: every stale pending Brief the latest session start
    #: found (whatever the mode, trust or config: none may touch it), until the next start.
    stale_paths: frozenset[str] = frozenset()
    #: :func:`others_artifacts_untouched`: the artifact files the scenario planted (a foreign
    #: session's Brief, a legacy one, an old failed artifact), never the implementation's.
    planted_paths: frozenset[str] = frozenset()
    #: The sessions whose artifacts :func:`others_artifacts_untouched` guards: every session the
    #: run has had, and those the scenario planted artifacts of.
    known_sessions: set[str] = field(default_factory=set)
    #: :func:`checkpoint_runs_when_idle`: the implementation's synthesis requests in the current
    #: operation, and whether Pi died in it.
    op_synthesis_requests: int = 0
    crashed_in_op: bool = False
    #: Filesystem faults the scenario injected in the current operation.
    op_faults: int = 0
    #: How many check points there were when the current operation began (its own follow;
    #: counted at the end of the one before, as :attr:`written` is emptied).
    op_checkpoints: int = 0
    #: :func:`committed_pending_reconciled`: the same-session pending Briefs (path, event id) a
    #: session start of this operation found already committed by Pi.
    reconcile_due: list[tuple[str, str]] = field(default_factory=list)
    #: :func:`leftover_temp_not_silent`: this session's temporary files a session start found
    #: (the runtime's), and those its operation neither removed nor named (left to status).
    leftover_temps: list[str] = field(default_factory=list)
    unnamed_temps: list[str] = field(default_factory=list)
    #: :func:`invalid_config_reported`: the config of a session start of this operation was
    #: invalid (the checker's reading), with the fields found invalid (none: not an object).
    config_invalid_at_start: list[str] | None = None
    #: The product's warnings and errors of the current operation (a subset of :attr:`notices`).
    alarms: list[str] = field(default_factory=list)
    #: :func:`status_names_last_artifact`: the artifact file the implementation last put in
    #: place since the latest session start (status is process-local), and whether a failure
    #: reported after it leaves the last artifact open (the failed artifact was not written).
    last_artifact: str | None = None
    last_artifact_open: bool = False
    #: :func:`settings_saved_message_exact`: the implementation put a new project
    #: ``settings.json`` in place in the current operation.
    settings_saved: bool = False
    #: :func:`status_names_stale_pending`: the stale pending Briefs of :attr:`stale_paths` whose
    #: read the scenario faulted (the implementation saw no Brief there).
    stale_unread: set[str] = field(default_factory=set)
    #: :func:`status_reports_last_failure`: the latest outcome the implementation announced
    #: since the runtime's session start was a failure (no Brief saved or committed after it).
    failed_last: bool = False
    #: :func:`native_refusal_reported`: the operation started a session or selected a model,
    #: the two moments the implementation validates Pi's live settings for the active window.
    policy_checked: bool = False
    #: :func:`evidence_never_in_system_prompt`: the opening of each user message the main model
    #: was sent (the first :data:`_OPENING` characters of a text at least half that long).
    user_openings: set[str] = field(default_factory=set)
    #: ... and the ``eventId`` of each Brief Pi committed before the current operation, by the
    #: compaction entry's id (a Brief committed in the operation may be the one a request of it
    #: asks for, whose id the instructions may name).
    earlier_events: dict[str, list[str]] = field(default_factory=dict)
    #: :func:`earlier_brief_is_evidence`: the ``eventId`` of the Brief Pi's latest compaction
    #: preparation passed as ``previousSummary`` (None: none, or not a Brief), and how many
    #: model requests had been made before that preparation.
    prepared_previous: tuple[str | None, int] = (None, 0)
    _briefs: dict[str, Brief | None] = field(default_factory=dict)
    #: :meth:`states_freshness_rule`: whether a system prompt states the whole rule, per prompt.
    _prompt_freshness: dict[str, bool] = field(default_factory=dict)
    #: :func:`synthesis_prompt_complete`: the readings a system prompt alone does not meet.
    _prompt_readings: dict[str, tuple[Callable[[str], str | None], ...]] = field(default_factory=dict)
    _problems: dict[tuple[str, str | None], list[str]] = field(default_factory=dict)
    #: :meth:`carries`: each request message's texts, and which needles it holds.
    _message_needles: IdentityMemo[tuple[list[str], dict[str, bool]]] = field(default_factory=IdentityMemo)
    #: :meth:`archive_directories` of the current ``after_operation`` (None: not walked yet).
    _archives: list[tuple[str, list[str]]] | None = None
    #: True while ``after_operation`` runs the invariants (outside it every call walks).
    _walk_once: bool = False

    # ----------------------------------------------------------------- memoised oracle
    def carries(self, request: ModelRequest, needle: str) -> bool:
        """Whether ``needle`` is in the request's text (:func:`_request_text`).

        A needle without a newline cannot span the newline between two parts, so it is looked
        for part by part, and what each message holds is remembered by the message's identity
        (a request's messages are the simulated model's shared objects, held here so their ids
        stay theirs): every request re-sends the conversation, and building and searching the
        whole text of every request after every operation was 3 % of an exploration (issue 16).
        A needle with a newline is looked for in the whole text, as before."""
        if "\n" in needle:
            return needle in _request_text(request)
        if needle in (request.system_prompt or ""):
            return True
        for message in request.messages:
            parts, holds = self._message_needles.get(message, functools.partial(_parts_and_needles, message))
            found = holds.get(needle)
            if found is None:
                found = holds[needle] = any(needle in part for part in parts)
            if found:
                return True
        return False

    def archive_directories(self) -> list[tuple[str, list[str]]]:
        """Every ``archive`` directory under the project with its file names, walked once per
        :meth:`InvariantChecker.after_operation` (the invariants only read: the project does
        not change while they run; two of them walked it each before, issue 16). The walk is
        :func:`~pi_continuity_harness.scenario.tree_walk.walk_sorted`: ``os.walk``'s directories,
        order and file lists (subdirectories sorted), without its ``lstat`` per subdirectory.

        It walks the project's disk spelling (:func:`~pi_continuity_harness.simulator.virtual_root.disk_path`),
        the same directories, and names them as the host does: listing a directory through
        ``/proc/self/fd/1000`` took 9.5-10.5 us against 6.7 us, for the 5 directories of each
        operation's walk (issue 16)."""
        if self._archives is not None:
            return self._archives
        found = []
        project = self.project_dir
        on_disk = disk_path(project)
        for root, files in walk_sorted(on_disk):
            if os.path.basename(root) == "archive":
                found.append((project + root[len(on_disk) :], [entry.name for entry in files]))
        if self._walk_once:
            self._archives = found
        return found

    def states_freshness_rule(self, request: ModelRequest, text: str) -> bool:
        """:func:`~pi_continuity_harness.features.oracle.has_freshness_rule` of ``text``, the
        request's whole text (:func:`_request_text`: its system prompt, then a newline and the
        messages' texts, if any).

        When the system prompt alone states every statement of the rule, so does the text: each
        statement's match in the prompt is one in the text (the characters before it are the
        same, and what follows the prompt is a newline, which keeps a closing ``\\b`` a word
        boundary; no statement's pattern looks further). The prompt's answer is a pure function
        of its text, remembered per text (the key) for the run: a session's synthesis requests
        share their system prompt, and searching each request's whole text for the three
        statements was 1.5-3 % of a Pi Session Continuity exploration (issue 16). A prompt that
        does not state it all sends the whole text to the search, as before."""
        prompt = request.system_prompt or ""
        in_prompt = self._prompt_freshness.get(prompt)
        if in_prompt is None:
            if len(self._prompt_freshness) > 256:
                self._prompt_freshness.clear()
            in_prompt = self._prompt_freshness[prompt] = has_freshness_rule(prompt)
        return in_prompt or has_freshness_rule(text)

    def brief(self, text: str) -> Brief | None:
        """:func:`~pi_continuity_harness.features.oracle.parse_brief`, memoised (summaries repeat)."""
        if text not in self._briefs:
            if len(self._briefs) > 256:
                self._briefs.clear()
            self._briefs[text] = parse_brief(text)
        return self._briefs[text]

    def problems(self, text: str) -> list[str]:
        """Why ``text`` is not a valid pending Brief of the current session (memoised)."""
        key = (text, self.session_id)
        if key not in self._problems:
            if len(self._problems) > 256:
                self._problems.clear()
            self._problems[key] = brief_problems(text, status="pending", session_id=self.session_id)
        return self._problems[key]

    # ----------------------------------------------------------------- helpers
    @property
    def host(self) -> Any:
        return self.simulation.host

    def real(self, path: str) -> str:
        return path.replace("$WORK", self.workdir) if isinstance(path, str) else path

    def read(self, path: str) -> bytes | None:
        """The file's bytes as the harness sees them (never traced, never faulted), read by
        the path's disk spelling (:meth:`archive_directories`: the same file, without the walk
        through ``/proc``)."""
        with self.host.host_io():
            try:
                with open(disk_path(path), "rb") as handle:
                    return handle.read()
            except OSError:
                return None

    def read_text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def written_text(self, written: _Written) -> str | None:
        """The artifact's text as it was once in place (:attr:`_Written.data`); a file opened for
        writing is read after its operation, and is None when it is gone by then."""
        if written.data is None:
            written.data = self.read(written.path)
        return None if written.data is None else written.data.decode("utf-8", errors="replace")

    def handoff_key(self) -> tuple[Any, ...]:
        """Which handoff a file written now belongs to: the open check point (one
        ``session_before_compact``), else the operation (``/continuity checkpoint``)."""
        if self.open_checkpoint is not None:
            return ("check point", self.open_checkpoint.seq)
        return ("operation", self.runtime_generation, self.operation)

    def live_policy(self) -> tuple[Any, Any] | None:
        """The active model and Pi's live compaction settings for it (``settings.json`` as the
        runtime read it: P126), or None while Pi is down, has no model or cannot read them."""
        host = self.host
        runtime = host.runtime
        if runtime is None or not host.running or host.crashed or runtime.session.model is None:
            return None
        model = runtime.session.model
        try:
            return model, runtime.settings.get_compaction_settings(model)
        except SettingsError:
            return None

    def entry(self, entry_id: str | None) -> dict[str, Any] | None:
        runtime = self.host.runtime
        if runtime is None or entry_id is None:
            return None
        found = runtime.session_manager.get_entry(entry_id)
        return dict(found) if found is not None else None

    def entries(self) -> list[dict[str, Any]]:
        runtime = self.host.runtime
        if runtime is None:
            return []
        return list(runtime.session_manager.get_entries())

    @property
    def operation(self) -> int | None:
        return self.current_top.index if self.current_top is not None else None

    def in_op(self, name: str) -> bool:
        return any(op.name == name for op in self.ops)

    @property
    def project_dir(self) -> str:
        return str(self.host.paths.project_dir)

    @property
    def settings_path(self) -> str:
        return os.path.join(self.project_dir, CONFIG_DIR_NAME, "settings.json")

    @property
    def config_path(self) -> str:
        return os.path.join(self.project_dir, CONFIG_DIR_NAME, "session-continuity.json")

    def read_config(self) -> None:
        """Classify the extension config on disk (the checker's own reading of spec §6)."""
        text = self.read_text(self.config_path)
        self.config_state, self.config = config_state(text, self.host.catalog)

    def competitor_summary(self, summary: str) -> bool:
        return "own_compaction" in self.competitors and summary.startswith("COMPETITOR-SUMMARY-")


# ===================================================================== extension config
#: Spec §6: the six ``synthesisEffort`` labels.
EFFORT_LABELS = frozenset({"inherit", "minimal", "low", "medium", "high", "xhigh"})
_MODEL_ID = re.compile(r"^[^/\s]+/\S+$")
_CONFIG_KEYS = frozenset({"enabled", "synthesisModel", "synthesisEffort", "artifactDirectory"})


def config_state(text: str | None, catalog: Any) -> tuple[str, dict[str, Any]]:
    """How the extension config ``text`` lets a handoff run (spec §6), and its fields:

    ``absent`` (no file: the defaults), ``invalid`` (not a JSON object, or ``enabled`` not a
    boolean, ``synthesisModel`` neither ``inherit`` nor ``provider/model``, ``synthesisEffort``
    not one of the six labels), ``disabled`` (``enabled: false``), ``locked`` (a pinned
    synthesis model whose provider has no configured auth: spec §18 "Authentication/model
    failures cancel compaction clearly"), ``valid``; ``unknown`` when it holds a key this
    reading does not judge (the invariants then judge nothing by the config).
    """
    if text is None:
        return "absent", {}
    try:
        data = json.loads(text)
    except ValueError:
        return "invalid", {}
    if not isinstance(data, dict):
        return "invalid", {}
    if set(data) - _CONFIG_KEYS:
        return "unknown", data
    if invalid_config_fields(data):
        return "invalid", data
    if not data.get("enabled", True):
        return "disabled", data
    model = str(data.get("synthesisModel", "inherit"))
    if model != "inherit":
        provider = model.partition("/")[0]
        if catalog.find_full(model) is None:
            return "unknown", data  # a model missing from the registry: not judged here
        if not catalog.has_auth(provider):
            return "locked", data
    return "valid", data


def invalid_config_fields(data: dict[str, Any]) -> list[str]:
    """The fields of an extension config object that :func:`config_state` finds invalid, in the
    spec's order (spec §6: ``enabled`` a boolean, ``synthesisModel`` ``inherit`` or
    ``provider/model``, ``synthesisEffort`` one of the six labels)."""
    bad = []
    if "enabled" in data and not isinstance(data["enabled"], bool):
        bad.append("enabled")
    model = data.get("synthesisModel", "inherit")
    if not isinstance(model, str) or (model != "inherit" and not _MODEL_ID.match(model)):
        bad.append("synthesisModel")
    if data.get("synthesisEffort", "medium") not in EFFORT_LABELS:
        bad.append("synthesisEffort")
    return bad


#: The extension config states in which the implementation may make Briefs durable: a valid
#: config, none (the defaults), or one pinning a model without auth (a failure found while
#: preparing, not a refusal).
_MAY_HAND_OFF = frozenset({"valid", "absent", "locked"})


def _may_hand_off(t: Tracker) -> bool:
    """A trusted project whose extension config read at startup is in :data:`_MAY_HAND_OFF`."""
    return t.trusted and t.config_state in _MAY_HAND_OFF


# ===================================================================== registry
@dataclass(frozen=True)
class _Registered:
    name: str
    doc: str
    triggers: tuple[str, ...]  # "kind:name" of the records it watches; () = after every operation
    function: Callable[..., Iterable[str]]
    rules: tuple[str, ...]


INVARIANTS: dict[str, _Registered] = {}


def _register(
    *triggers: str, rules: tuple[str, ...]
) -> Callable[[Callable[..., Iterable[str]]], Callable[..., Iterable[str]]]:
    """Register an invariant checked on ``triggers`` (none: after every operation); ``rules`` are
    the ids of the catalogue rules it checks (``pi_continuity_harness/rules/psc.yaml``)."""

    def wrap(function: Callable[..., Iterable[str]]) -> Callable[..., Iterable[str]]:
        name = function.__name__
        doc = " ".join((function.__doc__ or "").split())
        INVARIANTS[name] = _Registered(name, doc, tuple(triggers), function, rules)
        return function

    return wrap


def invariant_specs() -> tuple[InvariantSpec, ...]:
    """Every invariant, in registration order, then liveness and the load check."""
    return (
        *(InvariantSpec(r.name, r.doc, r.rules) for r in INVARIANTS.values()),
        InvariantSpec(LIVENESS, _LIVENESS_DOC, ("P19a", "P20", "P24", "P25a", "P36b", "P47", "P77", "P108b")),
        InvariantSpec(
            LOAD_FAILURE, "The implementation loads: Pi starts with it (spec §16, §18).", ("P129",)
        ),
        InvariantSpec(
            WITHIN_BUDGET,
            "The run ends within its budget of host operations and virtual time (a runaway never ends).",
            (),
        ),
    )


def describe_invariants() -> list[tuple[str, str]]:
    """``(name, docstring)`` of every invariant, in registration order (plus liveness)."""
    return [
        (spec.name, spec.doc) for spec in invariant_specs() if spec.name not in (LOAD_FAILURE, WITHIN_BUDGET)
    ]


# ===================================================================== compaction commits
def _implementation_commit(t: Tracker, record: dict[str, Any]) -> dict[str, Any] | None:
    entry = t.entry(record.get("id"))
    if entry is None or not entry.get("fromHook"):
        return None
    summary = entry.get("summary")
    if not isinstance(summary, str) or t.competitor_summary(summary):
        return None
    return entry


def _pending_match(t: Tracker, summary: str) -> str | None:
    data = summary.encode("utf-8")
    for path in reversed(list(t.pending_written)):
        if t.read(path) == data:
            return path
    return None


@_register(
    "entry:compaction",
    rules=("P3b", "P19a", "P19b", "P19c", "P61a", "P62", "P63", "P64h", "P67", "P76a", "P76b", "P76c"),
)
def commit_is_valid_brief(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Only a valid same-session ``pending`` schema-v2 Brief may be returned by
    ``session_before_compact`` as the custom summary (spec §8 Rules; §3 core invariant): its
    body has every mandatory heading on a line of its own, outside a code fence, in the spec's
    order (§9; P76b, P76c: ``oracle.brief_problems``)."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    problems = t.problems(str(entry["summary"]))
    if problems:
        yield (
            f"compaction entry {entry.get('id')} committed a summary that is not a valid pending Brief: "
            + ("; ".join(problems[:4]))
        )


@_register("entry:compaction", rules=("P1", "P2", "P3d"))
def commit_bytes_on_disk(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Durable Continuity Brief first: when Pi commits, the summary must be byte-for-byte a
    pending Brief the implementation wrote to disk (spec §3: "Native compaction uses that
    exact disk artifact as its summary"; §18 "return the exact disk Brief")."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    if _pending_match(t, str(entry["summary"])) is None:
        yield (
            f"compaction entry {entry.get('id')} was committed with a summary that no pending Brief on disk "
            f"holds ({len(t.pending_written)} pending file(s) written so far)"
        )


@_register("entry:compaction", rules=("P51a", "P68a", "P68b", "P68c", "P69a", "P69b", "P69c"))
def commit_details_correlate(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """``CompactionEntry.details`` carries ``continuityEventId``, the exact ``artifactPath`` and
    the SHA-256 of the exact summary (spec §8 Rules, §18), and the session id, the handoff reason
    of this compaction (``manual-compaction`` for Pi's ``manual``) and the effective native
    settings (``reserveTokens``, ``keepRecentTokens`` of Pi's ``event.preparation.settings``)
    among its values; the spec names no key for these, but a value filed under the frontmatter's
    or Pi's name for it is that value (P69a-c, as the feature step "its details carry the session
    id, ..." reads them: ``oracle.details_context_problems``)."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    summary = str(entry["summary"])
    brief = t.brief(summary)
    details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
    assert isinstance(details, dict)
    if brief is not None and details.get("continuityEventId") != brief.event_id:
        yield f"details.continuityEventId {details.get('continuityEventId')!r} is not the Brief's {brief.event_id!r}"
    path = _pending_match(t, summary)
    if path is not None and details.get("artifactPath") != path:
        yield f"details.artifactPath {details.get('artifactPath')!r} is not the Brief's file {path!r}"
    if sha256_hex(summary) not in leaf_values(details):
        yield "no detail holds the SHA-256 of the summary"
    checkpoint = t.open_checkpoint
    if checkpoint is not None:
        reason = HANDOFF_REASON_OF_COMPACTION.get(checkpoint.reason)
        context = handoff_context(t.session_id, reason, checkpoint.settings)
        yield from details_context_problems(details, context)


@_register("entry:compaction", rules=("P18b", "P29a", "P29b", "P30a", "P30b", "P49", "P123a", "P123b"))
def invalid_native_settings_commit_nothing(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The native settings Pi prepared (``event.preparation.settings``) are revalidated against
    the active model's window immediately before each compaction (spec §6, §13):
    ``reserveTokens`` positive (P29a) and below the window (P29b), ``keepRecentTokens`` positive
    (P30a) and below ``window - reserveTokens`` (P30b), and native compaction enabled (spec §18:
    disabled is a refused state, P123a, for ``/compact`` too, P123b); otherwise the compaction is
    refused, and the implementation commits nothing. The explorer reaches each: a reserve above
    a small model's window, and the invalid project settings of
    :data:`~pi_continuity_harness.explore.continuity.generate.NATIVE_FAULTS`. What is validated
    is Pi's prepared settings, not the file on disk (P49: "The effective native values supplied
    in ``event.preparation.settings`` are revalidated immediately before every compaction"):
    the explorer reaches a file that differs from them where ``/continuity settings`` has
    written settings valid for a small model and Pi, not restarted, prepares the ones it read at
    startup, whose reserve is above that model's window (seed 242). Every native compaction under
    such settings is cancelled (P18b: a handoff that treats them as valid commits here)."""
    entry = _implementation_commit(t, record)
    checkpoint = t.open_checkpoint
    runtime = t.host.runtime
    if entry is None or checkpoint is None or runtime is None or runtime.session.model is None:
        return
    model = runtime.session.model
    problem = native_settings_problem(checkpoint.settings, window=model.context_window)
    if problem is not None:
        yield (
            f"compaction entry {entry.get('id')} was committed with Pi's prepared settings invalid for "
            f"{model.full_id} ({model.context_window:,} tokens): {problem}"
        )


def live_settings_problem(model: Any, settings: Any) -> str | None:
    """:func:`native_settings_problem` of Pi's live compaction settings (``Tracker.live_policy``)
    for ``model``'s window."""
    values = {
        "enabled": settings.enabled,
        "reserveTokens": settings.reserve_tokens,
        "keepRecentTokens": settings.keep_recent_tokens,
    }
    return native_settings_problem(values, window=model.context_window)


def native_settings_problem(settings: dict[str, Any], *, window: int | None) -> str | None:
    """What makes Pi's prepared native settings (``event.preparation.settings``) a refused state
    (spec §6, §18), or None: native compaction disabled, ``reserveTokens`` or
    ``keepRecentTokens`` not positive, and with a ``window``, ``reserveTokens`` not below it or
    ``keepRecentTokens`` not below ``window - reserveTokens``. Non-integer values are Pi's to
    refuse (it throws before preparing), so they make no problem here."""
    reserve, keep = settings.get("reserveTokens"), settings.get("keepRecentTokens")
    if type(reserve) is not int or type(keep) is not int:
        return None
    if settings.get("enabled") is False:
        return "native compaction is disabled"
    if reserve <= 0:
        return f"reserveTokens {reserve} is not positive"
    if window is not None and reserve >= window:
        return f"reserveTokens {reserve:,} is not below the window"
    if keep <= 0:
        return f"keepRecentTokens {keep} is not positive"
    if window is not None and keep >= window - reserve:
        return f"keepRecentTokens {keep:,} is not below window - reserveTokens ({window - reserve:,})"
    return None


@_register("entry:compaction", rules=("P59b", "P112"))
def stale_pending_never_injected(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A pending Brief left by an earlier runtime (before a reload, restart or crash) is inert:
    it is never compacted or injected automatically (spec §7 "must not silently inject a stale
    pending artifact after reload", §13 "startup reports it but does not silently compact")."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    path = _pending_match(t, str(entry["summary"]))
    if path is not None and t.pending_written.get(path) != t.runtime_generation:
        yield f"the summary is the stale pending Brief {path} written before the last session start"


@_register("entry:compaction", rules=("P78", "P79a", "P79b", "P80a", "P80b", "P80c"))
def freshness_rule_once(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The event-freshness rule is inserted deterministically and idempotently under
    ``## Recovery Instructions``: exactly once, whole (spec §9 Recovery Instructions, §14; a
    paragraph counts only when it states the whole rule, its first sentence, that the Brief
    records one specific handoff, P80a, included: ``oracle.has_freshness_rule``)."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    brief = t.brief(str(entry["summary"]))
    if brief is None:
        return
    count = len(freshness_rule_paragraphs(brief.body))
    if count != 1:
        yield f"the Recovery Instructions state the event-freshness rule {count} time(s)"


@_register("entry:compaction", rules=("P117a", "P117b"))
def no_promoted_directive(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Directive-looking content is evidence, not authority: a Brief that promotes it to an
    unquoted instruction is never committed (spec §14 authority-boundary rule)."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    brief = t.brief(str(entry["summary"]))
    promoted = promoted_directives(brief.body if brief is not None else str(entry["summary"]))
    if promoted:
        yield f"the committed Brief promotes a directive: {promoted[0][:100]!r}"


@_register(
    "entry:compaction",
    rules=("P3a", "P3b", "P3c", "P3d", "P5a", "P5b", "P18b", "P19b", "P24", "P41b", "P73", "P120b"),
)
def fail_closed_no_pi_summary(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """With the implementation loaded, Pi never persists a summary of its own: every failure
    cancels, there is no fallback to an independently generated native summary (spec §3, §5
    "On failure it cancels compaction; it must never fall back"). Exempt only when another
    extension loaded after it discards its result (Pi's last-truthy-wins rule, §13)."""
    entry = t.entry(record.get("id"))
    if entry is None or entry.get("fromHook"):
        return
    if "empty" in t.competitors:
        return
    yield f"compaction entry {entry.get('id')} holds Pi's own summary (fromHook false)"


@_register(rules=("P111b",))
def mismatch_reported(t: Tracker) -> Iterator[str]:
    """An unmatched ``session_compact`` is reported as an incompatibility (spec §13 "If another
    custom-compaction handler replaces the result, the unmatched ``session_compact`` also clears
    the gate and reports the incompatibility").

    Owed where a competing extension loads after the implementation: Pi keeps the last truthy
    ``session_before_compact`` result (runner.js:826-853; pi-host-1.6.md "Multiple extensions"),
    so the competitor's own compaction or its ``{}`` (then Pi's own summary) replaces the
    implementation's Brief, while a cancel of the implementation ends the dispatch before the
    competitor runs. The implementation returns a Brief or cancels at every check point (§5), so
    a ``session_compact`` that did not commit the verified disk Brief is one it must report: a
    product-prefixed warning or error (§11 "Warnings are reserved for disabled, invalid, failed,
    stale, or restart-required states"; an ``info`` announces success) after that
    ``session_compact`` and before the next operation. The wording is not fixed. Only in a mode
    with a UI: in ``print`` and ``json`` Pi drops every notification (``noOpUIContext``, runner.js:132-163). A
    competitor that reissues the Brief bytes under its own details is judged by
    :func:`commit_details_correlate`."""
    for seq in t.unmatched:
        if _reported_after(t, seq):
            continue
        yield (
            f"the session_compact at trace seq {seq} committed something other than the verified disk "
            "Brief (a competing extension's result, or Pi's own summary after its {}) and no "
            "product-prefixed warning or error reported the incompatibility"
        )


@_register("entry:compaction", rules=("P7b", "P58", "P72"))
def artifacts_never_input(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A failed postmortem, a legacy v1 artifact or another session's artifact is never
    compaction summary or resume input, whatever its body says (spec §7, §8 "Failed
    artifacts", §15 smoke 12)."""
    entry = t.entry(record.get("id"))
    if entry is None:
        return
    summary = str(entry.get("summary") or "")
    for marker in t.markers:
        if marker in summary:
            yield f"a planted artifact ({marker}) became the compaction summary"
    brief = t.brief(summary)
    if brief is not None and brief.event_id in t.failed_event_ids:
        yield f"the failed artifact of event {brief.event_id} became the compaction summary"


#: P64g: the recorded effective percentages may differ from the exact ones by rounding to one
#: decimal (the spec's example records whole numbers; the feature step reads them so too).
_PERCENT_TOLERANCE = 0.05


@_register("entry:compaction", rules=("P63", "P64a", "P64b", "P64d", "P64e", "P64f", "P64g", "P64h", "P65"))
def brief_records_its_compaction(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The committed Brief's frontmatter records the compaction it was made for (spec §8 schema
    v2): ``modelId`` the active ``provider/model`` when the handoff starts (P64a),
    ``synthesisModel`` the model synthesis asked, resolved (P64b), ``tokenCountAtTrigger`` Pi's
    ``event.preparation.tokensBefore`` (P64d), ``contextWindow`` the active model's window
    (P64e), ``reserveTokens``/``keepRecentTokens`` the effective native settings of the event:
    ``event.preparation.settings``, never a startup snapshot or the file on disk (§8 "It
    records the current effective native token policy for diagnostics", P64f), ``effectiveTriggerPercent`` and
    ``effectiveKeepRecentPercent`` derived from those tokens and that window (P64g), and
    ``branchLeafBefore``, when present, the session's leaf before the handoff (P65),
    ``handoffReason`` the handoff reason of Pi's compaction reason (P63: ``threshold``,
    ``overflow``, ``manual-compaction`` for ``manual``) and ``sessionFile`` Pi's session file,
    compared by its name as the feature step does (P64h: the extension may see the machine under
    another root, the simulator's virtual root; an in-memory session has none to compare). The
    values are those of the check point whose ``session_before_compact`` is open when Pi commits."""
    entry = _implementation_commit(t, record)
    checkpoint = t.open_checkpoint
    if entry is None or checkpoint is None:
        return
    brief = t.brief(str(entry["summary"]))
    if brief is None:
        return
    front = brief.frontmatter
    expected: list[tuple[str, Any]] = [
        ("modelId", checkpoint.model),
        ("tokenCountAtTrigger", checkpoint.tokens_before),
        ("contextWindow", checkpoint.window),
        ("reserveTokens", checkpoint.settings.get("reserveTokens")),
        ("keepRecentTokens", checkpoint.settings.get("keepRecentTokens")),
    ]
    if checkpoint.synthesis_model is not None:
        expected.append(("synthesisModel", checkpoint.synthesis_model))
    if "branchLeafBefore" in front:
        expected.append(("branchLeafBefore", checkpoint.leaf))
    expected.append(("handoffReason", HANDOFF_REASON_OF_COMPACTION.get(checkpoint.reason)))
    for key, value in expected:
        if value is not None and front.get(key) != value:
            yield f"the Brief's {key} is {front.get(key)!r}; this compaction's is {value!r}"
    recorded = front.get("sessionFile")
    if checkpoint.session_file is not None and (
        not isinstance(recorded, str)
        or os.path.basename(recorded) != os.path.basename(checkpoint.session_file)
    ):
        yield f"the Brief's sessionFile is {recorded!r}; Pi's session file is {checkpoint.session_file!r}"
    yield from percent_problems(front)


@_register("entry:compaction", rules=("P61b",))
def brief_fields_in_schema_order(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The committed Brief's frontmatter holds every field in the order of spec §8's schema
    listing (P61b; the features' reading, ``oracle.frontmatter_order_problem``)."""
    entry = _implementation_commit(t, record)
    if entry is None:
        return
    problem = frontmatter_order_problem(str(entry.get("summary")))
    if problem is not None:
        yield f"compaction entry {entry.get('id')}: {problem}"


def percent_problems(front: dict[str, Any]) -> Iterator[str]:
    """P64g of a Brief's frontmatter ``front``: ``effectiveTriggerPercent`` and
    ``effectiveKeepRecentPercent`` are ``(window - reserve) / window`` and ``keep / window`` of
    its own tokens and window, in percent (also the observed form's)."""
    window, reserve, keep = (front.get(k) for k in ("contextWindow", "reserveTokens", "keepRecentTokens"))
    if type(window) is not int or type(reserve) is not int or type(keep) is not int or not window:
        return  # commit_is_valid_brief reports fields that are not integers
    for key, exact in (
        ("effectiveTriggerPercent", (window - reserve) * 100 / window),
        ("effectiveKeepRecentPercent", keep * 100 / window),
    ):
        recorded = front.get(key)
        if (
            isinstance(recorded, bool)
            or not isinstance(recorded, (int, float))
            or abs(recorded - exact) > _PERCENT_TOLERANCE
        ):
            yield f"the Brief's {key} is {recorded!r}; its tokens and window give {exact:.2f}"


@_register("entry:compaction", rules=("P124",))
def commit_keeps_prepared_cut(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The custom result keeps Pi's prepared ``firstKeptEntryId`` and ``tokensBefore`` (spec §18
    "the custom result keeps Pi's prepared firstKeptEntryId and tokensBefore"): what Pi
    persists in the entry is what the extension returned (agent-session.js, the hook's
    ``compaction`` taken as is), so the entry must carry the preparation's values."""
    entry = _implementation_commit(t, record)
    checkpoint = t.open_checkpoint
    if entry is None or checkpoint is None:
        return
    for key, value in (
        ("firstKeptEntryId", checkpoint.first_kept),
        ("tokensBefore", checkpoint.tokens_before),
    ):
        if value is not None and entry.get(key) != value:
            yield f"compaction entry {entry.get('id')} has {key} {entry.get(key)!r}; Pi prepared {value!r}"


def synthesis_failure(record: dict[str, Any]) -> str | None:
    """Why a synthesis reply (a ``model:reply`` record) is no Brief (spec §3, §14), or None: it
    ended with an error (P120b), stopped at its output limit (P120c), asked for a tool (P120d),
    or holds no text (P120e: an empty reply, or reasoning only). A reply ``aborted`` (P120a) is
    Pi's abort signal, after which Pi commits nothing whatever the hook returns; a synthesis
    asked again after it is ``one_synthesis_per_check_point``'s (P137)."""
    stop = record.get("stopReason")
    if stop in ("error", "length"):
        return f"stopReason {stop}"
    if record.get("toolCalls") or stop == "toolUse":
        return "a tool call"
    if not record.get("textChars"):
        return "no text"
    return None


def _reply_reasonings(t: Tracker, index: int) -> list[str]:
    """The thinking blocks' texts of the implementation's synthesis reply ``index``, as the
    model service gave it to Pi (its last exchange of that index: a reply is recorded right
    after its exchange is)."""
    for exchange in reversed(t.host.service.exchanges):
        if exchange.get("kind") == "extension" and exchange.get("index") == index:
            reply = exchange.get("reply") or {}
            thoughts = (
                str(block.get("thinking") or "").strip()
                for block in reply.get("content") or ()
                if isinstance(block, dict) and block.get("type") == "thinking"
            )
            return [thought for thought in thoughts if thought]
    return []


@_register("entry:compaction", rules=("P2",))
def reasoning_never_in_brief(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The committed Brief is the synthesis reply's Markdown text, never its reasoning (spec §3
    "Native compaction uses that exact disk artifact"; §14: the Brief is what the synthesis
    writes, and a reasoning model's thinking blocks are not its text): no reasoning of a
    synthesis reply of the check point appears in the summary Pi commits."""
    entry = _implementation_commit(t, record)
    checkpoint = t.open_checkpoint
    if entry is None or checkpoint is None:
        return
    summary = str(entry["summary"])
    for reasoning in checkpoint.reasonings:
        if reasoning in summary:
            yield f"compaction entry {entry.get('id')} holds the synthesis reply's reasoning {reasoning[:80]!r}"


@_register("entry:compaction", rules=("P120b", "P120c", "P120d", "P120e"))
def failed_synthesis_never_commits(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A synthesis that failed (an error, cut off by the output limit, a tool call, no text) is a
    failure: the check point cancels and nothing of it becomes a Brief (spec §3, §14;
    §5 "On failure it cancels compaction"). A check point makes one synthesis (P137), so a
    commit after any failed reply of its check point is one the implementation should have
    cancelled, whether it took the failed text or synthesized again."""
    entry = _implementation_commit(t, record)
    checkpoint = t.open_checkpoint
    if entry is None or checkpoint is None or not checkpoint.failed_syntheses:
        return
    yield (
        f"compaction entry {entry.get('id')} was committed after a failed synthesis of its check point "
        f"({', '.join(checkpoint.failed_syntheses)})"
    )


@_register("session:compaction_end", rules=("P138", "P90e"))
def one_failure_notice_per_check_point(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A failed native check point is reported exactly once (P138), in spec §11's words ("...
    failed: <reason>. Native compaction was cancelled.", P90e): never twice between its
    ``session_before_compact`` and its ``compaction_end``, and once when it was cancelled and
    only the implementation can have cancelled it: no competing extension is loaded, no
    synthesis of it resolved ``aborted`` (Pi's abort), and Pi shows notifications (a mode with a
    UI)."""
    checkpoint = t.open_checkpoint
    if checkpoint is None:
        return
    if checkpoint.cancel_notices > 1:
        yield (
            f"the {checkpoint.reason} check point at trace seq {checkpoint.seq} showed the failure message "
            f"{checkpoint.cancel_notices} times"
        )
    by_implementation = not t.competitors and not checkpoint.aborted_synthesis and t.has_ui
    if record.get("aborted") and by_implementation and checkpoint.cancel_notices == 0:
        yield (
            f"the {checkpoint.reason} check point at trace seq {checkpoint.seq} was cancelled without the "
            "failure message"
        )


#: Spec §11's messages of a handoff that goes well (the saved and committed ones are followed
#: by a path and a period).
_THRESHOLD_MESSAGE = f"{MESSAGE_PREFIX}: native compaction reached its threshold; preparing durable Brief."
_SAVED_MESSAGE = f"{MESSAGE_PREFIX}: Continuity Brief saved to "
_COMMITTED_MESSAGE = f"{MESSAGE_PREFIX}: native compaction committed with disk-backed Brief "
_CONTINUATION_MESSAGE = f"{MESSAGE_PREFIX}: continuation submitted from saved Brief."


@_register("ui:notify", rules=("P140",))
def commit_announced_once(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The committed announcement (spec §11 "native compaction committed with disk-backed Brief
    <path>.") is made once per committed Brief, never again for an old one: not at a later
    start, reload or operation of the run (P140)."""
    path = committed_announcement(str(record.get("message", "")))
    if path is None:
        return
    if path in t.announced_commits:
        yield f"the commit of {path} was announced again"
    t.announced_commits.add(path)


def committed_announcement(message: str) -> str | None:
    """The Brief path a committed announcement names, or None for another message."""
    if not message.startswith(_COMMITTED_MESSAGE):
        return None
    return message[len(_COMMITTED_MESSAGE) :].removesuffix(".")


@_register("model:request", "session:compaction_end", rules=("P90a", "P133"))
def threshold_announced(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Spec §11's threshold message ("native compaction reached its threshold; preparing
    durable Brief.", P90a, exact) comes before the synthesis of a threshold check point the
    implementation prepares, and never for one it refuses (P133): one whose project is
    untrusted, whose config read at startup is disabled or invalid, or whose prepared native
    settings are invalid for the active window. A synthesis model without auth is found while
    preparing (spec §18 "Authentication/model failures cancel compaction clearly"), so it is no
    refusal here. Only in a mode with a UI (Pi drops notifications in the others)."""
    checkpoint = t.open_checkpoint
    if checkpoint is None or checkpoint.reason != "threshold" or not t.has_ui:
        return
    if record.get("kind") == "model":
        if record.get("caller") == "extension" and "refused" not in record and not checkpoint.announced:
            yield "a threshold check point's synthesis began without the exact threshold message before it"
        return
    refused = (
        not t.trusted
        or t.config_state in ("disabled", "invalid")
        or native_settings_problem(checkpoint.settings, window=checkpoint.window) is not None
    )
    if refused and checkpoint.announced:
        yield "the threshold message announced a Brief for a check point the implementation must refuse"


@_register(rules=("P59a", "P90h"))
def stale_pending_reported(t: Tracker) -> Iterator[str]:
    """At startup a same-session pending Brief is reported as stale, in spec §11's words
    ("stale pending Continuity Brief found for this session; leaving it inert.", P90h), before
    the next operation (spec §13 "startup reports it but does not silently compact or inject
    it", P59a). Stale: a valid pending Brief of the session in its ``pending/`` at the session
    start, whose compaction Pi has not persisted (one it has is reconciled, P113a). Owed where
    the implementation may make Briefs durable (a trusted project, a config that is valid, a
    pinned model without auth included, or absent) and Pi shows notifications; not for a file
    whose read the scenario faulted (the implementation saw no Brief there)."""
    if t.stale_found:
        yield f"a session start found the stale pending Brief {t.stale_found[0]} and did not report it"


def _stale_pending(t: Tracker) -> list[str]:
    """The stale pending Briefs of :func:`stale_pending_reported` at this session start: those
    of :func:`_stale_briefs` where the implementation may make Briefs durable and Pi shows
    notifications."""
    if not (t.has_ui and _may_hand_off(t)):
        return []
    return sorted(t.stale_paths)


def _artifact_root(t: Tracker) -> str:
    """The artifact directory of the extension config read at the latest session start (spec
    §6: a relative ``artifactDirectory`` under ``<cwd>/<CONFIG_DIR_NAME>/``, an absolute one as
    given, ``session-continuity`` by default)."""
    directory = str(t.config.get("artifactDirectory") or "session-continuity")
    root = (
        os.path.join(t.project_dir, CONFIG_DIR_NAME, directory) if not os.path.isabs(directory) else directory
    )
    return os.path.normpath(root)


def _is_brief_file(name: str) -> bool:
    """Whether a file name is a Brief's (``*.md``), not a temporary file (dot-named, P136)."""
    return name.endswith(".md") and not name.startswith(".")


def _listing(t: Tracker, directory: str) -> list[str]:
    """The names in ``directory`` now, sorted (none when it does not exist), read as the host."""
    try:
        with t.host.host_io():
            return sorted(os.listdir(disk_path(directory)))
    except OSError:
        return []


def _session_folder(t: Tracker, folder: str) -> tuple[str, list[str]]:
    """The session's ``folder`` (``pending``, ``archive``, ``failed``) in the artifact directory
    and the names in it, sorted (none when the session or the folder does not exist)."""
    path = os.path.join(_artifact_root(t), t.session_id or "", folder)
    return path, _listing(t, path) if t.session_id else []


def _pending_briefs(t: Tracker) -> list[tuple[str, Brief, str]]:
    """The session's valid pending Briefs on disk now: (path, Brief, text)."""
    pending, names = _session_folder(t, "pending")
    found = []
    for name in names:
        if not _is_brief_file(name):
            continue
        path = os.path.join(pending, name)
        text = t.read_text(path)
        brief = t.brief(text) if text is not None else None
        if text is not None and brief is not None and not t.problems(text):
            found.append((path, brief, text))
    return found


def _persisted_summaries(t: Tracker) -> dict[str, str]:
    """The summary of each compaction entry Pi persisted, by the ``continuityEventId`` of its
    details (the custom CompactionEntry of a Brief)."""
    return {
        str(entry["details"].get("continuityEventId")): str(entry.get("summary"))
        for entry in t.entries()
        if entry.get("type") == "compaction" and isinstance(entry.get("details"), dict)
    }


def _stale_briefs(t: Tracker) -> list[str]:
    """The session's stale pending Briefs on disk now (a session start): valid pending Briefs of
    the session in its ``pending/`` whose compaction Pi has not persisted (one it has is
    reconciled, P113a)."""
    briefs = _pending_briefs(t)
    committed = _persisted_summaries(t) if briefs else {}
    return [path for path, brief, _text in briefs if brief.event_id not in committed]


def _committed_pending(t: Tracker) -> list[tuple[str, str]]:
    """The session's pending Briefs whose custom CompactionEntry Pi already persisted, with the
    same bytes as its summary (a process that died between the commit and the archive), where
    the implementation may make Briefs durable: ``(path, event id)``."""
    if not _may_hand_off(t):
        return []
    briefs = _pending_briefs(t)
    committed = _persisted_summaries(t) if briefs else {}
    return [
        (path, str(brief.event_id))
        for path, brief, text in briefs
        if brief.event_id is not None and committed.get(brief.event_id) == text
    ]


def _leftover_temps(t: Tracker) -> list[str]:
    """This session's temporary files of interrupted writes (``.<name>.<hex>.tmp`` in its
    ``pending/``, ``archive/`` or ``failed/``) at a session start, where the implementation may
    touch its artifacts (trusted, config valid, absent or locked)."""
    if not _may_hand_off(t):
        return []
    temps = []
    for folder in sorted(ARTIFACT_FOLDERS):
        directory, names = _session_folder(t, folder)
        temps += [os.path.join(directory, n) for n in names if n.startswith(".") and n.endswith(".tmp")]
    return temps


@_register(rules=("P113a",))
def committed_pending_reconciled(t: Tracker) -> Iterator[str]:
    """A pending Brief whose matching custom CompactionEntry Pi already persisted (the process
    died between the commit and the archive) is reconciled at startup (spec §13 "A matching
    persisted custom ``CompactionEntry`` can be reconciled by metadata for status/archive
    purposes, but never causes duplicate compaction"; P113a): the operation of the session start
    that found it puts a file holding the Brief of its event into ``archive/`` (retention may
    remove it again when many are reconciled at once: seed 125) and leaves no pending copy. Not
    owed when the scenario injected a filesystem fault in that operation (archiving may fail, and
    the Brief is then reported as stale) or Pi died in it. That it causes no second compaction or
    continuation is other invariants' (P113b)."""
    if not t.reconcile_due or t.crashed_in_op or t.op_faults:
        return
    for path, event_id in t.reconcile_due:
        if t.read(path) is not None or not _archived_in_operation(t, event_id):
            yield f"the committed pending Brief {os.path.basename(path)} was not reconciled into archive/ at startup"


@_register(rules=("P136",))
def leftover_temp_not_silent(t: Tracker) -> Iterator[str]:
    """A temporary file a crash left between the write and the rename is never silently left
    (spec §3, §7; P136: "reported by status or removed at startup"): each of this session's
    temporary files a session start found is removed or named in a notification by the end of
    that operation, or else named by every ``/continuity status`` of the runtime while it is on
    disk (a mode with a UI: status is a notification there)."""
    if t.leftover_temps:
        for path in t.leftover_temps:
            if t.read(path) is not None and not any(path in notice for notice in t.notices):
                t.unnamed_temps.append(path)
        t.leftover_temps = []
        return
    if not t.unnamed_temps or not t.has_ui or _continuity_command(t) != "/continuity status":
        return
    for path in t.unnamed_temps:
        if t.read(path) is not None and not any(path in notice for notice in t.notices):
            yield f"the leftover temporary file {path} was not removed, nor named at startup or by /continuity status"


#: The records of a file change: an attempt that failed counts (never try to change the file).
_FILE_CHANGES = tuple(f"fs:{op}{end}" for op in ("write", "replace", "remove") for end in ("", "_failed"))


def _changed_paths(t: Tracker, record: dict[str, Any]) -> list[str]:
    """The files a file-change record changes: a rename its source and its destination."""
    return [t.real(str(record[key])) for key in ("from", "to", "path") if isinstance(record.get(key), str)]


@_register(*_FILE_CHANGES, rules=("P59d",))
def stale_pending_left_unchanged(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A stale pending Brief is left inert (spec §13 "A process death before ``session_compact``
    leaves a same-session pending artifact inert; startup reports it but does not silently
    compact or inject it"; §11 "leaving it inert"): from the session start that found it
    (:func:`_stale_briefs`, whatever the mode, trust or config) until the next, the
    implementation writes, renames or removes none (not archived, rewritten or removed). A
    tamper rule of the scenario changes files without a file-change record. A file-change record
    names no extension: a competitor that wrote the file would count (none writes files)."""
    if not t.stale_paths:
        return
    for path in _changed_paths(t, record):
        if path in t.stale_paths:
            yield f"{record.get('name')} of the stale pending Brief {path}"


@_register(rules=("P110b",))
def pending_brief_never_deleted(t: Tracker) -> Iterator[str]:
    """A Continuity Brief leaves ``pending/`` only for ``archive/`` once Pi persisted its
    compaction (spec §3) or ``failed/`` when its handoff failed (§7); one whose compaction Pi
    aborted after the hook returned, or another handler cancelled, stays pending and inert
    (§13, P110b). The spec deletes only archived Briefs past the newest 10 (§3 retention) and an
    implementation's own temporary files (dot-named, P136).

    So each Brief file (``*.md``) an operation removed from a ``pending/`` directory of the
    artifact directory has a copy when the operation ends: a file named after its event in the
    session's ``archive/`` or ``failed/``, or one the operation wrote there, named after its
    event or holding its event id (its ``eventId`` when the run wrote it, else its file name's
    stem; spec §7 names pending and archived Briefs by event). The reference copies a committed
    Brief to ``archive/`` before it removes the pending file, and a failed one to ``failed/``
    after; retention may prune the archived copy in the same operation (seeds 59 and 125).

    Not owed where Pi died in the operation or the scenario faulted the filesystem in it: the
    copy's write may be what failed (the reference removes a Brief whose re-read the scenario
    corrupted, and its ``failed/`` write is faulted, at seeds 15, 22, 25, 43 and 48 of 0-299).
    The explorer aborts every compaction at one seed in 60 with no competitor of its own (23,
    83, 143, 263: ``generate._ABORT_AT``)."""
    if t.crashed_in_op or t.op_faults:
        return
    kept = [w for w in t.written if w.folder in ("archive", "failed")]
    for path, event_id in t.removed_pending:
        session = os.path.dirname(os.path.dirname(path))
        names = [os.path.basename(w.path) for w in kept]
        names += [
            name
            for folder in ("archive", "failed")
            for name in _listing(t, os.path.join(session, folder))
            if _is_brief_file(name)
        ]
        if any(event_id in name for name in names):
            continue
        if any(w.data is not None and f'eventId: "{event_id}"'.encode() in w.data for w in kept):
            continue
        yield f"the pending Brief {path} (event {event_id}) was deleted with no copy in archive/ or failed/"


def is_no_such_subcommand(text: str) -> bool:
    """Whether a command line is ``/continuity cleanup`` or ``/continuity compact`` (with any
    arguments): the subcommands spec §4 and §12 say do not exist."""
    return text.startswith("/continuity") and text.split()[1:2] in (["cleanup"], ["compact"])


@_register("fs:write", "fs:replace", "fs:remove", "session:compaction_start", rules=("P11",))
def no_cleanup_or_compact_command(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """There is no user-facing cleanup or compact command (spec §4, §12): ``/continuity cleanup``
    and ``/continuity compact`` start no compaction and write, move or delete no project file
    (the explorer runs both at resuming seeds ending in 6, with a stale Brief on disk). Registered
    before :func:`others_artifacts_untouched`, which sees a planted Brief's removal too, so the
    rule a removal breaks first is this one."""
    command = _continuity_command(t)
    if command is None or not is_no_such_subcommand(command):
        return
    if record.get("kind") == "session":
        yield f"{command!r} started a {record.get('reason')} compaction"
        return
    if _by_competitor(record):
        return
    path = t.real(str(record.get("to", record.get("path", ""))))
    if path.startswith(t.project_dir + os.sep):
        yield f"{command!r} did {record.get('name')} of {path}"


@_register(*_FILE_CHANGES, rules=("P139",))
def others_artifacts_untouched(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The implementation never modifies or removes another session's artifacts, nor files of
    its own session it did not write (spec §7 "Artifacts from other sessions are inert", §8):
    no file change under ``<artifactDirectory>/<other session>/{pending,archive,failed}/`` (a
    temporary file of another session's write in progress included; another session: one the run
    had or the scenario planted artifacts of, so a file written under a misspelt session directory
    is :func:`artifacts_named_by_event`'s), and none of the artifacts
    the scenario planted (a foreign session's Brief, a legacy schema-v1 Brief and an old failed
    artifact of this session; a temporary file of this session left by a crash is P136's to
    remove). The artifact directory is the config's at the latest session start; files outside
    it are :func:`writes_only_its_own_files`'s. A file-change record names no extension."""
    root = _artifact_root(t) + os.sep
    for path in _changed_paths(t, record):
        if path in t.planted_paths:
            yield f"{record.get('name')} of {path}, an artifact the implementation did not write"
            continue
        if not path.startswith(root):
            continue
        parts = path[len(root) :].split(os.sep)
        if (
            len(parts) == 3
            and parts[1] in ARTIFACT_FOLDERS
            and parts[0] != t.session_id
            and parts[0] in t.known_sessions
        ):
            yield f"{record.get('name')} of {path}, an artifact of session {parts[0]}"


@_register(rules=("P46a", "P28a", "P36a"))
def invalid_config_reported(t: Tracker) -> Iterator[str]:
    """An invalid extension config is reported loudly at startup (spec §6 "Invalid extension
    config ... disables/cancels automatic behaviour until corrected"; §11 "Invalid extension
    config must name its path"): after an operation whose session start read a config the
    checker finds invalid (not JSON, not an object, ``enabled`` not a boolean (P28a: ``"yes"``
    is not coerced), ``synthesisModel`` neither ``inherit`` nor ``provider/model``, an unknown
    ``synthesisEffort``, P36a: ``turbo``, or ``High``, a label in another case), a
    product-prefixed warning or error of that operation names the config's path and each invalid
    field (P46a). P31 (``"gpt"`` refused) is not declared: the
    first explored seed that writes it in a trusted project with a UI is 94, beyond the kill
    matrix's 60 (``synthesis_model_unchecked`` fails this invariant there). Owed in a mode with
    a UI and a trusted project (an untrusted one reads no config), with Pi alive at the end of
    the operation."""
    fields = t.config_invalid_at_start
    if fields is None or t.crashed_in_op or not t.has_ui or not t.trusted:
        return
    alarms = [alarm for alarm in t.alarms if t.config_path in alarm]
    if not alarms:
        yield f"the invalid extension config {t.config_path} was not reported by a notification naming it"
        return
    for name in fields:
        if not any(name in notice for notice in alarms):
            yield f"the report of the invalid extension config does not name its invalid field {name}"


#: Spec §11's refusal of Pi's native settings, its exact first sentences (P90f).
_REFUSAL_MESSAGE = (
    f"{MESSAGE_PREFIX} refused: native compaction settings are invalid for the current model. "
    "Run /continuity settings and restart Pi."
)


def _shown_number(text: str, label: str) -> int | None:
    """The number shown right after ``label`` in ``text`` (``reserveTokens: 50000``,
    ``reserveTokens = 50,000``; any few separators), or None."""
    match = re.search(re.escape(label) + r"[^0-9\n]{0,12}?([0-9][0-9,]*)", text)
    return int(match.group(1).replace(",", "")) if match else None


@_register(rules=("P18a", "P90f", "P91", "P29a", "P29b", "P30a", "P30b", "P123a", "P38b"))
def native_refusal_reported(t: Tracker) -> Iterator[str]:
    """Pi's native settings that are invalid for the active window are refused aloud (spec §11,
    §18 "Structurally invalid settings for the active window fail closed and require
    reconfiguration/restart"): after an operation that started a session or selected a model
    (P18a: at startup or after a model change) while Pi's live settings are a refused state for
    the active model (:func:`native_settings_problem`: native compaction disabled (P123a), a
    reserve not positive (P29a) or not below the window (P29b), a keep not positive (P30a) or not
    below window - reserve (P30b): each rule's "refusal notification"), a notification opens with §11's
    exact refusal (P90f) and shows ``enabled``, ``reserveTokens`` and ``keepRecentTokens`` with
    their values, the active ``contextWindow`` and the project settings path (P91: each value the
    first number after its name). Owed in a mode with a UI, a trusted project, an extension config
    that is valid or absent (or pins a model without auth), with Pi alive at the end of it. The
    settings judged are Pi's own, read from ``<cwd>/<CONFIG_DIR_NAME>/settings.json``: an
    implementation that reads its native settings from another file (P38b) refuses none of them."""
    if not t.policy_checked or t.crashed_in_op or not (t.has_ui and _may_hand_off(t)):
        return
    live = t.live_policy()
    if live is None:
        return
    model, settings = live
    window = model.context_window
    if live_settings_problem(model, settings) is None:
        return
    refusals = [notice for notice in t.notices if notice.startswith(_REFUSAL_MESSAGE)]
    if not refusals:
        yield (
            f"Pi's settings are invalid for {model.full_id} ({window:,} tokens) and no notification opens "
            f"with spec §11's refusal {_REFUSAL_MESSAGE!r}"
        )
        return
    text = refusals[-1]
    for label, value in (
        ("reserveTokens", settings.reserve_tokens),
        ("keepRecentTokens", settings.keep_recent_tokens),
        ("contextWindow", window),
    ):
        shown = _shown_number(text, label)
        if shown != value:
            yield f"the refusal shows {label} {shown} for Pi's {value}"
    if "enabled" not in text[len(_REFUSAL_MESSAGE) :]:
        yield "the refusal does not show whether native compaction is enabled"
    if t.settings_path not in text:
        yield f"the refusal does not name the project settings {t.settings_path}"


@_register("event:session_start", rules=("P93a",))
def one_command(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The implementation registers exactly one command, ``continuity`` (spec §12 "v0.2.0
    commands: /continuity ..."; §18): no alias, no other name. Read from Pi's extension
    runner at each session start, the implementation's by its place in the load order."""
    runtime = t.host.runtime
    if runtime is None:
        return
    loaded = list(runtime.runner.extensions)
    declared = list(t.simulation.result.scenario.extensions)
    if len(loaded) != len(declared):
        return  # an extension failed to load: its load failure is reported on its own
    for ref, extension in zip(declared, loaded, strict=True):
        names = sorted(extension.commands)
        if ref.implementation and names != ["continuity"]:
            yield f"the implementation registers the commands {names}; spec §12 names one, continuity"


#: Spec §11's exact messages and the levels §11 gives their states ("Warnings are reserved for
#: disabled, invalid, failed, stale, or restart-required states"): normal states (P92a) at
#: ``info``; failed, refused and stale ones (P92b) as a warning or an error. A message in other
#: words is not judged here (P90a-h judge the words).
_NORMAL_MESSAGES = (_THRESHOLD_MESSAGE, _SAVED_MESSAGE, _COMMITTED_MESSAGE, _CONTINUATION_MESSAGE)
_STALE_MESSAGE = f"{MESSAGE_PREFIX}: stale pending Continuity Brief found for this session; leaving it inert."
_FAILED_PREFIX = f"{MESSAGE_PREFIX} failed: "
_CANCELLED_SUFFIX = ". Native compaction was cancelled."
_ALARM_MESSAGES = (_FAILED_PREFIX, f"{MESSAGE_PREFIX} refused: ", _STALE_MESSAGE)


@_register("ui:notify", rules=("P92a", "P92b"))
def notification_levels(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A notification in spec §11's words has its state's level: the threshold, saved,
    committed and continuation messages are not warnings (P92a); a failure, a refusal and a
    stale pending Brief are warnings or errors (P92b). The settings-saved message is left
    alone: it is a normal state and a restart-required one at once."""
    problem = notification_level_problem(str(record.get("message", "")), record.get("notifyType"))
    if problem is not None:
        yield problem


def notification_level_problem(message: str, level: Any) -> str | None:
    """:func:`notification_levels` of one notification (also its observed form)."""
    if message.startswith(_NORMAL_MESSAGES) and level != "info":
        return f"a normal-state notification is a {level}: {message[:80]!r}"
    if message.startswith(_ALARM_MESSAGES) and level not in ("warning", "error"):
        return f"a failed, refused or stale state is notified as {level}: {message[:80]!r}"
    return None


@_register("ui:notify", rules=("P92b",))
def status_level_follows_state(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A ``/continuity status`` panel (a notification with a ``Status:`` line) that shows a
    stale pending Brief, a last failure or a restart required is a warning or an error (spec
    §11 "Warnings are reserved for disabled, invalid, failed, stale, or restart-required
    states"; P92b, as the feature steps "the status output was shown as a warning or an error"
    read it): the states are read from the panel itself (a ``stale`` or a ``failure`` line with a
    value, the oracle's ``status_lines``, and "Restart required: yes"). Not judged in an untrusted
    project: its status is ``untrusted``, a state spec §11 does not name, though its last
    failure may be a refusal because of the trust (the reference shows it as info)."""
    message = str(record.get("message", ""))
    if not t.trusted or not _STATUS_LINE.search(message) or record.get("notifyType") in ("warning", "error"):
        return
    restart = _RESTART_LINE.search(message)
    states = [
        ("a stale pending Brief", status_lines(message, "stale")[1]),
        ("a last failure", status_lines(message, "failure")[1]),
        ("a restart required", restart is not None and restart.group(1).lower() == "yes"),
    ]
    shown = [state for state, present in states if present]
    if shown:
        yield f"a status panel showing {' and '.join(shown)} was notified as {record.get('notifyType')}"


# ===================================================================== continuation
def _by_competitor(record: dict[str, Any]) -> bool:
    """The call came from the competing extension, not from the implementation under test."""
    return str(record.get("ext", "")).startswith("competitor:")


@_register(
    "call:send_user_message",
    rules=("P4", "P21a", "P21b", "P22", "P59c", "P71b", "P83", "P97c", "P110b", "P113b"),
)
def continuation_only_after_threshold_commit(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A continuation is submitted only from ``session_compact`` of a *threshold* compaction
    whose committed entry is the verified disk Brief: never after overflow (Pi retries by
    itself), manual compaction, a failure, a mismatch or a reload (spec §10, §18); so
    reconciliation at startup causes no continuation either (P113b), nor does the Brief of a
    compaction Pi aborted or another handler cancelled (P110b: it stays pending, never a prompt)."""
    if _by_competitor(record):
        return
    window = t.window
    if window is None:
        yield "a message was submitted outside any session_compact (no compaction had just committed)"
    elif window.reason != "threshold":
        yield f"a continuation was submitted after a {window.reason} compaction"
    elif window.entry_id not in t.verified:
        yield "a continuation was submitted after a compaction that did not commit the verified disk Brief"


@_register("call:send_user_message", rules=("P84",))
def archived_before_continuation(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The committed Brief is archived before the continuation is submitted (spec §18 "then
    archive and submit that retained exact payload"): when the implementation submits a
    message after a compaction that committed the verified disk Brief, an archived copy of that
    Brief's event was written in the operation. A continuation after any other compaction is
    :func:`continuation_only_after_threshold_commit`'s."""
    window = t.window
    if _by_competitor(record) or window is None or window.entry_id not in t.verified:
        return
    brief = t.brief(t.verified[str(window.entry_id)])
    event_id = brief.event_id if brief is not None else None
    if event_id is None:
        return
    if not _archived_in_operation(t, event_id):
        yield f"the continuation of event {event_id} was submitted before its Brief was archived"


@_register("call:send_user_message", rules=("P85",))
def one_continuation_per_compaction(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """At most one visible continuation per threshold compaction (spec §10; the duplicate
    continuation of nicobailon/pi-subagents PR #2150)."""
    if _by_competitor(record) or t.window is None:
        return
    if t.window.continuations > 1:
        yield f"{t.window.continuations} continuations were submitted for one compaction"


@_register("call:send_user_message", rules=("P125",))
def continuation_is_follow_up(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The continuation is submitted with ``deliverAs: "followUp"`` (spec §18), so it never
    interrupts the run it lands in."""
    if _by_competitor(record):
        return
    if record.get("deliverAs") != "followUp":
        yield f"the continuation was submitted with deliverAs {record.get('deliverAs')!r}"


@_register("event:input", rules=("P82a", "P82b", "P82c"))
def continuation_from_disk_bytes(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The continuation is the verified pending disk bytes plus the fixed suffix of spec §10,
    nothing else (spec §10, §18 "Build and retain it from the verified pending disk bytes")."""
    if record.get("source") != "extension" or not t.continuations:
        return
    summary = t.continuations.popleft()
    if summary is None:
        return
    text = t.real(str(record.get("text") or ""))
    if not text.startswith(summary):
        yield "the continuation does not start with the exact committed Brief bytes"
    elif not text.endswith(CONTINUATION_SUFFIX):
        yield "the continuation does not end with the fixed continuation suffix"
    elif text[len(summary) : len(text) - len(CONTINUATION_SUFFIX)].strip():
        yield "the continuation has extra text between the Brief and the suffix"


# ===================================================================== archive
@_register("fs:replace", rules=("P2", "P6a", "P66a", "P66b", "P70a", "P70b", "P70c"))
def archive_requires_full_match(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A Brief is archived only after ``session_compact`` confirmed the matching custom
    ``CompactionEntry``: entry metadata, session, event, path, hash, summary and the pending disk
    bytes all match; archival changes only ``status`` and ``updatedAt`` (spec §7, §8)."""
    # ``fs:replace`` is written after the rename: the Brief is at its destination now.
    destination = t.real(str(record.get("to", "")))
    if f"{os.sep}archive{os.sep}" not in destination or not destination.endswith(".md"):
        return
    text = t.read_text(destination)
    t.archives_checked.add(destination)
    if text is None:
        return
    yield from _check_archive(t, destination, text)


@_register("fs:replace", rules=("P66a",))
def failed_copies_say_failed(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A Brief put into a ``failed/`` folder has ``status: failed`` (spec §8 "Allowed statuses":
    failed in ``failed/``): a Brief written but not made durable, or refused, is retired with
    the status of where it lies. A failure record without a Brief's frontmatter is
    ``failure_record_complete``'s."""
    destination = t.real(str(record.get("to", "")))
    if f"{os.sep}failed{os.sep}" not in destination or not destination.endswith(".md"):
        return
    text = t.read_text(destination)
    brief = t.brief(text) if text is not None else None
    if brief is not None and brief.status != "failed":
        yield f"{os.path.basename(destination)} lies in failed/ with status {brief.status!r}"


def _check_archive(t: Tracker, path: str, text: str) -> Iterator[str]:
    brief = t.brief(text)
    if brief is None or brief.status != "archived":
        yield f"{os.path.basename(path)} is not an archived Brief (status {brief.status if brief else None!r})"
        return
    committed = []
    for entry in t.entries():
        if entry.get("type") != "compaction" or not entry.get("fromHook"):
            continue
        summary_brief = t.brief(str(entry.get("summary") or ""))
        if summary_brief is not None and summary_brief.event_id == brief.event_id:
            committed.append((entry, summary_brief))
    if not committed:
        yield f"event {brief.event_id} was archived but no committed compaction entry carries it"
        return
    entry, summary_brief = committed[-1]
    if summary_brief.body != brief.body:
        yield f"the archived body of event {brief.event_id} differs from the committed summary"
    changed = {
        key
        for key in set(summary_brief.frontmatter) | set(brief.frontmatter)
        if summary_brief.frontmatter.get(key) != brief.frontmatter.get(key)
    }
    if not changed <= {"status", "updatedAt"}:
        yield f"archival of event {brief.event_id} changed {sorted(changed - {'status', 'updatedAt'})}"
    if entry.get("id") not in t.verified:
        yield f"event {brief.event_id} was archived although its commit was not the verified disk Brief"
    details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
    assert isinstance(details, dict)
    pending = details.get("artifactPath")
    if isinstance(pending, str):
        now = t.read_text(pending)
        if now is not None and now != entry.get("summary"):
            yield f"event {brief.event_id} was archived although its pending bytes changed after the commit"


@_register(rules=("P54",))
def archive_retention(t: Tracker) -> Iterator[str]:
    """After each archive, only the newest 10 archived Briefs of the session are kept (spec §6
    ``archiveRetention = 10``, §7)."""
    for root, files in t.archive_directories():
        briefs = [name for name in files if _is_brief_file(name)]
        if len(briefs) > ARCHIVE_LIMIT:
            yield f"{root} holds {len(briefs)} archived Briefs"


@_register(rules=("P6a",))
def archive_written_directly(t: Tracker) -> Iterator[str]:
    """Archived Briefs written without an atomic rename are checked after the operation with
    the same rule as :func:`archive_requires_full_match` (spec §7, §8)."""
    for root, files in t.archive_directories():
        for name in sorted(files):
            path = os.path.join(root, name)
            if not _is_brief_file(name) or path in t.archives_checked:
                continue
            t.archives_checked.add(path)
            text = t.read_text(path)
            if text is not None:
                yield from _check_archive(t, path, text)


# ===================================================================== artifact files
#: Spec §7: the folders of a session's artifacts under ``<artifactDirectory>/<sessionId>/``.
ARTIFACT_FOLDERS = frozenset({"pending", "archive", "failed"})
#: ``<timestamp>`` of ``<timestamp>-<eventId>.md``: the spec fixes no format, so any run of
#: file-name-safe characters holding a date's eight digits or more (the reference writes
#: ``2026-11-30T00-01-02-123Z``, Pi's session file names' form).
_TIMESTAMP = re.compile(r"[A-Za-z0-9._:+-]+")
_SESSION_ID = re.compile(r"^sessionId:\s*\"?([^\"\n]+)\"?\s*$", re.MULTILINE)


def _frontmatter_field(pattern: re.Pattern[str], text: str) -> str | None:
    """A field of the artifact's frontmatter, read line by line: a failed postmortem need not be
    a valid Brief, and a tamper rule may have cut the end of a file."""
    match = pattern.search(text)
    return match.group(1).strip() if match else None


@_register(rules=("P97a",))
def checkpoint_writes_one_brief(t: Tracker) -> Iterator[str]:
    """``/continuity checkpoint`` writes one pending Brief (spec §12 "It synthesizes, validates,
    and writes a schema-v2 Continuity Brief as pending"): no second pending file in the
    command's operation. That it writes one at all where nothing refuses it, and its
    ``handoffReason``, are the features' to judge. A native check point inside the command (a
    compaction Pi starts while it runs) writes its own, counted apart."""
    if _continuity_command(t) != "/continuity checkpoint":
        return
    paths = sorted({w.path for w in t.written if w.folder == "pending" and w.handoff[0] == "operation"})
    if len(paths) > 1:
        yield f"/continuity checkpoint wrote {len(paths)} pending files: {', '.join(map(os.path.basename, paths))}"


@_register(rules=("P64d",))
def checkpoint_records_context_usage(t: Tracker) -> Iterator[str]:
    """A ``/continuity checkpoint`` Brief's ``tokenCountAtTrigger`` is Pi's context usage when
    Pi knows it (spec §8 "tokenCountAtTrigger"; the reference reads ``ctx.getContextUsage()``,
    an estimate only where Pi's usage is unknown, after a compaction): each pending Brief the
    command wrote records the tokens Pi's session reports after it. Not judged where a native
    check point ran in the same operation (its compaction changes the usage)."""
    if _continuity_command(t) != "/continuity checkpoint" or t.crashed_in_op:
        return
    runtime = t.host.runtime
    if runtime is None or len(t.checkpoints) > t.op_checkpoints:
        return
    usage = runtime.session.get_context_usage()
    if usage is None or usage.tokens is None:
        return
    for written in t.written:
        if written.folder != "pending" or written.handoff[0] != "operation":
            continue
        text = t.written_text(written)
        brief = t.brief(text) if text is not None else None
        if brief is None:
            continue
        recorded = brief.frontmatter.get("tokenCountAtTrigger")
        if recorded != usage.tokens:
            yield (
                f"the checkpoint's Brief {os.path.basename(written.path)} records tokenCountAtTrigger "
                f"{recorded!r}; Pi's context usage is {usage.tokens}"
            )


@_register(rules=("P108a", "P108b", "P110a", "P111a", "P93b"))
def checkpoint_runs_when_idle(t: Tracker) -> Iterator[str]:
    """The single-flight gate is released when a handoff ends (spec §13 "one in-memory active
    operation per session"; "If Pi aborts after ``session_before_compact`` returns but before
    commit, the hook signal clears the in-memory gate"; "the unmatched ``session_compact`` also
    clears the gate"): a ``/continuity checkpoint`` the user runs between operations, when no
    handoff is in flight, is never refused as busy. It synthesizes (a synthesis request), writes
    a pending Brief, or reports a failure in spec §11's words ("Pi Session Continuity failed:
    ..."), whatever came before it: a committed (P108a), failed (P108b: a failed checkpoint
    too), aborted or cancelled (P110a) or unmatched (P111a) handoff. Owed where nothing else
    may refuse it: a mode with a UI (§18: without one it is read-only), a trusted project
    (P98a), an extension config that is valid or absent (or pins a model without auth, a
    failure found while preparing), a live model whose compaction settings Pi can read, and a
    Pi that did not die in the command. The last two change no verdict of the reference at seeds
    0-299 (it reports a failure there); they keep the rule from judging an implementation that
    refuses where something else than the gate stands in its way. It also reads ``/continuity
    checkpoint``'s dispatch (P93b, spec §12): a command sent elsewhere (to the status panel)
    neither synthesizes, writes nor fails."""
    if _continuity_command(t) != "/continuity checkpoint" or t.crashed_in_op:
        return
    if not (t.has_ui and _may_hand_off(t)):
        return
    if t.live_policy() is None:
        return
    if t.op_synthesis_requests or any(w.folder == "pending" for w in t.written):
        return
    if any(notice.startswith(_FAILED_PREFIX) for notice in t.notices):
        return
    said = [notice for notice in t.notices if notice.startswith(MESSAGE_PREFIX)]
    yield (
        "/continuity checkpoint with no handoff in flight neither synthesized, wrote a Brief nor "
        f"reported a failure; it said {said[-1][:120]!r}"
        if said
        else "/continuity checkpoint with no handoff in flight neither synthesized, wrote a Brief nor said anything"
    )


@_register(rules=("P53a",))
def checkpoint_saved_message_exact(t: Tracker) -> Iterator[str]:
    """A checkpoint that saved its Brief says so in spec §11's words, naming the file: "Pi
    Session Continuity: Continuity Brief saved to <path>." where ``<path>`` is the resolved
    pending file the command just wrote, not a directory or a path relative to the project
    (spec §7 "reported paths are resolved paths"; P53a). Owed in a mode with a UI for each
    valid pending Brief the command wrote that is still pending when it ends (one a later phase
    failed was moved to ``failed/``), unless Pi died in the command (seeds 132, 133, 145, 158,
    277: a crash rule fires right after the rename)."""
    if not t.has_ui or _continuity_command(t) != "/continuity checkpoint" or t.crashed_in_op:
        return
    for path in sorted({w.path for w in t.written if w.folder == "pending" and w.handoff[0] == "operation"}):
        text = t.read_text(path)
        if text is None or t.problems(text):
            continue
        if f"{_SAVED_MESSAGE}{path}." not in t.notices:
            yield f"no exact 'Continuity Brief saved to {path}.' after /continuity checkpoint wrote it"


@_register(rules=("P55", "P56", "P95m"))
def status_names_last_artifact(t: Tracker) -> Iterator[str]:
    """``/continuity status`` shows the last artifact path (spec §12 "artifact directory, current
    operation, last artifact/failure"): the path of the artifact file the implementation last put
    in place since the runtime's session start (status is process-local), whether a checkpoint's
    or a handoff's pending Brief (P95m), the archived Brief after an archive, not the pending path
    it left (P55), or the failed artifact after a failure (P56). Owed in a mode with a UI (status
    is a notification there) while no failure reported after that artifact leaves it open (a
    failed record that could not be written: P57 has status name no artifact then, the
    features' to judge; no seed of 0-299 shows status after such a failure)."""
    if not t.has_ui or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    path = t.last_artifact
    if path is None or t.last_artifact_open:
        return
    if not any(path in notice for notice in t.notices):
        folder = os.path.basename(os.path.dirname(path))
        yield f"/continuity status does not show the last artifact, the {folder} file {path}"


@_register(rules=("P95n",))
def status_reports_last_failure(t: Tracker) -> Iterator[str]:
    """``/continuity status`` shows the last failure after a failed handoff (spec §12 status
    "last artifact/failure"; P95n): when the latest outcome the implementation announced since the
    runtime's session start was a failure in spec §11's words ("Pi Session Continuity failed:
    ..."; a refusal of a compaction is one), the status (a UI) has a line speaking of a failure
    whose value is not ``none`` (the features' reading, ``oracle.status_lines``). A Brief
    saved or committed after the failure ends what is owed: whether status still shows an older
    failure then is open."""
    if not t.has_ui or not t.failed_last or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    panels = [notice for notice in t.notices if status_lines(notice, "failure")[0]]
    if not any(status_lines(panel, "failure")[1] for panel in panels):
        yield "/continuity status reports no last failure after the implementation reported a failure"


@_register(rules=("P60",))
def status_names_stale_pending(t: Tracker) -> Iterator[str]:
    """``/continuity status`` shows the path of each stale same-session pending Brief (spec §7
    "They may be shown by ``/continuity status``", §12 "stale same-session pending path"; P60):
    the stale pending Briefs the runtime's session start found and reported
    (:func:`stale_pending_reported`'s: a UI, trusted, config valid, absent or locked; not a file
    whose read the scenario faulted), while they are still on disk."""
    if not t.has_ui or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    if not _may_hand_off(t):
        return
    for path in sorted(t.stale_paths - t.stale_unread):
        if t.read(path) is not None and not any(path in notice for notice in t.notices):
            yield f"/continuity status does not show the stale pending Brief {path}"


@_register(rules=("P72",))
def invalid_pending_never_stale(t: Tracker) -> Iterator[str]:
    """A planted file of a ``pending/`` folder that is no valid pending v2 Brief of this session
    (the legacy v1 artifact of the planted seeds, another session's Brief) is history, never a
    stale pending Brief (spec §8 "existing v1 artifacts remain historical/inert", §7 "stale
    same-session pending"): no line of the operation's product notifications that speaks of a
    stale Brief names it (the status's stale list, the startup warning)."""
    if not t.notices:
        return
    for path in sorted(t.planted_paths):
        if f"{os.sep}pending{os.sep}" not in path:
            continue
        text = t.read_text(path)
        if text is None or not t.problems(text):
            continue  # gone, or a valid pending Brief of this session
        for notice in t.notices:
            line = next((ln for ln in notice.splitlines() if path in ln and "stale" in ln.lower()), None)
            if line is not None:
                yield f"a notification names {path}, no pending Brief of this session, as stale: {line[:160]!r}"
                break


_RESTART_LINE = re.compile(r"restart required:\s*(yes|no)\b", re.IGNORECASE)
_STATUS_LINE = re.compile(r"^\s*Status:", re.MULTILINE)


def _status_panels(t: Tracker) -> list[str]:
    """The operation's notifications that are a status panel: those with a ``Status:`` line
    (spec §11's block; the feature steps' ``_panel`` reads them so)."""
    return [notice for notice in t.notices if _STATUS_LINE.search(notice)]


@_register(rules=("P95j", "P134"))
def status_restart_state(t: Tracker) -> Iterator[str]:
    """``/continuity status`` says whether a restart is required (spec §12 "whether restart is
    required"; P95j: a "Restart required: yes|no" line, the catalogue's observable), and while
    Pi's live settings are a refused state for the active window it does not say "no": the
    refusal tells the user to run ``/continuity settings`` and restart Pi (P134). Owed in a mode
    with a UI, a trusted project and an extension config that is valid, absent or locked, with
    Pi's live settings readable. "yes" after the native setup wrote new settings (P15) is left to
    the features: no seed of 0-299 shows a status after such a write in the same runtime."""
    if not t.has_ui or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    if not _may_hand_off(t):
        return
    live = t.live_policy()
    if live is None:
        return
    answers = [m.group(1).lower() for notice in t.notices for m in _RESTART_LINE.finditer(notice)]
    if not answers:
        yield "/continuity status does not say whether a restart is required ('Restart required: yes|no')"
        return
    model, settings = live
    if live_settings_problem(model, settings) is not None and "no" in answers:
        yield "/continuity status says 'Restart required: no' while Pi's live settings are refused"


@_register(rules=("P7a",))
def failed_synthesis_leaves_a_record(t: Tracker) -> Iterator[str]:
    """When synthesis fails, a failed postmortem artifact is written under ``failed/`` (spec §3
    "any failure cancels", §8 "pending → failed when synthesis, validation, write, re-read, ...
    fails"; P7a "when the filesystem allows it"): each native check point of the operation whose
    synthesis reply failed (an error, a length stop, a tool call, no text: the explorer's synthesis
    faults) and which did not commit puts a file into a ``failed/`` folder that is still there
    when the operation ends. Not owed when the scenario injected a filesystem fault in the
    operation (the filesystem may not allow it) or Pi died in it (without that, the reference
    failed seeds 46, 122 and 239); a synthesis Pi aborted is Pi's abort, not a failure of the
    implementation's."""
    if t.crashed_in_op or t.op_faults or not t.trusted:
        return
    for checkpoint in t.checkpoints[t.op_checkpoints :]:
        if (
            not checkpoint.failed_syntheses
            or checkpoint.aborted_synthesis
            or checkpoint.outcome == "committed"
        ):
            continue
        handoff = ("check point", checkpoint.seq)
        kept = [
            w
            for w in t.written
            if w.folder == "failed" and w.handoff == handoff and t.read(w.path) is not None
        ]
        if not kept:
            yield (
                f"the {checkpoint.reason} check point at trace seq {checkpoint.seq} failed its synthesis "
                f"({checkpoint.failed_syntheses[0]}) and left no failed artifact"
            )


@_register(rules=("P74",))
def partial_brief_kept_as_failed(t: Tracker) -> Iterator[str]:
    """When a partial Brief existed, the failed artifact keeps it as a schema-v2 Brief with
    ``status: failed`` (spec §8 "When a partial Brief exists and validation or pre-compaction
    preparation fails, the failed artifact should preserve schema v2 with ``status: failed`` and
    mandatory headings where available"; P74): a native check point whose
    synthesis reply was a Brief missing one mandatory heading (the explorer's ``missing_heading``
    fault: validation refuses it) and which did not commit leaves its failed artifact as a
    schema-v2 Brief of status ``failed`` (``oracle.brief_problems``, the heading problems aside),
    not a bare failure record. Not owed when the scenario faulted the filesystem in the operation
    or Pi died in it."""
    if t.crashed_in_op or t.op_faults or not t.trusted:
        return
    for checkpoint in t.checkpoints[t.op_checkpoints :]:
        if checkpoint.scripted_kinds[-1:] != ["missing_heading"] or checkpoint.outcome == "committed":
            continue
        handoff = ("check point", checkpoint.seq)
        for written in t.written:
            if written.folder != "failed" or written.handoff != handoff:
                continue
            text = t.written_text(written)
            if text is None:
                continue
            problems = [p for p in brief_problems(text, status="failed") if "heading" not in p]
            if problems:
                name = os.path.basename(written.path)
                yield f"{name} keeps no schema-v2 failed Brief of the partial one: {problems[0]}"


@_register(rules=("P34b",))
def locked_model_named(t: Tracker) -> Iterator[str]:
    """A synthesis model without configured auth cancels the compaction with a failure notification
    naming it (spec §18 "Authentication/model failures cancel compaction clearly"; P34b): each
    native check point of the operation, while the extension config read at startup pins a model
    whose provider has no configured auth (``locked``), ends without a commit and with a
    product-prefixed failure ("Pi Session Continuity failed: ...") that names the pinned model.
    Owed in a mode with a UI and a trusted project, with Pi alive through the operation, for a
    check point whose prepared settings are not refused first (seeds 234 and 284 refuse them,
    and say why, before the model is looked at)."""
    if t.config_state != "locked" or not t.has_ui or not t.trusted or t.crashed_in_op:
        return
    model = str(t.config.get("synthesisModel"))
    owed = [
        checkpoint
        for checkpoint in t.checkpoints[t.op_checkpoints :]
        if native_settings_problem(checkpoint.settings, window=checkpoint.window) is None
    ]
    for checkpoint in owed:
        if checkpoint.outcome == "committed" and checkpoint.verified:
            yield f"the {checkpoint.reason} check point at trace seq {checkpoint.seq} committed with {model} locked"
    if owed and not any(notice.startswith(_FAILED_PREFIX) and model in notice for notice in t.notices):
        yield f"no failure notification names the synthesis model {model}, which has no configured auth"


@_register(rules=("P25d",))
def artifacts_in_default_directory(t: Tracker) -> Iterator[str]:
    """Without an ``artifactDirectory`` in the extension config (no config file, or one without
    the field), the artifacts live under ``<cwd>/<CONFIG_DIR_NAME>/session-continuity`` (spec §6
    default ``artifactDirectory: "session-continuity"``, §7; P25d): every artifact file the
    operation put into a ``pending/``, ``archive/`` or ``failed/`` folder lies there. The config is
    the one read at the latest session start."""
    if "artifactDirectory" in t.config or t.config_state not in _MAY_HAND_OFF:
        return
    root = os.path.join(t.project_dir, CONFIG_DIR_NAME, "session-continuity") + os.sep
    for written in t.written:
        if not written.path.startswith(root):
            yield f"the artifact {written.path} does not lie under the default artifact directory {root}"


@_register(rules=("P98a",))
def untrusted_checkpoint_refused_aloud(t: Tracker) -> Iterator[str]:
    """In an untrusted project ``/continuity checkpoint`` is refused with a trust notification
    (spec §6 "Project-local files may be read or written only when ``ctx.isProjectTrusted()`` is
    true"; P98a, "notification naming trust"): in a mode with a UI, the command shows a
    product-prefixed notification that speaks of trust (the word ``trust`` in any form). That it
    writes nothing is :func:`untrusted_project_untouched`'s."""
    if t.trusted or not t.has_ui or _continuity_command(t) != "/continuity checkpoint" or t.crashed_in_op:
        return
    if not any(notice.startswith(MESSAGE_PREFIX) and "trust" in notice.lower() for notice in t.notices):
        yield "/continuity checkpoint in an untrusted project showed no notification naming trust"


@_register(rules=("P90g",))
def settings_saved_message_exact(t: Tracker) -> Iterator[str]:
    """A settings write of the native setup says so in spec §11's words (P90g): after a
    ``/continuity settings`` command (a UI) that put a new project ``settings.json`` in place, a
    notification reads exactly "Pi Session Continuity: settings saved to <settings path>; restart
    Pi to activate them." Not owed when Pi died in the command."""
    if not t.has_ui or t.crashed_in_op or not t.settings_saved:
        return
    command = _continuity_command(t)
    if command is None or not command.startswith("/continuity settings"):
        return
    expected = f"{MESSAGE_PREFIX}: settings saved to {t.settings_path}; restart Pi to activate them."
    if expected not in t.notices:
        yield f"no exact {expected!r} after the native setup wrote {t.settings_path}"


@_register(rules=("P51a", "P51b", "P51c"))
def artifacts_named_by_event(t: Tracker) -> Iterator[str]:
    """Each artifact file is named for its own event and session (spec §7): a pending Brief
    ``<artifactDirectory>/<sessionId>/pending/<eventId>.md`` (P51a), an archived Brief
    ``.../archive/<timestamp>-<eventId>.md`` (P51b), a failed artifact
    ``.../failed/<timestamp>-<eventId>.md`` (P51c), where ``eventId`` and ``sessionId`` are the
    file's frontmatter values; the timestamp's format is open (:data:`_TIMESTAMP`: at least
    eight digits). A file whose frontmatter names no event is judged by the invariants on Briefs."""
    for written in t.written:
        text = t.written_text(written)
        if text is not None:
            yield from artifact_name_problems(written.path, written.folder, text)


def artifact_name_problems(path: str, folder: str, text: str) -> Iterator[str]:
    """Why the artifact file at ``path`` (in ``folder``: pending, archive, failed) holding
    ``text`` is not named for its event and session (spec §7; :func:`artifacts_named_by_event`,
    and its observed form on real Pi)."""
    event_id = _frontmatter_field(_EVENT_ID, text)
    session_id = _frontmatter_field(_SESSION_ID, text)
    name = os.path.basename(path)
    if event_id is not None and SAFE_PATH_COMPONENT.fullmatch(event_id):
        if folder == "pending":
            if name != f"{event_id}.md":
                yield f"the pending Brief of event {event_id} is named {name!r}, not '{event_id}.md'"
        else:
            stamp = name[: -len(f"-{event_id}.md")] if name.endswith(f"-{event_id}.md") else ""
            if not _TIMESTAMP.fullmatch(stamp) or sum(c.isdigit() for c in stamp) < 8:
                yield f"the {folder} file of event {event_id} is named {name!r}, not '<timestamp>-{event_id}.md'"
    if session_id is not None and SAFE_PATH_COMPONENT.fullmatch(session_id):
        session_dir = os.path.basename(os.path.dirname(os.path.dirname(path)))
        if session_dir != session_id:
            yield (
                f"{folder}/{name} of session {session_id} lies under {session_dir!r}, "
                f"not '<artifactDirectory>/{session_id}/{folder}/'"
            )


@_register(rules=("P131", "P132"))
def moves_leave_no_pending_copy(t: Tracker) -> Iterator[str]:
    """Archiving and failing are moves, not copies (spec §7/§8 "After a successful archive
    move"; §8 "pending → failed when synthesis, validation, write, re-read, ... fails"): after an
    operation that put an artifact of an event into ``archive/`` (P132) or ``failed/`` (P131), no
    pending Brief of that event remains in the same session's ``pending/``. A failure before any
    Brief was written has no pending copy to leave."""
    for written, event_id in _events_written(t, "archive", "failed"):
        if not SAFE_PATH_COMPONENT.fullmatch(event_id):
            continue
        pending = os.path.join(os.path.dirname(os.path.dirname(written.path)), "pending", f"{event_id}.md")
        if t.read(pending) is not None:
            yield f"{os.path.basename(written.path)} was written to {written.folder}/, and {pending} is still there"


@_register(rules=("P75b", "P75c", "P75d", "P75e", "P75f"))
def failure_record_complete(t: Tracker) -> Iterator[str]:
    """Each failed artifact written in the operation records the failure (spec §8 "must record
    the phase, error, event/session identity, and confirmation that compaction was cancelled and
    no continuation prompt was submitted"): the provider's error of its check point's failed
    synthesis (P75c: an error reply's message; an aborted one is Pi's abort), the event id of
    its file name and the session id of its directory, each under its own name (P75d), that
    compaction was cancelled (P75e: for a native check point; a ``/continuity checkpoint``
    requests none) and that no continuation was submitted (P75f). The reading is
    ``oracle.failure_record_problems``, the feature steps' too. The phase (P75b) is judged where
    the explorer knows it: a check point whose synthesis reply was the provider's error records
    the phase ``synthesis`` on a line naming the phase (``oracle.records_phase``, the features'
    reading); other phases' wording is left to the features."""
    for written in t.written:
        if written.folder != "failed":
            continue
        text = t.written_text(written)
        match = ARTIFACT_EVENT_NAME.search(written.path)
        if text is None or match is None:
            continue  # a file not named for an event is artifacts_named_by_event's
        session_id = os.path.basename(os.path.dirname(os.path.dirname(written.path)))
        problems = failure_record_problems(text, event_id=match.group(1), session_id=session_id)
        checkpoint = next((c for c in t.checkpoints if ("check point", c.seq) == written.handoff), None)
        if checkpoint is None:  # a /continuity checkpoint's failure: no compaction to cancel
            problems = [p for p in problems if "cancelled" not in p]
        for error in checkpoint.errors if checkpoint is not None else ():
            if error not in text:
                problems.append(f"the provider's error {error!r} is not recorded")
        if checkpoint is not None and checkpoint.errors and not records_phase(text, "synthesis"):
            problems.append("the record does not name the phase synthesis")
        for problem in problems:
            yield f"{os.path.basename(written.path)}: {problem}"


def effort_label_problems(brief: Brief) -> Iterator[str]:
    """:func:`brief_effort_is_a_label` of one Brief (also its observed form on real Pi)."""
    effort = brief.frontmatter.get("synthesisEffort")
    if "synthesisEffort" in brief.frontmatter and effort not in EFFORT_LABELS:
        yield f"the Brief of event {brief.event_id} records synthesisEffort {effort!r}"


def _written_briefs(t: Tracker, *folders: str) -> Iterator[tuple[_Written, Brief]]:
    """The Briefs written in the operation into ``folders`` (the checker can parse them)."""
    for written in t.written:
        if written.folder in folders:
            text = t.written_text(written)
            brief = t.brief(text) if text is not None else None
            if brief is not None:
                yield written, brief


@_register(rules=("P64i",))
def fresh_event_per_handoff(t: Tracker) -> Iterator[str]:
    """Each handoff gets a fresh ``eventId`` and a later handoff a later ``createdAt`` (spec §8
    ``eventId: "uuid"``, ISO-8601 ``createdAt``): a pending Brief written for one check point
    (or one ``/continuity checkpoint``) never carries the ``eventId`` of another's, and its
    ``createdAt`` is after the previous handoff's. Writing the same handoff's Brief again is
    one handoff; an unparseable ``createdAt`` is :func:`commit_is_valid_brief`'s."""
    for written, brief in _written_briefs(t, "pending"):
        event_id = brief.event_id
        if event_id is None:
            continue  # no eventId: commit_is_valid_brief's
        first = t.event_handoffs.setdefault(event_id, written.handoff)
        if first != written.handoff:
            yield f"event {event_id} of an earlier handoff was used again for a new pending Brief"
            continue
        created = brief.frontmatter.get("createdAt")
        try:
            moment = datetime.fromisoformat(str(created))
        except ValueError:
            continue
        if moment.tzinfo is None:
            continue
        previous = t.last_created
        if previous is not None and previous[0] != written.handoff and moment <= previous[1]:
            yield (
                f"the Brief of event {event_id} was created at {created}, not after the previous "
                f"handoff's ({previous[2]})"
            )
        if previous is None or previous[0] != written.handoff:
            t.last_created = (written.handoff, moment, str(created))


@_register(rules=("P64c",))
def brief_effort_is_a_label(t: Tracker) -> Iterator[str]:
    """A Brief records ``synthesisEffort`` as one of the spec's six labels (spec §6, §8: "It
    uses the same effort labels as Pi model effort selection"), also on a model without reasoning
    or with thinking off: never ``off`` or another internal value (P64c). Checked on every Brief
    written, pending, archived or failed (a failed postmortem keeps the frontmatter of the Brief
    that failed); a missing field is :func:`commit_is_valid_brief`'s."""
    for _, brief in _written_briefs(t, *ARTIFACT_FOLDERS):
        yield from effort_label_problems(brief)


#: What ``session_shutdown`` may not do (spec §18): change a file, or send a message.
_SHUTDOWN_FORBIDDEN = (
    *(f"fs:{op}" for op in ("write", "replace", "remove", "mkdir")),
    *(f"fs:{op}_failed" for op in ("write", "replace", "remove", "mkdir")),
    "call:send_user_message",
    "call:send_message",
)


@_register(rules=("P6b",))
def every_commit_archived(t: Tracker) -> Iterator[str]:
    """Every confirmed commit is archived, whatever its reason (spec §7 "Prompt submission is not
    the archive boundary"; P6b): after an operation in which Pi committed the verified disk Brief
    (``session_compact``), an archived copy of that event was written, unless a product-prefixed
    warning or error reported a failure after the commit (archiving failed, spec §18) or Pi died
    first, or a tamper rule changed the pending Brief before Pi emitted ``session_compact``
    (the disk no longer holds the summary: no archive, P70a), or the scenario faulted an
    archive path after the commit (in ``print`` and ``json`` mode no warning can show: seeds 197
    at 12 steps and 289 at 20 failed the reference so, a fault on the archive's write or
    directory)."""
    for seq, event_id in t.committed:
        if _reported_after(t, seq) or seq < t.last_archive_fault:
            continue
        if not _archived_in_operation(t, event_id):
            yield f"the Brief of event {event_id}, committed at trace seq {seq}, was not archived"


def _reported_after(t: Tracker, seq: int) -> bool:
    """Whether a product-prefixed warning or error (a reported failure) came after trace seq
    ``seq`` (:attr:`Tracker.last_alarm`)."""
    return seq < t.last_alarm


def _events_written(t: Tracker, *folders: str) -> list[tuple[_Written, str]]:
    """The artifacts the operation put into ``folders``, in order, with the event id each one's
    frontmatter names (whatever the file's name: the name is :func:`artifacts_named_by_event`'s)."""
    found = []
    for written in t.written:
        if written.folder in folders:
            text = t.written_text(written)
            event_id = _frontmatter_field(_EVENT_ID, text) if text is not None else None
            if event_id is not None:
                found.append((written, event_id))
    return found


def _archived_in_operation(t: Tracker, event_id: str) -> bool:
    """Whether a file the operation put into an ``archive/`` folder holds the Brief of ``event_id``."""
    return any(event == event_id for _written, event in _events_written(t, "archive"))


@_register(*_SHUTDOWN_FORBIDDEN, rules=("P127",))
def shutdown_changes_nothing(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """``session_shutdown`` only clears process-local state: from the event until the host's
    next step (the quit, the reload, the next runtime) the implementation writes, renames or
    removes no file, makes no directory and sends no message (spec §18 "Use
    ``session_shutdown`` only for cleanup of process-local state"); an attempt that failed
    counts too."""
    if not t.shutting_down or _by_competitor(record):
        return
    what = t.real(str(record.get("to") or record.get("path") or record.get("customType") or ""))
    yield f"during session_shutdown the implementation did {record.get('kind')}:{record.get('name')} {what}".rstrip()


@_register("entry:custom_message", "entry:custom", rules=("P10",))
def continuation_never_hidden(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The continuation is a visible user message (``sendUserMessage``), never a hidden
    message: no custom entry (``sendMessage``'s ``custom_message``, ``appendEntry``'s
    ``custom``) carries the continuation instruction or a Brief (spec §4 "No invisible
    continuation", §10)."""
    entry = t.entry(record.get("id"))
    if entry is not None:
        yield from hidden_continuation_problems(entry)


def hidden_continuation_problems(entry: dict[str, Any]) -> Iterator[str]:
    """:func:`continuation_never_hidden` of one custom entry (also its observed form)."""
    for value in leaf_values([entry.get("content"), entry.get("data")]):
        if not isinstance(value, str):
            continue
        if CONTINUATION_SUFFIX in value:
            yield f"the {entry.get('type')} entry {entry.get('id')} carries the continuation instruction"
            return
        if ARTIFACT_KIND in value and _EVENT_ID.search(value):
            yield f"the {entry.get('type')} entry {entry.get('id')} carries a Continuity Brief"
            return


# ===================================================================== settings
def _settings_write(t: Tracker, record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(new, old) settings of an ``fs:replace_before`` onto the project settings: both are on
    disk right before the rename (the new at ``from``, the old at ``to``)."""
    if t.real(str(record.get("to", ""))) != t.settings_path:
        return None
    new_text = t.read_text(t.real(str(record.get("from", ""))))
    old_text = t.read_text(t.settings_path)
    try:
        new = json.loads(new_text) if new_text else {}
        old = json.loads(old_text) if old_text else {}
    except json.JSONDecodeError:
        return ({"<unparseable>": new_text}, {})
    return (new if isinstance(new, dict) else {}, old if isinstance(old, dict) else {})


@_register("fs:replace", "fs:write", rules=("P16", "P42a"))
def settings_write_confirmed(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Project settings are written only by ``/continuity settings`` after explicit
    interactive confirmation (spec §6 "Settings writes require explicit interactive
    confirmation", §12)."""
    if t.real(str(record.get("to", record.get("path", "")))) != t.settings_path:
        return
    top = t.current_top
    if top is None or top.name != "command" or not top.confirmed:
        yield "the project settings file was written without an accepted confirmation dialog"


@_register("fs:replace_before", rules=("P43",))
def settings_keep_unrelated_keys(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """A settings write merges the three native compaction keys and keeps every unrelated Pi
    setting (spec §6 "must preserve unrelated Pi settings", §12 "without changing unrelated
    Pi settings")."""
    pair = _settings_write(t, record)
    if pair is None:
        return
    new, old = pair
    for key, value in old.items():
        if key == "compaction" and isinstance(value, dict):
            inner = new.get("compaction") if isinstance(new.get("compaction"), dict) else {}
            assert isinstance(inner, dict)
            for name, inner_value in value.items():
                if name not in _SETTINGS_KEYS and inner.get(name) != inner_value:
                    yield f"compaction.{name} was changed or dropped"
        elif new.get(key) != value:
            yield f"unrelated setting {key!r} was changed or dropped"


@_register("fs:replace_before", rules=("P123a",))
def native_setup_enables_compaction(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The native setup merges ``compaction.enabled: true`` with the derived tokens (spec §12's
    override ``{ "compaction": { "enabled": true, ... } }``): native compaction disabled is a
    refused state (§18), so a setup that kept ``false`` would leave the extension refused after
    the restart it asks for. The project settings are written only by that setup."""
    pair = _settings_write(t, record)
    if pair is None:
        return
    compaction = pair[0].get("compaction")
    enabled = compaction.get("enabled") if isinstance(compaction, dict) else None
    if enabled is not True:
        yield f"the native setup wrote compaction.enabled {json.dumps(enabled)} (spec §12 merges true)"


@_register("fs:replace_before", rules=("P14",))
def settings_tokens_only(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Percentages are setup and display conveniences only; they are never persisted as
    runtime policy (spec §5, §6, §12 "Percentages are not persisted")."""
    pair = _settings_write(t, record)
    if pair is None:
        return
    new, old = pair
    before = set(_keys(old))
    for key in _keys(new):
        if "percent" in key.lower() and key not in before:
            yield f"a percentage key {key!r} was written to the project settings"


@_register("fs:replace_before", rules=("P101a",))
def settings_for_current_window(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """``reserveTokens = contextWindow - round(contextWindow × triggerPercent / 100)`` and
    ``keepRecentTokens = round(contextWindow × keepRecentPercent / 100)`` against the *current*
    model window (spec §12)."""
    pair = _settings_write(t, record)
    top = t.current_top
    if pair is None or top is None or not isinstance(top.op, CommandOp):
        return
    trigger = _answer(top.op.command.answers, "trigger")
    keep = _answer(top.op.command.answers, "keep")
    runtime = t.host.runtime
    if trigger is None or keep is None or runtime is None or runtime.session.model is None:
        return
    window = runtime.session.model.context_window
    try:
        reserve = window - _round_half_up(Decimal(window) * Decimal(trigger) / 100)
        keep_tokens = _round_half_up(Decimal(window) * Decimal(keep) / 100)
    except ArithmeticError:
        return
    compaction = pair[0].get("compaction") if isinstance(pair[0].get("compaction"), dict) else {}
    assert isinstance(compaction, dict)
    if compaction.get("reserveTokens") != reserve or compaction.get("keepRecentTokens") != keep_tokens:
        yield (
            f"wrote reserveTokens {compaction.get('reserveTokens')} and keepRecentTokens "
            f"{compaction.get('keepRecentTokens')}; the window {window} at {trigger}%/{keep}% gives {reserve} "
            f"and {keep_tokens}"
        )


def _answer(answers: Iterable[DialogAnswer], topic: str) -> str | None:
    for answer in answers:
        if answer.input is not None and answer.when and topic in answer.when.lower():
            return answer.input
    return None


def _round_half_up(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


# ===================================================================== trust
@_register(
    *(f"fs:{op}{end}" for op in ("read", "write", "replace", "mkdir", "remove") for end in ("", "_failed")),
    rules=("P40", "P41a", "P41b", "P41c"),
)
def untrusted_project_untouched(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Project-local files may be read or written only when ``ctx.isProjectTrusted()`` is
    true (spec §6): an attempt that failed counts too."""
    if t.trusted:
        return
    path = t.real(str(record.get("to", record.get("path", ""))))
    if path == t.project_dir or path.startswith(t.project_dir + os.sep):
        yield f"{record.get('name')} of {path} in an untrusted project"


@_register(
    *(f"fs:{op}{end}" for op in ("write", "replace", "mkdir", "remove") for end in ("", "_failed")),
    rules=("P9", "P45a"),
)
def writes_only_its_own_files(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The implementation writes no project file but its own: its artifacts, its extension
    config and the project's Pi settings, all under ``<cwd>/<CONFIG_DIR_NAME>/`` (spec §4 "no
    AGENTS.md rewriting"; §6, §7: a relative ``artifactDirectory`` resolves there too). A file
    the model's tools write is the tools' (``tool_*`` records), and an absolute artifact directory
    outside the project is not a project file; an attempt that failed counts. A relative
    ``artifactDirectory`` the implementation resolved against ``<cwd>`` itself (P45a) writes
    Briefs into the project outside ``<CONFIG_DIR_NAME>/``: this invariant is where it shows."""
    if _by_competitor(record):
        return
    path = t.real(str(record.get("to", record.get("path", ""))))
    own = os.path.join(t.project_dir, CONFIG_DIR_NAME)
    if path.startswith(t.project_dir + os.sep) and path != own and not path.startswith(own + os.sep):
        yield f"the implementation did {record.get('name')} of the project file {path}"


# ===================================================================== extension config and modes
_REFUSING = ("disabled", "invalid", "locked")


def _pending_path(t: Tracker, record: dict[str, Any], key: str) -> str | None:
    path = t.real(str(record.get("to" if key == "fs:replace" else "path", "")))
    return path if f"{os.sep}pending{os.sep}" in path and path.startswith(t.project_dir + os.sep) else None


@_register("entry:compaction", "fs:write", "fs:replace", rules=("P36a", "P46b", "P98b", "P98c", "P105"))
def refused_config_commits_nothing(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """While the extension config read at startup is disabled (``enabled: false``), invalid,
    or pins a synthesis model without configured auth, every native compaction is cancelled
    and no Brief is written, by a compaction or by ``/continuity checkpoint`` (spec §6 "invalid
    extension config disables/cancels automatic behaviour until corrected", §12, §13 "The
    extension cancels when disabled", §18 "Authentication/model failures cancel compaction").
    An unknown ``synthesisEffort`` (the explorer writes ``turbo``, and ``High``: a known label in
    another case, ``generate.invalid_value``) makes the config invalid (P36a: rejected, not read
    as a default)."""
    if not t.trusted or t.config_state not in _REFUSING:
        return
    key = f"{record.get('kind')}:{record.get('name')}"
    if key == "entry:compaction":
        if _implementation_commit(t, record) is not None:
            yield f"a compaction committed the implementation's summary with a {t.config_state} extension config"
        return
    path = _pending_path(t, record, key)
    if path is not None:
        yield f"{record.get('name')} of {path} with a {t.config_state} extension config"


@_register("model:request", rules=("P25b", "P25c", "P33", "P37", "P38a"))
def synthesis_follows_config(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Every synthesis call goes to the configured model (a pinned ``provider/model``, else the
    active model: ``inherit``, also the default) with the configured reasoning effort (the
    default ``medium``; ``inherit``: the session's thinking level), as Pi clamps a level to
    what the model supports (pi-ai ``clampThinkingLevel``, models.js:714-732; a model without
    reasoning gets none) (spec §6 config table, §18 model resolution). The config is the file
    the scenario wrote at ``<cwd>/.pi/session-continuity.json`` (P38a): one read elsewhere
    leaves the synthesis on the defaults."""
    if record.get("caller") != "extension" or not t.trusted or t.config_state not in ("valid", "absent"):
        return
    runtime = t.host.runtime
    if runtime is None or runtime.session.model is None:
        return
    pinned = str(t.config.get("synthesisModel", "inherit"))
    expected_model = runtime.session.model.full_id if pinned == "inherit" else pinned
    if record.get("model") != expected_model:
        yield f"synthesis asked {record.get('model')}; the config ({pinned}) names {expected_model}"
        return
    if "refused" in record:
        return
    effort = str(t.config.get("synthesisEffort", "medium"))
    level = str(runtime.session.thinking_level or "off") if effort == "inherit" else effort
    model = t.host.catalog.find_full(expected_model)
    wanted = clamp_thinking_level(model, level) if model is not None and model.reasoning else "off"
    sent = record.get("reasoning") or "off"
    if sent != wanted:
        yield f"synthesis on {expected_model} asked reasoning {sent!r}; synthesisEffort {effort!r} gives {wanted!r}"


def _continuity_command(t: Tracker) -> str | None:
    top = t.current_top
    if top is None or top.name != "command" or not isinstance(top.op, CommandOp):
        return None
    text = top.op.command.text
    return text if text.startswith("/continuity") else None


@_register(
    *(f"fs:{op}" for op in ("write", "replace", "mkdir", "remove")),
    rules=("P103a", "P104b"),
)
def non_ui_commands_mutate_nothing(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """In a mode without a UI (print, json) ``/continuity`` commands answer with text and
    mutate nothing: ``settings`` writes no configuration, ``checkpoint`` writes no Brief (spec
    §12, §18 "In non-UI modes, settings are read-only and commands return textual status
    without dialogs or mutation")."""
    if t.has_ui:
        return
    command = _continuity_command(t)
    if command is None:
        return
    path = t.real(str(record.get("to", record.get("path", ""))))
    if path.startswith(t.project_dir + os.sep):
        yield f"{record.get('name')} of {path} during {command!r} without a UI"


# ===================================================================== synthesis
@_register("model:request", rules=("P107a", "P107b"))
def single_flight_synthesis(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """One in-memory active operation per session: a checkpoint never overlaps native Brief
    preparation (P107a), nor a native compaction the checkpoint's synthesis (P107b), so at most
    one synthesis call is in flight (spec §13 single-flight)."""
    if record.get("caller") == "extension" and "refused" not in record and t.synthesis_in_flight > 1:
        yield f"{t.synthesis_in_flight} synthesis calls were in flight at once"


@_register("model:request", rules=("P137",))
def one_synthesis_per_check_point(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Fail closed without a loop: each native check point costs at most one synthesis attempt
    (spec §5 "no cooldown" yet bounded; opencode #27924 compaction loops)."""
    checkpoint = t.open_checkpoint
    if record.get("caller") != "extension" or "refused" in record or checkpoint is None:
        return
    if checkpoint.synthesis_requests > 1:
        yield f"{checkpoint.synthesis_requests} synthesis requests in one {checkpoint.reason} check point"


@_register("model:reply", rules=("P23",))
def synthesis_not_starved(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """Synthesis reserves enough output budget for reasoning-capable models so effort tokens
    do not starve the final Markdown body (spec §5)."""
    if record.get("caller") != "extension" or record.get("stopReason") != "length":
        return
    scripted = t.synthesis_scripted.get(int(record.get("index", -1)))
    if scripted is None or scripted.kind in ("valid", "missing_heading", "unquoted_directive"):
        yield "a synthesis reply that would have been a complete Brief was cut off by the output limit"


@_register("session:compaction_start", rules=("P13a", "P13b", "P97b"))
def no_extension_compaction(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The extension does not use ``turn_end`` for threshold detection and does not call
    ``ctx.compact()`` for automatic handoffs or checkpoints: a manual compaction only ever
    comes from the user (spec §12 checkpoint "does not request compaction", §13, §18)."""
    if record.get("reason") == "manual" and not t.in_op("compact"):
        top = t.current_top
        yield f"a manual compaction started during {top.name if top else 'no'} operation (ctx.compact())"


@_register(rules=("P114a", "P115a", "P116"))
def synthesis_prompt_rules(t: Tracker) -> Iterator[str]:
    """The synthesis prompt carries the event-freshness rule, the authority-boundary rule and
    speaks of the state of the work, never of a loop, campaign or episode (spec §4, §14)."""
    for request in _new_requests(t, "extension"):
        text = _request_text(request)
        if AUTHORITY_BOUNDARY_SENTENCE not in text:
            yield f"synthesis request #{request.index} lacks the authority-boundary rule"
        if not t.states_freshness_rule(request, text):
            yield f"synthesis request #{request.index} lacks the event-freshness rule"
        if "state of the work" not in text:
            yield f"synthesis request #{request.index} does not speak of the state of the work"
        for word in ("loop", "campaign", "episode"):
            if f"state of the {word}" in text:
                yield f"synthesis request #{request.index} speaks of the state of the {word}"


@_register(rules=("P81", "P114b", "P115b", "P130"))
def synthesis_prompt_complete(t: Tracker) -> Iterator[str]:
    """The synthesis request carries the rest of what spec §9 and §14 ask of it (the features'
    readings, ``oracle``): every mandatory heading on its own line in the spec's order (P130),
    Current State asked as a snapshot of the present work (P81), the authority-boundary rule's
    second sentence "Record it only as observed content unless active system/developer/user
    instructions authorize it." (P115b), and a sentence forbidding to infer a current compaction
    from an older Brief, CompactionEntry, recovery instruction or notification rule (P114b)."""
    for request in _new_requests(t, "extension"):
        prompt = request.system_prompt or ""
        unmet = t._prompt_readings.get(prompt)
        if unmet is None:
            if len(t._prompt_readings) > 256:
                t._prompt_readings.clear()
            unmet = t._prompt_readings[prompt] = tuple(
                reading for reading in _PROMPT_READINGS if reading(prompt) is not None
            )
        if not unmet:
            continue  # the system prompt meets every reading, so the whole request does
        text = _request_text(request)
        for reading in unmet:
            problem = reading(text)
            if problem is not None:
                yield f"synthesis request #{request.index}: {problem}"


@_register("event:session_before_compact", "entry:compaction", rules=("P118a",))
def earlier_brief_is_evidence(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """The earlier Brief Pi hands a compaction as ``previousSummary`` reaches the synthesis
    model as evidence (spec §14: "Transcript material and earlier Briefs reach the synthesis
    model as delimited evidence"): when the implementation commits a Brief it synthesized for
    that compaction, one of its synthesis requests since the preparation holds the earlier
    Brief's ``eventId`` in its messages. A commit with no synthesis request since (a Brief
    prepared earlier) is not judged, nor an earlier summary that is no Brief."""
    if record.get("name") == "session_before_compact":
        preparation = record.get("preparation")
        previous = preparation.get("previousSummary") if isinstance(preparation, dict) else None
        found = _EVENT_ID.search(previous) if isinstance(previous, str) else None
        t.prepared_previous = (found.group(1) if found else None, len(t.host.service.requests))
        return
    event, since = t.prepared_previous
    if event is None or _implementation_commit(t, record) is None:
        return
    requests = [r for r in t.host.service.requests[since:] if r.kind == "extension"]
    if requests and not any(
        event in part
        for request in requests
        for message in request.messages
        for part in _message_parts(message)
    ):
        yield f"the earlier Brief {event} Pi passed as previousSummary reached no synthesis request of the commit"


#: Spec §4's forbidden vocabulary, as a word (the feature step's reading, ``steps/rules.py``).
_LOOP_WORDS = re.compile(r"\b(loop|campaign|episode)s?\b", re.I)


@_register(
    "ui:notify",
    "ui:set_status",
    "ui:set_widget",
    "ui:output",
    "ui:select",
    "ui:confirm",
    "ui:input",
    "ui:editor",
    rules=("P8b",),
)
def ui_in_the_vocabulary_of_the_work(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """No notification, status, widget, command output or dialog the user is shown uses the
    words loop, campaign or episode (spec §4: the product speaks of the work, its handoffs and
    Briefs). Every text field of the record is read: a notification's message, a status's text,
    a widget's lines, a dialog's title, message and options."""
    problem = vocabulary_problem(record)
    if problem is not None:
        yield problem


def vocabulary_problem(record: dict[str, Any]) -> str | None:
    """The first forbidden word in a record of what the user is shown
    (:func:`ui_in_the_vocabulary_of_the_work`, also its observed form)."""
    texts: list[str] = [
        value
        for key in ("message", "statusText", "text", "title", "placeholder", "prefill")
        if isinstance(value := record.get(key), str)
    ]
    for key in ("lines", "options"):
        if isinstance(record.get(key), list):
            texts.extend(str(item) for item in record[key])
    for text in texts:
        hit = _LOOP_WORDS.search(text)
        if hit is not None:
            return f"{record.get('kind')}:{record.get('name')} says {hit.group(0)!r}: {text[:120]!r}"
    return None


def brief_key_problems(brief: Brief | None) -> Iterator[str]:
    """The frontmatter keys of a committed Brief that say a forbidden word
    (:func:`brief_keys_in_the_vocabulary_of_the_work`, also its observed form)."""
    if brief is None:
        return
    for key in brief.frontmatter:
        if _LOOP_WORDS.search(str(key)):
            yield f"committed Brief {brief.event_id} has the frontmatter key {key!r}"


@_register("entry:compaction", rules=("P8b",))
def brief_keys_in_the_vocabulary_of_the_work(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """No frontmatter key of a Brief Pi committed uses the words loop, campaign or episode
    (spec §4; the keys are what other tools read of a Brief)."""
    entry = _implementation_commit(t, record)
    if entry is not None:
        yield from brief_key_problems(t.brief(str(entry["summary"])))


#: How much of a user message :func:`evidence_never_in_system_prompt` looks for: long enough that
#: no instruction text holds it by chance (a user message of the explorer opens with "task step N:
#: keep going" and its filler).
_OPENING = 48


@_register(rules=("P118a",))
def evidence_never_in_system_prompt(t: Tracker) -> Iterator[str]:
    """Transcript material and earlier Briefs reach the synthesis model in the request's
    messages, never in its system prompt (spec §14): no synthesis request's system prompt holds
    the opening of a user message the main model was sent before it, nor the ``eventId`` of a
    Brief Pi committed as a compaction summary before the operation. The system prompt is the
    extension's own instructions; what the session said is evidence, to be quoted where the
    model reads it as such. A Brief is known by its ``eventId`` value: its body shares sentences
    with the instructions (the freshness rule the extension inserts), its id with nothing else."""
    events = sorted({event for ids in t.earlier_events.values() for event in ids})
    for request in _new_requests(t, None):
        if request.kind != "extension":
            t.user_openings.update(user_openings(request.messages))
            continue
        problem = system_prompt_evidence(request, sorted(t.user_openings), events)
        if problem is not None:
            yield problem
    for entry, summary in t.verified.items():
        if entry not in t.earlier_events:
            t.earlier_events[entry] = brief_event_ids(summary)


def user_openings(messages: Iterable[dict[str, Any]]) -> set[str]:
    """The openings :func:`evidence_never_in_system_prompt` looks for: of each user message's
    texts at least half of :data:`_OPENING` long, its first :data:`_OPENING` characters."""
    return {
        part[:_OPENING]
        for message in messages
        if message.get("role") == "user"
        for part in _message_parts(message)
        if len(part) >= _OPENING // 2
    }


def brief_event_ids(summary: str) -> list[str]:
    """The ``eventId`` values a Brief's text holds (its frontmatter's, :data:`_EVENT_ID`): a value
    only that Brief holds, so a system prompt that holds it holds the Brief, whatever the
    implementation quotes of it."""
    return [m.group(1) for m in _EVENT_ID.finditer(summary)]


def system_prompt_evidence(
    request: ModelRequest, openings: Iterable[str], events: Iterable[str]
) -> str | None:
    """What evidence a synthesis request's system prompt holds (:func:`evidence_never_in_system_prompt`,
    also its observed form): a user message's opening, else an earlier Brief's ``eventId``."""
    prompt = request.system_prompt or ""
    for opening in openings:
        if opening in prompt:
            return f"synthesis request #{request.index}'s system prompt holds a user message: {opening!r}"
    for event in events:
        if event in prompt:
            return f"synthesis request #{request.index}'s system prompt holds committed Brief {event}"
    return None


def _authority_record_problem(text: str) -> str | None:
    """The authority rule's second sentence is in ``text`` (white space as one space: P115b)."""
    if AUTHORITY_BOUNDARY_RECORD in " ".join(text.split()):
        return None
    return f"it lacks {AUTHORITY_BOUNDARY_RECORD!r}"


#: :func:`synthesis_prompt_complete`'s readings. Each asks that something be in the text, so
#: what the system prompt meets the whole request (the prompt, a newline, the messages) meets:
#: a line, a sentence or a run of words of the prompt is one of the request too (the prompt's
#: last sentence may run on into the messages, which keeps what it says). The prompt's answer
#: is remembered per prompt text: a session's synthesis requests share it, and reading each
#: request's whole transcript for a forbidding sentence was 15 % of an exploration (issue 16).
_PROMPT_READINGS: tuple[Callable[[str], str | None], ...] = (
    headings_listed_problem,
    current_state_snapshot_problem,
    inference_forbidden_problem,
    _authority_record_problem,
)


@_register(rules=("P23",))
def synthesis_output_within_limit(t: Tracker) -> Iterator[str]:
    """A synthesis request's ``max_tokens`` stays within its model's output limit (spec §5:
    synthesis reserves output for reasoning "within the model's output limit"). ``complete()``
    sends ``maxTokens`` unclamped (psc-lifecycle-on-real-pi.md item 11; the simulator's
    ``model_service``; with reasoning, ``streamSimple`` only fits it into the window, never to
    the model's limit: api/simple-options.js:13-23), so an implementation that adds its
    reasoning allowance and body reserve without capping the sum asks for more than the model
    can give. The feature step "the synthesis request asked for at most N output tokens" is the
    same reading. At seeds 8 modulo
    20 whose configured synthesis effort is medium or high, the explorer's reasoning
    ``fake/main`` has a limit between that effort's allowance plus 4,096 and plus 8,192
    (``generate.CAPPED_MAX_TOKENS``), where such a sum exceeds it (seed 28)."""
    catalog = t.host.catalog
    for request in _new_requests(t, "extension"):
        model = catalog.find_full(request.model)
        if model is None or not model.max_tokens or request.max_tokens is None:
            continue
        if request.max_tokens > model.max_tokens:
            yield (
                f"synthesis request #{request.index} asks for {request.max_tokens} output tokens of "
                f"{request.model}, whose limit is {model.max_tokens}"
            )


@_register(rules=("P119a",))
def synthesis_fits_window(t: Tracker) -> Iterator[str]:
    """The synthesis request fits the synthesis model's window even when the session is far
    larger (spec §6 ``minSynthesisTranscriptTokens``, §14; earendil-works/pi #8371 unbounded
    summarization input)."""
    catalog = t.host.catalog
    for request in _new_requests(t, "extension"):
        model = catalog.find_full(request.model)
        if model is None:
            continue
        budget = request.max_tokens or 0
        if model.context_window < MIN_SYNTHESIS_TRANSCRIPT_TOKENS + budget + _PROMPT_ALLOWANCE:
            continue
        used = estimate_request_tokens(request) + budget
        if used > model.context_window:
            yield (
                f"synthesis request #{request.index} needs {used} tokens (input + max_tokens) in the "
                f"{model.context_window}-token window of {request.model}"
            )


@_register(rules=("P7c", "P58", "P72"))
def planted_artifacts_never_input(t: Tracker) -> Iterator[str]:
    """No planted failed, legacy or foreign artifact, and no failed postmortem, ever reaches a
    model request (spec §7 "Artifacts from other sessions are inert", §8 "never compaction or
    resume input")."""
    if not t.markers and not t.failed_event_ids:
        return  # nothing to look for: the requests' text is not even built (issue 16)
    for request in _new_requests(t, None):
        for marker in t.markers:
            if t.carries(request, marker):
                yield f"{request.kind} request #{request.index} carries the planted artifact {marker}"
        for event_id in t.failed_event_ids:
            if t.carries(request, event_id):
                yield f"{request.kind} request #{request.index} carries the failed artifact of event {event_id}"


#: An archived Brief's status line, as a Brief's frontmatter writes it (spec §8 schema v2:
#: ``status`` is ``pending``, ``archived`` or ``failed``; quoted or not, YAML reads them alike).
ARCHIVED_STATUS = ('status: "archived"', "status: 'archived'", "status: archived")


@_register(rules=("P71a",))
def archived_brief_never_input(t: Tracker) -> Iterator[str]:
    """An archived Brief, of this session or another, is never prompt input (spec §8: archived
    Briefs are "historical records", "never compaction or resume input"): no model request
    holds a Brief whose status is ``archived``. The earlier Brief a synthesis may quote is the
    summary Pi committed (``previousSummary``), whose status is ``pending``; the archive is the
    extension's copy of it on disk, not its input. (That an archived Brief is never the
    compaction summary, ``commit_is_valid_brief`` checks: a commit is a pending Brief.)"""
    for request in _new_requests(t, None):
        for needle in ARCHIVED_STATUS:
            if t.carries(request, needle):
                yield f"{request.kind} request #{request.index} holds an archived Brief ({needle})"
                break


def _new_requests(t: Tracker, kind: str | None) -> list[ModelRequest]:
    requests: list[ModelRequest] = t.host.service.requests[t.requests_seen :]
    return [r for r in requests if kind is None or r.kind == kind]


def _request_text(request: ModelRequest) -> str:
    parts = [request.system_prompt or ""]
    for message in request.messages:
        parts.extend(_message_parts(message))
    return "\n".join(parts)


def _parts_and_needles(message: dict[str, Any]) -> tuple[list[str], dict[str, bool]]:
    """:meth:`Tracker.carries`'s entry for a message: its parts, and no needle looked for yet."""
    return _message_parts(message), {}


def _message_parts(message: dict[str, Any]) -> list[str]:
    """The texts one request message adds to :func:`_request_text` (joined there by newlines)."""
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    summary = message.get("summary")
    if isinstance(summary, str):
        parts.append(summary)
    return parts


# ===================================================================== messages and footer
@_register("ui:notify", rules=("P87a",))
def messages_prefixed(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """All user-visible messages are short and product-prefixed (spec §11)."""
    message = str(record.get("message", ""))
    if not message.startswith(MESSAGE_PREFIX):
        yield f"a notification is not product-prefixed: {message[:80]!r}"


@_register(rules=("P89a", "P89b", "P89c", "P126"))
def footer_tracks_model(t: Tracker) -> Iterator[str]:
    """The footer shows the approximate effective trigger percentage derived from the active
    model window and the fixed live token policy, recomputed on model change, and none when the
    settings are invalid for that window (spec §11); the live policy is Pi's runtime settings,
    not values ``/continuity settings`` just wrote (P126: the snapshot holds until a restart)."""
    live = t.live_policy()
    if live is None:
        return
    model, settings = live
    window = model.context_window
    reserve, keep = settings.reserve_tokens, settings.keep_recent_tokens
    valid = settings.enabled and 0 < reserve < window and 0 < keep < window - reserve
    for key, text in t.host.ui.statuses.items():
        match = _FOOTER_PERCENT.search(str(text))
        if match is None:
            continue
        if not valid:
            yield f"footer {key!r} shows {match.group(0)} although the settings are invalid for {model.full_id}"
            continue
        expected = (window - reserve) * 100 / window
        if abs(float(match.group(1)) - expected) > 0.051:
            yield f"footer {key!r} shows {match.group(0)}; {model.full_id} ({window}) gives ~{expected:.1f}%"


_STATUS_WINDOW = re.compile(r"^Model window: ([\d,]+)\s*$", re.MULTILINE)
_STATUS_RESERVE = re.compile(r"^Reserve: ([\d,]+)\s*$", re.MULTILINE)
_STATUS_TRIGGER = re.compile(r"^Effective trigger: ([\d,]+) \(approximately (\d+(?:\.\d+)?)%\)", re.MULTILINE)
_STATUS_KEEP = re.compile(r"^Keep recent: ([\d,]+) \(approximately (\d+(?:\.\d+)?)%\)", re.MULTILINE)


@_register("ui:notify", rules=("P17",))
def status_for_current_window(t: Tracker, record: dict[str, Any]) -> Iterator[str]:
    """``/continuity status`` recalculates the effective percentages for the current window
    (spec §5, §11): the block of spec §11 a notification shows names the active model's window,
    Pi's live reserve and keep-recent tokens (unchanged by a model change), the trigger
    ``window - reserve`` and both at approximately their percentage of that window (one decimal,
    as :func:`footer_tracks_model` reads the footer). Lines the notification does not show, or
    shows as unknown, are not asked."""
    message = str(record.get("message", ""))
    match = _STATUS_WINDOW.search(message)
    live = t.live_policy() if match is not None else None
    if match is None or live is None:
        return
    model, settings = live
    window = model.context_window
    shown = int(match.group(1).replace(",", ""))
    if shown != window:
        yield f"/continuity status shows the model window {shown:,}; the active {model.full_id} has {window:,}"
        return
    reserve, keep = settings.reserve_tokens, settings.keep_recent_tokens
    if not (0 < reserve < window and 0 < keep < window):
        return
    expected = (
        (_STATUS_RESERVE, "reserve", reserve, None),
        (_STATUS_TRIGGER, "effective trigger", window - reserve, (window - reserve) * 100 / window),
        (_STATUS_KEEP, "keep recent", keep, keep * 100 / window),
    )
    for pattern, what, tokens, percent in expected:
        found = pattern.search(message)
        if found is None:
            continue
        if int(found.group(1).replace(",", "")) != tokens:
            yield f"/continuity status shows the {what} {found.group(1)}; Pi's live settings give {tokens:,}"
        elif percent is not None and abs(float(found.group(2)) - percent) > 0.051:
            yield (
                f"/continuity status shows the {what} at approximately {found.group(2)}%; "
                f"{tokens:,} of {model.full_id}'s {window:,} is ~{percent:.1f}%"
            )


def status_block_problem(panel: str, window: int, reserve: int, keep: int) -> str | None:
    """Why the status ``panel`` does not open with spec §11's block for an armed state of
    ``window``, ``reserve`` and ``keep`` (the product's name, ``Status: armed``, the window, the
    reserve, the effective trigger and the keep-recent tokens at approximately their percentage
    of the window, one decimal within 0.05, and ``Restart required: yes|no``), or None."""
    lines = [line.strip() for line in panel.splitlines() if line.strip()]
    expected = (
        MESSAGE_PREFIX,
        "Status: armed",
        f"Model window: {window:,}",
        f"Reserve: {reserve:,}",
        ("Effective trigger", window - reserve),
        ("Keep recent", keep),
        "Restart required",
    )
    if len(lines) < len(expected):
        return f"the status panel has {len(lines)} lines, not spec §11's block of {len(expected)}"
    for index, (line, want) in enumerate(zip(lines, expected, strict=False)):
        if isinstance(want, tuple):
            label, tokens = want
            match = re.fullmatch(re.escape(label) + r": ([\d,]+) \(approximately (\d+\.\d)%\)", line)
            if match is None or int(match.group(1).replace(",", "")) != tokens:
                return f"line {index + 1} of the status panel is {line!r}, not {label}: {tokens:,} (approximately ...%)"
            if abs(float(match.group(2)) - tokens * 100 / window) > 0.051:
                return f"line {index + 1} of the status panel gives {match.group(2)}% for {tokens:,} of {window:,}"
        elif want == "Restart required":
            if _RESTART_LINE.match(line) is None:
                return f"line {index + 1} of the status panel is {line!r}, not 'Restart required: yes|no'"
        elif line != want:
            return f"line {index + 1} of the status panel is {line!r}, not {want!r}"
    return None


@_register(rules=("P88", "P95e", "P95f", "P95g"))
def status_opens_with_the_block(t: Tracker) -> Iterator[str]:
    """``/continuity status`` of an armed extension opens with spec §11's block (P88): "Pi Session
    Continuity", "Status: armed", "Model window: <window>" (P95f), "Reserve: <reserve>" (P95e), the
    effective trigger ``window - reserve`` and the keep-recent tokens (P95e), each at
    "approximately" its percentage of the window (P95g), and "Restart required: yes|no". Armed: a
    mode with a UI, a trusted project, an extension config that is valid or absent, and Pi's live
    settings for the active model a valid state (:func:`native_settings_problem`). The panel is
    the notification of the command that has a "Status:" line."""
    if not t.has_ui or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    if not (t.trusted and t.config_state in ("valid", "absent")):
        return
    live = t.live_policy()
    if live is None:
        return
    model, settings = live
    if live_settings_problem(model, settings) is not None:
        return
    window, reserve, keep = model.context_window, settings.reserve_tokens, settings.keep_recent_tokens
    panels = _status_panels(t)
    if not panels:
        yield "/continuity status showed no panel with a 'Status:' line"
        return
    problem = status_block_problem(panels[-1], window, reserve, keep)
    if problem is not None:
        yield problem


@_register(rules=("P95a", "P95b", "P95c", "P95d", "P95h", "P95i", "P95k"))
def status_reports_every_field(t: Tracker) -> Iterator[str]:
    """``/continuity status`` shows what spec §12 lists (the features' readings): a line naming
    the extension says it is enabled or disabled (P95a), one naming trust says "trusted" (P95b),
    one naming the config says "valid" (P95c), one naming native compaction says enabled or
    disabled as Pi's live settings are (P95d); the text names the synthesis model (``inherit`` or
    the configured ``provider/model``) and effort (P95h), the exact project settings path (P95i)
    and the resolved artifact directory (P95k). Owed in a mode with a UI, a trusted project and an
    extension config that is valid or absent (a disabled one: the extension line only), with Pi's
    live settings readable."""
    if not t.has_ui or _continuity_command(t) != "/continuity status" or t.crashed_in_op:
        return
    if not t.trusted or t.config_state not in ("valid", "absent", "disabled"):
        return
    live = t.live_policy()
    panels = _status_panels(t)
    if live is None or not panels:
        return  # no panel at all is status_opens_with_the_block's and status_restart_state's
    text = panels[-1]
    disabled = t.config_state == "disabled"
    if not line_says(text, r"\bextension\b", "disabled" if disabled else "enabled"):
        yield f"/continuity status does not say the extension is {'disabled' if disabled else 'enabled'}"
    if disabled:
        return
    _model, settings = live
    native = "enabled" if settings.enabled else "disabled"
    for label, name, word in (
        (r"\btrust", "trust", "trusted"),
        (r"\bconfig\b", "the config", "valid"),
        (r"\bnative compaction\b", "native compaction", native),
    ):
        if not line_says(text, label, word):
            yield f"/continuity status has no line naming {name} as {word}"
    model = str(t.config.get("synthesisModel", "inherit"))
    effort = str(t.config.get("synthesisEffort", "medium"))
    if model not in text:
        yield f"/continuity status does not name the synthesis model {model}"
    if not re.search(rf"(?<![-\w]){re.escape(effort)}\b", text):
        yield f"/continuity status does not name the synthesis effort {effort}"
    if t.settings_path not in text:
        yield f"/continuity status does not name the project settings {t.settings_path}"
    if not names_directory(text, _artifact_root(t)):
        yield f"/continuity status does not name the artifact directory {_artifact_root(t)}"


@_register(rules=("P90b", "P53b", "P90c", "P90d"))
def handoff_messages_exact(t: Tracker) -> Iterator[str]:
    """A committed handoff says what happened in spec §11's exact words (in a mode with a UI):
    "Continuity Brief saved to <path>." naming the committed pending file (P90b, P53b),
    "native compaction committed with disk-backed Brief <path>." naming a file that holds the
    archived Brief of that event (P90c), and, after a continuation, "continuation submitted from
    saved Brief." (P90d), each in the operation of the commit. A product-prefixed warning or
    error after the commit (archiving failed) excuses the last two."""
    if not t.has_ui:
        return
    for path in t.committed_paths:
        if f"{_SAVED_MESSAGE}{path}." not in t.notices:
            yield f"no exact 'Continuity Brief saved to {path}.' for the committed Brief"
    for seq, event_id in t.committed:
        if _reported_after(t, seq):
            continue
        named = [p for p in map(committed_announcement, t.notices) if p is not None]
        archived = {written.path for written, event in _events_written(t, "archive") if event == event_id}
        if not archived.intersection(named):
            yield f"no exact committed announcement names the archived Brief of event {event_id}"
        if t.continued and _CONTINUATION_MESSAGE not in t.notices:
            yield "no exact 'continuation submitted from saved Brief.' after the continuation"


# ===================================================================== liveness
_LIVENESS_DOC = (
    "Safety then liveness: once faults heal, the next threshold compaction commits a valid Brief at "
    "the first check point that reaches it, and a continuation follows it (spec §5, §10); failures "
    "are visible and fail closed, with no cooldown that would skip it (spec §5 'no cooldown', "
    "psc-lifecycle-on-real-pi consequence 6); a seed whose "
    "extension config could not hand off has it corrected before the restart, and automatic behaviour "
    "resumes (spec §6 'until corrected'); without a config the defaults hand off (§6), and so does a "
    "valid config with each of the six synthesisEffort labels (P36b: the explorer writes all six)."
)


#: The records :meth:`InvariantChecker._pre` acts on (besides every ``op`` record), and those
#: :meth:`InvariantChecker._post` acts on: the others (most of a run's records) skip both calls
#: and their chains of comparisons (issue 16). ``test_pre_and_post_keys_name_every_key_they_test``
#: reads both methods and fails when one tests a key missing here.
_PRE_KEYS = frozenset(
    {
        "fault:fs",
        "fault:tamper",
        "host:start",
        "host:crash",
        "host:runtime",
        "event:session_start",
        "event:session_shutdown",
        "event:model_select",
        "ui:confirm",
        "ui:notify",
        "event:session_before_compact",
        "event:session_compact",
        "call:send_user_message",
        "model:request",
    }
)
#: Every record of these kinds goes to ``_pre`` (an ``op`` starts or ends an operation; any
#: ``host`` record ends the ``session_shutdown`` handlers' turn).
_PRE_KINDS = frozenset({"op", "host"})
_POST_KEYS = frozenset(
    {
        "fs:remove",
        "fs:replace",
        "fs:write",
        "entry:compaction",
        "call:send_user_message",
        "model:reply",
        "session:compaction_end",
    }
)


# ===================================================================== the checker
class InvariantChecker:
    """Runs every invariant on a simulation; collects :class:`Violation` objects.

    Create it *before* ``simulation.start()`` so it sees every record as it happens. Call
    :meth:`before_operation` / :meth:`after_operation` around each ``perform`` (the explorer and
    the replay steps do), and :meth:`liveness` at the end of a run with a healed phase.
    """

    def __init__(
        self,
        simulation: Simulation,
        *,
        markers: Iterable[str] = (),
    ) -> None:
        scenario = simulation.result.scenario
        competitors = tuple(str(e.competitor) for e in scenario.extensions if e.competitor is not None)
        self.tracker = Tracker(
            simulation,
            markers=tuple(markers),
            competitors=competitors,
            workdir=str(simulation.host.paths.workdir),
            has_ui=scenario.mode in ("rpc", "tui"),
            replaceable=competitor_may_replace(scenario),
        )
        host_paths = simulation.host.paths
        planted = [os.path.normpath(host_paths.resolve(name)) for name in scenario.files]
        in_folders = [path for path in planted if os.path.basename(os.path.dirname(path)) in ARTIFACT_FOLDERS]
        self.tracker.planted_paths = frozenset(
            path
            for path in in_folders
            if _is_brief_file(os.path.basename(path))  # not a temporary file: P136's
        )
        self.tracker.known_sessions = {
            os.path.basename(os.path.dirname(os.path.dirname(p))) for p in in_folders
        }
        self.violations: list[Violation] = []
        self.harness_errors: list[str] = []
        self._next_op: Operation | None = None
        self._by_trigger: dict[str, list[_Registered]] = {}
        self._after: list[_Registered] = []
        for registered in INVARIANTS.values():
            if registered.triggers:
                for trigger in registered.triggers:
                    self._by_trigger.setdefault(trigger, []).append(registered)
            else:
                self._after.append(registered)
        for record in list(simulation.host.trace.records):
            self.on_record(record)
        simulation.host.trace.sinks.append(self.on_record)

    # ----------------------------------------------------------------- results
    @property
    def ok(self) -> bool:
        return not self.violations and not self.harness_errors

    def _add(self, name: str, message: str, seq: int | None) -> None:
        self.violations.append(Violation(name, message, self.tracker.operation, seq))

    @property
    def checkpoints(self) -> list[CheckPoint]:
        return self.tracker.checkpoints

    # ----------------------------------------------------------------- the run checker seam
    @property
    def invariants(self) -> frozenset[str]:
        return frozenset(spec.name for spec in invariant_specs())

    def found(self) -> list[tuple[str, str]]:
        return [(v.invariant, str(v)) for v in self.violations]

    def errors(self) -> list[str]:
        return list(self.harness_errors)

    def finish(self) -> None:
        """Every invariant is checked as the run goes; nothing is left for its end."""

    def metrics(self) -> dict[str, Any]:
        """What failing check points cost: synthesis attempts, failure notifications and failed
        postmortems per check point that did not commit (psc-lifecycle consequence 6)."""
        failing = [c for c in self.checkpoints if c.outcome in ("cancelled", "failed")]
        out: dict[str, Any] = {"checkPoints": len(self.checkpoints), "failing": len(failing)}
        for key, attr in (
            ("synthesisAttempts", "synthesis_requests"),
            ("failureNotifications", "failure_notifications"),
            ("failedPostmortems", "failed_postmortems"),
        ):
            values = [int(getattr(c, attr)) for c in failing]
            out[key] = {
                "total": sum(values),
                "max": max(values, default=0),
                "perFailingCheckPoint": round(sum(values) / len(values), 2) if values else 0.0,
            }
        return out

    def liveness(self, first_healed_operation: int) -> str | None:
        violation = self.check_liveness(first_healed_operation)
        return None if violation is None else str(violation)

    # ----------------------------------------------------------------- operations
    def before_operation(self, op: Operation) -> None:
        """Remember the operation object (its dialog answers) for the records that follow."""
        self._next_op = op

    def after_operation(self) -> None:
        t = self.tracker
        t._archives, t._walk_once = None, True  # the project as it is now, walked once
        for registered in self._after:
            try:
                for message in registered.function(t):
                    self._add(registered.name, message, None)
            except Exception as error:  # a checker bug must surface, not hide a run
                self.harness_errors.append(f"{registered.name}: {type(error).__name__}: {error}")
        t.requests_seen = len(t.host.service.requests)
        t.written.clear()
        t.unmatched.clear()
        t.committed.clear()
        t.notices.clear()
        t.committed_paths.clear()
        t.continued = False
        t.stale_found = []
        t.removed_pending = []
        t.op_synthesis_requests = 0
        t.op_checkpoints = len(t.checkpoints)
        t.crashed_in_op = False
        t.op_faults = 0
        t.settings_saved = False
        t.reconcile_due = []
        t.policy_checked = False
        t.config_invalid_at_start = None
        t.alarms.clear()
        t.current_top = None
        t._archives, t._walk_once = None, False

    # ----------------------------------------------------------------- records
    def on_record(self, record: dict[str, Any]) -> None:
        t = self.tracker
        key = f"{record.get('kind')}:{record.get('name')}"
        try:
            if key in _PRE_KEYS or record.get("kind") in _PRE_KINDS:
                self._pre(record, key)
            for registered in self._by_trigger.get(key, ()):
                for message in registered.function(t, record):
                    self._add(registered.name, message, record.get("seq"))
            if key in _POST_KEYS:
                self._post(record, key)
        except Exception as error:  # never let a checker bug break the simulated host
            self.harness_errors.append(f"{key} #{record.get('seq')}: {type(error).__name__}: {error}")

    def _pre(self, record: dict[str, Any], key: str) -> None:
        t = self.tracker
        if record.get("kind") == "host" or key == "event:session_start":
            t.shutting_down = False
        if key == "event:session_shutdown":
            t.shutting_down = True
        elif key in ("host:start", "host:crash"):
            t.crashed_in_op = t.crashed_in_op or key == "host:crash"
            t.synthesis_in_flight = 0
            t.window = None
            t.unmatched.clear()  # a process that died reports and archives nothing more
            t.committed.clear()
            t.committed_paths.clear()
            t.continued = False
            t.stale_found = []
            t.continuations.clear()
            t.ops = [op for op in t.ops if not op.during]
            if t.open_checkpoint is not None:
                t.open_checkpoint.outcome = "crashed"
                t.open_checkpoint = None
        elif key == "host:runtime":
            t.trusted = bool(record.get("trusted", True))
            t.session_id = record.get("sessionId")
            if t.session_id:
                t.known_sessions.add(str(t.session_id))
        elif key == "event:session_start":
            t.runtime_generation += 1
            t.read_config()
            t.stale_paths = frozenset(_stale_briefs(t))
            t.stale_unread = set()
            t.stale_found = _stale_pending(t)
            t.reconcile_due = _committed_pending(t)
            t.leftover_temps, t.unnamed_temps = _leftover_temps(t), []
            t.policy_checked = True
            t.last_artifact, t.last_artifact_open = None, False
            t.failed_last = False
            if t.config_state == "invalid":
                t.config_invalid_at_start = invalid_config_fields(t.config)
        elif key == "event:model_select":
            t.policy_checked = True
        elif record.get("kind") == "op":
            self._op_record(record)
        elif key == "fault:tamper":
            t.tampered = True
        elif key == "fault:fs":
            t.op_faults += 1
            if f"{os.sep}archive" in str(record.get("path", "")):
                t.last_archive_fault = int(record["seq"])
            if record.get("op") == "read" and t.stale_paths:
                # The implementation could not read it as it is (spec §7: an unreadable or
                # corrupt pending file is no Brief), so there is nothing stale to report.
                faulted = t.real(str(record.get("path", "")))
                t.stale_found = [path for path in t.stale_found if path != faulted]
                if faulted in t.stale_paths:
                    t.stale_unread.add(faulted)
        elif key == "ui:confirm":
            answer = record.get("answer") or {}
            if answer.get("confirm") is True and t.current_top is not None:
                t.current_top.confirmed = True
        elif key == "ui:notify":
            message = str(record.get("message", ""))
            if t.open_checkpoint is not None and " failed" in message[: len(MESSAGE_PREFIX) + 8]:
                t.open_checkpoint.failure_notifications += 1
                if message.startswith(_FAILED_PREFIX) and message.endswith(_CANCELLED_SUFFIX):
                    t.open_checkpoint.cancel_notices += 1
            if record.get("notifyType") in ("warning", "error") and message.startswith(MESSAGE_PREFIX):
                t.last_alarm = int(record["seq"])
                t.alarms.append(t.real(message))
            t.notices.append(t.real(message))  # the trace writes the work directory as $WORK
            if message.startswith(_FAILED_PREFIX):
                t.failed_last = True
                if t.last_artifact is not None:
                    # A failure after the last artifact: unless that artifact is its failed
                    # record, what status names as the last one is the implementation's (P57).
                    t.last_artifact_open = f"{os.sep}failed{os.sep}" not in t.last_artifact
            elif message.startswith((_SAVED_MESSAGE, _COMMITTED_MESSAGE)):
                t.failed_last = False
            if message == _STALE_MESSAGE:
                t.stale_found = []
            if message == _THRESHOLD_MESSAGE and t.open_checkpoint is not None:
                t.open_checkpoint.announced = True
        elif key == "event:session_before_compact":
            preparation = record.get("preparation")
            settings = preparation.get("settings") if isinstance(preparation, dict) else None
            runtime = t.host.runtime
            model = runtime.session.model if runtime is not None else None
            checkpoint = CheckPoint(
                str(record.get("reason")),
                bool(record.get("willRetry")),
                t.operation,
                int(record["seq"]),
                settings=dict(settings) if isinstance(settings, dict) else {},
                tokens_before=preparation.get("tokensBefore") if isinstance(preparation, dict) else None,
                first_kept=preparation.get("firstKeptEntryId") if isinstance(preparation, dict) else None,
                model=model.full_id if model is not None else None,
                window=model.context_window if model is not None else None,
                leaf=runtime.session_manager.get_leaf_id() if runtime is not None else None,
                session_file=runtime.session_manager.get_session_file() if runtime is not None else None,
            )
            t.checkpoints.append(checkpoint)
            t.open_checkpoint = checkpoint
        elif key == "event:session_compact":
            entry = record.get("compactionEntry") or {}
            t.window = _Window(str(record.get("reason")), entry.get("id"), checkpoint=t.open_checkpoint)
            if t.replaceable and t.has_ui and entry.get("id") not in t.verified:
                t.unmatched.append(int(record["seq"]))
            elif entry.get("id") in t.verified:
                summary = t.verified[str(entry.get("id"))]
                brief = t.brief(summary)
                path = _pending_match(t, summary)
                # A tamper rule that changed the pending Brief after Pi appended the entry leaves
                # no Brief whose bytes are the summary: no archive is owed (P70a).
                if brief is not None and brief.event_id is not None and (path is not None or not t.tampered):
                    t.committed.append((int(record["seq"]), brief.event_id))
                if path is not None:
                    t.committed_paths.append(path)
        elif key == "call:send_user_message" and not _by_competitor(record):
            window = t.window
            if window is not None and window.entry_id in t.verified:
                t.continued = True
            if window is not None:
                window.continuations += 1
                if window.checkpoint is not None:
                    window.checkpoint.continuations += 1
        elif key == "model:request" and record.get("caller") == "extension":
            t.op_synthesis_requests += 1
            if "refused" in record:
                return
            t.synthesis_in_flight += 1
            service = t.host.service
            scripted: SynthesisReply | None = None
            if record.get("scripted"):
                used = service.used("extension")
                candidate = used[-1] if used else None
                scripted = candidate if isinstance(candidate, SynthesisReply) else None
            t.synthesis_scripted[int(record.get("index", -1))] = scripted
            if t.open_checkpoint is not None:
                if scripted is not None:
                    t.open_checkpoint.scripted_kinds.append(scripted.kind)
                t.open_checkpoint.synthesis_requests += 1
                t.open_checkpoint.synthesis_model = record.get("model")

    def _op_record(self, record: dict[str, Any]) -> None:
        t = self.tracker
        if record.get("phase") == "end":
            # The operation that ended, not the latest begun: a manual compaction run while a
            # prompt's synthesis was held outlives the prompt (Pi's ``compact()`` aborts the run,
            # which ends, then compacts: ``agent-session.js`` ``compact``).
            named = [i for i, op in enumerate(t.ops) if op.name == record.get("name")]
            if named:
                del t.ops[named[-1]]
            elif t.ops:
                t.ops.pop()
            return
        during = bool(record.get("during"))
        op = _Op(str(record.get("name")), record.get("index"), during)
        if during:
            t.ops.append(op)
            return
        # A top-level operation starts from a clean stack: a crash swallows ``phase: end``.
        op.op = self._next_op
        self._next_op = None
        t.current_top = op
        t.ops = [op]

    def _post(self, record: dict[str, Any], key: str) -> None:
        t = self.tracker
        if key == "fs:remove":
            path = t.real(str(record.get("path", "")))
            t.pending_written.pop(path, None)
            name = os.path.basename(path)
            if (
                path.startswith(_artifact_root(t) + os.sep)
                and os.path.basename(os.path.dirname(path)) == "pending"
                and _is_brief_file(name)
            ):
                t.removed_pending.append((path, t.pending_events.pop(path, name[: -len(".md")])))
        elif key in ("fs:replace", "fs:write"):
            path = t.real(str(record.get("to" if key == "fs:replace" else "path", "")))
            if path == t.settings_path:
                t.settings_saved = True
            name = os.path.basename(path)
            folder = os.path.basename(os.path.dirname(path))
            data: bytes | None = None
            if folder in ARTIFACT_FOLDERS and _is_brief_file(name):
                data = t.read(path) if key == "fs:replace" else None
                t.written.append(_Written(path, folder, data, t.handoff_key()))
                t.last_artifact, t.last_artifact_open = path, False
            if f"{os.sep}pending{os.sep}" in path and _is_brief_file(name):
                t.pending_written.pop(path, None)
                t.pending_written[path] = t.runtime_generation
                event = _EVENT_ID.search(data.decode("utf-8", "replace")) if data else None
                if event:
                    t.pending_events[path] = event.group(1).strip()
            elif key == "fs:replace" and f"{os.sep}failed{os.sep}" in path:
                text = t.read_text(path) or ""  # renamed into place already
                match = _EVENT_ID.search(text)
                if match:
                    t.failed_event_ids.add(match.group(1).strip())
                if t.open_checkpoint is not None:
                    t.open_checkpoint.failed_postmortems += 1
        elif key == "entry:compaction":
            entry = _implementation_commit(t, record)
            checkpoint = t.open_checkpoint
            if entry is not None:
                summary = str(entry["summary"])
                ok = not t.problems(summary) and _pending_match(t, summary) is not None
                if ok:
                    t.verified[str(entry.get("id"))] = summary
                if checkpoint is not None:
                    checkpoint.verified = ok
        elif key == "call:send_user_message" and not _by_competitor(record):
            window = t.window
            t.continuations.append(t.verified.get(str(window.entry_id)) if window is not None else None)
        elif key == "model:reply" and record.get("caller") == "extension":
            t.synthesis_in_flight = max(0, t.synthesis_in_flight - 1)
            if record.get("stopReason") == "aborted" and t.open_checkpoint is not None:
                t.open_checkpoint.aborted_synthesis = True
            failure = synthesis_failure(record)
            if failure is not None and t.open_checkpoint is not None:
                t.open_checkpoint.failed_syntheses.append(failure)
            if t.open_checkpoint is not None:
                t.open_checkpoint.reasonings.extend(_reply_reasonings(t, int(record.get("index", -1))))
                if record.get("stopReason") == "error" and record.get("errorMessage"):
                    t.open_checkpoint.errors.append(str(record["errorMessage"]))
        elif key == "session:compaction_end":
            t.window = None
            checkpoint = t.open_checkpoint
            if checkpoint is not None:
                if record.get("aborted"):
                    checkpoint.outcome = "cancelled"
                elif record.get("errorMessage"):
                    checkpoint.outcome = "failed"
                else:
                    checkpoint.outcome = "committed"
                t.open_checkpoint = None

    # ----------------------------------------------------------------- liveness
    def check_liveness(self, first_healed_operation: int) -> Violation | None:
        """The first threshold check point at or after ``first_healed_operation`` committed the
        verified disk Brief and submitted a continuation (P20); ``None`` when it did, the violation
        (with the reason) otherwise."""
        t = self.tracker
        points = [
            c
            for c in t.checkpoints
            if c.operation is not None and c.operation >= first_healed_operation and c.reason == "threshold"
        ]
        if not points:
            records = t.host.trace.records
            skipped = [
                r for r in records if r.get("kind") == "host" and r.get("name") == "compaction_skipped"
            ]
            why = (
                "Pi was not running"
                if (t.host.crashed or not t.host.running)
                else ("Pi found nothing to summarise" if skipped else "no threshold check point was reached")
            )
            violation = Violation(
                "liveness", f"no progress after the faults healed: {why}", first_healed_operation
            )
        elif points[0].outcome == "committed" and points[0].verified and points[0].continuations:
            return None
        elif points[0].outcome == "committed" and points[0].verified:
            # P20: with nothing failing, a committed threshold handoff continues the work; the
            # upper bounds (one_continuation_per_compaction, continuation_only_after_threshold_commit)
            # pass an implementation that never continues.
            violation = Violation(
                "liveness",
                "the first threshold check point after the faults healed committed the verified Brief "
                "but no continuation followed it (spec §5, §10: after session_compact a threshold "
                "compaction submits the Brief plus the continuation instruction)",
                points[0].operation,
            )
        else:
            notes = [n.message for n in t.host.ui.notifications][-2:]
            violation = Violation(
                "liveness",
                f"the first threshold check point after the faults healed did not commit a valid Brief: "
                f"{points[0].describe()}; last notifications: {notes}",
                points[0].operation,
            )
        self.violations.append(violation)
        return violation


def competitor_may_replace(scenario: Any) -> bool:
    """Whether a competing extension that may replace a compaction result (its own compaction,
    ``{}``, or the Brief under details of its own) loads after the implementation (:func:`mismatch_reported`)."""
    seen = False
    for extension in scenario.extensions:
        if extension.implementation:
            seen = True
        elif seen and (
            extension.competitor in ("own_compaction", "empty")
            or str(extension.competitor).startswith("reissue_brief")
        ):
            return True
    return False


_PLANTED = re.compile(r"PLANTED-[A-Z]+-\d+")


def run_checker(simulation: Simulation) -> InvariantChecker:
    """The ``pi-session-continuity`` checker of ``simulation``: every invariant, with the planted
    artifacts of the scenario's files recognised (also the system's run checker, the entry point
    of ``pi_continuity_harness.run_checkers``)."""
    scenario = simulation.result.scenario
    found = (m for spec in scenario.files.values() for m in _PLANTED.findall(spec.text or ""))
    markers = tuple(dict.fromkeys(found))  # in the order the files were planted
    return InvariantChecker(simulation, markers=markers)
