"""The rule catalogue: it loads, it refuses bad input by name, and its coverage finds problems.

The conventions of docs/rules.md are checked here on synthetic inputs (each check must be able to
fail), and on the real catalogues (every static check it names exists).
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from pi_continuity_harness.rules import (
    InvariantRef,
    MutantRef,
    RuleCatalogueError,
    ScenarioRef,
    compute_coverage,
    load_catalogue,
    parse_catalogue,
    rules_in_tags,
    systems,
)
from pi_continuity_harness.rules.catalogue import CATALOGUE_DIR

REPO = Path(__file__).resolve().parents[2]
PSC = "pi-session-continuity"


def _raw(system: str = PSC) -> dict[str, Any]:
    name = "psc.yaml" if system == PSC else "blitz.yaml"
    data: dict[str, Any] = yaml.safe_load((CATALOGUE_DIR / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("system", systems())
def test_each_catalogue_loads_with_unique_ids_of_its_own_prefix(system: str) -> None:
    catalogue = load_catalogue(system)
    ids = catalogue.ids()
    assert len(ids) == len(set(ids)) > 100
    prefix = "P" if system == PSC else "H"
    assert all(rule_id.startswith(prefix) for rule_id in ids)
    assert all(rule.text and rule.section for rule in catalogue.rules)


@pytest.mark.parametrize("system", systems())
def test_every_static_check_and_unit_test_names_a_test_that_exists(system: str) -> None:
    for rule in load_catalogue(system).rules:
        for named in (rule.check, rule.unit):
            if named is not None:
                _test_exists(rule.id, named)


def _test_exists(rule_id: str, named: str) -> None:
    """``path::test_name`` names a test function that exists."""
    path, _, name = named.partition("::")
    source = REPO / path
    assert source.is_file(), f"{rule_id}: {path} does not exist"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    functions = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert name in functions, f"{rule_id}: {path} has no test {name}"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["rules"].append(copy.deepcopy(d["rules"][0])), "rule P1 is listed twice"),
        (lambda d: d["rules"][0].update(colour="red"), "rule P1 (rules.0.colour): Extra inputs"),
        (lambda d: d["rules"][0].update(id="H1"), "rule H1: ids of pi-session-continuity start with 'P'"),
        (lambda d: d["rules"][0].update(kind="maybe"), "rule P1 (rules.0.kind)"),
        (lambda d: d["rules"][0].update(check="tests/x.py::y"), "P1: check names a static check"),
        (lambda d: d["rules"][0].update(no_mutant="hard"), "P1: only a static rule may go without a mutant"),
        (lambda d: d.update(rules=[]), "the catalogue lists no rule"),
        (
            lambda d: d["rules"][0].update(unit="tests/x.py::y"),
            "P1: unit names the unit test of a rule marked",
        ),
        (lambda d: d["rules"][0].update(unchecked=""), "rule P1 (rules.0.unchecked)"),
    ],
)
def test_a_bad_catalogue_is_refused_naming_the_file_and_the_rule(change: Any, expected: str) -> None:
    data = _raw()
    change(data)
    with pytest.raises(RuleCatalogueError) as caught:
        parse_catalogue(data, "psc.yaml")
    assert str(caught.value).startswith("psc.yaml: ")
    assert expected in str(caught.value)


def test_the_system_of_a_catalogue_is_checked() -> None:
    with pytest.raises(
        RuleCatalogueError, match="system is 'pi-session-continuity', expected 'pi-blitz-handoff'"
    ):
        parse_catalogue(_raw(), "psc.yaml", system="pi-blitz-handoff")


def test_rule_tags_name_rules() -> None:
    assert rules_in_tags({"smoke", "rule-P3a", "rule-P1", "host", "needs-fs-faults"}) == ("P1", "P3a")


def _scenario(name: str, *tags: str) -> ScenarioRef:
    return ScenarioRef(PSC, "pi_session_continuity/x.feature", name, frozenset(tags))


def test_coverage_counts_scenarios_invariants_and_mutants_per_rule() -> None:
    catalogue = load_catalogue(PSC)
    report = compute_coverage(
        catalogue,
        [_scenario("a", "rule-P1", "smoke"), _scenario("b", "rule-P2")],
        [InvariantRef(PSC, "inv", ("P1",))],
        [MutantRef(PSC, "m", ("P1", "P2"))],
    )
    by_id = {entry.rule.id: entry for entry in report.rules}
    assert by_id["P1"].scenarios == ["pi_session_continuity/x.feature :: a"]
    assert by_id["P1"].invariants == ["inv"] and by_id["P1"].mutants == ["m"] and by_id["P1"].ok
    assert by_id["P2"].ok and not by_id["P3a"].ok
    assert by_id["P3a"].problems == [
        "no scenario is tagged @rule-P3a and no invariant declares it",
        "no mutant breaks it",
    ]
    assert not report.errors and not report.ok
    assert report.totals()["checked_by_feature"] == 2 and report.totals()["with_mutant"] == 2


def test_a_rule_the_catalogue_does_not_know_is_an_error_wherever_it_is_named() -> None:
    report = compute_coverage(
        load_catalogue(PSC),
        [_scenario("a", "rule-P999"), _scenario("b", "rule-H1a")],
        [InvariantRef(PSC, "inv", ("P3",))],
        [MutantRef(PSC, "m", ("Pnope",)), MutantRef(PSC, "bare", ())],
    )
    assert report.errors == [
        "pi_session_continuity/x.feature :: a: @rule-P999 is not a rule of pi-session-continuity",
        "pi_session_continuity/x.feature :: b: @rule-H1a is not a rule of pi-session-continuity",
        "invariant inv: declares P3, not a rule of pi-session-continuity",
        "mutant m: declares Pnope, not a rule of pi-session-continuity",
        "mutant bare: declares no rule it breaks",
    ]


def test_a_host_scenario_proves_no_rule() -> None:
    report = compute_coverage(load_catalogue(PSC), [_scenario("h", "host", "rule-P1")], [], [])
    assert len(report.errors) == 1 and "tagged @host" in report.errors[0] and "@rule-P1" in report.errors[0]
    assert not next(e for e in report.rules if e.rule.id == "P1").scenarios


def test_a_static_rule_needs_its_check_and_a_mutant_or_a_reason() -> None:
    data = _raw()
    static = next(r for r in data["rules"] if r["kind"] == "static")
    static.pop("check", None)
    static.pop("no_mutant", None)
    report = compute_coverage(parse_catalogue(data, "psc.yaml"), [], [], [])
    entry = next(e for e in report.rules if e.rule.id == static["id"])
    assert "a static rule with no static check named (check:)" in entry.problems
    assert "no mutant breaks it" in entry.problems
    static.update(check="tests/reference/test_psc_vocabulary.py::x", no_mutant="a reason")
    report = compute_coverage(parse_catalogue(data, "psc.yaml"), [], [], [])
    assert next(e for e in report.rules if e.rule.id == static["id"]).ok


def test_other_systems_inputs_are_left_out() -> None:
    report = compute_coverage(
        load_catalogue(PSC),
        [ScenarioRef("pi-blitz-handoff", "pi_blitz_handoff/x.feature", "a", frozenset({"rule-H1a"}))],
        [InvariantRef("pi-blitz-handoff", "i", ("H1a",))],
        [MutantRef("pi-blitz-handoff", "m", ())],
    )
    assert not report.errors


def test_an_unchecked_rule_says_why_and_is_reported_as_unchecked_not_as_covered() -> None:
    data = _raw()
    # The catalogue's own unchecked rules (each with its unit test) count too.
    marked = sum(1 for r in data["rules"] if r.get("unchecked"))
    with_unit = sum(1 for r in data["rules"] if r.get("unchecked") and r.get("unit"))
    rule = next(r for r in data["rules"] if r["kind"] == "behaviour" and not r.get("unchecked"))
    rule.update(unchecked="the colour of a widget line is not observable over RPC", unit="tests/x.py::y")
    catalogue = parse_catalogue(data, "psc.yaml")
    report = compute_coverage(catalogue, [], [], [])
    entry = next(e for e in report.rules if e.rule.id == rule["id"])
    assert entry.ok and entry.unchecked and not entry.checked and not entry.mutants
    assert report.totals()["unchecked_with_reason"] == marked + 1
    assert report.totals()["unit_only"] == with_unit + 1
    assert entry.to_json()["unchecked"] == rule["unchecked"]
    # A mark on a rule a scenario checks is stale: a problem, and the rule no longer counts as unchecked.
    report = compute_coverage(catalogue, [_scenario("a", f"rule-{rule['id']}")], [], [])
    entry = next(e for e in report.rules if e.rule.id == rule["id"])
    assert not entry.ok and "drop the mark" in entry.problems[0] and not entry.unchecked
    assert report.totals()["unchecked_with_reason"] == marked


def test_a_static_rule_cannot_be_marked_unchecked() -> None:
    data = _raw()
    static = next(r for r in data["rules"] if r["kind"] == "static")
    static.update(unchecked="why")
    with pytest.raises(RuleCatalogueError, match="unchecked is for behaviour rules"):
        parse_catalogue(data, "psc.yaml")
