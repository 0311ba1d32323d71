"""Then steps: what must be observable. Every assertion message says what was seen instead."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import parsers, then

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.features.oracle import (
    AUTHORITY_BOUNDARY_SENTENCE,
    CONTINUATION_SUFFIX,
    MESSAGE_PREFIX,
    Brief,
    brief_problems,
    details_context_problems,
    freshness_rule_paragraphs,
    handoff_context,
    has_freshness_rule,
    leaf_values,
    names_directory,
    parse_brief,
    section,
    sha256_hex,
)
from pi_continuity_harness.features.steps.common import (
    briefs_in,
    continuations_since,
    labelled_numbers,
    last_mark,
    new_dialogs,
    new_extension_events,
    new_notifications,
    new_requests,
    new_session_events,
    number,
    status_output,
    text_mentions_number,
)
from pi_continuity_harness.features.world import World, project_files
from pi_continuity_harness.scenario.transcript import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX
from pi_continuity_harness.targets import ObservedRequest


# --------------------------------------------------------------------- helpers
def _status_output(world: World) -> str:
    return status_output(world)


def _settings_path(world: World) -> str:
    return str(world.observe().project_dir / CONFIG_DIR_NAME / "settings.json")


def _settings_json(world: World) -> dict[str, Any]:
    path = world.observe().project_dir / CONFIG_DIR_NAME / "settings.json"
    assert path.exists(), f"the project settings file {path} does not exist"
    value = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(value, dict), "the project settings file is not a JSON object"
    return value


def _pending(world: World) -> list[tuple[str, Brief]]:
    return briefs_in(world.session_artifacts("pending"))


def _archived(world: World) -> list[tuple[str, Brief]]:
    return briefs_in(world.session_artifacts("archive"))


def _describe_notifications(world: World) -> str:
    return "\n".join(f"  [{kind}] {message}" for message, kind in world.observe().notifications) or "  (none)"


def _without_workdir(world: World, text: str) -> str:
    """``text`` with the scenario's work directory replaced by ``$WORK``.

    The directory is named after the scenario, so the words of its name (a scenario about a
    "mismatch", an "untrusted" project) stand in every path a message shows; a pattern that
    looks for such a word must not find it there.
    """
    return text.replace(str(world.observe().project_dir.parent), "$WORK")


def _find_notification(world: World, pattern: str, *, since_mark: bool = True, paths: bool = False) -> str:
    """The first notification (since the last action, or ever) that ``pattern`` finds, searched
    without the work directory (see :func:`_without_workdir`) unless ``paths`` says the
    pattern matches a real path itself."""
    notifications = new_notifications(world) if since_mark else world.observe().notifications
    regex = re.compile(pattern, re.I | re.S)
    for message, _kind in notifications:
        if regex.search(message if paths else _without_workdir(world, message)):
            return message
    raise AssertionError(
        f"no notification matches /{pattern}/; notifications were:\n{_describe_notifications(world)}"
    )


# --------------------------------------------------------------------- settings
@then(
    parsers.re(
        r"the user was shown reserveTokens (?P<r>\d[\d,]*) and keepRecentTokens (?P<k>\d[\d,]*) "
        r"before (?:confirming|declining)"
    )
)
def _shown_preview(world: World, r: str, k: str) -> None:
    reserve, keep = number(r), number(k)
    texts = [str(d.get("title", "")) + "\n" + str(d.get("message", "")) for d in new_dialogs(world)]
    confirms = [i for i, d in enumerate(new_dialogs(world)) if d.get("method") == "confirm"]
    assert confirms, "no confirmation dialog was opened"
    shown = "\n".join(texts[: confirms[-1] + 1] + [m for m, _ in new_notifications(world)])
    assert text_mentions_number(shown, reserve) and text_mentions_number(shown, keep), (
        f"the preview did not show {reserve} and {keep}; dialogs and notifications said:\n{shown}"
    )
    # Spec §12 "preview the exact derived token values": each under its own name, so a preview
    # that shows the two tokens the wrong way round is not a preview of what will be written.
    for label, value in (("reserveTokens", reserve), ("keepRecentTokens", keep)):
        assert value in labelled_numbers(shown, label), (
            f"the preview did not show {label} {value} by its name; dialogs and notifications said:\n{shown}"
        )


@then(
    parsers.re(
        r"the project settings file sets compaction enabled true, reserveTokens (?P<r>\d+) "
        r"and keepRecentTokens (?P<k>\d+)"
    )
)
def _settings_written(world: World, r: str, k: str) -> None:
    compaction = _settings_json(world).get("compaction") or {}
    assert compaction.get("enabled") is True, f"compaction.enabled is {compaction.get('enabled')!r}"
    assert compaction.get("reserveTokens") == int(r), f"reserveTokens is {compaction.get('reserveTokens')!r}"
    assert compaction.get("keepRecentTokens") == int(k), (
        f"keepRecentTokens is {compaction.get('keepRecentTokens')!r}"
    )


@then("every unrelated project setting is unchanged")
def _unrelated_unchanged(world: World) -> None:
    before = json.loads((world.remembered.get("settings_at_start") or b"{}").decode("utf-8"))
    after = _settings_json(world)
    ours = {"enabled", "reserveTokens", "keepRecentTokens"}
    for key, value in before.items():
        if key == "compaction":
            for inner, inner_value in (value or {}).items():
                if inner not in ours:
                    assert (after.get("compaction") or {}).get(inner) == inner_value, (
                        f"compaction.{inner} changed"
                    )
        else:
            assert after.get(key) == value, (
                f"unrelated setting {key!r} changed: {value!r} -> {after.get(key)!r}"
            )


@then("no percentage was written to the project settings file")
def _no_percent(world: World) -> None:
    text = json.dumps(_settings_json(world))
    before = (world.remembered.get("settings_at_start") or b"").decode("utf-8")
    for key in re.findall(r'"([^"]*percent[^"]*)"', text, re.I):
        assert key in before, f"a percentage key {key!r} was persisted as runtime policy"


@then("a notification says the settings were saved to the project settings file and Pi must be restarted")
def _saved_notification(world: World) -> None:
    path = re.escape(_settings_path(world))
    _find_notification(
        world,
        rf"^{re.escape(MESSAGE_PREFIX)}: settings saved to {path}; restart Pi to activate them\.$",
        paths=True,
    )


@then("the project settings file is byte-for-byte unchanged")
def _settings_unchanged(world: World) -> None:
    path = world.observe().project_dir / CONFIG_DIR_NAME / "settings.json"
    now = path.read_bytes() if path.exists() else None
    assert now == world.remembered.get("settings_at_start"), "the project settings file changed"


@then("the extension config file is byte-for-byte unchanged")
def _config_unchanged(world: World) -> None:
    name = f"{CONFIG_DIR_NAME}/session-continuity.json"
    path = world.observe().project_dir / name
    now = path.read_bytes() if path.exists() else None
    assert now == world.remembered["project_at_start"].get(name), f"{path} changed"


@then("no notification says settings were saved")
def _no_saved_notification(world: World) -> None:
    saved = [m for m, _ in new_notifications(world) if "settings saved" in m]
    assert not saved, f"unexpected: {saved}"


@then(
    parsers.re(
        r"the status shows the live reserveTokens (?P<live>\d[\d,]*) and the written reserveTokens "
        r"(?P<written>\d[\d,]*) pending a restart"
    )
)
def _status_pending(world: World, live: str, written: str) -> None:
    """P96: both values shown under the reserve's name (``reserve``, ``reserveTokens``): a
    status giving the written keep-recent tokens as the reserve (and the written reserve as
    keep recent) passed a check that only asked that each number appear somewhere."""
    output = _status_output(world)
    reserves = labelled_numbers(output, "reserve") + labelled_numbers(output, "reserveTokens")
    assert number(live) in reserves, (
        f"live reserve {live} not shown as a reserve (reserves {reserves}):\n{output}"
    )
    assert number(written) in reserves, (
        f"written reserve {written} not shown as a reserve (reserves {reserves}):\n{output}"
    )
    assert re.search(r"restart required:\s*yes", output, re.I), (
        f"'Restart required: yes' not shown:\n{output}"
    )


@then(
    parsers.re(
        r"the status shows reserveTokens (?P<r>\d[\d,]*) and keepRecentTokens (?P<k>\d[\d,]*) with no restart required"
    )
)
def _status_live(world: World, r: str, k: str) -> None:
    output = _status_output(world)
    assert text_mentions_number(output, number(r)) and text_mentions_number(output, number(k)), output
    assert re.search(r"restart required:\s*no", output, re.I), f"'Restart required: no' not shown:\n{output}"


# --------------------------------------------------------------------- the hook
def _before_compacts(world: World, reason: str | None) -> list[dict[str, Any]]:
    events = new_extension_events(world, "session_before_compact")
    return [e for e in events if reason is None or e.get("reason") == reason]


@then(
    parsers.re(
        r'Pi invoked session_before_compact(?: with reason "(?P<reason>[a-z]+)")?'
        r"(?: and willRetry (?P<retry>true|false))?(?: again)?(?P<before> before answering it)?"
    )
)
def _hook_invoked(world: World, reason: str | None, retry: str | None, before: str | None) -> None:
    events = _before_compacts(world, reason)
    assert events, (
        f"session_before_compact{f' ({reason})' if reason else ''} was not invoked; extension events were: "
        f"{[str(e.get('type')) + ':' + str(e.get('reason', '')) for e in new_extension_events(world)]}"
    )
    if retry is not None:
        assert events[-1].get("willRetry") is (retry == "true"), (
            f"willRetry was {events[-1].get('willRetry')!r}"
        )
    if before:
        entries = world.observe().entries[last_mark(world).entries :]
        kinds = [
            "compaction" if e.get("type") == "compaction" else (e.get("message") or {}).get("role")
            for e in entries
            if e.get("type") in ("compaction", "message")
        ]
        assert "compaction" in kinds, f"no compaction entry after the prompt; entries were {kinds}"
        first_user = kinds.index("user") if "user" in kinds else len(kinds)
        assert kinds.index("compaction") < first_user, f"the compaction came after the prompt: {kinds}"


@then("Pi did not invoke session_before_compact")
def _hook_not_invoked(world: World) -> None:
    assert not world.observe().events("session_before_compact"), "session_before_compact was invoked"


@then(
    parsers.re(
        r"the hook was given the settings enabled (?P<enabled>true|false), reserveTokens (?P<r>\d+) "
        r"and keepRecentTokens (?P<k>\d+)"
    )
)
def _hook_settings(world: World, enabled: str, r: str, k: str) -> None:
    event = _before_compacts(world, None)[-1]
    settings = (event.get("preparation") or {}).get("settings") or {}
    assert settings == {"enabled": enabled == "true", "reserveTokens": int(r), "keepRecentTokens": int(k)}, (
        settings
    )


@then("a notification says native compaction reached its threshold and a durable Brief is being prepared")
def _preparing(world: World) -> None:
    _find_notification(
        world,
        rf"^{re.escape(MESSAGE_PREFIX)}: native compaction reached its threshold; preparing durable Brief\.$",
    )


# --------------------------------------------------------------------- compaction entries
@then("no compaction entry was persisted")
def _no_compaction(world: World) -> None:
    assert not world.compactions(), f"{len(world.compactions())} compaction entries were persisted"


@then("no compaction was started")
def _no_compaction_started(world: World) -> None:
    """Not even one that persisted nothing: a compaction Pi started and then cancelled (its
    hook refused it, or it had nothing to summarise) still started (``compaction_start``)."""
    started = [e for e in world.observe().session_events if e.get("type") == "compaction_start"]
    assert not started, f"{len(started)} compaction(s) started: {[e.get('reason') for e in started]}"


@then("only one compaction entry was persisted")
def _one_compaction(world: World) -> None:
    assert len(world.compactions()) == 1, f"{len(world.compactions())} compaction entries were persisted"


@then("native compaction was cancelled")
def _cancelled(world: World) -> None:
    """Pi ends a cancelled compaction, automatic or manual, with ``compaction_end {aborted: true}``."""
    ends = new_session_events(world, "compaction_end")
    assert any(e.get("aborted") for e in ends), f"no cancelled compaction; compaction_end events: {ends}"


@then("Pi made no summarization request of its own")
def _no_pi_summary(world: World) -> None:
    assert not world.observe().requests("summary"), "Pi's own summarizer was called"


@then("Pi never persisted a summary of its own")
def _never_pi_summary(world: World) -> None:
    own = [e for e in world.compactions() if not e.get("fromHook")]
    assert not own, f"{len(own)} compaction entries were generated by Pi"


@then("the persisted compaction entry comes from an extension")
def _from_extension(world: World) -> None:
    assert world.latest_compaction().get("fromHook") is True, "the compaction entry was not from an extension"


@then("the persisted compaction entry was generated by Pi")
def _generated_by_pi(world: World) -> None:
    assert world.latest_compaction().get("fromHook") is False, "the compaction entry was not generated by Pi"


@then(
    parsers.re(
        r"(?:its summary|the (?:persisted )?compaction summary) is a valid schema-v2 Brief"
        r'(?: for this session)? with handoffReason "(?P<reason>[a-z-]+)"'
    )
)
def _summary_valid(world: World, reason: str) -> None:
    summary = world.latest_compaction().get("summary", "")
    problems = brief_problems(summary, status="pending", session_id=world.observe().session_id)
    assert not problems, "the summary is not a valid pending Brief of this session:\n" + "\n".join(problems)
    brief = parse_brief(summary)
    assert brief is not None and brief.frontmatter.get("handoffReason") == reason, (
        f"handoffReason is {brief.frontmatter.get('handoffReason') if brief else None!r}, expected {reason!r}"
    )


@then("the persisted compaction summary is not a Continuity Brief")
def _summary_not_brief(world: World) -> None:
    assert parse_brief(world.latest_compaction().get("summary", "")) is None


@then("its details carry the continuityEventId and artifactPath of that Brief and the SHA-256 of the summary")
def _details_correlate(world: World) -> None:
    entry = world.latest_compaction()
    details = entry.get("details") or {}
    brief = world.latest_summary_brief()
    assert details.get("continuityEventId") == brief.event_id, details
    path = str(details.get("artifactPath", ""))
    assert path.startswith(str(world.artifact_dir())) and path.endswith(f"{brief.event_id}.md"), (
        f"artifactPath {path!r} is not the resolved pending file of event {brief.event_id}"
    )
    assert sha256_hex(entry["summary"]) in leaf_values(details), "no detail holds the SHA-256 of the summary"


@then("its details carry the session id, the handoff reason and the effective native settings")
def _details_context(world: World) -> None:
    """P69a-c: the session id, the handoff reason and the effective native settings are among
    the details' values, each filed under its own name if under any
    (:func:`~pi_continuity_harness.features.oracle.details_context_problems`)."""
    details = world.latest_compaction().get("details") or {}
    reason = world.latest_summary_brief().frontmatter.get("handoffReason")
    expected = handoff_context(world.observe().session_id, reason, world.draft.native())
    problems = details_context_problems(details, expected)
    assert not problems, f"{'; '.join(problems)}: {details}"


@then("it keeps the firstKeptEntryId and tokensBefore that Pi prepared")
def _kept_preparation(world: World) -> None:
    entry = world.latest_compaction()
    preparation = (_before_compacts(world, None)[-1].get("preparation")) or {}
    assert entry.get("firstKeptEntryId") == preparation.get("firstKeptEntryId"), (entry, preparation)
    assert entry.get("tokensBefore") == preparation.get("tokensBefore"), (entry, preparation)


def _first_difference(disk: str, summary: str) -> str:
    """Where ``summary`` first departs from ``disk``, by line."""
    for line, (a, b) in enumerate(zip(disk.splitlines(), summary.splitlines(), strict=False), 1):
        if a != b:
            return f"body line {line}: disk {a!r}, summary {b!r}"
    return f"{len(disk.splitlines())} body lines on disk, {len(summary.splitlines())} in the summary"


@then("the summary is the Brief the extension wrote on disk")
def _summary_is_disk_brief(world: World) -> None:
    """P2: the summary is the re-read Brief, byte for byte: a pending Brief of the event has the
    summary's body and frontmatter; an archived one its body (what archival may change in the
    frontmatter is the next step's: "the archived Brief on disk is the summary ..."). Whether it
    was archived is not asked here (a refused commit keeps it pending)."""
    brief = world.latest_summary_brief()
    on_disk = [b for _, b in [*_pending(world), *_archived(world)] if b.event_id == brief.event_id]
    assert on_disk, f"no Brief of event {brief.event_id} on disk"
    same = [
        b
        for b in on_disk
        if b.body == brief.body and (b.status == "archived" or b.frontmatter == brief.frontmatter)
    ]
    if same:
        return
    disk = on_disk[0]
    where = _first_difference(disk.body, brief.body) if disk.body != brief.body else "another frontmatter"
    raise AssertionError(f"the summary is not the Brief on disk ({disk.status}): {where}")


@then("the archived Brief on disk is the summary with only its status and updatedAt changed")
def _archived_matches(world: World) -> None:
    brief = world.latest_summary_brief()
    matches = [b for _, b in _archived(world) if b.event_id == brief.event_id]
    assert len(matches) == 1, f"{len(matches)} archived Briefs for event {brief.event_id}"
    archived = matches[0]
    assert archived.body == brief.body, "the archived body differs from the summary body"
    changed = {
        k
        for k in set(archived.frontmatter) | set(brief.frontmatter)
        if archived.frontmatter.get(k) != brief.frontmatter.get(k)
    }
    assert changed <= {"status", "updatedAt"}, (
        f"archival changed more than status/updatedAt: {sorted(changed)}"
    )
    assert archived.status == "archived", archived.status


@then("the Brief was created before the compaction entry was appended")
def _brief_first(world: World) -> None:
    created = str(world.latest_summary_brief().frontmatter.get("createdAt"))
    appended = str(world.latest_compaction().get("timestamp"))
    assert created <= appended, f"Brief createdAt {created} is after the compaction entry {appended}"


@then("the next model request carries the summary exactly inside Pi's compaction wrapper")
def _wrapper(world: World) -> None:
    wrapped = COMPACTION_SUMMARY_PREFIX + world.latest_compaction()["summary"] + COMPACTION_SUMMARY_SUFFIX
    after = [r for r in new_requests(world, "agent") if wrapped in r.text]
    assert after, "no later model request carried the summary exactly inside Pi's wrapper"


@then("the two compaction summaries are Briefs of this session with different eventIds")
def _summaries_differ(world: World) -> None:
    """Pi finds the entry of a ``session_compact`` by its summary (the first equal one), so each
    Brief must be unique: two valid Briefs of this session, two eventIds (spec §8; pi-host §9)."""
    summaries = [str(e.get("summary", "")) for e in world.compactions()]
    assert len(summaries) >= 2, f"{len(summaries)} compaction entries, expected two"
    session_id = world.observe().session_id
    for summary in summaries[-2:]:
        problems = brief_problems(summary, status="pending", session_id=session_id)
        assert not problems, (
            "a compaction summary is not a valid pending Brief of this session:\n" + "\n".join(problems)
        )
    first, second = (parse_brief(s) for s in summaries[-2:])
    assert first is not None and second is not None
    assert first.event_id != second.event_id, f"both Briefs carry eventId {first.event_id}"


@then("each session_compact event was given the entry with its own summary")
def _own_entries(world: World) -> None:
    ids = [e["id"] for e in world.compactions()]
    seen = [(e.get("compactionEntry") or {}).get("id") for e in world.observe().events("session_compact")]
    assert seen == ids, f"session_compact was given entries {seen}, the session holds {ids}"


# --------------------------------------------------------------------- artifacts
@then(parsers.re(r"exactly one pending Continuity Brief exists for this session"))
def _one_pending(world: World) -> None:
    pending = _pending(world)
    assert len(pending) == 1, f"{len(pending)} pending Briefs: {[n for n, _ in pending]}"
    world.remembered["it"] = pending[0]


@then("no pending Continuity Brief exists for this session")
def _no_pending(world: World) -> None:
    assert not _pending(world), f"pending Briefs remain: {[n for n, _ in _pending(world)]}"


@then("no Continuity Brief was written")
def _no_brief_written(world: World) -> None:
    assert not _pending(world) and not _archived(world), "a Continuity Brief was written"


@then(
    parsers.re(
        r'it is a valid schema-v2 Brief with status "(?P<status>[a-z]+)" and handoffReason "(?P<reason>[a-z-]+)"'
    )
)
def _it_valid(world: World, status: str, reason: str) -> None:
    _name, brief = world.remembered["it"]
    problems = brief_problems(brief.text, status=status, session_id=world.observe().session_id)
    assert not problems, "\n".join(problems)
    assert brief.frontmatter.get("handoffReason") == reason, brief.frontmatter.get("handoffReason")


@then(
    parsers.re(
        r"it records reserveTokens (?P<r>\d+) and keepRecentTokens (?P<k>\d+) and the active context window"
    )
)
def _it_records_policy(world: World, r: str, k: str) -> None:
    _name, brief = world.remembered["it"]
    fm = brief.frontmatter
    assert fm.get("reserveTokens") == int(r) and fm.get("keepRecentTokens") == int(k), fm
    assert fm.get("contextWindow") == world.current_window(), fm


@then("a notification says the Brief was saved to its resolved file path")
def _saved_to(world: World) -> None:
    name, _brief = world.remembered["it"]
    message = _find_notification(
        world, rf"^{re.escape(MESSAGE_PREFIX)}: Continuity Brief saved to (?P<path>/.+)\.$", paths=True
    )
    assert message.endswith(f"/pending/{name}."), f"the notification names another file: {message!r}"


@then(parsers.re(r'the Brief is archived in this session\'s archive directory with status "archived"'))
def _is_archived(world: World) -> None:
    brief = world.latest_summary_brief()
    archived = [b for _, b in _archived(world) if b.event_id == brief.event_id]
    assert archived and archived[0].status == "archived", (
        f"no archived Brief for event {brief.event_id}; archive holds {[n for n, _ in _archived(world)]}"
    )


@then("no Brief was archived")
def _none_archived(world: World) -> None:
    assert not _archived(world), f"archived: {[n for n, _ in _archived(world)]}"


@then("a notification says native compaction committed with the disk-backed Brief at its archive path")
def _committed(world: World) -> None:
    message = _find_notification(
        world,
        rf"^{re.escape(MESSAGE_PREFIX)}: native compaction committed with disk-backed Brief (?P<p>/.+)\.$",
        paths=True,
    )
    event_id = world.latest_summary_brief().event_id
    assert f"{event_id}.md" in message, f"the committed message names another Brief: {message!r}"
    # The archive path, as the step says: naming the pending file (gone once it is archived) also
    # ends in <eventId>.md. Found by the fourth independent mutant round
    # (commit_notice_names_pending_path).
    match = re.search(r"disk-backed Brief (/.+)\.$", message)  # a path may hold spaces
    assert match is not None, message
    named = world.observe().on_disk(match.group(1))
    assert named.parent.name == "archive" and named.is_file(), (
        f"the committed message names {match.group(1)}, which is not the archived Brief"
    )


@then("a notification reports that the compaction did not match the prepared Brief")
def _mismatch_reported(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*(match|incompatib|replaced|another extension)")


@then(
    "a failed postmortem artifact exists for this session recording the phase and that compaction was cancelled"
)
def _failed_postmortem(world: World) -> None:
    failed = world.session_artifacts("failed")
    assert failed, "no failed artifact was written"
    text = next(iter(failed.values())).decode("utf-8")
    assert re.search(r"phase", text, re.I) and re.search(r"cancel", text, re.I), text[:500]


@then("the compaction summary is a new pending Brief, not the failed postmortem")
def _not_failed(world: World) -> None:
    summary = world.latest_compaction()["summary"]
    assert not brief_problems(summary, status="pending"), brief_problems(summary, status="pending")
    for data in world.session_artifacts("failed").values():
        assert data.decode("utf-8") != summary, "the failed postmortem became the summary"


@then("the compaction summary is a new Brief of this session")
def _new_brief(world: World) -> None:
    summary = world.latest_compaction()["summary"]
    problems = brief_problems(summary, status="pending", session_id=world.observe().session_id)
    assert not problems, "\n".join(problems)
    planted = world.remembered.get("planted", {})
    assert all(summary != text for text in planted.values()), "a planted artifact became the summary"


@then(parsers.re(r'no model request contains "(?P<a>[^"]+)" or "(?P<b>[^"]+)"'))
def _no_request_contains(world: World, a: str, b: str) -> None:
    for request in world.observe().model_requests:
        assert a not in request.text and b not in request.text, (
            f"{request.kind} request #{request.index} leaked"
        )


@then("the planted artifacts are unchanged")
def _planted_unchanged(world: World) -> None:
    project = world.observe().project_dir
    for path, text in world.remembered.get("planted", {}).items():
        assert (project / path).is_file(), f"{path} was removed"
        assert (project / path).read_text(encoding="utf-8") == text, f"{path} changed"


@then("no model request after the failure contains the failed postmortem's text")
def _failed_not_input(world: World) -> None:
    failed = world.session_artifacts("failed")
    assert failed, "no failed artifact exists"
    for data in failed.values():
        brief = parse_brief(data.decode("utf-8"))
        marker = brief.event_id if brief is not None else data.decode("utf-8")[-200:]
        assert marker
        for request in world.observe().model_requests:
            assert marker not in request.text, (
                f"{request.kind} request #{request.index} carries the failed artifact"
            )


@then("the session's archive directory holds exactly 10 Briefs")
def _ten_archived(world: World) -> None:
    assert len(_archived(world)) == 10, f"{len(_archived(world))} archived Briefs"


@then("they are the 10 newest of the 12 compaction summaries")
def _newest_ten(world: World) -> None:
    ids = []
    for entry in world.compactions():
        brief = parse_brief(entry["summary"])
        assert brief is not None
        ids.append(brief.event_id)
    archived = sorted(b.event_id or "" for _, b in _archived(world))
    assert archived == sorted(i or "" for i in ids[-10:]), "the archive does not hold the newest 10"


# --------------------------------------------------------------------- continuation and messages
@then("no continuation was submitted")
def _no_continuation(world: World) -> None:
    found = continuations_since(world, last_mark(world).entries)
    assert not found, f"{len(found)} continuation(s) were submitted"
    for request in new_requests(world, "agent"):
        assert CONTINUATION_SUFFIX not in request.text, (
            f"agent request #{request.index} carries a continuation"
        )


@then("exactly one continuation was submitted")
def _one_continuation(world: World) -> None:
    found = continuations_since(world, last_mark(world).entries)
    assert len(found) == 1, f"{len(found)} continuations were submitted"
    world.remembered["continuation"] = found[0]


@then("the continuation is the compaction summary followed by the fixed continuation suffix")
def _continuation_exact(world: World) -> None:
    text = world.remembered["continuation"]
    summary = world.latest_compaction()["summary"]
    assert text.startswith(summary), "the continuation does not start with the exact summary bytes"
    assert text.endswith(CONTINUATION_SUFFIX), "the continuation does not end with the fixed suffix"
    middle = text[len(summary) : len(text) - len(CONTINUATION_SUFFIX)]
    assert middle.strip() == "", f"unexpected text between the Brief and the suffix: {middle!r}"


@then("the continuation reached the model after the compaction, in the same settled prompt")
def _continuation_delivered(world: World) -> None:
    text = world.remembered["continuation"]
    carrying = [r for r in new_requests(world, "agent") if r.last_user_text() == text]
    assert carrying, "no model request ended with the continuation"
    assert len(new_session_events(world, "agent_settled")) == 1, "the prompt settled more than once"


@then("the continuation reached the model only after the interrupted run's final reply")
def _after_final_reply(world: World) -> None:
    text = world.remembered["continuation"]
    final = world.remembered["run_final_text"]
    carrying = [r for r in new_requests(world, "agent") if r.last_user_text() == text]
    assert carrying, "no model request ended with the continuation"
    assert final in carrying[0].text, "the continuation reached the model before the run's final reply"


@then("a notification says the continuation was submitted from the saved Brief")
def _continuation_notified(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}: continuation submitted from saved Brief\.$")


@then("Pi retried the request exactly once, with the Brief as its summary")
def _retried_once(world: World) -> None:
    agent = new_requests(world, "agent")
    assert len(agent) == 2, f"{len(agent)} agent requests (expected the failed one and one retry)"
    summary = str(world.latest_compaction().get("summary", ""))
    problems = brief_problems(summary, status="pending", session_id=world.observe().session_id)
    assert not problems, "the compaction summary is not a valid pending Brief of this session:\n" + "\n".join(
        problems
    )
    wrapped = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX
    assert wrapped in agent[1].text, "the retry did not carry the Brief as its summary"


@then(parsers.re(r"no message was submitted to the model after the (?:checkpoint|reload|restart|resume)"))
def _no_agent_request(world: World) -> None:
    assert not new_requests(world, "agent"), f"{len(new_requests(world, 'agent'))} agent requests were made"


@then("the model request for that prompt does not contain the stale Brief")
def _stale_not_in_request(world: World) -> None:
    checkpoint = world.remembered.get("checkpoint") or {}
    assert checkpoint, "no checkpoint Brief was remembered"
    requests = new_requests(world, "agent")
    assert requests, "the prompt made no model request"
    for _name, brief in briefs_in(checkpoint):
        assert brief.event_id and brief.event_id not in requests[-1].text, "the stale Brief reached the model"


@then("no new run started after the compaction")
def _no_new_run(world: World) -> None:
    events = new_session_events(world)
    ends = [i for i, e in enumerate(events) if e.get("type") == "compaction_end"]
    assert ends, "no compaction ended"
    later = [e for e in events[ends[-1] + 1 :] if e.get("type") == "agent_start"]
    assert not later, "a run started after the compaction"


@then("no extension error was reported")
def _no_extension_error(world: World) -> None:
    errors = new_session_events(world, "extension_error")
    assert not errors, f"extension errors: {errors}"


@then("exactly one synthesis request was made")
def _one_synthesis(world: World) -> None:
    count = len(new_requests(world, "extension"))
    assert count == 1, f"{count} synthesis requests were made"


# --------------------------------------------------------------------- notifications
@then("a notification says Pi Session Continuity failed and native compaction was cancelled")
def _failed_notification(world: World) -> None:
    """Spec §11's message, exact and on one line (P90e): a reason with a line break in it (a
    config field's name can hold one) is still one sentence."""
    _find_notification(
        world, rf"^{re.escape(MESSAGE_PREFIX)} failed: [^\n]+\. Native compaction was cancelled\.$"
    )


