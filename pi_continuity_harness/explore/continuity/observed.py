"""Pi Session Continuity's invariants as real Pi lets them be observed (``explore --target pi``).

Each checks, after every operation, one rule of ``continuity.invariants`` from the observations a
real Pi process gives of any implementation, TypeScript included (``explore.observed``): the
session entries, the extension events, the model requests, the notifications and the files. The
judge is the suite's oracle (``features.oracle``), never the reference. What these cannot see
(the pending bytes on disk at the moment Pi commits, the implementation's own file operations and
API calls, the host's live settings) stays with the simulator's trace invariants.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from pi_continuity_harness.explore.continuity.invariants import (
    ARCHIVED_STATUS,
    ARTIFACT_FOLDERS,
    INVARIANTS,
    artifact_name_problems,
    brief_event_ids,
    brief_key_problems,
    committed_announcement,
    competitor_may_replace,
    effort_label_problems,
    hidden_continuation_problems,
    is_no_such_subcommand,
    native_settings_problem,
    notification_level_problem,
    percent_problems,
    system_prompt_evidence,
    user_openings,
    vocabulary_problem,
)
from pi_continuity_harness.explore.observed import ObservedInvariant, ObservedRun
from pi_continuity_harness.features.oracle import (
    AUTHORITY_BOUNDARY_SENTENCE,
    CONTINUATION_SUFFIX,
    HANDOFF_REASON_OF_COMPACTION,
    MESSAGE_PREFIX,
    brief_problems,
    details_context_problems,
    freshness_rule_paragraphs,
    handoff_context,
    has_freshness_rule,
    leaf_values,
    parse_brief,
    sha256_hex,
)
from pi_continuity_harness.scenario.operations import CommandOp

__all__ = ["OBSERVED_INVARIANTS"]

ARCHIVE_LIMIT = 10
_DIRECTIVE_LINE = re.compile(
    r"^\s*(?:SYSTEM|DEVELOPER|ASSISTANT)\s*:|ignore (?:all )?previous instructions", re.IGNORECASE
)
_PLANTED = re.compile(r"PLANTED-[A-Z]+-\d+")


def _competitors(run: ObservedRun) -> tuple[str, ...]:
    return tuple(str(e.competitor) for e in run.scenario.extensions if e.competitor is not None)


def _implementation_commits(run: ObservedRun) -> list[dict[str, Any]]:
    """Compaction entries an extension returned, except a competing extension's own summary."""
    own = "own_compaction" in _competitors(run)
    return [
        e
        for e in run.entries_of("compaction")
        if e.get("fromHook") and not (own and str(e.get("summary", "")).startswith("COMPETITOR-SUMMARY-"))
    ]


def commit_is_valid_brief(run: ObservedRun) -> Iterator[str]:
    for entry in _implementation_commits(run):
        problems = brief_problems(
            str(entry.get("summary")), status="pending", session_id=run.observation.session_id
        )
        if problems:
            yield (
                f"compaction entry {entry.get('id')} committed a summary that is not a valid pending Brief: "
                + "; ".join(problems[:4])
            )


def commit_details_correlate(run: ObservedRun) -> Iterator[str]:
    for entry in _implementation_commits(run):
        summary = str(entry.get("summary"))
        brief = parse_brief(summary)
        details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
        assert isinstance(details, dict)
        if brief is not None and details.get("continuityEventId") != brief.event_id:
            found = details.get("continuityEventId")
            yield f"entry {entry.get('id')}: details.continuityEventId {found!r} is not the Brief's {brief.event_id!r}"
        if sha256_hex(summary) not in leaf_values(details):
            yield f"entry {entry.get('id')}: no detail holds the SHA-256 of the summary"
        prepared = _prepared(run, entry.get("id"))
        if prepared is not None:
            reason = HANDOFF_REASON_OF_COMPACTION.get(str(prepared.get("reason")))
            settings = (prepared.get("preparation") or {}).get("settings")
            context = handoff_context(
                run.observation.session_id, reason, settings if isinstance(settings, dict) else {}
            )
            for problem in details_context_problems(details, context):
                yield f"entry {entry.get('id')}: {problem}"


