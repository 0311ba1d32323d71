"""Then steps of the pi-blitz-handoff features: what must be observed, read as the reference fixes it.

Every step checks the implementation's own effect, never only its absence: a step about a
rejection needs the tool to be the implementation's (Pi declared it to the model), a step about
a refusal needs the implementation to have said something, and the messages the extension sends
the model are told apart by when they come (:func:`~pi_continuity_harness.features.blitz_oracle.classify`),
not by their wording.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_bdd import parsers, then

from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.steps.blitz import (
    _FOREIGN_WIDGETS,
    DOSSIER_TEXT,
    agent_dir,
    config_bytes,
    dossier,
    handoff_messages,
    notes,
    project_templates_file,
    read_lines,
    recovery_dir,
    recovery_files,
    registered_tools,
    request_starts,
    source_entries,
    source_file,
    source_items,
    substitute_work,
    text,
    tool_declarations,
    tool_results,
    widget_texts,
)
from pi_continuity_harness.features.steps.common import (
    last_mark,
    new_dialogs,
    new_requests,
    new_session_events,
)
from pi_continuity_harness.features.world import World


# ===================================================================== the transfer
@then("Pi switched to a new session whose header links to the source session")
def _parent_linked(world: World) -> None:
    obs = world.observe()
    source = source_file(world)
    assert obs.session_file is not None and obs.session_file != source, "Pi did not switch sessions"
    lines = read_lines(obs.session_file)
    # Pi writes a new session's file once it holds a user or assistant message
    # (core/session-manager.js:804-819, ``_persist``): an empty one had no receiver turn.
    assert lines, f"Pi is in a session it never wrote ({obs.session_file}): no receiver turn ran there"
    header = lines[0]
    assert header.get("parentSession") == str(source), f"header: {header}"
    starts = [e for e in obs.events("session_start") if e.get("reason") == "new"]
    assert starts and starts[-1].get("previousSessionFile") == str(source), f"session_start events: {starts}"


@then("Pi switched to a new independent master session")
def _independent(world: World) -> None:
    obs = world.observe()
    source = source_file(world)
    assert obs.session_file is not None and obs.session_file != source, "Pi did not switch sessions"
    header = read_lines(obs.session_file)[0]
    assert "parentSession" not in header, f"header: {header}"


@then("Pi did not switch sessions")
def _no_switch(world: World) -> None:
    obs = world.observe()
    assert str(obs.session_file) == str(source_file(world)), f"switched to {obs.session_file}"
    assert not [e for e in obs.events("session_start") if e.get("reason") == "new"]


@then("Pi did not resume another session")
def _no_resume(world: World) -> None:
    obs = world.observe()
    assert str(obs.session_file) == str(source_file(world)), f"switched to {obs.session_file}"
    assert not [e for e in obs.events("session_start") if e.get("reason") == "resume"]


def _machine(world: World) -> Path:
    """The machine's directory (project, agent directory and sessions are in it): the paths a
    first prompt names are under it."""
    return Path(world.observe().project_dir).parent


def _first_prompt(world: World) -> str:
    users = world.observe().user_messages()
    assert users, "the new session has no user message"
    return users[0]


@then("the receiver's first prompt names the dossier's absolute path and nothing of the source history")
def _bootstrap(world: World) -> None:
    obs = world.observe()
    path = str(dossier(world))
    first = _first_prompt(world)
    assert path in first, f"first prompt: {first!r}"
    receiver_requests = [r for r in obs.requests("agent") if path in r.last_user_text()]
    assert receiver_requests, "no model request carried the bootstrap prompt"
    messages = receiver_requests[0].request.messages
    assert [m.get("role") for m in messages if m.get("role") != "system"] == ["user"], f"history: {messages}"
    source_prompts = [i.text for i in source_items(world) if i.kind == "user" and len(i.text) >= 20]
    leaked = [p[:60] for p in source_prompts if p[:40] in first]
    assert not leaked, f"the first prompt carries the source history: {leaked}"


@then("the bootstrap prompt tells the receiver to read the entire dossier, past any truncation")
def _bootstrap_entire(world: World) -> None:
    words = oracle.without_paths(_first_prompt(world), _machine(world))
    assert re.search(r"(?i)\b(?:entire|whole|all of it|completely|in full)\b", words), words
    assert re.search(r"(?i)truncat", words), words


@then("the receiver read the whole dossier")
def _read_whole(world: World) -> None:
    reads = tool_results(world.observe().entries, "read")
    assert reads and DOSSIER_TEXT.strip() in text(reads[0]), f"read results: {reads}"


@then("the bootstrap prompt tells the receiver to delete exactly the dossier after reading it")
def _bootstrap_delete(world: World) -> None:
    first = _first_prompt(world)
    assert oracle.instructs_deletion(first, dossier(world)), first


@then("the bootstrap prompt tells the receiver to leave the dossier unchanged")
def _bootstrap_keep(world: World) -> None:
    first = _first_prompt(world)
    assert oracle.instructs_retention(first, dossier(world)), first


@then("the dossier is gone after the receiver's completed turn")
def _dossier_gone(world: World) -> None:
    assert not dossier(world).exists(), f"{dossier(world)} still exists"


@then("the dossier is still there, unchanged")
def _dossier_kept(world: World) -> None:
    """H40b: same path, same content. Deferred prompts are appended before the cutover (H36);
    without any the file holds exactly what the model wrote (an empty "deferred prompts" section
    appended anyway is a change)."""
    path = dossier(world)
    assert path.exists(), f"{path} is gone"
    body = path.read_bytes().decode("utf-8", errors="surrogateescape")
    if world.remembered.get("deferred"):
        assert body.startswith(DOSSIER_TEXT), f"{path}: {body!r}"
    else:
        assert body == DOSSIER_TEXT, f"{path} is not as the model wrote it: {body!r}"


# ===================================================================== the widget
@then(parsers.re(r'the status widget showed "(?P<value>[^"]+)"'))
def _widget_showed(world: World, value: str) -> None:
    texts = widget_texts(world)
    assert any(value in (t or "") for t in texts), f"widget texts: {texts}"


@then(parsers.re(r'the status widget never showed "(?P<value>[^"]+)"'))
def _widget_never(world: World, value: str) -> None:
    """H118: an older config without ``deferPromptsFrom`` captures from the GET (``writing``), so
    a request still waiting for its GET shows no ``Inputs deferred`` count."""
    texts = widget_texts(world)
    assert not any(value in (t or "") for t in texts), f"widget texts: {texts}"


@then(parsers.re(r'the status widget now shows "(?P<value>[^"]+)"'))
def _widget_now(world: World, value: str) -> None:
    texts = widget_texts(world)
    assert texts and value in (texts[-1] or ""), f"widget texts: {texts}"


@then("the status widget no longer shows an active handoff")
def _widget_ended(world: World) -> None:
    texts = widget_texts(world)
    assert texts, "the implementation never showed a widget"
    last = texts[-1] or ""
    active = [phase for phase in (oracle.WAITING, oracle.WRITING, oracle.FINISHED) if phase in last]
    assert not active, f"the widget still shows {active}: {texts}"


# ===================================================================== GET and Finish
def _registered(world: World, name: str) -> None:
    """The tool was declared to the model, or a call of it ran the implementation's tool: Pi
    answers a call of an unknown tool with ``Tool <name> not found`` (pi-agent-core
    dist/agent-loop.js:492), never with the implementation's own result."""
    if name in registered_tools(world):
        return
    results = tool_results(source_entries(world), name) + tool_results(world.observe().entries, name)
    ran = [r for r in results if text(r) != f"Tool {name} not found"]
    assert ran, f"the implementation registered no tool {name!r}"


