"""Differential fidelity: each §9 behaviour real Pi can produce, played on both targets.

Every test plays one scenario (model script and operations) on the simulator and on real Pi
1.6 with the same tiny Python implementation (``extensions/probe_fidelity.py`` through the
bridge, or a competitor twin), then compares the normalised observation records
(:mod:`pi_continuity_harness.targets.comparison`): session events in order, extension
events, notifications, dialogs, model requests (kinds, roles, lengths), operation outcomes,
session entries, the session file's entry types and key order. Only the known, explained
differences (:mod:`pi_continuity_harness.targets.known_differences`) may remain. Each test
also asserts the behaviour itself on real Pi, so a shared mistake cannot pass.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.layout import PI_PACKAGE_PATH_LENGTH, WORK_PATH_LENGTH, pi_package_path
from pi_continuity_harness.scenario.operations import Operation, normalise_operation_input
from pi_continuity_harness.scenario.session_id import PI_SESSION_ID_MESSAGE, check_session_id
from pi_continuity_harness.simulator.agent_session import OVERFLOW_RECOVERY_FAILED
from pi_continuity_harness.simulator.model_service import (
    BUILTIN_MODELS_PATH,
    PI_BUILTIN_PROVIDERS,
    pi_builtin_models,
)
from pi_continuity_harness.simulator.system_prompt import DATA_PATH
from pi_continuity_harness.simulator.tree import NAVIGATE_WHILE_STREAMING
from pi_continuity_harness.simulator.ui import THEME_PATH
from pi_continuity_harness.targets.comparison import diff_records, normalise_observation
from pi_continuity_harness.targets.known_differences import neutralisers
from pi_continuity_harness.targets.realpi import PiEnvironment, PiInstallation, PiTarget, pi_target
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import Observation, OperationOutcome

pytestmark = pytest.mark.realpi

Targets = Callable[..., PiTarget | SimTarget]
_OPS: TypeAdapter[Any] = TypeAdapter(Operation)
LONG = "The quick brown fox jumps over the lazy dog. " * 18  # ~800 chars, ~200 tokens
OVERFLOW = {"status": 400, "message": "Your input exceeds the context window of this model"}
FIRST = {"text": LONG, "usage": {"input": 1000, "output": 10}}
PASSIVE = "probe_fidelity:passive"


def scenario(model: dict[str, Any], **fields: Any) -> Any:
    data: dict[str, Any] = {
        "name": "differential",
        "models": [
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        ],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100}}
        },
        "model": model,
    }
    data.update(fields)
    return parse_scenario(data)


def play(
    targets: Targets, sc: Any, ops: list[Any], implementation: str = PASSIVE
) -> tuple[Observation, Observation]:
    """The same scenario on real Pi and on the simulator; returns (real, sim)."""
    observed = []
    for kind in ("pi", "sim"):
        target = targets(kind, implementation)
        target.start(sc)
        for op in ops:
            target.perform(_OPS.validate_python(normalise_operation_input(op)))
        observed.append(target.observe())
    return observed[0], observed[1]


def assert_equivalent(real: Observation, sim: Observation) -> None:
    """The two records are identical on every channel (no tolerance: only the ledger's values,
    ``known_differences.UNCOMPARED``, are placeholders)."""
    differences = diff_records(normalise_observation(sim), normalise_observation(real), neutralisers())
    assert not differences, "\n".join(f"{d.channel}:\n  " + "\n  ".join(d.detail) for d in differences)


def types(events: list[dict[str, Any]], *wanted: str) -> list[str]:
    return [e["type"] for e in events if not wanted or e["type"] in wanted]


COMPACTION = ("compaction_start", "compaction_end", "agent_start", "agent_settled", "entry_appended")


# ====================================================================== §9.2 three check points
def test_threshold_after_agent_end(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [FIRST, {"text": LONG, "usage": {"input": 16000, "output": 10}}],
            "summary": [{"text": "S1"}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}])
    # 16,010 > 20,000 - 4,000: compaction after the run (reported usage), before agent_settled.
    assert types(real.session_events, *COMPACTION)[-3:] == [
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]
    [end] = real.session("compaction_end")
    assert end["reason"] == "threshold" and end["result"]["tokensBefore"] == 16010
    assert_equivalent(real, sim)


def test_threshold_is_strict(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST, {"text": LONG, "usage": {"input": 15990, "output": 10}}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}])
    assert real.session("compaction_start") == []  # exactly 16,000 is not above the threshold
    assert_equivalent(real, sim)


def test_threshold_mid_run_before_the_next_request(targets: Targets) -> None:
    tool = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
    sc = scenario(
        {
            "agent": [
                FIRST,
                {"text": "calling", "tool_calls": [tool], "usage": {"input": 17000, "output": 10}},
                {"text": "DONE", "usage": {"input": 900, "output": 5}},
            ],
            "summary": [{"text": "S1"}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}])
    labels = types(
        real.session_events, "compaction_start", "compaction_end", "tool_execution_end", "turn_start"
    )
    # The tool ran, then the threshold check before the next request compacted, then turn 2.
    assert labels[-4:] == ["tool_execution_end", "compaction_start", "compaction_end", "turn_start"]
    assert real.requests("agent")[-1].request.messages[-1]["role"] == "toolResult"
    assert_equivalent(real, sim)


def test_threshold_before_a_new_prompt(targets: Targets) -> None:
    # 17,010 is below the big model's threshold (36,000) but above the small one's (16,000):
    # after set_model, the next prompt compacts first (after input, before agent_start).
    sc = scenario(
        {
            "agent": [FIRST, {"text": LONG, "usage": {"input": 17000, "output": 10}}, {"text": "THREE"}],
            "summary": [{"text": "S1"}],
        },
        active_model="fake/fake-big",
    )
    ops = [
        {"prompt": "one " + LONG},
        {"prompt": "two " + LONG},
        {"set_model": "fake/fake-model"},
        {"prompt": "three"},
    ]
    real, sim = play(targets, sc, ops)
    assert real.operations[-1] == OperationOutcome("prompt", True, None, "started")
    tail = types(real.session_events, "compaction_start", "compaction_end", "agent_start")[-3:]
    assert tail == ["compaction_start", "compaction_end", "agent_start"]
    assert [e["type"] for e in real.extension_events if e["type"] in ("input", "session_before_compact")][
        -2:
    ] == [
        "input",
        "session_before_compact",
    ]
    assert_equivalent(real, sim)


# ====================================================================== §9.4 overflow
def test_overflow_compacts_and_retries_once_then_fails_with_pis_text(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST, {"error": OVERFLOW}, {"error": OVERFLOW}], "summary": [{"text": "S1"}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}])
    first, second = real.session("compaction_end")
    assert (first["reason"], first["willRetry"], first["aborted"]) == ("overflow", True, False)
    assert second == {
        "type": "compaction_end",
        "reason": "overflow",
        "aborted": False,
        "willRetry": False,
        "errorMessage": OVERFLOW_RECOVERY_FAILED,
    }
    assert len(real.session("compaction_start")) == 1  # the failure has no compaction_start
    [failed] = real.events("session_compact_failed")
    assert failed["errorMessage"] == OVERFLOW_RECOVERY_FAILED
    assert len(real.session("entry_appended")) == 1  # only the first failed reply is omitted
    assert_equivalent(real, sim)


# ====================================================================== §9.1 manual compaction
def test_manual_compaction_aborts_the_running_turn_first(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [FIRST, {"text": LONG, "during": [{"compact": {"custom_instructions": "focus"}}]}],
            "summary": [{"text": "S1"}],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, {"prompt": "two " + LONG}])
    labels = types(real.session_events, "agent_settled", "compaction_start", "compaction_end")
    assert labels[-3:] == ["agent_settled", "compaction_start", "compaction_end"]
    assert real.session("agent_settled")[-1]["aborted"] is True
    [before] = real.events("session_before_compact")
    assert (before["reason"], before["customInstructions"]) == ("manual", "focus")
    assert_equivalent(real, sim)


def test_manual_compaction_with_nothing_to_compact(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), ["compact"])
    assert real.operations == [OperationOutcome("compact", False, "Nothing to compact (session too small)")]
    assert types(real.session_events) == ["compaction_start", "compaction_end"]
    assert_equivalent(real, sim)


# ====================================================================== §9.6 cancel and combination
def test_cancel_outcome(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"], "probe_fidelity:cancel")
    assert real.operations[-1] == OperationOutcome("compact", False, "Compaction cancelled")
    [end] = real.session("compaction_end")
    assert end["aborted"] is True and "errorMessage" not in end
    [failed] = real.events("session_compact_failed")
    assert (failed["aborted"], failed["fromExtension"]) == (True, False)
    assert real.entries_of("compaction") == []
    assert_equivalent(real, sim)


@pytest.mark.parametrize(
    ("competitor", "summary", "from_hook"),
    [
        ("cancel", None, None),
        ("empty", "S1", False),  # `{}` is truthy: it replaces OWN's result, Pi summarises
        ("throw", "OWN-SUMMARY-1", True),  # isolated: OWN's result stands
        ("own_compaction", "COMPETITOR-SUMMARY-1", True),  # last truthy result wins
    ],
)
def test_result_combination_with_a_second_extension(
    targets: Targets, competitor: str, summary: str | None, from_hook: bool | None
) -> None:
    sc = scenario(
        {"agent": [FIRST], "summary": [{"text": "S1"}, {"text": "S2"}]},
        extensions=[{"implementation": True}, {"competitor": competitor}],
    )
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"], "probe_fidelity:own")
    entries = real.entries_of("compaction")
    if summary is None:
        assert entries == [] and real.operations[-1].error == "Compaction cancelled"
    else:
        [entry] = entries
        assert summary in entry["summary"] and entry["fromHook"] is from_hook
    if competitor == "throw":
        [error] = real.session("extension_error")
        assert (error["extensionPath"], error["event"]) == ("competitor:throw", "session_before_compact")
    assert_equivalent(real, sim)


# ====================================================================== §9.9 summary lookup
def test_session_compact_reports_the_first_entry_with_an_equal_summary(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST, FIRST]})
    ops = [{"prompt": "one " + LONG}, "compact", {"prompt": "two " + LONG}, "compact"]
    real, sim = play(targets, sc, ops, "probe_fidelity:same")
    first, second = real.entries_of("compaction")
    assert first["summary"] == second["summary"] == "SAME-SUMMARY" and first["id"] != second["id"]
    assert [e["compactionEntry"]["id"] for e in real.events("session_compact")] == [first["id"], first["id"]]
    assert_equivalent(real, sim)


# ====================================================================== §3 durable Brief first
def test_session_compact_names_the_files_that_held_the_summary_when_pi_appended_it(targets: Targets) -> None:
    """The ``summaryFiles`` witness: the observer, loaded first, lists the project's files with
    the summary's bytes before a later handler runs (``agent-session.js:2691-2698``)."""
    sc = scenario({"agent": [FIRST]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"], "probe_fidelity:witness")
    [event] = real.events("session_compact")
    assert event["summaryFiles"] == [str(real.project_dir / ".pi" / "early.md")]
    assert (real.project_dir / ".pi" / "late.md").read_text() == "WITNESS-SUMMARY\n"
    assert_equivalent(real, sim)


# ====================================================================== session file shape
def test_session_file_shape_and_from_hook(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST, FIRST], "summary": [{"text": "S1"}]})
    ops = [{"prompt": "one " + LONG}, "compact", {"prompt": "two " + LONG}, "compact"]
    real, sim = play(targets, sc, ops, "probe_fidelity:own")
    lines = real.session_file_entries()
    assert [line["type"] for line in lines[:3]] == ["session", "model_change", "thinking_level_change"]
    compactions = [line for line in lines if line["type"] == "compaction"]
    assert [c["fromHook"] for c in compactions] == [True, True]
    assert "fromExtension" not in compactions[0]
    sim_lines = sim.session_file_entries()
    assert [list(line) for line in lines] == [list(line) for line in sim_lines]  # types and key order
    assert_equivalent(real, sim)


