"""``command.wait: false``: the operation sends the command and the next one runs while it is
still held (an RPC client that writes the next line without waiting for the response,
``dist/modes/rpc/rpc-mode.js:318-343``); bad values are refused naming the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario

from .helpers import base, run


def _ops(result: Any) -> list[tuple[str, str | None, str | None]]:
    """(text, phase, ...) of every command record, in trace order."""
    return [
        (r.get("text") or "", r.get("phase"), "wait" if r.get("wait") is False else None)
        for r in result.host.trace.records
        if r["kind"] == "op" and r["name"] == "command"
    ]


def _guarded(seen: list[str]):  # type: ignore[no-untyped-def]
    """``/hold`` waits for the turn to settle (as ``/sh cancel`` does); ``/probe`` notes whether
    a ``/hold`` is still waiting."""

    def ext(pi: ExtensionAPI) -> None:
        state = {"holding": False}

        async def hold(_args: str, ctx: Any) -> None:
            state["holding"] = True
            seen.append("hold:start")
            await ctx.wait_for_idle()
            state["holding"] = False
            seen.append("hold:end")

        async def probe(_args: str, _ctx: Any) -> None:
            seen.append(f"probe:holding={state['holding']}")

        pi.register_command("hold", hold)
        pi.register_command("probe", probe)

    return ext


def test_the_next_operation_runs_while_an_unawaited_command_is_held(tmp_path: Path) -> None:
    seen: list[str] = []
    during = [{"command": {"text": "/hold", "wait": False}}, {"command": "/probe"}]
    scenario = base(
        operations=[{"prompt": "hi"}],
        model={"agent": [{"text": "reply", "latency_ms": 50, "during": during}]},
    )
    result = run(tmp_path, scenario, _guarded(seen))
    assert seen == ["hold:start", "probe:holding=True", "hold:end"]
    # The unawaited command's end is recorded when it really ends, after the probe's.
    assert _ops(result) == [
        ("/hold", None, "wait"),
        ("/probe", None, None),
        ("", "end", None),  # /probe
        ("", "end", None),  # /hold, once the turn settled
    ]
    held = result.host.held_outcomes
    assert [(outcome.name, outcome.ok) for _label, _op, outcome in held] == [("command", True)] * 2


def test_a_waited_command_blocks_the_next_operation_until_the_grace_elapses(tmp_path: Path) -> None:
    """The contrast: without ``wait: false`` the probe runs only after ``/hold`` ended, which needs
    the held call released first (after the grace period)."""
    seen: list[str] = []
    during = [{"command": "/hold"}, {"command": "/probe"}]
    scenario = base(
        operations=[{"prompt": "hi"}],
        model={"agent": [{"text": "reply", "latency_ms": 50, "during": during}]},
    )
    run(tmp_path, scenario, _guarded(seen))
    assert seen == ["hold:start", "hold:end", "probe:holding=False"]


def test_same_seed_same_trace(tmp_path: Path) -> None:
    during = [{"command": {"text": "/hold", "wait": False}}, {"command": "/probe"}]
    scenario = base(
        operations=[{"prompt": "hi"}],
        model={"agent": [{"text": "reply", "latency_ms": 50, "during": during}]},
    )
    one = run(tmp_path / "a", scenario, _guarded([]))
    two = run(tmp_path / "b", scenario, _guarded([]))
    assert one.host.trace.records == two.host.trace.records


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: bad\nmodel: {agent: [{text: a, during: [{command: {text: /x, wait: maybe}}]}]}\n",
            "bad.yaml: model.agent[0].during[0].command.wait: Input should be a valid boolean",
        ),
        (
            "name: bad\nmodel: {agent: [{text: a, during: [{command: {text: /x, wait: false,"
            " answers: [{confirm: true}]}}]}]}\n",
            "bad.yaml: model.agent[0].during[0].command: "
            "wait: false takes no answers (no operation waits for its dialogs)",
        ),
        (
            "name: bad\noperations: [{prompt: hi}, {command: {text: /x, wait: false}}]\n",
            "bad.yaml: operations[1].command.wait: false is for a command run while a reply is held"
            " (a reply's or a dialog answer's during, or faults.inject); at the top level the next operation"
            " waits for the host to be quiet",
        ),
    ],
)
def test_bad_wait_values_are_refused_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert str(raised.value).replace(str(path), "bad.yaml") == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_the_cli_refuses_it_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\noperations: [{command: {text: /x, wait: false}}]\n", encoding="utf-8")
    assert main(["simulate", str(path), "--workdir", str(tmp_path / "run")]) == 2
    assert "operations[0].command.wait" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_an_injected_unawaited_command_is_held_while_the_next_injected_one_runs(tmp_path: Path) -> None:
    seen: list[str] = []
    inject = {
        "after": {"kind": "session", "name": "agent_start"},
        "operations": [{"command": {"text": "/hold", "wait": False}}, {"command": "/probe"}],
    }
    scenario = base(
        operations=[{"prompt": "hi"}],
        model={"agent": [{"text": "reply", "latency_ms": 50}]},
        faults={"inject": [inject]},
    )
    run(tmp_path, scenario, _guarded(seen))
    assert seen == ["hold:start", "probe:holding=True", "hold:end"]