@then("both template responses name the same dossier file and the same Finish ID")
def _same_snapshot(world: World) -> None:
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert len(results) == 2 and not any(r.get("isError") for r in results), f"GET results: {results}"
    path = str(dossier(world))
    ids = []
    for result in results:
        body = text(result)
        assert path in body, f"the template response does not name {path}: {body!r}"
        ids.append(oracle.finish_id_in(body))
    assert ids[0] is not None and ids[0] == ids[1], f"Finish IDs: {ids}"
    assert ids[0] != world.remembered.get("source_id"), "the Finish ID is the session ID"


@then(
    parsers.re(
        r'the template response carries "(?P<marker>[^"]+)" exactly once and no message to the model does'
    )
)
def _call_once(world: World, marker: str) -> None:
    entries = source_entries(world)
    results = tool_results(entries, oracle.GET_TOOL)
    assert results and text(results[0]).count(marker) == 1, [text(r) for r in results]
    for result in results[1:]:
        assert marker not in text(result), f"a later template response repeats the Call: {text(result)!r}"
    sent = [i.text for i in source_items(world) if i.kind in ("user", "extension") and marker in i.text]
    assert not sent, f"the Call instruction was also sent as a message: {sent}"


@then(parsers.re(r"the model received (?P<n>\d+) template responses"))
def _template_responses(world: World, n: str) -> None:
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert len(results) == int(n), [text(r) for r in results]


@then("the dossier file is reserved, empty and owner-only")
def _reserved(world: World) -> None:
    path = dossier(world)
    assert path.exists() and path.stat().st_size == 0, f"{path}"
    assert path.stat().st_mode & 0o077 == 0, oct(path.stat().st_mode)


def _finish_results(world: World) -> list[dict[str, object]]:
    _registered(world, oracle.FINISH_TOOL)
    results = tool_results(source_entries(world), oracle.FINISH_TOOL)
    assert results, "no Finish result"
    return results


@then("the Finish call was rejected")
def _finish_rejected(world: World) -> None:
    results = _finish_results(world)
    assert results[-1].get("isError"), f"Finish results: {[text(r) for r in results]}"


@then("the first Finish call was rejected")
def _first_finish_rejected(world: World) -> None:
    results = _finish_results(world)
    assert results[0].get("isError"), f"Finish results: {[text(r) for r in results]}"


@then("the two successful template responses gave different Finish IDs")
def _fresh_ids(world: World) -> None:
    """H19d: a new request gets a fresh Finish ID (not the one of the request before it)."""
    results = [r for r in tool_results(source_entries(world), oracle.GET_TOOL) if not r.get("isError")]
    assert len(results) == 2, f"successful GET results: {[text(r) for r in results]}"
    ids = [oracle.finish_id_in(text(r)) for r in results]
    assert None not in ids and ids[0] != ids[1], f"Finish IDs: {ids}"


@then("the second Finish call was rejected")
def _second_finish_rejected(world: World) -> None:
    results = _finish_results(world)
    assert len(results) >= 2 and results[1].get("isError"), [text(r) for r in results]


@then(parsers.re(r"exactly (?P<n>\d+) Finish calls? (?:was|were) accepted"))
def _finish_accepted(world: World, n: str) -> None:
    results = tool_results(source_entries(world), oracle.FINISH_TOOL)
    accepted = [r for r in results if not r.get("isError")]
    assert len(accepted) == int(n), f"Finish results: {[text(r) for r in results]}"


@then("the template request was refused")
def _get_refused(world: World) -> None:
    _registered(world, oracle.GET_TOOL)
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert results and all(r.get("isError") for r in results), [text(r) for r in results]


# ===================================================================== deferral and recovery
@then("the deferred prompts never reached the source model")
def _not_reached(world: World) -> None:
    """H27a, H76b: no user message to the source model holds a captured prompt, verbatim or inside
    a longer text (a replay after a cancel wraps them in their ``Deferred Prompt`` boundaries)."""
    entries = source_entries(world)
    path = str(dossier(world))
    for prompt in world.remembered["deferred"]:
        for request in world.observe().requests("agent"):
            if path in request.last_user_text():
                continue  # the receiver reads them from the dossier
            for message in request.request.messages:
                if message.get("role") == "user":
                    assert prompt not in text(message), f"{prompt!r} reached the model"
        assert not any(prompt in text(e.get("message") or {}) for e in entries)


def _recovery_blocks(world: World) -> list[tuple[int, int, str]]:
    files = recovery_files(world)
    assert len(files) == 1, f"recovery files: {list(files)}"
    blocks = oracle.deferred_prompts(next(iter(files.values())))
    assert blocks is not None, f"not a deferred-prompts file: {files}"
    return blocks


@then("the recovery file holds the deferred prompts unchanged, in order, with boundaries")
def _recovery_holds(world: World) -> None:
    prompts = world.remembered["deferred"]
    expected = [(i, len(prompts), p) for i, p in enumerate(prompts, 1)]
    assert _recovery_blocks(world) == expected, recovery_files(world)


@then("the recovery file is named after the UTC time in milliseconds and the source session ID")
def _recovery_name(world: World) -> None:
    names = list(recovery_files(world))
    pattern = oracle.recovery_file_name_re(str(world.remembered.get("source_id")))
    assert len(names) == 1 and pattern.fullmatch(names[0]), names


@then("a notification names the recovery file")
def _notice_names_recovery(world: World) -> None:
    """H76a: a cancel keeps the recovery file and tells the user where it is (its name, in a
    notification), for an explicit ``/sh recover``. Its wording is the implementation's: only
    the file's name is read (``tests/blitz/reworded.py``)."""
    files = recovery_files(world)
    assert len(files) == 1, f"recovery files: {sorted(files)}"
    name = next(iter(files))
    shown = [m for m, _ in world.observe().notifications]
    assert any(name in m for m in shown), f"no notification names {name}: {shown}"


@then("the recovery directory holds no file")
def _no_recovery(world: World) -> None:
    assert recovery_files(world) == {}, list(recovery_files(world))


@then("the dossier ends with the deferred prompts, in order")
def _dossier_has_prompts(world: World) -> None:
    reads = tool_results(world.observe().entries, "read")
    assert reads, "the receiver read nothing"
    body = text(reads[0])
    positions = [body.find(p) for p in world.remembered["deferred"]]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), body
    # find() is -1 when the model's dossier is gone (overwritten by the prompts): that is no append.
    written = body.find(DOSSIER_TEXT.strip())
    assert written >= 0, f"the model's dossier is no longer in the file the receiver read: {body!r}"
    assert written < positions[0], "the prompts are not after the model's dossier"


@then(parsers.re(r'"(?P<name>[^"]+)" is (?P<state>gone|still in the recovery directory)'))
def _recovery_state(world: World, name: str, state: str) -> None:
    files = recovery_files(world)
    assert (name in files) == (state != "gone"), f"recovery files: {list(files)}"


@then("both recovered prompts reached the model as one turn, in order")
def _one_turn(world: World) -> None:
    content = world.remembered["recovery_text"]
    users = world.observe().user_messages()
    assert users.count(content) == 1, users
    assert any(content in r.last_user_text() for r in world.observe().requests("agent")), (
        "no request carried it"
    )


@then(parsers.re(r'"(?P<name>[^"]+)" still holds the bytes it was planted with'))
def _recovery_bytes_kept(world: World, name: str) -> None:
    """H86: an unreadable recovery file is "retained": kept byte for byte, neither removed nor
    rewritten (as text it was never read)."""
    planted = world.remembered["recovery_bytes"][name]
    path = recovery_dir(world) / name
    assert path.is_file(), f"{name} is gone: recovery files {sorted(recovery_files(world))}"
    assert path.read_bytes() == planted, f"{name} now holds {path.read_bytes()!r}, not {planted!r}"