def _prepared(run: ObservedRun, entry_id: Any) -> dict[str, Any] | None:
    """The ``session_before_compact`` event (its reason, ``preparation.settings``) before the
    ``session_compact`` that announced the entry (the observer logs both)."""
    prepared: dict[str, Any] | None = None
    for event in run.observation.extension_events:
        if event.get("type") == "session_before_compact":
            prepared = event
        elif (
            event.get("type") == "session_compact"
            and (event.get("compactionEntry") or {}).get("id") == entry_id
        ):
            return prepared
    return None


def freshness_rule_once(run: ObservedRun) -> Iterator[str]:
    for entry in _implementation_commits(run):
        brief = parse_brief(str(entry.get("summary")))
        if brief is None:
            continue
        count = len(freshness_rule_paragraphs(brief.body))
        if count != 1:
            yield f"entry {entry.get('id')}: the Recovery Instructions state the event-freshness rule {count} time(s)"


def no_promoted_directive(run: ObservedRun) -> Iterator[str]:
    for entry in _implementation_commits(run):
        for line in str(entry.get("summary")).splitlines():
            stripped = line.strip()
            if stripped.startswith((">", "`")):
                continue
            if _DIRECTIVE_LINE.search(line):
                yield f"entry {entry.get('id')} promotes a directive: {stripped[:100]!r}"
                break


def fail_closed_no_pi_summary(run: ObservedRun) -> Iterator[str]:
    if not any(e.implementation for e in run.scenario.extensions) or "empty" in _competitors(run):
        return
    for entry in run.entries_of("compaction"):
        if not entry.get("fromHook"):
            yield f"compaction entry {entry.get('id')} holds Pi's own summary (fromHook false)"


def brief_records_its_compaction(run: ObservedRun) -> Iterator[str]:
    """Observed from the extension events: each committed Brief against the
    ``session_before_compact`` before its ``session_compact`` (Pi's ``tokensBefore`` and
    prepared settings), the percentages against the Brief's own tokens and window, and
    ``branchLeafBefore`` against the compaction entry's parent (the leaf it was appended to, as
    the feature step reads it), and ``handoffReason`` against the ``session_compact`` event's
    reason (P63). The active model and the synthesis request's model are not observed with the
    hook, so ``modelId``, ``synthesisModel`` and ``contextWindow`` stay with the trace form, and
    Pi's session file at the hook (the observation has the last one) ``sessionFile``."""
    for event, prepared in _committed_after_preparation(run):
        entry = event.get("compactionEntry") or {}
        brief = parse_brief(str(entry.get("summary")))
        assert brief is not None  # _returned_brief parsed it
        front, settings = brief.frontmatter, prepared.get("settings") or {}
        expected = [
            ("tokenCountAtTrigger", prepared.get("tokensBefore")),
            ("reserveTokens", settings.get("reserveTokens")),
            ("keepRecentTokens", settings.get("keepRecentTokens")),
        ]
        parent = next(
            (e.get("parentId") for e in run.observation.entries if e.get("id") == entry.get("id")), None
        )
        if "branchLeafBefore" in front and parent is not None:
            expected.append(("branchLeafBefore", parent))
        expected.append(("handoffReason", HANDOFF_REASON_OF_COMPACTION.get(str(event.get("reason")))))
        for key, value in expected:
            if value is not None and front.get(key) != value:
                yield f"entry {entry.get('id')}: the Brief's {key} is {front.get(key)!r}; the compaction's is {value!r}"
        yield from (f"entry {entry.get('id')}: {problem}" for problem in percent_problems(front))


def _committed_after_preparation(run: ObservedRun) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Each ``session_compact`` of a Brief the implementation returned (:func:`_returned_brief`)
    with the preparation of the ``session_before_compact`` before it."""
    prepared: dict[str, Any] | None = None
    for event in run.observation.extension_events:
        if event.get("type") == "session_before_compact":
            prepared = event.get("preparation") if isinstance(event.get("preparation"), dict) else None
        elif event.get("type") == "session_compact" and prepared is not None and _returned_brief(event):
            yield event, prepared


def commit_keeps_prepared_cut(run: ObservedRun) -> Iterator[str]:
    """Observed from the extension events: the ``session_compact`` entry against the
    ``session_before_compact`` before it."""
    for event, prepared in _committed_after_preparation(run):
        entry = event.get("compactionEntry") or {}
        for key in ("firstKeptEntryId", "tokensBefore"):
            value = prepared.get(key)
            if value is not None and entry.get(key) != value:
                yield f"compaction entry {entry.get('id')} has {key} {entry.get(key)!r}; Pi prepared {value!r}"


def commit_announced_once(run: ObservedRun) -> Iterator[str]:
    """Observed over the run's notifications, in order."""
    seen: set[str] = set()
    for message, _kind in run.observation.notifications:
        path = committed_announcement(str(message))
        if path is not None and path in seen:
            yield f"the commit of {path} was announced again"
        if path is not None:
            seen.add(path)


