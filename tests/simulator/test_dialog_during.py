"""A dialog answer's ``during``: its operations run while the dialog is open, and the answer is
given when they have ended (as a held reply's ``during``); bad values are refused at load naming
the field. Real Pi runs a command line sent meanwhile at once (``dist/modes/rpc/rpc-mode.js:663-665``
hands every stdin line to ``handleInputLine`` without waiting, the ``prompt`` case does not await
the extension command it starts, ``:318-343``, whose dialog waits for its response, ``:52-84``);
tests/realpi/test_pi_target.py runs the same on both targets."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.scenario.operations import DialogAnswer
from pi_continuity_harness.simulator.ui import pi_dialog_timeout

from .helpers import base, labels, run


def _menu(seen: list[str]):  # type: ignore[no-untyped-def]
    """``/menu`` opens a select and notes what was picked; ``/probe`` notes whether the menu is
    open (the extension's own flag, as blitz's ``in_settings``)."""

    def ext(pi: ExtensionAPI) -> None:
        state = {"open": False}

        async def menu(_args: str, ctx: Any) -> None:
            state["open"] = True
            picked = await ctx.ui.select("Menu", ["one", "two"])
            state["open"] = False
            seen.append(f"menu:{picked}")

        async def probe(_args: str, ctx: Any) -> None:
            seen.append(f"probe:open={state['open']}")
            if state["open"]:
                answer = await ctx.ui.input("Probe while open", "x")
                seen.append(f"probe:input={answer}")

        pi.register_command("menu", menu)
        pi.register_command("probe", probe)

    return ext


def test_the_operations_run_while_the_dialog_is_open_then_it_is_answered(tmp_path: Path) -> None:
    seen: list[str] = []
    answers = [
        {"select": "two", "during": [{"command": {"text": "/probe", "answers": [{"input": "typed"}]}}]}
    ]
    result = run(tmp_path, base(operations=[{"command": {"text": "/menu", "answers": answers}}]), _menu(seen))
    assert seen == ["probe:open=True", "probe:input=typed", "menu:two"]
    assert labels(result, "op", "ui") == [
        "op:command",
        "ui:select",
        "op:command",  # /probe, during the select
        "ui:input",
        "op:command:end",
        "op:command:end",  # /menu
    ]
    during = [r for r in result.host.trace.records if r["kind"] == "op" and r.get("during")]
    assert [r.get("text") for r in during] == ["/probe"]
    # The dialog's record shows its answer, not the operations (they have records of their own).
    select = next(r for r in result.host.trace.records if r["kind"] == "ui" and r["name"] == "select")
    assert select["answer"] == {"select": "two"}
    assert [(label, op, r.name, r.ok, r.disposition) for label, op, r in result.host.held_outcomes] == [
        ("dialog:select", 0, "command", True, "handled")
    ]
    assert all(r.ok for r in result.operations) and result.operations[0].data == {}


def test_a_command_run_while_a_dialog_is_open_leaves_the_held_commands_answers(tmp_path: Path) -> None:
    """Its own answers are added after the held command's and dropped when it ends (PiTarget's
    ``AnswerRules.add``/``discard``): the held command's later dialogs still get theirs."""

    def ext(pi: ExtensionAPI) -> None:
        async def two(args: str, ctx: Any) -> None:
            first = await ctx.ui.select("First " + args, ["a", "b"])
            second = await ctx.ui.input("Second " + args, "")
            ctx.ui.notify(f"{args}: {first} {second}", "info")

        pi.register_command("two", two)

    inner = {
        "text": "/two inner",
        "answers": [{"select": "a", "when": "First inner"}, {"input": "i", "when": "inner"}],
    }
    answers = [{"select": "b", "during": [{"command": inner}]}, {"input": "outer"}]
    result = run(tmp_path, base(operations=[{"command": {"text": "/two outer", "answers": answers}}]), ext)
    assert [n.message for n in result.host.ui.notifications] == ["inner: a i", "outer: b outer"]
    assert result.operations[0].ok and result.operations[0].data == {}


