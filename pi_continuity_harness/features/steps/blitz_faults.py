"""Steps of the pi-blitz-handoff features on faults and private paths: a failed or aborted
template retrieval (GET), a crash while the recovery file is replaced, the private cutover
bridge, the native dialogs of ``/sh`` over RPC.

A GET is aborted while it *executes*: Pi hands the tool its run's ``AbortSignal``
(pi-agent-core ``dist/agent-loop.js:574``, ``prepared.tool.execute(id, args, signal, ...)``),
and an RPC ``abort`` during the execution aborts that signal; the tool's result is still
recorded (``agent-loop.js:398-405``). An abort that lands before the execution skips the tool
(``agent-loop.js:478-486``): the GET never runs, so such a scenario says nothing about the
extension. On the simulator the abort is injected right after the GET's reservation write
(``faults.inject``: capability ``trace-faults``), the GET's file effect (an awaited file
operation in a TypeScript implementation); real Pi cannot place an RPC abort inside a tool's
execution, so those scenarios are simulator-only. A *failed* GET is a
failed reservation write (``faults.fs``: capability ``fs-faults``), which real Pi plays for
Python implementations.
"""

from __future__ import annotations

import json

from pytest_bdd import given, parsers, then, when

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.steps.blitz import (
    agent_dir,
    begin,
    dossier,
    finish_reply,
    get_reply,
    receiver_replies,
    recovery_files,
    settings_answers,
    sh_start,
    source_entries,
    submitted_then_receiver,
    text,
    tool_results,
    write_reply,
)
from pi_continuity_harness.features.steps.common import new_dialogs
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import Reply
from pi_continuity_harness.scenario.operations import CommandOp, DialogAnswer, PromptOp

#: The dossier reservation as the fs trace and the fault globs name it.
_DOSSIER_GLOB = "handoff_*.md"


@given("the template retrieval will be aborted while it reserves the dossier")
def _abort_during_get(world: World) -> None:
    """An RPC ``abort`` right after the GET's first write of the dossier file (its reservation):
    the tool is executing, so its signal aborts while it runs (pi-agent-core
    ``dist/agent-loop.js:574``)."""
    rule = {
        "after": {
            "kind": "fs",
            "name": "write",
            "glob": {"path": f"$WORK/project/{CONFIG_DIR_NAME}/{_DOSSIER_GLOB}"},
        },
        "operations": ["abort"],
    }
    world.require_setup("an injected abort").data["faults"]["inject"].append(rule)
    world.remembered["get_aborted"] = True


@given("reserving the dossier will fail")
def _reservation_fails(world: World) -> None:
    """The first write of the dossier file fails (EIO): the GET cannot reserve it."""
    rule = {"op": "write", "path": f"$PROJECT/{CONFIG_DIR_NAME}/{_DOSSIER_GLOB}", "times": 1, "errno": "EIO"}
    world.require_setup("a fault").data["faults"]["fs"].append(rule)


@when('the user runs "/sh start" and the model asks for the template')
def _start_and_get(world: World) -> None:
    """The GET, then the model's answer to its result; an aborted run asks the model nothing more
    (Pi's next request of an aborted run is refused at once, ``agent-loop.js:146-153``)."""
    if world.remembered.get("get_aborted"):
        sh_start(world, get_reply())
    else:
        sh_start(
            world, get_reply(), Reply(text="The template could not be retrieved.", context_tokens=12_100)
        )


@when(parsers.re(r'the user then asks "(?P<value>[^"]+)" and the model answers'))
def _then_asks(world: World, value: str) -> None:
    world.script("agent", Reply(text="Answering the question.", context_tokens=12_300))
    begin(world)
    world.remembered["answered_prompt"] = value
    world.prompt(value)


@when("the model then writes the dossier and calls Finish with any ID a template response gave it")
def _then_finish(world: World) -> None:
    world.script("agent", write_reply(), finish_reply(), Reply(text="Done.", context_tokens=13_100))
    begin(world)
    world.prompt("Write the handoff and finish it now.")


@when("the model then asks for the template again, writes the dossier and finishes")
def _then_get_again(world: World) -> None:
    world.script(
        "agent",
        get_reply(),
        write_reply(),
        finish_reply(),
        *submitted_then_receiver(),
    )
    begin(world)
    world.prompt("Get the handoff template again and finish the handoff.")


