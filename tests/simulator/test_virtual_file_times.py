"""A file's modification time is the simulator's virtual clock, not the machine's.

Extension code reads modification times (blitz's ``/sh recover`` lists each recovery file with
its date, reference "Status, cancellation and recovery"); with the machine's clock there, the
same seed gave different trace bytes from one minute to the next. The simulated host gives
every file whose content changed (an extension's write or rename, a scenario's ``edit_file``)
the virtual time of the change, at operation boundaries (``SimHost.stamp_changed_files``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.simulator.determinism import EPOCH_MS

from .helpers import base, run

_DAY_MS = 86_400_000


def _writer(seen: dict[str, int]):  # type: ignore[no-untyped-def]
    """``/write`` writes ``direct.txt`` in place and ``atomic.txt`` through a renamed temporary
    file; ``/stat`` notes the modification time (ms) of those and of ``given.txt``."""

    def ext(pi: ExtensionAPI) -> None:
        async def write(_args: str, ctx: Any) -> None:
            with open(os.path.join(ctx.cwd, "direct.txt"), "w", encoding="utf-8") as handle:
                handle.write("direct\n")
            temporary = os.path.join(ctx.cwd, ".atomic.txt.tmp")
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write("atomic\n")
            os.replace(temporary, os.path.join(ctx.cwd, "atomic.txt"))

        async def stat(_args: str, ctx: Any) -> None:
            for name in ("direct.txt", "atomic.txt", "given.txt"):
                seen[name] = os.stat(os.path.join(ctx.cwd, name)).st_mtime_ns // 1_000_000

        pi.register_command("write", write)
        pi.register_command("stat", stat)

    return ext


def _scenario() -> dict[str, Any]:
    return base(
        operations=[
            {"edit_file": {"path": "given.txt", "text": "given\n"}},
            {"command": "/write"},
            {"prompt": "hi"},
            {"command": "/stat"},
        ],
        model={"agent": [{"text": "reply", "latency_ms": 90_000}]},
    )


def test_a_changed_file_has_the_virtual_time_of_its_change(tmp_path: Path) -> None:
    seen: dict[str, int] = {}
    run(tmp_path, _scenario(), _writer(seen))
    assert set(seen) == {"direct.txt", "atomic.txt", "given.txt"}
    for name, ms in seen.items():
        assert EPOCH_MS <= ms < EPOCH_MS + _DAY_MS, f"{name}: {ms} is not a virtual time"
    assert seen["given.txt"] <= seen["direct.txt"] <= seen["atomic.txt"]


def test_modification_times_are_the_same_in_any_run_directory(tmp_path: Path) -> None:
    first: dict[str, int] = {}
    second: dict[str, int] = {}
    run(tmp_path, _scenario(), _writer(first), sub="one")
    run(tmp_path, _scenario(), _writer(second), sub="two")
    assert first == second


def test_the_recovery_list_shows_the_virtual_date(tmp_path: Path) -> None:
    """rule H81b's scenario on the reference: the date beside the file is the virtual clock's
    (2026-01-01), whatever day the suite runs."""
    suite = run_suite(
        target="sim",
        extension="blitz",
        keyword="each_listed_recovery_file_shows_its_date",
        workdir=tmp_path / "runs",
    )
    assert [r.status for r in suite.results] == ["passed"]
    trace = next((tmp_path / "runs").rglob("trace.jsonl")).read_text(encoding="utf-8")
    assert "leftover-s1.md (2026-01-01 00:00 UTC)" in trace


def test_a_file_the_scenario_lays_out_has_the_virtual_start_time(tmp_path: Path) -> None:
    """The scenario's ``files`` and the settings the harness writes are laid out before Pi starts
    (``SimHost.stamp_laid_out_files``); before, they kept the machine's time, and a recovery file
    placed by the scenario was listed with the real minute of the run."""
    seen: dict[str, int] = {}

    def ext(pi: ExtensionAPI) -> None:
        async def stat(_args: str, ctx: Any) -> None:
            seen["given.txt"] = os.stat(os.path.join(ctx.cwd, "given.txt")).st_mtime_ns // 1_000_000

        pi.register_command("stat", stat)

    scenario = base(
        files={"given.txt": {"text": "given\n"}, "$AGENT/notes/placed.md": {"text": "placed\n"}},
        operations=[{"command": "/stat"}],
    )
    result = run(tmp_path, scenario, ext)
    assert seen == {"given.txt": EPOCH_MS}
    machine = Path(result.host.disk.workdir)
    laid_out = [p for p in machine.rglob("*") if p.is_file() and "sessions" not in p.parts]
    assert {p.name for p in laid_out} >= {"given.txt", "placed.md", "settings.json"}
    for path in laid_out:
        assert path.stat().st_mtime_ns // 1_000_000 == EPOCH_MS, path
