"""Confinement: nothing a scenario says may touch a file outside its run.

Hostile paths are refused when the scenario loads, naming the file and the field; paths that
only turn hostile at run time (a symbolic link an extension planted) are refused when the
operation is applied; a Python extension's own writes outside the run are refused by the
simulated host. A hypothesis test throws hostile paths at every path a scenario can name and
checks that nothing outside the run changes.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario, parse_scenario
from pi_continuity_harness.scenario.confine import (
    ConfinementError,
    check_scenario_path,
    resolve_below,
    resolve_inside,
)
from pi_continuity_harness.scenario.fs_monitor import FilesystemMonitor, activate_monitor
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.simulator.simulation import Simulation, simulate

from .helpers import tree_snapshot, victim_beside

HOSTILE = [
    "/etc/passwd",
    "../victim",
    "$AGENT/../../victim",
    "$SESSIONS/../../victim/keep.txt",
    "$PROJECT/../../victim",
    "a/../../victim",
    "~/victim",
    "$HOME/victim",
    "a\\..\\..\\victim",
    "a\x00b",
    "",
]


@pytest.mark.parametrize("path", HOSTILE)
def test_edit_file_refuses_a_path_leaving_the_run_at_load(tmp_path: Path, path: str) -> None:
    scenario_file = tmp_path / "hostile.yaml"
    scenario_file.write_text(
        yaml.safe_dump({"name": "hostile", "operations": [{"edit_file": {"path": path, "kind": "absent"}}]}),
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError) as raised:
        load_scenario(scenario_file)
    message = str(raised.value)
    assert message.startswith(f"{scenario_file}: operations[0].edit_file.path: "), message


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"files": {"/abs/x": {"text": "x"}}}, "files"),
        ({"files": {"$AGENT/../x": {"text": "x"}}}, "files"),
        ({"faults": {"fs": [{"path": "/etc/*"}]}}, "faults.fs[0].path"),
        ({"faults": {"fs": [{"path": "$PROJECT/../../*"}]}}, "faults.fs[0].path"),
        (
            {"faults": {"tamper": [{"after": {"kind": "entry", "name": "compaction"}, "path": "/tmp/*"}]}},
            "faults.tamper[0].path",
        ),
        (
            {
                "faults": {
                    "inject": [
                        {
                            "after": {"kind": "entry", "name": "compaction"},
                            "operations": [{"edit_file": {"path": "../../x", "kind": "absent"}}],
                        }
                    ]
                }
            },
            "faults.inject[0].operations[0].edit_file.path",
        ),
    ],
)
def test_every_path_field_refuses_leaving_the_run(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({"name": "hostile", **data}, "hostile.yaml")
    assert str(raised.value).startswith(f"hostile.yaml: {field}: "), str(raised.value)


@pytest.mark.parametrize(
    "path", ["x.txt", ".pi/settings.json", "$AGENT/settings.json", "$SESSIONS/a", "$PROJECT/a/b"]
)
def test_paths_inside_the_run_are_accepted(path: str) -> None:
    check_scenario_path(path)


def test_a_symlink_planted_in_the_project_cannot_lead_an_edit_out(tmp_path: Path) -> None:
    victim = victim_beside(tmp_path)
    before = tree_snapshot(victim)
    scenario = parse_scenario({"name": "links", "extensions": []})
    simulation = Simulation(scenario, workdir=tmp_path / "run", implementation=_null_extension)
    simulation.start()
    project = Path(simulation.host.paths.project_dir)
    (project / "out").symlink_to(victim, target_is_directory=True)
    (project / "file-link").symlink_to(victim / "keep.txt")
    results = [
        simulation.perform(parse_scenario({"name": "x", "operations": [op]}).operations[0])
        for op in (
            {"edit_file": {"path": "out/keep.txt", "kind": "absent"}},
            {"edit_file": {"path": "out/nested", "kind": "absent"}},
            {"edit_file": {"path": "out/new.txt", "text": "planted"}},
            {"edit_file": {"path": "file-link", "text": "overwritten"}},
            {"edit_file": {"path": "out", "kind": "directory"}},
        )
    ]
    # Removing the link itself stays inside the run: allowed, and the target is untouched.
    removed = simulation.perform(
        parse_scenario(
            {"name": "x", "operations": [{"edit_file": {"path": "file-link", "kind": "absent"}}]}
        ).operations[0]
    )
    simulation.finish()
    assert [r.ok for r in results] == [False] * 5
    assert all("outside the run" in (r.error or "") for r in results)
    assert removed.ok and not (project / "file-link").exists()
    assert tree_snapshot(victim) == before


def test_resolve_inside_refuses_a_link_out(tmp_path: Path) -> None:
    victim = victim_beside(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "l").symlink_to(victim)
    with pytest.raises(ConfinementError):
        resolve_inside(str(run), str(run / "l" / "keep.txt"))
    assert resolve_inside(str(run), str(run / "l"), follow_last=False) == str(run / "l")


def _null_extension(pi: ExtensionAPI) -> None:
    """Registers nothing."""


def _escaping_extension(victim: Path) -> Any:
    """A Python extension that tries to write outside the run on every session start."""

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            for attempt in (victim / "written-by-extension.txt", victim / "keep.txt"):
                try:
                    attempt.write_text("escaped\n", encoding="utf-8")
                except PermissionError as error:
                    ctx.ui.notify(f"refused: {error.strerror}", "warning")
            try:
                os.remove(victim / "nested" / "deep.json")
            except PermissionError:
                ctx.ui.notify("refused: remove", "warning")

        pi.on("session_start", on_start)

    return extension


def test_an_extension_cannot_write_outside_the_run(tmp_path: Path) -> None:
    victim = victim_beside(tmp_path)
    before = tree_snapshot(victim)
    result = simulate(
        parse_scenario({"name": "escape", "operations": [{"prompt": "hi"}]}),
        workdir=tmp_path / "run",
        implementation=_escaping_extension(victim),
    )
    assert tree_snapshot(victim) == before
    refusals = [line for line in result.trace_text().splitlines() if '"name":"refused"' in line]
    assert len(refusals) == 3, refusals


@pytest.mark.parametrize("cache", ["prefix", "beside the source"])
def test_the_interpreters_bytecode_cache_is_refused_without_a_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    """A module first imported during a run is compiled, and importlib writes its bytecode
    outside the run (below ``sys.pycache_prefix``, or in a ``__pycache__`` beside the source):
    refused like any write outside, and not recorded, so the run's trace is the same whether or
    not the cache held the module (two runs of one scenario, the second with the module loaded)."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "pch_fresh_module.py").write_text("VALUE = 1\n", encoding="utf-8")
    prefix = tmp_path / "pycache"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix) if cache == "prefix" else None)
    monkeypatch.syspath_prepend(str(source))
    monkeypatch.delitem(sys.modules, "pch_fresh_module", raising=False)
    loaded: list[int] = []

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            loaded.append(importlib.import_module("pch_fresh_module").VALUE)

        pi.on("session_start", on_start)

    scenario = parse_scenario({"name": "bytecode"})
    first = simulate(scenario, workdir=tmp_path / "first", implementation=extension)
    second = simulate(scenario, workdir=tmp_path / "second", implementation=extension)
    assert loaded == [1, 1]
    # (the harness's own modules first imported by ``simulate`` are cached there, outside any run)
    assert list(tmp_path.rglob("pch_fresh_module*.pyc")) == []
    assert '"name":"refused"' not in first.trace_text()
    assert first.trace_text() == second.trace_text()