def notification_levels(run: ObservedRun) -> Iterator[str]:
    for message, kind in run.observation.notifications:
        problem = notification_level_problem(str(message), kind)
        if problem is not None:
            yield problem


def mismatch_reported(run: ObservedRun) -> Iterator[str]:
    """Observed per operation (an observation does not order the notifications among the
    extension events): a ``session_compact`` of the operation whose entry is not a Brief the
    implementation returned (``fromHook``, a Brief, its exact bytes in a project file: the
    ``summaryFiles`` witness) needs a product-prefixed warning or error among the operation's
    notifications. So a warning the operation showed before that ``session_compact`` counts too."""
    name = mismatch_reported.__name__
    events, notes = run.observation.extension_events, run.observation.notifications
    seen_events, seen_notes = run.kept.get(name, (0, 0))
    if len(events) < seen_events or len(notes) < seen_notes:
        seen_events = seen_notes = 0  # a new observation of the run: read it from its start
    run.kept[name] = (len(events), len(notes))
    if run.scenario.mode not in ("rpc", "tui") or not competitor_may_replace(run.scenario):
        return
    unmatched = [
        event
        for event in events[seen_events:]
        if event.get("type") == "session_compact" and not _returned_brief(event)
    ]
    if any(
        kind in ("warning", "error") and str(message).startswith(MESSAGE_PREFIX)
        for message, kind in notes[seen_notes:]
    ):
        return
    for event in unmatched:
        entry = event.get("compactionEntry") or {}
        yield (
            f"the session_compact of entry {entry.get('id')} committed something other than the "
            "implementation's Brief and no product-prefixed warning or error reported the incompatibility"
        )


def _returned_brief(event: dict[str, Any]) -> bool:
    entry = event.get("compactionEntry") or {}
    summary = entry.get("summary")
    return (
        bool(entry.get("fromHook"))
        and isinstance(summary, str)
        and parse_brief(summary) is not None
        and bool(event.get("summaryFiles"))
    )


def _markers(run: ObservedRun) -> list[str]:
    found = (m for spec in run.scenario.files.values() for m in _PLANTED.findall(spec.text or ""))
    return list(dict.fromkeys(found))


def artifacts_never_input(run: ObservedRun) -> Iterator[str]:
    for entry in run.entries_of("compaction"):
        summary = str(entry.get("summary") or "")
        for marker in _markers(run):
            if marker in summary:
                yield f"a planted artifact ({marker}) became the compaction summary {entry.get('id')}"


def planted_artifacts_never_input(run: ObservedRun) -> Iterator[str]:
    markers = _markers(run)
    for request in run.observation.model_requests:
        text = request.text
        for marker in markers:
            if marker in text:
                yield f"{request.kind} request #{request.index} carries the planted artifact {marker}"


def _continuations(run: ObservedRun) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, e)
        for i, e in enumerate(run.observation.extension_events)
        if e.get("type") == "input" and e.get("source") == "extension"
    ]


def continuation_only_after_threshold_commit(run: ObservedRun) -> Iterator[str]:
    events = run.observation.extension_events
    for index, event in _continuations(run):
        before = [e for e in events[:index] if e.get("type") in ("session_compact", "session_start")]
        last = before[-1] if before else None
        if last is None or last.get("type") != "session_compact":
            yield f"a continuation was submitted with no compaction before it: {str(event.get('text'))[:60]!r}"
        elif last.get("reason") != "threshold":
            yield f"a continuation was submitted after a {last.get('reason')} compaction"


