"""The reference package as a whole: host boundary, entry point, timing hook, a full Brief."""

from __future__ import annotations

import ast
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

import pi_continuity_harness.reference.psc as psc
from pi_continuity_harness.reference.psc.frontmatter import parse_brief
from pi_continuity_harness.reference.psc.lifecycle import set_timing_observer
from pi_continuity_harness.scenario.implementations import ENTRY_POINT_GROUP, resolve_implementation

from .sim import scenario, simulate_run, threshold_turns

PACKAGE_DIR = Path(psc.__file__).parent
ALLOWED_HOST_MODULES = {
    "pi_continuity_harness.api.extension_api",
    "pi_continuity_harness.api.events",
    "pi_continuity_harness.api.abort",
}
OWN_PACKAGE = "pi_continuity_harness.reference.psc"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(relative level, absolute-or-relative module name) of every import in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def _boundary(sources: list[Path]) -> tuple[list[str], set[str]]:
    """(imports that leave the package other than into the allowed host modules, host modules used)."""
    offending = []
    host_modules_used = set()
    for path in sources:
        for level, name in _imports(path):
            if level > 1:
                offending.append(f"{path.name}: relative import above the package: {'.' * level}{name}")
            elif level == 0 and name.split(".")[0] == "pi_continuity_harness":
                if name.startswith(OWN_PACKAGE + ".") or name == OWN_PACKAGE:
                    continue
                if name in ALLOWED_HOST_MODULES:
                    host_modules_used.add(name)
                    continue
                offending.append(f"{path.name}: {name}")
    return offending, host_modules_used


def test_the_reference_package_imports_only_the_allowed_host_modules() -> None:
    sources = sorted(PACKAGE_DIR.rglob("*.py"))
    assert {p.name for p in sources} >= {"extension.py", "commands.py", "lifecycle.py", "state.py"}
    offending, host_modules_used = _boundary(sources)
    assert offending == []
    assert host_modules_used == ALLOWED_HOST_MODULES


def test_the_import_check_would_catch_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from pi_continuity_harness.simulator.host import SimHost\n"
        "from ...features import world\n"
        "import pi_continuity_harness.api.extension_api\n"
        "from pi_continuity_harness.reference.psc.paths import ArtifactLayout\n"
        "from .brief import validate_brief_body\n",
        encoding="utf-8",
    )
    offending, host_modules_used = _boundary([bad])
    assert offending == [
        "bad.py: pi_continuity_harness.simulator.host",
        "bad.py: relative import above the package: ...features",
    ]
    assert host_modules_used == {"pi_continuity_harness.api.extension_api"}


def test_the_entry_point_loads_the_factory() -> None:
    (point,) = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == "reference"]
    assert point.value == "pi_continuity_harness.reference.psc:extension"
    assert point.load() is psc.extension
    name, factory = resolve_implementation("reference")
    assert (name, factory) == ("reference", psc.extension)


def test_the_factory_registers_one_command_and_the_lifecycle_handlers(tmp_path: Path) -> None:
    registered: dict[str, Any] = {"events": [], "commands": []}

    class Recorder:
        def on(self, event: str, handler: Any) -> Any:
            registered["events"].append(event)
            return lambda: None

        def register_command(self, name: str, handler: Any, **options: Any) -> None:
            registered["commands"].append((name, options.get("get_argument_completions")))

    psc.extension(Recorder())  # type: ignore[arg-type]
    assert sorted(registered["events"]) == sorted(
        [
            "session_start",
            "model_select",
            "session_before_compact",
            "session_compact",
            "session_compact_failed",
            "session_shutdown",
        ]
    )
    ((name, completions),) = registered["commands"]
    assert name == "continuity"
    assert [c["value"] for c in completions("")] == ["status", "checkpoint", "settings"]
    assert [c["value"] for c in completions("ch")] == ["checkpoint"]


def test_no_timers_threads_or_background_tasks_are_left_behind(tmp_path: Path) -> None:
    before = threading.active_count()
    replies, ops = threshold_turns()
    simulate_run(tmp_path, scenario(agent=replies, operations=ops))
    assert threading.active_count() == before


def test_the_timing_hook_reports_each_phase_and_the_fsync_count(tmp_path: Path) -> None:
    seen: list[tuple[str, float, dict[str, Any]]] = []
    previous = set_timing_observer(lambda phase, seconds, data: seen.append((phase, seconds, dict(data))))
    try:
        replies, ops = threshold_turns()
        simulate_run(tmp_path, scenario(agent=replies, operations=ops))
    finally:
        set_timing_observer(previous)
    assert [phase for phase, _, _ in seen] == ["synthesis", "validation", "write", "reread", "hash"]
    assert all(seconds >= 0 for _, seconds, _ in seen)
    write = next(data for phase, _, data in seen if phase == "write")
    # file fsync + directory fsync, plus one parent fsync per directory created on the way
    assert write["fsyncs"] == 2 + 3


def test_a_complete_brief_produced_end_to_end(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    """A threshold handoff's summary: exactly the Brief re-read from disk (spec §3, §8, §9)."""
    replies, ops = threshold_turns()
    run = simulate_run(tmp_path, scenario(agent=replies, operations=ops, seed=7))
    (entry,) = run.compactions()
    summary = entry["summary"]
    assert parse_brief(summary).frontmatter.handoff_reason == "threshold"
    assert summary.replace(str(tmp_path / "run"), "$WORK") == snapshot