@then("the template request was not answered with a template")
def _get_failed(world: World) -> None:
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert results, "the template tool never ran"
    assert results[0].get("isError"), f"the first GET succeeded: {text(results[0])!r}"
    assert oracle.finish_id_in(text(results[0])) is None, f"it gave a Finish ID: {text(results[0])!r}"


@then("the second template request succeeded with the reserved dossier file")
def _second_get(world: World) -> None:
    results = tool_results(source_entries(world), oracle.GET_TOOL)
    assert len(results) >= 2, f"GET results: {[text(r) for r in results]}"
    second = results[1]
    assert not second.get("isError"), f"the GET after the aborted one failed: {text(second)!r}"
    assert str(dossier(world)) in text(second), f"it names another file: {text(second)!r}"
    assert oracle.finish_id_in(text(second)), f"it gave no Finish ID: {text(second)!r}"


@then(parsers.re(r'"(?P<value>[^"]+)" reached the source model'))
def _reached(world: World, value: str) -> None:
    asked = [r for r in world.observe().requests("agent") if value in r.last_user_text()]
    assert asked, f"{value!r} never reached the model (it was captured or dropped)"


# ===================================================================== H35: the dossier is never read
@then("the implementation never read the dossier")
def _dossier_never_read(world: World) -> None:
    """No read of the dossier among the implementation's own file operations (the model's
    ``read`` tool is Pi's, recorded apart as ``tool_read``; the Finish check is metadata only)."""
    path = str(dossier(world))
    fs = world.observe().fs_events
    assert any(e.get("path") == path for e in fs), f"no file operation of the implementation on {path}"
    reads = [e for e in fs if e.get("op") == "read" and e.get("path") == path]
    assert not reads, f"the implementation opened the dossier for reading: {reads}"


# ===================================================================== H48: atomic recovery file
@given("Pi crashes right after the second file write in the recovery directory")
def _crash_in_recovery(world: World) -> None:
    """The process dies right after the second file the implementation opens for writing in the
    recovery directory (``faults.crash``: capability ``trace-faults``): for an atomic
    replacement, the second snapshot's temporary file; for a write in place, the truncated file."""
    _crash_after_second_write(world, f"$WORK/agent/{oracle.MANAGED_DIR}/recovery/*")


def _crash_after_second_write(world: World, glob: str) -> None:
    """A ``faults.crash`` rule (capability ``trace-faults``): Pi dies right after the second file
    opened for writing whose path matches ``glob``."""
    rule = {"after": {"kind": "fs", "name": "write", "glob": {"path": glob}, "occurrence": 2}}
    world.require_setup("a crash").data["faults"]["crash"].append(rule)


@when(
    parsers.re(
        r'the user sends "(?P<a>[^"]+)" and then "(?P<b>[^"]+)" while the model waits before asking for the template'
    )
)
def _two_prompts_while_waiting(world: World, a: str, b: str) -> None:
    during = tuple(
        PromptOp.model_validate({"prompt": {"text": p, "streaming_behavior": "followUp"}}) for p in (a, b)
    )
    world.remembered["deferred"] = [a, b]
    sh_start(world, Reply(text="Looking at the task first.", context_tokens=12_000, during=during))


@then("the recovery file holds a whole snapshot of the deferred prompts, never a partial one")
def _whole_snapshot(world: World) -> None:
    prompts = world.remembered["deferred"]
    # A temporary file the crash left behind is not the recovery file (it never carries the name).
    files = {n: c for n, c in recovery_files(world).items() if not n.startswith(".")}
    assert len(files) == 1, f"recovery files: {list(recovery_files(world))}"
    ((name, content),) = files.items()
    blocks = oracle.deferred_prompts(content)
    snapshots = [[(i, n, p) for i, p in enumerate(prompts[:n], 1)] for n in range(1, len(prompts) + 1)]
    assert blocks in snapshots, f"{name} is not a whole snapshot: {content!r}"


