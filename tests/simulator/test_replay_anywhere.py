"""Replay anywhere (issue 12 item 2): a scenario and a seed give the same bytes in any directory.

The simulated host sees a fixed virtual root (``simulator/virtual_root.py``) as long as real
Pi's machine root (``scenario/layout.py``), so the trace, the session files and every artifact
are byte-identical whatever directory the run lives in, and every path Pi counts has the
length real Pi's has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario import load_scenario, parse_scenario
from pi_continuity_harness.scenario.layout import (
    PI_PACKAGE_PATH_LENGTH,
    WORK_PATH_LENGTH,
    machine_root,
    padding_name,
)
from pi_continuity_harness.scenario.trace import first_difference
from pi_continuity_harness.scenario.workspace import WorkdirError
from pi_continuity_harness.simulator import simulate
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.simulator.virtual_root import MACHINE_DIR_NAME, VIRTUAL_ROOT, disk_path
from pi_continuity_harness.targets.realpi import PiTarget

from .helpers import EXAMPLE_NAMES, EXAMPLES, base, run, run_example, session_entries

#: Two run directories whose paths differ in length (and in depth).
SHORT = "a"
LONG = "a-much-longer-directory-name/nested/deeper/than-the-first-one"


def _compare(first: dict[str, bytes], second: dict[str, bytes]) -> None:
    assert sorted(first) == sorted(second)
    for name, data in first.items():
        assert data == second[name], f"{name} differs between the two directories"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
@pytest.mark.parametrize("implementation", ["probe", "reference"])
def test_every_example_gives_the_same_bytes_in_two_directories(
    tmp_path: Path, name: str, implementation: str
) -> None:
    if implementation == "probe":
        first, second = (run_example(name, tmp_path / d) for d in (SHORT, LONG))
    else:
        scenario = load_scenario(EXAMPLES / f"{name}.yaml")
        first, second = (simulate(scenario, workdir=tmp_path / d) for d in (SHORT, LONG))
    assert len(str(first.workdir)) != len(str(second.workdir))
    files = first.output_files()
    assert "trace.jsonl" in files and any(n.startswith("sessions/") for n in files)
    assert any(n.startswith("requests/") for n in files)  # every model call in full, too
    _compare(files, second.output_files())
    for result in (first, second):
        text = b"".join(files.values()).decode("utf-8", "replace")
        assert str(result.workdir) not in text  # no real path leaked into any output


def test_the_host_sees_a_fixed_root_as_long_as_real_pis(tmp_path: Path) -> None:
    result = run(tmp_path, base(model={"agent": [{"text": "ok"}]}, operations=[{"prompt": "hi"}]))
    assert len(VIRTUAL_ROOT) == WORK_PATH_LENGTH == 128
    assert result.host.paths.workdir == VIRTUAL_ROOT
    assert len(result.host.package_dir) == PI_PACKAGE_PATH_LENGTH == 139
    header, *lines = session_entries(result)
    assert header["cwd"] == f"{VIRTUAL_ROOT}/project"
    [system] = [e["message"] for e in lines if e.get("message", {}).get("role") == "system"]
    assert system["sections"]["cwd"] == f"<cwd>\n{VIRTUAL_ROOT}/project\n</cwd>"
    assert system["sections"]["docs"].count(f"{VIRTUAL_ROOT}/pi-package/") == 3
    # On disk, the machine is a directory of the run directory, beside trace.jsonl.
    assert result.machine_dir == result.workdir / MACHINE_DIR_NAME
    assert (result.machine_dir / "project").is_dir() and result.trace_path.is_file()


def test_python_sees_host_paths_and_the_kernel_resolves_them(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def ext(pi: ExtensionAPI) -> None:
        async def look(args: str, ctx: Any) -> None:
            seen["cwd"] = ctx.cwd
            seen["getcwd"] = os.getcwd()
            seen["Path.cwd"] = str(Path.cwd())
            seen["abspath"] = os.path.abspath("notes.txt")
            Path("notes.txt").write_text("relative write", encoding="utf-8")
            seen["read back"] = Path(ctx.cwd, "notes.txt").read_text(encoding="utf-8")
            seen["realpath"] = os.path.realpath(ctx.cwd)

        pi.register_command("look", look)

    result = run(tmp_path, base(operations=[{"command": "/look"}]), ext)
    project = f"{VIRTUAL_ROOT}/project"
    assert seen["cwd"] == seen["getcwd"] == seen["Path.cwd"] == project
    assert seen["abspath"] == f"{project}/notes.txt" and seen["read back"] == "relative write"
    assert seen["realpath"] == str(result.machine_dir / "project")  # the real directory
    assert (result.machine_dir / "project" / "notes.txt").read_text() == "relative write"
    writes = [r["path"] for r in result.host.trace.records if r["kind"] == "fs" and r["name"] == "write"]
    assert writes == ["$WORK/project/notes.txt"]


def test_a_write_through_the_real_path_is_traced_as_the_host_path(tmp_path: Path) -> None:
    def ext(pi: ExtensionAPI) -> None:
        async def write(args: str, ctx: Any) -> None:
            Path(os.path.realpath(ctx.cwd), "real.txt").write_text("x", encoding="utf-8")

        pi.register_command("write", write)

    result = run(tmp_path, base(operations=[{"command": "/write"}]), ext)
    writes = [r["path"] for r in result.host.trace.records if r["kind"] == "fs" and r["name"] == "write"]
    assert writes == ["$WORK/project/real.txt"]


def test_confinement_holds_behind_the_virtual_root(tmp_path: Path) -> None:
    """A symbolic link out of the run, and the run directory above the machine, stay refused."""
    outside = tmp_path / "outside"
    outside.mkdir()
    errors: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def escape(args: str, ctx: Any) -> None:
            os.symlink(outside, Path(ctx.cwd, "out"))
            for target in (Path(ctx.cwd, "out", "x.txt"), Path(VIRTUAL_ROOT).parent / "beside.txt"):
                try:
                    target.write_text("escaped", encoding="utf-8")
                except PermissionError as error:
                    errors.append(str(error.filename))

        pi.register_command("escape", escape)

    result = run(tmp_path, base(operations=[{"command": "/escape"}]), ext)
    assert len(errors) == 2
    assert list(outside.iterdir()) == [] and not (result.workdir / "beside.txt").exists()


def test_the_machines_real_path_is_found_through_linked_run_directories(tmp_path: Path) -> None:
    """The filesystem monitor's real root is the machine directory with every link resolved,
    whether the run directory is named through a symbolic link or not (a directory just made
    in the resolved run directory is taken as its own real path, without ``realpath``)."""
    real = tmp_path / "real" / "runs"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for workdir in (real / "direct", tmp_path / "link" / "runs" / "linked"):
        simulation = Simulation(parse_scenario(base()), workdir=workdir)
        try:
            assert simulation._real_root == os.path.realpath(simulation.view.disk_root)
            assert simulation._real_root.startswith(str(real.resolve()) + os.sep)
        finally:
            simulation.finish()


def test_a_host_path_is_spelt_on_disk_as_the_kernel_finds_it(tmp_path: Path) -> None:
    """``disk_path`` names, for a path below the virtual root, the file the kernel finds through
    the descriptor (the same names listed, the same answer to "is it there"), for whichever
    simulation holds it; other paths are left as they are."""
    first = Simulation(parse_scenario(base()), workdir=tmp_path / "first")
    second = Simulation(parse_scenario(base()), workdir=tmp_path / "second")
    try:
        for simulation in (first, second, first):
            simulation.view.activate()
            agent = simulation.host.paths.agent_dir
            assert agent.startswith(VIRTUAL_ROOT + "/")
            on_disk = disk_path(agent)
            assert on_disk == os.path.join(simulation.view.disk_root, "agent")
            assert sorted(os.listdir(on_disk)) == sorted(os.listdir(agent))
            for name in ("settings.json", "nothing-here", "prompts/.gitignore"):
                path = os.path.join(agent, name)
                assert os.path.lexists(disk_path(path)) == os.path.lexists(path)
        assert disk_path(str(tmp_path)) == str(tmp_path)
        assert disk_path(VIRTUAL_ROOT + "-suffix") == VIRTUAL_ROOT + "-suffix"
    finally:
        first.finish()
        second.finish()


def test_a_real_pi_machine_root_has_the_fixed_length(tmp_path: Path) -> None:
    root = machine_root(tmp_path)
    assert len(str(root)) == WORK_PATH_LENGTH and root.parent == tmp_path
    assert root.name.startswith("machine") and padding_name(3) == "mac"


def test_a_run_directory_too_long_to_pad_is_refused_with_one_message(tmp_path: Path) -> None:
    too_long = tmp_path / ("x" * (WORK_PATH_LENGTH - len(str(tmp_path))))
    with pytest.raises(WorkdirError) as error:
        machine_root(too_long)
    message = str(error.value)
    assert message.startswith(f"{too_long}: the run directory's path is ")
    assert f"at most {WORK_PATH_LENGTH - 2} characters" in message
    assert not too_long.exists()


def test_the_real_pi_target_refuses_a_long_run_directory_before_anything(tmp_path: Path) -> None:
    too_long = tmp_path / ("x" * (WORK_PATH_LENGTH - len(str(tmp_path))))
    target = PiTarget("reference", too_long, install=False)
    with pytest.raises(WorkdirError):
        target.start(parse_scenario(base()))
    assert list(tmp_path.iterdir()) == []


_OCCUPIED = """
import os, sys, json
fd = os.open(os.devnull, os.O_RDONLY)
os.dup2(fd, 1000)
from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.simulator import simulate
from pi_continuity_harness.simulator.simulation import Simulation
scenario = load_scenario(sys.argv[1])
sim = Simulation(scenario, workdir=sys.argv[2])
sim.start()
result = sim.finish()
print(json.dumps({"note": sim.view.note, "root": result.host.paths.workdir,
                  "still_devnull": os.path.samestat(os.fstat(1000), os.stat(os.devnull))}))
