"""Steps of the pi-blitz-handoff features, in the user's language.

The scripted model plays the writer and the receiver through native tool calls. Values it
cannot know in advance (the reserved dossier path, the Finish ID, the path in the bootstrap
prompt) are taken from what it was sent, with ``{{match:REGEX}}`` arguments (see
``docs/scenario-format.md``): the same script works on the simulator and on real Pi.

Conventions: the handoff settings live in ``$AGENT/pi-blitz-handoff/config.json``; a step
that sets them writes the file and reloads Pi (the extension reads it at ``session_start``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_bdd import given, parsers, then, when

from pi_continuity_harness.features.steps.common import current_mark, number
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import HttpError, Reply, ScriptedToolCall
from pi_continuity_harness.scenario.operations import DialogAnswer, EditFileOp, PromptOp, ReloadOp
from pi_continuity_harness.scenario.transcript import content_text

MANAGED = "pi-blitz-handoff"
DOSSIER_TEXT = "# Dossier: task T-42\n\nNext action: continue task T-42 at step 3.\n"
FINISH_ID = r"{{match:Finish ID: (\S+)}}"
DOSSIER_FILE = r"{{match:Dossier file: (\S+)}}"
BOOTSTRAP_FILE = r"{{match:read the entire file (\S+)}}"
WIDGET = "pi-blitz-handoff"


# ===================================================================== helpers
def _begin(world: World) -> None:
    world.remembered["mark"] = current_mark(world)


def _call(name: str, arguments: dict[str, Any] | None = None, call_id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments or {}, id=call_id)


def _get() -> Reply:
    return Reply(text="", tool_calls=(_call("session_handoff_get_template"),), context_tokens=12_000)


def _write(content: str = DOSSIER_TEXT) -> Reply:
    return Reply(
        tool_calls=(_call("write", {"path": DOSSIER_FILE, "content": content}),), context_tokens=12_500
    )


def _finish(finish_id: str = FINISH_ID) -> Reply:
    return Reply(tool_calls=(_call("session_handoff_finish", {"id": finish_id}),), context_tokens=13_000)


def _receiver() -> list[Reply]:
    """The receiver reads the dossier and deletes exactly the file its bootstrap prompt names
    for deletion (with deletion off no file is named: the ``rm`` gets the unmatched placeholder)."""
    return [
        Reply(tool_calls=(_call("read", {"path": BOOTSTRAP_FILE}),), context_tokens=3_000),
        Reply(
            tool_calls=(_call("bash", {"command": "rm -f " + r"{{match:delete exactly this file: (\S+)}}"}),),
            context_tokens=3_200,
        ),
        Reply(text="Continuing task T-42 from the dossier.", context_tokens=3_500),
    ]


def _submitted_then_receiver() -> list[Reply]:
    """The writer's last reply after an accepted Finish, then the receiver's replies."""
    return [Reply(text="Handoff submitted.", context_tokens=13_200), *_receiver()]


def _scripted(world: World, *replies: Reply) -> None:
    """Start Pi, remember the source session, script the model's replies, mark the moment."""
    world.start()
    _remember_source(world)
    world.script("agent", *replies)
    _begin(world)


def _sh_start(world: World, *replies: Reply) -> None:
    """:func:`_scripted`, then ``/sh start``."""
    _scripted(world, *replies)
    world.command("/sh start")


def _agent_dir(world: World) -> Path:
    return Path(world.observe().agent_dir) / MANAGED


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _source_file(world: World) -> Path:
    source = world.remembered.get("source_file")
    assert source, "the source session was not remembered before the handoff"
    return Path(str(source))


def _remember_source(world: World) -> None:
    obs = world.observe()
    world.remembered["source_file"] = str(obs.session_file) if obs.session_file else None
    world.remembered["source_id"] = obs.session_id


