"""PiTarget on real Pi 1.6.0, with the probe extension (Python, through the bridge).

Several tests run the same scenario on the simulator too and compare the observations: the
same extension-event sequence (types and reasons), the same session-event types, the same
notifications and operation outcomes.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.document import Scenario, ScenarioError, parse_scenario
from pi_continuity_harness.scenario.model_script import Reply, Usage
from pi_continuity_harness.scenario.operations import Operation, normalise_operation_input
from pi_continuity_harness.targets.realpi import PiStartError, PiTarget, profile_for
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import (
    Observation,
    OperationOutcome,
    TargetBudgetError,
    TargetStartError,
    TargetUnavailableError,
)

pytestmark = pytest.mark.realpi

EXTENSIONS = Path(__file__).parent / "extensions"
LONG = "The quick brown fox jumps over the lazy dog. " * 18  # ~800 chars, ~200 tokens
CONTINUATION = "PROBE-CONTINUE: resume from the Brief."
Targets = Callable[..., PiTarget | SimTarget]
_OPS: TypeAdapter[Any] = TypeAdapter(Operation)


def scenario(model: dict[str, Any] | None = None, **fields: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "probe",
        "models": [
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        ],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
        },
        "model": model or {},
    }
    data.update(fields)
    return parse_scenario(data)


def run(
    target: PiTarget | SimTarget, sc: Scenario, ops: list[Any]
) -> tuple[Observation, list[OperationOutcome]]:
    target.start(sc)
    outcomes = [target.perform(_OPS.validate_python(normalise_operation_input(op))) for op in ops]
    observation = target.observe()
    # Target.project_dir(): what World.start reads the project through, on both targets.
    assert target.project_dir() == observation.project_dir
    return observation, outcomes


def ext_sequence(obs: Observation) -> list[tuple[str, Any]]:
    """Extension events as (type, reason/source); ``command`` is a simulator-only record."""
    return [
        (e["type"], e.get("reason") or e.get("source"))
        for e in obs.extension_events
        if e["type"] != "command"
    ]


def session_types(obs: Observation) -> list[str]:
    return [e["type"] for e in obs.session_events]


def assert_same_shape(real: Observation, sim: Observation, *, notifications: int | None = None) -> None:
    """Equal up to ids, timestamps and token estimates (``notifications``: compare that many)."""
    assert ext_sequence(real) == ext_sequence(sim)
    assert session_types(real) == session_types(sim)
    assert real.notifications[:notifications] == sim.notifications[:notifications]
    assert real.statuses == sim.statuses
    assert [(o.name, o.ok, o.error, o.disposition) for o in real.operations] == [
        (o.name, o.ok, o.error, o.disposition) for o in sim.operations
    ]
    assert [(r.kind, r.index, r.aborted) for r in real.model_requests] == [
        (r.kind, r.index, r.aborted) for r in sim.model_requests
    ]
    assert [e["type"] for e in real.entries] == [e["type"] for e in sim.entries]


THRESHOLD_SCRIPT = {
    "agent": [
        {"text": LONG, "usage": {"input": 1000, "output": 10}},
        {"text": LONG, "usage": {"input": 17000, "output": 10}},
        {"text": "CONTINUED", "usage": {"input": 1500, "output": 10}},
    ]
}


def test_threshold_compaction_round_trip_matches_simulator(targets: Targets) -> None:
    sc = scenario(THRESHOLD_SCRIPT)
    ops = [{"prompt": "first " + LONG}, {"prompt": "second " + LONG}]
    pi_target = targets("pi")
    real, outcomes = run(pi_target, sc, ops)
    sim, _ = run(targets("sim"), sc, ops)

    assert [o.disposition for o in outcomes] == ["started", "started"]
    host = profile_for(pi_target.pi_version).capabilities
    assert (
        pi_target.capabilities()
        == {
            "crash",
            "held-model-calls",
            "held-dialogs",
            "observed-checker",
            "python-implementation",
            "fs-faults",
        }
        | host
    )
    # Synthesis through ctx.model_registry.complete inside session_before_compact.
    [synthesis] = real.requests("extension")
    assert synthesis.request.system_prompt == "You write a Continuity Brief."
    assert synthesis.request.max_tokens == 4000 and synthesis.request.tools == []
    # The custom summary is persisted verbatim.
    [entry] = real.entries_of("compaction")
    assert entry["summary"].startswith("PROBE-BRIEF-1\n# Continuity Brief")
    assert entry["fromHook"] is True and entry["details"] == {"probe": True, "reason": "threshold"}
    persisted = next(e for e in real.session_file_entries() if e["type"] == "compaction")
    assert persisted["summary"] == entry["summary"]
    [compacted] = real.events("session_compact")
    assert compacted["fromExtension"] is True and compacted["compactionEntry"]["summary"] == entry["summary"]
    [end] = real.session("compaction_end")
    assert end["reason"] == "threshold" and end["result"]["fromExtension"] is True
    # The followUp continuation runs as a new run, before the one agent_settled of the prompt.
    types = session_types(real)
    after = types[types.index("compaction_end") + 1 :]
    assert after[:2] == ["agent_start", "turn_start"] and after.count("agent_settled") == 1
    assert real.user_messages()[-1] == CONTINUATION
    assert real.requests("agent")[-1].last_user_text() == CONTINUATION
    assert "The conversation history before this point was compacted" in real.requests("agent")[-1].text
    assert_same_shape(real, sim)


def test_manual_compaction_with_instructions(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}]})
    ops = [{"prompt": "first " + LONG}, {"compact": {"custom_instructions": "focus"}}]
    pi_target, sim_target = targets("pi"), targets("sim")
    real, outcomes = run(pi_target, sc, ops)
    sim, _ = run(sim_target, sc, ops)
    for target in (pi_target, sim_target):  # script() appends after what is scripted
        target.script("agent", [Reply(text="EXTRA", usage=Usage(input=900, output=5))])
        target.perform(_OPS.validate_python({"prompt": "third"}))
    real, sim = pi_target.observe(), sim_target.observe()
    assert real.session("message_end")[-1]["text"] == sim.session("message_end")[-1]["text"] == "EXTRA"

    assert outcomes[1] == OperationOutcome("compact", True)
    [before] = real.events("session_before_compact")
    assert before["reason"] == "manual" and before["customInstructions"] == "focus"
    [end] = real.session("compaction_end")
    assert end["result"]["fromExtension"] is True and end["result"]["tokensBefore"] == 1010
    assert real.entries_of("compaction")[0]["details"] == {"probe": True, "reason": "manual"}
    assert_same_shape(real, sim)


def test_overflow_compacts_and_retries(targets: Targets) -> None:
    overflow = {"status": 400, "message": "Your input exceeds the context window of this model"}
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"error": {**overflow, "code": "context_length_exceeded"}},
                {"text": "RETRY-OK", "usage": {"input": 500, "output": 5}},
            ]
        }
    )
    ops = [{"prompt": "first " + LONG}, {"prompt": "second " + LONG}]
    real, _ = run(targets("pi"), sc, ops)
    sim, _ = run(targets("sim"), sc, ops)

    [end] = real.session("compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is True
    [before] = real.events("session_before_compact")
    assert before["reason"] == "overflow" and before["willRetry"] is True
    assert real.session("entry_appended")[0]["entryType"] == "context_edit"
    assert [r.kind for r in real.model_requests] == ["agent", "agent", "extension", "agent"]
    assert_same_shape(real, sim)


def test_abort_while_synthesis_is_held(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": LONG, "usage": {"input": 17000, "output": 10}},
            ],
            "extension": [{"kind": "abort"}],
        }
    )
    ops = [{"prompt": "first " + LONG}, {"prompt": "second " + LONG}]
    pi_target = targets("pi")
    real, _ = run(pi_target, sc, ops)
    sim, _ = run(targets("sim"), sc, ops)

    # complete() resolved with stopReason "aborted" (the probe notifies it and cancels).
    assert ("probe: synthesis aborted", "error") in real.notifications
    [synthesis] = real.requests("extension")
    assert synthesis.aborted
    [end] = real.session("compaction_end")
    assert end["aborted"] is True and "result" not in end
    if "agent-settled-aborted" in pi_target.capabilities():  # not on Pi 1.0.3
        assert real.session("agent_settled")[-1]["aborted"] is True
    [failed] = real.events("session_compact_failed")
    assert failed["aborted"] is True and failed["reason"] == "threshold"
    assert real.entries_of("compaction") == []
    assert_same_shape(real, sim)


def test_held_synthesis_serves_commands_concurrently(targets: Targets) -> None:
    sc = scenario(
        {
            **THRESHOLD_SCRIPT,
            "extension": [
                {
                    "during": [
                        {"command": "/probe-info"},
                        {"command": {"text": "/probe-ask held", "answers": [{"confirm": True}]}},
                    ]
                }
            ],
        }
    )
    real, outcomes = run(targets("pi"), sc, [{"prompt": "first " + LONG}, {"prompt": "second " + LONG}])

    assert all(o.ok for o in outcomes)
    messages = [m for m, _ in real.notifications]
    info = json.loads(messages[0].removeprefix("info: "))
    assert info["idle"] is False and info["mode"] == "rpc" and info["configDir"] == ".pi"
    assert messages[1] == 'Answers: {"confirm": true, "input": null, "select": null}'
    assert messages[2] == "probe: compacted threshold fromExtension=True"
    assert [d.get("answer") for d in real.dialogs] == [{"confirm": True}, None, None]


def test_command_dialogs_answered_by_when_rules(targets: Targets) -> None:
    answers = [
        {"input": "80", "when": "percent"},
        {"select": "/sett/", "when": "section"},
        {"confirm": True},
    ]
    ops = [{"command": {"text": "/probe-ask deploy", "answers": answers}}]
    real, outcomes = run(targets("pi"), scenario(), ops)
    sim, _ = run(targets("sim"), scenario(), ops)

    assert outcomes == [OperationOutcome("command", True, None, "handled")]
    assert real.notifications == [('Answers: {"confirm": true, "input": "80", "select": "settings"}', "info")]
    assert real.dialogs == sim.dialogs
    assert real.dialogs[1] == {
        "method": "select",
        "title": "Pick a section",
        "options": ["armed", "settings", "artifacts"],
        "answer": {"select": "/sett/", "when": "section"},
    }


def test_a_dialog_held_open_runs_its_during_before_its_answer(targets: Targets) -> None:
    """A dialog answer's ``during``: a second ``/probe-ask`` runs while the first one's confirm
    is open (real Pi runs a prompt line at once, ``dist/modes/rpc/rpc-mode.js:318-343`` and
    ``:663-665``; the dialog waits for its response, ``:52-84``), with answers of its own that
    leave the held command's later answers alone; then the confirm is answered."""
    inner = [
        {"confirm": False, "when": "inner"},
        {"select": "armed", "when": "section"},
        {"input": "5", "when": "percent"},
    ]
    answers = [
        {"confirm": True, "during": [{"command": {"text": "/probe-ask inner", "answers": inner}}]},
        {"select": "/sett/"},
        {"input": "80"},
    ]
    ops = [{"command": {"text": "/probe-ask outer", "answers": answers}}]
    real, outcomes = run(targets("pi"), scenario(), ops)
    sim, _ = run(targets("sim"), scenario(), ops)

    assert outcomes == [OperationOutcome("command", True, None, "handled")]
    assert real.notifications == [
        ('Answers: {"confirm": false, "input": "5", "select": "armed"}', "info"),
        ('Answers: {"confirm": true, "input": "80", "select": "settings"}', "info"),
    ]
    assert real.held_operations == sim.held_operations
    assert [(h.request, h.operation, h.outcome) for h in real.held_operations] == [
        ("dialog:confirm", 0, OperationOutcome("command", True, None, "handled"))
    ]
    assert real.dialogs == sim.dialogs
    assert real.dialogs[0] == {
        "method": "confirm",
        "title": "Probe",
        "message": "Proceed with outer?",
        "answer": {"confirm": True},
    }
    assert_same_shape(real, sim)


