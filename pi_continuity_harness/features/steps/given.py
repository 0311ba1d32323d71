"""Given steps: the machine, the project, the model's behaviour, the faults.

Steps that only *describe* the machine must come before anything happens; steps that
plant files in a live session or do work start Pi.
"""

from __future__ import annotations

import json

from pytest_bdd import given, parsers

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.features.collect import checks_arguments
from pi_continuity_harness.features.steps.common import briefs_in, json_argument, number
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import HttpError, SynthesisReply
from pi_continuity_harness.scenario.operations import CommandOp, EditFileOp

N = r"(?P<n>\d[\d,]*)"


@given(parsers.re(rf"the active model has a context window of {N} tokens"))
def _active_window(world: World, n: str) -> None:
    world.require_setup("the active model's window").set_active_window(number(n))


@given(parsers.re(rf'another model "(?P<model_id>[^"]+)" has a context window of {N} tokens'))
def _another_model(world: World, model_id: str, n: str) -> None:
    world.require_setup("another model").add_model(model_id, number(n))


@given(parsers.re(r"the project settings file holds unrelated settings:"))
@checks_arguments(json_argument("docstring"))
def _unrelated_settings(world: World, docstring: str) -> None:
    world.require_setup("project settings").set_project_settings(json.loads(docstring))


@given(
    parsers.re(r"the native settings are reserveTokens (?P<r>\d[\d,]*) and keepRecentTokens (?P<k>\d[\d,]*)")
)
def _native_settings(world: World, r: str, k: str) -> None:
    world.require_setup("native settings").set_native(
        enabled=True, reserveTokens=number(r), keepRecentTokens=number(k)
    )


@given("native compaction is disabled in the project settings")
def _native_disabled(world: World) -> None:
    world.require_setup("native settings").set_native(enabled=False)


@given("the native settings are invalid for the active model")
def _native_invalid(world: World) -> None:
    draft = world.require_setup("native settings")
    draft.set_native(reserveTokens=int(draft.active_model()["context_window"]))


@given(parsers.re(r"the extension config file holds (?P<value>\{.*\})"))
@checks_arguments(json_argument("value"))
def _extension_config(world: World, value: str) -> None:
    world.require_setup("extension config").set_file(
        f"{CONFIG_DIR_NAME}/session-continuity.json", json_value=json.loads(value)
    )


@given(parsers.re(r'the extension config file holds the text "(?P<text>(?:[^"\\]|\\.)*)"'))
def _extension_config_text(world: World, text: str) -> None:
    """An extension config file that is exactly ``text`` (``\\"`` for a quote): one that is no
    JSON object at all."""
    world.require_setup("extension config").set_file(
        f"{CONFIG_DIR_NAME}/session-continuity.json", text=text.replace('\\"', '"')
    )


@given("the project is not trusted")
def _untrusted(world: World) -> None:
    """defaultProjectTrust never, and a project settings file (which makes trust matter).

    Pi ignores project settings without trust, so the native policy moves to the global
    (agent) settings, which apply regardless.
    """
    draft = world.require_setup("trust")
    draft.data["trust"] = "never"
    project = draft.project_settings or {}
    compaction = project.pop("compaction", None)
    if compaction:
        draft.data["settings"]["global"]["compaction"] = compaction
    draft.set_project_settings(project)


@given("Pi runs without a UI")
def _print_mode(world: World) -> None:
    world.require_setup("mode").data["mode"] = "print"


#: What another extension's ``session_before_compact`` handler does -> the scenario's competitor.
_COMPETITORS = {
    "returns its own compaction": "own_compaction",
    "returns the saved Brief with its own details": "reissue_brief",
    "returns an empty result": "empty",
    "cancels every compaction": "cancel",
    "aborts every compaction": "abort",
    "throws an error": "throw",
}


@given(parsers.re(rf"another extension loaded after it (?P<what>{'|'.join(_COMPETITORS)})"))
def _competitor(world: World, what: str) -> None:
    world.require_setup("another extension").data["extensions"].append({"competitor": _COMPETITORS[what]})


