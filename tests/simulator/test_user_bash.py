"""The ``bash`` operation (RPC ``bash``, ``dist/modes/rpc/rpc-mode.js:462-481``) and its
``user_bash`` extension event in the simulator: one test per rule of Pi 1.6.0
(``emitUserBash``, ``dist/core/extensions/runner.js:986-1013``; ``executeBash`` and
``recordBashResult``, ``dist/core/agent-session.js:3267-3313``; ``bashExecutionToText``,
``dist/core/messages.js:21-39``). ``tests/realpi/test_differential_user_bash.py`` compares the
same rules with real Pi."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, UserBashEvent
from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.messages import bash_execution_to_text, convert_to_llm
from pi_continuity_harness.simulator.user_bash import INVALID_RESULT, is_user_bash_event_result

from .helpers import agent_requests, base, entries, records, run, session_records, tree_snapshot

_LOCAL = {"exitCode": 0, "cancelled": False, "truncated": False}


def _bash_messages(result: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in e["message"].items() if k != "timestamp"}
        for e in entries(result)
        if e.get("type") == "message" and e["message"].get("role") == "bashExecution"
    ]


def _outcomes(result: Any, name: str = "bash") -> list[tuple[bool, str | None]]:
    return [
        (r["ok"], r.get("error"))
        for r in records(result, "op")
        if r["name"] == name and r.get("phase") == "end"
    ]


def _user_texts(result: Any) -> list[str]:
    messages = agent_requests(result)[-1].messages
    return ["".join(b.get("text", "") for b in m["content"]) for m in messages if m.get("role") == "user"]


def _answering(value: Any) -> Any:
    def extension(pi: ExtensionAPI) -> None:
        pi.on("user_bash", lambda event, ctx: value)

    return extension


def test_a_handler_result_is_recorded_as_it_is_and_the_command_does_not_run(tmp_path: Path) -> None:
    """rpc-mode.js:469-473: ``recordBashResult`` with the handler's result; no
    ``bash_execution_update`` (nothing ran). ``fullOutputPath`` is kept when given; other keys of
    the result are not part of the record (agent-session.js:3294-3304)."""
    given = {
        "output": "from the handler",
        "exitCode": 2,
        "cancelled": True,
        "truncated": True,
        "fullOutputPath": "out.log",
        "extra": 1,
    }
    scenario = base(operations=[{"bash": {"command": "printf x", "output": "ignored"}}])
    result = run(tmp_path, scenario, _answering({"result": given}))
    assert _outcomes(result) == [(True, None)]
    assert _bash_messages(result) == [
        {
            "role": "bashExecution",
            "command": "printf x",
            "output": "from the handler",
            "exitCode": 2,
            "cancelled": True,
            "truncated": True,
            "fullOutputPath": "out.log",
        }
    ]
    assert session_records(result, "bash_execution_update") == []


def test_the_first_handler_returning_something_decides(tmp_path: Path) -> None:
    """runner.js:988-997: a handler returning ``undefined`` (``None``) lets the next one run; the
    first that returns something decides and no later handler runs. Each gets the event with
    Pi's fields: the command, ``excludeFromContext ?? false`` and the session's directory."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def first(event: UserBashEvent, ctx: Any) -> None:
            seen.append(("first", event.command, event.exclude_from_context, event.cwd == ctx.cwd))

        def second(event: UserBashEvent, ctx: Any) -> Any:
            seen.append(("second", event.command))
            return {"result": {"output": "two", "exitCode": 0, "cancelled": False, "truncated": False}}

        def third(event: UserBashEvent, ctx: Any) -> Any:
            seen.append(("third", event.command))
            return {"result": {"output": "three", "exitCode": 0, "cancelled": False, "truncated": False}}

        pi.on("user_bash", first)
        pi.on("user_bash", second)
        pi.on("user_bash", third)

    result = run(tmp_path, base(operations=[{"bash": "printf x"}]), extension)
    assert seen == [("first", "printf x", False, True), ("second", "printf x")]
    assert [m["output"] for m in _bash_messages(result)] == ["two"]


