"""The Pi version matrix (``pi-continuity-harness matrix``, issue 14), without real Pi: the suite
runs are stand-ins, so these tests pin down how the matrix is assembled, what counts as the
lowest passing version, the JSON shape, the validation record and the command's output and
exit status. The live run is ``tests/realpi/test_pi_versions.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.features import matrix as matrix_module
from pi_continuity_harness.features.matrix import notes, run_matrix, version_key
from pi_continuity_harness.features.suite import ScenarioResult, SuiteRun

NEEDS = "needs busy-while-run-starts (...); target pi 1.0.3 lacks it"


def _result(name: str, assertion: str, status: str, detail: str = "", tags: str = "") -> ScenarioResult:
    return ScenarioResult(
        name=name,
        assertion=assertion,
        system="pi-session-continuity",
        status=status,
        duration_s=1.5,
        detail=detail,
        nodeid=f"test_x.py::test_{name}",
        tags=tags.split(),
    )


class FakeSuite:
    """``run_suite`` stand-in: per (implementation, version) a list of (name, assertion, status)."""

    def __init__(self, plan: dict[tuple[str, str], list[tuple[str, ...]]]) -> None:
        self.plan = plan
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> SuiteRun:
        self.calls.append(kwargs)
        rows = self.plan[(kwargs["extension"], kwargs["pi_version"])]
        results = [_result(*row) for row in rows]
        for index, result in enumerate(results, 1):
            if kwargs.get("on_result"):
                kwargs["on_result"](result, index, len(results))
        return SuiteRun(
            target="pi",
            implementation=kwargs["extension"],
            environment={"host": f"Pi {kwargs['pi_version']} (real, RPC mode)", "pi": kwargs["pi_version"]},
            results=results,
            exit_code=1 if any(r.status == "failed" for r in results) else 0,
            seconds=10.0 * len(results),
        )


def _plan(failing: set[str], versions: tuple[str, ...] = ("1.0.3", "1.3.0", "1.5.2", "1.6.0")) -> FakeSuite:
    plan = {}
    for version in versions:
        status = "failed" if version in failing else "passed"
        plan[("reference", version)] = [
            ("a-one", "alpha", "passed", ""),
            ("a-two", "alpha", status, "AssertionError: boom\nmore" if status == "failed" else ""),
            (
                "b-one",
                "beta",
                "skipped" if version == "1.0.3" else "passed",
                NEEDS if version == "1.0.3" else "",
            ),
        ]
    return FakeSuite(plan)


def test_one_row_per_scenario_one_cell_per_release_oldest_first(tmp_path: Path) -> None:
    suite = _plan(failing={"1.3.0"})
    run = run_matrix(
        pi_versions=["1.6.0", "1.0.3", "1.5.2", "1.3.0"], suite=suite, workdir=tmp_path, tags="smoke"
    )
    [matrix] = run.implementations
    assert matrix.pi_versions == ["1.0.3", "1.3.0", "1.5.2", "1.6.0"]
    assert [c["pi_version"] for c in suite.calls] == matrix.pi_versions
    assert all(c["target"] == "pi" and c["tags"] == "smoke" for c in suite.calls)
    assert suite.calls[0]["workdir"] == tmp_path.resolve() / "reference" / "1.0.3"
    rows = {(r.assertion, r.scenario): r for r in matrix.rows}
    assert list(rows) == [("alpha", "a-one"), ("alpha", "a-two"), ("beta", "b-one")]
    failed = rows[("alpha", "a-two")].cells["1.3.0"]
    assert (failed.status, failed.reason) == ("failed", "AssertionError: boom")
    skipped = rows[("beta", "b-one")].cells["1.0.3"]
    assert (skipped.status, skipped.reason) == ("skipped", NEEDS)
    assert rows[("alpha", "a-one")].cells["1.6.0"].status == "passed"


@pytest.mark.parametrize(
    ("failing", "lowest"),
    [
        (set(), "1.0.3"),  # a capability skip does not count against a release
        ({"1.0.3"}, "1.3.0"),
        ({"1.3.0"}, "1.5.2"),  # a minimum that holds for every newer release tested
        ({"1.6.0"}, None),  # the newest release fails: there is no minimum
    ],
)
def test_the_lowest_version_from_which_on_everything_that_can_run_passes(
    failing: set[str], lowest: str | None, tmp_path: Path
) -> None:
    run = run_matrix(pi_versions=["1.0.3", "1.3.0", "1.5.2", "1.6.0"], suite=_plan(failing), workdir=tmp_path)
    [matrix] = run.implementations
    assert matrix.lowest_passing_version == lowest
    assert run.ok is (not failing)


def test_the_json_has_the_shape_the_report_renders(tmp_path: Path) -> None:
    run = run_matrix(pi_versions=["1.0.3", "1.6.0"], suite=_plan(set()), workdir=tmp_path)
    data = run.to_json()
    assert set(data) == {"implementations", "simulator_models"} and data["simulator_models"] == "1.6.0"
    [impl] = data["implementations"]
    assert set(impl) >= {
        "implementation",
        "system",
        "pi_versions",
        "rows",
        "lowest_passing_version",
        "seconds_per_version",
    }
    assert impl["pi_versions"] == ["1.0.3", "1.6.0"] and impl["seconds_per_version"] == {
        "1.0.3": 30.0,
        "1.6.0": 30.0,
    }
    row = impl["rows"][2]
    assert set(row) == {"assertion", "scenario", "cells", "host"}
    assert row["cells"]["1.0.3"] == {
        "status": "skipped",
        "reason": NEEDS,
        "duration_s": 1.5,
        "capability": "busy-while-run-starts",
    }
    assert row["host"] is False and impl["capability_skips"] == {
        "1.0.3": ["busy-while-run-starts"],
        "1.6.0": [],
    }
    assert impl["counts"]["1.0.3"] == {"passed": 2, "failed": 0, "skipped": 1, "error": 0}


def test_the_validation_record_carries_the_same_matrix(tmp_path: Path) -> None:
    run = run_matrix(pi_versions=["1.0.3", "1.6.0"], suite=_plan({"1.0.3"}), workdir=tmp_path / "w")
    md_path, json_path = run.write_report(tmp_path / "record")
    record = json.loads(json_path.read_text(encoding="utf-8"))
    assert record["implementations"] == run.to_json()["implementations"]
    assert record["install_commands"]["1.0.3"].endswith("install-pi --pi-version 1.0.3")
    assert record["install_commands"]["1.6.0"].endswith("install-pi")
    markdown = md_path.read_text(encoding="utf-8")
    assert "| assertion | 1.0.3 | 1.6.0 |" in markdown
    assert "| alpha | failed 1/2, 1 failed | 2/2 |" in markdown
    assert "| beta | skipped 0/1, 1 skipped | 1/1 |" in markdown
    assert "Lowest Pi version on which everything that can run passes: **1.6.0**" in markdown
    generic = NEEDS.replace("target pi 1.0.3 lacks", "the release lacks")
    assert f"- 1.0.3: skipped beta :: b-one: {generic}" in markdown
    # Each run's own record (spec §20) beside it.
    assert (tmp_path / "record" / "reference" / "1.0.3" / "validation-record.json").is_file()


def test_a_skip_for_what_the_target_lacks_is_not_blamed_on_the_release(tmp_path: Path) -> None:
    """``needs trace-faults`` is the real-Pi target's lack on every release, not a host
    capability of one (targets/realpi/versions.py): the note says so, and it is no capability skip."""
    suite = _plan(set(), versions=("1.5.2", "1.6.0"))
    for rows in suite.plan.values():
        rows.append(("c-one", "gamma", "skipped", "needs trace-faults (...); target pi 1.5.2 lacks it"))
    [matrix] = run_matrix(pi_versions=["1.5.2", "1.6.0"], suite=suite, workdir=tmp_path).implementations
    assert "1.5.2: skipped gamma :: c-one: needs trace-faults (...); the real-Pi target lacks it" in notes(
        matrix
    )
    assert matrix.capability_skips("1.5.2") == []
    assert matrix.minimum_supported_version == "1.5.2"


def test_every_implementation_on_every_release_and_installs_once_per_release(tmp_path: Path) -> None:
    plan = _plan(set(), versions=("1.5.2", "1.6.0")).plan
    plan |= {("blitz", v): [("h-one", "handoff", "passed", "")] for v in ("1.5.2", "1.6.0")}
    suite = FakeSuite(plan)
    installed: list[str] = []
    run = run_matrix(
        pi_versions=["1.5.2", "1.6.0"],
        extensions=["reference", "blitz"],
        suite=suite,
        workdir=tmp_path,
        install=lambda v: installed.append(v) or {"state": "reused"},
    )
    assert installed == ["1.5.2", "1.6.0"]
    assert [(c["extension"], c["pi_version"]) for c in suite.calls] == [
        ("reference", "1.5.2"),
        ("blitz", "1.5.2"),
        ("reference", "1.6.0"),
        ("blitz", "1.6.0"),
    ]
    assert [(m.implementation, m.system) for m in run.implementations] == [
        ("reference", "pi-session-continuity"),
        ("blitz", "pi-blitz-handoff"),
    ]
    assert run.installs["1.5.2"]["state"] == "reused"


def test_a_temporary_workdir_is_removed_when_everything_passed_and_kept_otherwise() -> None:
    passed = run_matrix(pi_versions=["1.6.0"], suite=_plan(set(), versions=("1.6.0",)))
    assert passed.workdir is None
    failed = run_matrix(pi_versions=["1.6.0"], suite=_plan({"1.6.0"}, versions=("1.6.0",)))
    assert failed.workdir is not None and failed.workdir.is_dir()
    failed.workdir.rmdir()  # the stand-in suite wrote nothing under it


def test_the_minimum_supported_version_runs_all_of_the_implementations_own_scenarios(tmp_path: Path) -> None:
    """A skip for a missing host capability keeps a release below the minimum supported one,
    unless the scenario is ``@host`` (it measures Pi, not the implementation); a skip for a
    simulator-only capability never counts."""
    versions = ("1.3.0", "1.5.2", "1.6.0")
    sim_only = "needs trace-faults (crash or inject ...); target pi 1.3.0 lacks it"
    plan = {
        ("reference", v): [
            ("own", "alpha", "skipped" if v == "1.3.0" else "passed", NEEDS if v == "1.3.0" else ""),
            ("probe", "beta", "skipped" if v != "1.6.0" else "passed", NEEDS if v != "1.6.0" else "", "host"),
            ("exact", "gamma", "skipped", sim_only),
        ]
        for v in versions
    }
    run = run_matrix(pi_versions=list(versions), suite=FakeSuite(plan), workdir=tmp_path)
    [matrix] = run.implementations
    assert matrix.lowest_passing_version == "1.3.0"
    assert matrix.minimum_supported_version == "1.5.2"
    assert matrix.capability_skips("1.5.2") == ["busy-while-run-starts"]
    assert matrix.capability_skips("1.5.2", own_only=True) == []
    assert [row.host for row in matrix.rows] == [False, True, False]


def test_versions_compare_numerically() -> None:
    assert sorted(["1.10.0", "1.6.0", "1.0.3"], key=version_key) == ["1.0.3", "1.6.0", "1.10.0"]


# ----------------------------------------------------------------------------- the command
@pytest.fixture
def fake_pi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeSuite:
    suite = _plan({"1.3.0"}, versions=("1.3.0", "1.6.0"))
    monkeypatch.setattr(matrix_module, "run_suite", suite)

    class Installed:
        cached = True
        pi_cli_path = tmp_path / "pi-x" / "dist" / "cli.js"
        pi_package_dir = tmp_path / "pi-x"

    monkeypatch.setattr("pi_continuity_harness.commands.matrix.install_pi", lambda version: Installed())
    return suite


def test_the_command_prints_a_line_per_release_the_table_and_the_lowest_version(
    fake_pi: FakeSuite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json = tmp_path / "m.json"
    code = main(
        ["matrix", "--pi-versions", "1.6.0,1.3.0", "--json", str(out_json), "--workdir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 1  # something failed on 1.3.0
    lines = out.splitlines()
    progress = [line for line in lines if line.startswith("Pi 1.")]
    assert progress == [
        "Pi 1.3.0: reused (" + str(tmp_path / "pi-x") + ")",
        "Pi 1.3.0 · reference: 2 passed, 1 failed, 0 skipped in 30.0 s",
        "Pi 1.6.0: reused (" + str(tmp_path / "pi-x") + ")",
        "Pi 1.6.0 · reference: 3 passed, 0 failed, 0 skipped in 30.0 s",
    ]
    assert "Pi version matrix — reference (pi-session-continuity)" in out
    assert "1.3.0: failed alpha :: a-two: AssertionError: boom" in out
    assert "reference: lowest Pi version on which everything that can run passes: 1.6.0" in out
    assert "(the simulator models Pi 1.6.0)" in out
    assert (
        json.loads(out_json.read_text(encoding="utf-8"))["implementations"][0]["lowest_passing_version"]
        == "1.6.0"
    )


def test_html_writes_the_grid_page_of_the_matrix(
    fake_pi: FakeSuite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``matrix --html`` (issue 17): the page of ``report.matrix_page`` from the matrix's own
    JSON, a cell per scenario and release, the failing row first."""
    page = tmp_path / "matrix.html"
    code = main(
        ["matrix", "--pi-versions", "1.6.0,1.3.0", "--workdir", str(tmp_path / "w"), "--html", str(page)]
    )
    assert code == 1
    assert f"HTML report written to {page}" in capsys.readouterr().out
    html = page.read_text(encoding="utf-8")
    assert html.count('class="cell"') == 3 * 2  # three scenarios, two releases
    assert html.index("a-two") < html.index("a-one")  # the row failing on 1.3.0 comes first
    assert "<script" not in html


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pi-versions", "1.6.0,1.6.0"], "--pi-versions: 1.6.0 is given twice"),
        (["--pi-versions", " , "], "--pi-versions: no version given"),
        (["--pi-versions", "1.6"], "--pi-versions: Pi '1.6' is not supported"),
        (["--extension", "x.ts"], "--extension x.ts: no such TypeScript file"),
        (
            ["--extension", "reference", "--extension", "reference"],
            "--extension: an implementation is given twice",
        ),
        (["--extension", "no_such_module_here:extension"], "--extension no_such_module_here:extension"),
        (["--json", "."], "--json .: is a directory"),
        (["--report", "pyproject.toml"], "--report pyproject.toml: exists and is not a directory"),
        (["--html", "."], "--html .: is a directory"),
        (["-n", "-1"], "-n must not be negative (got -1)"),
    ],
)
def test_bad_input_is_one_clear_error_exit_2_and_nothing_runs(
    argv: list[str], message: str, fake_pi: FakeSuite, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matrix", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert fake_pi.calls == []


def test_an_interrupted_suite_stops_the_matrix(tmp_path: Path) -> None:
    """pytest catches Ctrl-C and returns "interrupted"; the matrix must not go on to the next run."""
    suite = _plan(set(), versions=("1.5.2", "1.6.0"))
    interrupted = suite.__call__

    def once(**kwargs: Any) -> SuiteRun:
        run = interrupted(**kwargs)
        run.exit_code = 2
        return run

    with pytest.raises(KeyboardInterrupt):
        run_matrix(pi_versions=["1.5.2", "1.6.0"], suite=once, workdir=tmp_path)
    assert [c["pi_version"] for c in suite.calls] == ["1.5.2"]


def test_a_scenario_another_release_ran_but_this_one_did_not_fails_the_release(tmp_path: Path) -> None:
    plan = _plan(set(), versions=("1.5.2", "1.6.0")).plan
    plan[("reference", "1.5.2")] = plan[("reference", "1.5.2")][:1]
    run = run_matrix(pi_versions=["1.5.2", "1.6.0"], suite=FakeSuite(plan), workdir=tmp_path)
    [matrix] = run.implementations
    assert not matrix.passes("1.5.2") and matrix.lowest_passing_version == "1.6.0"
    alpha = [row for row in matrix.rows if row.assertion == "alpha"]
    assert matrix_module.assertion_cell(alpha, "1.5.2") == ("failed", "1/2, 1 not run")


def test_n_runs_every_release_in_that_many_processes(fake_pi: FakeSuite, tmp_path: Path) -> None:
    """``matrix -n N`` hands N to every suite run (pytest-xdist, as ``run -n N``); the default is serial."""
    assert main(["matrix", "--pi-versions", "1.6.0,1.3.0", "-n", "2", "--workdir", str(tmp_path)]) == 1
    assert [(c["pi_version"], c["workers"]) for c in fake_pi.calls] == [("1.3.0", 2), ("1.6.0", 2)]
    fake_pi.calls.clear()
    main(["matrix", "--pi-versions", "1.6.0", "--workdir", str(tmp_path / "serial")])
    assert [c["workers"] for c in fake_pi.calls] == [0]


def test_an_interrupted_matrix_removes_its_temporary_directory_unless_something_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A matrix stopped by Ctrl-C or SIGTERM leaves no temporary directory behind when nothing
    had failed, and keeps it (saying where) when a finished run failed."""
    for failing, kept in ((set(), False), ({"1.5.2"}, True)):
        suite = _plan(failing, versions=("1.5.2", "1.6.0"))

        def stop_on_the_second(suite: FakeSuite = suite, **kwargs: Any) -> SuiteRun:
            if kwargs["pi_version"] == "1.6.0":
                raise KeyboardInterrupt
            return suite(**kwargs)

        with pytest.raises(KeyboardInterrupt):
            run_matrix(pi_versions=["1.5.2", "1.6.0"], suite=stop_on_the_second)
        root = suite.calls[0]["workdir"].parent.parent
        assert root.exists() is kept
        assert (f"scenario machines kept for inspection in {root}" in capsys.readouterr().err) is kept
        if kept:
            shutil.rmtree(root)
