"""Live checks of the real-Pi target against @earendil-works/pi-coding-agent@1.6.0 (or the release
named by ``$PI_HARNESS_PI_VERSION``; where releases differ, the release's profile says what to
expect)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario.continuity_replies import valid_brief_body
from pi_continuity_harness.scenario.model_script import (
    SUMMARIZATION_SYSTEM_PROMPT_PREFIX,
    HttpError,
    ModelOutcome,
    ModelRequest,
    ModelScript,
    Reply,
    ScriptedToolCall,
    Usage,
    format_http_error,
)
from pi_continuity_harness.scenario.operations import AbortOp, CommandOp, CrashOp, DialogAnswer
from pi_continuity_harness.targets.realpi import (
    FakeModel,
    PiInstallation,
    PiInstallError,
    PiProcessExitedError,
    PiRpcProcess,
    PiVersionProfile,
    find_installation,
    install_pi,
)

pytestmark = pytest.mark.realpi

EXTENSIONS = Path(__file__).parent / "extensions"
#: The ``realpi`` fixture (conftest.py): returns an object with server, env and pi.
Make = Callable[..., Any]

TINY_COMPACTION = {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
LONG = "The quick brown fox jumps over the lazy dog. " * 18  # ~800 chars, ~200 tokens


def _assistant_ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in events
        if e.get("type") == "message_end" and e["message"].get("role") == "assistant"
    ]


def test_installation_is_cached(pi_installation: PiInstallation) -> None:
    expected = os.environ.get("PI_HARNESS_PI_VERSION") or "1.6.0"
    found = find_installation(pi_installation.cache_dir, version=expected)
    assert found is not None and found.cached
    assert (found.node_version, found.pi_version) == ("22.23.3", expected)
    assert found.pi_package_dir.parts[-4] in (f"pi-{expected}", "pi")  # beside the other releases
    assert found.pi_cli_path == pi_installation.pi_cli_path


def test_install_errors_are_clear(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(PiInstallError, match="npm is not on PATH"):
        install_pi(tmp_path / "no-npm")
    monkeypatch.undo()
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    with pytest.raises(PiInstallError, match="is the npm registry reachable"):
        install_pi(tmp_path / "no-registry")
    assert find_installation(tmp_path / "no-registry") is None


def test_install_pi_command_reuses_the_cache_and_rejects_a_file(
    pi_installation: PiInstallation, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = pi_installation.pi_version
    cache = str(pi_installation.cache_dir)
    assert main(["install-pi", "--cache-dir", cache, "--pi-version", version, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Pi {version} with Node 22.23.3 reused in ")
    assert f"pi:   {pi_installation.pi_cli_path}" in out
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("", encoding="utf-8")
    assert main(["install-pi", "--cache-dir", str(not_a_directory)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert not_a_directory.read_text(encoding="utf-8") == ""


def test_prompt_round_trip(realpi: Make, pi_profile: PiVersionProfile) -> None:
    script = ModelScript(agent=(Reply(text="Hello from fake", usage=Usage(input=2000, output=10)),))
    rp = realpi(script)
    assert rp.pi.start_seconds is not None and rp.pi.start_seconds < 10

    result = rp.pi.prompt("say hi")

    settled = {"type": "agent_settled", "aborted": False}
    if "agent-settled-aborted" not in pi_profile.capabilities:
        settled = {"type": "agent_settled"}  # Pi 1.0.3: dist/core/agent-session.js:676-677
    assert result.disposition == "started" and result.settled == settled
    assert rp.pi.get_last_assistant_text() == "Hello from fake"
    [message] = _assistant_ends(result.of_type("message_end"))
    assert message["usage"]["totalTokens"] == 2010 and message["stopReason"] == "stop"
    stats = rp.pi.get_session_stats()
    assert stats["contextUsage"]["tokens"] == 2010
    assert stats["contextUsage"]["contextWindow"] == 20000
    # Pi's own request: classified agent, pi-ai message shapes, tools and max_tokens parsed.
    [req] = rp.server.requests
    assert req.kind == "agent" and req.index == 0 and req.status == 200 and not req.aborted
    assert req.request is not None
    assert req.request.tools[:4] == ["read", "bash", "edit", "write"]
    assert req.request.max_tokens == 1000
    preamble = "You are a coding assistant"
    if "pi-1.5-system-prompt" not in pi_profile.capabilities:
        preamble = "You are an expert coding assistant"  # Pi <= 1.4.0: dist/core/system-prompt.js:83
    assert req.request.system_prompt and req.request.system_prompt.startswith(preamble)
    assert req.request.messages == [{"role": "user", "content": [{"type": "text", "text": "say hi"}]}]
    observed = [e["type"] for e in rp.env.observer_events()]
    assert observed[:3] == ["observer_loaded", "session_start", "harness_session_file"]
    assert observed[3:] == ["input", "agent_start", "turn_start", "turn_end", "agent_end", "agent_settled"]


def test_threshold_compaction_uses_summary_requests(realpi: Make) -> None:
    script = ModelScript(
        agent=(
            Reply(text=LONG, usage=Usage(input=1000, output=10)),
            Reply(text=LONG, usage=Usage(input=17000, output=10)),
        )
    )
    rp = realpi(script, project_settings=TINY_COMPACTION)
    rp.pi.prompt("first " + LONG)

    result = rp.pi.prompt("second " + LONG)

    types = result.types()
    assert types.index("agent_end") < types.index("compaction_start") < types.index("agent_settled")
    [start] = result.of_type("compaction_start")
    [end] = result.of_type("compaction_end")
    assert start["reason"] == "threshold"
    assert end["reason"] == "threshold" and end["aborted"] is False and end["willRetry"] is False
    summaries = rp.server.of_kind("summary")
    assert summaries, "Pi's default summarizer must hit the fake server"
    for s in summaries:
        assert s.request is not None and s.request.system_prompt is not None
        assert s.request.system_prompt.startswith(SUMMARIZATION_SYSTEM_PROMPT_PREFIX)
        assert s.request.tools == []
    assert [r.kind for r in rp.server.requests[:2]] == ["agent", "agent"]
    obs = rp.env.observer_events()
    [before] = [e for e in obs if e["type"] == "session_before_compact"]
    assert before["reason"] == "threshold" and before["willRetry"] is False
    assert before["preparation"]["settings"] == {
        "enabled": True,
        "reserveTokens": 4000,
        "keepRecentTokens": 100,
    }
    assert before["preparation"]["tokensBefore"] == 17010
    [compact] = [e for e in obs if e["type"] == "session_compact"]
    assert compact["reason"] == "threshold" and compact["fromExtension"] is False
    assert compact["compactionEntry"]["summary"].startswith("SUMMARY-1")
    assert compact["compactionEntry"]["firstKeptEntryId"] == before["preparation"]["firstKeptEntryId"]
    assert compact["compactionEntry"]["fromHook"] is False
    assert rp.pi.get_session_stats()["contextUsage"]["tokens"] is None


def test_overflow_error_compacts_and_retries_once(realpi: Make) -> None:
    overflow = HttpError(
        status=400,
        message="Your input exceeds the context window of this model",
        code="context_length_exceeded",
    )
    script = ModelScript(
        agent=(
            Reply(text=LONG, usage=Usage(input=1000, output=10)),
            Reply(error=overflow),
            Reply(text="RETRY-OK", usage=Usage(input=500, output=5)),
        )
    )
    rp = realpi(script, project_settings=TINY_COMPACTION)
    rp.pi.prompt("first " + LONG)

    result = rp.pi.prompt("second " + LONG)

    [start] = result.of_type("compaction_start")
    [end] = result.of_type("compaction_end")
    assert start["reason"] == "overflow"
    assert end["reason"] == "overflow" and end["willRetry"] is True and end["aborted"] is False
    assert result.types().count("agent_start") == 2
    messages = _assistant_ends(result.of_type("message_end"))
    assert [m["stopReason"] for m in messages] == ["error", "stop"]
    assert messages[0]["errorMessage"] == format_http_error(overflow)
    assert rp.pi.get_last_assistant_text() == "RETRY-OK"
    agents = rp.server.of_kind("agent")
    assert [r.status for r in agents] == [200, 400, 200]
    assert rp.server.of_kind("summary")
    [before] = [e for e in rp.env.observer_events() if e["type"] == "session_before_compact"]
    assert before["reason"] == "overflow" and before["willRetry"] is True


def test_http_503_error_message_matches_format_http_error(realpi: Make) -> None:
    unavailable = HttpError(status=503, message="Service Unavailable", type="server_error")
    script = ModelScript(agent=(Reply(error=unavailable), Reply(text="recovered")))
    rp = realpi(script)

    result = rp.pi.prompt("hello")

    first = _assistant_ends(result.of_type("message_end"))[0]
    assert first["stopReason"] == "error"
    assert first["errorMessage"] == format_http_error(unavailable)
    assert first["errorMessage"] == (
        '503: {"message":"Service Unavailable","type":"server_error","param":null,"code":null}'
    )
    assert "auto_retry_start" in result.types()
    assert rp.pi.get_last_assistant_text() == "recovered"


def test_held_reply_aborted_over_rpc(realpi: Make, pi_profile: PiVersionProfile) -> None:
    holds: list[tuple[ModelRequest, ModelOutcome, dict[str, Any]]] = []

    def on_hold(pi: PiRpcProcess, request: ModelRequest, outcome: ModelOutcome) -> None:
        assert any(isinstance(op, AbortOp) for op in outcome.during)
        holds.append((request, outcome, pi.abort(timeout=10)))

    script = ModelScript(agent=(Reply(text="never delivered", during=(AbortOp(),)),))
    rp = realpi(script, on_hold=on_hold)

    result = rp.pi.prompt("please hang", timeout=20)

    assert len(holds) == 1 and holds[0][2]["success"] is True
    # Pi 1.0.3's agent_settled says nothing about the abort (dist/core/agent-session.js:676-677).
    assert result.aborted is ("agent-settled-aborted" in pi_profile.capabilities)
    [req] = rp.server.requests
    assert req.held and req.aborted and req.status == 0
    [message] = _assistant_ends(result.of_type("message_end"))
    assert message["stopReason"] == "aborted"
    assert not rp.server.errors
    settled = [e.get("aborted") for e in rp.env.observer_events() if e["type"] == "agent_settled"]
    assert settled == ([True] if "agent-settled-aborted" in pi_profile.capabilities else [None])


def test_dialogs_answered_from_queue(realpi: Make) -> None:
    rp = realpi(ModelScript(), extensions=[EXTENSIONS / "dialogs.ts"])

    answered = rp.pi.prompt(
        "/ask deploy",
        answers=[DialogAnswer(confirm=True), DialogAnswer(select="settings"), {"value": "80"}, "spare"],
    )

    assert answered.disposition == "handled"
    assert [d.request["method"] for d in answered.dialogs] == ["confirm", "select", "input"]
    assert answered.dialogs[0].request["message"] == "Proceed with deploy?"
    assert answered.dialogs[1].request["options"] == ["armed", "settings", "artifacts"]
    assert [d.response for d in answered.dialogs] == [
        {"type": "extension_ui_response", "id": answered.dialogs[0].request["id"], "confirmed": True},
        {"type": "extension_ui_response", "id": answered.dialogs[1].request["id"], "value": "settings"},
        {"type": "extension_ui_response", "id": answered.dialogs[2].request["id"], "value": "80"},
    ]
    assert len(answered.unused_answers) == 1
    notify = [u for u in answered.ui if u["method"] == "notify"]
    assert [n["message"] for n in notify] == ['Answers: {"confirm":true,"select":"settings","input":"80"}']
    assert notify[0]["notifyType"] == "info"
    status = [u for u in answered.ui if u["method"] == "setStatus"]
    assert status[0]["statusKey"] == "harness" and status[0]["statusText"] == "answered settings"

    cancelled = rp.pi.prompt("/ask", answers=[])

    assert all(d.response.get("cancelled") is True for d in cancelled.dialogs)
    assert [n["message"] for n in cancelled.ui if n["method"] == "notify"] == [
        'Answers: {"confirm":false,"select":null,"input":null}'
    ]
    assert rp.server.requests == []


def test_reload_new_session_and_model_select_observed(realpi: Make, pi_profile: PiVersionProfile) -> None:
    """Over raw RPC (not through PiTarget, which works around it), ``new_session`` runs
    ``session_start`` twice on the releases whose profile says so (1.0.3-1.5.2)."""
    models = (FakeModel("fake-model", 20000, 1000), FakeModel("fake-big", 40000, 1000))
    rp = realpi(ModelScript(), models=models)
    rp.pi.prompt("hello")

    reload = rp.pi.prompt("/harness-reload")
    switched = rp.pi.set_model("fake", "fake-big")
    first_file = rp.pi.get_state()["sessionFile"]
    new = rp.pi.new_session()

    assert reload.disposition == "handled"
    assert switched["success"] is True and new["success"] is True
    obs = [
        e
        for e in rp.env.observer_events()
        if e["type"] not in ("input", "turn_start", "turn_end", "harness_session_file")
    ]
    tail = [(e["type"], e.get("reason") or e.get("source")) for e in obs if e["type"] != "harness_reload"]
    start = tail.index(("session_shutdown", "reload"))
    twice = [("session_start", "new")] if pi_profile.rpc_new_session_binds_twice else []
    assert tail[start:] == [
        ("session_shutdown", "reload"),
        ("observer_loaded", None),
        ("session_start", "reload"),
        ("model_select", "set"),
        ("session_before_switch", "new"),
        ("session_shutdown", "new"),
        ("observer_loaded", None),
        ("session_start", "new"),
        *twice,
    ]
    [select] = [e for e in obs if e["type"] == "model_select"]
    assert select["model"] == "fake/fake-big" and select["previousModel"] == "fake/fake-model"
    assert select["contextWindow"] == 40000
    started = [e for e in obs if e["type"] == "session_start" and e["reason"] == "new"]
    assert [e["previousSessionFile"] for e in started] == [first_file] * (1 + len(twice))
    seqs = [e["seq"] for e in rp.env.observer_events()]
    assert seqs == list(range(len(seqs)))


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def test_kill_while_held_leaves_no_process(realpi: Make) -> None:
    def on_hold(pi: PiRpcProcess, request: ModelRequest, outcome: ModelOutcome) -> None:
        assert any(isinstance(op, CrashOp) for op in outcome.during)
        pi.kill()

    script = ModelScript(agent=(Reply(text="never", during=(CrashOp(),)),))
    rp = realpi(script, on_hold=on_hold)
    pid = rp.pi.pid
    assert pid is not None and _group_members(pid)

    with pytest.raises(PiProcessExitedError):
        rp.pi.prompt("crash now", timeout=20)

    assert not rp.pi.alive and rp.pi.returncode is not None and rp.pi.returncode < 0
    deadline = time.monotonic() + 5
    while _group_members(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group_members(pid) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    [req] = rp.server.wait_for_requests(1, timeout=5)
    assert req.aborted and req.status == 0


def test_tool_call_and_thinking_round_trip(realpi: Make) -> None:
    script = ModelScript(
        agent=(
            Reply(
                thinking="pondering",
                tool_calls=(ScriptedToolCall(name="bash", arguments={"command": "echo hi"}, id="call_echo"),),
            ),
            Reply(text="done"),
        )
    )
    rp = realpi(script)

    result = rp.pi.prompt("run echo")

    first, second = _assistant_ends(result.of_type("message_end"))
    assert first["stopReason"] == "toolUse"
    assert [b["type"] for b in first["content"]] == ["thinking", "toolCall"]
    assert first["content"][0]["thinking"] == "pondering"
    assert first["content"][1]["arguments"] == {"command": "echo hi"}
    assert second["stopReason"] == "stop"
    req = rp.server.requests[1].request
    assert req is not None and req.kind == "agent" and req.index == 1
    _user, assistant, tool = req.messages
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "pondering"},
            {"type": "toolCall", "id": "call_echo", "name": "bash", "arguments": {"command": "echo hi"}},
        ],
    }
    assert tool["role"] == "toolResult" and tool["toolCallId"] == "call_echo" and tool["toolName"] == "bash"
    assert tool["content"] == [{"type": "text", "text": "hi\n"}]


def test_extension_model_call_classified_extension(realpi: Make) -> None:
    rp = realpi(ModelScript(), extensions=[EXTENSIONS / "synth.ts"])

    result = rp.pi.prompt("/synth hello brief")

    [req] = rp.server.requests
    assert req.kind == "extension" and req.request is not None
    assert req.request.system_prompt == "You write a Continuity Brief."
    assert req.request.max_tokens == 4000 and req.request.tools == []
    [notify] = [u for u in result.ui if u["method"] == "notify"]
    reported = json.loads(notify["message"])
    assert reported["stopReason"] == "stop"
    assert reported["text"] == valid_brief_body(req.request)
    assert req.outcome is not None and reported["usage"] == req.outcome.usage.total


def test_held_reply_runs_a_command_then_answers(realpi: Make) -> None:
    seen: list[Any] = []

    def on_hold(pi: PiRpcProcess, request: ModelRequest, outcome: ModelOutcome) -> None:
        # A held run cannot settle, so an operation run from on_hold must not wait for it.
        seen.append(pi.prompt("/ask held", answers=[True, "armed", "7"], settle=False))

    script = ModelScript(
        agent=(Reply(text="after the command", during=(CommandOp.model_validate({"command": "/ask held"}),)),)
    )
    rp = realpi(script, extensions=[EXTENSIONS / "dialogs.ts"], on_hold=on_hold)

    result = rp.pi.prompt("hold on")

    [command] = seen
    assert command.disposition == "handled"
    assert [d.response.get("value", d.response.get("confirmed")) for d in command.dialogs] == [
        True,
        "armed",
        "7",
    ]
    [req] = rp.server.requests
    assert req.held and not req.aborted and req.status == 200
    assert not result.aborted and rp.pi.get_last_assistant_text() == "after the command"