def _tool_results(entries: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        message = entry.get("message") or {}
        if (
            entry.get("type") == "message"
            and message.get("role") == "toolResult"
            and message.get("toolName") == name
        ):
            out.append(message)
    return out


def _text(message: dict[str, Any]) -> str:
    return content_text(message.get("content"))


def _source_entries(world: World) -> list[dict[str, Any]]:
    source = world.remembered.get("source_file")
    obs = world.observe()
    if source and obs.session_file and str(obs.session_file) != source:
        return _read_lines(Path(str(source)))[1:]
    return obs.entries


def _widget_texts(world: World) -> list[str]:
    return ["\n".join(w.get("lines") or []) for w in world.observe().widgets if w.get("key") == WIDGET]


def _dossier(world: World) -> Path:
    sid = world.remembered.get("source_id") or world.observe().session_id
    return Path(world.observe().project_dir) / ".pi" / f"handoff_{sid}.md"


def _recovery_files(world: World) -> dict[str, str]:
    root = _agent_dir(world) / "recovery"
    if not root.is_dir():
        return {}
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(root.iterdir()) if p.is_file()}


def _notes(world: World, since_mark: bool = True) -> list[str]:
    obs = world.observe()
    mark = world.remembered.get("mark")
    start = mark.notifications if (since_mark and mark is not None) else 0
    return [m for m, _ in obs.notifications[start:]]


def _settings(world: World, data: dict[str, Any]) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$AGENT/{MANAGED}/config.json", "json": data}})
    )
    outcome = world.perform(ReloadOp())
    assert outcome.ok, f"reload failed: {outcome.error}"


# ===================================================================== given
@given(parsers.re(r"the handoff settings are (?P<value>\{.*\})"))
def _given_settings(world: World, value: str) -> None:
    _settings(world, json.loads(value))


@given(parsers.re(r'a file "(?P<name>[^"]+)" already sits where this session\'s dossier goes'))
def _given_leftover(world: World, name: str) -> None:
    world.start()
    sid = world.observe().session_id
    world.remembered["source_id"] = sid
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": f".pi/handoff_{sid}.md", "text": f"{name}: not the extension's\n"}}
        )
    )


@given(
    parsers.re(
        r'the recovery directory holds "(?P<name>[^"]+)" with the prompts "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'
    )
)
def _given_recovery(world: World, name: str, a: str, b: str) -> None:
    world.start()
    text = f"--- Deferred Prompt 1 of 2 ---\n{a}\n\n--- Deferred Prompt 2 of 2 ---\n{b}\n"
    world.remembered["recovery_text"] = text
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$AGENT/{MANAGED}/recovery/{name}", "text": text}})
    )


@given(parsers.re(r'the managed template "(?P<name>[^"]+)" says "(?P<text>[^"]+)"'))
def _given_template(world: World, name: str, text: str) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": f"$AGENT/{MANAGED}/templates/{name}", "text": text + "\n"}}
        )
    )


# ===================================================================== when: starting and writing
@when('the user runs "/sh start" and the model writes the handoff and finishes it')
def _start_and_finish(world: World) -> None:
    _sh_start(world, _get(), _write(), _finish(), *_submitted_then_receiver())


@given(parsers.re(r"the model asks for the template (?P<times>twice|once) and then stops"))
@when(parsers.re(r"the model asks for the template (?P<times>twice|once) and then stops"))
def _get_then_stop(world: World, times: str) -> None:
    gets = [_get()] * (2 if times == "twice" else 1)
    _sh_start(world, *gets, Reply(text="Template received.", context_tokens=12_200))


@when(parsers.re(r'the model asks for the template and calls Finish with the ID "(?P<value>[^"]+)"'))
def _get_then_finish_with(world: World, value: str) -> None:
    _sh_start(world, _get(), _finish(value), Reply(text="done", context_tokens=13_100))


@when('the user runs "/sh start" and the model calls Finish before asking for the template')
def _finish_first(world: World) -> None:
    _sh_start(world, _finish("made-up-id"), Reply(text="I could not finish.", context_tokens=12_100))


@when("the model writes the handoff and calls Finish twice with the returned ID")
def _finish_twice(world: World) -> None:
    _sh_start(world, _get(), _write(), _finish(), _finish(), *_submitted_then_receiver())