"""


def test_an_occupied_descriptor_falls_back_to_the_real_directory_with_a_note(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _OCCUPIED, str(EXAMPLES / "reload.yaml"), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    seen = json.loads(out)
    assert seen["note"] == "descriptor 1000 is already in use in this process"
    assert seen["root"] == str(tmp_path / "run" / MACHINE_DIR_NAME)
    assert seen["still_devnull"]  # someone else's descriptor is left alone


def test_differs_names_the_record_and_the_field() -> None:
    base_record = {"seq": 18, "t": 0, "kind": "model", "name": "request", "maxTokens": 14395}
    other = {**base_record, "maxTokens": 14392}
    lines = [json.dumps({"seq": n, "kind": "host", "name": "x"}) for n in range(18)]
    expected = "\n".join([*lines, json.dumps(base_record)]) + "\n"
    actual = "\n".join([*lines, json.dumps(other)]) + "\n"
    assert first_difference(expected, actual) == (
        "first difference at record 18 (line 19, model:request): $.maxTokens: expected 14395, actual 14392"
    )
    nested_a = {"seq": 0, "kind": "model", "name": "reply", "toolCalls": [{"id": "a"}, {"id": "b"}]}
    nested_b = {"seq": 0, "kind": "model", "name": "reply", "toolCalls": [{"id": "a"}, {"id": "c"}]}
    assert first_difference(json.dumps(nested_a), json.dumps(nested_b)) == (
        'first difference at record 0 (line 1, model:reply): $.toolCalls[1].id: expected "b", actual "c"'
    )
    assert first_difference("x\n", "x\n") is None


def test_a_recorded_line_nested_too_deeply_is_a_difference_not_a_crash() -> None:
    """json's C decoder recurses per level: before, ``replay --expect-trace`` on such a line
    ended in a RecursionError traceback."""
    record = json.dumps({"seq": 0, "kind": "host", "name": "scenario"})
    deep = "[" * 100_000 + "]" * 100_000
    found = first_difference(deep + "\n", record + "\n")
    assert found is not None and found.startswith("first difference at record 0 (line 1"), found


def test_disk_path_spells_the_root_and_what_is_below_it_only(tmp_path: Path) -> None:
    """``disk_path`` (``virtual_root.py``) spells the virtual root and the paths below it by the
    run's machine directory on disk, and leaves alone a path that only starts with the root's
    characters (a sibling name), any other path, and every path once no run holds the root."""
    sim = Simulation(parse_scenario(base()), workdir=tmp_path / "run")
    try:
        sim.view.activate()
        disk = sim.view.disk_root
        assert disk_path(VIRTUAL_ROOT) == disk
        assert disk_path(VIRTUAL_ROOT + "/") == disk + "/"
        assert disk_path(f"{VIRTUAL_ROOT}/project/a.md") == f"{disk}/project/a.md"
        assert disk_path(VIRTUAL_ROOT + "-other/a.md") == VIRTUAL_ROOT + "-other/a.md"
        assert disk_path(VIRTUAL_ROOT + "x") == VIRTUAL_ROOT + "x"
        assert disk_path("/elsewhere/a.md") == "/elsewhere/a.md"
    finally:
        sim.finish()