@given(
    parsers.re(
        r"another extension loaded after it returns the saved Brief with the details that describe it "
        r"but another (?P<field>continuityEventId|artifactPath|sha256|sessionId)"
    )
)
def _competitor_one_detail_wrong(world: World, field: str) -> None:
    """``reissue_brief_but_<field>`` (``scenario/competitors.py``): every detail but one right."""
    world.require_setup("another extension").data["extensions"].append(
        {"competitor": f"reissue_brief_but_{field}"}
    )


@given("a file sits where the artifact directory should be")
def _artifact_dir_is_a_file(world: World) -> None:
    world.require_setup("artifact directory").set_file(
        f"{CONFIG_DIR_NAME}/session-continuity", text="this file occupies the artifact directory path\n"
    )


# --------------------------------------------------------------------- the synthesis model
@given(parsers.re(r"the synthesis model fails with an HTTP 500 error(?: (?P<times>\d+) times)?"))
def _synthesis_error(world: World, times: str | None) -> None:
    error = HttpError(status=500, message="Internal server error", type="server_error")
    for _ in range(int(times or 1)):
        world.script("extension", SynthesisReply(kind="error", error=error))


@given("the synthesis model fails mid-stream after streaming the whole Brief")
def _synthesis_error_after_body(world: World) -> None:
    """P120b: a whole valid Brief streams, then the provider sends an SSE error. pi-ai keeps the
    text and ends the reply ``stopReason: "error"`` (``openai-completions.js:480-500``): a failed
    synthesis with a Brief's text in it, which must not be taken as the Brief (spec §3/§14)."""
    world.script(
        "extension", SynthesisReply(kind="error_after_body", error_message="upstream connection reset")
    )


@given("the synthesis model returns an empty Brief")
def _synthesis_empty(world: World) -> None:
    world.script("extension", SynthesisReply(kind="empty"))


@given("the synthesis output is starved by its reasoning budget")
def _synthesis_starved(world: World) -> None:
    world.script("extension", SynthesisReply(kind="reasoning_only"))


@given("the synthesis model stops at its output limit")
def _synthesis_length(world: World) -> None:
    world.script("extension", SynthesisReply(kind="length"))


@given(parsers.re(r'the synthesis model leaves out the heading "(?P<heading>[^"]+)"'))
def _synthesis_missing_heading(world: World, heading: str) -> None:
    world.script("extension", SynthesisReply(kind="missing_heading", heading=heading))


@given("the synthesis model promotes a directive to an instruction")
def _synthesis_directive(world: World) -> None:
    world.script("extension", SynthesisReply(kind="unquoted_directive"))


@given(parsers.re(r'the user runs "(?P<text>/[^"]+)" while the next Brief is being synthesized'))
def _command_during_synthesis(world: World, text: str) -> None:
    op = CommandOp.model_validate({"command": text})
    world.script("extension", SynthesisReply(during=(op,)))


@given("the user aborts while the next Brief is being synthesized")
def _abort_during_synthesis(world: World) -> None:
    world.script("extension", SynthesisReply(kind="abort"))


# --------------------------------------------------------------------- filesystem faults
def _add_fault(world: World, section: str, rule: dict[str, object]) -> None:
    world.require_setup("a fault").data["faults"][section].append(rule)


@given("writing the pending Brief fails")
def _pending_write_fails(world: World) -> None:
    _add_fault(world, "fs", {"op": "write", "path": "$PROJECT/*/pending/*", "times": 0, "errno": "ENOSPC"})


@given("writing the pending Brief raises an unexpected internal error")
def _pending_write_raises(world: World) -> None:
    """Not an ``OSError`` (``effect: unexpected`` raises a ``RuntimeError``): an error the
    implementation's pipeline did not anticipate (spec §3/§5)."""
    _add_fault(
        world, "fs", {"op": "write", "path": "$PROJECT/*/pending/*", "times": 0, "effect": "unexpected"}
    )


@given("writing the failed postmortem fails")
def _failed_write_fails(world: World) -> None:
    _add_fault(world, "fs", {"op": "write", "path": "$PROJECT/*/failed/*", "times": 0, "errno": "ENOSPC"})