def test_a_command_in_a_held_calls_during_leaves_the_held_commands_answers(targets: Targets) -> None:
    """``/probe-held`` asks a select, calls the model, then asks another; the held call's
    ``during`` runs ``/probe-ask`` with answers of its own. Real Pi runs that command line at
    once (``dist/modes/rpc/rpc-mode.js:318-343``); its answers go after the held command's and
    its unused ones are dropped, so the held command's second select still gets its answer on
    both targets (the simulator replaced and then cleared them before: ``second=None``)."""
    inner = [
        {"confirm": True, "when": "inner"},
        {"select": "artifacts", "when": "section"},
        {"input": "9", "when": "percent"},
    ]
    model = {
        "extension": [
            {
                "kind": "raw",
                "text": "noted",
                "during": [{"command": {"text": "/probe-ask inner", "answers": inner}}],
            }
        ]
    }
    answers = [{"select": "b", "when": "First"}, {"select": "d", "when": "Second"}]
    ops = [{"command": {"text": "/probe-held", "answers": answers}}]
    real, outcomes = run(targets("pi"), scenario(model), ops)
    sim, sim_outcomes = run(targets("sim"), scenario(model), ops)

    assert outcomes == sim_outcomes == [OperationOutcome("command", True, None, "handled")]
    assert real.notifications[-2:] == [
        ('Answers: {"confirm": true, "input": "9", "select": "artifacts"}', "info"),
        ("held: first=b second=d", "info"),
    ]
    assert real.notifications == sim.notifications
    assert real.held_operations == sim.held_operations
    assert real.dialogs == sim.dialogs