@then("nothing shown holds a replacement character")
def _no_replacement_shown(world: World) -> None:
    """H82: Inspect shows the "entire unchanged contents"; a file decoded with replacement
    characters (U+FFFD) is changed contents, shown as if it were the file."""
    shown = notes(world) + [str(d.get("prefill") or d.get("message") or "") for d in new_dialogs(world)]
    assert not [s for s in shown if "\ufffd" in s], f"shown with replacement characters: {shown}"


@then("the whole recovery file was shown")
def _inspected(world: World) -> None:
    content = world.remembered["recovery_text"]
    shown = notes(world) + [str(d.get("prefill") or d.get("message") or "") for d in new_dialogs(world)]
    assert any(content in s for s in shown), shown


# ===================================================================== reminder, emergency, automatic
@then(parsers.re(r"exactly (?P<n>\d+) handoff reminders? (?:was|were) shown"))
def _reminders(world: World, n: str) -> None:
    found = [m for m in handoff_messages(world) if m.kind == "reminder"]
    assert len(found) == int(n), f"reminders: {[m.item.text for m in found]}"
    for message in found:
        assert oracle.mentions(message.item.text, oracle.FINISH_TOOL), (
            f"a reminder that does not ask for the Finish: {message.item.text!r}"
        )


@then(parsers.re(r"the emergency instruction was (?P<how>sent once|not sent)"))
def _emergency(world: World, how: str) -> None:
    messages = handoff_messages(world)
    found = [m for m in messages if m.kind == "emergency"]
    if how == "not sent":
        assert not found, f"emergency messages: {[m.item.text for m in found]}"
        return
    assert len(found) == 1, f"extension messages: {[(m.kind, m.item.text) for m in messages]}"
    instruction = found[0].item.text
    assert oracle.mentions(instruction, oracle.FINISH_TOOL), (
        f"the emergency does not ask for the Finish: {instruction!r}"
    )


@then(
    parsers.re(r"each of the two requests got (?P<what>exactly one reminder|the emergency instruction once)")
)
def _per_request(world: World, what: str) -> None:
    """Each request classified on its own (:func:`handoff_messages`, cut where the second request
    began): what the first request got, the second gets again (H49a, H50: per request, not per
    runtime), and each has its own Call instruction."""
    starts = request_starts(world)
    assert len(starts) == 1, f"feature error: the second request was not marked ({starts})"
    kind = "reminder" if what.endswith("reminder") else "emergency"
    messages = handoff_messages(world)
    for label, part in (
        ("first", [m for m in messages if m.item.index < starts[0]]),
        ("second", [m for m in messages if m.item.index >= starts[0]]),
    ):
        found = [m for m in part if m.kind == kind]
        assert len(found) == 1, f"the {label} request's {kind} messages: {[m.item.text for m in found]}"
        calls = [m for m in part if m.kind == "call"]
        assert len(calls) == 1, f"the {label} request's Call instructions: {[m.item.text for m in calls]}"


def _calls_since_last_check(world: World) -> int:
    items = source_items(world)
    seen = int(world.remembered.get("auto_seen", 0))
    world.remembered["auto_seen"] = len(items)
    ours = [m for m in handoff_messages(world, seen) if m.kind != "emergency"]
    return sum(1 for m in ours if oracle.mentions(m.item.text, oracle.GET_TOOL))


@then(parsers.re(r"(?P<n>no|one) automatic handoff request was made"))
def _automatic(world: World, n: str) -> None:
    found = _calls_since_last_check(world)
    assert found == (0 if n == "no" else 1), f"automatic requests since the last check: {found}"


# ===================================================================== cancel, settings, misc
@then("the owned dossier reservation was removed")
def _reservation_removed(world: World) -> None:
    path = str(dossier(world))
    reserved = [
        r
        for r in tool_results(source_entries(world), oracle.GET_TOOL)
        if not r.get("isError") and path in text(r)
    ]
    assert reserved and world.remembered.get("dossier_after_get", True), "the dossier was never reserved"
    assert not dossier(world).exists(), f"{path} is still there"


@then(parsers.re(r'the file "(?P<name>[^"]+)" is untouched'))
def _foreign_untouched(world: World, name: str) -> None:
    path = dossier(world)
    assert path.read_text(encoding="utf-8") == f"{name}: not the extension's\n"


@then("the handoff was refused naming the dossier file")
def _refused_naming(world: World) -> None:
    path = str(dossier(world))
    said = notes(world) + [
        text(r) for r in tool_results(source_entries(world), oracle.GET_TOOL) if r.get("isError")
    ]
    assert any(path in s for s in said), f"nothing named {path}: {said}"
    accepted = [r for r in tool_results(source_entries(world), oracle.FINISH_TOOL) if not r.get("isError")]
    assert not accepted, "a Finish was accepted"


@then("the start was refused and the active request is unchanged")
def _start_refused(world: World) -> None:
    assert notes(world), "the implementation said nothing about the refused start"
    mark = last_mark(world)
    calls = [
        m for m in handoff_messages(world, mark.entries) if oracle.mentions(m.item.text, oracle.GET_TOOL)
    ]
    assert not calls, f"a second Call instruction was sent: {[m.item.text for m in calls]}"


@then("exactly one notification followed the cancel, and it reports no failure")
def _one_followup(world: World) -> None:
    """H73: a cancel that worked says so once; a warning is a failure reported (H75), so it
    does not pass here (before, only the ``error`` level was refused)."""
    new = world.observe().notifications[last_mark(world).notifications :]
    assert len(new) == 1 and new[0][1] not in ("warning", "error"), f"notifications after the cancel: {new}"


@then("exactly one notification followed the cancel: a warning or error naming the dossier file")
def _one_failed_followup(world: World) -> None:
    """H73/H75: a removal that fails is reported once, as a failure, with the exact path."""
    new = world.observe().notifications[last_mark(world).notifications :]
    path = str(dossier(world))
    assert len(new) == 1, f"notifications after the cancel: {new}"
    message, level = new[0]
    assert level in ("warning", "error") and path in message, f"the cancel's notification: {new[0]}"


@then(parsers.re(r'a notification names "(?P<value>[^"]+)"'))
def _notified(world: World, value: str) -> None:
    said = notes(world)
    assert any(value in n for n in said), f"notifications: {said}"


@then(parsers.re(r'the handoff config file holds "(?P<key>[^"]+)" = (?P<value>.+)'))
def _config_holds(world: World, key: str, value: str) -> None:
    path = agent_dir(world) / "config.json"
    assert path.is_file(), f"no handoff config file at {path}"
    data = json.loads(path.read_text(encoding="utf-8"))
    expected = json.loads(value.replace("$WORK", json.dumps(str(world.observe().project_dir.parent))[1:-1]))
    assert data.get(key) == expected, f"{key}: {data.get(key)!r}"
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, leftovers


@then(parsers.re(r'the handoff config file names none of (?P<keys>"\w+"(?:(?:, | and )"\w+")*)'))
def _config_without(world: World, keys: str) -> None:
    """H120: an explicit save writes the current schema only (no retired key survives it)."""
    path = agent_dir(world) / "config.json"
    assert path.is_file(), f"no handoff config file at {path}"
    data = json.loads(path.read_text(encoding="utf-8"))
    kept = [key for key in re.findall(r'"(\w+)"', keys) if key in data]
    assert not kept, f"the saved config still holds {kept}: {data}"