def one_continuation_per_compaction(run: ObservedRun) -> Iterator[str]:
    counts: dict[int, int] = {}
    events = run.observation.extension_events
    for index, _event in _continuations(run):
        compacts = [i for i, e in enumerate(events[:index]) if e.get("type") == "session_compact"]
        if compacts:
            counts[compacts[-1]] = counts.get(compacts[-1], 0) + 1
    for position, count in counts.items():
        if count > 1:
            yield f"{count} continuations were submitted for the compaction at event {position}"


def continuation_from_disk_bytes(run: ObservedRun) -> Iterator[str]:
    """The continuation is the committed Brief's exact bytes plus the fixed suffix, with only
    white space between them, as the trace invariant reads it (this form asked for the two
    concatenated, and so failed the reference, which puts a blank line between them, on every
    simulated run observed as real Pi is: ``tests/explore/test_psc_observed_invariants.py``)."""
    events = run.observation.extension_events
    for index, event in _continuations(run):
        compacts = [e for e in events[:index] if e.get("type") == "session_compact"]
        if not compacts:
            continue
        summary = str((compacts[-1].get("compactionEntry") or {}).get("summary") or "")
        text = str(event.get("text") or "")
        if not any(
            _brief_then_suffix(candidate, summary)
            for candidate in (text, text.replace(str(run.project_dir), "$PROJECT"))
        ):
            yield "the continuation is not the committed Brief followed by the fixed continuation suffix"


def _brief_then_suffix(text: str, summary: str) -> bool:
    return (
        text.startswith(summary)
        and text.endswith(CONTINUATION_SUFFIX)
        and len(text) >= len(summary) + len(CONTINUATION_SUFFIX)
        and not text[len(summary) : len(text) - len(CONTINUATION_SUFFIX)].strip()
    )


def _archive_dirs(run: ObservedRun) -> Iterator[tuple[str, list[str]]]:
    for root, dirs, files in os.walk(run.project_dir):
        dirs.sort()
        if os.path.basename(root) == "archive":
            yield root, sorted(f for f in files if f.endswith(".md") and not f.startswith("."))


def archive_retention(run: ObservedRun) -> Iterator[str]:
    for root, briefs in _archive_dirs(run):
        if len(briefs) > ARCHIVE_LIMIT:
            yield f"{root} holds {len(briefs)} archived Briefs"


def archive_requires_full_match(run: ObservedRun) -> Iterator[str]:
    """What can be seen of it afterwards: every archived Brief of the current session is
    ``archived`` and its body is the body of a committed compaction summary of the session's
    entries with the same eventId. Another session's archives were judged while it was current
    (after every operation; a problem is reported once): a new session, or a restart with
    in-memory sessions, has none of their entries, and this form failed the reference on such a
    run (seed 18: ``tests/explore/test_psc_observed_invariants.py``).

    Pi that crashed shows only what it wrote, and an in-memory session nothing
    (``PiTarget.observe``; the simulator's observation has shown the same since the
    thirty-sixth session): with nothing observable at all (no entry, no session file) nothing
    is judged; the archives were judged while their commits could be seen."""
    if not run.observation.entries and run.observation.session_file is None:
        return
    planted = _planted(run)
    session_id = run.observation.session_id
    committed = {}
    for entry in _implementation_commits(run):
        brief = parse_brief(str(entry.get("summary")))
        if brief is not None:
            committed[brief.event_id] = brief
    for root, briefs in _archive_dirs(run):
        for name in briefs:
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if os.path.relpath(path, run.project_dir) in planted:
                continue
            brief = parse_brief(text)
            if brief is None or brief.status != "archived":
                yield f"{name} is not an archived Brief"
                continue
            if session_id is not None and brief.frontmatter.get("sessionId") != session_id:
                continue
            match = committed.get(brief.event_id)
            if match is None:
                yield f"event {brief.event_id} was archived but no committed compaction entry carries it"
            elif match.body != brief.body:
                yield f"the archived body of event {brief.event_id} differs from the committed summary"


def synthesis_prompt_rules(run: ObservedRun) -> Iterator[str]:
    for request in run.observation.model_requests:
        if request.kind != "extension":
            continue
        text = request.text
        if AUTHORITY_BOUNDARY_SENTENCE not in text:
            yield f"synthesis request #{request.index} lacks the authority-boundary rule"
        if not has_freshness_rule(text):
            yield f"synthesis request #{request.index} lacks the event-freshness rule"
        if "state of the work" not in text:
            yield f"synthesis request #{request.index} does not speak of the state of the work"


