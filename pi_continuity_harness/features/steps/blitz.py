"""Steps of the pi-blitz-handoff features, in the user's language: Given and When, and the helpers
the Then steps (:mod:`.blitz_then`) share.

The scripted model plays the writer and the receiver through native tool calls. Values it
cannot know in advance (the reserved dossier path, the Finish ID, the path in the bootstrap
prompt) are taken from what it was sent, with ``{{match:REGEX}}`` arguments (see
``docs/scenario-format.md``), and the regexes are the suite's reading of the reference
(:mod:`pi_continuity_harness.features.blitz_oracle`), never the reference implementation's
wording: the same script works on the simulator and on real Pi, for any implementation.

Conventions: the handoff settings live in ``$AGENT/pi-blitz-handoff/config.json``; a step
that sets them writes the file and reloads Pi (the extension reads it at ``session_start``).
``/sh`` menus are driven by what the reference fixes: a settings key is picked by its name, a
recovery file by its name, an action by its word (Inspect, Execute, Discard), a template role
by Call or Handoff.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from pytest_bdd import given, parsers, when

from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.steps.common import current_mark, new_session_events, number
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import HttpError, Reply, ScriptedToolCall
from pi_continuity_harness.scenario.operations import (
    AbortOp,
    CommandOp,
    CompactOp,
    DialogAnswer,
    EditFileOp,
    NewSessionOp,
    PromptOp,
    ReloadOp,
    SwitchSessionOp,
)
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.scenario.transcript import content_text

MANAGED = oracle.MANAGED_DIR
DOSSIER_TEXT = "# Dossier: task T-42\n\nNext action: continue task T-42 at step 3.\n"
FINISH_ID = "{{match:" + oracle.FINISH_ID_MATCH + "}}"
DOSSIER_FILE = "{{match:" + oracle.DOSSIER_MATCH + "}}"
DELETE_FILE = "{{match:" + oracle.DELETION_MATCH + "}}"
#: A text the receiver's reply carries, so steps can tell its turn from the writer's.
RECEIVER_TEXT = "Continuing task T-42 from the dossier."


# ===================================================================== scripting
def begin(world: World) -> None:
    world.remembered["mark"] = current_mark(world)


def call(name: str, arguments: dict[str, Any] | None = None, call_id: str | None = None) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments or {}, id=call_id)


def get_reply(tokens: int = 12_000) -> Reply:
    return Reply(text="", tool_calls=(call(oracle.GET_TOOL),), context_tokens=tokens)


def write_reply(content: str = DOSSIER_TEXT) -> Reply:
    return Reply(
        tool_calls=(call("write", {"path": DOSSIER_FILE, "content": content}),), context_tokens=12_500
    )


def finish_reply(finish_id: str = FINISH_ID) -> Reply:
    return Reply(tool_calls=(call(oracle.FINISH_TOOL, {"id": finish_id}),), context_tokens=13_000)


def receiver_replies() -> list[Reply]:
    """The receiver reads the file its bootstrap prompt names and deletes it only when the prompt
    says so (otherwise the ``rm`` gets the unmatched placeholder, a path that does not exist)."""
    return [
        Reply(tool_calls=(call("read", {"path": DOSSIER_FILE}),), context_tokens=3_000),
        Reply(tool_calls=(call("bash", {"command": "rm -f '" + DELETE_FILE + "'"}),), context_tokens=3_200),
        Reply(text=RECEIVER_TEXT, context_tokens=3_500),
    ]


def submitted_then_receiver() -> list[Reply]:
    """The writer's last reply after an accepted Finish, then the receiver's replies."""
    return [Reply(text="Handoff submitted.", context_tokens=13_200), *receiver_replies()]


def scripted(world: World, *replies: Reply) -> None:
    """Start Pi, remember the source session, script the model's replies, mark the moment."""
    world.start()
    remember_source(world)
    world.script("agent", *replies)
    begin(world)


def sh_start(world: World, *replies: Reply) -> None:
    """:func:`scripted`, then ``/sh start``."""
    scripted(world, *replies)
    world.command("/sh start")


def remember_source(world: World) -> None:
    obs = world.observe()
    world.remembered["source_file"] = str(obs.session_file) if obs.session_file else None
    world.remembered["source_id"] = obs.session_id


def set_handoff_settings(world: World, data: dict[str, Any]) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$AGENT/{MANAGED}/config.json", "json": data}})
    )
    world.remembered["config_written"] = config_bytes(world)
    outcome = world.perform(ReloadOp())
    assert outcome.ok, f"reload failed: {outcome.error}"


# ===================================================================== observing
def agent_dir(world: World) -> Path:
    return Path(world.observe().agent_dir) / MANAGED


def read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in jsonl_lines(path.read_text(encoding="utf-8")) if line.strip()]


def source_file(world: World) -> Path:
    source = world.remembered.get("source_file")
    assert source, "the source session was not remembered before the handoff"
    return Path(str(source))


def source_entries(world: World) -> list[dict[str, Any]]:
    """The source session's entries (from its file once Pi switched away from it)."""
    source = world.remembered.get("source_file")
    obs = world.observe()
    if source and obs.session_file and str(obs.session_file) != source:
        return read_lines(Path(str(source)))[1:]
    return obs.entries