@then("the handoff config file is unchanged")
def _config_unchanged(world: World) -> None:
    assert config_bytes(world) == world.remembered.get("config_before")


@then(parsers.re(r'the directory "(?P<value>[^"]+)" (?P<state>exists|does not exist)'))
def _directory_state(world: World, value: str, state: str) -> None:
    path = Path(substitute_work(world, value))
    assert path.is_dir() == (state == "exists"), f"{path}: is_dir={path.is_dir()}"


@then(parsers.re(r'a confirmation named "(?P<value>[^"]+)"'))
def _confirmed(world: World, value: str) -> None:
    path = substitute_work(world, value)
    confirms = new_dialogs(world, "confirm")
    assert any(path in f"{d.get('title', '')} {d.get('message', '')}" for d in confirms), confirms


@then(
    parsers.re(
        r'the project templates file assigns "(?P<name>[^"]+)" to the (?P<role>call|handoff) role of this directory'
    )
)
def _project_file(world: World, name: str, role: str) -> None:
    data = json.loads((agent_dir(world) / "project-templates.json").read_text(encoding="utf-8"))
    cwd = str(world.observe().project_dir)
    assert data["projects"][cwd][role] == name, data


@then(
    parsers.re(
        r"the project templates file assigns nothing to the (?P<role>call|handoff) role of this directory"
    )
)
def _project_file_absent(world: World, role: str) -> None:
    """H125: "the other role, absent, stays Autodiscover": choosing one role writes that role only."""
    data = json.loads((agent_dir(world) / "project-templates.json").read_text(encoding="utf-8"))
    entry = data["projects"][str(world.observe().project_dir)]
    assert role not in entry, data


@then(parsers.re(r'the handoff request the model received starts with "(?P<value>[^"]+)"'))
def _call_text(world: World, value: str) -> None:
    sent = [i.text for i in source_items(world) if i.kind == "extension"]
    assert any(s.startswith(value) for s in sent), sent


@then("no handoff was requested")
def _nothing_requested(world: World) -> None:
    assert not widget_texts(world), widget_texts(world)
    assert not world.observe().model_requests[last_mark(world).model_requests :]


@then("a menu was offered")
def _menu_offered(world: World) -> None:
    dialogs = new_dialogs(world)
    assert any(d.get("method") == "select" for d in dialogs), dialogs


@then(parsers.re(r"the status tool reported the warning threshold of (?P<n>\d+)%"))
def _status_warning(world: World, n: str) -> None:
    _registered(world, oracle.STATUS_TOOL)
    results = tool_results(world.observe().entries, oracle.STATUS_TOOL)
    assert results and not results[-1].get("isError"), [text(r) for r in results]
    body = text(results[-1])
    assert re.search(rf"(?<!\d){n}(?:\.0+)?\s*%", body), body


@then("the prompt was handled by the extension and never reached the model")
def _prompt_handled(world: World) -> None:
    outcome = world.remembered["last_prompt"]
    assert outcome.disposition == "handled", outcome
    mark = last_mark(world)
    assert not world.observe().model_requests[mark.model_requests :], "a model request followed"


# ===================================================================== routes, timing, texts
def _runs(world: World) -> list[list[dict[str, object]]]:
    """The source session's runs: the message_end events between two agent_settled events."""
    runs: list[list[dict[str, object]]] = [[]]
    for event in world.observe().session_events:
        if event.get("type") == "agent_settled":
            runs.append([])
        elif event.get("type") == "message_end":
            runs[-1].append(event)
    return runs


def _run_of(world: World, role: tuple[str, ...], prefix: str) -> int:
    for index, run in enumerate(_runs(world)):
        if any(e.get("role") in role and str(prefix).startswith(str(e.get("text") or "\0")) for e in run):
            return index
    raise AssertionError(f"no message {prefix[:60]!r} was delivered")


def _the_call(world: World) -> str:
    calls = [m.item.text for m in handoff_messages(world) if m.kind == "call"]
    assert len(calls) == 1, f"Call instructions: {calls}"
    return calls[0]


@then("the Call instruction reached the model only after that run settled")
def _call_after_settled(world: World) -> None:
    busy = _run_of(world, ("assistant",), str(world.remembered["busy_reply"]))
    call_run = _run_of(world, ("user", "custom"), _the_call(world))
    assert call_run > busy, f"the Call came in run {call_run}, the busy run was {busy}"


@then("the Call instruction reached the model right after that turn's tool results, before its final answer")
def _call_steered(world: World) -> None:
    items = source_items(world)
    call_text = _the_call(world)
    at = next(i for i, item in enumerate(items) if item.kind == "extension" and item.text == call_text)
    before = [i for i in items[:at] if i.kind != "other"]
    assert before and before[-1].kind == "tool", f"the Call did not follow a tool result: {before[-3:]}"
    final = str(world.remembered.get("run_final_text"))
    after = [i.text for i in items[at:] if i.kind == "assistant"]
    assert final in after, f"the run's final answer came before the Call: {after}"


@then("the emergency instruction reached the model right after that turn's tool results")
def _emergency_steered(world: World) -> None:
    items = source_items(world)
    found = [m.item for m in handoff_messages(world) if m.kind == "emergency"]
    assert len(found) == 1, f"emergency messages: {[i.text for i in found]}"
    at = items.index(found[0])
    before = [i for i in items[:at] if i.kind != "other"]
    assert before and before[-1].kind == "tool" and before[-1].tool == "bash", (
        f"the emergency did not follow the turn's tool result: {before[-3:]}"
    )


@then("the tool's result of that turn was recorded")
def _tools_ran(world: World) -> None:
    results = [i for i in source_items(world) if i.kind == "tool" and i.tool == "bash"]
    assert results and not any(r.error for r in results), results


@then(
    parsers.re(
        r"the status tool reported the context use, the automatic threshold of (?P<auto>\d+)% "
        r"and a reminder delay of (?P<delay>\d+) seconds"
    )
)
def _status_fields(world: World, auto: str, delay: str) -> None:
    _registered(world, oracle.STATUS_TOOL)
    results = tool_results(source_entries(world), oracle.STATUS_TOOL)
    assert results and not results[0].get("isError"), [text(r) for r in results]
    body = text(results[0])
    percents = [float(p) for p in re.findall(r"(\d+(?:\.\d+)?)\s*%", body)]
    assert any(5 <= p <= 6 for p in percents), f"no context use of about 5.5% in {body!r}"
    assert float(auto) in percents, f"no automatic threshold of {auto}% in {body!r}"
    assert re.search(rf"(?<!\d){delay}\s*(?:s\b|sec|second)", body), (
        f"no reminder delay of {delay} s in {body!r}"
    )


@then("the two status answers report different handoff states")
def _status_differs(world: World) -> None:
    results = tool_results(source_entries(world), oracle.STATUS_TOOL)
    assert len(results) == 2 and not any(r.get("isError") for r in results), [text(r) for r in results]
    assert text(results[0]) != text(results[1]), text(results[0])


@then("no handoff was started")
def _not_started(world: World) -> None:
    assert not [t for t in widget_texts(world) if t], widget_texts(world)
    assert not handoff_messages(world), [m.item.text for m in handoff_messages(world)]
    assert not dossier(world).exists()


@then("the template request was refused and nothing was reserved")
def _get_refused_nothing(world: World) -> None:
    _get_refused(world)
    assert not dossier(world).exists(), f"{dossier(world)} was reserved"


