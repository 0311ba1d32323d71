"""Differential: the RPC ``bash`` command and its ``user_bash`` extension event, real Pi 1.6
against the simulator.

Real Pi (``dist/modes/rpc/rpc-mode.js:462-481``) first awaits ``emitUserBash({type: "user_bash",
command, excludeFromContext: <given or false>, cwd})`` (``dist/core/extensions/runner.js:986-1013``):
the first handler returning something other than ``undefined`` decides, and its result must be
exactly one valid ``{operations}`` or ``{result}`` (``isUserBashEventResult``, :51-75), else
"Invalid user_bash handler result: ..."; a raise or an invalid result is an ``extension_error``
and is rethrown, so the command fails with that message. A ``{result}`` is recorded as it is;
otherwise Pi runs the command (``executeBash``, ``dist/core/agent-session.js:3267-3288``),
streaming ``bash_execution_update {id, delta}``. The record is a ``bashExecution`` message
(``recordBashResult``, :3293-3313), appended at once or, while a run streams, when the run ends
(``_flushPendingBashMessages``, :3335-3343); the model reads it as a user message
(``bashExecutionToText``, ``dist/core/messages.js:21-39``) unless ``excludeFromContext``.

The extension below, defined here, answers ``user_bash`` by the command: a valid ``{result}``, a
raise, an invalid result, or ``None`` (Pi runs ``printf``, a harmless deterministic command;
the scenario's ``output`` is what the simulator's shell prints). It notifies each event it saw.
Each test asserts real Pi's record explicitly, then that the simulator's is the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import _OPS, PASSIVE, Targets, assert_equivalent, scenario

from pi_continuity_harness.scenario.operations import normalise_operation_input
from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def extension(pi):
    def user_bash(event, ctx):
        row = [type(event).__name__, event.command, event.exclude_from_context, event.cwd == ctx.cwd]
        ctx.ui.notify("bash: " + json.dumps(row), "info")
        if event.command == "printf handled":
            return {"result": {"output": "from the handler", "exitCode": 3, "cancelled": False, "truncated": False}}
        if event.command == "printf raises":
            raise RuntimeError("user_bash handler failed")
        if event.command == "printf invalid":
            return {"result": {"output": "x", "exitCode": None, "cancelled": False, "truncated": False}}
        return None

    pi.on("user_bash", user_bash)
"""

_INVALID = (
    "Invalid user_bash handler result: return undefined for local execution or exactly one valid "
    "{ operations } or { result } object"
)


def _play(
    targets: Targets, sc: Any, ops: list[Any], implementation: str
) -> tuple[tuple[Observation, list[Any]], tuple[Observation, list[Any]]]:
    """As ``play``, keeping each target's operation outcomes (``ok``, ``error``)."""
    observed = []
    for kind in ("pi", "sim"):
        target = targets(kind, implementation)
        target.start(sc)
        outcomes = [target.perform(_OPS.validate_python(normalise_operation_input(op))) for op in ops]
        observed.append((target.observe(), [(o.ok, o.error) for o in outcomes]))
    return observed[0], observed[1]


def _bash_messages(observation: Observation) -> list[dict[str, Any]]:
    """The session's ``bashExecution`` messages, ``timestamp`` aside (wall time on real Pi)."""
    return [
        {k: v for k, v in e["message"].items() if k != "timestamp"}
        for e in observation.entries
        if e.get("type") == "message" and e["message"].get("role") == "bashExecution"
    ]


def _user_texts(observation: Observation) -> list[str]:
    """The user messages' texts of the last model request."""
    messages = observation.model_requests[-1].request.messages
    return [
        "".join(b.get("text", "") for b in m["content"]) if isinstance(m["content"], list) else m["content"]
        for m in messages
        if m.get("role") == "user"
    ]