def tool_results(entries: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
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


def text(message: dict[str, Any]) -> str:
    return content_text(message.get("content"))


def extension_texts(world: World) -> set[str]:
    """Every text an extension sent as a user message (``input`` with ``source: "extension"``)."""
    return {str(e.get("text", "")) for e in world.observe().events("input") if e.get("source") == "extension"}


def source_items(world: World, since: int = 0) -> list[oracle.Item]:
    return oracle.items_from_entries(source_entries(world), extension_texts(world))[since:]


def window(world: World) -> int:
    return int(world.current_window())


def handoff_messages(world: World, since: int = 0) -> list[oracle.HandoffMessage]:
    """The extension's messages to the source model since entry ``since``, classified per request
    (:func:`request_starts`): a Call instruction, a reminder and the emergency are each one
    request's (reference: Transfer sequence 1, Deferral, reminder and emergency)."""
    return oracle.classify(source_items(world, since), window(world), starts=request_starts(world))


def request_starts(world: World) -> list[int]:
    """Where in the source transcript a later request of the session began (:func:`next_request`)."""
    return [int(at) for at in world.remembered.get("request_starts", [])]


def next_request(world: World) -> None:
    """The next request of the session begins here: what the extension sends the model from here
    on is that request's, which :func:`~pi_continuity_harness.features.blitz_oracle.classify`
    reads on its own. The transcript does not show where a request ended or began, only the
    steps know: the When steps that call this have just ended the request before with ``/sh
    cancel``, and the next step starts the next one with nothing in between."""
    world.remembered.setdefault("request_starts", []).append(len(source_items(world)))


def widget_texts(world: World) -> list[str | None]:
    """Every widget update of the implementation (None: cleared), in order, as a reader sees it
    (colours left out: :func:`~pi_continuity_harness.features.blitz_oracle.plain`). Any widget
    key: the reference fixes the lines, not the key."""
    return [
        None if w.get("lines") is None else oracle.plain("\n".join(w.get("lines") or []))
        for w in world.observe().widgets
        if w.get("key") not in _FOREIGN_WIDGETS
    ]


#: Widgets the harness itself may set (none today); listed so a future one is not read as ours.
_FOREIGN_WIDGETS: frozenset[str] = frozenset()


def dossier(world: World) -> Path:
    sid = world.remembered.get("source_id") or world.observe().session_id
    return oracle.dossier_path(world.observe().project_dir, str(sid))


def recovery_dir(world: World) -> Path:
    configured = world.remembered.get("recovery_dir")
    return Path(str(configured)) if configured else agent_dir(world) / "recovery"


def recovery_files(world: World) -> dict[str, str]:
    root = recovery_dir(world)
    if not root.is_dir():
        return {}
    # Bytes decoded, not ``read_text``: text mode would turn a prompt's CRLF into LF (H27b).
    # ``surrogateescape``: a file that is not UTF-8 (H86) is still listed, its bad bytes kept as
    # lone surrogates that equal no text a step expects; UTF-8 decodes exactly as before.
    return {
        p.name: p.read_bytes().decode("utf-8", errors="surrogateescape")
        for p in sorted(root.iterdir())
        if p.is_file()
    }


def notes(world: World, since_mark: bool = True) -> list[str]:
    obs = world.observe()
    mark = world.remembered.get("mark")
    start = mark.notifications if (since_mark and mark is not None) else 0
    return [m for m, _ in obs.notifications[start:]]


def registered_tools(world: World) -> set[str]:
    """Every tool Pi declared to the model in an agent request of this run. Not only the latest
    request: Pi declares a tool set when it changes (the transcript's ``toolsAdded``/
    ``toolsRemoved``), so a later request may carry fewer names than the session has."""
    return {name for request in world.observe().requests("agent") for name in request.request.tools}


def tool_declarations(world: World) -> dict[str, list[dict[str, Any]]]:
    """Every declaration of each tool in the request bodies the model received (agent requests),
    by tool name, in request order. The body is what the model reads on both targets: pi-ai's
    ``convertTools`` (pi-ai ``dist/api/openai-completions.js:1124-1155``, sent as ``params.tools``
    at :591) declares each as ``{type: "function", function: {name, description, parameters}}``;
    ``ModelRequest.tools`` keeps only the names."""
    found: dict[str, list[dict[str, Any]]] = {}
    for request in world.observe().requests("agent"):
        body = request.request.body or {}
        for tool in body.get("tools") or []:
            spec = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(spec, dict) and spec.get("name"):
                found.setdefault(str(spec["name"]), []).append(spec)
    return found


def config_bytes(world: World) -> bytes | None:
    path = agent_dir(world) / "config.json"
    return path.read_bytes() if path.exists() else None


def substitute_work(world: World, value: str) -> str:
    """``$PROJECT`` is the project directory (Pi's cwd), ``$WORK`` its parent."""
    project = world.observe().project_dir
    return value.replace("$PROJECT", str(project)).replace("$WORK", str(project.parent))


def substitute_json(world: World, value: str) -> str:
    """:func:`substitute_work` inside a JSON text (the paths JSON-escaped)."""
    project = world.observe().project_dir
    return value.replace("$PROJECT", json.dumps(str(project))[1:-1]).replace(
        "$WORK", json.dumps(str(project.parent))[1:-1]
    )


def project_templates_file(world: World) -> Path:
    return agent_dir(world) / "project-templates.json"


# ===================================================================== given
@given(parsers.re(r'the session id is "(?P<value>[^"]+)"'))
def _given_session_id(world: World, value: str) -> None:
    """Pi's ``--session-id``: the native id the dossier keeps and the recovery file name reduces
    to letters, digits and hyphens (H112, H46a)."""
    world.require_setup("the session id").data["session_id"] = value


@given(parsers.re(r"the handoff settings are (?P<value>\{.*\})"))
def _given_settings(world: World, value: str) -> None:
    world.start()
    set_handoff_settings(world, json.loads(substitute_json(world, value)))


@given(parsers.re(r'a file "(?P<name>[^"]+)" already sits where this session\'s dossier goes'))
def _given_leftover(world: World, name: str) -> None:
    world.start()
    sid = world.observe().session_id
    world.remembered["source_id"] = sid
    path = dossier(world).relative_to(world.observe().project_dir)
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": str(path), "text": f"{name}: not the extension's\n"}}
        )
    )


@given(
    parsers.re(
        r'the recovery directory holds "(?P<name>[^"]+)" with the prompts "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'
    )
)
def _given_recovery(world: World, name: str, a: str, b: str) -> None:
    world.start()
    content = f"--- Deferred Prompt 1 of 2 ---\n{a}\n\n--- Deferred Prompt 2 of 2 ---\n{b}\n"
    world.remembered["recovery_text"] = content
    where = str(world.remembered.get("recovery_dir_op") or f"$AGENT/{MANAGED}/recovery")
    world.perform(EditFileOp.model_validate({"edit_file": {"path": f"{where}/{name}", "text": content}}))


@given(parsers.re(r'the recovery directory is set to "\$AGENT/(?P<name>[^"/]+)"'))
def _given_recovery_setting(world: World, name: str) -> None:
    """``recoveryDirectory`` names a directory of the agent directory outside the managed root
    (H102a: a configured directory replaces the managed one), so a command that builds a recovery
    path from the managed directory instead (H85a: "Discard removes exactly the chosen file")
    misses the file the user chose."""
    world.start()
    world.perform(EditFileOp.model_validate({"edit_file": {"path": f"$AGENT/{name}", "kind": "directory"}}))
    path = str(Path(world.observe().agent_dir) / name)
    set_handoff_settings(world, {"recoveryDirectory": path})
    world.remembered["recovery_dir"] = path
    world.remembered["recovery_dir_op"] = f"$AGENT/{name}"


@given(parsers.re(r'the project holds a plain file "(?P<name>[^"/]+)"'))
def _given_project_file(world: World, name: str) -> None:
    """A regular file in the project, so a directory below it cannot be created (H90a: a rejected
    directory creation must keep the prior value with a hint)."""
    world.start()
    world.perform(EditFileOp.model_validate({"edit_file": {"path": name, "text": "not a directory\n"}}))


@given(
    parsers.re(
        r'the managed directory "(?P<name>[^"/]+)" is a symbolic link to the directory "(?P<where>\$AGENT/[^"]+)"'
    )
)
def _given_managed_link(world: World, name: str, where: str) -> None:
    """H109 ("supports deliberate directory symlinks"): the user moved a managed directory
    elsewhere under the agent directory and left a link in its place (``edit_file`` ``kind:
    symlink``). Pi has started, so the extension has made the real directory; it is replaced by
    the link, and the steps read ``where`` as that directory from then on."""
    world.start()
    managed = f"$AGENT/{MANAGED}/{name}"
    for edit in (
        {"path": where, "kind": "directory"},
        {"path": managed, "kind": "absent"},
        {"path": managed, "kind": "symlink", "target": where},
    ):
        outcome = world.perform(EditFileOp.model_validate({"edit_file": edit}))
        assert outcome.ok, f"edit_file {edit}: {outcome.error}"
    world.remembered[f"managed_link_{name}"] = where
    if name == "recovery":
        world.remembered["recovery_dir"] = str(
            Path(world.observe().agent_dir) / where.removeprefix("$AGENT/")
        )


@given(parsers.re(r'the managed template "(?P<name>[^"]+)" says "(?P<value>[^"]+)"'))
def _given_template(world: World, name: str, value: str) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": f"$AGENT/{MANAGED}/templates/{name}", "text": value + "\n"}}
        )
    )


@given(parsers.re(r'the addendum template "(?P<name>[^"]+)" says "(?P<value>[^"]+)"'))
def _given_addendum_template(world: World, name: str, value: str) -> None:
    """A template in ``$PROJECT/addendum`` (the scenario's ``templateDirectory``)."""
    world.start()
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"addendum/{name}", "text": value + "\n"}})
    )


@given(parsers.re(r'the managed template "(?P<name>[^"]+)" is removed'))
def _given_template_removed(world: World, name: str) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": f"$AGENT/{MANAGED}/templates/{name}", "kind": "absent"}}
        )
    )


@given(parsers.re(r"the project templates file holds (?P<value>\{.*\})"))
def _given_project_templates(world: World, value: str) -> None:
    """``project-templates.json`` as the reference fixes it: ``{"projects": {<abs dir>: {role:
    name}}}`` (``$PROJECT`` is the cwd, ``$WORK`` its parent)."""
    world.start()
    _write_project_templates(world, substitute_json(world, value))


@given(parsers.re(r'the project templates file holds the text "(?P<value>[^"]*)"'))
def _given_project_templates_text(world: World, value: str) -> None:
    world.start()
    _write_project_templates(world, value)


def _write_project_templates(world: World, content: str) -> None:
    world.perform(
        EditFileOp.model_validate(
            {"edit_file": {"path": f"$AGENT/{MANAGED}/project-templates.json", "text": content}}
        )
    )
    world.remembered["project_templates_before"] = project_templates_file(world).read_bytes()