@then(
    "the Call instruction tells the model to call session_handoff_get_template({}) before writing, "
    "and names neither the dossier file nor a Finish ID"
)
def _call_protocol(world: World) -> None:
    call_text = _the_call(world)
    assert oracle.mentions(call_text, oracle.GET_TOOL), call_text
    assert str(dossier(world)) not in call_text and not re.search(oracle.DOSSIER_MATCH, call_text), call_text
    ids = [oracle.finish_id_in(text(r)) for r in tool_results(source_entries(world), oracle.GET_TOOL)]
    assert not [i for i in ids if i and i in call_text], f"the Call carries a Finish ID: {call_text!r}"


@then(parsers.re(r'the template response carries "(?P<marker>[^"]+)" and names the source session file'))
def _get_contents(world: World, marker: str) -> None:
    results = [r for r in tool_results(source_entries(world), oracle.GET_TOOL) if not r.get("isError")]
    assert results, "no successful template response"
    body = text(results[0])
    assert marker in body, f"the selected Handoff template is not in {body!r}"
    assert str(source_file(world)) in body, f"the source transcript {source_file(world)} is not in {body!r}"


@then("the bootstrap prompt tells the receiver to keep the dossier and report the blocker if the read fails")
def _bootstrap_blocker(world: World) -> None:
    words = oracle.without_paths(_first_prompt(world), _machine(world))
    assert re.search(r"(?i)\b(?:fail|fails|failed|incomplete|cannot|unable)\b", words), words
    assert re.search(r"(?i)\b(?:keep|leave|retain)\b|\bdo(?: not|n't) (?:delete|remove)\b", words), words
    assert re.search(r"(?i)\b(?:report|tell|explain|blocker|blocked)\b", words), words


def _managed_template(world: World, name: str) -> str:
    path = agent_dir(world) / "templates" / name
    assert path.is_file(), f"{path} was not installed"
    return path.read_text(encoding="utf-8").strip()


@then(
    "the Call instruction starts with the installed call_default.cmpl and the template response carries "
    "the installed handoff_default.cmpl"
)
def _defaults_used(world: World) -> None:
    call_text = _the_call(world)
    assert call_text.startswith(_managed_template(world, "call_default.cmpl")), call_text
    results = [r for r in tool_results(source_entries(world), oracle.GET_TOOL) if not r.get("isError")]
    assert results and _managed_template(world, "handoff_default.cmpl") in text(results[0]), results


@then("the shipped Call template asks for the next safe checkpoint before the protocol")
def _shipped_call(world: World) -> None:
    call_text = _the_call(world)
    template = call_text.split(oracle.GET_TOOL, 1)[0]
    assert re.search(r"(?i)checkpoint", template), template
    assert oracle.mentions(call_text, oracle.FINISH_TOOL), call_text


_V2_TOPICS = (
    r"userfacing",
    r"autonom",
    r"grant|permission",
    r"dirty|blocker",
    r"evidence",
    r"skill",
    r"next action",
    r"history",
    r"deferred prompt",
)


@then("the shipped Handoff template asks for the V2 dossier")
def _shipped_handoff(world: World) -> None:
    results = [r for r in tool_results(source_entries(world), oracle.GET_TOOL) if not r.get("isError")]
    assert results, "no successful template response"
    body = text(results[0])
    missing = [topic for topic in _V2_TOPICS if not re.search(rf"(?i){topic}", body)]
    assert not missing, f"the template response misses {missing}: {body!r}"


@then("the tools Pi declared to the model stayed the same during the handoff, and every tool call ran")
def _tools_unchanged(world: World) -> None:
    requests = [r for r in world.observe().requests("agent") if str(dossier(world)) not in r.last_user_text()]
    declared = {tuple(r.request.tools) for r in requests}
    assert len(declared) == 1 and "write" in next(iter(declared)), f"declared tools changed: {declared}"
    failed = [
        (i.tool, i.text)
        for i in source_items(world)
        if i.kind == "tool" and i.error and i.tool not in (oracle.GET_TOOL, oracle.FINISH_TOOL)
    ]
    assert not failed, f"tool calls that did not run: {failed}"
    unrelated = Path(world.observe().project_dir) / "notes" / "unrelated.txt"
    assert unrelated.read_text(encoding="utf-8") == "unrelated work\n", "the native write did not run"


@then(
    "every model request offered the tools session_handoff_get_template, session_handoff_finish"
    " and blitz_handoff, and one write tool"
)
def _tools_registered(world: World) -> None:
    """H135: the names the spec fixes (a model that calls the template tool by its name finds
    it), and the extension registers no ``write`` of its own beside Pi's native one."""
    requests = world.observe().requests("agent")
    assert requests, "no model request was made"
    wanted = (oracle.GET_TOOL, oracle.FINISH_TOOL, oracle.STATUS_TOOL)
    for request in requests:
        tools = list(request.request.tools)
        missing = [name for name in wanted if name not in tools]
        assert not missing, f"a model request was not offered {missing}: {tools}"
        assert tools.count("write") == 1, f"{tools.count('write')} tools named write: {tools}"


@then(parsers.re(r'the settings dialog showed "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'))
def _settings_showed(world: World, a: str, b: str) -> None:
    dialogs = new_dialogs(world)
    shown = "\n".join(
        " ".join(
            [str(d.get("title", "")), str(d.get("message", "")), *(str(o) for o in d.get("options") or [])]
        )
        for d in dialogs
    )
    assert dialogs and a in shown and b in shown, shown


@then("the extension sent the model no message")
def _no_message(world: World) -> None:
    sent = [m.item.text[:80] for m in handoff_messages(world)]
    assert not sent, f"the extension sent the model {sent}"


@then("the extension sent the model nothing but the Call instruction")
def _only_the_call(world: World) -> None:
    sent = [(m.kind, m.item.text[:80]) for m in handoff_messages(world)]
    assert [kind for kind, _ in sent] == ["call"], f"the extension sent the model {sent}"


@then("the writer's last reply ended normally before the switch")
def _writer_settled(world: World) -> None:
    replies = [i for i in source_items(world) if i.kind == "assistant"]
    assert replies and replies[-1].stop == "stop" and replies[-1].text, (
        f"the writer's last reply: {replies[-1:]}"
    )
    aborted = [
        e for e in world.observe().session_events if e.get("type") == "agent_settled" and e.get("aborted")
    ]
    assert not aborted, f"a run was aborted: {aborted}"


@then("the start was refused with a notification")
def _refused_notified(world: World) -> None:
    assert notes(world), "the implementation said nothing"
    assert not [t for t in widget_texts(world) if t and oracle.WAITING in t], widget_texts(world)
    assert not [m for m in handoff_messages(world) if m.kind == "call"], "a Call instruction was sent"


@then(parsers.re(r'the start was refused with a notification naming "(?P<key>[^"]+)"'))
def _start_refused_naming(world: World, key: str) -> None:
    _refused_notified(world)
    said = notes(world)
    assert any(key in note for note in said), f"no notification of the refusal names {key!r}: {said}"


@then("the handoff config file is as the user wrote it")
def _config_as_written(world: World) -> None:
    written = world.remembered.get("config_written")
    assert written is not None, "the scenario wrote no handoff config"
    assert config_bytes(world) == written, "the implementation rewrote the handoff config file"


@then("every widget line of the active request advertises /sh cancel")
def _widget_cancel(world: World) -> None:
    active = [t for t in widget_texts(world) if t and (oracle.WAITING in t or oracle.WRITING in t)]
    assert active, f"the widget never showed an active request: {widget_texts(world)}"
    missing = [t for t in active if "/sh cancel" not in t]
    assert not missing, f"active widget texts without /sh cancel: {missing}"


