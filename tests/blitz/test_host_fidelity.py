"""Fidelity of the host capabilities pi-blitz-handoff relies on, as real Pi 1.6 showed them.

Each test is named after a behaviour of ``shared/reference/handoff-host-on-real-pi.md``
("What a simulator must model"), and runs a small probe extension on the simulator.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import (
    ExtensionAPI,
    ExtensionCommandContext,
    StaleContextError,
    ToolDefinition,
    ToolResult,
    get_agent_dir,
)

from .sim_helpers import base, entries, run, run_with, session_records

LOG: list[Any] = []


def _probe(pi: ExtensionAPI) -> None:
    """Tools, commands and handlers that log what they see into :data:`LOG`."""

    async def probe_tool(call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> ToolResult:
        LOG.append(
            (
                "tool",
                params.get("note"),
                hasattr(ctx, "new_session"),
                hasattr(ctx, "wait_for_idle"),
                hasattr(ctx, "send_user_message"),
            )
        )
        if params.get("fail"):
            raise RuntimeError("ctx.newSession is not a function")
        return ToolResult(
            content=[{"type": "text", "text": f"probe_tool ok: {params.get('note')}"}],
            details={"note": params.get("note")},
        )

    pi.register_tool(
        ToolDefinition(
            name="probe_tool",
            label="probe",
            description="Probe tool",
            parameters={"type": "object", "properties": {"note": {"type": "string"}}},
            execute=probe_tool,
        )
    )

    async def handoff(args: str, ctx: ExtensionCommandContext) -> None:
        LOG.append(("cmd_begin", ctx.is_idle()))
        parent = ctx.session_manager.get_session_file()

        async def with_session(new_ctx: Any) -> None:
            LOG.append(("with_session", new_ctx.session_manager.get_header()))
            if args == "await":
                await new_ctx.send_user_message("bootstrap: read the dossier")
                LOG.append(("bootstrap_resolved", new_ctx.is_idle()))

        result = await ctx.new_session(parent_session=parent, with_session=with_session)
        LOG.append(("cmd_after", result))
        try:
            _ = ctx.cwd
        except StaleContextError:
            LOG.append(("old_ctx_stale",))

    pi.register_command("hp-handoff", handoff)

    async def steer(args: str, ctx: ExtensionCommandContext) -> None:
        pi.send_message(
            {"customType": "hp-steer", "content": "STEER custom note", "display": True}, deliver_as="steer"
        )

    pi.register_command("hp-steer", steer)

    async def ui(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.set_widget("hp-widget", ["Waiting for Session Handoff"], placement="aboveEditor")
        ctx.ui.set_widget("hp-widget", None)
        LOG.append(("agent_dir", get_agent_dir()))

    pi.register_command("hp-ui", ui)

    def on_event(name: str) -> Any:
        def handler(event: Any, ctx: Any) -> Any:
            LOG.append(
                (
                    name,
                    getattr(event, "reason", None),
                    getattr(event, "previous_session_file", None),
                    getattr(event, "target_session_file", None),
                )
            )
            if name == "input":
                LOG[-1] = ("input", event.text, event.source, event.streaming_behavior)
                if event.text.startswith("capture"):
                    return {"action": "handled"}
            if name == "agent_settled":
                LOG[-1] = ("agent_settled", ctx.is_idle(), hasattr(ctx, "new_session"))
            return None

        return handler

    for name in ("session_before_switch", "session_shutdown", "session_start", "input", "agent_settled"):
        pi.on(name, on_event(name))


def _run(tmp_path: Path, agent: list[dict[str, Any]], operations: list[Any]) -> Any:
    LOG.clear()
    return run(tmp_path, base(model={"agent": agent}, operations=operations), _probe)


def test_extension_tools_called_by_the_model_have_their_results_in_the_transcript_in_call_order(
    tmp_path: Path,
) -> None:
    calls = [
        {"name": "probe_tool", "arguments": {"note": "hello"}, "id": "call_p1"},
        {"name": "probe_tool", "arguments": {"note": "two"}, "id": "call_p2"},
    ]
    result = _run(tmp_path, [{"tool_calls": calls}, {"text": "done"}], [{"prompt": "go"}])
    results = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert [(m["toolCallId"], m["content"][0]["text"]) for m in results] == [
        ("call_p1", "probe_tool ok: hello"),
        ("call_p2", "probe_tool ok: two"),
    ]
    assert results[0]["details"] == {"note": "hello"} and results[0]["isError"] is False
    second = [r for r in result.host.service.requests if r.kind == "agent"][1]
    assert [m["role"] for m in second.messages][-2:] == ["toolResult", "toolResult"]


def test_a_tool_context_has_no_new_session_wait_for_idle_or_send_user_message(tmp_path: Path) -> None:
    _run(
        tmp_path,
        [{"tool_calls": [{"name": "probe_tool", "arguments": {"note": "x"}}]}, {"text": "ok"}],
        [{"prompt": "go"}],
    )
    assert ("tool", "x", False, False, False) in LOG


def test_an_exception_in_a_tool_becomes_an_error_result_with_its_message_and_the_run_continues(
    tmp_path: Path,
) -> None:
    result = _run(
        tmp_path,
        [{"tool_calls": [{"name": "probe_tool", "arguments": {"fail": True}}]}, {"text": "answered"}],
        [{"prompt": "go"}],
    )
    messages = [e["message"] for e in entries(result) if e.get("type") == "message"]
    error = next(m for m in messages if m.get("role") == "toolResult")
    assert error["isError"] is True and error["content"][0]["text"] == "ctx.newSession is not a function"
    assert error["details"] == {}
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"][0]["text"] == "answered"


def test_new_session_from_a_command_switches_with_pis_event_order_and_a_parent_link(tmp_path: Path) -> None:
    result = _run(tmp_path, [{"text": "first"}], [{"prompt": "go"}, {"command": "/hp-handoff nowait"}])
    # The session file as the extension saw it (below the host's virtual root).
    source = Path(result.host.paths.session_dir) / next(f for f in result.session_files()).name
    order = [e[0] for e in LOG if e[0] != "input" and not (len(e) > 1 and e[1] == "quit")]
    begin = order.index("cmd_begin")
    assert order[begin : order.index("old_ctx_stale") + 1] == [
        "cmd_begin",
        "session_before_switch",
        "session_shutdown",
        "session_start",
        "with_session",
        "cmd_after",
        "old_ctx_stale",
    ]
    switch = next(e for e in LOG if e[0] == "session_before_switch")
    assert switch[1] == "new" and switch[3] is None  # no target for "new"
    shutdown = next(e for e in LOG if e[0] == "session_shutdown")
    start = [e for e in LOG if e[0] == "session_start"][-1]
    assert shutdown[1] == "new" and shutdown[3] and shutdown[3] != str(source)
    assert start[1] == "new" and start[2] == str(source)
    header = next(e for e in LOG if e[0] == "with_session")[1]
    assert header["parentSession"] == str(source)
    assert ("cmd_after", {"cancelled": False}) in LOG


def test_the_new_session_file_is_written_only_with_the_first_message(tmp_path: Path) -> None:
    result = _run(tmp_path, [{"text": "first"}], [{"prompt": "go"}, {"command": "/hp-handoff nowait"}])
    assert len(result.session_files()) == 1  # the new session holds no message: nothing on disk yet


def test_with_session_send_user_message_resolves_after_the_bootstrap_run_settles(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        [{"text": "first"}, {"text": "ingested dossier"}],
        [{"prompt": "go"}, {"command": "/hp-handoff await"}],
    )
    order = [e[0] for e in LOG]
    settled_in_new = len(order) - 1 - order[::-1].index("agent_settled")
    assert order.index("bootstrap_resolved") > settled_in_new
    assert ("bootstrap_resolved", True) in LOG
    bootstrap = next(e for e in LOG if e[0] == "input" and e[1].startswith("bootstrap"))
    assert bootstrap[2] == "extension" and bootstrap[3] is None
    request = [r for r in result.host.service.requests if r.kind == "agent"][-1]
    assert [m["role"] for m in request.messages if m["role"] != "system"] == ["user"]  # no source history
    assert len(result.session_files()) == 2


def test_session_before_switch_cancel_gives_cancelled_and_nothing_else(tmp_path: Path) -> None:
    def canceller(pi: ExtensionAPI) -> None:
        pi.on("session_before_switch", lambda event, ctx: {"cancel": True})

    LOG.clear()
    scenario = base(
        model={"agent": [{"text": "a"}]}, operations=[{"prompt": "go"}, {"command": "/hp-handoff"}]
    )
    result = run_with(tmp_path, scenario, _probe, canceller)
    assert ("cmd_after", {"cancelled": True}) in LOG
    assert not [
        e for e in LOG if e[0] in ("session_shutdown", "with_session", "old_ctx_stale") and e[1] != "quit"
    ]
    assert len(result.session_files()) == 1


def test_new_session_aborts_a_running_turn_instead_of_waiting(tmp_path: Path) -> None:
    held = {"text": "long answer", "latency_ms": 5000, "during": [{"command": "/hp-handoff nowait"}]}
    result = _run(tmp_path, [held], [{"prompt": "go"}])
    assert ("cmd_begin", False) in LOG
    settled = session_records(result, "agent_settled")
    assert settled and settled[0]["aborted"] is True
    order = [e[0] for e in LOG]
    assert (
        order.index("session_before_switch") < order.index("agent_settled") < order.index("session_shutdown")
    )


def test_input_events_carry_source_and_streaming_behavior_and_handled_input_never_reaches_the_model(
    tmp_path: Path,
) -> None:
    held = {
        "text": "working",
        "latency_ms": 100,
        "during": [
            {"prompt": {"text": "capture while streaming"}},
            {"prompt": {"text": "queued follow", "streaming_behavior": "followUp"}},
        ],
    }
    result = _run(tmp_path, [held, {"text": "after follow"}], [{"prompt": "capture idle"}, {"prompt": "go"}])
    inputs = [e for e in LOG if e[0] == "input"]
    assert inputs[0] == ("input", "capture idle", "rpc", None)
    assert ("input", "capture while streaming", "rpc", None) in inputs
    assert ("input", "queued follow", "rpc", "followUp") in inputs
    texts = [m.get("content") for r in result.host.service.requests for m in r.messages]
    assert not any("capture" in str(t) for t in texts)
    ops = [r for r in result.host.trace.records if r["kind"] == "op" and r.get("phase") == "end"]
    assert ops[0]["disposition"] == "handled" and ops[0]["ok"] is True
    assert len(session_records(result, "agent_settled")) == 1  # a handled input starts no run


def test_agent_settled_handlers_are_idle_and_have_no_new_session(tmp_path: Path) -> None:
    _run(tmp_path, [{"text": "a"}], [{"prompt": "go"}])
    assert ("agent_settled", True, False) in LOG


def test_a_steer_custom_message_forces_one_more_model_call_after_a_final_reply(tmp_path: Path) -> None:
    held = {"text": "A reply", "latency_ms": 100, "during": [{"command": "/hp-steer"}]}
    result = _run(tmp_path, [held, {"text": "answer after custom steer"}], [{"prompt": "go"}])
    requests = [r for r in result.host.service.requests if r.kind == "agent"]
    assert len(requests) == 2
    last = requests[1].messages[-1]
    assert last["role"] in ("user", "custom") and "STEER custom note" in str(last.get("content"))
    customs = [e for e in entries(result) if e.get("type") == "custom_message"]
    assert customs and customs[0]["customType"] == "hp-steer"
    assert len(session_records(result, "agent_settled")) == 1


def test_set_widget_records_lines_placement_and_clearing(tmp_path: Path) -> None:
    result = _run(tmp_path, [], [{"command": "/hp-ui"}])
    assert result.host.ui.widget_updates == [
        {"key": "hp-widget", "lines": ["Waiting for Session Handoff"], "placement": "aboveEditor"},
        {"key": "hp-widget", "lines": None},
    ]
    assert "hp-widget" not in result.host.ui.widgets


def test_get_agent_dir_is_the_machines_agent_dir_while_pi_runs(tmp_path: Path) -> None:
    before = os.environ.get("PI_CODING_AGENT_DIR")
    result = _run(tmp_path, [], [{"command": "/hp-ui"}])
    assert ("agent_dir", result.host.paths.agent_dir) in LOG
    assert os.environ.get("PI_CODING_AGENT_DIR") == before


def test_native_write_creates_parents_and_reports_the_path_as_given_without_details(tmp_path: Path) -> None:
    call = {"name": "write", "arguments": {"path": ".pi/handoff_test.md", "content": "# Handoff dossier\n"}}
    result = _run(tmp_path, [{"tool_calls": [call]}, {"text": "ok"}], [{"prompt": "go"}])
    written = Path(result.host.paths.project_dir) / ".pi" / "handoff_test.md"
    assert written.read_text(encoding="utf-8") == "# Handoff dossier\n"
    message = next(e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult")
    assert message["content"][0]["text"] == "Successfully wrote to .pi/handoff_test.md"
    assert "details" not in message


def test_native_bash_rm_removes_the_named_file(tmp_path: Path) -> None:
    """The path comes from the prompt (``{{match:...}}``). This test looked for the file in
    ``<run>/project``, where it never was (the machine is ``<run>/machine---.../``), and named
    the file by that path in the prompt, so it passed whether ``rm`` removed anything or not."""
    target = "{{match:file (\\S+) now}}"
    calls = [{"name": "bash", "arguments": {"command": f"rm -f {target}"}}]
    scenario = base(model={"agent": [{"tool_calls": calls}, {"text": "ok"}]}, operations=[])
    LOG.clear()
    scenario["files"] = {"gone.md": {"text": "x"}, "kept.md": {"text": "y"}}
    scenario["operations"] = [{"prompt": "delete the file gone.md now"}]
    project = Path(run(tmp_path, scenario, _probe).host.paths.project_dir)
    assert not (project / "gone.md").exists()
    assert (project / "kept.md").read_text(encoding="utf-8") == "y"


def test_scripted_tool_call_arguments_take_values_from_the_request_with_match(tmp_path: Path) -> None:
    calls = [{"name": "probe_tool", "arguments": {"note": "id={{match:Finish ID: (\\S+)}}"}}]
    _run(tmp_path, [{"tool_calls": calls}, {"text": "ok"}], [{"prompt": "Finish ID: F-123 is yours"}])
    assert ("tool", "id=F-123", False, False, False) in LOG


def test_a_command_sent_from_agent_settled_runs_after_the_settled_handlers(tmp_path: Path) -> None:
    def bridge(pi: ExtensionAPI) -> None:
        state = {"sent": False}

        def settled(event: Any, ctx: Any) -> None:
            if not state["sent"]:
                state["sent"] = True
                pi.send_user_message("/hp-handoff nowait", expand_prompt_templates=True)
                LOG.append(("bridge_dispatched",))

        pi.on("agent_settled", settled)

    LOG.clear()
    run_with(tmp_path, base(model={"agent": [{"text": "a"}]}, operations=[{"prompt": "go"}]), _probe, bridge)
    order = [e[0] for e in LOG]
    assert order.index("bridge_dispatched") < order.index("cmd_begin")
    assert ("cmd_begin", True) in LOG
    assert "session_start" in order[order.index("cmd_begin") :]


def _json_tool(pi: ExtensionAPI) -> None:
    async def execute(call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> ToolResult:
        LOG.append(("json_tool", params))
        return ToolResult(content=[{"type": "text", "text": f"x={params.get('x')!r}"}])

    pi.register_tool(
        ToolDefinition(
            name="json_tool",
            label="json",
            description="needs x",
            parameters={
                "type": "object",
                "required": ["x"],
                "properties": {"x": {"type": "number"}, "tag": {"type": "string"}},
            },
            execute=execute,
        )
    )


def test_tool_arguments_are_coerced_and_invalid_ones_never_reach_execute(tmp_path: Path) -> None:
    LOG.clear()
    calls = [
        {"name": "json_tool", "arguments": {"x": "5", "tag": "coerce"}},
        {"name": "json_tool", "arguments": {"tag": "missing x"}},
    ]
    scenario = base(model={"agent": [{"tool_calls": calls}, {"text": "ok"}]}, operations=[{"prompt": "go"}])
    result = run(tmp_path, scenario, _json_tool)
    assert LOG == [("json_tool", {"x": 5, "tag": "coerce"})]
    results = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    assert results[0]["content"][0]["text"] == "x=5"
    invalid = results[1]
    assert invalid["isError"] is True and invalid["details"] == {}
    assert invalid["content"][0]["text"] == (
        'Validation failed for tool "json_tool":\n  - x: missing\n\nReceived arguments:\n{\n  "tag": "missing x"\n}'
    )
    assistant = next(e["message"] for e in entries(result) if e.get("message", {}).get("role") == "assistant")
    assert assistant["content"][0]["arguments"] == {"x": "5", "tag": "coerce"}  # the raw arguments are kept


def test_native_bash_rm_reads_quoted_and_escaped_words_as_bash_does(tmp_path: Path) -> None:
    """``rm -f 'my notes.md' other\\ file.md`` removes those two files and nothing else
    (``builtin_tools._bash_rm`` splits words as the shell does). Split at whitespace, it named
    four paths that do not exist, and both files stayed."""
    calls = [{"name": "bash", "arguments": {"command": "rm -f 'my notes.md' other\\ file.md"}}]
    scenario = base(model={"agent": [{"tool_calls": calls}, {"text": "ok"}]}, operations=[])
    LOG.clear()
    scenario["files"] = {"my notes.md": {"text": "x"}, "other file.md": {"text": "y"}, "my": {"text": "z"}}
    scenario["operations"] = [{"prompt": "go"}]
    project = Path(run(tmp_path, scenario, _probe).host.paths.project_dir)
    assert not (project / "my notes.md").exists()
    assert not (project / "other file.md").exists()
    assert (project / "my").read_text(encoding="utf-8") == "z"