# ===================================================================== when: starting and writing
@when('the user runs "/sh start" and the model writes the handoff and finishes it')
def _start_and_finish(world: World) -> None:
    sh_start(world, get_reply(), write_reply(), finish_reply(), *submitted_then_receiver())


@given(parsers.re(r"the model asks for the template (?P<times>twice|once) and then stops"))
@when(parsers.re(r"the model asks for the template (?P<times>twice|once) and then stops"))
def _get_then_stop(world: World, times: str) -> None:
    gets = [get_reply()] * (2 if times == "twice" else 1)
    sh_start(world, *gets, Reply(text="Template received.", context_tokens=12_200))


@when(parsers.re(r'the model asks for the template and calls Finish with the ID "(?P<value>[^"]+)"'))
def _get_then_finish_with(world: World, value: str) -> None:
    sh_start(
        world, get_reply(), write_reply(), finish_reply(value), Reply(text="done", context_tokens=13_100)
    )


@when('the user runs "/sh start" and the model calls Finish before asking for the template')
def _finish_first(world: World) -> None:
    sh_start(world, finish_reply("made-up-id-1"), Reply(text="I could not finish.", context_tokens=12_100))


@when("the model writes the handoff, calls Finish, asks for the template again and calls Finish again")
def _get_after_finish(world: World) -> None:
    """H29b, H20: a GET after the accepted Finish returns the same snapshot; it does not reopen
    the request for a second Finish."""
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        get_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )


@when(
    parsers.re(
        r"the model writes the handoff, finishes it and takes (?P<seconds>\d+) seconds over its last reply"
    )
)
def _slow_last_reply(world: World, seconds: str) -> None:
    """H49a: the reminder asks to complete the template/Finish flow; a request whose Finish was
    accepted has nothing left to complete, however long the writer's last reply takes."""
    last, *receiver = submitted_then_receiver()
    slow = last.model_copy(update={"latency_ms": int(seconds) * 1000})
    sh_start(world, get_reply(), write_reply(), finish_reply(), slow, *receiver)


@when("the model writes the handoff and calls Finish twice with the returned ID")
def _finish_twice(world: World) -> None:
    sh_start(world, get_reply(), write_reply(), finish_reply(), finish_reply(), *submitted_then_receiver())


def _write_while_user_sends(world: World, a: str, b: str) -> Reply:
    """The model's write of the dossier, held while the user sends ``a`` (as a follow-up) and
    ``b``; both are remembered as the prompts the handoff must defer."""
    during = (
        PromptOp.model_validate({"prompt": {"text": a, "streaming_behavior": "followUp"}}),
        PromptOp.model_validate({"prompt": {"text": b}}),
    )
    world.remembered["deferred"] = [a, b]
    return Reply(
        tool_calls=(call("write", {"path": DOSSIER_FILE, "content": DOSSIER_TEXT}),),
        context_tokens=12_500,
        during=during,
    )


@when(parsers.re(r'the user sends "(?P<a>[^"]+)" and "(?P<b>[^"]+)" while the model writes the handoff'))
def _prompts_while_writing(world: World, a: str, b: str) -> None:
    held_write = _write_while_user_sends(world, a, b)
    sh_start(world, get_reply(), held_write, finish_reply(), *submitted_then_receiver())


@when(parsers.re(r'the user sends "(?P<a>[^"]+)" while the model waits before asking for the template'))
def _prompt_while_waiting(world: World, a: str) -> None:
    during = (PromptOp.model_validate({"prompt": {"text": a, "streaming_behavior": "followUp"}}),)
    world.remembered["deferred"] = [a]
    sh_start(world, Reply(text="Looking at the task first.", context_tokens=12_000, during=during))


#: A prompt whose bytes a normalising capture would change: a decomposed "é" (e + U+0301, which
#: NFC composes) and CRLF line ends (which a newline normalisation turns into LF).
UNNORMALISED_PROMPT = "Cafe\u0301 menu:\r\nkeep the CRLF and the combining accent"


@when(
    "the user sends a prompt with a combining accent and CRLF line ends while the model waits before asking"
    " for the template"
)
def _unnormalised_prompt_while_waiting(world: World) -> None:
    """H27b: "Strings never parsed/classified/summarized/rewritten": byte for byte, so neither
    Unicode normalisation nor line-end conversion."""
    _prompt_while_waiting(world, UNNORMALISED_PROMPT)


@when(parsers.re(r'the user sends "(?P<value>[^"]+)"'))
def _user_sends(world: World, value: str) -> None:
    world.start()
    begin(world)
    world.remembered["last_prompt"] = world.prompt(value)


@when(
    parsers.re(
        r"the model takes (?P<seconds>\d+) seconds before asking for the template, then writes and finishes"
    )
)
def _slow_writer(world: World, seconds: str) -> None:
    sh_start(
        world,
        Reply(text="Thinking about the checkpoint.", context_tokens=12_000, latency_ms=int(seconds) * 1000),
        get_reply(),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )


@when(
    parsers.re(
        r"the model takes (?P<wait>\d+) seconds before asking for the template and (?P<seconds>\d+) seconds"
        r" before writing, then writes and finishes"
    )
)
def _slow_before_and_after_get(world: World, wait: str, seconds: str) -> None:
    """Both times are nonzero: Wait Time (request to GET) and Handoff Time (GET to the
    receiver's turn) can only be told apart when neither is 0:00."""
    slow_get = Reply(tool_calls=(call(oracle.GET_TOOL),), context_tokens=12_000, latency_ms=int(wait) * 1000)
    _draft_slowly_after(world, slow_get, seconds)


@when(
    parsers.re(
        r"the model asks for the template, takes (?P<seconds>\d+) seconds before writing, then writes and finishes"
    )
)
def _slow_after_get(world: World, seconds: str) -> None:
    _draft_slowly_after(world, get_reply(), seconds)


@when(
    parsers.re(
        r"the model asks for the template, takes (?P<seconds>\d+) seconds, and the user types a prompt"
        r" while the handoff is written"
    )
)
def _prompt_while_written_later(world: World, seconds: str) -> None:
    """H67: the prompt is deferred and the widget redrawn ``seconds`` after the template
    request, while the handoff is written: the redraw must not move the recorded Wait Time."""
    thinking = Reply(
        text="Template received; thinking.", context_tokens=12_100, latency_ms=int(seconds) * 1000
    )
    sh_start(world, get_reply(), thinking)
    world.prompt("a prompt typed while the dossier is written")


def _draft_slowly_after(world: World, get: Reply, seconds: str) -> None:
    """``/sh start``: the template request ``get``, a ``seconds``-long drafting turn, then the
    dossier written, Finish called and the receiver's turn."""
    drafting = Reply(
        tool_calls=(call("bash", {"command": "echo drafting"}),),
        context_tokens=12_100,
        latency_ms=int(seconds) * 1000,
    )
    sh_start(world, get, drafting, write_reply(), finish_reply(), *submitted_then_receiver())


@when(
    parsers.re(
        r"the model asks for the template, again after (?P<a>\d+) seconds, then writes after (?P<b>\d+) more"
        r" seconds and finishes"
    )
)
def _repeated_get_later(world: World, a: str, b: str) -> None:
    """H20, H49a: a repeated GET returns the request's snapshot and restarts nothing, so the one
    reminder still comes ``readinessRetrySeconds`` after the clock the Call started."""
    again = Reply(tool_calls=(call(oracle.GET_TOOL),), context_tokens=12_100, latency_ms=int(a) * 1000)
    write = Reply(
        tool_calls=(call("write", {"path": DOSSIER_FILE, "content": DOSSIER_TEXT}),),
        context_tokens=12_500,
        latency_ms=int(b) * 1000,
    )
    sh_start(world, get_reply(), again, write, finish_reply(), *submitted_then_receiver())


@when(
    parsers.re(
        r'the model asks for the template, the managed template "(?P<name>[^"]+)" is changed to say'
        r' "(?P<value>[^"]+)", and the model asks for the template again and stops'
    )
)
def _template_changed_between_gets(world: World, name: str, value: str) -> None:
    """H20: the second GET of the same request returns the request's snapshot, not the file's
    new text (the edit happens while the second GET's reply is held)."""
    edit = EditFileOp.model_validate(
        {"edit_file": {"path": f"$AGENT/{MANAGED}/templates/{name}", "text": value + "\n"}}
    )
    again = Reply(tool_calls=(call(oracle.GET_TOOL),), context_tokens=12_100, during=(edit,))
    sh_start(world, get_reply(), again, Reply(text="Template received.", context_tokens=12_200))