#: Progress the widget must never show: numbered or fractional steps, percentages, user prompts.
_PROGRESS = re.compile(
    r"\b\d+\s*/\s*\d+\b|\b\d+(?:\.\d+)?\s*%|\b(?:step|phase)\s+\d+|awaiting user go|user input required",
    re.IGNORECASE,
)


@then("the status widget never showed numbered progress or a request for user input")
def _widget_no_progress(world: World) -> None:
    texts = [t for t in widget_texts(world) if t]
    assert texts, "the implementation never showed a widget"
    shown = [t for t in texts if _PROGRESS.search(t)]
    assert not shown, f"widget texts with progress or a user prompt: {shown}"


def _owner_only(path: Path) -> None:
    mode = path.stat().st_mode & 0o777
    assert not mode & 0o077, f"{path} has mode {mode:o}: group or others may access it"


@then("the recovery file is owner-only")
def _recovery_owner_only(world: World) -> None:
    files = (
        sorted(p for p in recovery_dir(world).iterdir() if p.is_file())
        if recovery_dir(world).is_dir()
        else []
    )
    assert files, "the implementation wrote no recovery file"
    for path in files:
        _owner_only(path)


@then("the handoff config file is owner-only")
def _config_owner_only(world: World) -> None:
    path = agent_dir(world) / "config.json"
    assert path.is_file(), "the implementation wrote no handoff config file"
    _owner_only(path)


@then("a notification lists every public /sh subcommand")
def _help_listed(world: World) -> None:
    said = notes(world)
    words = ("start", "help", "cancel", "recover", "settings", "project-template")
    listed = [n for n in said if all(re.search(rf"\b{re.escape(w)}\b", n) for w in words)]
    assert listed, f"no notification names all of {words}: {said}"


@then("the project's .gitignore is unchanged")
def _gitignore_unchanged(world: World) -> None:
    path = world.observe().project_dir / ".gitignore"
    assert path.read_text(encoding="utf-8") == world.remembered["gitignore"], path.read_text(encoding="utf-8")


@then(parsers.re(r'the model was asked "(?P<value>[^"]+)"'))
def _asked(world: World, value: str) -> None:
    """The prompt reached the model (it was not captured): after a failed transfer no request is
    left to defer it to (H123)."""
    asked = [r for r in world.observe().requests("agent") if value in r.last_user_text()]
    assert asked, f"{value!r} never reached the model"


@then("the prompt sent before the template request reached the source model")
def _answered(world: World) -> None:
    value = str(world.remembered["answered_prompt"])
    asked = [r for r in world.observe().requests("agent") if value in r.last_user_text()]
    assert asked, f"{value!r} never reached the model"


@then("the last template request was refused")
def _last_get_refused(world: World) -> None:
    _registered(world, oracle.GET_TOOL)
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert results and results[-1].get("isError"), [text(r) for r in results]


@then("the reserved dossier is still there")
def _reserved_dossier_kept(world: World) -> None:
    path = dossier(world)
    reserved = [r for r in tool_results(source_entries(world), oracle.GET_TOOL) if str(path) in text(r)]
    assert reserved, f"the dossier {path} was never reserved"
    assert path.exists(), f"{path} was removed"


@then("the compaction was blocked")
def _compaction_blocked(world: World) -> None:
    assert len(world.compactions()) == world.remembered["compactions_before"], (
        "a compaction entry was appended"
    )
    ends = new_session_events(world, "compaction_end")
    assert not [e for e in ends if not e.get("aborted")], f"a compaction completed: {ends}"
    summaries = [r for r in new_requests(world, "summary")]
    assert not summaries, "Pi asked its summarizer: the compaction was not blocked before it ran"


@then(parsers.re(r'no notification mentions "(?P<value>[^"]+)"'))
def _not_mentioned(world: World, value: str) -> None:
    said = notes(world)
    assert said, "the implementation showed no notification"
    assert not any(value in n for n in said), f"notifications: {said}"


@then("a notification was shown")
def _a_notification_shown(world: World) -> None:
    assert notes(world), "the implementation showed no notification"


@then("no notification was shown")
def _not_notified(world: World) -> None:
    assert not notes(world), f"notifications: {notes(world)}"


@then(parsers.re(r'no model request contained "(?P<value>[^"]+)"'))
def _never_sent(world: World, value: str) -> None:
    needle = substitute_work(world, value)
    for request in world.observe().requests("agent"):
        for message in request.request.messages:
            assert needle not in json.dumps(message, ensure_ascii=False), (
                f"{needle!r} reached the model: {message}"
            )


@then("every widget update of the implementation is placed above the editor")
def _widget_above(world: World) -> None:
    """Pi places a widget above the editor unless the extension asks for ``belowEditor``
    (modes/interactive/interactive-mode.js:2015: ``options?.placement ?? "aboveEditor"``)."""
    updates = [w for w in world.observe().widgets if w.get("key") not in _FOREIGN_WIDGETS]
    assert updates, "the implementation never showed a widget"
    below = [w for w in updates if w.get("placement") not in (None, "aboveEditor")]
    assert not below, f"widget updates not above the editor: {below}"


@then("the model's start was accepted")
def _model_start_accepted(world: World) -> None:
    _registered(world, oracle.STATUS_TOOL)
    results = tool_results(source_entries(world), oracle.STATUS_TOOL)
    assert results and not results[0].get("isError"), [text(r) for r in results]


@then("the model's start was refused")
def _model_start_refused(world: World) -> None:
    _registered(world, oracle.STATUS_TOOL)
    results = tool_results(world.observe().entries, oracle.STATUS_TOOL)
    assert results and results[0].get("isError"), [text(r) for r in results]


# ===================================================================== templates and their resolver
@then(
    parsers.re(r'the handoff request the model received starts with the managed template "(?P<name>[^"]+)"')
)
def _call_from_managed(world: World, name: str) -> None:
    first = _managed_template(world, name).splitlines()[0]
    sent = [i.text for i in source_items(world) if i.kind == "extension"]
    assert any(s.startswith(first) for s in sent), f"no handoff request starts with {first!r}: {sent}"


@then(parsers.re(r'the start warned naming "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'))
def _start_warned(world: World, a: str, b: str) -> None:
    """One notification of the start names both: the failed selection and the fallback used."""
    said = notes(world)
    assert any(a in n and b in n for n in said), f"no notification names {a!r} and {b!r}: {said}"


@then(parsers.re(r'Pi\'s startup warned naming "(?P<value>[^"]+)"'))
def _startup_warned(world: World, value: str) -> None:
    """A notification shown before the scenario's last action (at session_start)."""
    before = [m for m, _ in world.observe().notifications[: last_mark(world).notifications]]
    assert any(value in n for n in before), f"no startup notification names {value!r}: {before}"


@then("the project templates file is unchanged")
def _project_templates_unchanged(world: World) -> None:
    before = world.remembered.get("project_templates_before")
    assert before is not None, "the scenario wrote no project templates file"
    path = project_templates_file(world)
    assert path.is_file() and path.read_bytes() == before, "the project templates file was rewritten"


@then(
    parsers.re(
        r"the project templates file has no entry for this directory(?P<others>, and keeps the others)?"
    )
)
def _project_entry_removed(world: World, others: str | None) -> None:
    data = json.loads(project_templates_file(world).read_text(encoding="utf-8"))
    projects = data.get("projects")
    assert isinstance(projects, dict), data
    cwd = str(world.observe().project_dir)
    assert cwd not in projects, f"the entry of {cwd} is still there: {projects}"
    if others:
        before = json.loads(world.remembered["project_templates_before"])["projects"]
        kept = {k: v for k, v in before.items() if k != cwd}
        assert {k: projects.get(k) for k in kept} == kept, f"other entries changed: {projects}"