@when(parsers.re(r'the user sends "(?P<a>[^"]+)" and "(?P<b>[^"]+)" while the model writes the handoff'))
def _prompts_while_writing(world: World, a: str, b: str) -> None:
    during = (
        PromptOp.model_validate({"prompt": {"text": a, "streaming_behavior": "followUp"}}),
        PromptOp.model_validate({"prompt": {"text": b}}),
    )
    held_write = Reply(
        tool_calls=(_call("write", {"path": DOSSIER_FILE, "content": DOSSIER_TEXT}),),
        context_tokens=12_500,
        during=during,
    )
    world.remembered["deferred"] = [a, b]
    _sh_start(world, _get(), held_write, _finish(), *_submitted_then_receiver())


@when(parsers.re(r'the user sends "(?P<a>[^"]+)" while the model waits before asking for the template'))
def _prompt_while_waiting(world: World, a: str) -> None:
    during = (PromptOp.model_validate({"prompt": {"text": a, "streaming_behavior": "followUp"}}),)
    world.remembered["deferred"] = [a]
    _sh_start(world, Reply(text="Looking at the task first.", context_tokens=12_000, during=during))


@when(parsers.re(r'the user sends "(?P<text>[^"]+)"'))
def _user_sends(world: World, text: str) -> None:
    world.start()
    _begin(world)
    world.remembered["last_prompt"] = world.prompt(text)


@when(
    parsers.re(
        r"the model takes (?P<seconds>\d+) seconds before asking for the template, then writes and finishes"
    )
)
def _slow_writer(world: World, seconds: str) -> None:
    _sh_start(
        world,
        Reply(text="Thinking about the checkpoint.", context_tokens=12_000, latency_ms=int(seconds) * 1000),
        _get(),
        _write(),
        _finish(),
        *_submitted_then_receiver(),
    )


@when(parsers.re(r"a handoff is requested and the model's next reply reports (?P<n>\d[\d,]*) context tokens"))
def _request_then_full(world: World, n: str) -> None:
    tokens = number(n)
    _sh_start(
        world,
        Reply(text="Gathering more context.", context_tokens=tokens),
        _get(),
        _write(),
        _finish(),
        Reply(text="Handoff submitted.", context_tokens=tokens + 100),
        *_receiver(),
    )


@when(parsers.re(r"the next turn reports (?P<n>\d[\d,]*) context tokens"))
def _turn_reports(world: World, n: str) -> None:
    world.start()
    _begin(world)
    world.script("agent", Reply(text="A turn of work.", context_tokens=number(n)))
    world.prompt("continue the task")


@when("the model asks for the template and the user cancels the handoff")
def _get_then_cancel(world: World) -> None:
    _sh_start(world, _get(), Reply(text="Template received.", context_tokens=12_200))
    world.remembered["dossier_after_get"] = _dossier(world).exists()
    _begin(world)
    world.command("/sh cancel")


@when(
    parsers.re(
        r'a file "(?P<name>[^"]+)" appears where the dossier goes while the model prepares, and the user cancels'
    )
)
def _intruder(world: World, name: str) -> None:
    world.start()
    sid = world.observe().session_id
    intrude = EditFileOp.model_validate(
        {"edit_file": {"path": f".pi/handoff_{sid}.md", "text": f"{name}: not the extension's\n"}}
    )
    _sh_start(
        world,
        Reply(
            tool_calls=(_call("bash", {"command": "echo preparing"}),),
            context_tokens=11_000,
            during=(intrude,),
        ),
        _get(),
        Reply(text="The file is taken.", context_tokens=12_000),
    )
    world.command("/sh cancel")


@when("the model is asked to start a handoff and asks for the template at once")
def _model_start(world: World) -> None:
    _scripted(
        world,
        Reply(tool_calls=(_call("blitz_handoff", {"action": "start"}),), context_tokens=11_000),
        _get(),
        _write(),
        _finish(),
        *_submitted_then_receiver(),
    )
    world.prompt("Please hand this session off now.")