@when(parsers.re(r"a first request is escalated by a reply of (?P<n>\d[\d,]*) context tokens and cancelled"))
def _first_escalated_then_cancelled(world: World, n: str) -> None:
    """A first request gets its emergency (the steering makes one more model call), then the user
    cancels it; the state of that request must not reach the next one (H50: per request)."""
    tokens = number(n)
    sh_start(
        world,
        Reply(text="Gathering more context.", context_tokens=tokens),
        Reply(text="Stopping as the handoff asks.", context_tokens=tokens + 100),
    )
    world.command("/sh cancel")
    next_request(world)


@when("a first request is reminded after 2 seconds and cancelled")
def _first_reminded_then_cancelled(world: World) -> None:
    """A first request gets its one reminder (the steering makes one more model call), then the
    user cancels it; the next request has a reminder of its own (H49a: one per request)."""
    sh_start(
        world,
        Reply(text="Looking at the task first.", context_tokens=12_000, latency_ms=2000),
        Reply(text="Noted; the handoff comes next.", context_tokens=12_100),
    )
    world.command("/sh cancel")
    next_request(world)


@when(
    parsers.re(
        r'the user runs "/sh start" while the model answers for (?P<seconds>\d+) seconds, then the model'
        r" writes the handoff and finishes it"
    )
)
def _start_while_busy_then_finish(world: World, seconds: str) -> None:
    """H67: Wait Time runs from the request (the command, while the model was still answering),
    not from the moment the Call instruction could be sent."""
    start = CommandOp.model_validate({"command": {"text": "/sh start", "wait": False}})
    scripted(
        world,
        Reply(
            text="Working on the task.",
            context_tokens=11_000,
            latency_ms=int(seconds) * 1000,
            during=(start,),
        ),
        get_reply(),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    world.prompt("Please fix the failing test.")


@when(
    parsers.re(
        r'the user runs "/sh start", the model writes the handoff and finishes it, and the receiver\'s turn'
        r" takes (?P<seconds>\d+) seconds"
    )
)
def _slow_receiver(world: World, seconds: str) -> None:
    """H67: Handoff Time runs to the receiver's successful turn, not to the switch."""
    read, delete, final = receiver_replies()
    slow = final.model_copy(update={"latency_ms": int(seconds) * 1000})
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200),
        read,
        delete,
        slow,
    )


@when(
    parsers.re(
        r"a handoff is requested and the model's next turn runs a tool at (?P<n>\d[\d,]*) context tokens"
    )
)
def _request_then_full_tool_turn(world: World, n: str) -> None:
    """H50: the emergency is *steering*: after a tool-call turn at 90 % it lands right after that
    turn's tool results, before the next model call, not as a follow-up after the run."""
    tokens = number(n)
    sh_start(
        world,
        Reply(tool_calls=(call("bash", {"command": "echo gathering context"}),), context_tokens=tokens),
        get_reply(tokens + 100),
        Reply(
            tool_calls=(call("write", {"path": DOSSIER_FILE, "content": DOSSIER_TEXT}),),
            context_tokens=tokens + 200,
        ),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=tokens + 300),
        *receiver_replies(),
    )


@when(parsers.re(r"a handoff is requested and the model's next reply reports (?P<n>\d[\d,]*) context tokens"))
def _request_then_full(world: World, n: str) -> None:
    tokens = number(n)
    sh_start(
        world,
        Reply(text="Gathering more context.", context_tokens=tokens),
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=tokens + 100),
        *receiver_replies(),
    )


@when(parsers.re(r"the next turn reports (?P<n>\d[\d,]*) context tokens"))
def _turn_reports(world: World, n: str) -> None:
    world.start()
    begin(world)
    world.script("agent", Reply(text="A turn of work.", context_tokens=number(n)))
    world.prompt("continue the task")


@when("the model asks for the template and the user cancels the handoff")
def _get_then_cancel(world: World) -> None:
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    world.remembered["dossier_after_get"] = dossier(world).exists()
    begin(world)
    world.command("/sh cancel")


@when(
    parsers.re(
        r'a file "(?P<name>[^"]+)" appears where the dossier goes while the model prepares, and the user cancels'
    )
)
def _intruder(world: World, name: str) -> None:
    world.start()
    remember_source(world)
    path = dossier(world).relative_to(world.observe().project_dir)
    intrude = EditFileOp.model_validate(
        {"edit_file": {"path": str(path), "text": f"{name}: not the extension's\n"}}
    )
    sh_start(
        world,
        Reply(
            tool_calls=(call("bash", {"command": "echo preparing"}),),
            context_tokens=11_000,
            during=(intrude,),
        ),
        get_reply(),
        Reply(text="The file is taken.", context_tokens=12_000),
    )
    world.command("/sh cancel")


@when("the model is asked to start a handoff and asks for the template at once")
def _model_start(world: World) -> None:
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        get_reply(),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    world.prompt("Please hand this session off now.")


@when(
    parsers.re(
        r"the model is asked to start a handoff, asks for the template at once,"
        r" then takes (?P<seconds>\d+) seconds before it writes and finishes"
    )
)
def _model_start_slow(world: World, seconds: str) -> None:
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        get_reply(),
        Reply(
            tool_calls=(call("bash", {"command": "echo drafting"}),),
            context_tokens=12_100,
            latency_ms=int(seconds) * 1000,
        ),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    world.prompt("Please hand this session off now.")


@when(
    parsers.re(
        r"the model is asked to start a handoff, takes (?P<seconds>\d+) seconds before it asks for"
        r" the template, then writes and finishes at once"
    )
)
def _model_start_late_get(world: World, seconds: str) -> None:
    """The request waits before its early GET, then the dossier is written and finished at once.

    The reminder clock starts at the early GET (H17), not at the request: a clock started at the
    request is already past a delay shorter than the wait when the GET arrives.
    """
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        Reply(tool_calls=(call(oracle.GET_TOOL),), context_tokens=12_000, latency_ms=int(seconds) * 1000),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    world.prompt("Please hand this session off now.")


@when("the model is asked to start a handoff, asks for the template at once and stops")
def _model_start_stop(world: World) -> None:
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        get_reply(),
        Reply(text="I have the template and will write it next.", context_tokens=12_000),
    )
    world.prompt("Please hand this session off now.")


@when("the model is asked to start a handoff, asks for the template twice and stops")
def _model_start_get_twice(world: World) -> None:
    """An early GET (the Call still pending, so it carries it), then a second GET: the repeat
    returns the template without the Call (H16)."""
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        get_reply(),
        get_reply(),
        Reply(text="I have the template and will write it next.", context_tokens=12_000),
    )
    world.prompt("Please hand this session off now.")


@when(
    parsers.re(
        r"the model, at (?P<n>\d[\d,]*) context tokens, is asked to start a handoff and carries it out"
    )
)
def _model_start_at(world: World, n: str) -> None:
    """H12: an explicit model start at ``n`` context tokens (past any threshold the scenario
    sets), then the whole transfer."""
    tokens = number(n)
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=tokens),
        get_reply(tokens),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    world.prompt("Please hand this session off now.")


@when(
    'the user runs "/sh start" and the model calls blitz_handoff start before it asks for the template and stops'
)
def _model_start_while_requested(world: World) -> None:
    """H13: a second request (the model's) while the command's request waits: refused, and the
    command's request goes on (its template request follows)."""
    sh_start(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        get_reply(),
        Reply(text="I have the template and will write it next.", context_tokens=12_000),
    )


@when("the model checks the handoff status")
def _model_status(world: World) -> None:
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "status"}),), context_tokens=11_000),
        Reply(text="Reported.", context_tokens=11_100),
    )
    world.prompt("How full is the context?")