@given("the pending Brief is corrupted before it is re-read")
def _pending_corrupted_on_reread(world: World) -> None:
    _add_fault(world, "fs", {"op": "read", "path": "$PROJECT/*/pending/*.md", "effect": "corrupt"})


@given("the pending Brief is altered on disk right after Pi appends the compaction entry")
def _pending_tampered(world: World) -> None:
    _add_fault(
        world,
        "tamper",
        {"after": {"kind": "entry", "name": "compaction"}, "path": "$PROJECT/*/pending/*.md"},
    )


@given("the pending Brief is edited on disk, keeping its length, right after Pi appends the compaction entry")
def _pending_edited_same_length(world: World) -> None:
    """P70c: the bytes change, the size does not (a check of the size alone passes it)."""
    _add_fault(
        world,
        "tamper",
        {
            "after": {"kind": "entry", "name": "compaction"},
            "path": "$PROJECT/*/pending/*.md",
            "action": "edit",
        },
    )


@given("archiving the committed Brief fails")
def _archive_write_fails(world: World) -> None:
    _add_fault(world, "fs", {"op": "write", "path": "$PROJECT/*/archive/*", "times": 0, "errno": "ENOSPC"})


@given("Pi crashes right before the committed Brief is archived")
def _crash_before_archive(world: World) -> None:
    # Pi appends the compaction entry, then emits session_compact: the first write under archive/
    # comes after the commit, so the crash leaves a committed entry and a pending Brief (P113a).
    _add_fault(world, "fs", {"op": "write", "path": "$PROJECT/*/archive/*", "effect": "crash"})


@given("Pi crashes right after the pending Brief is written")
def _crash_after_pending(world: World) -> None:
    # Audit hooks run before an operation, so "right after the write" is "before the next
    # file operation on the pending Brief": its re-read.
    _add_fault(world, "fs", {"op": "read", "path": "$PROJECT/*/pending/*.md", "effect": "crash"})


# --------------------------------------------------------------------- work already done
@given(parsers.re(r"the user has worked through (?P<count>\d+) turns?"))
def _worked(world: World, count: str) -> None:
    world.work_turns(int(count))


@given("the user has saved a checkpoint")
def _saved_checkpoint(world: World) -> None:
    """Records what the implementation wrote, wherever it put it (pending/, or archive/ for one
    that archives a checkpoint at once): every new artifact file that is a Brief, by its path
    under the artifact directory. A checkpoint that wrote no Brief fails here."""
    world.start()
    before = world.all_artifacts()
    outcome = world.command("/continuity checkpoint")
    assert outcome.ok, f"/continuity checkpoint failed: {outcome.error}"
    after = world.all_artifacts()
    written = {name: data for name, data in after.items() if before.get(name) != data}
    briefs = {name: data for name, data in written.items() if briefs_in({name: data})}
    assert briefs, (
        f"/continuity checkpoint wrote no Continuity Brief under {world.artifact_dir()} "
        f"(new files: {sorted(written) or 'none'})"
    )
    world.remembered["checkpoint"] = briefs
    world.remembered["artifacts_after_checkpoint"] = world.all_artifacts()


def _plant(world: World, relative: str, text: str) -> None:
    world.start()
    path = world.artifact_dir().relative_to(world.observe().project_dir) / relative
    world.perform(EditFileOp.model_validate({"edit_file": {"path": str(path), "text": text}}))
    planted = world.remembered.setdefault("planted", {})
    planted[str(path)] = text


def _planted_brief(session_id: str, event_id: str, body_line: str, *, kind: str, version: int) -> str:
    return (
        "---\n"
        f'kind: "{kind}"\nproduct: "Pi Session Continuity"\nartifact: "Continuity Brief"\n'
        f'operation: "Continuity Handoff"\nstatus: "pending"\nversion: {version}\neventId: "{event_id}"\n'
        f'sessionId: "{session_id}"\nsessionFile: "/elsewhere/session.jsonl"\n'
        'createdAt: "2025-01-01T00:00:00.000Z"\nupdatedAt: "2025-01-01T00:00:00.000Z"\n'
        'modelId: "fake/fake-model"\nsynthesisModel: "fake/fake-model"\nsynthesisEffort: "medium"\n'
        "tokenCountAtTrigger: 1\ncontextWindow: 200000\nreserveTokens: 50000\nkeepRecentTokens: 2000\n"
        'effectiveTriggerPercent: 75\neffectiveKeepRecentPercent: 1\nhandoffReason: "threshold"\n'
        "---\n# Continuity Brief\n\n## Task\n\n" + body_line + "\n\n## Next Actions\n\n" + body_line + "\n"
    )


