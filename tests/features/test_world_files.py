"""``World``'s listing of the files below a directory (the artifacts the run report lists for
every scenario, and every file of a directory a step reads) is what
``sorted(root.rglob("*"))`` filtered by ``is_file()`` gives, read with ``os.scandir``."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.features.world import World, _copy_data, _files_below, project_files
from pi_continuity_harness.targets.target import Observation

_NAMES = st.sampled_from(["a", "a-b", "a.b", "a b", ".h", "b", "B", "é", "z9", "a0"])


def _as_pathlib_lists_them(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return [str(p.relative_to(root)) for p in sorted(root.rglob("*")) if p.is_file()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    paths=st.lists(st.lists(_NAMES, min_size=1, max_size=4), max_size=12),
    links=st.lists(st.tuples(st.lists(_NAMES, min_size=1, max_size=3), st.integers(0, 11)), max_size=4),
)
def test_the_files_below_a_directory_are_listed_as_pathlib_lists_them(
    tmp_path_factory: object, paths: list[list[str]], links: list[tuple[list[str], int]]
) -> None:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("below")))  # type: ignore[attr-defined]
    made: list[Path] = []
    for parts in paths:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("x", encoding="utf-8")
                made.append(path)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a name already used as a file (or a directory) on the way
    for parts, target in links:
        link = root.joinpath(*parts)
        if link.exists() or link.is_symlink() or not link.parent.is_dir():
            continue
        # a link to a file (listed), to a directory (not entered) or to nothing (not listed)
        aim = (
            made[target]
            if target < len(made)
            else (made[target % len(made)].parent if made else root / "gone")
        )
        link.symlink_to(aim)
    assert _files_below(root) == _as_pathlib_lists_them(root)


def test_a_projects_files_are_what_pathlib_reads_of_them(tmp_path: Path) -> None:
    """``project_files`` (every scenario's project at its start) gives what reading the files of
    ``sorted(project.rglob("*"))`` that are files gave: nested and hidden files, a link to a
    file read through it, a link to a directory or to nothing left out, in path order."""
    project = Path(os.path.realpath(tmp_path)) / "project"
    (project / ".pi" / "deep").mkdir(parents=True)
    (project / "src").mkdir()
    (project / ".pi" / "settings.json").write_bytes(b'{"a": 1}')
    (project / ".pi" / "deep" / "x.md").write_bytes("é\n".encode())
    (project / "src" / "b").write_bytes(b"\x00\xff")
    (project / "a b").write_bytes(b"")
    (project / "link").symlink_to(project / "src" / "b")
    (project / "dirlink").symlink_to(project / "src")
    (project / "gone").symlink_to(project / "missing")
    as_pathlib = {
        p.relative_to(project).as_posix(): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()
    }
    found = project_files(project)
    assert found == as_pathlib
    assert list(found) == [".pi/deep/x.md", ".pi/settings.json", "a b", "link", "src/b"]
    assert project_files(project / "missing") == {}


def test_a_drafts_data_is_copied_as_deepcopy_copies_it() -> None:
    """``ScenarioDraft.build`` copies the draft's data: an equal value sharing no container with
    it (the draft is read after Pi started); what is not plain data goes to ``deepcopy`` whole."""
    data: dict[str, object] = {"a": [1, 2.5, {"b": None, "c": [True, "x"]}], "d": {}, "e": []}
    copied = _copy_data(data)
    assert copied == copy.deepcopy(data)
    assert copied is not data and copied["a"] is not data["a"] and copied["d"] is not data["d"]
    copied["a"][2]["c"].append("changed")  # type: ignore[index]
    assert data["a"][2]["c"] == [True, "x"]  # type: ignore[index]
    shared = {"t": (1, [2])}
    assert type(_copy_data(shared)["t"]) is tuple  # a tuple stays one, as deepcopy keeps it
    assert _copy_data(shared)["t"][1] is not shared["t"][1]
    cycle: list[object] = []
    cycle.append(cycle)
    again = _copy_data({"c": cycle})["c"]
    assert again[0] is again and again is not cycle  # deepcopy keeps the cycle


def test_a_directory_that_is_not_there_has_no_files(tmp_path: Path) -> None:
    assert _files_below(tmp_path / "missing") == []
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert _files_below(tmp_path / "file") == []


def test_rule_a_sessions_artifacts_are_never_another_sessions_sharing_its_id_prefix(
    tmp_path: Path,
) -> None:
    """uuidv7 ids of sessions started within about a minute share their first 8 characters; a
    sanitised directory keeps only a prefix of the id. Of the directories with that prefix, the
    one whose files name this session is this session's, whatever the listing order (before, the
    first the filesystem listed, another session's included)."""
    project = tmp_path / "project"
    root = project / ".pi" / "session-continuity"
    this, other = "019b76da-a800-7d3f-ab3c-9250b797528b", "019b76da-a811-7000-8000-000000000001"
    for name, session in (("019b76da-a811-other", other), ("019b76da-a800-this", this)):
        (root / name / "pending").mkdir(parents=True)
        (root / name / "pending" / "b.md").write_text(f'---\nsessionId: "{session}"\n---\n', "utf-8")
    observation = Observation(
        target="fixed",
        project_dir=project,
        agent_dir=tmp_path / "agent",
        session_dir=tmp_path / "sessions",
        session_id=this,
    )

    class _Fixed:
        name = implementation = "fixed"

        def start(self, scenario: object) -> None:
            pass

        def observe(self) -> Observation:
            return observation

        def project_dir(self) -> Path:
            return project

    world = World("scenario", make_target=_Fixed)  # type: ignore[arg-type]
    world.start()
    assert world.session_artifacts("pending") == {"b.md": f'---\nsessionId: "{this}"\n---\n'.encode()}
    assert world.session_artifacts("pending", session_id=other)["b.md"].decode().count(other) == 1
    assert world.session_artifacts("archive") == {}


def _started_world(project: Path) -> World:
    class _Fixed:
        name = implementation = "fixed"

        def start(self, scenario: object) -> None:
            pass

        def project_dir(self) -> Path:
            return project

    world = World("scenario", make_target=_Fixed)  # type: ignore[arg-type]
    world.start()
    return world


def test_the_settings_at_start_are_the_project_settings_files_bytes_or_none(tmp_path: Path) -> None:
    """``World.start`` remembers the project's ``.pi/settings.json`` as ``read_bytes`` gave it
    (None when there is none) beside every project file; the bytes ``project_files`` read are
    not read again (issue 16), and a settings path that is no file is read as before."""
    project = Path(os.path.realpath(tmp_path)) / "project"
    (project / ".pi").mkdir(parents=True)
    assert _started_world(project).remembered["settings_at_start"] is None
    (project / "real.json").write_bytes(b'{"linked": true}')
    (project / ".pi" / "settings.json").symlink_to(project / "real.json")
    world = _started_world(project)
    assert world.remembered["settings_at_start"] == b'{"linked": true}'
    assert world.remembered["project_at_start"][".pi/settings.json"] == b'{"linked": true}'
    (project / ".pi" / "settings.json").unlink()
    (project / ".pi" / "settings.json").write_bytes(b"")
    assert _started_world(project).remembered["settings_at_start"] == b""
    (project / ".pi" / "settings.json").unlink()
    (project / ".pi" / "settings.json").mkdir()
    with pytest.raises(IsADirectoryError):  # a directory is read, and fails, as before
        _started_world(project)


def test_a_simulated_machine_read_by_its_disk_spelling_gives_the_same_files(tmp_path: Path) -> None:
    """The world reads the simulator's project and artifacts by the target's disk spelling
    (``SimTarget.disk_path``): the same relative paths and bytes as through the host's paths,
    for whichever of two targets is read."""
    from pi_continuity_harness.features.world import ScenarioDraft  # noqa: PLC0415
    from pi_continuity_harness.targets.sim import SimTarget  # noqa: PLC0415

    targets = []
    for name in ("one", "two"):
        draft = ScenarioDraft(name)
        draft.set_file(f"notes/{name}.md", text=f"{name}\n")
        target = SimTarget("reference", tmp_path / name)
        target.start(draft.build())
        targets.append(target)
    try:
        for name, target in (("one", targets[0]), ("two", targets[1]), ("one", targets[0])):
            project = target.project_dir()
            assert target.disk_path(str(project)) != str(project)
            files = project_files(project, target.disk_path)
            # This target's machine, not the other's (the descriptor is per process).
            assert files[f"notes/{name}.md"] == f"{name}\n".encode()
            assert not any(other in "".join(files) for other in ("one.md", "two.md") if other != f"{name}.md")
            assert files == project_files(project)
            assert _files_below(project, target.disk_path) == _files_below(project)
    finally:
        for target in targets:
            target.close()