# ===================================================================== H33c: the private bridge
@when(
    parsers.re(
        r'the user runs "(?P<command>/sh __cutover[^"]*)" after the accepted Finish, '
        r'before the switch, and then "/sh cancel"'
    )
)
def _forged_cutover(world: World, command: str) -> None:
    """While the writer's last reply (after the accepted Finish) still streams, the user runs
    the private bridge without the request's token, then cancels: only a correlated bridge may
    switch, and the cancel ends the request before the next idle moment."""
    ops = (
        CommandOp.model_validate({"command": {"text": command}}),
        CommandOp.model_validate({"command": {"text": "/sh cancel"}}),
    )
    sh_start(
        world,
        get_reply(),
        write_reply(),
        finish_reply(),
        Reply(text="Handoff submitted.", context_tokens=13_200, during=ops),
        *receiver_replies(),
    )


# ===================================================================== H139: native dialogs over RPC
@when(
    parsers.re(
        r'the user opens the /sh menu, picks "Settings" and sets "(?P<key>[^"]+)" to "(?P<value>[^"]*)"'
    )
)
def _menu_then_setting(world: World, key: str, value: str) -> None:
    world.start()
    begin(world)
    world.command("/sh", [DialogAnswer(select="/^Settings/"), *settings_answers(world, key, value)])


@then("every /sh menu was Pi's native select dialog and the value was asked in its native input dialog")
def _native_dialogs(world: World) -> None:
    """In RPC mode Pi's ``select``, ``input`` and ``confirm`` are ``extension_ui_request``s the
    client answers (``dist/modes/rpc/rpc-mode.js:87-90``); ``custom()`` overlays are not
    supported there (``rpc-mode.js:157-160``) and an ``editor`` is another dialog."""
    dialogs = new_dialogs(world)
    methods = [d.get("method") for d in dialogs]
    assert dialogs, "/sh opened no dialog"
    assert set(methods) <= {"select", "input", "confirm"}, f"dialogs: {methods}"
    assert methods[:2] == ["select", "select"], f"the menus were not native selects: {methods}"
    assert "input" in methods[2:], f"the value was not asked in a native input dialog: {methods}"


# ===================================================================== H64c: the yellow Waiting line
@then('the "Waiting for Session Handoff" line was drawn in the theme\'s yellow warning colour')
def _waiting_yellow(world: World) -> None:
    """Pi loads a theme in every mode (``dist/main.js:814``) and RPC passes widget lines as they
    are (``dist/modes/rpc/rpc-mode.js:127-137``), so the colour the extension gives the line
    (``ctx.ui.theme.fg("warning", ...)``: ``ESC[38;5;3m`` in Pi 1.6's RPC theme) is observable."""
    lines = [
        line
        for w in world.observe().widgets
        for line in (w.get("lines") or [])
        if oracle.plain(str(line)) == oracle.WAITING
    ]
    assert lines, f"no widget line said {oracle.WAITING!r}"
    plain_ones = [line for line in lines if not oracle.drawn_yellow(str(line), oracle.WAITING)]
    assert not plain_ones, f"the Waiting line was not drawn yellow: {plain_ones!r}"


@given("Pi crashes right after the second write of the handoff config")
def _crash_in_config(world: World) -> None:
    """The process dies right after the second file the implementation opens for writing whose
    name holds ``config.json`` in the managed directory (``faults.crash``, capability
    ``trace-faults``): for an atomic replacement the second save's temporary file, with the first
    save whole at ``config.json``; for a write in place the truncated ``config.json`` itself
    (H88b: "The settings file is replaced atomically (no partial file)")."""
    _crash_after_second_write(world, f"$WORK/agent/{oracle.MANAGED_DIR}/*config.json*")


@then(parsers.re(r'the handoff config file is whole and holds "(?P<key>[^"]+)" = (?P<value>\d+)'))
def _config_whole(world: World, key: str, value: str) -> None:
    """After a crash inside a save the config is one whole save (a leftover temporary file of the
    interrupted save is allowed: a crash cannot clean up)."""
    path = agent_dir(world) / "config.json"
    assert path.is_file(), f"no handoff config file at {path}"
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise AssertionError(f"a partial config file: {text!r}") from None
    assert data.get(key) == int(value), f"{key}: {data.get(key)!r}"