@then("a notification refuses: native compaction settings are invalid for the current model")
def _refused(world: World) -> None:
    message = _find_notification(
        world,
        rf"^{re.escape(MESSAGE_PREFIX)} refused: native compaction settings are invalid for the current model\. "
        r"Run /continuity settings and restart Pi\.",
        since_mark=False,
    )
    world.remembered["refusal"] = message


@then(
    parsers.re(
        r"that notification shows enabled, reserveTokens (?P<r>\d+), keepRecentTokens (?P<k>\d+), "
        r"contextWindow (?P<w>\d+) and the project settings path"
    )
)
def _refusal_details(world: World, r: str, k: str, w: str) -> None:
    """Spec §11 names the values it shows (``reserveTokens``, ``keepRecentTokens``, active
    ``contextWindow``): each number must stand by its own name, and every value the message
    gives a name must be that name's value, so swapped or stale values are caught."""
    message = world.remembered["refusal"]
    assert "enabled" in message, message
    for value in (r, k, w):
        assert text_mentions_number(message, int(value)), f"{value} missing from: {message}"
    for label, value in (("reserveTokens", r), ("keepRecentTokens", k), ("contextWindow", w)):
        shown = labelled_numbers(message, label)
        assert shown, f"{label} is not shown with a value in: {message}"
        wrong = sorted({n for n in shown if n != int(value)})
        assert not wrong, f"{label} is shown as {wrong}, expected {value}, in: {message}"
    assert _settings_path(world) in message, f"the settings path is missing from: {message}"