def test_a_raising_handler_fails_the_command_with_its_message_and_records_nothing(tmp_path: Path) -> None:
    """runner.js:999-1008: the error is reported (``extension_error``, event ``user_bash``) and
    rethrown, so the RPC command fails with its message (rpc-mode.js:652-655)."""

    def extension(pi: ExtensionAPI) -> None:
        def fail(event: UserBashEvent, ctx: Any) -> None:
            raise RuntimeError("no shell for you")

        pi.on("user_bash", fail)

    result = run(tmp_path, base(operations=[{"bash": {"command": "printf x", "output": "x"}}]), extension)
    assert _outcomes(result) == [(False, "no shell for you")]
    assert [(r["event"], r["error"]) for r in session_records(result, "extension_error")] == [
        ("user_bash", "no shell for you")
    ]
    assert _bash_messages(result) == []
    assert session_records(result, "bash_execution_update") == []


_VALID = {"output": "x", "exitCode": 0, "cancelled": False, "truncated": False}


@pytest.mark.parametrize(
    "value",
    [
        {},
        False,
        0,
        "result",
        [],
        {"result": None},
        {"result": {**_VALID, "exitCode": None}},  # JSON null, not undefined
        {"result": {k: v for k, v in _VALID.items() if k != "exitCode"}},  # "exitCode" in result
        {"result": {**_VALID, "exitCode": True}},
        {"result": {**_VALID, "output": 5}},
        {"result": {**_VALID, "cancelled": 0}},
        {"result": {**_VALID, "truncated": None}},
        {"result": {**_VALID, "fullOutputPath": None}},
        {"operations": {"exec": "a function cannot cross the bridge"}},
        {"operations": None},
        {"result": _VALID, "operations": {}},
    ],
)
def test_an_invalid_result_fails_the_command_with_pis_message(tmp_path: Path, value: Any) -> None:
    """runner.js:51-75 ``isUserBashEventResult`` and :994-996: anything but ``undefined`` that is
    not exactly one valid ``{operations}`` or ``{result}`` is an error, reported and rethrown."""
    result = run(
        tmp_path, base(operations=[{"bash": {"command": "printf x", "output": "x"}}]), _answering(value)
    )
    assert _outcomes(result) == [(False, INVALID_RESULT)]
    assert [(r["event"], r["error"]) for r in session_records(result, "extension_error")] == [
        ("user_bash", INVALID_RESULT)
    ]
    assert _bash_messages(result) == []


def test_a_result_is_valid_with_a_number_exit_code_and_a_string_full_output_path() -> None:
    assert is_user_bash_event_result({"result": _VALID})
    assert is_user_bash_event_result({"result": {**_VALID, "exitCode": 1.5, "fullOutputPath": ""}})


def test_without_a_handler_the_scenario_output_streams_under_the_commands_rpc_id(tmp_path: Path) -> None:
    """agent-session.js:3274-3282: the output streams as ``bash_execution_update {id, delta}``
    (the RPC command's id, ``bash-<n>`` on both targets) and is recorded with the exit code; an
    empty output streams nothing."""
    scenario = base(
        operations=[
            {"bash": {"command": "printf a", "output": "a\n", "exit_code": 1}},
            {"bash": "true"},
        ]
    )
    result = run(tmp_path, scenario)
    assert [(r["id"], r["delta"]) for r in session_records(result, "bash_execution_update")] == [
        ("bash-1", "a\n")
    ]
    assert _bash_messages(result) == [
        {"role": "bashExecution", "command": "printf a", "output": "a\n", **_LOCAL, "exitCode": 1},
        {"role": "bashExecution", "command": "true", "output": "", **_LOCAL},
    ]


def test_exclude_from_context_is_recorded_only_when_given_and_keeps_the_record_from_the_model(
    tmp_path: Path,
) -> None:
    """rpc-mode.js:470-477 passes ``excludeFromContext`` as the command had it (absent: the
    record has none); messages.js:80-83 leaves an excluded record out of the model's context."""
    scenario = base(
        model={"agent": [{"text": "ok"}]},
        operations=[
            {"bash": {"command": "printf a", "output": "a"}},
            {"bash": {"command": "printf b", "output": "b", "exclude_from_context": True}},
            {"bash": {"command": "printf c", "output": "c", "exclude_from_context": False}},
            {"prompt": "go"},
        ],
    )
    result = run(tmp_path, scenario)
    assert [m.get("excludeFromContext", "absent") for m in _bash_messages(result)] == ["absent", True, False]
    assert _user_texts(result) == ["Ran `printf a`\n```\na\n```", "Ran `printf c`\n```\nc\n```", "go"]