def test_pi_generated_compactions_write_from_hook_false(targets: Targets) -> None:
    sc = scenario({"agent": [FIRST], "summary": [{"text": "S1"}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"])
    [entry] = [line for line in real.session_file_entries() if line["type"] == "compaction"]
    assert entry["fromHook"] is False and entry["details"] == {"readFiles": [], "modifiedFiles": []}
    assert_equivalent(real, sim)


def test_the_simulator_system_prompt_data_matches_the_installed_package(pi_installation: Any) -> None:
    """``simulator/pi-1.6-system-prompt.json`` is what the installed Pi builds (regenerated live)."""
    script = Path(pi_target.__file__).with_name("dump_system_prompt.mjs")
    out = subprocess.run(
        [str(pi_installation.node_path), str(script), str(pi_installation.pi_package_dir), "$CWD"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    live = json.loads(out)
    package = str(pi_installation.pi_package_dir)
    live["sections"] = {k: v.replace(package, "$PI_PACKAGE") for k, v in live["sections"].items()}
    stored = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    assert stored["sections"] == live["sections"]
    assert stored["toolsAdded"] == live["toolsAdded"]
    assert stored["builtinTools"] == live["builtinTools"]


def test_the_simulator_theme_data_matches_the_installed_package(pi_installation: Any) -> None:
    """``simulator/pi-1.6-rpc-theme.json`` is what the installed Pi's theme puts around a text for
    each token in an RPC process (regenerated live by ``dump_theme.mjs``)."""
    script = Path(pi_target.__file__).with_name("dump_theme.mjs")
    out = subprocess.run(
        [str(pi_installation.node_path), str(script), str(pi_installation.pi_package_dir)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    stored = json.loads(THEME_PATH.read_text(encoding="utf-8"))
    assert stored["fg"] == json.loads(out)


def test_the_simulator_built_in_models_data_matches_the_installed_package(pi_installation: Any) -> None:
    """``simulator/pi-1.6-models.json`` is, byte for byte, what ``dump_models.mjs`` writes from the
    installed Pi: its built-in catalogue in ``getAll()`` order (``dist/core/model-runtime.js:88-96,
    134-142``; ``dist/core/model-registry.js:18-20``)."""
    script = Path(pi_target.__file__).with_name("dump_models.mjs")
    out = subprocess.run(
        [str(pi_installation.node_path), str(script), str(pi_installation.pi_package_dir)],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert BUILTIN_MODELS_PATH.read_bytes() == out
    assert {m.provider for m in pi_builtin_models()} <= PI_BUILTIN_PROVIDERS


def test_the_simulator_s_built_in_providers_are_the_installed_packages(pi_installation: Any) -> None:
    """``simulator/model_service.PI_BUILTIN_PROVIDERS`` is what the installed Pi registers
    (``@earendil-works/pi-ai`` ``dist/providers/all.js`` ``builtinProviders()``,
    ``dist/core/model-runtime.js:88``)."""
    pi_ai = Path(pi_installation.pi_package_dir).parent / "pi-ai" / "dist" / "providers" / "all.js"
    script = (
        f"const m = await import({json.dumps(pi_ai.as_uri())});"
        "process.stdout.write(JSON.stringify(m.builtinProviders().map((p) => p.id)));"
    )
    out = subprocess.run(
        [str(pi_installation.node_path), "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert sorted(PI_BUILTIN_PROVIDERS) == sorted(json.loads(out))


# ====================================================================== issue-5 differences
def test_restart_before_the_session_file_exists(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "HELLO"}]}, active_model="fake/fake-big")
    real, sim = play(targets, sc, ["restart", {"prompt": "hello"}])
    lines = real.session_file_entries()
    assert [line["type"] for line in lines[:3]] == ["session", "model_change", "thinking_level_change"]
    assert lines[1]["modelId"] == "fake-model"  # Pi's default: the first model in models.json
    assert_equivalent(real, sim)


def test_set_model_to_an_unauthenticated_model(targets: Targets) -> None:
    sc = scenario(
        {},
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "locked/big", "context_window": 40000, "max_tokens": 1000, "auth": False},
        ],
    )
    real, sim = play(targets, sc, [{"set_model": "locked/big"}])
    assert real.operations == [OperationOutcome("set_model", False, "Model not found: locked/big")]
    assert_equivalent(real, sim)


def test_a_mismatched_dialog_answer_cancels_that_dialog_and_the_handler_goes_on(targets: Targets) -> None:
    answers = [{"select": "armed"}, {"input": "80"}]  # the first dialog is a confirm
    real, sim = play(
        targets,
        scenario({}),
        [{"command": {"text": "/probe-ask x", "answers": answers}}],
        "probe_ext:extension",
    )
    [outcome] = real.operations
    assert (
        not outcome.ok
        and outcome.error == "dialog 'confirm' ('Probe') opened, but the next scripted answer is 'select'"
    )
    assert real.notifications == [('Answers: {"confirm": false, "input": "80", "select": "armed"}', "info")]
    assert_equivalent(real, sim)


def test_extensions_run_in_the_project_directory(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/probe-cwd"}], "probe_fidelity:cwd")
    assert real.notifications == [("cwd is the project: True", "info")]
    assert (real.project_dir / "relative.txt").is_file() and (sim.project_dir / "relative.txt").is_file()
    assert_equivalent(real, sim)


# ====================================================================== issue 11: path drift at its source
def test_both_targets_name_paths_of_the_same_lengths(targets: Targets) -> None:
    """Pi names its cwd once and its package directory three times in the system prompt
    (``dist/core/system-prompt.js:88-109``); ``PI_PACKAGE_DIR`` (``dist/config.js:334-345``)
    points at ``<machine root>/pi-package``, so both targets name a 128-character machine root
    and a 139-character package path, and the system prompt, ``max_tokens`` and every estimate
    agree to the character (``scenario/layout.py``)."""
    sc = scenario({"agent": [FIRST], "summary": [{"text": "S1"}]})
    real, sim = play(targets, sc, [{"prompt": "one " + LONG}, "compact"])
    for observation in (real, sim):
        root = str(observation.project_dir.parent)
        assert len(root) == WORK_PATH_LENGTH
        [request, *_] = observation.requests("agent")
        prompt = request.request.system_prompt or ""
        assert prompt.count(f"{root}/pi-package/") == 3 and f"<cwd>\n{root}/project\n</cwd>" in prompt
        assert len(pi_package_path(root)) == PI_PACKAGE_PATH_LENGTH
    [real_request, *_] = real.requests("agent")
    [sim_request, *_] = sim.requests("agent")
    assert len(real_request.request.system_prompt or "") == len(sim_request.request.system_prompt or "")
    assert real_request.request.max_tokens == sim_request.request.max_tokens
    [real_end] = real.session("compaction_end")
    [sim_end] = sim.session("compaction_end")
    assert real_end["result"]["estimatedTokensAfter"] == sim_end["result"]["estimatedTokensAfter"]
    assert real_end["result"]["tokensBefore"] == sim_end["result"]["tokensBefore"]
    assert_equivalent(real, sim)


# ====================================================================== issue 12 item 8
# Real Pi gets the id as ``--session-id`` (dist/main.js:383-390) and names the file
# ``<timestamp>_<id>.jsonl`` in its session directory (dist/core/session-manager.js:721-723); the
# simulator does the same. A reply scripted as ``kind: empty`` with ``thinking`` reaches the
# extension's ``complete()`` as one thinking block, no text, ``stopReason: "stop"`` on both.


@pytest.mark.parametrize("session_id", ["a..b", "Hostile.id_" + "x" * 200])
def test_the_scenario_session_id_names_the_session_file_on_both_targets(
    targets: Targets, session_id: str
) -> None:
    sc = scenario({}, session_id=session_id)
    real, sim = play(
        targets, sc, [{"prompt": "hello"}, {"command": "/probe-session"}], "probe_fidelity:session_id"
    )
    assert real.notifications == [(f"{session_id} {session_id}.jsonl inside=True", "info")]
    assert sim.notifications == real.notifications
    for observed in (real, sim):
        [file] = sorted(Path(observed.session_dir).glob("*.jsonl"))
        assert file.name.endswith(f"_{session_id}.jsonl")
        assert json.loads(file.read_text(encoding="utf-8").splitlines()[0])["id"] == session_id
    assert_equivalent(real, sim)


def test_a_reasoning_only_synthesis_reply_on_both_targets(targets: Targets) -> None:
    sc = scenario({"extension": [{"kind": "empty", "thinking": "Thinking about the brief."}]})
    real, sim = play(targets, sc, [{"command": "/probe-synth"}], "probe_fidelity:synth")
    [(note, level)] = real.notifications
    assert level == "info"
    assert json.loads(note) == {
        "blocks": ["thinking"],
        "stopReason": "stop",
        "text": "",
        "thinking": "Thinking about the brief.",
    }
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)


@pytest.mark.parametrize("session_id", ["..", "a/b", "../x", "é", ".hidden", "a..b", "x" * 224])
def test_real_pi_refuses_exactly_the_ids_a_scenario_refuses(
    pi_installation: PiInstallation, tmp_path: Path, session_id: str
) -> None:
    """``pi --session-id`` (main.js:296: message and exit 1 before any session) against the
    scenario's check (``scenario/session_id.py``)."""
    try:
        check_session_id(session_id)
        refused = False
    except ValueError:
        refused = True
    env = PiEnvironment(pi_installation, "http://127.0.0.1:9/v1", root=tmp_path / "ws")
    done = subprocess.run(
        pi_installation.argv("--mode", "rpc", "--session-id", session_id),
        env=env.env(),
        stdin=subprocess.DEVNULL,  # an accepted id: Pi starts, reads end of input and quits
        cwd=tmp_path / "ws" / "project",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    said = PI_SESSION_ID_MESSAGE in done.stderr
    assert said == refused, (done.returncode, done.stderr[-500:])
    assert (done.returncode != 0) == refused


# ====================================================================== command.wait: false
def test_an_unawaited_command_is_still_held_when_the_next_operation_runs(targets: Targets) -> None:
    """``wait: false`` writes the RPC line and goes on: ``/probe`` runs while ``/hold`` waits for
    the held turn to settle (``dist/modes/rpc/rpc-mode.js:318-343``)."""
    during = [{"command": {"text": "/hold", "wait": False}}, {"command": "/probe"}]
    sc = scenario({"agent": [{"text": "reply", "latency_ms": 50, "during": during}]})
    real, sim = play(targets, sc, [{"prompt": "hi"}], "probe_unawaited:extension")
    assert real.notifications == [
        ("hold:start", "info"),
        ("probe:holding=True", "info"),
        ("hold:end", "info"),
    ]
    assert [(h.outcome.name, h.outcome.ok) for h in real.held_operations] == [("command", True)] * 2
    assert_equivalent(real, sim)


def test_a_prompt_sent_while_a_dialog_waits_runs_on_after_the_dialog_is_answered(targets: Targets) -> None:
    """A dialog answer's ``during`` prompt is answered at its preflight (``started``) and its run
    goes on (``dist/modes/rpc/rpc-mode.js:318-343``): the answer reaches the dialog first, and
    the turn ends after the menu closed. The simulator ran the prompt to its end before it
    answered the dialog (thirty-seventh session: a blitz scenario passed on the simulator only)."""
    answer = {"cancel": True, "during": [{"prompt": "work"}]}
    sc = scenario({"agent": [{"text": "done", "latency_ms": 300}]})
    real, sim = play(
        targets, sc, [{"command": {"text": "/menu", "answers": [answer]}}], "probe_menu:extension"
    )
    assert real.notifications == [("menu:closed", "info"), ("turn_end:menu_open=False", "info")]
    assert [(h.outcome.name, h.outcome.disposition) for h in real.held_operations] == [("prompt", "started")]
    assert_equivalent(real, sim)


# ====================================================================== fork
def test_a_fork_before_a_user_message_branches_into_a_linked_session(targets: Targets) -> None:
    """RPC ``fork`` (``agent-session-runtime.js:185-270``): the new session holds the path up to
    the chosen user message's parent and links the source file; ``session_start{fork}``."""
    sc = scenario({"agent": [{"text": "first answer"}, {"text": "second answer"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, {"fork": {"message": 2}}]
    real, sim = play(targets, sc, ops)
    assert [o.ok for o in real.operations] == [True, True, True]
    starts = [e for e in real.extension_events if e.get("type") == "session_start"]
    assert starts[-1]["reason"] == "fork"
    texts = [content for e in real.entries if e.get("type") == "message" for content in [e["message"]]]
    assert [m["role"] for m in texts if m["role"] in ("user", "assistant")] == ["user", "assistant"]
    assert_equivalent(real, sim)


def test_a_fork_cancelled_by_an_extension_keeps_the_session(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "first answer"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, "fork"], "probe_fork:blocker")
    assert [(o.ok, o.error) for o in real.operations] == [(True, None), (False, "cancelled")]
    assert real.notifications == [("fork blocked (before)", "warning")]
    assert_equivalent(real, sim)


# ====================================================================== tree navigation
# ``AgentSession.navigateTree`` (agent-session.js:3370-3535); the ``tree`` operation is the
# observer's ``/harness-tree`` on real Pi, the host's in the simulator.


def _navigations(observation: Any) -> list[dict[str, Any]]:
    return [e for e in observation.extension_events if e.get("type") == "tree_navigation"]


def _user(observation: Any, text: str) -> dict[str, Any]:
    return next(
        e
        for e in observation.entries
        if e.get("type") == "message"
        and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == text
    )


def test_navigation_puts_the_leaf_on_the_user_messages_parent(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "first answer"}, {"text": "second answer"}, {"text": "third"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 2}}, {"prompt": "three"}]
    real, sim = play(targets, sc, ops)
    assert [o.ok for o in real.operations] == [True, True, True, True]
    [done] = _navigations(real)
    two = _user(real, "two")
    assert (done["newLeafId"], done["cancelled"]) == (two["parentId"], False)
    assert _user(real, "three")["parentId"] == two["parentId"]
    trees = [e for e in real.extension_events if e.get("type") == "session_tree"]
    assert [(e["oldLeafId"], e["newLeafId"]) for e in trees] == [(done["oldLeafId"], two["parentId"])]
    assert_equivalent(real, sim)


def test_an_extension_cancels_the_navigation(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "first answer"}, {"text": "second answer"}]})
    ops = [{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 2}}]
    real, sim = play(targets, sc, ops, "probe_tree:blocker")
    assert [(o.ok, o.error) for o in real.operations][-1] == (False, "cancelled")
    assert real.notifications == [
        (
            "tree blocked: 1 abandoned, ancestor is target: True, summary: False, old leaf is leaf: True",
            "warning",
        )
    ]
    [done] = _navigations(real)
    assert done["newLeafId"] == done["oldLeafId"]
    assert_equivalent(real, sim)


def test_navigation_while_a_turn_streams_throws_pis_message(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": "a"}, {"text": "b", "latency_ms": 300, "during": [{"tree": {"to": 1}}]}]}
    )
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}])
    [held] = real.held_operations
    assert (held.outcome.ok, held.outcome.error) == (False, NAVIGATE_WHILE_STREAMING)
    assert _navigations(real)[0]["error"] == NAVIGATE_WHILE_STREAMING
    assert_equivalent(real, sim)