def test_temporary_files_of_an_extension_stay_in_the_run(tmp_path: Path) -> None:
    made: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            handle, name = tempfile.mkstemp()
            os.close(handle)
            made.append(name)

        pi.on("session_start", on_start)

    simulate(parse_scenario({"name": "tmp"}), workdir=tmp_path / "run", implementation=extension)
    assert made and Path(made[0]).resolve().is_relative_to((tmp_path / "run").resolve())


_SEGMENTS = st.sampled_from(["..", ".", "victim", "keep.txt", "nested", "a", "~", "$HOME", "", "/", "\\.."])
_PREFIXES = st.sampled_from(["", "/", "$AGENT/", "$SESSIONS/", "$PROJECT/", "~/", "$TMP/", "../"])


@st.composite
def _hostile_paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(_SEGMENTS, min_size=1, max_size=6))
    return draw(_PREFIXES) + "/".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=_hostile_paths(),
    kind=st.sampled_from(["absent", "directory", "file", "symlink"]),
    where=st.integers(0, 2),
    target=_hostile_paths(),
)
def test_hostile_paths_never_change_anything_outside_the_run(
    tmp_path_factory: pytest.TempPathFactory, path: str, kind: str, where: int, target: str
) -> None:
    """``kind: symlink`` draws a hostile link target too: a link out of the run must not be
    planted, since a later edit through it would leave the run (the apply-time check refuses
    that as well, ``test_edit_file_symlink``)."""
    tmp = tmp_path_factory.mktemp("confine")
    victim = victim_beside(tmp)
    before = tree_snapshot(victim)
    content: dict[str, Any] = {"file": {"text": "x"}, "symlink": {"target": target}}.get(kind, {})
    op: dict[str, Any] = {"edit_file": {"path": path, "kind": kind, **content}}
    data: dict[str, Any] = {"name": "hostile", "extensions": []}
    if where == 0:
        data["operations"] = [op]
    elif where == 1:
        data["files"] = {path: {"text": "x"}}
    else:
        data["faults"] = {"tamper": [{"after": {"kind": "host", "name": "scenario"}, "path": path}]}
        data["operations"] = [{"prompt": "hi"}]
    try:
        scenario = parse_scenario(data, "hostile.yaml")
    except ScenarioError as error:
        assert str(error).startswith("hostile.yaml: "), str(error)
    else:
        simulate(scenario, workdir=tmp / "run", implementation=_null_extension)
    assert tree_snapshot(victim) == before