def recover_answers(name: str, option: str) -> list[DialogAnswer]:
    """Pick the recovery file by its name, then the action by its word; leave every menu after."""
    answers = [DialogAnswer(select=f"/{re.escape(name)}/"), DialogAnswer(select=f"/{option}/")]
    if option == "Discard":
        answers.append(DialogAnswer(confirm=True))
    if option == "Inspect":
        answers += [DialogAnswer(cancel=True), DialogAnswer(cancel=True)]
    return answers


@when(parsers.re(r'the user chooses "(?P<option>[^"]+)" for "(?P<name>[^"]+)" in /sh recover'))
def _recover(world: World, option: str, name: str) -> None:
    world.start()
    remember_source(world)
    begin(world)
    world.command("/sh recover", recover_answers(name, option))


@given(parsers.re(r"the model will (?P<how>answer the next turn|fail the next turn with a provider error)"))
def _next_turn(world: World, how: str) -> None:
    reply = (
        Reply(text="Handled both prompts.", context_tokens=4_000)
        if how.startswith("answer")
        else Reply(error=HttpError(status=400, message="bad request"))
    )
    world.script("agent", reply)


@given(
    parsers.re(
        r"the model will (?P<how>call a tool that fails and then answer|stop at its output limit) in the next turn"
    )
)
def _next_turn_odd(world: World, how: str) -> None:
    """A turn that still completes natively (``agent_settled`` not aborted, no error stop): a tool
    call that fails (Pi's read of a missing file) or a reply cut at the output limit."""
    if how.startswith("call"):
        world.script(
            "agent",
            Reply(tool_calls=(call("read", {"path": "missing/recovery-probe.txt"}),), context_tokens=4_000),
            Reply(text="Handled both prompts.", context_tokens=4_100),
        )
    else:
        world.script(
            "agent", Reply(text="Handled the first prompt and then", finish="length", context_tokens=4_000)
        )


@given("the user will abort the model's reply in the next turn")
def _next_turn_aborted(world: World) -> None:
    world.script("agent", Reply(text="Working through both prompts", during=(AbortOp(),)))


@when("the model asks for the template and the user aborts its next reply")
def _get_then_abort(world: World) -> None:
    sh_start(world, get_reply(), Reply(text="Drafting the dossier", during=(AbortOp(),)))


@when("the user opens /sh recover and leaves it")
def _recover_list(world: World) -> None:
    world.start()
    begin(world)
    world.command("/sh recover", [DialogAnswer(cancel=True)])


@when(
    parsers.re(
        r'the user sets "(?P<a>[^"]+)" to "(?P<va>[^"]*)" and "(?P<b>[^"]+)" to "(?P<vb>[^"]*)" in /sh settings,'
        r' then escapes the "(?P<c>[^"]+)" input and closes the list'
    )
)
def _two_edits_then_escape(world: World, a: str, va: str, b: str, vb: str, c: str) -> None:
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    answers = [
        *settings_answers(world, a, va)[:-1],
        *settings_answers(world, b, vb)[:-1],
        DialogAnswer(select=rf"/\b{c}\b/"),
        DialogAnswer(cancel=True),
        DialogAnswer(cancel=True),
    ]
    begin(world)
    world.command("/sh settings", answers)


@when(
    parsers.re(
        r'the user sets "(?P<a>[^"]+)" to "(?P<va>[^"]*)" in /sh settings, then escapes the "(?P<c>[^"]+)"'
        r" choice and closes the list"
    )
)
def _edit_then_escape_choice(world: World, a: str, va: str, c: str) -> None:
    """H92: Escape on a setting's value (a true/false choice too) drops only that input; it is
    no answer, so nothing is saved for it."""
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    answers = [
        *settings_answers(world, a, va)[:-1],
        DialogAnswer(select=rf"/\b{c}\b/"),
        DialogAnswer(cancel=True),
        DialogAnswer(cancel=True),
    ]
    begin(world)
    world.command("/sh settings", answers)


@when(
    parsers.re(
        r'the user opens the "(?P<key>callTemplate|handoffTemplate)" list of /sh settings and leaves it'
    )
)
def _settings_template_list(world: World, key: str) -> None:
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    answers = [DialogAnswer(select=rf"/\b{key}\b/"), DialogAnswer(cancel=True), DialogAnswer(cancel=True)]
    world.command("/sh settings", answers)


@given(parsers.re(r'the managed template "(?P<name>[^"]+)" is empty'))
def _given_template_empty(world: World, name: str) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$AGENT/{MANAGED}/templates/{name}", "text": ""}})
    )


@when(
    parsers.re(
        r"a handoff is requested and the model's next reply takes (?P<seconds>\d+) seconds"
        r" and reports (?P<n>\d[\d,]*) context tokens"
    )
)
def _request_then_slow_full(world: World, seconds: str, n: str) -> None:
    tokens = number(n)
    sh_start(
        world,
        Reply(text="Gathering more context.", context_tokens=tokens, latency_ms=int(seconds) * 1000),
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=tokens + 100),
        *receiver_replies(),
    )


@when(
    parsers.re(
        r"a handoff is requested, the model asks for the template and its next reply"
        r" reports (?P<n>\d[\d,]*) context tokens"
    )
)
def _get_then_full(world: World, n: str) -> None:
    """The emergency comes after the template response: the ID it gave must stay valid (H51)."""
    tokens = number(n)
    sh_start(
        world,
        get_reply(),
        Reply(text="Gathering more context.", context_tokens=tokens),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=tokens + 100),
        *receiver_replies(),
    )


@when(parsers.re(r'the user asks "(?P<value>[^"]+)" and the model answers after (?P<seconds>\d+) seconds'))
def _slow_question(world: World, value: str, seconds: str) -> None:
    begin(world)
    world.script(
        "agent", Reply(text="Here is the answer.", context_tokens=11_000, latency_ms=int(seconds) * 1000)
    )
    world.prompt(value)


@when('the model asks for the template, deletes the reserved file and stops; then the user runs "/sh cancel"')
def _get_delete_cancel(world: World) -> None:
    sh_start(
        world,
        get_reply(),
        Reply(tool_calls=(call("bash", {"command": "rm -f '" + DOSSIER_FILE + "'"}),), context_tokens=12_300),
        Reply(text="Template received.", context_tokens=12_400),
    )
    world.remembered["dossier_after_get"] = False
    begin(world)
    world.command("/sh cancel")


@when("a directory replaces the reserved file while the model writes, and the model calls Finish")
def _dossier_directory(world: World) -> None:
    """The reservation is swapped for a directory from outside while the model's Finish call
    is held (the simulated bash runs only ``rm``, so the swap is the scenario's own edit)."""
    world.start()
    remember_source(world)
    path = str(dossier(world).relative_to(world.observe().project_dir))
    swap = (
        EditFileOp.model_validate({"edit_file": {"path": path, "kind": "absent"}}),
        EditFileOp.model_validate({"edit_file": {"path": path, "kind": "directory"}}),
    )
    finish = Reply(
        tool_calls=(call(oracle.FINISH_TOOL, {"id": FINISH_ID}),), context_tokens=13_000, during=swap
    )
    sh_start(world, get_reply(), finish, Reply(text="Finish was refused.", context_tokens=13_100))


@when(
    "a symbolic link to a nonempty file replaces the reserved file while the model writes,"
    " and the model calls Finish"
)
def _dossier_symlink(world: World) -> None:
    """H34b ("nonempty-regular-file check": not "a directory or symlink"): while the Finish call
    is held, the reservation is swapped for a symbolic link to a nonempty regular file of the
    project (``edit_file`` ``kind: symlink``; the simulated bash runs only ``rm``). Only a check
    that follows the link (``stat``, ``os.path.isfile``) sees a nonempty regular file there."""
    world.start()
    remember_source(world)
    path = str(dossier(world).relative_to(world.observe().project_dir))
    elsewhere = "handoff-written-elsewhere.md"
    swap = (
        EditFileOp.model_validate({"edit_file": {"path": elsewhere, "text": DOSSIER_TEXT}}),
        EditFileOp.model_validate({"edit_file": {"path": path, "kind": "absent"}}),
        EditFileOp.model_validate({"edit_file": {"path": path, "kind": "symlink", "target": elsewhere}}),
    )
    finish = Reply(
        tool_calls=(call(oracle.FINISH_TOOL, {"id": FINISH_ID}),), context_tokens=13_000, during=swap
    )
    sh_start(world, get_reply(), finish, Reply(text="Finish was refused.", context_tokens=13_100))