def _without_session_id(text: str) -> str:
    return re.sub(r'"sessionId": "[^"]*"', '"sessionId": ...', text)


def test_a_timed_dialog_gives_its_default_when_its_timer_fires_before_its_during_ends(
    targets: Targets,
) -> None:
    """``/probe-timed`` asks a confirm with a 1 ms timeout, answered ``true`` only after a
    ``during`` prompt (a model call of 500 ms) and a 600 ms pause (Pi answers the prompt when its
    run starts, so the pause is what makes the answer late on both targets). Pi's timer fires
    first and resolves the confirm with ``false``; the late answer finds no pending request
    (``dist/modes/rpc/rpc-mode.js:69-74``). The prompt's run ends before the next operation, on
    both targets (the simulator gave ``true`` before)."""
    model = {"agent": [{"text": "late", "latency_ms": 500}]}
    answers = [{"confirm": True, "during": [{"prompt": "slow"}, {"command": "/probe-pause 600"}]}]
    ops = [{"command": {"text": "/probe-timed", "answers": answers}}, {"command": "/probe-info"}]
    real, outcomes = run(targets("pi"), scenario(model), ops)
    sim, sim_outcomes = run(targets("sim"), scenario(model), ops)

    assert outcomes == sim_outcomes
    assert [o.ok for o in outcomes] == [True, True]
    assert real.notifications[0] == ("timed: false", "info")
    # /probe-info runs after the held prompt's messages are in the session, on both targets.
    assert [_without_session_id(n[0]) for n in real.notifications] == [
        _without_session_id(n[0]) for n in sim.notifications
    ]
    assert real.held_operations == sim.held_operations
    assert [(h.request, h.operation, h.outcome.name, h.outcome.ok) for h in real.held_operations] == [
        ("dialog:confirm", 0, "prompt", True),
        ("dialog:confirm", 0, "command", True),
    ]
    assert real.dialogs == sim.dialogs