def _attempts(victim: Path) -> dict[str, Any]:
    """What a hostile Python extension tries, each with the project directory as ``cwd``: ways
    out that a lexically normalised or working-directory-relative check let through."""

    def through_link_then_dotdot(cwd: str) -> None:
        # ``link/..`` is the link target's parent (the kernel follows the link first), not cwd.
        os.symlink(victim / "nested", os.path.join(cwd, "link"))
        with open(os.path.join(cwd, "link", "..", "dotdot.txt"), "w", encoding="utf-8") as handle:
            handle.write("escaped\n")

    def rename_from_outside(cwd: str) -> None:
        os.rename(victim / "keep.txt", os.path.join(cwd, "stolen.txt"))

    def rmtree_by_dir_fd(cwd: str) -> None:
        shutil.rmtree(victim / "nested")

    def unlink_relative_to_a_directory_outside(cwd: str) -> None:
        fd = os.open(victim, os.O_RDONLY)
        try:
            os.unlink("keep.txt", dir_fd=fd)
        finally:
            os.close(fd)

    def os_open_relative_to_a_directory_outside(cwd: str) -> None:
        fd = os.open(victim, os.O_RDONLY)
        try:
            os.close(os.open("keep.txt", os.O_WRONLY | os.O_TRUNC, dir_fd=fd))
        finally:
            os.close(fd)

    def symlink_named_outside(cwd: str) -> None:
        os.symlink(os.path.join(cwd, "x"), victim / "planted")

    def hard_link_to_a_file_outside(cwd: str) -> None:
        os.link(victim / "keep.txt", os.path.join(cwd, "hard"))
        with open(os.path.join(cwd, "hard"), "a", encoding="utf-8") as handle:
            handle.write("escaped\n")

    def chmod_outside(cwd: str) -> None:
        os.chmod(victim / "keep.txt", 0o600)

    def chown_outside(cwd: str) -> None:
        os.chown(victim / "keep.txt", os.getuid(), os.getgid())

    def utime_outside(cwd: str) -> None:
        os.utime(victim / "keep.txt", (0, 0))

    def truncate_outside(cwd: str) -> None:
        os.truncate(victim / "keep.txt", 0)

    return {
        f.__name__: f
        for f in (
            through_link_then_dotdot,
            rename_from_outside,
            rmtree_by_dir_fd,
            unlink_relative_to_a_directory_outside,
            os_open_relative_to_a_directory_outside,
            symlink_named_outside,
            hard_link_to_a_file_outside,
            chmod_outside,
            chown_outside,
            utime_outside,
            truncate_outside,
        )
    }