@when("the model is asked to start a handoff, asks for the template at once and stops")
def _model_start_stop(world: World) -> None:
    _scripted(
        world,
        Reply(tool_calls=(_call("blitz_handoff", {"action": "start"}),), context_tokens=11_000),
        _get(),
        Reply(text="I have the template and will write it next.", context_tokens=12_000),
    )
    world.prompt("Please hand this session off now.")


@when("the model checks the handoff status")
def _model_status(world: World) -> None:
    _scripted(
        world,
        Reply(tool_calls=(_call("blitz_handoff", {"action": "status"}),), context_tokens=11_000),
        Reply(text="Reported.", context_tokens=11_100),
    )
    world.prompt("How full is the context?")


@when(parsers.re(r'the user chooses "(?P<option>[^"]+)" for "(?P<name>[^"]+)" in /sh recover'))
def _recover(world: World, option: str, name: str) -> None:
    world.start()
    _remember_source(world)
    answers = [
        DialogAnswer(select=f"/{re.escape(name)}/"),
        DialogAnswer(select=option),
    ]
    if option == "Discard":
        answers.append(DialogAnswer(confirm=True))
    if option == "Inspect":
        answers.append(DialogAnswer(cancel=True))
        answers.append(DialogAnswer(cancel=True))
    _begin(world)
    world.command("/sh recover", answers)


@given(parsers.re(r"the model will (?P<how>answer the next turn|fail the next turn with a provider error)"))
def _next_turn(world: World, how: str) -> None:
    reply = (
        Reply(text="Handled both prompts.", context_tokens=4_000)
        if how.startswith("answer")
        else Reply(error=HttpError(status=400, message="bad request"))
    )
    world.script("agent", reply)


@when(parsers.re(r'the user sets "(?P<key>[^"]+)" to "(?P<value>[^"]*)" in /sh settings'))
def _set_setting(world: World, key: str, value: str) -> None:
    world.start()
    answers = [DialogAnswer(select=f"/^{key}:/")]
    if key in ("automaticSessionHandoff", "deleteHandoffAfterReading"):
        answers.append(DialogAnswer(select=value))
    elif key == "deferPromptsFrom":
        answers.append(DialogAnswer(select=f"/^{value}/i"))
    elif key in ("recoveryDirectory", "templateDirectory"):
        path = value.replace("$WORK", str(world.observe().project_dir.parent))
        answers += [DialogAnswer(input=path), DialogAnswer(confirm=True)]
    else:
        answers.append(DialogAnswer(input=value))
    answers.append(DialogAnswer(cancel=True))
    world.remembered["config_before"] = _config_bytes(world)
    _begin(world)
    world.command("/sh settings", answers)


@when(
    parsers.re(r'the user selects "(?P<name>[^"]+)" as the (?P<role>Call|Handoff) template of this directory')
)
def _project_template(world: World, name: str, role: str) -> None:
    world.start()
    answers = [
        DialogAnswer(select=f"/^{role}:/"),
        DialogAnswer(select=name if name.startswith("<") else f"/{re.escape(name)}/"),
        DialogAnswer(cancel=True),
    ]
    _begin(world)
    world.command("/sh project-template", answers)


@when("the user opens the /sh menu and dismisses it")
def _menu_dismissed(world: World) -> None:
    world.start()
    _begin(world)
    world.command("/sh", [DialogAnswer(cancel=True)])


def _config_bytes(world: World) -> bytes | None:
    path = _agent_dir(world) / "config.json"
    return path.read_bytes() if path.exists() else None


# ===================================================================== then: the transfer
@then("Pi switched to a new session whose header links to the source session")
def _parent_linked(world: World) -> None:
    obs = world.observe()
    source = _source_file(world)
    assert obs.session_file is not None and obs.session_file != source, "Pi did not switch sessions"
    header = _read_lines(obs.session_file)[0]
    assert header.get("parentSession") == str(source), f"header: {header}"
    starts = [e for e in obs.events("session_start") if e.get("reason") == "new"]
    assert starts and starts[-1].get("previousSessionFile") == str(source), f"session_start events: {starts}"