def test_an_unanswered_timed_dialog_waits_its_timeout_on_both_targets(targets: Targets) -> None:
    """``/probe-unanswered 0.4`` asks a confirm with a 400 ms timeout and no answer: Pi arms a
    timer and gives the default ``false`` when it fires (``dist/modes/rpc/rpc-mode.js:69-74``),
    as the simulator does after 400 virtual ms (``simulator/ui.py`` ``_dialog``; psc-lifecycle
    Consequence 13). The handler resumes only then: it waited the timeout out, and a command sent
    meanwhile (the two are a held reply's ``during``, the first ``wait: false``) lands first. The
    client cancelled every unanswered dialog at once before: on real Pi the handler resumed a few
    ms later (``waited: false``)."""
    during = [
        {"command": {"text": "/probe-unanswered 0.4", "wait": False}},
        {"command": "/probe-write meanwhile"},
    ]
    model = {"agent": [{"text": "reply", "latency_ms": 50, "during": during}]}
    ops = [{"command": "/probe-unanswered 0.4"}, {"prompt": "hi"}]
    real, outcomes = run(targets("pi"), scenario(model), ops)
    sim, sim_outcomes = run(targets("sim"), scenario(model), ops)

    assert [o.ok for o in outcomes] == [True, True]
    assert real.notifications == [
        ("unanswered: false waited: true", "info"),
        ("write meanwhile: ok", "info"),
        ("unanswered: false waited: true", "info"),
    ]
    assert sim.notifications == real.notifications
    assert outcomes == sim_outcomes
    assert real.held_operations == sim.held_operations
    assert (
        real.dialogs == sim.dialogs == [{"method": "confirm", "title": "Unanswered", "message": "Wait?"}] * 2
    )