def _snapshot_with_metadata(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = dict(tree_snapshot(root))
    for path in sorted(root.rglob("*")):
        if not path.is_symlink():
            info = path.stat()
            out[str(path.relative_to(root)) + ":meta"] = (oct(info.st_mode), info.st_mtime_ns)
    return out


@pytest.mark.parametrize("attempt", sorted(_attempts(Path("/nonexistent"))))
def test_an_extension_cannot_reach_outside_the_run_by_any_file_call(tmp_path: Path, attempt: str) -> None:
    """Every way out is refused (``PermissionError``, an ``fs:refused`` record) and changes
    nothing outside: a link followed by ``..``, a rename's source, ``shutil.rmtree`` and
    ``unlink`` relative to a directory descriptor, a link's new name, a hard link's source,
    ``chmod``, ``utime`` and ``truncate``."""
    victim = victim_beside(tmp_path)
    before = _snapshot_with_metadata(victim)
    refused: list[str] = []
    action = _attempts(victim)[attempt]

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            try:
                action(ctx.cwd)
            except PermissionError as error:
                refused.append(str(error.strerror))

        pi.on("session_start", on_start)

    result = simulate(parse_scenario({"name": attempt}), workdir=tmp_path / "run", implementation=extension)
    assert _snapshot_with_metadata(victim) == before
    assert refused, f"{attempt}: not refused"
    assert '"name":"refused"' in result.trace_text()


def test_the_same_calls_inside_the_run_are_allowed_and_recorded(tmp_path: Path) -> None:
    """The confinement checks do not refuse what stays inside: a link into the project followed
    by ``..``, ``shutil.rmtree`` of a directory of the project, and the metadata calls."""
    seen: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            cwd = ctx.cwd
            os.makedirs(os.path.join(cwd, "d", "e"))
            Path(cwd, "d", "e", "f.txt").write_text("x", encoding="utf-8")
            os.symlink(os.path.join(cwd, "d", "e"), os.path.join(cwd, "link"))
            with open(os.path.join(cwd, "link", "..", "via.txt"), "w", encoding="utf-8") as handle:
                handle.write("inside\n")
            os.chmod(os.path.join(cwd, "d", "via.txt"), 0o600)
            os.utime(os.path.join(cwd, "d", "via.txt"), (0, 0))
            os.link(os.path.join(cwd, "d", "via.txt"), os.path.join(cwd, "hard"))
            shutil.rmtree(os.path.join(cwd, "d", "e"))
            seen.append(Path(cwd, "d", "via.txt").read_text(encoding="utf-8"))

        pi.on("session_start", on_start)

    result = simulate(parse_scenario({"name": "inside"}), workdir=tmp_path / "run", implementation=extension)
    assert seen == ["inside\n"]
    assert '"name":"refused"' not in result.trace_text()
    removed = [r["path"] for r in result.host.trace.records if r["kind"] == "fs" and r["name"] == "remove"]
    assert removed[-2:] == ["$WORK/project/d/e/f.txt", "$WORK/project/d/e"], removed


_NAMES = st.sampled_from(["a", "b", "link", "out", "file.txt", "missing", "..", "."])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_NAMES, min_size=0, max_size=5))
def test_resolving_below_the_run_agrees_with_realpath(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str]
) -> None:
    """The monitor's shortcut (``resolve_below``) answers either nothing (the caller resolves the
    whole path) or exactly ``os.path.realpath``, through links inside, links out, files and
    missing components."""
    tmp = tmp_path_factory.mktemp("below")
    victim = victim_beside(tmp)
    root = tmp / "run"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "file.txt").write_text("x", encoding="utf-8")
    (root / "a" / "link").symlink_to(root / "a" / "b")
    (root / "out").symlink_to(victim)
    path = os.path.join(str(root), *parts) if parts else str(root)
    real_root = os.path.realpath(root)
    below = resolve_below(path, str(root), real_root)
    assert below is None or below == os.path.realpath(path)
    if not {"..", ".", "link", "out"} & set(parts):
        assert below == os.path.realpath(path)