@given(
    parsers.re(r'the artifact directory holds a pending Brief of another session saying "(?P<text>[^"]+)"')
)
def _foreign_pending(world: World, text: str) -> None:
    foreign = "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
    brief = _planted_brief(
        foreign, "11111111-2222-4333-8444-555555555555", text, kind="pi-session-continuity/v2", version=2
    )
    _plant(world, f"{foreign}/pending/11111111-2222-4333-8444-555555555555.md", brief)


@given("the artifact directory holds a temporary file of another session's write in progress")
def _foreign_temp_file(world: World) -> None:
    """Another Pi process in the same project is writing a Brief: its temporary file (the shape
    of an atomic write before its rename) lies in its own session's ``pending/``. It is that
    session's file (rule P139), whatever this session's startup does about its own (P136)."""
    foreign = "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0002"
    event = "44444444-5555-4666-8777-888888888888"
    brief = _planted_brief(foreign, event, "a write in progress", kind="pi-session-continuity/v2", version=2)
    _plant(world, f"{foreign}/pending/.{event}.md.{'0123456789abcdef' * 2}.tmp", brief)


def _archived(brief: str) -> str:
    return brief.replace('status: "pending"', 'status: "archived"', 1)


@given(
    parsers.re(
        r'the artifact directory holds an archived Brief of (?P<whose>this|another) session saying "(?P<text>[^"]+)"'
    )
)
def _archived_brief(world: World, whose: str, text: str) -> None:
    """An archived schema-v2 Brief (status archived) in the session's archive/ directory, named
    ``<timestamp>-<eventId>.md`` (spec §7): historical evidence only (rule P71a)."""
    world.start()
    session_id = (
        (world.observe().session_id or "") if whose == "this" else "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
    )
    event_id = (
        "22222222-3333-4444-8555-666666666666" if whose == "this" else "33333333-4444-4555-8666-777777777777"
    )
    brief = _planted_brief(session_id, event_id, text, kind="pi-session-continuity/v2", version=2)
    _plant(world, f"{session_id}/archive/2025-01-01T00-00-00-000Z-{event_id}.md", _archived(brief))


@given(parsers.re(r"the artifact directory holds (?P<count>\d+) archived Briefs of this session"))
def _archived_briefs(world: World, count: str) -> None:
    """``count`` archived schema-v2 Briefs of this session, a day apart in 2025 (older than any
    Brief the scenario makes), named ``<timestamp>-<eventId>.md`` (spec §7): the archive is full
    before the scenario's own Brief is archived (rule P54)."""
    world.start()
    session_id = world.observe().session_id or ""
    for day in range(1, int(count) + 1):
        event_id = f"{day:08d}-3333-4444-8555-666666666666"
        brief = _planted_brief(
            session_id, event_id, f"archived {day}", kind="pi-session-continuity/v2", version=2
        )
        _plant(world, f"{session_id}/archive/2025-01-{day:02d}T00-00-00-000Z-{event_id}.md", _archived(brief))


@given(
    parsers.re(r'the artifact directory holds a legacy v1 artifact of this session saying "(?P<text>[^"]+)"')
)
def _legacy_v1(world: World, text: str) -> None:
    world.start()
    session_id = world.observe().session_id or ""
    brief = _planted_brief(
        session_id, "66666666-7777-4888-8999-aaaaaaaaaaaa", text, kind="pi-session-continuity/v1", version=1
    )
    _plant(world, f"{session_id}/pending/66666666-7777-4888-8999-aaaaaaaaaaaa.md", brief)