def messages_prefixed(run: ObservedRun) -> Iterator[str]:
    for message, _kind in run.observation.notifications:
        if not str(message).startswith(MESSAGE_PREFIX):
            yield f"a notification is not product-prefixed: {str(message)[:80]!r}"


def _planted(run: ObservedRun) -> dict[str, Any]:
    """The files the scenario planted in the project, by normalised project-relative path."""
    return {
        os.path.normpath(name.removeprefix("$PROJECT/")): spec for name, spec in run.scenario.files.items()
    }


def untrusted_project_untouched(run: ObservedRun) -> Iterator[str]:
    """What can be seen of it: nothing of the extension's appears under an untrusted project,
    beside the files the scenario planted there, as they were planted (this form took the
    planted artifacts' directory for the extension's, and failed the reference on every
    untrusted seed with planted artifacts: ``tests/explore/test_psc_observed_invariants.py``)."""
    if run.scenario.trust != "never":
        return
    root = run.project_dir / ".pi" / "session-continuity"
    if not root.exists():
        return
    planted = _planted(run)
    for directory, dirs, files in os.walk(root):
        dirs.sort()  # the first problem reported is the same on every filesystem
        relative = os.path.relpath(directory, run.project_dir)
        if not any(path == relative or path.startswith(relative + os.sep) for path in planted):
            yield f"{directory} exists in an untrusted project"
            return
        for name in sorted(files):
            path = os.path.join(directory, name)
            spec = planted.get(os.path.relpath(path, run.project_dir))
            if spec is None or (spec.text is not None and _read(path) != spec.text):
                yield f"{path} was written in an untrusted project"
                return


def others_artifacts_untouched(run: ObservedRun) -> Iterator[str]:
    """What can be seen of it: every artifact the scenario planted (a foreign session's Brief
    and its temporary file, a legacy Brief and an old failed artifact of this session) is on
    disk with its planted bytes after every operation. Not judged: a planted file a tamper rule
    of the scenario may change (its pattern matches it), and a temporary file of the run's own
    session (P136 lets the implementation remove it)."""
    tamper = [rule.path for rule in run.scenario.faults.tamper]
    for relative, spec in sorted(_planted(run).items()):
        folder = os.path.dirname(relative)
        if os.path.basename(folder) not in ARTIFACT_FOLDERS or spec.text is None:
            continue
        if any(fnmatch.fnmatchcase(f"$PROJECT/{relative}", pattern) for pattern in tamper):
            continue
        name = os.path.basename(relative)
        if name.startswith(".") and os.path.basename(os.path.dirname(folder)) == run.observation.session_id:
            continue
        text = _read(str(run.project_dir / relative))
        if text != spec.text:
            what = "removed" if text is None else "changed"
            yield f"{relative}, an artifact the implementation did not write, was {what}"


def no_cleanup_or_compact_command(run: ObservedRun) -> Iterator[str]:
    """Observed per operation: the project's files and the compaction entries after the
    operation against those after the one before (what the run kept); judged after a
    ``/continuity cleanup`` or ``/continuity compact``."""
    kept = run.kept
    now = (_project_files(run), len(run.entries_of("compaction")))
    before = kept.get("no_cleanup_or_compact_command")
    kept["no_cleanup_or_compact_command"] = now
    if before is None or not run.operations:
        return
    op, _outcome = run.operations[-1]
    text = op.command.text if isinstance(op, CommandOp) else ""
    if not is_no_such_subcommand(text):
        return
    if now[1] > before[1]:
        yield f"{text!r} started a compaction"
    changed = sorted(path for path in set(before[0]) | set(now[0]) if before[0].get(path) != now[0].get(path))
    if changed:
        yield f"{text!r} changed the project file {changed[0]}"