def test_a_record_made_while_a_run_streams_is_appended_when_the_run_ends(tmp_path: Path) -> None:
    """agent-session.js:3305-3308 and 1542: while a run streams the record waits in
    ``_pendingBashMessages`` and is appended when the run ends, after its messages."""
    during = [{"bash": {"command": "printf d", "output": "d"}}]
    scenario = base(
        model={"agent": [{"text": "first", "during": during}, {"text": "second"}]},
        operations=[{"prompt": "one"}, {"prompt": "two"}],
    )
    result = run(tmp_path, scenario)
    roles = [e["message"]["role"] for e in entries(result) if e.get("type") == "message"]
    assert roles == ["system", "user", "assistant", "bashExecution", "user", "assistant"]
    assert _user_texts(result) == ["one", "Ran `printf d`\n```\nd\n```", "two"]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"command": "ls", "output": "", "exitCode": 0}, "Ran `ls`\n(no output)"),
        (
            {"command": "ls", "output": "a", "exitCode": 2},
            "Ran `ls`\n```\na\n```\n\nCommand exited with code 2",
        ),
        (
            {"command": "ls", "output": "a", "exitCode": 2, "cancelled": True},
            "Ran `ls`\n```\na\n```\n\n(command cancelled)",
        ),
        (
            {"command": "ls", "output": "a", "exitCode": 2.0},
            "Ran `ls`\n```\na\n```\n\nCommand exited with code 2",
        ),
        (
            {"command": "ls", "output": "a", "exitCode": 0, "truncated": True, "fullOutputPath": "/t/o.log"},
            "Ran `ls`\n```\na\n```\n\n[Output truncated. Full output: /t/o.log]",
        ),
        ({"command": "ls", "output": "a", "exitCode": 0, "truncated": True}, "Ran `ls`\n```\na\n```"),
    ],
)
def test_the_model_reads_a_record_as_bash_execution_to_text_writes_it(
    message: dict[str, Any], text: str
) -> None:
    """messages.js:21-39 and :79-88: a user message with the record's text and timestamp."""
    record = {"role": "bashExecution", "timestamp": 5, "cancelled": False, "truncated": False, **message}
    assert bash_execution_to_text(record) == text
    assert convert_to_llm([record]) == [
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 5}
    ]


@pytest.mark.parametrize(
    ("bash", "field", "why"),
    [
        ({"command": "python -c 1"}, "command", "runs 'python'"),
        ({"command": "cat /etc/passwd"}, "command", "names '/etc/passwd'"),
        ({"command": "ls ../.."}, "command", "goes up with '..'"),
        ({"command": "printf {{match:x}}"}, "command", "{{match:...}} is for a scripted tool call"),
        ({"command": "ls", "output": "\x1b[31mred"}, "output", "which Pi removes"),
        ({"command": "ls", "output": "a\r\n"}, "output", "which Pi removes"),
        ({"command": "ls", "output": "x\n" * 2001}, "output", "truncation is not modelled"),
        ({"command": "ls", "exit_code": 256}, "exit_code", "less than or equal to 255"),
        ({"command": "ls", "exclude_from_context": "yes"}, "exclude_from_context", "valid boolean"),
    ],
)
def test_a_bash_operation_pi_must_not_run_or_the_simulator_cannot_model_is_refused_at_load(
    bash: dict[str, Any], field: str, why: str
) -> None:
    """The command really runs on real Pi, so it is held to a scripted ``bash`` call's rule
    (``tool_confinement.real_pi_command_problem``); an output Pi would clean or truncate is not
    modelled."""
    with pytest.raises(Exception) as raised:
        parse_scenario(base(operations=[{"prompt": "a"}, {"bash": bash}]), "bad.yaml")
    assert f"bad.yaml: operations[1].bash.{field}: " in str(raised.value)
    assert why in str(raised.value)


def test_the_cli_refuses_a_bash_operation_with_one_line_and_exit_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.yaml").write_text("name: b\noperations:\n  - bash: sh -c ls\n", encoding="utf-8")
    before = tree_snapshot(tmp_path)
    assert main(["simulate", "b.yaml", "--workdir", "run"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("pi-continuity-harness simulate: b.yaml: operations[0].bash.command: ")
        and "'sh'" in err
    )
    assert err.count("\n") == 1, err
    assert tree_snapshot(tmp_path) == before