def test_a_navigation_sent_while_agent_settled_handlers_run_waits_for_them(targets: Targets) -> None:
    """``/hold`` waits for idle while the turn runs; the turn ends, the ``agent_settled`` handler
    holds a model call, the navigation sent then is deferred; it runs after the handler and before
    ``/hold``'s wait ends (so ``/hold`` finds the leaf moved)."""
    held_settle = {
        "kind": "raw",
        "text": "noted",
        "latency_ms": 300,
        "during": [{"tree": {"to": 2, "wait": False}}],
    }
    sc = scenario(
        {
            "agent": [
                {"text": "a"},
                {"text": "b", "latency_ms": 300, "during": [{"command": {"text": "/hold", "wait": False}}]},
            ],
            "extension": [{"kind": "raw", "text": "noted"}, held_settle],
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], "probe_tree:settled_holder")
    [done] = _navigations(real)
    assert done["cancelled"] is False
    assert real.notifications == [("idle at a message entry", "info")]
    assert done["newLeafId"] == _user(real, "two")["parentId"]
    assert_equivalent(real, sim)


def test_ctx_navigate_tree_through_the_bridge(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "first answer"}]})
    real, sim = play(targets, sc, [{"prompt": "one"}, {"command": "/nav"}], "probe_tree:navigator")
    assert real.notifications == [("{'cancelled': False} | Entry nope not found | False", "info")]
    labels = [e for e in real.entries if e.get("type") == "label"]
    assert [e["label"] for e in labels] == ["start"]
    assert_equivalent(real, sim)
