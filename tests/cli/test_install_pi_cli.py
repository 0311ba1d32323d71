"""``install-pi`` refuses a cache directory it cannot use before it installs anything.

A cache directory under a file, a loop of symbolic links, or ``PI_CONTINUITY_HARNESS_CACHE``
naming a file, is one line naming the option or the variable, exit status 2. Before, each was
a traceback (NotADirectoryError, RuntimeError "Symlink loop", FileExistsError); only
``--cache-dir`` itself was checked. Nothing is downloaded in these tests: every case is refused
before the installer runs (and :func:`install_pi` is replaced, so a case that was not would fail
instead of installing).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.commands import install_pi as command


@pytest.fixture(autouse=True)
def no_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The installer must not be reached; a directory of files to point at is the current one."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("install_pi ran: the cache directory was not refused first")

    monkeypatch.setattr(command, "install_pi", refuse)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f").write_text("a file\n", encoding="utf-8")
    (tmp_path / "loop").symlink_to("loop")


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("f/sub", "f is not a directory"),
        ("loop", "goes round a loop of symbolic links"),
        ("loop/sub", "goes round a loop of symbolic links"),
    ],
    ids=["under-a-file", "a-link-loop", "under-a-link-loop"],
)
def test_a_cache_dir_option_it_cannot_use_is_refused(
    capsys: pytest.CaptureFixture[str], given: str, problem: str
) -> None:
    assert main(["install-pi", "--cache-dir", given]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness install-pi: --cache-dir {given}: {problem}\n"


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        (lambda d: d / "f", "exists and is not a directory"),
        (lambda d: d / "f" / "sub", "{d}/f is not a directory"),
        (lambda d: d / "loop", "goes round a loop of symbolic links"),
    ],
    ids=["a-file", "under-a-file", "a-link-loop"],
)
def test_a_cache_variable_it_cannot_use_is_refused_by_name(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: Callable[[Path], Path],
    problem: str,
) -> None:
    path = given(tmp_path)
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(path))
    assert main(["install-pi"]) == 2
    assert capsys.readouterr().err == (
        f"pi-continuity-harness install-pi: PI_CONTINUITY_HARNESS_CACHE {path}: "
        + problem.format(d=tmp_path)
        + "\n"
    )


def test_files_beside_the_refused_cache_are_as_they_were(tmp_path: Path) -> None:
    for argv in (["install-pi", "--cache-dir", "f/sub"], ["install-pi", "--cache-dir", "loop"]):
        assert main(argv) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "loop"]
    assert (tmp_path / "f").read_text(encoding="utf-8") == "a file\n"
