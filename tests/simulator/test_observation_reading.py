"""``SimTarget.observe`` reads each trace record once (``targets/sim_trace.py``): an observation
made after any operation holds what a reading of the whole trace gives, and an earlier
observation is not changed by a later one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.scenario.document import load_scenario
from pi_continuity_harness.scenario.fs_monitor import fs_event
from pi_continuity_harness.scenario.observed import OBSERVABLE_EVENTS
from pi_continuity_harness.scenario.operations import PromptOp
from pi_continuity_harness.targets import make_target
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.sim_trace import TraceReading, restore_paths
from pi_continuity_harness.targets.target import Observation

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
_READ = ("session_events", "extension_events", "dialogs", "fs_events", "command_output")


def _from_the_whole_trace(target: SimTarget) -> dict[str, Any]:
    """The trace-derived parts of an observation as ``observe()`` built them before it read
    incrementally (every record, every time), written out here on its own so that a mistake in
    ``TraceReading`` cannot hide behind itself."""
    host = target.simulation.host
    workdir = host.paths.workdir
    out: dict[str, Any] = {name: [] for name in _READ} | {"aborted": set()}
    for record in host.trace.records:
        kind, name = record["kind"], record["name"]
        payload = {
            k: restore_paths(v, workdir) for k, v in record.items() if k not in ("seq", "t", "kind", "name")
        }
        if kind == "session":
            if name == "session_info_changed":
                payload = {"name": payload.get("sessionName")}
            out["session_events"].append({"type": name, **payload})
        elif kind == "event" and name in OBSERVABLE_EVENTS:
            out["extension_events"].append({"type": name, **payload})
        elif kind == "ui" and name in ("select", "confirm", "input", "editor"):
            out["dialogs"].append({"method": name, **payload})
        elif kind == "fs" and (event := fs_event(payload | {"kind": "fs", "name": name})):
            out["fs_events"].append(event)
        elif kind == "ui" and name == "output":
            out["command_output"].append(str(payload.get("text") or ""))
        elif kind == "model" and name == "reply" and record.get("stopReason") == "aborted":
            out["aborted"].add((record.get("caller"), record.get("index")))
    return out


def _read(observation: Observation) -> dict[str, Any]:
    return {name: getattr(observation, name) for name in _READ}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_an_observation_after_each_operation_is_the_whole_trace_read_at_once(
    example: Path, tmp_path: Path
) -> None:
    scenario = load_scenario(example)
    target = make_target("sim", "reference", tmp_path / "machine", seed=7)
    assert isinstance(target, SimTarget)
    target.start(scenario)
    earlier: list[tuple[Observation, dict[str, Any]]] = []
    try:
        for op in [None, *scenario.operations]:
            if op is not None:
                target.perform(op)
            observation = target.observe()
            whole = _from_the_whole_trace(target)
            assert _read(observation) == {name: whole[name] for name in _READ}
            assert [r.aborted for r in observation.model_requests] == [
                (r.kind, r.index) in whole["aborted"] for r in observation.model_requests
            ]
            earlier.append((observation, {name: list(value) for name, value in _read(observation).items()}))
        for observation, as_it_was in earlier:
            assert _read(observation) == as_it_was  # a later observe() added nothing to it
        assert sum(len(observation.session_events) for observation, _ in earlier) > 0
    finally:
        target.close()


def test_a_new_scenario_on_the_same_target_is_read_from_its_own_first_record(tmp_path: Path) -> None:
    scenario = load_scenario(EXAMPLES[0])
    target = make_target("sim", "reference", tmp_path / "machine", seed=7)
    assert isinstance(target, SimTarget)
    target.start(scenario)
    for op in scenario.operations:
        target.perform(op)
    first = target.observe()
    target.close()
    target.start(scenario)
    fresh = target.observe()
    try:
        assert _read(fresh) == {
            name: value for name, value in _from_the_whole_trace(target).items() if name != "aborted"
        }
        assert len(fresh.session_events) < len(first.session_events)
    finally:
        target.close()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_reading_a_trace_in_two_parts_split_anywhere_reads_what_reading_it_at_once_reads(
    example: Path, tmp_path: Path
) -> None:
    target = make_target("sim", "reference", tmp_path / "machine", seed=7)
    assert isinstance(target, SimTarget)
    scenario = load_scenario(example)
    target.start(scenario)
    try:
        for op in scenario.operations:
            target.perform(op)
    finally:
        target.close()
    records = target.simulation.host.trace.records  # the whole run's, Pi's stop included
    workdir = target.simulation.host.paths.workdir
    whole = _from_the_whole_trace(target)
    for split in range(len(records) + 1):
        reading = TraceReading(workdir)
        reading.catch_up(records[:split])
        reading.catch_up(records)
        assert {name: getattr(reading, name) for name in _READ} | {"aborted": reading.aborted} == whole, split


def test_a_session_file_line_holding_a_raw_line_separator_is_one_entry(tmp_path: Path) -> None:
    """Pi writes a session line with ``JSON.stringify``, which leaves U+2028 and U+2029 raw (valid
    inside a JSON string); the simulated host writes it the same way. Reading the file with
    ``splitlines`` cut such a line in two (a ``JSONDecodeError``): it is read at ``"\\n"`` only
    (``scenario.trace.jsonl_lines``), here and wherever a session, observer or fault log is read."""
    text = "first\u2028second\u2029third"
    target = make_target("sim", "reference", tmp_path / "machine", seed=7)
    assert isinstance(target, SimTarget)
    target.start(load_scenario(EXAMPLES[0]).model_copy(update={"operations": ()}))
    try:
        target.perform(PromptOp(prompt=text))
        observation = target.observe()
    finally:
        target.close()
    assert observation.session_file is not None
    assert "\u2028" in observation.session_file.read_text(encoding="utf-8")
    entries = observation.session_file_entries()
    prompts = [e for e in entries if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert [p["message"]["content"][0]["text"] for p in prompts] == [text]