@when(
    parsers.re(
        r'the user sends "(?P<a>[^"]+)" and "(?P<b>[^"]+)" while the model writes the handoff,'
        r" and the receiver's first turn fails with a provider error"
    )
)
def _prompts_then_receiver_fails(world: World, a: str, b: str) -> None:
    held_write = _write_while_user_sends(world, a, b)
    sh_start(
        world,
        get_reply(),
        held_write,
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200),
        Reply(error=HttpError(status=400, message="bad request")),
    )


@when(
    parsers.re(
        r'the user sends "(?P<a>[^"]+)" and "(?P<b>[^"]+)" while the model writes the handoff,'
        r" and the receiver reads the dossier and then fails with a provider error"
    )
)
def _prompts_then_receiver_reads_and_fails(world: World, a: str, b: str) -> None:
    """H42: the bootstrap turn is judged by how it ends (its last assistant message), not by its
    first: a read that completes, then a provider error, is an errored turn."""
    held_write = _write_while_user_sends(world, a, b)
    read, _delete, _final = receiver_replies()
    sh_start(
        world,
        get_reply(),
        held_write,
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200),
        read,
        Reply(error=HttpError(status=400, message="bad request")),
    )


@when(
    parsers.re(
        r'the user sends "(?P<a>[^"]+)" and "(?P<b>[^"]+)" while the model writes the handoff,'
        r" and the model stops before Finish"
    )
)
def _prompts_then_stop(world: World, a: str, b: str) -> None:
    held_write = _write_while_user_sends(world, a, b)
    sh_start(
        world, get_reply(), held_write, Reply(text="Dossier written; checking it.", context_tokens=12_700)
    )


@when("the user starts a new session before the model asks for the template")
def _new_session_before_get(world: World) -> None:
    sh_start(world, Reply(text="Let me look at the checkpoint first.", context_tokens=12_000))
    begin(world)
    world.perform(NewSessionOp())


@given("writing the handoff config fails")
def _config_write_fails(world: World) -> None:
    """Every write of ``config.json`` or a temporary file named after it fails (ENOSPC)."""
    rule = {"op": "write", "path": f"$AGENT/{MANAGED}/*config.json*", "times": 0, "errno": "ENOSPC"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@given("removing the dossier reservation fails")
def _dossier_remove_fails(world: World) -> None:
    """Every removal of a ``handoff_*.md`` file in the project's config directory fails (EACCES)."""
    rule = {"op": "remove", "path": "$PROJECT/.pi/handoff_*", "times": 0, "errno": "EACCES"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@given(parsers.re(r'reading the recovery file "(?P<name>[^"]+)" fails'))
def _recovery_read_fails(world: World, name: str) -> None:
    rule = {"op": "read", "path": f"$AGENT/{MANAGED}/recovery/{name}", "times": 0, "errno": "EACCES"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@given("the first source session file is removed")
def _remove_first_source(world: World) -> None:
    path = source_file(world)
    relative = path.relative_to(Path(world.observe().session_dir))
    world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$SESSIONS/{relative}", "kind": "absent"}})
    )
    assert not path.exists(), f"{path} is still there"


_BOOLEAN_KEYS = ("automaticSessionHandoff", "deleteHandoffAfterReading")


def settings_answers(world: World, key: str, value: str, *, create: bool = True) -> list[DialogAnswer]:
    """Pick the key by its name, give the value (a choice for booleans and the defer mode, text
    otherwise; a directory's creation is confirmed or declined), then close the list."""
    answers = [DialogAnswer(select=rf"/\b{key}\b/")]
    if key in _BOOLEAN_KEYS:
        words = "true|on|yes|enabled?" if value.lower() in ("true", "on", "yes") else "false|off|no|disabled?"
        answers.append(DialogAnswer(select=rf"/^({words})\b/"))
    elif key == "deferPromptsFrom":
        answers.append(DialogAnswer(select=f"/^{value}/"))
    elif key in ("recoveryDirectory", "templateDirectory"):
        answers += [DialogAnswer(input=substitute_work(world, value)), DialogAnswer(confirm=create)]
    else:
        answers.append(DialogAnswer(input=value))
    answers.append(DialogAnswer(cancel=True))
    return answers


@when(parsers.re(r'the user sets "(?P<key>[^"]+)" to "(?P<value>[^"]*)" in /sh settings'))
def _set_setting(world: World, key: str, value: str) -> None:
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    world.command("/sh settings", settings_answers(world, key, value))


@when(
    parsers.re(r'the user selects "(?P<name>[^"]+)" as the (?P<role>Call|Handoff) template of this directory')
)
def _project_template(world: World, name: str, role: str) -> None:
    world.start()
    answers = [
        DialogAnswer(select=f"/^{role}/"),
        DialogAnswer(select=name if name.startswith("<") else f"/{re.escape(name)}/"),
        DialogAnswer(cancel=True),
    ]
    begin(world)
    world.command("/sh project-template", answers)


@when(
    parsers.re(
        r"the user opens the (?P<role>Call|Handoff) template list of /sh project-template and leaves it"
    )
)
def _project_template_list(world: World, role: str) -> None:
    world.start()
    answers = [DialogAnswer(select=f"/^{role}/"), DialogAnswer(cancel=True), DialogAnswer(cancel=True)]
    begin(world)
    world.command("/sh project-template", answers)


@when("the user opens the /sh menu and dismisses it")
def _menu_dismissed(world: World) -> None:
    world.start()
    begin(world)
    world.command("/sh", [DialogAnswer(cancel=True)])


# ===================================================================== when: routes and timing
@when('the user runs "/sh start" while the model is answering a prompt')
def _start_while_busy(world: World) -> None:
    start = CommandOp.model_validate({"command": {"text": "/sh start"}})
    scripted(
        world,
        Reply(text="Working on the task.", context_tokens=11_000, latency_ms=500, during=(start,)),
        Reply(text="Call received; looking for the next safe checkpoint.", context_tokens=11_500),
    )
    world.remembered["busy_reply"] = "Working on the task."
    world.prompt("Please fix the failing test.")


@when("the model is asked to start a handoff and ends its turn")
def _model_start_then_end(world: World) -> None:
    scripted(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "start"}),), context_tokens=11_000),
        Reply(text="The handoff is requested.", context_tokens=11_200),
        Reply(text="Call received; looking for the next safe checkpoint.", context_tokens=11_500),
    )
    world.remembered["busy_reply"] = "The handoff is requested."
    world.prompt("Please hand this session off now.")


@when("the model checks the handoff status while the handoff waits and while it is written")
def _status_twice(world: World) -> None:
    sh_start(
        world,
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "status"}),), context_tokens=11_000),
        get_reply(),
        Reply(tool_calls=(call(oracle.STATUS_TOOL, {"action": "status"}),), context_tokens=12_100),
        Reply(text="Reported.", context_tokens=12_200),
    )


@when(parsers.re(r'the user asks "(?P<value>[^"]+)" and the model answers'))
def _plain_question(world: World, value: str) -> None:
    scripted(world, Reply(text="A handoff moves the work to a fresh session.", context_tokens=11_000))
    world.prompt(value)


@when("the model asks for the template without a handoff request")
def _get_without_request(world: World) -> None:
    scripted(world, get_reply(), Reply(text="No template.", context_tokens=11_100))
    world.prompt("Show me the handoff template.")


@when(
    'the user runs "/sh start" and the model writes the handoff, calling an unrelated tool on the way, and finishes it'
)
def _start_with_other_tools(world: World) -> None:
    other = Reply(
        tool_calls=(
            call("bash", {"command": "echo unrelated"}),
            call("write", {"path": "notes/unrelated.txt", "content": "unrelated work\n"}),
        ),
        context_tokens=12_300,
    )
    sh_start(world, get_reply(), other, write_reply(), finish_reply(), *submitted_then_receiver())