@pytest.mark.parametrize(
    ("timeout", "confirmed"),
    [
        ("-5", "false"),  # a negative delay: Node runs the timer after 1 ms
        ("2592000", "false"),  # 30 days = 2,592,000,000 ms > 2**31 - 1: after 1 ms as well
        ("0", "true"),  # 0 ms: ``opts.timeout`` is falsy, no timer (rpc-mode.js:69)
        ("0.0004", "true"),  # 0.4 ms reaches Pi as round(0.4) = 0 ms: no timer either
    ],
)
def test_a_timed_dialog_s_timer_follows_nodes_clamps_and_pis_truthiness(
    targets: Targets, timeout: str, confirmed: str
) -> None:
    """``simulator/ui.pi_dialog_timeout`` on real Pi: the bridge sends whole milliseconds
    (``bridge_api._ms``), Pi arms a timer only for a truthy ``opts.timeout``
    (``dist/modes/rpc/rpc-mode.js:69``) and Node runs a delay below 1 ms or above 2**31 - 1 ms
    after 1 ms (Node's ``setTimeout``). The confirm's answer ``true`` comes after a 500 ms
    ``during`` command: a timer that fires gives the default ``false`` first."""
    answers = [{"confirm": True, "during": [{"command": "/probe-pause 500"}]}]
    ops = [{"command": {"text": f"/probe-timed {timeout}", "answers": answers}}]
    real, outcomes = run(targets("pi"), scenario(), ops)
    sim, sim_outcomes = run(targets("sim"), scenario(), ops)

    assert outcomes == sim_outcomes
    assert real.notifications[0] == (f"timed: {confirmed}", "info")
    assert sim.notifications[0] == real.notifications[0]
    assert real.dialogs == sim.dialogs


def test_reload_makes_captured_ctx_and_pi_stale(targets: Targets) -> None:
    ops = ["reload", {"command": "/probe-stale"}]
    real, outcomes = run(targets("pi"), scenario(), ops)
    sim, _ = run(targets("sim"), scenario(), ops)

    assert outcomes[0] == OperationOutcome("reload", True)
    assert real.notifications == [("stale: ctx:stale pi:stale current:ok", "info")]
    assert ext_sequence(real) == [
        ("session_start", "startup"),
        ("session_shutdown", "reload"),
        ("session_start", "reload"),
    ]
    assert real.statuses == {"probe": "started:reload"}
    assert_same_shape(real, sim)


def test_restart_resumes_the_session_and_crash_needs_restart(targets: Targets) -> None:
    ops = [
        {"prompt": "hello"},
        {"set_model": "fake/fake-big"},
        {"prompt": "again"},
        "restart",
        {"prompt": "after restart"},
        "crash",
        {"prompt": "while dead"},
        "restart",
        {"command": "/probe-info"},
    ]
    pi_target = targets("pi")
    real, outcomes = run(pi_target, scenario(), ops)
    sim, _ = run(targets("sim"), scenario(), ops)

    assert [o.ok for o in outcomes] == [True, True, True, True, True, True, False, True, True]
    assert outcomes[6].error == "Pi is not running"
    assert [e.get("reason") for e in real.events("session_start")] == ["startup", "startup", "startup"]
    assert real.events("session_shutdown") == [{"type": "session_shutdown", "reason": "quit"}]
    [select] = real.events("model_select")
    assert (
        select["source"] == "set" and select["model"] == "fake/fake-big" and select["contextWindow"] == 40000
    )
    assert ("probe: model fake/fake-big window 40000", "info") in real.notifications
    # Pi restored the session's model on resume (no --model), and it is one session file.
    info = json.loads(real.notifications[-1][0].removeprefix("info: "))
    assert info["model"] == "fake/fake-big" and info["window"] == 40000
    assert info["sessionId"] == real.session_id
    assert real.session_file is not None and real.session_file.parent == real.session_dir
    assert sorted(real.session_dir.glob("*.jsonl")) == [real.session_file]
    assert real.user_messages() == ["hello", "again", "after restart"]
    assert_same_shape(real, sim, notifications=-1)  # the last one holds the session id
    sim_info = json.loads(sim.notifications[-1][0].removeprefix("info: "))
    assert {**info, "sessionId": None} == {**sim_info, "sessionId": None}


