"""``--html PATH`` on the commands: the page is written whatever the verdict, and a page that
could not be written is refused before any work starts (exit status 2)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main

from .conftest import MUTANT, SMALL
from .html_dom import parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STEER = "pi_continuity_harness.mutants.catalogue:continuation_as_steer"


def test_run_html_writes_the_page_of_a_failing_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "out" / "run.html"
    code = main(["run", "--extension", MUTANT, "-k", SMALL, "--workdir", str(tmp_path / "w"), "--quiet",
                 "--html", str(page), "--html-timelines", "failed"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1  # the mutant fails a scenario; the page is written all the same
    assert f"HTML report written to {page}" in out
    dom = parse(page.read_text(encoding="utf-8"))
    assert next(a["data-status"] for a in dom.tags("details") if a.get("data-status")) == "failed"
    assert len([i for i in dom.ids() if i.endswith("-timeline")]) == 1


def test_run_html_without_workdir_reads_the_machines_then_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --workdir a passing run's machines go to a temporary directory removed after the
    run (features/suite.py); the page reads them, so they stay until the page is written."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temporary))
    page = tmp_path / "run.html"
    code = main(["run", "-k", "compactionsummaryisdiskbrief", "--quiet", "--html", str(page)])
    assert code == 0, capsys.readouterr().err
    dom = parse(page.read_text(encoding="utf-8"))
    assert {"s1-chart", "s1-threshold"} <= dom.ids()  # drawn from the scenario's machine
    assert "is gone" not in dom.text
    assert list(temporary.iterdir()) == []  # and removed afterwards


def test_simulate_html_writes_the_page_of_one_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "sim.html"
    code = main(["simulate", str(EXAMPLES / "model-change.yaml"), "--workdir", str(tmp_path / "w"),
                 "--html", str(page)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    dom = parse(page.read_text(encoding="utf-8"))
    assert {
        "s1-chart",
        "s1-threshold",
        "s1-model-change-1",
        "s1-compaction-1-threshold-committed",
    } <= dom.ids()
    assert "name: model-change" in dom.text  # the scenario file itself


def test_explore_html_writes_seeds_failures_and_the_replay_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))  # a failing seed's run is kept: keep it here
    page = tmp_path / "explore.html"
    code = main(["explore", "--seeds", "1", "--steps", "30", "--extension", STEER, "--out", str(tmp_path / "out"),
                 "--quiet", "--html", str(page)])  # fmt: skip
    capsys.readouterr()
    assert code == 1
    dom = parse(page.read_text(encoding="utf-8"))
    assert "pi-continuity-harness replay" in dom.text and "continuation_is_follow_up" in dom.text
    assert "seed-0" in dom.ids() and any(re.fullmatch(r"e1-chart", i) for i in dom.ids())
    assert "Feature:" in dom.text  # the regression .feature


@pytest.mark.parametrize("command", ["run", "compare", "explore", "simulate"])
def test_html_without_the_report_extra_is_refused_before_any_work(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "markdown_it", None)  # import markdown_it now fails
    workdir = tmp_path / "work"
    args = {
        "run": ["run", "--workdir", str(workdir)],
        "compare": ["compare", "--workdir", str(workdir)],
        "explore": ["explore", "--out", str(workdir)],
        "simulate": ["simulate", str(EXAMPLES / "model-change.yaml"), "--workdir", str(workdir)],
    }[command]
    assert main([*args, "--html", str(tmp_path / "page.html")]) == 2
    err = capsys.readouterr().err
    assert "--html: the HTML report needs the 'report' extra (markdown-it-py not installed)" in err
    assert "pip install 'pi-continuity-harness[report]'" in err
    assert not workdir.exists() and not (tmp_path / "page.html").exists()


def test_html_to_a_directory_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--workdir", str(tmp_path / "work"), "--html", str(tmp_path)]) == 2
    assert f"--html {tmp_path}: is a directory" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert (
        main(["simulate", str(EXAMPLES / "reload.yaml"), "--html", str(tmp_path / "file" / "page.html")]) == 2
    )
    assert "a parent of it is not a directory" in capsys.readouterr().err


def test_a_page_that_cannot_be_encoded_leaves_the_old_page_and_no_partial_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``Path.write_text`` truncated the page, then failed to encode a lone surrogate
    (a traceback, a 0-byte page). Now the page is encoded first and renamed into place: the
    command refuses it (exit 2 through UsageError) and the old page stays as it was."""
    from pi_continuity_harness.commands import UsageError  # noqa: PLC0415
    from pi_continuity_harness.commands._report import write_html_report  # noqa: PLC0415
    from pi_continuity_harness.report import write_html  # noqa: PLC0415

    page = tmp_path / "d.html"
    page.write_text("<p>old</p>", encoding="utf-8")
    with pytest.raises(UsageError, match=r"d\.html: the page has text UTF-8 cannot encode .*nothing written"):
        write_html_report(page, lambda: "<p>\ud800</p>")
    with pytest.raises(UnicodeEncodeError):
        write_html(page, "<p>\ud800</p>")
    assert page.read_text(encoding="utf-8") == "<p>old</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.html"]
    write_html_report(page, lambda: "<p>new \u00e9</p>")
    assert page.read_text(encoding="utf-8") == "<p>new \u00e9</p>"
    assert "HTML report written to" in capsys.readouterr().out


def test_rule_a_page_is_the_same_bytes_in_any_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same scenario and seed, simulated in two directories of different lengths, give the
    same page: the files it names (the scenario, artifacts, request files, the work directory)
    are shown relative to the page, and each such path names the file from the page's place."""
    pages = []
    for where in (tmp_path / "a", tmp_path / "a-much-longer-directory" / "inside"):
        where.mkdir(parents=True)
        (where / "s.yaml").write_bytes((EXAMPLES / "threshold-compaction.yaml").read_bytes())
        monkeypatch.chdir(where)
        code = main(["simulate", "s.yaml", "--seed", "3", "--workdir", "w", "--html", "page.html"])
        assert code == 0, capsys.readouterr().err
        pages.append((where, (where / "page.html").read_text(encoding="utf-8")))
    (first, page), (_, other) = pages
    assert str(tmp_path) not in page
    assert page == other
    shown = re.findall(r"<code>(w/[^<]*)</code>", page)
    assert any("/requests/" in p for p in shown) and any("/project/" in p for p in shown), shown
    assert all((first / p).exists() for p in shown), [p for p in shown if not (first / p).exists()]