@then("a notification refuses because native auto-compaction is disabled")
def _refused_disabled(world: World) -> None:
    """A refusal about native compaction that says so: in words, or with the ``enabled: false``
    that §11 requires invalid native settings to show."""
    _find_notification(
        world, rf"^{re.escape(MESSAGE_PREFIX)} refused: native .*(disabled|enabled: false)", since_mark=False
    )


@then("a notification says a stale pending Continuity Brief was found for this session and left inert")
def _stale_notice(world: World) -> None:
    _find_notification(world, r"stale pending Continuity Brief found for this session; leaving it inert")


@then(parsers.re(r'a notification names the extension config file and the field "(?P<field>\w+)"'))
def _config_error(world: World, field: str) -> None:
    path = str(world.observe().project_dir / CONFIG_DIR_NAME / "session-continuity.json")
    message = _find_notification(world, re.escape(path), since_mark=False, paths=True)
    assert field in _without_workdir(world, message), f"the field {field!r} is not named: {message!r}"


@then("a notification says the project is not trusted")
def _untrusted_notice(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*trust", since_mark=False)


@then("a notification refuses the checkpoint because a Brief is already being prepared")
def _single_flight_notice(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*already", since_mark=False)


@then("no notification announced a second compaction")
def _one_announcement(world: World) -> None:
    announcements = [m for m, _ in world.observe().notifications if "committed with disk-backed Brief" in m]
    assert len(announcements) == 1, f"{len(announcements)} compaction announcements"


@then("the footer status no longer shows an effective trigger percentage")
def _footer_no_percent(world: World) -> None:
    statuses = world.observe().statuses
    assert not any(re.search(r"@ ~\d", text) for text in statuses.values()), f"footer statuses are {statuses}"


@then(parsers.re(r'the footer status reads "(?P<text>[^"]+)"'))
def _footer(world: World, text: str) -> None:
    statuses = world.observe().statuses
    assert text in statuses.values(), f"footer statuses are {statuses}"


# --------------------------------------------------------------------- status output
@then("the status output names the product and says it is armed")
def _status_armed(world: World) -> None:
    output = _status_output(world)
    assert MESSAGE_PREFIX in output and re.search(r"status:\s*armed", output, re.I), output


@then(
    parsers.re(
        r"the status output shows the model window (?P<w>[\d,]+), reserve (?P<r>[\d,]+), effective trigger "
        r"(?P<t>[\d,]+) at approximately (?P<tp>[\d.]+)% and keep recent (?P<k>[\d,]+) at approximately (?P<kp>[\d.]+)%"
    )
)
def _status_numbers(world: World, w: str, r: str, t: str, tp: str, k: str, kp: str) -> None:
    output = _status_output(world)
    for value in (w, r, t, k):
        assert text_mentions_number(output, number(value)), f"{value} missing from the status:\n{output}"
    for percent in (tp, kp):
        assert f"approximately {percent}%" in output, f"'approximately {percent}%' missing from:\n{output}"


@then(
    "the status output shows the synthesis model and effort, the project settings path "
    "and whether a restart is required"
)
def _status_synthesis(world: World) -> None:
    output = _status_output(world)
    assert "inherit" in output or world.draft.active_model()["id"] in output, f"no synthesis model:\n{output}"
    assert "medium" in output, f"no synthesis effort:\n{output}"
    assert _settings_path(world) in output, f"no settings path:\n{output}"
    assert re.search(r"restart required:\s*(yes|no)", output, re.I), f"no restart state:\n{output}"


@then("the status output shows the artifact directory")
def _status_artifact_dir(world: World) -> None:
    output = _status_output(world)
    # The directory itself, not a file beside it (``session-continuity.json`` shares its prefix).
    assert names_directory(output, str(world.artifact_dir())), f"no artifact directory:\n{output}"


@then("the status output names the path of the checkpoint Brief")
def _status_checkpoint_path(world: World) -> None:
    output = _status_output(world)
    names = list((world.remembered.get("checkpoint") or {}).keys())
    paths = [str(world.artifact_dir() / name) for name in names]
    assert paths and any(path in output for path in paths), f"no checkpoint path ({paths}):\n{output}"


# --------------------------------------------------------------------- untrusted, UI
@then("no file was written in the project")
def _no_project_writes(world: World) -> None:
    """Nothing in the project differs from what the scenario laid out before Pi started: no new
    file and no changed one (the project settings and the extension config included)."""
    before: dict[str, bytes] = world.remembered.get("project_at_start") or {}
    now = project_files(world.observe().project_dir)
    new = sorted(set(now) - set(before))
    changed = sorted(name for name in set(now) & set(before) if now[name] != before[name])
    removed = sorted(set(before) - set(now))
    assert not (new or changed or removed), (
        f"the project was written: new {new or 'none'}, changed {changed or 'none'}, removed {removed or 'none'}"
    )


@then("the extension did not read the extension config file")
def _config_not_read(world: World) -> None:
    reads = [
        e
        for e in world.observe().fs_events
        if e.get("op") == "read"
        and str(e.get("path", "")).endswith(f"{CONFIG_DIR_NAME}/session-continuity.json")
    ]
    assert not reads, f"the untrusted config was read: {reads}"


@then("no dialog was opened")
def _no_dialog(world: World) -> None:
    assert not world.observe().dialogs, f"dialogs were opened: {world.observe().dialogs}"


# --------------------------------------------------------------------- freshness and authority
def _synthesis_requests(world: World) -> list[ObservedRequest]:
    return world.observe().requests("extension")


@then("the Brief's Recovery Instructions state the event-freshness rule exactly once")
def _freshness_once(world: World) -> None:
    body = world.latest_summary_brief().body
    paragraphs = freshness_rule_paragraphs(body)
    assert len(paragraphs) == 1, (
        f"{len(paragraphs)} statements of the freshness rule in:\n{section(body, '## Recovery Instructions')}"
    )


@then("the synthesis request stated the event-freshness rule and the authority-boundary rule")
def _synthesis_rules(world: World) -> None:
    requests = _synthesis_requests(world)
    assert requests, "no synthesis request was made"
    text = requests[-1].text
    assert AUTHORITY_BOUNDARY_SENTENCE in text, (
        "the authority-boundary rule is missing from the synthesis request"
    )
    assert has_freshness_rule(text), "the event-freshness rule is missing from the synthesis request"


@then("the synthesis request was phrased as the state of the work")
def _state_of_the_work(world: World) -> None:
    text = _synthesis_requests(world)[-1].text
    assert "state of the work" in text, "the synthesis request does not speak of the state of the work"
    for word in ("loop", "campaign", "episode"):
        assert f"state of the {word}" not in text, f"the synthesis request speaks of the state of the {word}"


@then("the second Brief has a different eventId and a later createdAt than the first")
def _second_newer(world: World) -> None:
    briefs = [parse_brief(e["summary"]) for e in world.compactions()]
    assert len(briefs) >= 2 and all(briefs), "two Briefs were not persisted"
    first, second = briefs[-2], briefs[-1]
    assert first is not None and second is not None
    assert first.event_id != second.event_id, "the eventIds are equal"
    assert str(second.frontmatter["createdAt"]) > str(first.frontmatter["createdAt"]), (
        "createdAt did not advance"
    )


@then("the second synthesis request was given the first Brief only as transcript evidence")
def _first_as_evidence(world: World) -> None:
    first = parse_brief(world.compactions()[-2]["summary"])
    assert first is not None and first.event_id
    request = _synthesis_requests(world)[-1]
    assert first.event_id not in (request.request.system_prompt or ""), (
        "the first Brief is in the system prompt"
    )
    assert first.event_id in request.text, "the second synthesis did not see the first Brief at all"