def test_fs_faults_fire_in_the_bridge_process(targets: Targets) -> None:
    faults = {
        "fs": [
            {"op": "write", "path": "$PROJECT/probe-out/*", "occurrence": 2, "errno": "ENOSPC"},
            {"op": "write", "path": "$PROJECT/probe-out/boom.txt", "effect": "crash"},
        ]
    }
    ops = [
        {"command": "/probe-write one"},
        "restart",
        {"command": "/probe-write two"},
        {"command": "/probe-write boom"},
        {"prompt": "while dead"},
        "restart",
        {"command": "/probe-write three"},
    ]
    sc = scenario(faults=faults)
    pi_target = targets("pi")
    assert isinstance(pi_target, PiTarget)
    real, outcomes = run(pi_target, sc, ops)
    sim, _ = run(targets("sim"), sc, ops)

    assert [(o.ok, o.error) for o in outcomes] == [
        (True, None),
        (True, None),
        (True, None),
        (False, "Pi crashed"),
        (False, "Pi is not running"),
        (True, None),
        (True, None),
    ]
    # The second write (in the second Pi process: counters survive restarts) hit ENOSPC.
    assert real.notifications == [
        ("write one: ok", "info"),
        ("write two: No space left on device (injected fault)", "error"),
        ("write three: ok", "info"),
    ]
    assert real.files("probe-out") == {"one.txt": b"one", "three.txt": b"three"}
    fired = [r for r in pi_target.fs_records() if r["kind"] == "fault"]
    assert [(r["effect"], Path(r["path"]).name) for r in fired] == [
        ("error", "two.txt"),
        ("crash", "boom.txt"),
    ]
    assert real.notifications == sim.notifications
    assert real.files("probe-out") == sim.files("probe-out")
    assert [(o.ok, o.error) for o in real.operations] == [(o.ok, o.error) for o in sim.operations]


def test_rule_files_base64_plants_the_same_bytes_on_both_targets(targets: Targets) -> None:
    """``files:`` with ``base64`` (bytes that are not UTF-8) is planted by ``prepare_files`` on
    both targets: Pi's project holds exactly the bytes the simulator's does, before and after a
    turn (the probe extension reads none of them)."""
    data = b"caf\xe9 \xff\x00\r\n"
    files = {"planted/r.md": {"base64": base64.b64encode(data).decode("ascii")}, "planted/e": {"base64": ""}}
    real, _ = run(targets("pi"), scenario(files=files), [{"prompt": "hi"}])
    sim, _ = run(targets("sim"), scenario(files=files), [{"prompt": "hi"}])
    assert real.files("planted") == sim.files("planted") == {"e": b"", "r.md": data}


def test_rule_json_null_is_a_file_holding_null_on_both_targets(targets: Targets) -> None:
    """``json: null`` in ``files:`` (``prepare_files``) and ``edit_file`` (``apply_edit``, both
    targets' own code path) writes the JSON ``null``, the same bytes on Pi and the simulator."""
    files = {"planted/f.json": {"json": None}}
    ops: list[Any] = [{"edit_file": {"path": "planted/e.json", "json": None}}, {"prompt": "hi"}]
    real, real_outcomes = run(targets("pi"), scenario(files=files), ops)
    sim, sim_outcomes = run(targets("sim"), scenario(files=files), ops)
    assert [o.ok for o in real_outcomes] == [o.ok for o in sim_outcomes] == [True, True]
    assert real.files("planted") == sim.files("planted") == {"e.json": b"null\n", "f.json": b"null\n"}


