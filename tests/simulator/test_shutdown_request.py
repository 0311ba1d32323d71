"""``ctx.shutdown()``: Pi 1.6 quits when its mode would, not at the call.

RPC mode quits once no command is active and the session is idle (rpc-mode.js:609-613);
interactive mode at the next ``agent_settled`` (interactive-mode.js:3117-3121); print and
json mode ignore it (pi-host-1.6.md, RPC facts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, event_records, run


def quitter(pi: ExtensionAPI) -> None:
    async def leave(args: str, ctx: Any) -> None:
        ctx.shutdown()

    pi.register_command("leave", leave)
    pi.on("session_shutdown", lambda event, ctx: None)


def scenario(mode: str) -> dict[str, Any]:
    return base(
        mode=mode,
        operations=[{"command": "/leave"}, {"prompt": "after the request"}, {"command": "/leave"}],
        model={"agent": [{"text": "answered"}]},
    )


def op_outcomes(result: Any) -> list[tuple[str, bool]]:
    return [(o.name, o.ok) for o in result.operations]


def test_rpc_shutdown_quits_once_the_command_has_settled(tmp_path: Path) -> None:
    result = run(tmp_path, scenario("rpc"), quitter)
    assert [e["reason"] for e in event_records(result, "session_shutdown")] == ["quit"]
    assert op_outcomes(result) == [("command", True), ("prompt", False), ("command", False)]
    assert result.operations[1].error == "Pi is not running"


def test_interactive_shutdown_waits_for_the_next_agent_settled(tmp_path: Path) -> None:
    result = run(tmp_path, scenario("tui"), quitter)
    assert op_outcomes(result) == [("command", True), ("prompt", True), ("command", False)]
    shutdown = event_records(result, "session_shutdown")
    assert [e["reason"] for e in shutdown] == ["quit"]
    settled = [r["seq"] for r in result.host.trace.records if r["name"] == "agent_settled"]
    assert settled and settled[0] < shutdown[0]["seq"]


def test_print_and_json_mode_ignore_a_shutdown_request(tmp_path: Path) -> None:
    for mode in ("print", "json"):
        result = run(tmp_path, scenario(mode), quitter, sub=mode)
        assert op_outcomes(result) == [("command", True), ("prompt", True), ("command", True)], mode
        # Only the quit at the end of the scenario (stdin EOF).
        quit_records = [r for r in result.host.trace.records if r["kind"] == "host" and r["name"] == "quit"]
        assert len(quit_records) == 1, mode
        last_op_end = max(r["seq"] for r in result.host.trace.records if r["kind"] == "op")
        assert quit_records[0]["seq"] > last_op_end, mode
