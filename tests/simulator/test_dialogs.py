"""Dialogs answered from scripted answers: positional answers, ``when`` rules, mismatches, no UI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario.operations import DialogAnswer, DialogAnswerMismatchError, pick_answer

from .helpers import base, labels, run


def answers(*items: dict[str, Any]) -> list[DialogAnswer]:
    return [DialogAnswer.model_validate(i) for i in items]


def test_positional_answers_are_used_in_order() -> None:
    pending = answers({"confirm": True}, {"select": "b"})
    assert pick_answer(pending, "confirm", "Sure?").confirm is True  # type: ignore[union-attr]
    assert pick_answer(pending, "select", "Pick", options=["a", "b"]).select == "b"  # type: ignore[union-attr]
    assert pick_answer(pending, "input", "More?") is None
    assert pending == []


def test_when_rules_match_title_message_or_options_wherever_they_come() -> None:
    pending = answers(
        {"input": "75"}, {"when": "trigger", "input": "80"}, {"when": "compaction", "select": "/compaction/"}
    )
    chosen = pick_answer(pending, "select", "Menu", options=["status", "Compaction settings"])
    assert chosen is not None and chosen.choose(["status", "Compaction settings"]) == "Compaction settings"
    assert pick_answer(pending, "input", "Trigger percent").input == "80"  # type: ignore[union-attr]
    assert pick_answer(pending, "input", "Anything").input == "75"  # type: ignore[union-attr]


def test_a_when_rule_of_the_wrong_kind_is_skipped_and_cancel_fits_any_kind() -> None:
    pending = answers({"when": "menu", "confirm": True}, {"cancel": True})
    assert pick_answer(pending, "select", "Menu", options=["x"]).cancel is True  # type: ignore[union-attr]
    assert pick_answer(answers({"input": "text"}), "editor", "Edit").input == "text"  # type: ignore[union-attr]


def test_a_positional_answer_of_the_wrong_kind_is_a_scenario_error() -> None:
    with pytest.raises(DialogAnswerMismatchError, match="next scripted answer is 'select'"):
        pick_answer(answers({"select": "a"}), "confirm", "Sure?")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({}, "exactly one of"),
        ({"confirm": True, "input": "x"}, "exactly one of"),
        ({"when": "(", "confirm": True}, "not a regular expression"),
    ],
)
def test_invalid_answers_are_refused(data: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        DialogAnswer.model_validate(data)


def asking(log: list[Any]) -> Any:
    def factory(pi: ExtensionAPI) -> None:
        async def ask(args: str, ctx: Any) -> None:
            log.append(await ctx.ui.select("Pick a section", ["armed", "settings", "artifacts"]))
            log.append(await ctx.ui.confirm("Pi Session Continuity", "Show detailed status?"))
            log.append(await ctx.ui.input("Trigger percent", "75"))
            log.append(await ctx.ui.confirm("Timed", "Wait?", timeout=0.3))
            log.append(await ctx.ui.editor("Notes", "prefill"))

        pi.register_command("ask", ask)

    return factory


def test_dialogs_in_a_scenario_with_when_rules_and_a_timeout(tmp_path: Path) -> None:
    """psc-lifecycle Consequence 13 (§7): dialogs are answered while the command's request is
    open; a timed dialog left unanswered gives its default after the timeout; the command's
    response comes only after the handler, dialogs included, has returned."""
    log: list[Any] = []
    command = {
        "command": {
            "text": "/ask",
            "answers": [
                {"when": "detailed", "confirm": True},
                {"select": "/set/"},
                {"when": "percent", "input": "80"},
                {"when": "notes", "input": "my notes"},
                {"when": "never shown", "input": "unused"},
            ],
        }
    }
    result = run(tmp_path, base(operations=[command]), asking(log))
    assert log == ["settings", True, "80", False, "my notes"]
    ui = [r for r in result.host.trace.records if r["kind"] == "ui"]
    assert [r["name"] for r in ui] == ["select", "confirm", "input", "confirm", "editor"]
    timed = ui[3]
    assert "answer" not in timed
    assert ui[4]["t"] - timed["t"] >= 300  # the timed confirm waited its timeout in virtual time
    assert result.operations[0].ok and result.operations[0].data == {"unusedAnswers": 1}
    assert result.operations[0].disposition == "handled"
    assert labels(result, "op", "ui") == [
        "op:command",
        "ui:select",
        "ui:confirm",
        "ui:input",
        "ui:confirm",
        "ui:editor",
        "op:command:end",
    ]


def test_a_mismatched_answer_fails_the_operation(tmp_path: Path) -> None:
    log: list[Any] = []
    result = run(
        tmp_path,
        base(operations=[{"command": {"text": "/ask", "answers": [{"confirm": True}]}}]),
        asking(log),
    )
    outcome = result.operations[0]
    assert not outcome.ok
    assert (
        outcome.error
        == "dialog 'select' ('Pick a section') opened, but the next scripted answer is 'confirm'"
    )


def test_a_select_answer_matching_no_option_fails_the_operation(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        base(operations=[{"command": {"text": "/ask", "answers": [{"select": "nope"}]}}]),
        asking([]),
    )
    assert (
        result.operations[0].error
        == "select 'Pick a section': 'nope' matches none of ['armed', 'settings', 'artifacts']"
    )


def test_unanswered_dialogs_are_cancelled(tmp_path: Path) -> None:
    log: list[Any] = []
    run(tmp_path, base(operations=[{"command": "/ask"}]), asking(log))
    assert log == [None, False, None, False, None]


@pytest.mark.parametrize("mode", ["print", "json"])
def test_no_ui_in_print_and_json_modes(tmp_path: Path, mode: str) -> None:
    log: list[Any] = []
    command = {"command": {"text": "/ask", "answers": [{"select": "armed"}]}}
    result = run(tmp_path, base(mode=mode, operations=[command]), asking(log))
    assert log == [None, False, None, False, None]
    # No dialog is shown: each attempt leaves only the harness's noUI note in the trace.
    attempts = [r for r in result.host.trace.records if r["kind"] == "ui"]
    assert len(attempts) == 5
    assert all(r.get("noUI") is True for r in attempts)
    assert result.operations[0].data == {"unusedAnswers": 1}