@then(
    parsers.re(
        r'the (?P<role>Call|Handoff) template list offered "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'
        r' but not "(?P<absent>[^"]+)"'
    )
)
def _template_list(world: World, role: str, a: str, b: str, absent: str) -> None:
    """The role's list (the select whose options hold ``<Autodiscover>``), after the two boxes."""
    dialogs = new_dialogs(world, "select")
    boxes = [d for d in dialogs if any(str(o).startswith("Call") for o in d.get("options") or [])]
    assert boxes, f"no select offered a Call box: {dialogs}"
    options = [str(o) for o in boxes[0].get("options") or []]
    assert any(o.startswith("Handoff") for o in options), f"no separate Handoff box: {options}"
    lists = [d for d in dialogs if "<Autodiscover>" in (d.get("options") or [])]
    assert lists, f"no {role} template list was offered: {dialogs}"
    shown = [str(o) for o in lists[0].get("options") or []]
    for name in (a, b):
        assert name in shown, f"{name!r} not offered: {shown}"
    assert absent not in shown, f"{absent!r} offered: {shown}"


# ===================================================================== recovery, settings lists, receiver
_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b"
)


@then(
    parsers.re(
        r'the recovery list offered (?P<names>"[^"]+"(?: and "[^"]+")*)'
        r' but neither "(?P<c>[^"]+)" nor "(?P<d>[^"]+)"'
    )
)
def _recovery_list_only(world: World, names: str, c: str, d: str) -> None:
    """H81a: the list (the select that offers one of ``names``) offers every one of them, the
    top-level Markdown files, and nothing else named: a list of the newest file alone offers
    one of two."""
    wanted = re.findall(r'"([^"]+)"', names)
    selects = new_dialogs(world, "select")
    lists = [[str(o) for o in x.get("options") or []] for x in selects]
    lists = [options for options in lists if any(name in o for name in wanted for o in options)]
    assert lists, f"no recovery list offered any of {wanted}: {selects}"
    missing = [name for name in wanted if not any(name in o for o in lists[0])]
    assert not missing, f"the recovery list did not offer {missing}: {lists[0]}"
    offered = [o for o in lists[0] if c in o or d in o]
    assert not offered, f"the recovery list offered {offered}: {lists[0]}"


@then(parsers.re(r'the recovery list showed a date beside "(?P<name>[^"]+)"'))
def _recovery_dated(world: World, name: str) -> None:
    """The file's name carries no date, so the date must be the implementation's own."""
    selects = new_dialogs(world, "select")
    options = [str(o) for d in selects for o in d.get("options") or [] if name in str(o)]
    assert options, f"no recovery list offered {name!r}: {selects}"
    assert _DATE.search(options[0].replace(name, "")), f"no date beside {name!r}: {options[0]!r}"


@then(
    parsers.re(
        r'the settings template list offered "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'
        r' but neither "(?P<c>[^"]+)" nor "(?P<d>[^"]+)"'
    )
)
def _settings_template_list(world: World, a: str, b: str, c: str, d: str) -> None:
    selects = new_dialogs(world, "select")
    lists = [[str(o) for o in x.get("options") or []] for x in selects if b in (x.get("options") or [])]
    assert lists, f"no select offered {b!r}: {selects}"
    shown = lists[0]
    assert a in shown, f"{a!r} not offered: {shown}"
    assert c not in shown and d not in shown, f"offered: {shown}"


@then(parsers.re(r'the receiver got "(?P<value>[^"]+)" only inside the dossier it read'))
def _only_in_dossier(world: World, value: str) -> None:
    """In every model request the deferred prompt appears only in a tool result (the receiver's
    read of the dossier; the source model never gets it, a rule of its own), and it does there."""
    seen_in_read = False
    for request in world.observe().requests("agent"):
        for message in request.request.messages:
            body = json.dumps(message, ensure_ascii=False)
            if value not in body:
                continue
            is_read = message.get("role") in ("tool", "toolResult") or '"tool_call_id"' in body
            assert is_read, f"{value!r} reached the receiver outside the dossier: {body[:300]}"
            seen_in_read = True
    assert seen_in_read, f"{value!r} never reached the receiver through the dossier"


# ===================================================================== managed directory, menu, chain
@then(parsers.re(r'the managed directories "(?P<a>[^"]+)", "(?P<b>[^"]+)" and "(?P<c>[^"]+)" exist'))
def _managed_dirs(world: World, a: str, b: str, c: str) -> None:
    root = agent_dir(world)
    missing = [name for name in (a, b, c) if not (root / name).is_dir()]
    assert not missing, f"missing under {root}: {missing}"


@then(parsers.re(r'the managed directory "(?P<name>[^"/]+)" is still the symbolic link the user made'))
def _managed_link_kept(world: World, name: str) -> None:
    """H109: a deliberate directory link is used as it is, never replaced by a real directory
    (nor re-pointed) when the extension loads."""
    where = str(world.remembered[f"managed_link_{name}"])
    link = agent_dir(world) / name
    assert link.is_symlink(), f"{link} is no longer a symbolic link (a directory: {link.is_dir()})"
    wanted = Path(world.observe().agent_dir) / where.removeprefix("$AGENT/")
    assert link.resolve() == wanted.resolve(), f"{link} now leads to {link.resolve()}, not {wanted}"


@then(parsers.re(r'templates/backups holds a file that says "(?P<value>[^"]+)"'))
def _backup_holds(world: World, value: str) -> None:
    backups = agent_dir(world) / "templates" / "backups"
    found = [p.name for p in sorted(backups.iterdir()) if p.is_file()] if backups.is_dir() else []
    assert any(value in (backups / n).read_text(encoding="utf-8") for n in found), f"backups: {found}"


@then("templates/backups holds no file")
def _no_backup(world: World) -> None:
    """H110: only a *different* same-name default is moved to backups/ (an unchanged one stays)."""
    backups = agent_dir(world) / "templates" / "backups"
    found = [p.name for p in sorted(backups.iterdir())] if backups.is_dir() else []
    assert not found, f"backups: {found}"


@then(parsers.re(r'the managed template "(?P<name>[^"]+)" (?P<how>says|no longer says) "(?P<value>[^"]+)"'))
def _managed_says(world: World, name: str, how: str, value: str) -> None:
    path = agent_dir(world) / "templates" / name
    assert path.is_file(), f"{path} is missing"
    body = path.read_text(encoding="utf-8")
    assert (value in body) == (how == "says"), f"{name}: {body[:200]!r}"


_MENU_REST = ("recover", "setting", "project", "help")


@then(
    parsers.re(
        r"the /sh menu offered (?P<primary>Start|Cancel) first, then Recovery, Settings, Project templates and Help"
    )
)
def _menu_order(world: World, primary: str) -> None:
    selects = new_dialogs(world, "select")
    assert selects, "no /sh menu was offered"
    options = [str(o).lower() for o in selects[0].get("options") or []]
    assert len(options) == 5 and primary.lower() in options[0], f"menu: {options}"
    assert all(word in option for word, option in zip(_MENU_REST, options[1:], strict=True)), (
        f"menu: {options}"
    )


@then("the recovery directory holds exactly one file, with both deferred prompts")
def _one_recovery_file(world: World) -> None:
    files = recovery_files(world)
    deferred = world.remembered.get("deferred") or []
    assert len(files) == 1, f"recovery files: {sorted(files)}"
    body = next(iter(files.values()))
    assert deferred and all(p in body for p in deferred), body