def test_same_seed_same_trace(tmp_path: Path) -> None:
    answers = [{"select": "one", "during": [{"command": "/probe"}, "abort"]}]
    scenario = base(operations=[{"command": {"text": "/menu", "answers": answers}}])
    one = run(tmp_path / "a", scenario, _menu([]), seed=3)
    two = run(tmp_path / "b", scenario, _menu([]), seed=3)
    assert one.host.trace.records == two.host.trace.records


def test_the_answer_record_leaves_out_during() -> None:
    answer = DialogAnswer.model_validate({"confirm": True, "during": ["abort"]})
    assert answer.record() == {"confirm": True}
    assert DialogAnswer(cancel=True).record() == {"cancel": True}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: bad\noperations: [{command: {text: /x, answers: [{confirm: true, during: [{set_model: a/b}]}]}}]\n",
            "bad.yaml: operations[0].command.answers[0].during[0].set_model: 'a/b' is not one of the models",
        ),
        (
            "name: bad\noperations: [{command: {text: /x, answers: [{confirm: true, during: [{nothing: 1}]}]}}]\n",
            "bad.yaml: operations[0].command.answers[0].during[0]: an operation is a mapping with exactly one of: ",
        ),
        (
            "name: bad\noperations: [{command: {text: /x, answers: [{during: [abort]}]}}]\n",
            "bad.yaml: operations[0].command.answers[0]: a dialog answer has exactly one of:"
            " select, input, confirm, cancel",
        ),
    ],
)
def test_bad_during_values_are_refused_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    error = str(raised.value).replace(str(path), "bad.yaml")
    assert error.startswith(message) and "\n" not in error, error


