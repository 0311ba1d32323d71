"""The request: Finish correlation, chain limit, status widget texts, composed messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.reference.blitz.chain import ChainError, chain_length, decide_parent
from pi_continuity_harness.reference.blitz.constants import CALL_PROTOCOL
from pi_continuity_harness.reference.blitz.messages import bootstrap_prompt, call_instruction, get_response
from pi_continuity_harness.reference.blitz.recovery import CaptureWindow
from pi_continuity_harness.reference.blitz.state import BlitzRequest, check_finish
from pi_continuity_harness.reference.blitz.status import request_lines
from pi_continuity_harness.reference.blitz.templates import ResolvedTemplate


def _request(**overrides: object) -> BlitzRequest:
    data: dict[str, object] = {
        "route": "command",
        "requested_at": 100.0,
        "defer_mode": "writing",
        "call_text": "call",
        "handoff_template": ResolvedTemplate("handoff", "handoff_default.cmpl", "/t", "T"),
        "dossier": "/p/.pi/handoff_s.md",
        "source_session_id": "s",
        "source_session_file": "/s/file.jsonl",
    }
    data.update(overrides)
    return BlitzRequest(**data)  # type: ignore[arg-type]


def test_finish_without_a_template_is_rejected() -> None:
    assert not check_finish(_request(), "anything").ok
    assert "template was not retrieved" in check_finish(_request(), "x").message


def test_finish_rejects_stale_and_duplicate_ids() -> None:
    request = _request(phase="writing", finish_id="live")
    assert not check_finish(request, "stale").ok
    assert not check_finish(request, None).ok
    assert check_finish(request, "live").ok
    request.phase = "finished"
    assert "duplicate" in check_finish(request, "live").message
    assert not check_finish(None, "live").ok


def test_chain_counts_the_master_and_starts_an_independent_master_at_the_limit(tmp_path: Path) -> None:
    files = []
    parent = None
    for index in range(3):
        path = tmp_path / f"s{index}.jsonl"
        header = {"type": "session", "version": 3, "id": f"s{index}"}
        if parent:
            header["parentSession"] = parent
        path.write_text(json.dumps(header) + "\n", encoding="utf-8")
        files.append(str(path))
        parent = str(path)
    assert chain_length(None, 25) == 1
    assert chain_length(files[1], 25) == 3  # s2's parent is s1 -> s0
    linked = decide_parent(files[2], files[1], 4)
    assert linked.parent_session == files[2] and not linked.independent_master
    master = decide_parent(files[2], files[1], 3)
    assert master.parent_session is None and master.independent_master


def test_an_unreadable_required_ancestor_fails_without_a_guessed_count(tmp_path: Path) -> None:
    with pytest.raises(ChainError, match="cannot be read"):
        chain_length(str(tmp_path / "missing.jsonl"), 25)
    assert chain_length(str(tmp_path / "missing.jsonl"), 1) == 1  # not required at limit 1


def test_status_widget_texts() -> None:
    request = _request()
    assert request_lines(request, 105.0) == ["Waiting for Session Handoff", "Wait Time 0:05 · /sh cancel"]
    request.capture = CaptureWindow("/r", "s", 100.0)
    assert "Inputs deferred (0)" in request_lines(request, 105.0)[1]
    request.phase = "writing"
    request.retrieved_at = 110.0
    lines = request_lines(request, 175.0)
    assert lines[0] == "Writing Session Handoff"
    assert "Wait Time 0:10" in lines[1] and "Handoff Time 1:05" in lines[1]
    request.phase = "finished"
    assert request_lines(request, 175.0)[0] == "Session Handoff Finished"


def test_the_call_instruction_appends_the_protocol_without_path_or_id() -> None:
    text = call_instruction("Custom call\n")
    assert text.startswith("Custom call\n") and text.endswith(CALL_PROTOCOL)
    assert ".pi/handoff_" not in text and "Finish ID:" not in text


def test_get_response_carries_template_file_locator_and_id() -> None:
    text = get_response(
        template_text="T",
        dossier="/d.md",
        transcript="/s.jsonl",
        session_id="sid",
        finish_id="F1",
        pending_call=None,
        repeated=False,
    )
    for part in ("Dossier file: /d.md", "Source transcript: /s.jsonl (session sid)", "Finish ID: F1", "T"):
        assert part in text


def test_bootstrap_prompt_names_the_absolute_path_and_the_cleanup() -> None:
    assert "delete exactly this file: /p/d.md" in bootstrap_prompt("/p/d.md", True)
    kept = bootstrap_prompt("/p/d.md", False)
    assert "/p/d.md" in kept and "unchanged" in kept and "delete" not in kept
