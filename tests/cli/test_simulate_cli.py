"""The ``simulate``, ``replay`` and ``schema`` subcommands."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from simulator import probe_extension  # tests/ is on sys.path under pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.commands.schema import render_scenario_schema
from pi_continuity_harness.scenario.document import scenario_json_schema

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "threshold-compaction.yaml"


@pytest.fixture
def probe() -> str:
    """The probe extension as ``module:factory`` (its module name is whatever pytest gave it)."""
    return f"{probe_extension.__name__}:extension"


def test_simulate_prints_a_summary_writes_the_trace_and_a_timeline(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    workdir, copy = tmp_path / "run", tmp_path / "copy.jsonl"
    status = main(
        [
            "simulate",
            str(EXAMPLE),
            "--workdir",
            str(workdir),
            "--trace",
            str(copy),
            "--extension",
            probe,
            "--timeline",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert f"scenario threshold-compaction  seed 7  extension {probe}" in out
    assert "   0 prompt       ok (started)" in out and "   1 prompt       ok (started)" in out
    assert "compactions: 1× threshold ok" in out
    assert "notifications: 0" in out
    assert "project/.pi/probe/brief-1.md" in out and "trace.jsonl" in out
    assert copy.read_bytes() == (workdir / "trace.jsonl").read_bytes()
    timeline = [line for line in out.splitlines() if line.startswith("t=")]
    assert len(timeline) == len((workdir / "trace.jsonl").read_text().splitlines())
    assert any("session  compaction_start reason=threshold" in line for line in timeline)


def test_simulate_default_workdir_and_seed(
    tmp_path: Path, probe: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", str(EXAMPLE), "--extension", probe]) == 0
    assert main(["simulate", str(EXAMPLE), "--extension", probe, "--seed", "3"]) == 0
    assert (tmp_path / "sim-out" / "threshold-compaction-7" / "trace.jsonl").exists()
    assert (tmp_path / "sim-out" / "threshold-compaction-3" / "trace.jsonl").exists()
    assert "seed 3" in capsys.readouterr().out
    # A second run into the same run directory replaces it.
    assert main(["simulate", str(EXAMPLE), "--extension", probe]) == 0


def test_simulate_summary_lists_notifications_and_failures(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    example = REPO / "examples" / "manual-compaction.yaml"
    assert main(["simulate", str(example), "--workdir", str(tmp_path / "run"), "--extension", probe]) == 0
    out = capsys.readouterr().out
    assert "   3 compact      FAILED: Already compacted" in out
    assert "compactions: 1× manual failed, 1× manual ok" in out
    assert "notifications: 2" in out and "[info] probe: confirm=True section=summary args=status" in out


def test_malformed_scenario_exits_2_with_file_field_reason_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\noperations:\n  - prompt: a\n  - prompt: b\n  - prompt: {chars: 0}\n", encoding="utf-8"
    )
    for command in ("simulate", "replay"):
        assert main([command, "bad.yaml"]) == 2
        err = capsys.readouterr().err
        assert (
            err == f"pi-continuity-harness {command}: bad.yaml: operations[2].prompt.chars: "
            "Input should be greater than or equal to 1\n"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]
    assert main(["simulate", "missing.yaml"]) == 2
    assert "missing.yaml: no such file" in capsys.readouterr().err


def test_a_scenario_value_that_is_not_json_exits_2_before_the_run_directory_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a traceback (``TypeError: Object of type date is not JSON serializable``), exit 1,
    and a partial ``rd/machine-...`` left behind."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.yaml").write_text(
        "name: d\nsettings:\n  global: {when: 2024-01-01}\noperations: [{prompt: hi}]\n", encoding="utf-8"
    )
    assert main(["simulate", "d.yaml", "--workdir", "rd"]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness simulate: d.yaml: settings.global.when: a YAML timestamp (2024-01-01) is not"
        " JSON data: quote it to keep it as text\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.yaml"]


def test_a_lone_surrogate_in_a_scenario_exits_2_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a ``UnicodeEncodeError`` traceback (exit 1) and an empty trace.jsonl left in W;
    in ``description``, a 0-byte ``--html`` page."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text('{"name":"s","operations":[{"prompt":"x \\ud800"}]}', encoding="utf-8")
    (tmp_path / "d.json").write_text('{"name":"d","description":"\\ud800"}', encoding="utf-8")
    assert main(["simulate", "s.json", "--workdir", "W"]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness simulate: s.json: operations[0].prompt: the text has a lone surrogate"
        " (U+D800) at character 3, which UTF-8 cannot encode\n"
    )
    assert main(["simulate", "d.json", "--workdir", "W", "--html", "d.html"]) == 2
    assert "d.json: description: the text has a lone surrogate" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json", "s.json"]


def test_a_path_that_is_no_readable_scenario_exits_2_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: OSError tracebacks (exit 1) for a loop of links, a path through a file and a
    name too long; a FIFO waited for a writer; ``/dev/zero`` was read until MemoryError."""
    monkeypatch.chdir(tmp_path)
    Path("ok.yaml").write_text("name: ok\n", encoding="utf-8")
    Path("loop").symlink_to("loop")
    os.mkfifo("fifo")
    long_name = "a" * 300
    for given, reason in [
        ("loop", "cannot open it: Too many levels of symbolic links"),
        ("ok.yaml/x", "cannot open it: Not a directory"),
        (long_name, "cannot open it: File name too long"),
        ("fifo", "not a regular file (a device, FIFO or socket), not a scenario file"),
    ]:
        assert main(["simulate", given, "--workdir", "W"]) == 2
        assert capsys.readouterr().err == f"pi-continuity-harness simulate: {given}: {reason}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "loop", "ok.yaml"]