def test_the_cli_refuses_it_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\n"
        "operations: [{command: {text: /x, answers: [{cancel: true, during: [{set_model: a/b}]}]}}]\n",
        encoding="utf-8",
    )
    assert main(["simulate", str(path), "--workdir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "operations[0].command.answers[0].during[0].set_model" in err and str(path) in err
    assert not (tmp_path / "run").exists()


def _timed(seen: list[str], timeout: float) -> Any:
    """``/timed`` asks a confirm with ``timeout`` and notes the result; ``/note`` notes a word."""

    def ext(pi: ExtensionAPI) -> None:
        async def timed(_args: str, ctx: Any) -> None:
            seen.append(f"timed:{await ctx.ui.confirm('Timed', 'Wait?', timeout=timeout)}")

        async def note(args: str, _ctx: Any) -> None:
            seen.append(f"note:{args}")

        async def pause(args: str, _ctx: Any) -> None:
            await asyncio.sleep(int(args) / 1000)

        pi.register_command("timed", timed)
        pi.register_command("note", note)
        pi.register_command("pause", pause)

    return ext


def _timed_scenario(latency_ms: int) -> dict[str, Any]:
    """The dialog's ``during``: a command that takes ``latency_ms`` (a prompt would not: its RPC
    response comes when its run starts, ``_prompt_during``), then a note."""
    during = [{"command": f"/pause {latency_ms}"}, {"command": "/note after"}]
    answers = [{"confirm": True, "during": during}]
    return base(operations=[{"command": {"text": "/timed", "answers": answers}}, {"command": "/note next"}])


def test_a_timed_dialog_gives_its_default_when_its_timer_fires_before_its_during_ends(tmp_path: Path) -> None:
    """Pi 1.6 resolves the dialog with its default when its timer fires and drops the late
    answer (``dist/modes/rpc/rpc-mode.js:69-74``); the client still runs every operation, and
    the command's operation ends only when they have (PiTarget waits for the answer thread),
    so the next operation comes after them. Before: the scripted answer, whatever the timer."""
    seen: list[str] = []
    result = run(tmp_path, _timed_scenario(latency_ms=500), _timed(seen, timeout=0.05))
    assert seen == ["timed:False", "note:after", "note:next"]
    assert [(label, op, r.name, r.ok) for label, op, r in result.host.held_outcomes] == [
        ("dialog:confirm", 0, "command", True),
        ("dialog:confirm", 0, "command", True),
    ]
    assert all(r.ok for r in result.operations)


def test_a_timed_dialog_whose_during_ends_first_gets_its_answer(tmp_path: Path) -> None:
    seen: list[str] = []
    run(tmp_path, _timed_scenario(latency_ms=5), _timed(seen, timeout=2.0))
    assert seen == ["note:after", "timed:True", "note:next"]


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [
        (None, None),
        (0.0, None),  # 0 ms: no timer (rpc-mode.js:69 tests opts.timeout for truth)
        (0.0004, None),  # rounds to 0 ms on its way to Pi (bridge_api.py _ms)
        (0.0006, 0.001),
        (0.3, 0.3),
        (-5.0, 0.001),  # Node runs a negative delay after 1 ms
        (2**31 / 1000, 0.001),  # and one above 2**31 - 1 ms
        ((2**31 - 1) / 1000, (2**31 - 1) / 1000),
    ],
)
def test_a_dialog_timeout_is_what_pi_and_node_make_of_it(
    timeout: float | None, seconds: float | None
) -> None:
    assert pi_dialog_timeout(timeout) == seconds


def test_a_select_answer_naming_no_option_cancels_before_its_during_runs(tmp_path: Path) -> None:
    """The RPC client cancels such an answer at once (``AnswerRules._pick`` returns a cancel, so
    no held answer): its operations never run. Before, the simulator ran them and then cancelled."""
    seen: list[str] = []
    answers = [{"select": "three", "during": [{"command": "/probe"}]}]
    result = run(tmp_path, base(operations=[{"command": {"text": "/menu", "answers": answers}}]), _menu(seen))
    assert seen == ["menu:None"]
    assert result.host.held_outcomes == []
    assert not result.operations[0].ok
    assert "matches none of ['one', 'two']" in str(result.operations[0].error)


def test_a_prompt_run_while_a_dialog_is_open_is_answered_at_its_start_and_its_run_goes_on(
    tmp_path: Path,
) -> None:
    """Pi's RPC mode answers a prompt at its preflight (``void session.prompt(...)``,
    rpc-mode.js:318-343), so the dialog is answered before the prompt's run ends
    (``HostOperations._prompt_during``; before, the turn ended while the menu was still open). A
    settings error the run's end throws after that answer is swallowed, as Pi's ``catch``
    swallows it (§9.19: ``reserveTokens: -5`` passes the first prompt and throws after its
    run). tests/realpi/test_differential_fidelity.py plays the ordering on both targets."""
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        state = {"open": False}

        async def menu(_args: str, ctx: Any) -> None:
            state["open"] = True
            seen.append(f"menu:{await ctx.ui.select('Menu', ['one', 'two'])}")
            state["open"] = False

        def turn_end(_event: Any, _ctx: Any) -> None:
            seen.append(f"turn_end:open={state['open']}")

        pi.register_command("menu", menu)
        pi.on("turn_end", turn_end)

    answers = [{"select": "two", "during": [{"prompt": "hello"}]}]
    scenario = base(operations=[{"command": {"text": "/menu", "answers": answers}}])
    scenario["settings"]["project"]["compaction"]["reserveTokens"] = -5
    result = run(tmp_path, scenario, ext)
    assert seen == ["menu:two", "turn_end:open=False"]
    assert [(label, r.name, r.ok, r.disposition) for label, _op, r in result.host.held_outcomes] == [
        ("dialog:select", "prompt", True, "started")
    ]
    swallowed = [r for r in result.host.trace.records if r["kind"] == "host" and r["name"] == "swallowed"]
    assert [r["error"] for r in swallowed] == [
        "Invalid compaction.reserveTokens setting: -5. Expected a non-negative safe integer."
    ]
    assert all(r.ok for r in result.operations)