def test_user_bash_results_raises_invalid_results_and_local_runs(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    implementation = python_extension("user_bash_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "DONE"}]})
    ops = [
        {"bash": "printf handled"},
        {"bash": "printf raises"},
        {"bash": "printf invalid"},
        {"bash": {"command": "printf hello", "output": "hello"}},
        {"bash": {"command": "printf hidden", "output": "hidden", "exclude_from_context": True}},
        {"bash": {"command": "printf shown", "output": "shown", "exclude_from_context": False}},
        {"prompt": "hello"},
    ]
    (real, real_ok), (sim, sim_ok) = _play(targets, sc, ops, implementation)

    # Real Pi: the handler's result is recorded; a raise and an invalid result fail the command
    # with the handler's message (an extension_error each) and record nothing.
    assert real_ok == [
        (True, None),
        (False, "user_bash handler failed"),
        (False, _INVALID),
        (True, None),
        (True, None),
        (True, None),
        (True, None),
    ]
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [("user_bash", "user_bash handler failed"), ("user_bash", _INVALID)]
    seen = [json.loads(m.partition(": ")[2]) for m, _ in real.notifications if m.startswith("bash: ")]
    assert [row[:3] for row in seen] == [
        ["UserBashEvent", "printf handled", False],
        ["UserBashEvent", "printf raises", False],
        ["UserBashEvent", "printf invalid", False],
        ["UserBashEvent", "printf hello", False],
        ["UserBashEvent", "printf hidden", True],
        ["UserBashEvent", "printf shown", False],
    ]
    assert all(row[3] for row in seen)  # cwd: the session's directory, the extension's ctx.cwd
    # The records: excludeFromContext only when the RPC command carried it; no fullOutputPath.
    local = {"exitCode": 0, "cancelled": False, "truncated": False}
    assert _bash_messages(real) == [
        {
            "role": "bashExecution",
            "command": "printf handled",
            "output": "from the handler",
            **local,
            "exitCode": 3,
        },
        {"role": "bashExecution", "command": "printf hello", "output": "hello", **local},
        {
            "role": "bashExecution",
            "command": "printf hidden",
            "output": "hidden",
            **local,
            "excludeFromContext": True,
        },
        {
            "role": "bashExecution",
            "command": "printf shown",
            "output": "shown",
            **local,
            "excludeFromContext": False,
        },
    ]
    # A local run streams its output under the command's RPC id (both targets: bash-<n>).
    updates = [(e["id"], e["delta"]) for e in real.session("bash_execution_update")]
    assert updates == [("bash-4", "hello"), ("bash-5", "hidden"), ("bash-6", "shown")]
    # The model reads the records as user messages, the excluded one left out.
    assert _user_texts(real) == [
        "Ran `printf handled`\n```\nfrom the handler\n```\n\nCommand exited with code 3",
        "Ran `printf hello`\n```\nhello\n```",
        "Ran `printf shown`\n```\nshown\n```",
        "hello",
    ]

    assert sim_ok == real_ok
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert notes(sim).get("bash") == notes(real)["bash"]
    assert _bash_messages(sim) == _bash_messages(real)
    assert [(e["id"], e["delta"]) for e in sim.session("bash_execution_update")] == updates
    assert _user_texts(sim) == _user_texts(real)
    assert_equivalent(real, sim)


def test_a_command_sent_while_a_run_streams_is_recorded_when_the_run_ends(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    implementation = python_extension("user_bash_probe", _EXTENSION)
    during = [{"bash": {"command": "printf during", "output": "during"}}, {"bash": "printf handled"}]
    sc = scenario({"agent": [{"text": "first", "latency_ms": 300, "during": during}, {"text": "second"}]})
    (real, real_ok), (sim, sim_ok) = _play(
        targets, sc, [{"prompt": "one"}, {"prompt": "two"}], implementation
    )

    assert real_ok == [(True, None), (True, None)]
    # Real Pi: both records come after the run's assistant message (held until the run ended).
    roles = [
        e["message"].get("role") if e.get("type") == "message" else e.get("type")
        for e in real.entries
        if e.get("type") == "message"
    ]
    assert roles[:5] == ["system", "user", "assistant", "bashExecution", "bashExecution"], roles
    assert [m["command"] for m in _bash_messages(real)] == ["printf during", "printf handled"]
    assert [(e["id"], e["delta"]) for e in real.session("bash_execution_update")] == [("bash-1", "during")]
    # The next run's request reads them after the first reply.
    assert _user_texts(real) == [
        "one",
        "Ran `printf during`\n```\nduring\n```",
        "Ran `printf handled`\n```\nfrom the handler\n```\n\nCommand exited with code 3",
        "two",
    ]

    assert sim_ok == real_ok
    assert [e["message"].get("role") for e in sim.entries if e.get("type") == "message"][:5] == roles[:5]
    assert _bash_messages(sim) == _bash_messages(real)
    assert _user_texts(sim) == _user_texts(real)
    assert_equivalent(real, sim)


def test_without_an_extension_real_pi_runs_the_command_and_the_model_reads_its_exit_code(
    targets: Targets,
) -> None:
    sc = scenario({"agent": [{"text": "DONE"}]})
    ops = [
        {"bash": {"command": "printf 'a\\nb\\n'", "output": "a\nb\n"}},
        {"bash": {"command": "false", "exit_code": 1}},
        {"prompt": "hello"},
    ]
    (real, real_ok), (sim, sim_ok) = _play(targets, sc, ops, PASSIVE)

    assert real_ok == [(True, None)] * 3
    # Real Pi ran both: the output streamed (none for false; bash's printf writes line by line,
    # and the pipe may deliver the lines in one read or two: the comparison joins them, ledger
    # ``bash-output-chunks``), the exit codes recorded.
    updates = real.session("bash_execution_update")
    assert {e["id"] for e in updates} == {"bash-1"} and "".join(e["delta"] for e in updates) == "a\nb\n"
    assert [(m["command"], m["output"], m["exitCode"]) for m in _bash_messages(real)] == [
        ("printf 'a\\nb\\n'", "a\nb\n", 0),
        ("false", "", 1),
    ]
    assert _user_texts(real) == [
        "Ran `printf 'a\\nb\\n'`\n```\na\nb\n\n```",
        "Ran `false`\n(no output)\n\nCommand exited with code 1",
        "hello",
    ]

    assert sim_ok == real_ok
    assert _bash_messages(sim) == _bash_messages(real)
    assert _user_texts(sim) == _user_texts(real)
    assert_equivalent(real, sim)
