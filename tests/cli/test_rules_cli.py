"""``pi-continuity-harness rules`` and the per-rule output of ``run``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.commands.rules import coverage_of
from pi_continuity_harness.features.inventory import scenarios
from pi_continuity_harness.features.suite import run_suite

PSC = "pi-session-continuity"


def test_rules_lists_every_rule_and_exits_by_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "coverage.json"
    code = cli(["rules", "--system", PSC, "--json", str(out_file)])
    out = capsys.readouterr().out
    data = json.loads(out_file.read_text(encoding="utf-8"))
    [system] = data["systems"]
    assert system["system"] == PSC and len(system["rules"]) == len(coverage_of(PSC).rules)
    assert code == (0 if data["ok"] else 1)
    assert f"{PSC}: {system['totals']['rules']} rules" in out
    first = system["rules"][0]
    assert set(first) >= {"id", "section", "kind", "scenarios", "invariants", "mutants", "ok", "problems"}


def test_rules_refuses_an_unknown_system(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli(["rules", "--system", "nope"])
    assert caught.value.code == 2


@pytest.mark.parametrize(
    ("make", "given", "problem"),
    [
        (lambda d: (d / "f").write_text("x", encoding="utf-8"), "f/x.json", "f is not a directory"),
        (lambda d: (d / "loop").symlink_to("loop"), "loop", "goes round a loop of symbolic links"),
        (lambda d: None, "missing/x.json", "no such directory: missing"),
    ],
    ids=["under-a-file", "a-link-loop", "in-a-missing-directory"],
)
def test_rules_refuses_a_json_it_cannot_write_before_printing_anything(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], object],
    given: str,
    problem: str,
) -> None:
    """Before: the tables were printed, then a FileExistsError or ELOOP traceback."""
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli(["rules", "--system", PSC, "--json", given]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"pi-continuity-harness rules: --json {given}: {problem}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_inventory_names_scenarios_as_a_run_does(tmp_path: Path) -> None:
    run = run_suite(
        target="sim", extension="reference", workdir=tmp_path / "runs", tags="smoke", keyword="precompact"
    )
    inventory = {ref.name: ref for ref in scenarios(PSC)}
    assert run.results
    for result in run.results:
        assert result.name in inventory, result.name
        assert set(result.tags) >= set(inventory[result.name].tags), result.name


def test_run_json_carries_tags_rules_and_a_verdict_per_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "results.json"
    code = cli(["run", "--rules", "P2", "--quiet", "--by-rule", "--json", str(out_file)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert data["results"] and all("P2" in r["rules"] and "rule-P2" in r["tags"] for r in data["results"])
    verdicts = {v["rule"]: v for v in data["rules"]}
    assert verdicts["P2"]["status"] == "passed" and verdicts["P2"]["scenarios"]
    assert verdicts["P3a"]["status"] == "not run"
    assert "Rules — reference on sim" in out


def test_a_rule_marked_unchecked_is_reported_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """H4a (argument completions) is unchecked: no RPC request reaches them. ``rules`` and
    ``run --by-rule`` say so, with the reason, instead of counting the rule as covered."""
    out_file = tmp_path / "results.json"
    code = cli(
        ["run", "--extension", "blitz", "--rules", "H1a", "--quiet", "--by-rule", "--json", str(out_file)]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    verdicts = {v["rule"]: v for v in json.loads(out_file.read_text(encoding="utf-8"))["rules"]}
    assert verdicts["H4a"]["status"] == "unchecked" and "RPC" in verdicts["H4a"]["unchecked"]
    assert verdicts["H1a"]["status"] == "passed" and "unchecked" not in verdicts["H1a"]
    entry = next(e for e in coverage_of("pi-blitz-handoff").rules if e.rule.id == "H4a")
    assert entry.unchecked and entry.ok and entry.rule.unit


def test_run_refuses_an_unknown_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["run", "--rules", "P999"]) == 2
    assert "P999: no such rule" in capsys.readouterr().err