@then("the recovery file still holds the deferred prompts")
def _recovery_kept(world: World) -> None:
    files = recovery_files(world)
    deferred = world.remembered.get("deferred") or []
    assert any(deferred and all(p in body for p in deferred) for body in files.values()), (
        f"recovery files: {sorted(files)}"
    )


@then("Pi stayed in the receiver session")
def _stayed(world: World) -> None:
    obs = world.observe()
    assert str(obs.session_file) == str(source_file(world)), f"switched to {obs.session_file}"
    starts = [e for e in obs.events("session_start") if e.get("reason") == "new"]
    assert len(starts) == 1, f"session switches: {len(starts)}"


@then("the source model was asked nothing after the accepted Finish but the writer's last reply")
def _nothing_after_finish(world: World) -> None:
    results = [r for r in tool_results(source_entries(world), oracle.FINISH_TOOL) if not r.get("isError")]
    assert results, "no accepted Finish"
    call_id = str(results[-1].get("toolCallId"))
    after = [
        r
        for r in world.observe().requests("agent")
        if any(call_id in json.dumps(m) for m in r.request.messages)
    ]
    assert len(after) == 1, f"{len(after)} source model requests after the accepted Finish"


@then("Pi switched away from the source session")
def _switched_away(world: World) -> None:
    obs = world.observe()
    assert obs.session_file is not None and str(obs.session_file) != str(source_file(world)), (
        "Pi is still in the source session"
    )


@then("the extension opened no dialog and started nothing")
def _no_dialog(world: World) -> None:
    """A positive witness that the implementation answered (a notification), and no dialog."""
    dialogs = new_dialogs(world)
    assert not dialogs, f"dialogs: {dialogs}"
    assert notes(world), "the implementation said nothing about the command"
    assert not widget_texts(world), widget_texts(world)


# ===================================================================== the declarations the model reads
_NOT_REQUESTS = ("discuss", "question", "critic", "test", "mention")


def _declarations(world: World, name: str) -> list[dict[str, Any]]:
    declared = tool_declarations(world).get(name)
    assert declared, f"no request body the model received declares {name}: {sorted(tool_declarations(world))}"
    return declared


@then("every blitz_handoff declaration the model received offers start only on an explicit user request")
def _start_description(world: World) -> None:
    """H10: the rule lives in the description the model reads (the spec: "explicit user request
    only; discussion/questions/criticism/testing/mentions ≠ request")."""
    for declaration in _declarations(world, oracle.STATUS_TOOL):
        description = str(declaration.get("description") or "")
        lowered = description.lower()
        explicit = "start" in lowered and "explicit" in lowered and ("request" in lowered or "ask" in lowered)
        assert explicit, (
            f"the description does not restrict start to an explicit user request: {description!r}"
        )
        missing = [stem for stem in _NOT_REQUESTS if stem not in lowered]
        assert not missing, f"the description does not say {missing} are no request: {description!r}"


@then("every session_handoff_finish declaration the model received takes only the id")
def _finish_parameters(world: World) -> None:
    """H29c: Finish's parameters declare ``id`` and nothing else (no content or path)."""
    for declaration in _declarations(world, oracle.FINISH_TOOL):
        parameters = declaration.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        assert isinstance(properties, dict) and sorted(properties) == ["id"], (
            f"Finish declares parameters {parameters!r}"
        )
        required = parameters.get("required") if isinstance(parameters, dict) else None
        assert required == ["id"], f"Finish does not require its id: {parameters!r}"


@then("Pi rejected the extension's send of the recovered prompts because the session was busy")
def _send_rejected(world: World) -> None:
    """The send met a streaming session without ``deliverAs``: Pi throws "Agent is already
    processing" (core/agent-session.js:1760) and records it as the extension's error."""
    errors = [str(e.get("error")) for e in world.observe().session("extension_error")]
    assert any("already processing" in e for e in errors), f"no rejected send: {errors}"
    assert "run the tests" not in "\n".join(u for u in world.observe().user_messages()), (
        "the recovered prompts reached the session"
    )


@then("a warning or error notification names the recovery file that could not be deleted")
def _recovery_cleanup_reported(world: World) -> None:
    """H44b: the failed cleanup is reported as a failure (warning or error level, naming the
    file), and no notification at the plain info level names the file."""
    files = recovery_files(world)
    assert len(files) == 1, f"recovery files: {sorted(files)}"
    name = next(iter(files))
    obs = world.observe()
    naming = [(m, t) for m, t in obs.notifications if name in m]
    assert any(t in ("warning", "error") for _, t in naming), f"notifications naming {name}: {naming}"
    assert not [m for m, t in naming if t not in ("warning", "error")], f"reported as success: {naming}"


@then("a warning or error notification names the recovery directory")
def _recovery_dir_failure_reported(world: World) -> None:
    """H48: a snapshot that could not be written is a capture status the user is told about, as a
    failure (warning or error), with the directory the file was to go to."""
    where = str(recovery_dir(world))
    said = [(m, t) for m, t in world.observe().notifications if where in m]
    assert any(t in ("warning", "error") for _, t in said), f"notifications naming {where}: {said}"


@then(parsers.re(r'a warning or error notification names "(?P<value>[^"]+)"'))
def _failure_names(world: World, value: str) -> None:
    """A failed removal is reported as a failure (warning or error level) naming the file."""
    said = [(m, t) for m, t in world.observe().notifications[last_mark(world).notifications :] if value in m]
    assert any(t in ("warning", "error") for _, t in said), f"notifications naming {value}: {said}"


@then(parsers.re(r'the last status widget showed "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'))
def _last_widget_both(world: World, a: str, b: str) -> None:
    texts = [t or "" for t in widget_texts(world)]
    assert texts, "the implementation never showed a widget"
    assert a in texts[-1] and b in texts[-1], f"the last widget: {texts[-1]!r} (all: {texts})"


@then(parsers.re(r"the last status widget showed a (?P<label>Wait|Handoff) Time of (?P<n>\d+) seconds"))
def _time_of(world: World, label: str, n: str) -> None:
    """H67: Wait Time runs from the request, Handoff Time to the receiver's successful turn, so a
    phase of ``n`` seconds of virtual time (and the milliseconds of work around it) shows as
    exactly ``n`` whole seconds. It read "at least ``n - 1``" while the simulator's wall clock ran
    ahead of its event loop, one millisecond per read, and a 5 s phase showed 0:04."""
    texts = [t or "" for t in widget_texts(world)]
    assert texts, "the implementation never showed a widget"
    found = re.search(label + r" Time (\d+):(\d\d)", texts[-1])
    assert found, f"the last widget: {texts[-1]!r}"
    shown = int(found.group(1)) * 60 + int(found.group(2))
    assert shown == int(n), f"the last widget: {texts[-1]!r} (all: {texts})"


@then(parsers.re(r'exactly one notification names "(?P<value>[^"]+)"'))
def _notified_once(world: World, value: str) -> None:
    said = notes(world)
    naming = [n for n in said if value in n]
    assert len(naming) == 1, f"notifications naming {value!r}: {naming} (all: {said})"


@then(parsers.re(r'every status widget showed "(?P<every>[^"]+)", and the last one "(?P<last>[^"]+)"'))
def _widget_times(world: World, every: str, last: str) -> None:
    """H67: the recorded times, as the widget renders them (virtual time: the scripted latencies)."""
    texts = [t or "" for t in widget_texts(world)]
    assert texts, "the implementation never showed a widget"
    label = every.rsplit(" ", 1)[0]  # "Wait Time"
    timed = [t for t in texts if label in t]
    assert timed and all(every in t for t in timed), f"widget texts: {texts}"
    assert last in texts[-1], f"the last widget: {texts[-1]!r} (all: {texts})"