@then("Pi switched to a new independent master session")
def _independent(world: World) -> None:
    obs = world.observe()
    source = _source_file(world)
    assert obs.session_file is not None and obs.session_file != source, "Pi did not switch sessions"
    header = _read_lines(obs.session_file)[0]
    assert "parentSession" not in header, f"header: {header}"


@then("Pi did not switch sessions")
def _no_switch(world: World) -> None:
    obs = world.observe()
    assert str(obs.session_file) == str(_source_file(world)), f"switched to {obs.session_file}"
    assert not [e for e in obs.events("session_start") if e.get("reason") == "new"]


@then("the receiver's first prompt names the dossier's absolute path and nothing of the source history")
def _bootstrap(world: World) -> None:
    obs = world.observe()
    users = obs.user_messages()
    assert users, "the new session has no user message"
    dossier = str(_dossier(world))
    assert dossier in users[0], f"first prompt: {users[0]!r}"
    receiver_requests = [r for r in obs.requests("agent") if dossier in r.last_user_text()]
    assert receiver_requests, "no model request carried the bootstrap prompt"
    first = receiver_requests[0].request.messages
    assert [m.get("role") for m in first if m.get("role") != "system"] == ["user"], f"history leaked: {first}"


@then("the receiver read the whole dossier")
def _read_whole(world: World) -> None:
    reads = _tool_results(world.observe().entries, "read")
    assert reads and DOSSIER_TEXT.strip() in _text(reads[0]), f"read results: {reads}"


@then("the bootstrap prompt tells the receiver to delete exactly the dossier after reading it")
def _bootstrap_delete(world: World) -> None:
    first = world.observe().user_messages()[0]
    assert f"delete exactly this file: {_dossier(world)}" in first, first


@then("the bootstrap prompt tells the receiver to leave the dossier unchanged")
def _bootstrap_keep(world: World) -> None:
    first = world.observe().user_messages()[0]
    assert "Leave the file unchanged" in first and "delete" not in first, first


@then("the dossier is gone after the receiver's completed turn")
def _dossier_gone(world: World) -> None:
    assert not _dossier(world).exists(), f"{_dossier(world)} still exists"


@then("the dossier is still there, unchanged")
def _dossier_kept(world: World) -> None:
    path = _dossier(world)
    assert path.exists() and path.read_text(encoding="utf-8").startswith(DOSSIER_TEXT), f"{path}"


@then(parsers.re(r'the status widget showed "(?P<text>[^"]+)"'))
def _widget_showed(world: World, text: str) -> None:
    texts = _widget_texts(world)
    assert any(text in t for t in texts), f"widget texts: {texts}"


@then(parsers.re(r'the status widget now shows "(?P<text>[^"]+)"'))
def _widget_now(world: World, text: str) -> None:
    texts = _widget_texts(world)
    assert texts and text in texts[-1], f"widget texts: {texts}"


# ===================================================================== then: GET and Finish
@then("both template responses name the same dossier file and the same Finish ID")
def _same_snapshot(world: World) -> None:
    results = _tool_results(_source_entries(world), "session_handoff_get_template")
    assert len(results) == 2, f"GET results: {results}"
    pairs = []
    for result in results:
        text = _text(result)
        file = re.search(r"Dossier file: (\S+)", text)
        fid = re.search(r"Finish ID: (\S+)", text)
        assert file and fid, text
        pairs.append((file.group(1), fid.group(1)))
    assert pairs[0] == pairs[1], pairs
    assert pairs[0][0] == str(_dossier(world))
    assert pairs[0][1] != world.remembered.get("source_id"), "the Finish ID is the session ID"


@then("the template response carries the Call instruction exactly once")
def _call_once(world: World) -> None:
    entries = _source_entries(world)
    results = _tool_results(entries, "session_handoff_get_template")
    assert results and "## Call instruction" in _text(results[0]), results
    users = [e for e in entries if (e.get("message") or {}).get("role") == "user"]
    calls = [u for u in users if "Session Handoff requested" in _text(u.get("message") or {})]
    assert not calls, f"the Call instruction was also sent as a prompt: {calls}"


