"""Simulator behaviours fixed after running the same scenarios on real Pi 1.6 (issue 5).

Each test names the behaviour real Pi shows; ``tests/realpi`` plays the same scenarios on both
targets where real Pi can produce them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.observed import OBSERVABLE_EVENTS
from pi_continuity_harness.scenario.operations import EditFileSpec
from pi_continuity_harness.scenario.workspace import HostPaths, apply_edit
from pi_continuity_harness.simulator import host, host_operations
from pi_continuity_harness.simulator.messages import estimate_tokens
from pi_continuity_harness.simulator.model_service import ModelCatalog
from pi_continuity_harness.simulator.system_prompt import (
    BUILTIN_TOOL_NAMES,
    builtin_tools,
    render_system_prompt,
    system_message,
)
from pi_continuity_harness.simulator.virtual_root import VIRTUAL_ROOT
from pi_continuity_harness.targets.realpi import pi_target
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import TargetStartError

from .helpers import (
    agent_requests,
    base,
    event_records,
    long_text,
    names,
    run,
    session_entries,
    session_records,
)

LONG = "The quick brown fox jumps over the lazy dog. " * 18


def failing(pi: ExtensionAPI) -> None:
    raise ValueError("factory exploded")


def answer_probe(log: list[Any]) -> Any:
    def factory(pi: ExtensionAPI) -> None:
        async def ask(args: str, ctx: Any) -> None:
            log.append(await ctx.ui.select("Pick a section", ["armed", "settings"]))
            log.append(await ctx.ui.confirm("Sure", "Go on?"))
            log.append("handler went on")

        pi.register_command("ask", ask)

    return factory


# ------------------------------------------------------------------ 1. load failure
def test_an_extension_that_fails_to_load_stops_pi_from_starting(tmp_path: Path) -> None:
    target = SimTarget(failing, tmp_path / "sim")
    with pytest.raises(TargetStartError) as error:
        target.start(parse_scenario(base()))
    name = f"{failing.__module__}:{failing.__qualname__}"
    assert (
        str(error.value) == f'Failed to load extension "{name}": Failed to load extension: factory exploded'
    )
    trace = (tmp_path / "sim" / "trace.jsonl").read_text(encoding="utf-8")
    assert '"name":"start_failed"' in trace and "extension_error" not in trace
    assert "session_start" not in trace  # the process never bound its extensions


def test_a_restart_whose_extension_fails_to_load_fails_and_pi_stays_down(tmp_path: Path) -> None:
    loads = {"n": 0}

    def second_load_fails(pi: ExtensionAPI) -> None:
        loads["n"] += 1
        if loads["n"] == 2:
            raise RuntimeError("broken on restart")

    result = run(tmp_path, base(operations=["restart", {"prompt": "hi"}, "restart"]), second_load_fails)
    failed, prompt, again = result.operations
    assert not failed.ok and failed.error is not None
    assert failed.error.endswith('": Failed to load extension: broken on restart')
    assert (prompt.ok, prompt.error) == (False, "Pi is not running")
    assert again.ok  # the third load succeeds: a new process starts


def test_a_load_failure_on_reload_is_dropped_silently(tmp_path: Path) -> None:
    loads = {"n": 0}

    def reload_fails(pi: ExtensionAPI) -> None:
        loads["n"] += 1
        if loads["n"] == 2:
            raise RuntimeError("broken on reload")

    result = run(tmp_path, base(operations=["reload"]), reload_fails)
    assert result.operations[0].ok
    assert session_records(result, "extension_error") == []
    [dropped] = [r for r in result.host.trace.records if r["name"] == "extension_load_failed"]
    assert dropped["error"] == "broken on reload"


# ------------------------------------------------------------------ 2./3. observable events
def commands_and_tools(pi: ExtensionAPI) -> None:
    async def hello(args: str, ctx: Any) -> None:
        ctx.ui.notify("hello", "info")

    pi.register_command("hello", hello)
    pi.on("tool_call", lambda event, ctx: None)
    pi.on("message_end", lambda event, ctx: None)


def test_observed_extension_events_are_only_what_the_real_pi_observer_logs(tmp_path: Path) -> None:
    target = SimTarget(commands_and_tools, tmp_path / "sim")
    script = {"agent": [{"text": "ok"}]}
    target.start(parse_scenario(base(model=script)))
    target.perform(parse_scenario(base(operations=[{"command": "/hello"}])).operations[0])
    target.perform(parse_scenario(base(operations=[{"prompt": "hi"}])).operations[0])
    observation = target.observe()
    target.close()
    kinds = {e["type"] for e in observation.extension_events}
    assert kinds <= OBSERVABLE_EVENTS
    assert "command" not in kinds and "message_end" not in kinds
    trace = [r["name"] for r in target.simulation.host.trace.records if r["kind"] == "event"]
    assert "command" in trace and "message_end" in trace  # still in the simulator's own trace


def test_compaction_events_are_observed_even_without_a_handler(tmp_path: Path) -> None:
    script = {
        "agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}],
        "summary": [{"text": "PI-SUMMARY"}],
    }
    result = run(tmp_path, base(model=script, operations=[{"prompt": "first " + LONG}, "compact"]))
    [before] = event_records(result, "session_before_compact")
    [compacted] = event_records(result, "session_compact")
    assert before["reason"] == "manual" and compacted["fromExtension"] is False
    # Pi's own summarizer ran, as it does when the only handler (the observer) returns nothing.
    [entry] = [e for e in session_entries(result) if e["type"] == "compaction"]
    assert "PI-SUMMARY" in entry["summary"] and entry["fromHook"] is False


# ------------------------------------------------------------------ 4. session name
def test_set_session_name_emits_session_info_changed(tmp_path: Path) -> None:
    def naming(pi: ExtensionAPI) -> None:
        async def name(args: str, ctx: Any) -> None:
            pi.set_session_name(args)

        pi.register_command("name", name)

    result = run(tmp_path, base(operations=[{"command": "/name my session"}]), naming)
    [changed] = session_records(result, "session_info_changed")
    assert changed["sessionName"] == "my session"
    target = SimTarget(naming, tmp_path / "target")
    target.start(parse_scenario(base()))
    target.perform(parse_scenario(base(operations=[{"command": "/name two"}])).operations[0])
    assert target.observe().session("session_info_changed") == [
        {"type": "session_info_changed", "name": "two"}
    ]
    target.close()


# ------------------------------------------------------------------ 5. system message
def test_the_system_message_carries_pi_sections_and_the_builtin_tool_schemas(tmp_path: Path) -> None:
    result = run(
        tmp_path, base(model={"agent": [{"text": "ok"}]}, operations=[{"prompt": "hi"}]), sub="prompt"
    )
    [system] = [e["message"] for e in session_entries(result) if e.get("message", {}).get("role") == "system"]
    # The host's fixed virtual root (virtual_root.py), as long as real Pi's machine root.
    project = f"{VIRTUAL_ROOT}/project"
    assert list(system) == ["role", "content", "sections", "timestamp", "toolsAdded"]  # Pi's key order
    assert system["content"] == ""
    assert list(system["sections"]) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert system["sections"]["cwd"] == f"<cwd>\n{project}\n</cwd>"
    # Pi's package directory is <machine root>/pi-package on both targets (scenario/layout.py).
    assert system["sections"]["docs"].count(f"{VIRTUAL_ROOT}/pi-package/") == 3
    tools = system["toolsAdded"]
    assert [t["name"] for t in tools] == list(BUILTIN_TOOL_NAMES)
    assert tools[0]["parameters"]["required"] == ["path"]
    assert tools[2]["parameters"]["properties"]["edits"]["items"]["required"] == ["oldText", "newText"]
    assert all(t["constrainedSampling"] == {"type": "json_schema", "strict": "prefer"} for t in tools)
    # Pi's chars/4 estimate of it: about 1,200 tokens plus the project path (twice as long here).
    chars = sum(len(text) for text in system["sections"].values())
    chars += len(json.dumps(system["toolsAdded"], separators=(",", ":")))
    assert estimate_tokens(system) == -(-chars // 4)
    assert 1150 < estimate_tokens(system) < 1400
    # The model receives the rendered sections (getSystemMessageText) as its system prompt.
    [request] = agent_requests(result)
    assert request.system_prompt == render_system_prompt(system)
    assert request.system_prompt.startswith("You are a coding assistant running inside pi")


def test_the_builtin_tools_are_fresh_copies_of_pi_declarations() -> None:
    first, second = builtin_tools(), builtin_tools()
    first[0]["name"] = "changed"
    assert second[0]["name"] == "read" and builtin_tools()[0]["name"] == "read"
    message = system_message("/p", 5, "/pkg")
    assert message["timestamp"] == 5 and message["sections"]["cwd"] == "<cwd>\n/p\n</cwd>"


def test_overflow_estimates_include_the_system_message(tmp_path: Path) -> None:
    seen: list[int] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda e, c: seen.append(e.preparation.tokens_before))

    overflow = {"status": 400, "message": "This request exceeds the context window of the model."}
    script = {
        "agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}, {"error": overflow}, {"text": "OK"}]
    }
    result = run(
        tmp_path, base(model=script, operations=[{"prompt": "a " + LONG}, {"prompt": "b " + LONG}]), ext
    )
    [system] = [e["message"] for e in session_entries(result) if e.get("message", {}).get("role") == "system"]
    # After the failed reply's omission Pi trusts no usage: chars/4 of the context, system message
    # included (real Pi reported about 1,200 tokens more than the simulator did before it carried
    # Pi's sections and tool schemas).
    assert seen and seen[0] > estimate_tokens(system) + 400
    [end] = [r for r in session_records(result, "compaction_end") if r.get("result")]
    assert end["result"]["estimatedTokensAfter"] > estimate_tokens(system)


# ------------------------------------------------------------------ 6. manual compaction_end
def test_manual_compaction_end_result_has_estimated_tokens_after_and_summary_chars(tmp_path: Path) -> None:
    script = {"agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}], "summary": [{"text": "SUM"}]}
    result = run(tmp_path, base(model=script, operations=[{"prompt": "x " + LONG}, "compact"]))
    [end] = session_records(result, "compaction_end")
    assert set(end["result"]) == {
        "firstKeptEntryId",
        "tokensBefore",
        "estimatedTokensAfter",
        "fromExtension",
        "summaryChars",
    }
    [entry] = [e for e in session_entries(result) if e["type"] == "compaction"]
    assert end["result"]["summaryChars"] == len(entry["summary"])
    assert end["result"]["estimatedTokensAfter"] > 1200  # the system message is part of it
    assert result.operations[1].data == {"firstKeptEntryId": entry["firstKeptEntryId"]}


# ------------------------------------------------------------------ 7. restart before the file exists
def test_restart_before_the_session_file_exists_starts_fresh_with_the_default_model(tmp_path: Path) -> None:
    scenario = base(
        active_model="fake/fake-big",
        model={"agent": [{"text": "ok"}]},
        operations=["restart", {"prompt": "hello"}],
    )
    result = run(tmp_path, scenario)
    lines = session_entries(result)
    assert [e["type"] for e in lines[:3]] == ["session", "model_change", "thinking_level_change"]
    assert (lines[1]["provider"], lines[1]["modelId"]) == ("fake", "fake-model")  # first in models.json
    assert agent_requests(result)[0].model == "fake/fake-model"
    starts = [r for r in result.host.trace.records if r["kind"] == "host" and r["name"] == "runtime"]
    assert starts[0]["model"] == "fake/fake-big" and starts[1]["model"] == "fake/fake-model"
    assert starts[0]["sessionFile"] == starts[1]["sessionFile"]  # a fresh session at that path


def test_the_default_model_is_the_first_authenticated_one() -> None:
    scenario = parse_scenario(
        base(
            models=[
                {"id": "locked/a", "context_window": 1000, "max_tokens": 100, "auth": False},
                {"id": "fake/b", "context_window": 1000, "max_tokens": 100},
                {"id": "locked/c", "context_window": 1000, "max_tokens": 100, "auth": False},
            ],
            active_model="fake/b",
        )
    )
    catalog = ModelCatalog([m.to_model() for m in scenario.models], frozenset({"locked"}))
    first = catalog.first_available()
    assert first is not None and first.full_id == "fake/b"


# ------------------------------------------------------------------ 8. set_model
def test_set_model_to_an_unauthenticated_model_is_model_not_found(tmp_path: Path) -> None:
    scenario = base(
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "locked/big", "context_window": 40000, "max_tokens": 1000, "auth": False},
        ],
        operations=[{"set_model": "locked/big"}],
    )
    result = run(tmp_path, scenario)
    assert (result.operations[0].ok, result.operations[0].error) == (False, "Model not found: locked/big")
    assert event_records(result, "model_select") == []


def test_models_the_scenario_does_not_declare_are_taken_as_given(tmp_path: Path) -> None:
    """Pi looks no model up (``agent-session.js:2911-2915``): a new id of a scenario provider is
    set and called; a provider with no auth gives ``false`` and no request, with pi-ai's message
    for a provider Pi has built in or none (``model-runtime.js:366-368, 459-469``). An unknown
    provider had auth on the simulator before."""
    seen: dict[str, Any] = {}

    def ext(pi: ExtensionAPI) -> None:
        async def models(args: str, ctx: Any) -> None:
            context = {"messages": [{"role": "user", "content": "x", "timestamp": 0}]}
            for label, model in (
                ("nowhere", dataclasses.replace(ctx.model, provider="nowhere")),
                ("anthropic", dataclasses.replace(ctx.model, provider="anthropic")),
                ("other", dataclasses.replace(ctx.model, id="other-model")),
            ):
                reply = await ctx.model_registry.complete(model, context, max_tokens=8)
                auth = ctx.model_registry.has_configured_auth(model)
                seen[label] = (auth, await pi.set_model(model), reply.get("errorMessage"))
            seen["model"] = ctx.model.full_id

        pi.register_command("models", models)

    result = run(tmp_path, base(operations=[{"command": "/models"}]), ext)
    assert result.operations[0].ok
    assert seen == {
        "nowhere": (False, False, "Unknown provider: nowhere"),
        "anthropic": (False, False, "Provider is not configured: anthropic"),
        "other": (True, True, None),
        "model": "fake/other-model",
    }
    assert [r.model for r in result.host.service.requests] == ["fake/other-model"]


# ------------------------------------------------------------------ 9. cwd
def test_extensions_run_with_the_project_directory_as_process_cwd(tmp_path: Path) -> None:
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        seen.append(os.getcwd())

        async def where(args: str, ctx: Any) -> None:
            seen.append(os.getcwd())
            with open("relative.txt", "w", encoding="utf-8") as handle:
                handle.write("here")

        pi.register_command("where", where)

    before = os.getcwd()
    result = run(tmp_path, base(operations=[{"command": "/where"}]), ext)
    project = result.host.paths.project_dir
    assert seen == [project, project]
    assert (Path(project) / "relative.txt").read_text(encoding="utf-8") == "here"
    assert os.getcwd() == before  # restored after every step


# ------------------------------------------------------------------ 10. dialog mismatch
def test_a_mismatched_dialog_answer_cancels_the_dialog_and_the_handler_goes_on(tmp_path: Path) -> None:
    log: list[Any] = []
    command = {"command": {"text": "/ask", "answers": [{"confirm": True}]}}
    result = run(tmp_path, base(operations=[command]), answer_probe(log))
    # The select is cancelled (None); the confirm answer stays pending and answers the confirm.
    assert log == [None, True, "handler went on"]
    outcome = result.operations[0]
    assert not outcome.ok
    assert (
        outcome.error
        == "dialog 'select' ('Pick a section') opened, but the next scripted answer is 'confirm'"
    )
    assert outcome.disposition == "handled"
    assert "op:command:end" in names(result, "op")


def test_a_select_answer_matching_no_option_cancels_that_dialog(tmp_path: Path) -> None:
    log: list[Any] = []
    command = {"command": {"text": "/ask", "answers": [{"select": "nope"}, {"confirm": False}]}}
    result = run(tmp_path, base(operations=[command]), answer_probe(log))
    assert log == [None, False, "handler went on"]
    assert (
        result.operations[0].error == "select 'Pick a section': 'nope' matches none of ['armed', 'settings']"
    )


# ------------------------------------------------------------------ 12. edit_file
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"path": "a/b.json", "json": {"x": 1}}, {"x": 1}),
        ({"path": "a/b.json", "json": {"y": 2}, "merge_json": True}, {"x": 1, "y": 2}),
        ({"path": "a/b.json", "text": "plain"}, "plain"),
        ({"path": "a/b.json", "kind": "directory"}, "dir"),
        ({"path": "a/b.json", "kind": "absent"}, None),
        ({"path": "a/b.json", "kind": "symlink", "target": "c.json"}, "link"),
    ],
)
def test_edit_file_is_one_function_for_both_targets(
    tmp_path: Path, spec: dict[str, Any], expected: Any
) -> None:
    paths = HostPaths.under(str(tmp_path))
    target = Path(paths.project_dir) / "a" / "b.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"x": 1}', encoding="utf-8")
    apply_edit(paths, EditFileSpec.model_validate(spec))
    if expected is None:
        assert not target.exists()
    elif expected == "link":
        assert os.readlink(target) == "../c.json"
    elif expected == "dir":
        assert target.is_dir()
    elif isinstance(expected, str):
        assert target.read_text(encoding="utf-8") == expected
    else:
        assert json.loads(target.read_text(encoding="utf-8")) == expected


def test_the_real_pi_target_applies_edits_with_the_same_function() -> None:
    # The simulated process applies ``edit_file`` in its operations job (``host_operations``).
    assert pi_target.apply_edit is apply_edit is host_operations.apply_edit
    assert not hasattr(pi_target.PiTarget, "_edit_file") and not hasattr(host.SimHost, "_edit_file")
    assert not hasattr(host_operations.HostOperations, "_edit_file")


def test_paths_resolve_placeholders(tmp_path: Path) -> None:
    paths = HostPaths.under(str(tmp_path))
    assert paths.resolve("$AGENT/settings.json") == os.path.join(paths.agent_dir, "settings.json")
    assert paths.resolve("$PROJECT/x") == paths.resolve("x") == os.path.join(paths.project_dir, "x")
    assert long_text("x", 10) == "x LLLLLLLL"
