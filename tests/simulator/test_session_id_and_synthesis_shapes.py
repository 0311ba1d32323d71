"""Issue 12 item 8: a scenario sets the session id, and scripts a reasoning-only synthesis reply.

The session id is checked the way Pi 1.6 checks ``--session-id`` (``assertValidSessionId``,
``dist/core/session-manager.js:15-19``) and names the file ``<timestamp>_<id>.jsonl`` directly in
the session directory (session-manager.js:721-723). An id Pi refuses is refused at load, naming
the field; a hypothesis test throws hostile ids at it and checks nothing outside the run changes.
The same behaviour on real Pi is checked in ``tests/realpi/test_differential_fidelity.py`` (issue 12 item 8).
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.session_id import (
    MAX_SESSION_ID_LENGTH,
    PI_SESSION_ID_MESSAGE,
    check_session_id,
)
from pi_continuity_harness.simulator.simulation import simulate

from .helpers import base, run, session_entries

_PROBES = Path(__file__).resolve().parents[1] / "realpi" / "extensions" / "probe_fidelity.py"


def _probe(name: str) -> Any:
    spec = importlib.util.spec_from_file_location("probe_fidelity_for_sim", _PROBES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def _notes(result: Any) -> list[str]:
    return [r["message"] for r in result.host.trace.records if r["kind"] == "ui" and r["name"] == "notify"]


# ====================================================================== session id
ACCEPTED = ["abc", "a..b", "A.b_c-9", "x" * MAX_SESSION_ID_LENGTH, "0"]
REFUSED_BY_PI = ["..", "a/b", "../x", "a\\b", "é", "ab\u00e9", ".hidden", "trail.", "-a", "a b", "", "a\n"]


@pytest.mark.parametrize("session_id", ACCEPTED)
def test_an_id_pi_accepts_names_the_session_file_inside_the_session_directory(
    tmp_path: Path, session_id: str
) -> None:
    sc = base(session_id=session_id, operations=[{"prompt": "hello"}, {"command": "/probe-session"}])
    result = run(tmp_path, sc, _probe("session_id"))
    [file] = result.session_files()
    assert file.name.endswith(f"_{session_id}.jsonl")
    assert file.parent == Path(result.host.disk.session_dir)
    assert session_entries(result)[0]["id"] == session_id
    assert _notes(result) == [f"{session_id} {session_id}.jsonl inside=True"]


@pytest.mark.parametrize("session_id", REFUSED_BY_PI)
def test_an_id_pi_refuses_is_refused_at_load_naming_the_field(session_id: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(base(session_id=session_id), source="s.yaml")
    assert str(caught.value).startswith("s.yaml: session_id: ")
    assert PI_SESSION_ID_MESSAGE in str(caught.value)


def test_an_id_too_long_for_a_file_name_is_refused_with_enametoolong() -> None:
    with pytest.raises(ScenarioError, match=r"s.yaml: session_id: 225 characters: .*ENAMETOOLONG"):
        parse_scenario(base(session_id="x" * (MAX_SESSION_ID_LENGTH + 1)), source="s.yaml")


def test_without_an_id_the_session_gets_a_seeded_uuidv7(tmp_path: Path) -> None:
    result = run(tmp_path, base(operations=[{"prompt": "hello"}]))
    header = session_entries(result)[0]
    assert len(header["id"]) == 36 and header["id"][14] == "7"


def test_a_restart_resumes_the_session_with_the_scenario_id(tmp_path: Path) -> None:
    sc = base(session_id="mine", operations=[{"prompt": "one"}, "restart", {"prompt": "two"}])
    result = run(tmp_path, sc)
    [file] = result.session_files()
    lines = session_entries(result)
    assert file.name.endswith("_mine.jsonl") and lines[0]["id"] == "mine"
    assert [e["message"]["role"] for e in lines if e["type"] == "message"].count("user") == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(session_id=st.one_of(st.text(min_size=0, max_size=40), st.sampled_from(REFUSED_BY_PI + ACCEPTED)))
def test_a_hostile_id_never_writes_outside_the_run(session_id: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            check_session_id(session_id)
            valid = True
        except ValueError:
            valid = False
        try:
            sc = parse_scenario(base(session_id=session_id, operations=[{"prompt": "hi"}]))
        except ScenarioError:
            assert not valid
            assert sorted(p.name for p in root.iterdir()) == []
            return
        assert valid
        result = simulate(sc, workdir=root / "run", implementation="null")
        outside = sorted(str(p.relative_to(root)) for p in root.iterdir())
        assert outside == ["run"]
        [file] = result.session_files()
        assert file.parent == Path(result.host.disk.session_dir)


# ====================================================================== synthesis reply shapes
def _synth(tmp_path: Path, reply: dict[str, Any]) -> dict[str, Any]:
    sc = base(model={"extension": [reply]}, operations=[{"command": "/probe-synth"}])
    result = run(tmp_path, sc, _probe("synth"))
    [note] = _notes(result)
    shape: dict[str, Any] = json.loads(note)
    return shape


def test_a_reply_of_reasoning_only_has_empty_text_and_stops_with_stop(tmp_path: Path) -> None:
    shape = _synth(tmp_path, {"kind": "empty", "thinking": "Let me think about the brief."})
    assert shape == {
        "blocks": ["thinking"],
        "stopReason": "stop",
        "text": "",
        "thinking": "Let me think about the brief.",
    }


def test_an_empty_reply_without_thinking_has_no_blocks(tmp_path: Path) -> None:
    assert _synth(tmp_path, {"kind": "empty"}) == {
        "blocks": [],
        "stopReason": "stop",
        "text": "",
        "thinking": "",
    }


def test_thinking_goes_with_a_raw_text_too(tmp_path: Path) -> None:
    shape = _synth(tmp_path, {"kind": "raw", "text": "BODY", "thinking": "hmm"})
    assert shape == {"blocks": ["thinking", "text"], "stopReason": "stop", "text": "BODY", "thinking": "hmm"}


def test_an_error_reply_carries_no_thinking() -> None:
    data = base(
        model={"extension": [{"kind": "error", "error": {"status": 500, "message": "boom"}, "thinking": "x"}]}
    )
    with pytest.raises(ScenarioError, match=r"model.extension\[0\]: kind error carries no thinking"):
        parse_scenario(data)
