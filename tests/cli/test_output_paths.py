"""An output may not overwrite an input, another output, or a file the run writes itself.

Each case is one line naming the option and the path, exit status 2, before anything runs, and
every file as it was. Before: ``simulate s.yaml --trace s.yaml`` replaced the scenario with its
trace (exit 0); ``run|compare|explore --json X --html X`` replaced the JSON with the page (exit
0); ``simulate --workdir w --trace w/trace.jsonl`` ran in full, then failed with two
``PosixPath(...)`` reprs; and a scenario inside a run directory was deleted by its own run.
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


@pytest.mark.parametrize("option", ["--trace", "--html"])
def test_simulate_refuses_an_output_that_is_its_scenario(
    user_dir: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    line = _refused(capsys, user_dir, ["simulate", "s.yaml", option, "./s.yaml", "--workdir", "w"])
    assert (
        line == f"{option} s.yaml: the same path as the scenario s.yaml: an output must not replace an input"
    )


def test_simulate_refuses_an_output_that_is_its_scenario_under_another_name(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A symbolic link and a hard link name the same file as well."""
    (user_dir / "link.yaml").symlink_to("s.yaml")
    (user_dir / "r" / "hard.yaml").hardlink_to(user_dir / "s.yaml")
    for other in ("link.yaml", "r/hard.yaml"):
        line = _refused(capsys, user_dir, ["simulate", "s.yaml", "--trace", other, "--workdir", "w"])
        assert (
            line
            == f"--trace {other}: the same path as the scenario s.yaml: an output must not replace an input"
        )


def test_simulate_refuses_trace_and_html_at_one_path(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(
        capsys, user_dir, ["simulate", "s.yaml", "--trace", "out", "--html", "out", "--workdir", "w"]
    )
    assert line == "--trace out and --html out name the same path: each output needs its own"


@pytest.mark.parametrize(
    ("output", "entry"),
    [
        ("w/trace.jsonl", "trace.jsonl"),
        ("w/requests/page.html", "requests"),
        ("w/.pi-continuity-harness-run", ".pi-continuity-harness-run"),
    ],
    ids=["its-trace", "inside-its-requests", "its-marker"],
)
def test_simulate_refuses_an_output_the_run_writes_itself_before_running_not_one_beside_it(
    user_dir: Path, capsys: pytest.CaptureFixture[str], output: str, entry: str
) -> None:
    assert main(["simulate", "s.yaml", "--workdir", "w"]) == 0  # a previous run's directory
    capsys.readouterr()
    option = "--html" if output.endswith(".html") else "--trace"
    line = _refused(capsys, user_dir, ["simulate", "s.yaml", "--workdir", "w", option, output])
    assert line == f"{option} {output}: the run itself writes {entry} in its run directory w"
    # Another name in the run directory is no file of the run's: a copy beside it.
    assert main(["simulate", "s.yaml", "--workdir", "w", option, f"w/copy{Path(output).suffix}"]) == 0


def test_simulate_refuses_its_run_directory_as_the_trace(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(capsys, user_dir, ["simulate", "s.yaml", "--workdir", "new", "--trace", "new"])
    assert line == "--trace new and --workdir new name the same path: each output needs its own"


@pytest.mark.parametrize("command", ["simulate", "replay"])
def test_a_scenario_inside_the_run_directory_is_refused_not_deleted(
    user_dir: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main(["simulate", "s.yaml", "--workdir", "w"]) == 0
    shutil.copyfile(user_dir / "s.yaml", user_dir / "w" / "mine.yaml")
    capsys.readouterr()
    line = _refused(capsys, user_dir, [command, "w/mine.yaml", "--workdir", "w"])
    assert line == "the scenario w/mine.yaml: inside the run directory w, which the run empties first"


def test_replay_refuses_an_expected_trace_its_run_would_replace(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the recorded trace was overwritten by the new run's, whatever the verdict."""
    assert main(["simulate", "s.yaml", "--workdir", "w"]) == 0
    capsys.readouterr()
    argv = ["replay", "s.yaml", "--workdir", "w", "--expect-trace", "w/trace.jsonl", "--quiet"]
    line = _refused(capsys, user_dir, argv)
    assert line == "--expect-trace w/trace.jsonl: inside the run directory w, which the run empties first"


def test_replay_refuses_its_scenario_as_its_run_directory(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _refused(capsys, user_dir, ["replay", "s.yaml", "--workdir", "s.yaml"])
    assert (
        line == "--workdir s.yaml: the same path as the scenario s.yaml: an output must not replace an input"
    )


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


@pytest.mark.parametrize(
    ("option", "target"),
    [("--json", "f/a.feature"), ("--junit", "f/conftest.py"), ("--html", "f/sub/b.feature")],
)
def test_run_refuses_an_output_that_is_a_file_of_its_features(
    user_dir: Path, capsys: pytest.CaptureFixture[str], option: str, target: str
) -> None:
    """Before: ``run --features f --json f/a.feature`` replaced the feature with the results
    (exit 0; found by an audit)."""
    (user_dir / "f" / "sub").mkdir(parents=True)
    for name in ("a.feature", "sub/b.feature"):
        (user_dir / "f" / name).write_text("Feature: x\n  Scenario: y\n    Then z\n", encoding="utf-8")
    (user_dir / "f" / "conftest.py").write_text("", encoding="utf-8")
    line = _refused(capsys, user_dir, ["run", "--features", "f", option, target])
    assert line == (
        f"{option} {target}: the same path as a file of --features f: {target}: an output must not replace an input"
    )


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("typo/scenario.schema.json", "--output typo/scenario.schema.json: no such directory: typo"),
        ("r", "--output r: is a directory"),
    ],
)
def test_schema_refuses_an_output_in_a_missing_directory_or_at_a_directory(
    capsys: pytest.CaptureFixture[str], user_dir: Path, output: str, says: str
) -> None:
    """``schema --output`` is a file output as ``run --json`` is: before, ``typo/`` was created."""
    assert _refused(capsys, user_dir, ["schema", "--output", output]) == says


def test_schema_writes_its_output_into_an_existing_directory(user_dir: Path) -> None:
    assert main(["schema", "--output", "r/scenario.schema.json"]) == 0
    assert (user_dir / "r" / "scenario.schema.json").read_text(encoding="utf-8").startswith("{")