def test_replay_refuses_an_expected_trace_that_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a device was read as a trace (``/dev/zero`` until MemoryError; ``/dev/null`` as an
    empty one) and a FIFO waited for a writer."""
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    for given in (os.devnull, str(fifo)):
        assert (
            main(["replay", str(EXAMPLE), "--expect-trace", given, "--workdir", str(tmp_path / "run")]) == 2
        )
        assert capsys.readouterr().err == (
            f"pi-continuity-harness replay: --expect-trace {given}: not a regular file (a device, FIFO or"
            " socket), not a trace\n"
        )
    assert not (tmp_path / "run").exists()


def test_a_scenario_extension_module_that_cannot_load_names_the_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text(
        "name: m\nextensions:\n  - implementation: true\n  - module: no_such_module:ext\n", encoding="utf-8"
    )
    for command in ("simulate", "replay"):
        assert main([command, "m.yaml", "--extension", "json:dumps"]) == 2
        assert capsys.readouterr().err == (
            f"pi-continuity-harness {command}: m.yaml: extensions[1].module: "
            f"cannot import 'no_such_module': No module named 'no_such_module' (looked in {tmp_path} and on sys.path)\n"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.yaml"]


def test_unwritable_output_paths_exit_2(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    args = ["simulate", str(EXAMPLE), "--workdir", str(tmp_path / "r"), "--extension", probe]
    assert main([*args, "--trace", str(taken)]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness simulate: --trace {taken}: is a directory\n"
    assert not (tmp_path / "r").exists(), "nothing simulated when an output path is wrong"
    assert main(["schema", "--output", str(taken)]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness schema: --output {taken}: is a directory\n"
    assert list(taken.iterdir()) == []


def test_bad_extension_and_foreign_workdir_exit_2(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "simulate",
                str(EXAMPLE),
                "--workdir",
                str(tmp_path / "r"),
                "--extension",
                "no_such_module:factory",
            ]
        )
        == 2
    )
    assert "cannot import 'no_such_module'" in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x", encoding="utf-8")
    assert main(["simulate", str(EXAMPLE), "--workdir", str(foreign), "--extension", probe]) == 2
    assert "refusing to clear it" in capsys.readouterr().err
    assert sorted(p.name for p in foreign.iterdir()) == ["keep.txt"], "not even the lock file is left"
    assert (foreign / "keep.txt").exists()


def test_replay_matches_a_recorded_trace(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(EXAMPLE), "--workdir", str(tmp_path / "a"), "--extension", probe]) == 0
    recorded = tmp_path / "a" / "trace.jsonl"
    capsys.readouterr()
    status = main(
        [
            "replay",
            str(EXAMPLE),
            "--expect-trace",
            str(recorded),
            "--workdir",
            str(tmp_path / "b"),
            "--extension",
            probe,
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines()[-1].startswith(f"replay matches {recorded}: ")
    assert out.splitlines()[-1].endswith("byte-identical")
    assert out.startswith("t=0ms      host     scenario")


def test_replay_reports_the_first_differing_record(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(EXAMPLE), "--workdir", str(tmp_path / "a"), "--extension", probe]) == 0
    lines = (tmp_path / "a" / "trace.jsonl").read_text().splitlines()
    record = json.loads(lines[10])
    record["tampered"] = True
    lines[10] = json.dumps(record, separators=(",", ":"))
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    args = [
        "replay",
        str(EXAMPLE),
        "--expect-trace",
        str(tampered),
        "--workdir",
        str(tmp_path / "b"),
        "--extension",
        probe,
        "--quiet",
    ]
    assert main(args) == 1
    out = capsys.readouterr().out
    # The first differing record by index, line and kind:name, then the field and both values.
    assert out.startswith(
        f"replay DIFFERS from {tampered}: first difference at record 10 "
        f"(line 11, {record['kind']}:{record['name']}): $.tampered: expected true, actual (absent)"
    )
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    assert main([*args[:3], str(short), *args[4:]]) == 1
    assert "first difference at record 5 (line 6, " in (out := capsys.readouterr().out)
    assert "only the actual trace has it" in out
    assert (
        main(
            [
                "replay",
                str(EXAMPLE),
                "--seed",
                "8",
                "--expect-trace",
                str(tmp_path / "a" / "trace.jsonl"),
                "--workdir",
                str(tmp_path / "c"),
                "--extension",
                probe,
                "--quiet",
            ]
        )
        == 1
    )


def test_replay_refuses_a_trace_as_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "trace.jsonl")]) == 2
    assert "pass the trace with --expect-trace" in capsys.readouterr().err
    assert main(["replay", str(EXAMPLE), "--expect-trace", str(tmp_path / "none.jsonl")]) == 2


SESSION_FILE = REPO / "tests" / "fixtures" / "sessions" / "recorded-on-pi-1.6.jsonl"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            SESSION_FILE.read_bytes(),
            "line 1: not a trace record (a JSON object with kind and name): is it the run's trace.jsonl?",
        ),
        (
            b'{"seq":0,"kind":"host","name":"scenario"}\n{broken\n',
            "line 2: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)): is it the run's trace.jsonl?",
        ),
        (b"", "is empty: a trace starts with its host:scenario record"),
        (b"\xff\n", "not UTF-8 text (invalid start byte)"),
    ],
    ids=["a-session-file", "a-broken-line", "empty", "not-utf-8"],
)
def test_replay_refuses_an_expected_trace_that_is_not_a_trace_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str
) -> None:
    """Before: another file (a session file, say) ran the replay and reported DIFFERS (exit 1)
    as if the run had changed; a file that is not UTF-8 ended in a traceback."""
    given = tmp_path / "given.jsonl"
    given.write_bytes(content)
    workdir = tmp_path / "run"
    assert main(["replay", str(EXAMPLE), "--expect-trace", str(given), "--workdir", str(workdir)]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness replay: --expect-trace {given}: {problem}\n"
    assert not workdir.exists()


def test_schema_prints_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == scenario_json_schema()
    (tmp_path / "s").mkdir()  # a missing directory is refused (tests/cli/test_output_paths.py)
    assert main(["schema", "--output", str(tmp_path / "s" / "schema.json")]) == 0
    assert (tmp_path / "s" / "schema.json").read_text(encoding="utf-8") == printed


def test_committed_schema_is_the_generated_one() -> None:
    committed = REPO / "docs" / "schema" / "scenario.schema.json"
    assert committed.read_text(encoding="utf-8") == render_scenario_schema(), (
        "docs/schema/scenario.schema.json is stale: run "
        "`pi-continuity-harness schema --output docs/schema/scenario.schema.json`"
    )


def test_run_prints_the_named_assertions_and_its_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    assert main(["run", "-k", "stale and inert", "--quiet", "--json", str(results)]) == 0
    out = capsys.readouterr().out
    assert "reload-stale-is-inert" in out and "1 passed, 0 failed, 0 skipped" in out
    assert [r["status"] for r in json.loads(results.read_text(encoding="utf-8"))["results"]] == ["passed"]
    assert main(["run", "-k", "no_such_scenario_anywhere", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness run: -k 'no_such_scenario_anywhere' selects no scenario of the suite\n"
    )


def test_run_refuses_bad_arguments_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--json", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness run: --json {tmp_path}: is a directory\n"
    missing = tmp_path / "missing.ts"
    assert main(["run", "--target", "pi", "--extension", str(missing)]) == 2
    assert (
        capsys.readouterr().err
        == f"pi-continuity-harness run: --extension {missing}: no such TypeScript file\n"
    )


def _recorded(tmp_path: Path, extension: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    """A trace recorded with seed 5 (the example's own is 7) and ``extension``, and the
    ``replay`` command that gives only the scenario and that trace."""
    workdir = tmp_path / "recorded"
    assert (
        main(["simulate", str(EXAMPLE), "--seed", "5", "--extension", extension, "--workdir", str(workdir)])
        == 0
    )
    capsys.readouterr()
    trace = workdir / "trace.jsonl"
    return trace, ["replay", str(EXAMPLE), "--expect-trace", str(trace), "--quiet"]


def test_rule_replay_takes_the_seed_and_the_implementation_a_recorded_trace_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI artifact's trace, replayed with the scenario alone: the seed comes from the trace's
    first record (before, the scenario's own seed ran and the replay DIFFERED at record 0), and
    so does the implementation when it is the harness's own (a mutant) or an installed one.
    Given on the command line, the options win and a difference is reported."""
    mutant = "pi_continuity_harness.mutants.catalogue:canary_cancels_every_compaction"
    recorded, replay = _recorded(tmp_path, mutant, capsys)
    assert main([*replay, "--workdir", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"replaying with the seed 5 and the implementation {mutant} that {recorded} records"
    assert out[-1].startswith(f"replay matches {recorded}: ")
    assert main([*replay, "--workdir", str(tmp_path / "c"), "--seed", "7"]) == 1
    assert "$.seed: expected 5, actual 7" in capsys.readouterr().out
    assert main([*replay, "--workdir", str(tmp_path / "d"), "--extension", "reference"]) == 1
    assert f'$.implementation: expected "{mutant}", actual "reference"' in capsys.readouterr().out


def test_rule_replay_runs_no_other_module_a_recorded_trace_names(
    tmp_path: Path, probe: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trace is data, perhaps downloaded: a ``module:factory`` of the user's (or of whoever
    made the trace) is named with the option to give, not imported (a trace naming ``os:system``
    would have run it). The seed is still taken; the replay runs the reference and differs."""
    recorded, replay = _recorded(tmp_path, probe, capsys)
    assert main([*replay, "--workdir", str(tmp_path / "f")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{recorded} was recorded with the implementation {probe}: give --extension {probe} to replay it with that one"
    )
    assert out[1] == f"replaying with the seed 5 that {recorded} records"
    assert f'$.implementation: expected "{probe}", actual "reference"' in out[-1]
    assert main([*replay, "--workdir", str(tmp_path / "g"), "--extension", probe]) == 0