@when(
    'the user runs "/sh start" and the model writes the dossier and calls Finish before asking for the template'
)
def _write_then_finish_first(world: World) -> None:
    world.start()
    remember_source(world)
    path = str(dossier(world))
    sh_start(
        world,
        Reply(tool_calls=(call("write", {"path": path, "content": DOSSIER_TEXT}),), context_tokens=12_000),
        finish_reply("made-up-id-2"),
        Reply(text="I could not finish.", context_tokens=12_100),
    )


@given(parsers.re(r'the recovery directory also holds "(?P<name>[^"]+)"'))
def _given_other_recovery(world: World, name: str) -> None:
    world.start()
    world.perform(
        EditFileOp.model_validate(
            {
                "edit_file": {
                    "path": f"$AGENT/{MANAGED}/recovery/{name}",
                    "text": "--- Deferred Prompt 1 of 1 ---\nkeep me\n",
                }
            }
        )
    )


#: A deferred prompt that is not UTF-8: "café" with a Latin-1 "é" (0xE9 before a space, which
#: no UTF-8 sequence allows) and a lone 0xFF. A replacing decoder turns both into U+FFFD.
NOT_UTF8_RECOVERY = b"--- Deferred Prompt 1 of 1 ---\ncaf\xe9 au lait \xff\n"


@given(parsers.re(r'the recovery directory holds "(?P<name>[^"]+)" with bytes that are not UTF-8'))
def _given_undecodable_recovery(world: World, name: str) -> None:
    """A recovery file that cannot be read as text (H86: "unreadable reported/retained"; H82:
    Inspect shows the "entire unchanged contents", reference: Status, cancellation and
    recovery). Planted as exact bytes (``edit_file`` ``base64``), on either target."""
    world.start()
    where = str(world.remembered.get("recovery_dir_op") or f"$AGENT/{MANAGED}/recovery")
    world.remembered.setdefault("recovery_bytes", {})[name] = NOT_UTF8_RECOVERY
    data = base64.b64encode(NOT_UTF8_RECOVERY).decode("ascii")
    outcome = world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"{where}/{name}", "base64": data}})
    )
    assert outcome.ok, f"planting {name} failed: {outcome.error}"


@when(
    parsers.re(
        r'the user sets "(?P<key>[^"]+)" to "(?P<value>[^"]*)" in /sh settings and declines the creation'
    )
)
def _set_setting_declined(world: World, key: str, value: str) -> None:
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    world.command("/sh settings", settings_answers(world, key, value, create=False))


@when("the user opens /sh settings and closes it")
def _settings_closed(world: World) -> None:
    world.start()
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    world.command("/sh settings", [DialogAnswer(cancel=True)])


@given("Pi runs without a session file")
def _in_memory(world: World) -> None:
    """``--no-session``: Pi keeps the session in memory (``SessionManager.inMemory``)."""
    world.require_setup("an in-memory session").data["session"] = "memory"


# ===================================================================== when: overlap and compaction
@when(
    "the model asks for the template and the user cancels the handoff while the model runs an unrelated tool"
)
def _cancel_during_work(world: World) -> None:
    """``/sh cancel`` arrives while the model's turn streams a tool call of unrelated work: the
    cancel must wait for that run to settle, never abort it (reference: Cancel)."""
    cancel = CommandOp.model_validate({"command": {"text": "/sh cancel"}})
    work = Reply(
        tool_calls=(call("bash", {"command": "echo unrelated work"}),),
        context_tokens=12_300,
        latency_ms=500,
        during=(cancel,),
    )
    world.remembered["run_final_text"] = "Unrelated work done."
    sh_start(world, get_reply(), work, Reply(text="Unrelated work done.", context_tokens=12_400))


@when(
    "the model asks for the template and the user cancels the handoff while the model writes the dossier,"
    " then calls Finish"
)
def _cancel_during_write(world: World) -> None:
    """``/sh cancel`` arrives while the reply that writes the dossier is held: the request ends at
    once (the Finish that follows in the same run is stale, H70a), and the owned reservation is
    removed only after the native write settled (reference: "Ownership retained through
    native-write settlement then cleanup", H71a), so the write cannot leave the file behind."""
    cancel = CommandOp.model_validate({"command": {"text": "/sh cancel"}})
    held_write = Reply(
        tool_calls=(call("write", {"path": DOSSIER_FILE, "content": DOSSIER_TEXT}),),
        context_tokens=12_500,
        latency_ms=500,
        during=(cancel,),
    )
    sh_start(world, get_reply(), held_write, finish_reply(), Reply(text="Done.", context_tokens=13_100))


@when(
    parsers.re(
        r'while the handoff is written the user chooses "(?P<option>[^"]+)" for "(?P<name>[^"]+)" in /sh recover'
    )
)
def _recover_while_active(world: World, option: str, name: str) -> None:
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    begin(world)
    world.command("/sh recover", recover_answers(name, option))


@when(
    parsers.re(
        r'while the handoff is written the user sets "(?P<key>[^"]+)" to "(?P<value>[^"]*)" in /sh settings'
    )
)
def _settings_while_active(world: World, key: str, value: str) -> None:
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    world.remembered["config_before"] = config_bytes(world)
    begin(world)
    world.command("/sh settings", settings_answers(world, key, value))


#: Pi's own summarizer tries a retryable failure this often before the compaction fails.
SUMMARIZER_ATTEMPTS = 3


@when("the user compacts the session manually and the compaction fails")
def _failed_compaction(world: World) -> None:
    """Pi's own summarizer fails (a provider error): Pi reports the compaction failed and emits no
    ``session_compact`` (agent-session.js ``compact``: the error propagates, no entry is appended).
    Pi's summarizer retries a 5xx (``retryAssistantCall``: three attempts in all, the feature
    ``host/streams-retries-and-queues``), so every attempt fails."""
    world.start()
    world.ensure_history()
    begin(world)
    for _ in range(SUMMARIZER_ATTEMPTS):
        world.script("summary", Reply(error=HttpError(status=500, message="summarizer unavailable")))
    entries = len(world.compactions())
    asked = len(world.observe().requests("summary"))
    outcome = world.perform(CompactOp())
    assert len(world.observe().requests("summary")) > asked, (
        "Pi never asked its summarizer: no compaction ran"
    )
    assert len(world.compactions()) == entries, "the failed compaction appended a compaction entry"
    ends = new_session_events(world, "compaction_end")
    failed = not outcome.ok or any(e.get("errorMessage") or e.get("aborted") for e in ends)
    assert failed, f"the compaction did not fail: {outcome}, {ends}"


@when(parsers.re(r'the user runs "/sh start" and the model finishes with (?P<n>\d[\d,]*) context tokens'))
def _finish_when_full(world: World, n: str) -> None:
    tokens = number(n)
    sh_start(
        world,
        get_reply(),
        write_reply(),
        Reply(tool_calls=(call(oracle.FINISH_TOOL, {"id": FINISH_ID}),), context_tokens=tokens),
        Reply(text="Handoff submitted.", context_tokens=tokens + 100),
        *receiver_replies(),
    )


@when(
    parsers.re(r'the user chooses "Discard" for "(?P<name>[^"]+)" in /sh recover and declines the deletion')
)
def _discard_declined(world: World, name: str) -> None:
    world.start()
    remember_source(world)
    begin(world)
    answers = [
        DialogAnswer(select=f"/{re.escape(name)}/"),
        DialogAnswer(select="/Discard/"),
        DialogAnswer(confirm=False),
    ]
    world.command("/sh recover", answers)


@given(parsers.re(r'the project has a \.gitignore that says "(?P<value>[^"]+)"'))
def _given_gitignore(world: World, value: str) -> None:
    world.start()
    world.perform(EditFileOp.model_validate({"edit_file": {"path": ".gitignore", "text": value + "\n"}}))
    world.remembered["gitignore"] = value + "\n"


@when(
    parsers.re(
        r'with deferral from writing the user sends "(?P<value>[^"]+)" '
        r"while the model waits before asking for the template"
    )
)
def _prompt_before_get(world: World, value: str) -> None:
    during = (PromptOp.model_validate({"prompt": {"text": value, "streaming_behavior": "followUp"}}),)
    world.remembered["answered_prompt"] = value
    sh_start(
        world,
        Reply(text="Looking at the task first.", context_tokens=12_000, during=during),
        Reply(text="Answered the prompt.", context_tokens=12_100),
    )


