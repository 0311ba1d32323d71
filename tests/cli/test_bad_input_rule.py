"""The developers' guide's rule for bad input: one clear error naming the file and the field or
the option, exit status 2, and nothing on disk lost or changed. Cases a systematic audit of
every subcommand found broken (each test failed on the code before its fix)."""

from __future__ import annotations

import contextlib
import hashlib
import io
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "threshold-compaction.yaml"


def _snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` with its content's sha256 (directories: ``dir``)."""
    return {
        str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("command", ["simulate", "replay"])
def test_rule_a_negative_seed_in_a_scenario_is_one_line_exit_2_and_nothing_is_written(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``seed: -7`` ran, as seed 7 (``random.Random(-7)`` is ``random.Random(7)``)."""
    monkeypatch.chdir(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(EXAMPLE.read_text(encoding="utf-8").replace("seed: 7", "seed: -7"), encoding="utf-8")
    before = _snapshot(tmp_path)
    assert main([command, "s.yaml", "--workdir", "run"]) == 2
    assert capsys.readouterr().err == (
        f"pi-continuity-harness {command}: s.yaml: seed: Input should be greater than or equal to 0\n"
    )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["simulate", "replay", "run", "compare", "matrix"])
def test_rule_a_negative_seed_option_is_refused_before_anything_runs(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--seed -1`` ran (``simulate``, ``replay``: the run of seed 1 under the name -1).
    The suite commands' own work is replaced by a failure: argparse refuses before it."""
    import importlib  # noqa: PLC0415

    if command in ("run", "compare", "matrix"):

        def ran(_: object) -> int:
            raise AssertionError(f"{command} ran")

        monkeypatch.setattr(importlib.import_module(f"pi_continuity_harness.commands.{command}"), "main", ran)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    before = _snapshot(tmp_path)
    scenario = ["s.yaml", "--workdir", "run"] if command in ("simulate", "replay") else []
    with pytest.raises(SystemExit) as exited:
        main([command, *scenario, "--seed", "-1"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"pi-continuity-harness {command}: error: argument --seed: '-1': must not be negative "
        "(seed -n would give the run of seed n)"
    )
    assert "Traceback" not in err
    assert _snapshot(tmp_path) == before


def test_rule_import_session_refuses_an_output_that_is_its_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--output settings.json --settings settings.json`` replaced the user's settings
    with the scenario (exit 0)."""
    monkeypatch.chdir(tmp_path)
    session = REPO / "tests" / "fixtures" / "sessions" / "recorded-on-pi-1.6.jsonl"
    (tmp_path / "session.jsonl").write_bytes(session.read_bytes())
    (tmp_path / "settings.json").write_text('{"compaction": {"enabled": true}}\n', encoding="utf-8")
    before = _snapshot(tmp_path)
    args = ["import-session", "session.jsonl", "--settings", "settings.json", "--no-check", "--output"]
    for output in ("settings.json", "./settings.json"):
        assert main([*args, output]) == 2
        assert capsys.readouterr().err == (
            f"pi-continuity-harness import-session: --output {Path(output)}: the same path as --settings "
            "settings.json: an output must not replace an input\n"
        )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (
            ["mutants", "list", "--json", "m.json"],
            "mutants: --json: not with 'mutants list', which runs nothing and writes nothing",
        ),
        (
            ["mutants", "list", "--only", "x", "--no-control"],
            "mutants: --only, --no-control: not with 'mutants list', which runs nothing and writes nothing",
        ),
        (
            ["explore", "--list-invariants", "--json", "e.json", "--out", "failures"],
            "explore: --json, --out: not with --list-invariants, which runs nothing and writes nothing",
        ),
        (
            ["explore", "--list-invariants", "--seeds", "5"],
            "explore: --seeds: not with --list-invariants, which runs nothing and writes nothing",
        ),
        (
            # Before: Pi Session Continuity's invariants, under the other system's name, exit 0.
            ["explore", "--list-invariants", "--system", "pi-blitz-handoff"],
            "explore: --system: only for a TypeScript implementation (a Python one declares its system)",
        ),
    ],
)
def test_rule_an_option_a_listing_would_ignore_is_one_line_exit_2(
    args: list[str],
    err: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: the listing was printed, the option dropped, exit 0 (``--json m.json``: no file)."""
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err == f"pi-continuity-harness {err}\n"
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["mutants", "list"],
        ["explore", "--list-invariants"],
        ["explore", "--list-invariants", "--target", "pi"],
        ["explore", "--list-invariants", "--extension", "blitz"],
        ["explore", "--list-invariants", "--extension", "ext.ts", "--system", "pi-blitz-handoff"],
    ],
)
def test_a_listing_still_takes_the_options_it_uses(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 0
    assert capsys.readouterr().out


@pytest.mark.parametrize(
    ("option", "target"),
    [("--json", "pkg/package.json"), ("--json", "pkg/checks.json"), ("--report", "pkg/docs")],
)
def test_rule_package_refuses_an_output_inside_the_package_it_gates(
    option: str,
    target: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: ``package pkg --static --json pkg/package.json`` replaced the manifest with the
    checks (exit 0); another file written there would ship with the package."""
    import shutil  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "examples" / "packages" / "pi-session-continuity", tmp_path / "pkg")
    before = _snapshot(tmp_path)
    assert main(["package", "pkg", "--static", "--quiet", option, target]) == 2
    assert capsys.readouterr().err == (
        f"pi-continuity-harness package: {option} {target}: inside the package pkg: "
        "an output must not change an input\n"
    )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "--target", "pi", "--system", "pi-session-continuity", "--json", "ext.ts"], "--json"),
        (["run", "--target", "pi", "--system", "pi-session-continuity", "--html", "./ext.ts"], "--html"),
        (["matrix", "--pi-versions", "1.6.0", "--json", "ext.ts"], "--json"),
        (["explore", "--target", "pi", "--seeds", "1", "--out", "found", "--html", "ext.ts"], "--html"),
    ],
)
def test_rule_an_output_at_the_typescript_implementation_is_refused(
    args: list[str],
    option: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: the TypeScript implementation was no input of the output checks: the run went on
    (here: to the missing Pi, or the matrix) and its results would replace the implementation."""
    from pi_continuity_harness.commands import explore, matrix  # noqa: PLC0415

    def ran(*_: object, **__: object) -> None:
        raise AssertionError("it ran")

    monkeypatch.setattr(matrix, "run_matrix", ran)
    monkeypatch.setattr(explore, "_explore", ran)
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ext.ts").write_text("export default function (pi) {}\n", encoding="utf-8")
    before = _snapshot(tmp_path)
    assert main([*args, "--extension", "ext.ts"]) == 2
    target = args[args.index(option) + 1]
    assert capsys.readouterr().err == (
        f"pi-continuity-harness {args[0]}: {option} {Path(target)}: the same path as --extension ext.ts: "
        "an output must not replace an input\n"
    )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ["simulate", "explore"])
def test_rule_an_html_page_where_nothing_can_be_written_is_refused_before_the_run(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """/proc takes no new file, whoever asks (permission bits do not stop root). Before: the run
    went ahead (its directory written), and the page failed after it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    before = _snapshot(tmp_path)
    args = {
        "simulate": ["simulate", "s.yaml", "--workdir", "run"],
        "explore": ["explore", "--seeds", "1", "--steps", "2", "--out", "found", "--quiet"],
    }[command]
    assert main([*args, "--html", "/proc/harness-page.html"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith(
        f"pi-continuity-harness {command}: --html /proc/harness-page.html: cannot write in /proc: "
    )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("sources", ["", ","])
def test_rule_package_refuses_an_empty_list_of_sources(
    sources: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--sources ''`` published the package, installed it from nowhere and passed."""
    from pi_continuity_harness.commands import package  # noqa: PLC0415

    def gated(*_: object) -> int:
        raise AssertionError("the gate ran")

    monkeypatch.setattr(package, "_open_and_gate", gated)
    monkeypatch.chdir(tmp_path)
    assert main(["package", "pkg", "--sources", sources]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness package: --sources: no source given "
        "(one or more of npm, project, local, git, one-run; --static: none)\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("simulate", "--budget-virtual-seconds"),
        ("run", "--budget-virtual-seconds"),
        ("run", "--budget-wall-seconds"),
        ("explore", "--budget-virtual-seconds"),
    ],
)
def test_rule_a_budget_of_seconds_that_is_no_finite_number_is_refused(
    command: str,
    flag: str,
    value: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: ``inf`` (and ``1e400``) ran with no limit at all, though a scenario's ``budget:``
    refuses Infinity (not JSON data); ``nan`` was refused as "must be greater than 0"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    before = _snapshot(tmp_path)
    scenario = ["s.yaml", "--workdir", "run"] if command == "simulate" else []
    with pytest.raises(SystemExit) as exited:
        main([command, *scenario, f"{flag}={value}"])  # '-inf' would read as an option
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"pi-continuity-harness {command}: error: argument {flag}: '{value}': must be a finite number of seconds"
    )
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--seed", "-1", "'-1': must not be negative (seed -n would give the run of seed n)"),
        ("--seed", "one", "'one' is not a whole number"),
        ("--budget-ops", "0", "'0': must be at least 1"),
        ("--budget-virtual-seconds", "inf", "'inf': must be a finite number of seconds"),
        ("--budget-wall-seconds", "0", "'0': must be greater than 0"),
    ],
)
def test_rule_the_pytest_plugins_own_options_are_checked_as_the_commands_are(
    option: str, value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pytest --seed -1`` (the plugin's option, what ``run`` passes on) ran seed 1, and
    ``--budget-ops 0``/``--budget-*-seconds inf`` were taken as given. pytest reports a bad option
    value as its usage error (exit 4), naming the option and the value.

    ``pytest.main`` in this process, which loads the installed plug-ins as ``python -m pytest``
    does (a process of its own cost 0.8 of the test's 0.9 CPU-s, issue 16); plain pytest runs
    as a process of its own in ``test_own_features.py``."""
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(["-p", "no:cacheprovider", "--collect-only", "-q", option, value])
    assert code == pytest.ExitCode.USAGE_ERROR, err.getvalue()
    assert f"error: argument {option}: {message}" in err.getvalue()
    assert list(tmp_path.iterdir()) == []