def test_file_operations_of_the_bridged_implementation_are_observed(targets: Targets) -> None:
    # No fs fault is scripted: the bridge records the implementation's own file operations
    # anyway, as the simulator does, so a step on them ("did not read ...") can fail on real Pi.
    ops = [{"command": "/probe-write one"}, {"command": "/probe-write two"}]
    real, _ = run(targets("pi"), scenario(), ops)
    sim, _ = run(targets("sim"), scenario(), ops)

    def relative(obs: Observation) -> list[tuple[str, str]]:
        return [(e["op"], os.path.relpath(e["path"], obs.project_dir)) for e in obs.fs_events]

    assert relative(real) == [
        ("mkdir", "probe-out"),
        ("write", "probe-out/one.txt"),
        ("mkdir", "probe-out"),
        ("write", "probe-out/two.txt"),
    ]
    assert relative(real) == relative(sim)


def test_typescript_extension_loaded_directly(targets: Targets) -> None:
    answers = [{"confirm": True}, {"select": "/art/", "when": "section"}, {"input": "90", "when": "percent"}]
    pi_target = targets("pi", str(EXTENSIONS / "dialogs.ts"))
    real, outcomes = run(pi_target, scenario(), [{"command": {"text": "/ask go", "answers": answers}}])

    assert (
        pi_target.capabilities()
        == {"crash", "held-model-calls", "held-dialogs", "observed-checker"}
        | profile_for(pi_target.pi_version).capabilities
    )
    versions = pi_target.versions()
    assert (versions["pi"], versions["node"]) == (pi_target.pi_version, "22.23.3")
    assert outcomes == [OperationOutcome("command", True, None, "handled")]
    assert real.notifications == [('Answers: {"confirm":true,"select":"artifacts","input":"90"}', "info")]
    assert real.statuses == {"harness": "answered artifacts"}


def test_competitor_twins_and_extension_error_paths(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": LONG, "usage": {"input": 1000, "output": 10}}]},
        extensions=[
            {"implementation": True},
            {"competitor": "throw"},
            {"module": "probe_throw:extension"},
            {"competitor": "own_compaction"},
        ],
    )
    ops = [{"prompt": "first " + LONG}, "compact"]
    real, _ = run(targets("pi"), sc, ops)
    sim, _ = run(targets("sim"), sc, ops)

    assert real.session("extension_error") == [
        {
            "type": "extension_error",
            "extensionPath": "competitor:throw",
            "event": "session_before_compact",
            "error": "boom from competitor",
        },
        {
            "type": "extension_error",
            "extensionPath": "probe_throw:extension",
            "event": "session_before_compact",
            "error": "boom from python (manual)",
        },
    ]
    assert real.entries_of("compaction")[0]["summary"] == "COMPETITOR-SUMMARY-1"
    assert real.session("extension_error") == sim.session("extension_error")
    assert_same_shape(real, sim)


def test_failing_factory_stops_real_pi_and_the_simulator_alike(targets: Targets) -> None:
    # Real Pi 1.6 exits when an -e extension fails to load; so does the simulated process.
    with pytest.raises(PiStartError, match="factory exploded") as real:
        targets("pi", "bad_ext:extension").start(scenario())
    with pytest.raises(TargetStartError) as sim:
        targets("sim", "bad_ext:extension").start(scenario())
    expected = 'Failed to load extension "bad_ext:extension": Failed to load extension: factory exploded'
    assert str(real.value).splitlines()[0] == expected == str(sim.value)
    assert isinstance(real.value, TargetStartError)


def test_non_rpc_mode_is_unavailable(tmp_path: Path) -> None:
    target = PiTarget("probe_ext:extension", tmp_path / "never")
    with pytest.raises(TargetUnavailableError, match="RPC"):
        target.start(scenario(mode="print"))
    target.close()