def test_the_monitor_looks_up_existence_below_the_runs_real_directory(tmp_path: Path) -> None:
    """Once an activation has resolved the run's directory (``inside``), the monitor asks
    whether a file exists (an operation's before-state) through the real directory
    (``_on_disk``) instead of the spelling the host sees (on the simulator, through
    ``/proc/self/fd``): the same answer for files, missing files, directories, a link inside the
    run, a path through it and a dangling link; other paths keep their spelling."""
    real = Path(os.path.realpath(tmp_path)) / "run"
    project = real / "project"
    (project / "d").mkdir(parents=True)
    (project / "f.txt").write_text("x", encoding="utf-8")
    (project / "link").symlink_to(project / "d")
    (project / "dangling").symlink_to(project / "nowhere")
    (project / "d" / "inner.txt").write_text("y", encoding="utf-8")
    spelt = tmp_path / "spelt"  # the run's directory reached through a link, as through /proc
    spelt.symlink_to(real)
    monitor = FilesystemMonitor(workdir=str(spelt), placeholders={}, trace=Trace(lambda: 0, ""))
    with activate_monitor(monitor):
        assert monitor._on_disk(str(spelt / "project")) == str(spelt / "project")  # not resolved yet
        assert monitor.inside(str(spelt / "project" / "f.txt"))
        names = ["f.txt", "missing", "d", "link", "link/inner.txt", "link/none", "dangling", "f.txt/x"]
        for name in names:
            path = str(spelt / "project" / name)
            assert monitor._on_disk(path) == str(project / name)
            assert os.path.lexists(str(project / name)) == os.path.lexists(path), name
        assert monitor._on_disk(str(spelt)) == str(spelt)
        assert monitor._on_disk(str(tmp_path / "spelt-other")) == str(tmp_path / "spelt-other")
        assert monitor._on_disk(None) is None


@pytest.mark.parametrize("attempt", sorted(_attempts(Path("/nonexistent"))))
def test_the_bridges_monitor_refuses_the_same_calls(tmp_path: Path, attempt: str) -> None:
    """The real-Pi target runs a Python implementation under the same monitor in its bridge
    (``targets/realpi/bridge_runtime.py``), on the run's real directory (no virtual root):
    every way out is refused there too."""
    victim = victim_beside(tmp_path)
    before = _snapshot_with_metadata(victim)
    run = tmp_path / "run"
    (run / "project").mkdir(parents=True)
    trace = Trace(lambda: 0, "")
    monitor = FilesystemMonitor(
        workdir=str(run), placeholders={"$PROJECT": str(run / "project")}, trace=trace
    )
    with activate_monitor(monitor), pytest.raises(PermissionError):
        _attempts(victim)[attempt](str(run / "project"))
    assert _snapshot_with_metadata(victim) == before
    assert [r["name"] for r in trace.records if r["kind"] == "fs"][-1] == "refused"


def test_a_path_the_file_system_cannot_hold_is_refused_at_load() -> None:
    """Before: a 300-byte file name ended ``simulate`` in an ``ENAMETOOLONG`` traceback (exit 1)
    when the run laid the file out; now the scenario is refused naming the field."""
    long_name = "a" * 300 + ".txt"
    with pytest.raises(ScenarioError) as refused:
        parse_scenario({"name": "n", "files": {long_name: {"text": "x"}}}, "n.yaml")
    assert "the component 'aaaa" in str(refused.value) and "is 304 bytes; a file name has at most 255" in str(
        refused.value
    )
    assert str(refused.value).startswith("n.yaml: files: ")
    deep = "/".join(["d" * 200] * 30) + ".txt"
    with pytest.raises(ScenarioError, match=r"6033 bytes; a path in the run has at most 3072"):
        parse_scenario({"name": "p", "operations": [{"edit_file": {"path": deep, "text": "x"}}]}, "p.yaml")
    # Multi-byte characters count as the file system counts them: 128 x 2 bytes is too long.
    with pytest.raises(ScenarioError, match="is 256 bytes"):
        parse_scenario({"name": "u", "files": {"é" * 128: {"text": "x"}}}, "u.yaml")