@then("the dossier file is reserved, empty and owner-only")
def _reserved(world: World) -> None:
    path = _dossier(world)
    assert path.exists() and path.stat().st_size == 0, f"{path}"
    assert path.stat().st_mode & 0o077 == 0, oct(path.stat().st_mode)


@then(parsers.re(r'the Finish call was rejected as "(?P<reason>[^"]+)"'))
def _finish_rejected(world: World, reason: str) -> None:
    results = _tool_results(_source_entries(world), "session_handoff_finish")
    assert results, "no Finish result"
    rejected = [r for r in results if r.get("isError") and reason in _text(r)]
    assert rejected, f"Finish results: {[_text(r) for r in results]}"


@then(parsers.re(r"exactly (?P<n>\d+) Finish calls? (?:was|were) accepted"))
def _finish_accepted(world: World, n: str) -> None:
    results = _tool_results(_source_entries(world), "session_handoff_finish")
    accepted = [r for r in results if not r.get("isError")]
    assert len(accepted) == int(n), f"Finish results: {[_text(r) for r in results]}"


# ===================================================================== then: deferral and recovery
@then("the deferred prompts never reached the source model")
def _not_reached(world: World) -> None:
    source_entries = _source_entries(world)
    for text in world.remembered["deferred"]:
        for request in world.observe().requests("agent"):
            if str(_dossier(world)) in request.last_user_text():
                continue  # the receiver reads them from the dossier
            for message in request.request.messages:
                if message.get("role") == "user":
                    assert _text(message) != text, f"{text!r} reached the model"
        assert not any(_text(e.get("message") or {}) == text for e in source_entries)


@then("the recovery file holds the deferred prompts unchanged, in order, with boundaries")
def _recovery_holds(world: World) -> None:
    files = _recovery_files(world)
    assert len(files) == 1, f"recovery files: {list(files)}"
    prompts = world.remembered["deferred"]
    expected = (
        "\n\n".join(f"--- Deferred Prompt {i} of {len(prompts)} ---\n{p}" for i, p in enumerate(prompts, 1))
        + "\n"
    )
    assert next(iter(files.values())) == expected


@then("the recovery file is named after the UTC time in milliseconds and the source session ID")
def _recovery_name(world: World) -> None:
    names = list(_recovery_files(world))
    sid = re.sub(r"[^A-Za-z0-9-]", "-", str(world.remembered.get("source_id")))
    assert len(names) == 1 and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-" + re.escape(sid) + r"\.md", names[0]
    ), names


@then("the recovery directory holds no file")
def _no_recovery(world: World) -> None:
    assert _recovery_files(world) == {}, list(_recovery_files(world))


@then("the dossier ends with the deferred prompts, in order")
def _dossier_has_prompts(world: World) -> None:
    reads = _tool_results(world.observe().entries, "read")
    assert reads, "the receiver read nothing"
    text = _text(reads[0])
    positions = [text.find(p) for p in world.remembered["deferred"]]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), text


@then(parsers.re(r'"(?P<name>[^"]+)" is (?P<state>gone|still in the recovery directory)'))
def _recovery_state(world: World, name: str, state: str) -> None:
    files = _recovery_files(world)
    assert (name in files) == (state != "gone"), f"recovery files: {list(files)}"


@then("both recovered prompts reached the model as one turn, in order")
def _one_turn(world: World) -> None:
    text = world.remembered["recovery_text"]
    users = world.observe().user_messages()
    assert users.count(text) == 1, users


@then("a notification showed the whole recovery file")
def _inspected(world: World) -> None:
    assert world.remembered["recovery_text"] in _notes(world), _notes(world)


# ===================================================================== then: reminder and emergency
def _custom_entries(world: World, custom_type: str) -> list[dict[str, Any]]:
    entries = _source_entries(world)
    return [e for e in entries if e.get("type") == "custom_message" and e.get("customType") == custom_type]


@then(parsers.re(r"exactly (?P<n>\d+) handoff reminders? (?:was|were) shown"))
def _reminders(world: World, n: str) -> None:
    found = _custom_entries(world, "pi-blitz-handoff-reminder")
    assert len(found) == int(n), f"reminders: {found}"