def test_bridged_api_surface(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": "two", "usage": {"input": 1000, "output": 10}},
            ]
        }
    )
    ops = [
        {"prompt": "hi " + LONG},
        {"command": "/api"},
        {"command": "/switch"},
        {"command": "/send x"},
        {"command": "/cmp focus"},
        {"command": "/cmp again"},
        {"command": "/fresh"},
    ]
    real, outcomes = run(targets("pi", "probe_api:extension"), sc, ops)
    sim, _ = run(targets("sim", "probe_api:extension"), sc, ops)

    assert all(o.ok for o in outcomes)
    notes = {m.split(": ", 1)[0]: json.loads(m.split(": ", 1)[1]) for m, _ in real.notifications}
    api = notes["api"]
    assert api["compaction"] == {"enabled": True, "keepRecentTokens": 100, "reserveTokens": 4000}
    assert (api["sessionName"], api["thinking"], api["tools"]) == (
        "probe session",
        "off",
        ["read", "bash", "edit", "write"],
    )
    assert api["available"] == ["fake/fake-model", "fake/fake-big"] and api["big"] is True
    assert api["leafIsLast"] and api["header"] == "session" and api["pending"] is False
    assert notes["setModel"] is True
    assert notes["compacted"] == {"summary": "No prior "} and notes["compactFailed"] == "Already compacted"
    assert notes["withSession"] == {"entries": 2}
    assert [e.get("reason") for e in real.events("session_start")] == ["startup", "new"]
    assert real.events("session_before_switch")[0]["reason"] == "new"
    [info_changed] = real.session("session_info_changed")
    assert info_changed["name"] == "probe session"
    assert sim.session("session_info_changed") == [info_changed]
    # Known differences: Pi's registry lists its whole built-in catalogue; and Pi keeps running
    # while Python waits for a round trip, so is_idle() after wait_for_idle() sees the started run.
    sim_notes = {m.split(": ", 1)[0]: json.loads(m.split(": ", 1)[1]) for m, _ in sim.notifications}
    for key in ("models", "auth"):
        api.pop(key)
        sim_notes["api"].pop(key)
    assert {k: v for k, v in notes.items() if k != "sent"} == {
        k: v for k, v in sim_notes.items() if k != "sent"
    }


def test_a_real_pi_scenario_over_its_wall_clock_budget_fails_naming_it(
    pi_installation: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12 item 5: each real-Pi scenario has a wall-clock limit; a command that outlasts it
    fails the scenario with the budget named and what was still running."""
    monkeypatch.syspath_prepend(str(EXTENSIONS))  # the bridge inherits it (``slow_ext``)
    target = PiTarget(
        "slow_ext:extension",
        tmp_path / "pi",
        installation=pi_installation,
        budget=BudgetOverride(wall_seconds=8),
    )
    try:
        target.start(scenario())
        with pytest.raises(TargetBudgetError) as error:
            target.perform(_OPS.validate_python(normalise_operation_input({"command": "/slow 120"})))
    finally:
        target.close()
    message = str(error.value)
    assert message.startswith("probe: the wall-clock budget of 8 s ran out")
    assert "still running: operation 0 command" in message and "last events from Pi:" in message


def test_a_scenario_whose_bash_command_runs_another_program_is_refused_before_pi_starts(
    targets: Targets,
) -> None:
    """Real Pi runs the model's ``bash`` for real: a scenario (shared data) may run only programs
    that act on the paths they are given (``scenario/tool_confinement.py``), and nothing is
    installed or started when it asks for another."""
    pi = targets("pi")
    sc = scenario(
        model={"agent": [{"tool_calls": [{"name": "bash", "arguments": {"command": "python -c 1"}}]}]}
    )
    with pytest.raises(
        ScenarioError,
        match=r"probe: model\.agent\[0\]\.tool_calls\[0\]: the bash command 'python -c 1' runs 'python'",
    ):
        pi.start(sc)
    assert isinstance(pi, PiTarget) and pi._proc is None


def test_a_tool_call_that_the_run_leads_outside_is_not_sent_to_real_pi(
    targets: Targets, tmp_path: Path
) -> None:
    """A path the model takes from the run (``{{match:...}}``) is known only when the call is
    served: the model server answers 403 instead, so Pi runs no tool and ends the turn with the
    refusal; the file outside is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    pi = targets("pi")
    sc = scenario(
        model={
            "agent": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -f {{match:remove (\\S+)}}"}}]},
                {"text": "done"},
            ]
        }
    )
    observation, outcomes = run(pi, sc, [{"prompt": f"remove {victim}"}])
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert [o.ok for o in outcomes] == [True]
    errors = [
        e
        for e in observation.entries
        if e.get("type") == "message" and e["message"].get("stopReason") == "error"
    ]
    assert (
        errors
        and "refused by the harness (confinement): the bash tool call names"
        in errors[-1]["message"]["errorMessage"]
    )
