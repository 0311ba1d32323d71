"""The pages: their sections, failures first, determinism, and each command's page."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands.compare import compare_runs
from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.report import render_compare, render_matrix, render_run
from pi_continuity_harness.report.compare_page import CHANNELS, side_by_side
from pi_continuity_harness.targets import comparison

from .conftest import MUTANT, SMALL, copy_run
from .html_dom import parse

MATRIX = Path(__file__).with_name("matrix.json")


def test_the_run_page_has_every_section_failures_first(small_run: dict[str, Any]) -> None:
    html = render_run(small_run["record"])
    dom = parse(html)
    found = dom.ids()
    assert {"summary", "assertions", "rules", "scenarios"} <= found
    statuses = [a["data-status"] for a in dom.tags("details") if a.get("data-status")]
    assert statuses == ["failed", "passed", "passed"]
    assert next(a["data-status"] for a in dom.tags("tr") if a.get("data-status")) == "failed"
    # the failing step with its expectation and observation, and the steps after it not run
    assert any(i.endswith("-failing") for i in found)
    assert "the summary is not the Brief on disk" in dom.text
    states = [a["data-state"] for a in dom.tags("li") if a.get("data-state")]
    assert states.count("failed") == 1 and "not-run" in states
    # per scenario a chart, with the threshold, the window and the compaction markers
    assert len([i for i in found if re.fullmatch(r"s\d-chart", i)]) == 3
    assert any(re.fullmatch(r"s\d-threshold", i) for i in found) and any(
        re.fullmatch(r"s\d-window", i) for i in found
    )
    assert any(re.fullmatch(r"s\d-compaction-\d-threshold-committed", i) for i in found)
    assert any(re.fullmatch(r"s\d-compaction-\d-\w+-cancelled", i) for i in found)
    assert any(re.fullmatch(r"s\d-abort-\d", i) for i in found)
    assert any(re.fullmatch(r"s\d-model-change-\d", i) for i in found)
    assert "trace (host runtime record)" in dom.text  # where the window and reserve came from
    # Briefs: frontmatter as a table, hash, Markdown body; the timeline
    assert dom.tags("table") and any(a.get("class") == "fm" for a in dom.tags("table"))
    assert "sha256" in dom.text and "<h2>" in html
    assert any(i.endswith("-timeline") for i in found)


def test_the_page_is_self_contained_and_has_no_script(small_run: dict[str, Any]) -> None:
    html = render_run(small_run["record"])
    dom = parse(html)
    assert not [t for t, _ in dom.elements if t in ("script", "iframe", "object", "embed", "link", "img")]
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert not [k for _, attrs in dom.elements for k in attrs if k.startswith("on")]
    [csp] = [a["content"] for a in dom.tags("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None and "default-src 'none'" in csp and "script-src" not in csp


def test_the_run_page_is_the_same_bytes_twice(small_run: dict[str, Any]) -> None:
    assert render_run(small_run["record"]) == render_run(small_run["record"])


def test_timelines_can_be_left_out_but_for_failures(small_run: dict[str, Any]) -> None:
    ids = {
        mode: parse(render_run(small_run["record"], timelines=mode)).ids()
        for mode in ("all", "failed", "none")
    }
    count = {mode: len([i for i in found if i.endswith("-timeline")]) for mode, found in ids.items()}
    assert count == {"all": 3, "failed": 1, "none": 0}


def _rule_rows(html: str) -> list[tuple[str, str]]:
    section = html[html.index('id="rules"') : html.index('id="scenarios"')]
    return re.findall(r'<tr class="([\w ]+)" data-rule="([\w-]+)">', section)


def test_a_row_per_rule_failures_first_from_the_run_s_verdicts(small_run: dict[str, Any]) -> None:
    record = small_run["record"]
    rows = _rule_rows(render_run(record))
    verdicts = {v["rule"]: v["status"] for v in record["rules"]}
    failing = next(r for r in record["assertions"] if r["status"] == "failed")
    assert failing["rules"] and all(verdicts[rule] == "failed" for rule in failing["rules"])
    statuses = [status for status, _ in rows]
    assert statuses == sorted(statuses, key=lambda status: status != "failed")  # failures first
    assert {rule for status, rule in rows if status == "failed"} == set(failing["rules"])
    assert {rule for status, rule in rows} == {
        rule for rule, status in verdicts.items() if status != "not run"
    }
    not_run = sum(1 for status in verdicts.values() if status == "not run")
    assert f"{not_run} rules not run here" in parse(render_run(record)).text


def test_without_verdicts_the_rules_the_scenarios_carry_are_grouped(small_run: dict[str, Any]) -> None:
    record = json.loads(json.dumps(small_run["record"]))
    del record["rules"]
    for index, result in enumerate(record["assertions"]):
        result["rules"] = ["X1", f"X{100 + index}"]
    rows = _rule_rows(render_run(record))
    failing = next(i for i, r in enumerate(record["assertions"]) if r["status"] == "failed")
    assert rows[0] == ("failed", "X1") and ("failed", f"X{100 + failing}") in rows and len(rows) == 4
    for result in record["assertions"]:
        result["rules"], result["tags"] = [], []
    assert "These results carry no rule ids" in parse(render_run(record)).text


def test_kept_model_requests_are_shown_whole_and_escaped(small_run: dict[str, Any], tmp_path: Path) -> None:
    run = copy_run(small_run, tmp_path)
    first = run["record"]["assertions"][0]
    requests = Path(first["observed"]["workdir"]) / "requests"
    # The simulator keeps its own requests/ (issue 12); the test writes two of its own instead.
    shutil.rmtree(requests, ignore_errors=True)
    requests.mkdir()
    for n in (10, 2):  # numbers sort as numbers
        (requests / f"agent-{n}.json").write_text(
            json.dumps({"messages": [{"role": "user", "content": f"FULL-REQUEST-{n} <b>"}]}), encoding="utf-8"
        )
    html = render_run(dict(run["record"], assertions=[first]))
    assert html.index("FULL-REQUEST-2 &lt;b&gt;") < html.index("FULL-REQUEST-10 &lt;b&gt;")
    assert "s1-requests" in parse(html).ids()
    assert "no <code>requests/</code> directory" not in html
    shutil.rmtree(requests)
    assert "no <code>requests/</code> directory" in render_run(dict(run["record"], assertions=[first]))


def test_an_unreadable_trace_is_noted_in_its_scenario(small_run: dict[str, Any], tmp_path: Path) -> None:
    run = copy_run(small_run, tmp_path)
    first = run["record"]["assertions"][0]
    trace = Path(first["observed"]["workdir"]) / "trace.jsonl"
    trace.write_text(trace.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    text = parse(render_run(dict(run["record"], assertions=[first]))).text
    assert f"{trace}: line " in text and "not JSON" in text


def test_a_trace_line_nested_too_deeply_is_noted_in_its_scenario(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    """json's C decoder recurses per level: before, the report ended in a RecursionError."""
    run = copy_run(small_run, tmp_path)
    first = run["record"]["assertions"][0]
    trace = Path(first["observed"]["workdir"]) / "trace.jsonl"
    lines = trace.read_text(encoding="utf-8").splitlines()
    trace.write_text("\n".join([*lines, "[" * 100_000 + "]" * 100_000]) + "\n", encoding="utf-8")
    text = parse(render_run(dict(run["record"], assertions=[first]))).text
    assert f"{trace}: line {len(lines) + 1}: not JSON: nested too deeply to read" in text