def test_a_file_name_of_255_bytes_is_laid_out(tmp_path: Path) -> None:
    name = "b" * 251 + ".txt"
    result = simulate(
        parse_scenario({"name": "ok", "files": {name: {"text": "x"}}}), workdir=tmp_path / "run"
    )
    assert Path(result.host.disk.project_dir, name).read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (
            {"a.txt": {"text": "x"}, "a.txt/b.txt": {"text": "y"}},
            "files: 'a.txt/b.txt': 'a.txt' is a file of this scenario, so nothing can be below it",
        ),
        (
            {"$PROJECT/notes": {"json": {}}, "notes/deep/c.md": {"text": "y"}},
            "files: 'notes/deep/c.md': '$PROJECT/notes' is a file of this scenario, so nothing can be below it",
        ),
        (
            {"$AGENT/settings.json": {"directory": True}},
            "files: '$AGENT/settings.json': the harness writes it as a file; give it text, json or base64, not "
            "directory: true",
        ),
        (
            {".pi/settings.json/x": {"text": "y"}},
            "files: '.pi/settings.json/x': the harness writes '$PROJECT/.pi/settings.json' as a file, so "
            "nothing can be below it",
        ),
    ],
    ids=["file-then-below", "placeholder-spelling", "harness-file-as-directory", "below-a-harness-file"],
)
def test_files_that_cannot_all_be_laid_out_are_refused_at_load(files: dict[str, Any], reason: str) -> None:
    """Before: the run ended in a ``FileExistsError`` traceback while it laid the machine out."""
    with pytest.raises(ScenarioError) as refused:
        parse_scenario({"name": "f", "files": files}, "f.yaml")
    assert str(refused.value) == f"f.yaml: {reason}"


def test_files_below_a_directory_and_a_harness_file_replaced_by_text_are_laid_out(tmp_path: Path) -> None:
    scenario = parse_scenario(
        {
            "name": "ok",
            "files": {
                "d": {"directory": True},
                "d/e.txt": {"text": "x"},
                "$AGENT/settings.json": {"text": "{"},
            },
        }
    )
    result = simulate(scenario, workdir=tmp_path / "run")
    assert Path(result.host.disk.project_dir, "d", "e.txt").read_text(encoding="utf-8") == "x"
    assert Path(result.host.disk.agent_dir, "settings.json").read_text(encoding="utf-8") == "{"


def test_a_directory_swapped_for_a_link_is_caught_when_two_simulations_alternate(tmp_path: Path) -> None:
    """The monitor is handed its run's real directory at each step (``Simulation._run``), not
    resolving the virtual root again: with two simulations stepping in turn (the virtual root
    naming the other run between their steps), each extension's write lands in its own run, and
    a project directory swapped for a link out of the run between two steps is still caught."""
    victim = victim_beside(tmp_path)
    before = tree_snapshot(victim)
    refused: list[str] = []

    def extension(pi: ExtensionAPI) -> None:
        async def on_start(event: Any, ctx: Any) -> None:
            os.mkdir(os.path.join(ctx.cwd, "d"))
            Path(ctx.cwd, "d", "a.txt").write_text("mine\n", encoding="utf-8")

        async def on_input(event: Any, ctx: Any) -> None:
            os.rename(os.path.join(ctx.cwd, "d"), os.path.join(ctx.cwd, "d-old"))
            os.symlink(victim, os.path.join(ctx.cwd, "d"))
            try:
                Path(ctx.cwd, "d", "b.txt").write_text("escaped\n", encoding="utf-8")
            except PermissionError as error:
                refused.append(str(error.strerror))

        pi.on("session_start", on_start)
        pi.on("input", on_input)

    scenario = parse_scenario({"name": "swap", "operations": [{"prompt": "hi"}]})
    first = Simulation(scenario, workdir=tmp_path / "one", implementation=extension)
    second = Simulation(scenario, workdir=tmp_path / "two", implementation=extension)
    first.start()
    second.start()
    first.perform(scenario.operations[0])
    second.perform(scenario.operations[0])
    for simulation in (first, second):
        result = simulation.finish()
        assert (Path(simulation.host.disk.project_dir) / "d-old" / "a.txt").read_text(
            encoding="utf-8"
        ) == "mine\n"
        assert '"name":"refused"' in result.trace_text()
    assert len(refused) == 2, refused
    assert tree_snapshot(victim) == before