@when("the user compacts the session while the handoff is written")
def _compact_while_writing(world: World) -> None:
    world.start()
    world.work_turns(3, context_tokens=10_000)  # something to compact
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    world.remembered["compactions_before"] = len(world.compactions())
    begin(world)
    world.perform(CompactOp())


@when("the user starts a new session while the handoff is written")
def _new_session_while_writing(world: World) -> None:
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    begin(world)
    world.perform(NewSessionOp())


@when("the user resumes the session before the source while the handoff is written")
def _resume_while_writing(world: World) -> None:
    """The user worked in a first session, started the source with ``new_session``, and once the
    template was retrieved resumes the first one (RPC ``switch_session``, the TUI's ``/resume``):
    ``session_before_switch{resume}`` is the extension's chance to block it (H77a)."""
    world.start()
    world.work_turns(1)
    outcome = world.perform(NewSessionOp())
    assert outcome.ok, f"new session failed: {outcome.error}"
    sh_start(world, get_reply(), Reply(text="Template received.", context_tokens=12_200))
    begin(world)
    outcome = world.perform(SwitchSessionOp())
    # Either way the resume reached Pi: it switched, or session_before_switch cancelled it.
    assert outcome.ok or outcome.error == "cancelled", f"the resume could not run: {outcome.error}"


@when("the model calls Finish with a wrong ID, then with the returned one")
def _wrong_then_right(world: World) -> None:
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply("not-the-finish-id"),
        finish_reply(),
        *submitted_then_receiver(),
    )


@when("the model calls Finish with the returned ID padded with a space, then with the returned one")
def _padded_then_right(world: World) -> None:
    """Only the exact returned ID is accepted: no trimming or other normalisation of the ID."""
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(" " + FINISH_ID),
        finish_reply(),
        *submitted_then_receiver(),
    )


@when("the model calls Finish with the returned ID cut by one character, then with the returned one")
def _truncated_then_right(world: World) -> None:
    """Only the exact returned ID is accepted: a prefix of it is a different ID (H29a)."""
    truncated = "{{match:" + oracle.FINISH_ID_BUT_LAST_MATCH + "}}"
    sh_start(
        world, get_reply(), write_reply(), finish_reply(truncated), finish_reply(), *submitted_then_receiver()
    )


@when("the model calls Finish before writing the dossier")
def _finish_unwritten(world: World) -> None:
    sh_start(world, get_reply(), finish_reply(), Reply(text="I could not finish.", context_tokens=13_100))


@when("the model writes a dossier without any Markdown heading and finishes it")
def _plain_dossier(world: World) -> None:
    plain = "plain notes without a heading; continue task T-42 at step 3\n"
    sh_start(world, get_reply(), write_reply(plain), finish_reply(), *submitted_then_receiver())


@when("the model then writes the dossier and calls Finish with the ID it was given")
def _late_finish(world: World) -> None:
    """The write recreates the file the cancel removed, so only the Finish ID can be refused."""
    world.script("agent", write_reply(), finish_reply(), Reply(text="Done.", context_tokens=13_100))
    begin(world)
    world.prompt("Finish the handoff now.")


@when("the model then asks for the template again")
def _late_get(world: World) -> None:
    world.script("agent", get_reply(), Reply(text="No template.", context_tokens=12_300))
    begin(world)
    world.prompt("Get the handoff template again.")


@when(
    parsers.re(
        r"the user sends a prompt of (?P<n>\d[\d,]*) characters and the turn "
        r"(?P<how>fails with a provider error|is aborted)"
    )
)
def _long_prompt_turn_fails(world: World, n: str, how: str) -> None:
    """A turn that does not complete while the context estimate is high: the errored or aborted
    reply carries no usage Pi counts (``calculateContextTokens`` skips ``error``/``aborted``
    replies, ``core/compaction/compaction.js``), so the estimate is the previous usage plus the
    prompt's characters / 4."""
    world.start()
    begin(world)
    reply = (
        Reply(error=HttpError(status=400, message="bad request"))
        if how.startswith("fails")
        else Reply(text="Reading the long prompt", during=(AbortOp(),))
    )
    world.script("agent", reply)
    world.prompt("Context for the task: " + "x" * number(n))


@when("the user starts a new session after the accepted Finish, before the switch")
def _new_session_after_finish(world: World) -> None:
    """The new session is asked while the writer's last reply (after the accepted Finish) is
    still streaming: the request is submitted and awaits the cutover at the next idle moment."""
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200, during=(NewSessionOp(),)),
        *receiver_replies(),
    )


@when("the user cancels the handoff after the accepted Finish, before the switch")
def _cancel_after_finish(world: World) -> None:
    """``/sh cancel`` while the writer's last reply (after the accepted Finish) still streams:
    the request is submitted and the cutover waits for the next idle moment."""
    cancel = CommandOp.model_validate({"command": {"text": "/sh cancel"}})
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200, during=(cancel,)),
        *receiver_replies(),
    )


@when(
    parsers.re(
        r'the user chooses "(?P<option>[^"]+)" for "(?P<name>[^"]+)" in /sh recover while the model answers'
    )
)
def _recover_while_busy(world: World, option: str, name: str) -> None:
    """``/sh recover`` runs while a model reply streams: the extension's plain send of the
    recovered prompts meets a busy session (no ``deliverAs``), which Pi rejects."""
    world.start()
    remember_source(world)
    begin(world)
    recover = CommandOp.model_validate(
        {
            "command": {
                "text": "/sh recover",
                "answers": [a.model_dump() for a in recover_answers(name, option)],
            }
        }
    )
    world.script(
        "agent",
        Reply(text="Still working on the task.", context_tokens=4_000, latency_ms=500, during=(recover,)),
        Reply(text="Handled.", context_tokens=4_100),
    )
    world.prompt("continue the task")


@given("writing the project templates file fails")
def _project_templates_write_fails(world: World) -> None:
    """Every write of ``project-templates.json`` or a temporary file named after it fails (ENOSPC)."""
    rule = {
        "op": "write",
        "path": f"$AGENT/{MANAGED}/*project-templates.json*",
        "times": 0,
        "errno": "ENOSPC",
    }
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@given("writing the recovery file fails")
def _recovery_write_fails(world: World) -> None:
    """Every write in the managed recovery directory fails (ENOSPC): the snapshot cannot be kept."""
    rule = {"op": "write", "path": f"$AGENT/{MANAGED}/recovery/*", "times": 0, "errno": "ENOSPC"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@given("removing a recovery file fails")
def _recovery_remove_fails(world: World) -> None:
    rule = {"op": "remove", "path": f"$AGENT/{MANAGED}/recovery/*", "times": 0, "errno": "EACCES"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@when("the user cancels the handoff while the model's reply asking for the template is held")
def _cancel_before_held_get(world: World) -> None:
    """``/sh cancel`` runs while the reply that calls the template tool is held: the cancel ends
    the request at once and waits for the turn to settle, so the GET executes after the cancel
    (reference: Transfer sequence 4, a GET after cancel)."""
    cancel = CommandOp.model_validate({"command": {"text": "/sh cancel"}})
    held_get = Reply(
        tool_calls=(call(oracle.GET_TOOL),), context_tokens=12_000, latency_ms=500, during=(cancel,)
    )
    sh_start(world, held_get, Reply(text="The template was refused.", context_tokens=12_100))


@when(parsers.re(r"the user hands off (?P<n>\d+) times in a row, each switch linked to its source"))
def _handoffs_in_a_row(world: World, n: str) -> None:
    """``n`` complete handoffs, each from the receiver of the one before: a chain of ``n + 1``
    sessions. Each switch must link to its source (the chain grows)."""
    for count in range(1, int(n) + 1):
        _start_and_finish(world)
        obs = world.observe()
        source = source_file(world)
        lines = read_lines(obs.session_file) if obs.session_file else []
        assert lines and obs.session_file != source and lines[0].get("parentSession") == str(source), (
            f"handoff {count} did not switch to a session linked to {source}: {lines[:1]}"
        )
