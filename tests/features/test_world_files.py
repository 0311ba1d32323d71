"""``World``'s listing of the files below a directory (the artifacts the run report lists for
every scenario, and every file of a directory a step reads) is what
``sorted(root.rglob("*"))`` filtered by ``is_file()`` gives, read with ``os.scandir``."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.features.world import World, _files_below
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

    world = World("scenario", make_target=_Fixed)  # type: ignore[arg-type]
    world.start()
    assert world.session_artifacts("pending") == {"b.md": f'---\nsessionId: "{this}"\n---\n'.encode()}
    assert world.session_artifacts("pending", session_id=other)["b.md"].decode().count(other) == 1
    assert world.session_artifacts("archive") == {}
