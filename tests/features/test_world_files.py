"""``World``'s listing of the files below a directory (the artifacts the run report lists for
every scenario, and every file of a directory a step reads) is what
``sorted(root.rglob("*"))`` filtered by ``is_file()`` gives, read with ``os.scandir``."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.features.world import _files_below

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