def test_side_by_side_aligns_and_folds_equal_lines() -> None:
    rows = side_by_side([{"a": 1}, {"b": 2}, {"c": 3}], [{"a": 1}, {"b": 9}, {"c": 3}, {"d": 4}])
    assert [r["tag"] for r in rows] == ["equal", "replace", "equal", "insert"]
    assert (rows[1]["sim"], rows[1]["pi"]) == ('{"b": 2}', '{"b": 9}')
    assert ("2", True) in rows[1]["sim_parts"] and ("9", True) in rows[1]["pi_parts"]
    long = [{"i": i} for i in range(50)]
    rows = side_by_side(long, [*long[:25], {"i": "x"}, *long[26:]], context=2)
    assert [r["tag"] for r in rows] == ["skip", "equal", "equal", "replace", "equal", "equal", "skip"]
    assert rows[0]["count"] == 23 and rows[-1]["count"] == 22


def test_the_report_knows_every_channel_the_comparison_has() -> None:
    assert CHANNELS == comparison.CHANNELS


def test_the_compare_page_puts_two_observations_side_by_side(tmp_path: Path) -> None:
    """The reference on the simulator as one side, the mutant as the other: a real comparison
    (outcome and channel differences), through ``compare``'s own pairing code. (``compare``
    itself, on real Pi, is tested in tests/realpi/test_compare_cli.py.)"""
    reference = run_suite(target="sim", keyword=SMALL, workdir=tmp_path / "sim")
    mutant = run_suite(target="sim", extension=MUTANT, keyword=SMALL, workdir=tmp_path / "pi")
    report = compare_runs(reference, mutant, tmp_path).to_json()
    assert all(set(s["observations"]) == {"sim", "pi"} for s in report["scenarios"])
    dom = parse(render_compare(report))
    found = dom.ids()
    assert len([i for i in found if re.fullmatch(r"c\d-sim-chart", i)]) == 3
    assert len([i for i in found if re.fullmatch(r"c\d-pi-chart", i)]) == 3
    assert (
        next(a["class"] for a in dom.tags("details") if a.get("class", "").startswith("scenario"))
        == "scenario failed"
    )
    assert dom.tags("table") and any(a.get("class") == "sbs" for a in dom.tags("table"))
    assert any(a.get("class") == "replace" for a in dom.tags("tr"))
    assert "outcome differs" in dom.text


def test_the_matrix_page_shows_the_grid_of_each_implementation() -> None:
    matrix = json.loads(MATRIX.read_text(encoding="utf-8"))
    dom = parse(render_matrix(matrix))
    cells = [a for a in dom.tags("td") if a.get("class") == "cell"]
    expected = sum(len(i["rows"]) * len(i["pi_versions"]) for i in matrix["implementations"])
    assert len(cells) == expected
    assert {"m1-grid", "m2-grid"} <= dom.ids()
    assert "missing" in [c["data-status"] for c in cells]  # a version a row has no cell for
    assert "1.5.2" in dom.text and "no compaction reason in session_before_compact" in dom.text
    rows = [a.get("class") for a in dom.tags("tr") if a.get("class") is not None]
    assert rows[0] == "failed"  # the row with a failing cell first
    assert "@host" in dom.text and "minimum supported version" in dom.text