def _project_files(run: ObservedRun) -> dict[str, str | None]:
    """Every file under the project, by its path relative to it, with its text. (Not
    ``targets.differential.project_files``: the explorer's checks may not import a target,
    ``tests/test_boundaries.py``.)"""
    files: dict[str, str | None] = {}
    for root, dirs, names in os.walk(run.project_dir):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            files[os.path.relpath(path, run.project_dir)] = _read(path)
    return files


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _artifact_files(run: ObservedRun) -> Iterator[tuple[str, str, str]]:
    """``(path, folder, text)`` of every Markdown file in a ``pending``, ``archive`` or ``failed``
    directory under the project, in path order, but the files the scenario planted there."""
    planted = _planted(run)
    for root, dirs, files in os.walk(run.project_dir):
        dirs.sort()
        folder = os.path.basename(root)
        if folder not in ARTIFACT_FOLDERS:
            continue
        for name in sorted(files):
            path = os.path.join(root, name)
            if (
                not name.endswith(".md")
                or name.startswith(".")
                or os.path.relpath(path, run.project_dir) in planted
            ):
                continue
            text = _read(path)
            if text is not None:
                yield path, folder, text


def artifacts_named_by_event(run: ObservedRun) -> Iterator[str]:
    """What can be seen of it afterwards: every artifact file on disk after an operation (one
    written and moved within the operation is not seen)."""
    for path, folder, text in _artifact_files(run):
        yield from artifact_name_problems(path, folder, text)


def brief_effort_is_a_label(run: ObservedRun) -> Iterator[str]:
    """What can be seen of it afterwards: every committed summary, and every Brief on disk after
    an operation (a Brief written and retired within one is seen only if it was committed)."""
    texts = [str(entry.get("summary")) for entry in _implementation_commits(run)]
    texts += [text for _path, _folder, text in _artifact_files(run)]
    for text in texts:
        brief = parse_brief(text)
        if brief is not None:
            yield from effort_label_problems(brief)


def invalid_native_settings_commit_nothing(run: ObservedRun) -> Iterator[str]:
    """Observed: the bounds that need no window (a positive ``reserveTokens`` and
    ``keepRecentTokens``, native compaction enabled), read from the ``session_before_compact``
    event before each commit. The bounds against the active model's window (P29b, P30b) need the
    host's live model, which only the simulator's trace shows."""
    for entry in _implementation_commits(run):
        prepared = _prepared(run, entry.get("id"))
        settings = ((prepared or {}).get("preparation") or {}).get("settings")
        if not isinstance(settings, dict):
            continue
        problem = native_settings_problem(settings, window=None)
        if problem is not None:
            yield f"compaction entry {entry.get('id')} was committed with Pi's prepared settings invalid: {problem}"


def native_setup_enables_compaction(run: ObservedRun) -> Iterator[str]:
    """Observed: the project's ``settings.json`` after a ``/continuity settings`` command that
    changed it (its bytes before are kept from the previous operation)."""
    path = run.project_dir / ".pi" / "settings.json"
    text = _read(str(path))
    before = run.kept.get(native_setup_enables_compaction.__name__)
    run.kept[native_setup_enables_compaction.__name__] = text
    if not run.operations or text is None or text == before:
        return
    op = run.operations[-1][0]
    if not (isinstance(op, CommandOp) and op.command.text.strip().startswith("/continuity settings")):
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        yield f"{path} is not JSON after the native setup"
        return
    compaction = data.get("compaction") if isinstance(data, dict) else None
    enabled = compaction.get("enabled") if isinstance(compaction, dict) else None
    if enabled is not True:
        yield f"the native setup wrote compaction.enabled {json.dumps(enabled)} (spec §12 merges true)"


def continuation_never_hidden(run: ObservedRun) -> Iterator[str]:
    for kind in ("custom_message", "custom"):
        for entry in run.entries_of(kind):
            yield from hidden_continuation_problems(entry)


def evidence_never_in_system_prompt(run: ObservedRun) -> Iterator[str]:
    """Observed per operation over the model requests in the order the model received them: the
    user messages of the requests before each synthesis request, and the Briefs committed before
    the operation (what the run kept from the last one)."""
    kept = run.kept.setdefault(
        "evidence_never_in_system_prompt", {"seen": 0, "openings": set(), "events": []}
    )
    requests = run.observation.model_requests
    for request in requests[kept["seen"] :]:
        if request.kind != "extension":
            kept["openings"].update(user_openings(request.request.messages))
            continue
        problem = system_prompt_evidence(request.request, sorted(kept["openings"]), kept["events"])
        if problem is not None:
            yield problem
    kept["seen"] = len(requests)
    commits = _implementation_commits(run)
    kept["events"] = sorted({event for entry in commits for event in brief_event_ids(str(entry["summary"]))})