@then(parsers.re(r"the emergency instruction was (?P<how>sent once|not sent)"))
def _emergency(world: World, how: str) -> None:
    found = _custom_entries(world, "pi-blitz-handoff-emergency")
    assert len(found) == (1 if how == "sent once" else 0), f"emergency messages: {found}"
    if found:
        assert "at least 90%" in str(found[0].get("content")), found


@then(parsers.re(r"(?P<n>no|one) automatic handoff request was made"))
def _automatic(world: World, n: str) -> None:
    requests = [
        e
        for e in world.observe().entries
        if e.get("type") == "custom_message" and e.get("customType") == "pi-blitz-handoff-call"
    ]
    mark = world.remembered.get("auto_seen", 0)
    new = requests[mark:]
    world.remembered["auto_seen"] = len(requests)
    assert len(new) == (0 if n == "no" else 1), f"automatic requests since the last check: {new}"


# ===================================================================== then: cancel, settings, misc
@then("the owned dossier reservation was removed")
def _reservation_removed(world: World) -> None:
    assert world.remembered.get("dossier_after_get"), "the reservation did not exist before the cancel"
    assert not _dossier(world).exists()


@then("the template request was refused because the file exists")
def _get_refused(world: World) -> None:
    results = _tool_results(_source_entries(world), "session_handoff_get_template")
    assert results and all(r.get("isError") for r in results), [_text(r) for r in results]


@then(parsers.re(r'the file "(?P<name>[^"]+)" is untouched'))
def _foreign_untouched(world: World, name: str) -> None:
    path = _dossier(world)
    assert path.read_text(encoding="utf-8") == f"{name}: not the extension's\n"


@then(parsers.re(r'a notification says "(?P<text>[^"]+)"'))
def _notified(world: World, text: str) -> None:
    notes = _notes(world)
    assert any(text in n for n in notes), f"notifications: {notes}"


@then(parsers.re(r'the handoff config file holds "(?P<key>[^"]+)" = (?P<value>.+)'))
def _config_holds(world: World, key: str, value: str) -> None:
    path = _agent_dir(world) / "config.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    expected = json.loads(value.replace("$WORK", json.dumps(str(world.observe().project_dir.parent))[1:-1]))
    assert data.get(key) == expected, f"{key}: {data.get(key)!r}"
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers, leftovers


@then("the handoff config file is unchanged")
def _config_unchanged(world: World) -> None:
    assert _config_bytes(world) == world.remembered.get("config_before")


@then(
    parsers.re(
        r'the project templates file assigns "(?P<name>[^"]+)" to the (?P<role>call|handoff) role of this directory'
    )
)
def _project_file(world: World, name: str, role: str) -> None:
    data = json.loads((_agent_dir(world) / "project-templates.json").read_text(encoding="utf-8"))
    cwd = str(world.observe().project_dir)
    assert data["projects"][cwd][role] == name, data


@then(parsers.re(r'the handoff request the model received starts with "(?P<text>[^"]+)"'))
def _call_text(world: World, text: str) -> None:
    users = [
        _text(e.get("message") or {})
        for e in _source_entries(world)
        if (e.get("message") or {}).get("role") == "user"
    ]
    assert any(u.startswith(text) for u in users), users


@then("no handoff was requested")
def _nothing_requested(world: World) -> None:
    assert not _widget_texts(world), _widget_texts(world)
    assert not world.observe().model_requests[world.remembered["mark"].model_requests :]


@then(parsers.re(r'the status tool reported "(?P<text>[^"]+)"'))
def _status_reported(world: World, text: str) -> None:
    results = _tool_results(world.observe().entries, "blitz_handoff")
    assert results and text in _text(results[-1]), [_text(r) for r in results]


@then("the prompt was handled by the extension and never reached the model")
def _prompt_handled(world: World) -> None:
    outcome = world.remembered["last_prompt"]
    assert outcome.disposition == "handled", outcome
    mark = world.remembered["mark"]
    assert not world.observe().model_requests[mark.model_requests :], "a model request followed"
