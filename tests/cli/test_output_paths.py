"""An output may not overwrite an input or another output.

Each case is one line naming the option and the path, exit status 2, before anything runs, and
every file as it was. Before: ``run|compare|explore --json X --html X`` replaced the JSON with
the page (exit 0), and explore compared no outputs at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "threshold-compaction.yaml"


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory, holding a scenario ``s.yaml``, a directory ``r`` and a file ``X``."""
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(EXAMPLE, tmp_path / "s.yaml")
    (tmp_path / "r").mkdir()
    (tmp_path / "X").write_text("kept\n", encoding="utf-8")
    return tmp_path


def _snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every path below ``directory`` with its bytes (None: a directory)."""
    return {
        str(path.relative_to(directory)): None if path.is_dir() else path.read_bytes()
        for path in sorted(directory.rglob("*"))
    }


def _refused(capsys: pytest.CaptureFixture[str], directory: Path, argv: list[str]) -> str:
    """Run ``argv``; it must exit 2 with one line on stderr, nothing on stdout and no file
    changed. The line, without the program's prefix."""
    before = _snapshot(directory)
    code = main(argv)
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    [line] = captured.err.splitlines()
    assert _snapshot(directory) == before, "a refused command changed a file"
    prefix = f"pi-continuity-harness {argv[0]}: "
    assert line.startswith(prefix)
    return line.removeprefix(prefix)


#: Each command with arguments that make it quick should it not refuse the outputs (as before):
#: features that are not there, one seed of one step, an implementation that does not import.
RUN = ["run", "--features", "missing"]
COMPARE = ["compare", "--features", "missing"]
EXPLORE = ["explore", "--seeds", "1", "--steps", "1"]
MATRIX = ["matrix", "--extension", "no_such_module:factory"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*RUN, "--json", "X", "--html", "X"], "--json X and --html X"),
        ([*RUN, "--junit", "X", "--cucumber", "./X"], "--junit X and --cucumber X"),
        ([*RUN, "--report", "r", "--allure", "r"], "--report r and --allure r"),
        ([*RUN, "--cucumber", "new", "--workdir", "new"], "--cucumber new and --workdir new"),
        (
            [*RUN, "--report", "r", "--json", "r/validation-record.json"],
            "--json r/validation-record.json and --report r (validation-record.json)",
        ),
        ([*COMPARE, "--json", "X", "--html", "X"], "--json X and --html X"),
        ([*EXPLORE, "--json", "X", "--html", "X"], "--json X and --html X"),
        ([*EXPLORE, "--json", "new", "--out", "new"], "--json new and --out new"),
        ([*MATRIX, "--json", "X", "--html", "X"], "--json X and --html X"),
        (
            [*MATRIX, "--report", "r", "--json", "r/validation-record.md"],
            "--json r/validation-record.md and --report r (validation-record.md)",
        ),
        (
            ["package", "s.yaml", "--static", "--report", "r", "--json", "r/validation-record.json"],
            "--json r/validation-record.json and --report r (validation-record.json)",
        ),
    ],
    ids=[
        "run-json-html",
        "run-junit-cucumber",
        "run-report-allure",
        "run-cucumber-workdir",
        "run-json-in-report",
        "compare-json-html",
        "explore-json-html",
        "explore-json-out",
        "matrix-json-html",
        "matrix-json-in-report",
        "package-json-in-report",
    ],
)
def test_two_outputs_at_one_path_are_refused_before_anything_runs(
    user_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    line = _refused(capsys, user_dir, argv)
    assert line == f"{message} name the same path: each output needs its own"


def test_package_refuses_an_output_that_is_the_package(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (user_dir / "pkg.tgz").write_bytes(b"a tarball")
    line = _refused(capsys, user_dir, ["package", "pkg.tgz", "--static", "--json", "pkg.tgz"])
    assert line == "--json pkg.tgz: the same path as the package pkg.tgz: an output must not replace an input"