def archived_brief_never_input(run: ObservedRun) -> Iterator[str]:
    for request in run.observation.model_requests:
        text = request.text
        for needle in ARCHIVED_STATUS:
            if needle in text:
                yield f"{request.kind} request #{request.index} holds an archived Brief ({needle})"
                break


def ui_in_the_vocabulary_of_the_work(run: ObservedRun) -> Iterator[str]:
    """Observed over every notification, status, widget, dialog and command output of the run."""
    observation = run.observation
    records: list[dict[str, Any]] = [
        *({"kind": "ui", "name": "notify", "message": m} for m, _kind in observation.notifications),
        *({"kind": "ui", "name": "set_status", "statusText": text} for text in observation.statuses.values()),
        *({"kind": "ui", "name": "set_widget", **widget} for widget in observation.widgets),
        *(
            {"kind": "ui", "name": str(dialog.get("method", "dialog")), **dialog}
            for dialog in observation.dialogs
        ),
        *({"kind": "ui", "name": "output", "text": text} for text in observation.command_output),
    ]
    for record in records:
        problem = vocabulary_problem(record)
        if problem is not None:
            yield problem


def brief_keys_in_the_vocabulary_of_the_work(run: ObservedRun) -> Iterator[str]:
    for entry in _implementation_commits(run):
        yield from brief_key_problems(parse_brief(str(entry["summary"])))


def _spec(function: Any, needs: tuple[str, ...], rules: tuple[str, ...] | None = None) -> ObservedInvariant:
    """The observed form of the trace invariant of the same name: its rules (or the ``rules``
    of them this form can judge) and statement, and what this form needs to see."""
    traced = INVARIANTS[function.__name__]
    assert rules is None or set(rules) <= set(traced.rules), function.__name__
    doc = traced.doc + (" " + " ".join(function.__doc__.split()) if function.__doc__ else "")
    return ObservedInvariant(function.__name__, doc, rules or traced.rules, frozenset(needs), function)


#: The observed invariants (each named after the trace invariant whose rule it checks).
OBSERVED_INVARIANTS: tuple[ObservedInvariant, ...] = (
    _spec(commit_is_valid_brief, ("entries",)),
    _spec(commit_details_correlate, ("entries",)),
    _spec(
        invalid_native_settings_commit_nothing,
        ("entries", "extension_events"),
        rules=("P29a", "P30a", "P123a", "P123b"),
    ),
    _spec(freshness_rule_once, ("entries",)),
    _spec(no_promoted_directive, ("entries",)),
    _spec(fail_closed_no_pi_summary, ("entries",)),
    _spec(mismatch_reported, ("extension_events", "ui")),
    _spec(commit_keeps_prepared_cut, ("extension_events",)),
    _spec(notification_levels, ("ui",)),
    _spec(commit_announced_once, ("ui",)),
    _spec(
        brief_records_its_compaction,
        ("extension_events", "entries"),
        rules=("P63", "P64d", "P64f", "P64g", "P65"),
    ),
    _spec(artifacts_never_input, ("entries",)),
    _spec(planted_artifacts_never_input, ("requests",)),
    _spec(continuation_only_after_threshold_commit, ("extension_events",)),
    _spec(one_continuation_per_compaction, ("extension_events",)),
    _spec(continuation_from_disk_bytes, ("extension_events",)),
    _spec(continuation_never_hidden, ("entries",)),
    _spec(native_setup_enables_compaction, ("files", "operations")),
    _spec(archive_retention, ("files",)),
    _spec(archive_requires_full_match, ("files", "entries")),
    _spec(artifacts_named_by_event, ("files",)),
    _spec(brief_effort_is_a_label, ("files", "entries")),
    _spec(synthesis_prompt_rules, ("requests",)),
    _spec(messages_prefixed, ("ui",)),
    _spec(untrusted_project_untouched, ("files",)),
    _spec(others_artifacts_untouched, ("files",)),
    _spec(evidence_never_in_system_prompt, ("requests", "entries")),
    _spec(archived_brief_never_input, ("requests",)),
    _spec(no_cleanup_or_compact_command, ("files", "entries", "operations")),
    _spec(ui_in_the_vocabulary_of_the_work, ("ui",)),
    _spec(brief_keys_in_the_vocabulary_of_the_work, ("entries",)),
)
