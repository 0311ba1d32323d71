"""Two host facts an extension observes: the model's ``read`` tool is Pi's own file read (the
trace names it ``tool_read``, apart from the extension's ``read``), and ``ctx.ui.theme`` is Pi
1.6's RPC theme (``pi-1.6-rpc-theme.json``; ``tests/realpi`` checks it against the package)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, PiError
from pi_continuity_harness.simulator.ui import SimTheme

from .helpers import base, records, run


def test_the_models_read_tool_is_traced_as_pis_own_read_never_the_extensions(tmp_path: Path) -> None:
    read = {"name": "read", "arguments": {"path": "notes.md"}}
    scenario = base(
        files={"notes.md": {"text": "some notes"}},
        model={"agent": [{"text": "", "tool_calls": [read]}, {"text": "done"}]},
        operations=[{"prompt": "read the notes"}],
    )
    result = run(tmp_path, scenario)
    fs = [(r["name"], str(r.get("path", ""))) for r in records(result, "fs")]
    assert [name for name, path in fs if path.endswith("/notes.md")] == ["tool_read"]
    reads = [
        r for r in records(result, "session") if r["name"] == "message_end" and r.get("role") == "toolResult"
    ]
    assert reads and reads[0].get("text") == "some notes"


def test_the_theme_wraps_a_text_as_pi_16_does_in_rpc_mode() -> None:
    theme = SimTheme()
    assert theme.fg("warning", "Waiting") == "\x1b[38;5;3mWaiting\x1b[39m"
    assert theme.fg("muted", "x") == "\x1b[39m\x1b[2mx\x1b[22;39m"
    # Pi throws (tokenAnsi, theme.js:212-215): the API's PiError, as through the bridge.
    with pytest.raises(PiError, match=r"^Unknown theme color: yellow$"):
        theme.fg("yellow", "x")


def test_an_extension_colours_its_widget_with_the_theme(tmp_path: Path) -> None:
    def extension(pi: ExtensionAPI) -> None:
        async def command(_args: str, ctx: Any) -> None:
            ctx.ui.set_widget("w", [ctx.ui.theme.fg("error", "broken")])

        pi.register_command("paint", command, description="paint")

    result = run(tmp_path, base(operations=[{"command": "/paint"}]), extension)
    widgets = [r for r in records(result, "ui") if r["name"] == "set_widget"]
    assert widgets and widgets[-1]["lines"] == ["\x1b[38;5;1mbroken\x1b[39m"]
