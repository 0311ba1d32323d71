"""Rules of the extension's behaviour, one test per rule, on a minimal in-memory host."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import (
    AgentSettledEvent,
    InputEvent,
    MessageEndEvent,
    SessionBeforeSwitchEvent,
    SessionStartEvent,
    TurnEndEvent,
)
from pi_continuity_harness.reference.blitz.constants import (
    EMERGENCY_INSTRUCTION,
    REMINDER_TEXT,
    STATUS_TOOL,
    SUBCOMMANDS,
)
from pi_continuity_harness.reference.blitz.recovery import list_recovery_files
from pi_continuity_harness.reference.blitz.state import BlitzHandoffError

from .fakes import Rig, make_rig


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    return make_rig(tmp_path, monkeypatch)


def _turn_end(outcome: str = "completed") -> TurnEndEvent:
    return TurnEndEvent(
        turn_index=0,
        message={},
        tool_results=[],
        message_entry_id=None,
        tool_result_entry_ids=[],
        outcome=outcome,  # type: ignore[arg-type]
    )


def _finish_id(text: str) -> str:
    match = re.search(r"Finish ID: (\S+)", text)
    assert match, text
    return match.group(1)


def _write_dossier(rig: Rig, text: str = "# Dossier\n") -> Path:
    path = Path(rig.handoff.request.dossier)  # type: ignore[union-attr]
    path.write_text(text, encoding="utf-8")
    return path


def test_loading_creates_managed_dirs_and_default_templates(rig: Rig, tmp_path: Path) -> None:
    root = tmp_path / "agent" / "pi-blitz-handoff"
    assert (root / "templates" / "call_default.cmpl").is_file()
    assert (root / "templates" / "handoff_default.cmpl").is_file()
    assert (root / "recovery").is_dir() and (root / "templates" / "backups").is_dir()


def test_sh_start_dispatches_the_call_instruction_at_idle(rig: Rig) -> None:
    rig.command("start")
    assert len(rig.pi.user_messages) == 1
    text = rig.pi.user_messages[0][0]
    assert "session_handoff_get_template({})" in text and ".pi/handoff_" not in text


def test_a_second_request_is_rejected_without_replacing_state(rig: Rig) -> None:
    rig.command("start")
    first = rig.handoff.request
    rig.command("start")
    assert rig.handoff.request is first
    assert any("already active" in n for n, _ in rig.ctx.ui.notes)
    assert len(rig.pi.user_messages) == 1


def test_in_memory_sessions_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = make_rig(tmp_path, monkeypatch, session_file=None)
    rig.command("start")
    assert rig.handoff.request is None
    assert any("not persisted" in n for n, _ in rig.ctx.ui.notes)
    result = rig.tool("blitz_handoff", {"action": "start"})
    assert result.is_error and "not persisted" in rig.text(result)


def test_get_without_a_request_is_an_error(rig: Rig) -> None:
    result = rig.tool("session_handoff_get_template")
    assert result.is_error


def test_get_returns_a_stable_snapshot(rig: Rig) -> None:
    rig.command("start")
    first = rig.text(rig.tool("session_handoff_get_template"))
    second = rig.text(rig.tool("session_handoff_get_template"))
    assert _finish_id(first) == _finish_id(second)
    assert _finish_id(first) != rig.ctx.session_manager.session_id
    dossier = rig.handoff.request.dossier  # type: ignore[union-attr]
    assert f"Dossier file: {dossier}" in first and f"Dossier file: {dossier}" in second
    assert "## Call instruction" not in first  # already dispatched by the command


def test_an_early_get_carries_the_pending_call_instruction_once(rig: Rig) -> None:
    rig.tool("blitz_handoff", {"action": "start"})
    first = rig.text(rig.tool("session_handoff_get_template"))
    second = rig.text(rig.tool("session_handoff_get_template"))
    assert "## Call instruction" in first and "## Call instruction" not in second
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert rig.pi.user_messages == []  # no extra model round


def test_the_model_route_dispatches_at_idle_settlement(rig: Rig) -> None:
    rig.tool("blitz_handoff", {"action": "start"})
    assert rig.pi.user_messages == []
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert len(rig.pi.user_messages) == 1


def test_an_aborted_get_neither_authorises_finish_nor_starts_writing(rig: Rig) -> None:
    rig.command("start")
    result = rig.tool("session_handoff_get_template", aborted=True)
    assert result.is_error
    request = rig.handoff.request
    assert request is not None and request.phase == "requested" and request.finish_id is None
    assert request.capture is None and request.reservation_owned  # the reservation is reused
    again = rig.text(rig.tool("session_handoff_get_template"))
    assert "Finish ID:" in again


def test_finish_requires_the_template_first(rig: Rig) -> None:
    rig.command("start")
    result = rig.tool("session_handoff_finish", {"id": "x"})
    assert result.is_error and "template was not retrieved" in rig.text(result)


def test_finish_rejects_stale_and_duplicate_ids(rig: Rig) -> None:
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    _write_dossier(rig)
    stale = rig.tool("session_handoff_finish", {"id": "stale"})
    assert stale.is_error and rig.handoff.request.phase == "writing"  # type: ignore[union-attr]
    assert not rig.tool("session_handoff_finish", {"id": fid}).is_error
    duplicate = rig.tool("session_handoff_finish", {"id": fid})
    assert duplicate.is_error and "duplicate" in rig.text(duplicate)


def test_finish_needs_a_nonempty_regular_dossier(rig: Rig) -> None:
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    result = rig.tool("session_handoff_finish", {"id": fid})
    assert result.is_error and "nonempty regular file" in rig.text(result)


def test_cutover_after_idle_settlement_links_the_parent_and_sends_the_bootstrap(rig: Rig) -> None:
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    dossier = _write_dossier(rig)
    rig.tool("session_handoff_finish", {"id": fid})
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    bridge, options = rig.pi.user_messages[-1]
    assert bridge.startswith("/sh __cutover ") and options == {"expand_prompt_templates": True}
    rig.command(bridge[len("/sh ") :])
    assert rig.ctx.new_sessions == [{"parent_session": rig.ctx.session_manager.session_file}]
    assert rig.ctx.sent_in_new and str(dossier) in rig.ctx.sent_in_new[0]
    assert dossier.exists()  # the extension never deletes the dossier


def test_a_wrong_cutover_token_does_nothing(rig: Rig) -> None:
    rig.command("start")
    rig.command("__cutover forged")
    assert rig.ctx.new_sessions == []


def test_cutover_cannot_be_cancelled_once_invoked(rig: Rig) -> None:
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    _write_dossier(rig)
    rig.tool("session_handoff_finish", {"id": fid})
    rig.handoff.request.phase = "cutover"  # type: ignore[union-attr]
    rig.command("cancel")
    assert any("cannot be cancelled" in n for n, _ in rig.ctx.ui.notes)


def test_prompts_deferred_from_writing_are_kept_in_order(rig: Rig) -> None:
    rig.command("start")
    before = rig.emit("input", InputEvent(text="early", images=None, source="rpc", streaming_behavior=None))
    assert before is None  # Writing mode: not captured before the GET
    rig.tool("session_handoff_get_template")
    for text in ("one", "two"):
        handled = rig.emit(
            "input", InputEvent(text=text, images=None, source="interactive", streaming_behavior=None)
        )
        assert handled == {"action": "handled"}
    passed = rig.emit(
        "input", InputEvent(text="ext", images=None, source="extension", streaming_behavior=None)
    )
    assert passed is None
    capture = rig.handoff.request.capture  # type: ignore[union-attr]
    assert capture is not None and capture.prompts == ["one", "two"]
    assert Path(str(capture.path)).read_text() == (
        "--- Deferred Prompt 1 of 2 ---\none\n\n--- Deferred Prompt 2 of 2 ---\ntwo\n"
    )
    assert any("Inputs deferred (2)" in "\n".join(w or []) for w in rig.ctx.ui.widgets)


def test_request_mode_captures_from_acceptance(rig: Rig, tmp_path: Path) -> None:
    config = tmp_path / "agent" / "pi-blitz-handoff" / "config.json"
    config.write_text(json.dumps({"deferPromptsFrom": "request"}), encoding="utf-8")
    rig.emit("session_start", SessionStartEvent(reason="reload"))
    rig.command("start")
    assert any("Inputs deferred (0)" in "\n".join(w or []) for w in rig.ctx.ui.widgets)
    handled = rig.emit(
        "input", InputEvent(text="x", images=None, source="rpc", streaming_behavior="followUp")
    )
    assert handled == {"action": "handled"}


def test_one_visible_reminder_after_the_delay(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(rig.handoff, "now", lambda: clock[0])
    rig.command("start")
    rig.emit("turn_end", _turn_end())
    assert not rig.pi.messages
    clock[0] += 61
    rig.ctx.idle = False
    rig.emit("turn_end", _turn_end())
    clock[0] += 61
    rig.emit("turn_end", _turn_end())
    reminders = [m for m, _ in rig.pi.messages if m["content"] == REMINDER_TEXT]
    assert len(reminders) == 1
    assert rig.pi.messages[0][1] == {"deliver_as": "steer"}


def test_emergency_instruction_at_90_percent_once(rig: Rig) -> None:
    rig.command("start")
    rig.ctx.percent = 89.9
    rig.emit("turn_end", _turn_end())
    assert not rig.pi.messages
    rig.ctx.percent = 90.0
    rig.emit("turn_end", _turn_end("aborted"))
    assert not rig.pi.messages
    rig.emit("turn_end", _turn_end())
    rig.emit("turn_end", _turn_end())
    emergencies = [m for m, _ in rig.pi.messages if m["content"] == EMERGENCY_INSTRUCTION]
    assert len(emergencies) == 1
    assert rig.handoff.request is not None and rig.handoff.request.reminded  # reminder cancelled


def test_no_emergency_without_a_request_or_after_submission(rig: Rig) -> None:
    rig.ctx.percent = 95.0
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is None
    rig.ctx.percent = 10.0
    _submit(rig)
    assert rig.handoff.request is not None and rig.handoff.request.submitted
    rig.ctx.percent = 95.0
    rig.emit("turn_end", _turn_end())
    assert not [m for m, _ in rig.pi.messages if m["content"] == EMERGENCY_INSTRUCTION]


def _enable_automatic(rig: Rig, tmp_path: Path, **extra: Any) -> None:
    config = tmp_path / "agent" / "pi-blitz-handoff" / "config.json"
    config.write_text(json.dumps({"automaticSessionHandoff": True, **extra}), encoding="utf-8")
    rig.emit("session_start", SessionStartEvent(reason="reload"))


def test_automatic_initiation_is_off_by_default(rig: Rig) -> None:
    rig.ctx.percent = 99.0
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is None


def test_automatic_initiation_budget(rig: Rig, tmp_path: Path) -> None:
    _enable_automatic(rig, tmp_path)
    rig.ctx.percent = 71.0
    rig.emit("turn_end", _turn_end("error"))
    assert rig.handoff.request is None  # error turns neither initiate nor spend
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is not None and rig.handoff.request.route == "automatic"
    assert rig.pi.messages[-1][1] == {"deliver_as": "steer"}
    assert rig.pi.entries[-1][1] == {"attempts": 1}
    rig.command("cancel")
    rig.ctx.percent = 80.0
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is None
    rig.ctx.percent = 90.0
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is not None  # the final attempt at the critical level
    rig.command("cancel")
    rig.ctx.percent = 99.0
    rig.emit("turn_end", _turn_end())
    assert rig.handoff.request is None


def test_the_budget_survives_reload_and_resets_on_compaction(rig: Rig, tmp_path: Path) -> None:
    _enable_automatic(rig, tmp_path)
    rig.ctx.session_manager.entries = [
        {"type": "custom", "customType": "pi-blitz-handoff-automatic", "data": {"attempts": 2}}
    ]
    rig.emit("session_start", SessionStartEvent(reason="reload"))
    assert rig.handoff.automatic_attempts == 2
    rig.emit("session_compact", object())
    assert rig.handoff.automatic_attempts == 0 and rig.pi.entries[-1][1] == {"attempts": 0}


def test_cancel_removes_only_the_owned_reservation(rig: Rig) -> None:
    rig.command("start")
    rig.tool("session_handoff_get_template")
    dossier = Path(rig.handoff.request.dossier)  # type: ignore[union-attr]
    assert dossier.exists()
    rig.command("cancel")
    assert not dossier.exists() and rig.handoff.request is None


def test_cancel_never_touches_a_foreign_file(rig: Rig) -> None:
    rig.command("start")
    dossier = Path(rig.handoff.request.dossier)  # type: ignore[union-attr]
    dossier.parent.mkdir(parents=True, exist_ok=True)
    dossier.write_text("foreign", encoding="utf-8")
    result = rig.tool("session_handoff_get_template")
    assert result.is_error
    rig.command("cancel")
    assert dossier.read_text() == "foreign"


def test_a_stale_finish_id_is_rejected_after_cancel_and_restart(rig: Rig) -> None:
    rig.command("start")
    old = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    rig.command("cancel")
    rig.command("start")
    new = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    assert old != new
    _write_dossier(rig)
    assert rig.tool("session_handoff_finish", {"id": old}).is_error


def test_protection_blocks_a_user_session_switch_while_capturing(rig: Rig) -> None:
    rig.command("start")
    event = SessionBeforeSwitchEvent(reason="new")
    assert rig.emit("session_before_switch", event) is None  # before the Writing boundary
    rig.tool("session_handoff_get_template")
    assert rig.emit("session_before_switch", event) == {"cancel": True}


def test_a_finish_awaiting_the_transition_is_protected_until_the_cutover(rig: Rig) -> None:
    _submit(rig)  # the bridge is sent; its command has not run yet
    event = SessionBeforeSwitchEvent(reason="new")
    assert rig.emit("session_before_switch", event) == {"cancel": True}
    assert rig.emit("session_before_compact", object()) == {"cancel": True}
    rig.command(rig.pi.user_messages[-1][0][len("/sh ") :])
    assert rig.ctx.new_sessions and rig.emit("session_before_switch", event) is None  # its own switch


def test_recovery_deletion_only_after_a_completed_delivered_turn(rig: Rig, tmp_path: Path) -> None:
    recovery = tmp_path / "agent" / "pi-blitz-handoff" / "recovery" / "r.md"
    recovery.write_text("--- Deferred Prompt 1 of 1 ---\nhello\n", encoding="utf-8")
    rig.ctx.ui.answers = [f"r.md ({_mtime(recovery)})", "Execute"]
    rig.command("recover")
    sent = rig.pi.user_messages[-1][0]
    assert sent == recovery.read_text()
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert recovery.exists()  # never delivered: a void send is no delivery
    rig.emit("message_end", MessageEndEvent(message={"role": "user", "content": sent}))
    rig.emit(
        "message_end", MessageEndEvent(message={"role": "assistant", "stopReason": "stop", "content": []})
    )
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert not recovery.exists()


def test_an_aborted_recovery_turn_keeps_the_file(rig: Rig, tmp_path: Path) -> None:
    recovery = tmp_path / "agent" / "pi-blitz-handoff" / "recovery" / "r.md"
    recovery.write_text("--- Deferred Prompt 1 of 1 ---\nhello\n", encoding="utf-8")
    rig.ctx.ui.answers = [f"r.md ({_mtime(recovery)})", "Execute"]
    rig.command("recover")
    sent = rig.pi.user_messages[-1][0]
    rig.emit("message_end", MessageEndEvent(message={"role": "user", "content": sent}))
    rig.emit("agent_settled", AgentSettledEvent(aborted=True))
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))  # later success cannot heal
    assert recovery.exists()


def _mtime(path: Path) -> str:
    return next(f.modified for f in list_recovery_files(str(path.parent)) if f.path == str(path))


def test_menu_opening_does_not_initiate(rig: Rig) -> None:
    rig.command("")
    assert rig.handoff.request is None and rig.pi.user_messages == []


def test_only_sh_is_registered_with_the_six_subcommand_completions(rig: Rig) -> None:
    assert list(rig.pi.commands) == ["sh"]
    complete = rig.pi.command_options["sh"]["get_argument_completions"]
    assert [c["value"] for c in complete("")] == [
        "start",
        "help",
        "cancel",
        "recover",
        "settings",
        "project-template",
    ]
    assert [c["value"] for c in complete("s")] == ["start", "settings"]
    assert complete("__") == []  # the private cutover bridge is not offered
    rig.command("help")
    help_text = rig.ctx.ui.notes[-1][0]
    assert all(f"/sh {sub}:" in help_text for sub in SUBCOMMANDS) and "__cutover" not in help_text


def test_the_menus_primary_entry_is_start_when_inactive_and_cancel_when_active(rig: Rig) -> None:
    rig.command("")
    assert rig.ctx.ui.selects[-1][1] == [
        "Start Session Handoff",
        "Recovery",
        "Settings",
        "Project templates",
        "Help",
    ]
    rig.command("start")
    rig.ctx.ui.answers = ["Cancel Session Handoff"]
    rig.command("")
    assert rig.ctx.ui.selects[-1][1][0] == "Cancel Session Handoff"
    assert rig.handoff.request is None and any("Session Handoff cancelled" in n for n, _ in rig.ctx.ui.notes)


def test_the_context_warning_is_shown_once_and_the_critical_one_at_every_settlement(rig: Rig) -> None:
    rig.ctx.percent = 65.0
    rig.emit("turn_end", _turn_end())
    rig.emit("turn_end", _turn_end())
    assert len([n for n, _ in rig.ctx.ui.notes if n.startswith("Context use is 65%: consider")]) == 1
    rig.ctx.percent = 92.0
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert len([n for n, _ in rig.ctx.ui.notes if "at or above the critical level" in n]) == 2


def test_the_finished_widget_stays_until_the_next_ordinary_input(rig: Rig) -> None:
    _submit(rig)
    rig.command(rig.pi.user_messages[-1][0][len("/sh ") :])
    source = rig.ctx.session_manager.session_file
    rig.emit("session_start", SessionStartEvent(reason="new", previous_session_file=source))
    assert rig.handoff.duty is not None and rig.ctx.ui.widgets[-1][0] == "Session Handoff Finished"  # type: ignore[index]
    rig.emit(
        "input",
        InputEvent(text="from the extension", images=None, source="extension", streaming_behavior=None),
    )
    assert rig.ctx.ui.widgets[-1] is not None
    rig.emit(
        "input", InputEvent(text="next task", images=None, source="interactive", streaming_behavior=None)
    )
    assert rig.ctx.ui.widgets[-1] is None


def test_status_tool_reports_thresholds_and_state(rig: Rig) -> None:
    text = rig.text(rig.tool("blitz_handoff", {"action": "status"}))
    for part in (
        "Context use: 10%",
        "Warning threshold: 60%",
        "Automatic handoff: disabled",
        "Reminder delay: 60 s",
        "Status: idle",
    ):
        assert part in text


def test_invalid_config_refuses_starts(rig: Rig, tmp_path: Path) -> None:
    config = tmp_path / "agent" / "pi-blitz-handoff" / "config.json"
    config.write_text(json.dumps({"speedMode": "fast"}), encoding="utf-8")
    rig.emit("session_start", SessionStartEvent(reason="reload"))
    rig.command("start")
    assert rig.handoff.request is None
    assert any("settings are invalid" in n for n, _ in rig.ctx.ui.notes)


def test_settings_edit_is_validated_persisted_and_applied(rig: Rig, tmp_path: Path) -> None:
    rig.ctx.ui.answers = ["readinessRetrySeconds: 60", "7", None]
    rig.command("settings")
    config = tmp_path / "agent" / "pi-blitz-handoff" / "config.json"
    assert json.loads(config.read_text())["readinessRetrySeconds"] == 7
    assert rig.handoff.settings.readiness_retry_seconds == 7
    rig.ctx.ui.answers = ["readinessRetrySeconds: 7", "0", None]
    rig.command("settings")
    assert rig.handoff.settings.readiness_retry_seconds == 7
    assert any("not changed" in n for n, _ in rig.ctx.ui.notes)


def test_chain_limit_starts_an_independent_master(rig: Rig, tmp_path: Path) -> None:
    config = tmp_path / "agent" / "pi-blitz-handoff" / "config.json"
    config.write_text(json.dumps({"maxSessionChainLength": 1}), encoding="utf-8")
    rig.emit("session_start", SessionStartEvent(reason="reload"))
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    _write_dossier(rig)
    rig.tool("session_handoff_finish", {"id": fid})
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    rig.command(rig.pi.user_messages[-1][0][len("/sh ") :])
    assert rig.ctx.new_sessions == [{"parent_session": None}]


def _submit(rig: Rig) -> Path:
    """/sh start, GET, write, Finish, idle settlement: returns the dossier; the bridge is the last prompt."""
    rig.command("start")
    fid = _finish_id(rig.text(rig.tool("session_handoff_get_template")))
    dossier = _write_dossier(rig)
    assert not rig.tool("session_handoff_finish", {"id": fid}).is_error
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    return dossier


def test_a_failed_cutover_leaves_the_next_request_free_to_cut_over(rig: Rig, tmp_path: Path) -> None:
    rig.ctx.session_manager.header = {"type": "session", "parentSession": str(tmp_path / "missing.jsonl")}
    dossier = _submit(rig)
    rig.command(rig.pi.user_messages[-1][0][len("/sh ") :])
    assert rig.ctx.new_sessions == [] and rig.handoff.request is None  # unreadable ancestor: visible failure
    assert any("cannot be read" in n for n, _ in rig.ctx.ui.notes)
    rig.ctx.session_manager.header = {"type": "session"}
    dossier.unlink()  # the leftover is removed explicitly
    _submit(rig)
    bridge = rig.pi.user_messages[-1][0]
    assert bridge.startswith("/sh __cutover "), rig.pi.user_messages
    rig.command(bridge[len("/sh ") :])
    assert rig.ctx.new_sessions == [{"parent_session": rig.ctx.session_manager.session_file}]


def test_startup_and_settings_open_check_both_roles(rig: Rig, tmp_path: Path) -> None:
    root = tmp_path / "agent" / "pi-blitz-handoff"
    (root / "config.json").write_text(json.dumps({"callTemplate": "call_gone.cmpl"}), encoding="utf-8")
    rig.emit("session_start", SessionStartEvent(reason="reload"))
    fallback = [(n, level) for n, level in rig.ctx.ui.notes if "'call_gone.cmpl' could not be used" in n]
    assert len(fallback) == 1 and fallback[0][1] == "warning" and "call_default.cmpl" in fallback[0][0]
    (root / "templates" / "handoff_default.cmpl").unlink()
    rig.ctx.ui.notes.clear()
    rig.command("settings")
    levels = {
        "call": [lvl for n, lvl in rig.ctx.ui.notes if "'call_gone.cmpl' could not be used" in n],
        "handoff": [lvl for n, lvl in rig.ctx.ui.notes if "handoff template cannot be resolved" in n],
    }
    assert levels == {"call": ["warning"], "handoff": ["error"]}, rig.ctx.ui.notes


def test_cancel_cleanup_guards_tree_navigation_even_before_the_template(rig: Rig) -> None:
    rig.command("start")
    assert rig.emit("session_before_tree", object()) is None  # no protection yet
    during_cleanup: list[Any] = []

    async def wait_for_idle() -> None:
        during_cleanup.append(rig.emit("session_before_tree", object()))
        rig.ctx.idle = True

    rig.ctx.idle = False
    rig.ctx.wait_for_idle = wait_for_idle  # type: ignore[method-assign]
    rig.command("cancel")
    assert during_cleanup == [{"cancel": True}]
    assert rig.emit("session_before_tree", object()) is None


def test_a_bootstrap_turn_that_is_unobserved_or_fails_keeps_the_recovery_file(rig: Rig) -> None:
    rig.command("start")
    rig.tool("session_handoff_get_template")
    rig.emit("input", InputEvent(text="later", images=None, source="interactive", streaming_behavior=None))
    recovery = Path(str(rig.handoff.request.capture.path))  # type: ignore[union-attr]
    fid = rig.handoff.request.finish_id  # type: ignore[union-attr]
    _write_dossier(rig)
    rig.tool("session_handoff_finish", {"id": fid})
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    rig.command(rig.pi.user_messages[-1][0][len("/sh ") :])
    bootstrap = rig.ctx.sent_in_new[0]
    source = rig.ctx.session_manager.session_file
    rig.emit("session_start", SessionStartEvent(reason="new", previous_session_file=source))
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert recovery.exists()  # not delivered yet: no decision
    rig.emit("message_end", MessageEndEvent(message={"role": "user", "content": bootstrap}))
    rig.emit(
        "message_end", MessageEndEvent(message={"role": "assistant", "stopReason": "error", "content": []})
    )
    rig.emit("agent_settled", AgentSettledEvent(aborted=False))
    assert recovery.exists()
    assert any("did not complete" in n and level == "error" for n, level in rig.ctx.ui.notes)


def test_no_handoff_starts_while_settings_is_open(rig: Rig, tmp_path: Path) -> None:
    """H87c: while /sh settings waits for the user, no route starts a handoff (command, model,
    automatic). The feature scenario (a dialog answer's ``during``, operations-while-a-command-is-
    held.feature) covers the command route on both targets; this unit test covers all three."""
    _enable_automatic(rig, tmp_path)
    seen: dict[str, Any] = {}

    async def held_open(title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        try:
            rig.handoff.start_request(rig.ctx, "command")
        except BlitzHandoffError as error:
            seen["command"] = str(error)
        tool = rig.pi.tools[STATUS_TOOL]
        seen["model"] = await tool.execute("c", {"action": "start"}, AbortController().signal, rig.ctx)
        seen["automatic"] = rig.handoff.automatic_due(99.0)
        return None

    rig.ctx.ui.select = held_open  # type: ignore[method-assign]
    rig.command("settings")
    assert "settings" in seen["command"]
    assert seen["model"].is_error and seen["automatic"] is False
    assert rig.handoff.request is None
    rig.command("start")  # closed again: a start is accepted
    assert rig.handoff.request is not None
