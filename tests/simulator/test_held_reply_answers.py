"""A command run in a held model call's ``during`` leaves the held command's dialog answers alone.

Real Pi runs a command line sent while another command awaits its model call at once
(``dist/modes/rpc/rpc-mode.js:318-343``, ``:663-665``), and PiTarget gives that command's
answers after the held command's pending ones and drops its unused ones when it ends
(``targets/realpi/pi_target.py`` ``_prompt``: ``AnswerRules.add``/``discard`` for every
``during`` operation). The simulator did so only inside a held dialog: in a held reply's
``during`` the command replaced the pending answers and, when it ended, cleared them, so the
held command's later dialogs went unanswered on the simulator and answered on real Pi."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, run


def _two_dialogs_around_a_model_call(seen: list[str]):  # type: ignore[no-untyped-def]
    """``/two`` asks a select, calls the model (``ctx.model_registry.complete``: the call a
    scenario holds), then asks a second select; ``/probe`` asks for an input."""

    def ext(pi: ExtensionAPI) -> None:
        async def two(_args: str, ctx: Any) -> None:
            seen.append(f"first:{await ctx.ui.select('First', ['a', 'b'])}")
            context = {
                "systemPrompt": "You note.",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "note"}], "timestamp": 0}],
            }
            await ctx.model_registry.complete(ctx.model, context, max_tokens=64)
            seen.append(f"second:{await ctx.ui.select('Second', ['c', 'd'])}")

        async def probe(_args: str, ctx: Any) -> None:
            seen.append(f"probe:{await ctx.ui.input('Probe', 'x')}")

        pi.register_command("two", two)
        pi.register_command("probe", probe)

    return ext


def test_a_command_in_a_held_calls_during_leaves_the_held_commands_answers(tmp_path: Path) -> None:
    seen: list[str] = []
    inner = {"command": {"text": "/probe", "answers": [{"input": "typed", "when": "Probe"}]}}
    scenario = base(
        operations=[
            {
                "command": {
                    "text": "/two",
                    "answers": [{"select": "b", "when": "First"}, {"select": "d", "when": "Second"}],
                }
            }
        ],
        model={"extension": [{"kind": "raw", "text": "noted", "during": [inner]}]},
    )
    result = run(tmp_path, scenario, _two_dialogs_around_a_model_call(seen))
    assert seen == ["first:b", "probe:typed", "second:d"]
    assert [(r.name, r.ok) for r in result.operations] == [("command", True)]
    assert [(label, r.name, r.ok) for label, _op, r in result.host.held_outcomes] == [
        ("extension#0", "command", True)
    ]
