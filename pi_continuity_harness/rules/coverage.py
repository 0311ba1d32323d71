"""Which check proves each rule, and which mutant breaks it: the coverage of a catalogue.

The computation is pure: the caller hands in what it found (the feature scenarios with their
tags, the explorer's invariants with the rules they declare, the mutants with the rules they
break; ``commands/rules.py`` gathers them) and gets a :class:`CoverageReport`. The conventions it
enforces (docs/rules.md):

* a feature scenario proves rule ``X`` when it is tagged ``@rule-X``; a scenario tagged
  ``@host`` tests Pi's own behaviour, holds for any extension and so proves no rule;
* an explorer invariant proves the rules it declares (``InvariantSpec.rules``);
* a mutant breaks the rules it declares (``Mutant.rules``);
* a behaviour rule needs a scenario or an invariant, and a mutant;
* a static rule needs its named static check, and a mutant unless it says why none can exist;
* a behaviour rule marked ``unchecked`` (with its reason) is reported as unchecked, not as a
  problem, as long as nothing checks it (a mark on a checked rule is stale: a problem).

A rule id the catalogue does not know, wherever it is named, is an error, as is a ``@host``
scenario that claims a rule: nothing is counted that is not the catalogue's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.rules.catalogue import Catalogue, Rule

__all__ = [
    "HOST_TAG",
    "RULE_TAG_PREFIX",
    "CoverageReport",
    "InvariantRef",
    "MutantRef",
    "RuleCoverage",
    "ScenarioRef",
    "compute_coverage",
    "rule_tag",
    "rules_in_tags",
]

#: ``@rule-P3a``: the scenario proves rule P3a.
RULE_TAG_PREFIX = "rule-"
#: ``@host``: the scenario tests Pi's own behaviour and holds for any extension.
HOST_TAG = "host"


def rule_tag(rule_id: str) -> str:
    return f"{RULE_TAG_PREFIX}{rule_id}"


def rules_in_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """The rule ids named by ``@rule-<id>`` tags, sorted."""
    return tuple(sorted({tag[len(RULE_TAG_PREFIX) :] for tag in tags if tag.startswith(RULE_TAG_PREFIX)}))


@dataclass(frozen=True)
class ScenarioRef:
    """One feature scenario (one Examples block of an outline counts as one), with its tags
    (the feature's, the scenario's and the Examples block's)."""

    system: str
    feature_file: str
    name: str
    tags: frozenset[str]

    @property
    def rules(self) -> tuple[str, ...]:
        return rules_in_tags(self.tags)

    @property
    def host(self) -> bool:
        return HOST_TAG in self.tags

    @property
    def label(self) -> str:
        return f"{self.feature_file} :: {self.name}"


@dataclass(frozen=True)
class InvariantRef:
    """An explorer invariant and the rules it declares."""

    system: str
    name: str
    rules: tuple[str, ...]


@dataclass(frozen=True)
class MutantRef:
    """A mutant and the rules it declares it breaks."""

    system: str
    name: str
    rules: tuple[str, ...]


@dataclass
class RuleCoverage:
    """What checks one rule and what breaks it."""

    rule: Rule
    scenarios: list[str] = field(default_factory=list)
    invariants: list[str] = field(default_factory=list)
    mutants: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def unchecked(self) -> bool:
        """Marked unchecked with a reason, and indeed checked by no scenario or invariant."""
        return self.rule.unchecked is not None and not (self.scenarios or self.invariants)

    @property
    def checked(self) -> bool:
        """Checked against any implementation (a static rule: by its static check)."""
        if self.rule.kind == "static":
            return bool(self.rule.check)
        return bool(self.scenarios or self.invariants)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.rule.id,
            "section": self.rule.section,
            "kind": self.rule.kind,
            "text": self.rule.text,
            "scenarios": self.scenarios,
            "invariants": self.invariants,
            "mutants": self.mutants,
            "static_check": self.rule.check,
            "no_mutant": self.rule.no_mutant,
            "unchecked": self.rule.unchecked,
            "unit": self.rule.unit,
            "ok": self.ok,
            "problems": self.problems,
        }


@dataclass
class CoverageReport:
    """The coverage of one system's catalogue, and every error in what names its rules."""

    system: str
    rules: list[RuleCoverage]
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and all(rule.ok for rule in self.rules)

    def totals(self) -> dict[str, int]:
        behaviour = [r for r in self.rules if r.rule.kind == "behaviour"]
        return {
            "rules": len(self.rules),
            "behaviour": len(behaviour),
            "static": len(self.rules) - len(behaviour),
            "checked_by_feature": sum(1 for r in self.rules if r.scenarios),
            "checked_by_invariant": sum(1 for r in self.rules if r.invariants),
            "checked_by_feature_or_invariant": sum(1 for r in self.rules if r.scenarios or r.invariants),
            "checked_statically": sum(1 for r in self.rules if r.rule.kind == "static" and r.rule.check),
            "with_mutant": sum(1 for r in self.rules if r.mutants),
            "unchecked_with_reason": sum(1 for r in self.rules if r.unchecked),
            "unit_only": sum(1 for r in self.rules if r.unchecked and r.rule.unit),
            "without_problem": sum(1 for r in self.rules if r.ok),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "ok": self.ok,
            "totals": self.totals(),
            "errors": self.errors,
            "rules": [rule.to_json() for rule in self.rules],
        }


def compute_coverage(
    catalogue: Catalogue,
    scenarios: Iterable[ScenarioRef],
    invariants: Iterable[InvariantRef],
    mutants: Iterable[MutantRef],
) -> CoverageReport:
    """The coverage of ``catalogue`` by what belongs to its system among the inputs."""
    system = catalogue.system
    coverage = {rule.id: RuleCoverage(rule) for rule in catalogue.rules}
    errors: list[str] = []
    for scenario in (s for s in scenarios if s.system == system):
        if scenario.host and scenario.rules:
            errors.append(
                f"{scenario.label}: tagged @host (Pi's own behaviour, holds for any extension) "
                f"but claims {', '.join('@' + rule_tag(r) for r in scenario.rules)}"
            )
            continue
        for rule_id in scenario.rules:
            if rule_id not in coverage:
                errors.append(f"{scenario.label}: @{rule_tag(rule_id)} is not a rule of {system}")
            else:
                coverage[rule_id].scenarios.append(scenario.label)
    for invariant in (i for i in invariants if i.system == system):
        for rule_id in invariant.rules:
            if rule_id not in coverage:
                errors.append(f"invariant {invariant.name}: declares {rule_id}, not a rule of {system}")
            else:
                coverage[rule_id].invariants.append(invariant.name)
    for mutant in (m for m in mutants if m.system == system):
        if not mutant.rules:
            errors.append(f"mutant {mutant.name}: declares no rule it breaks")
        for rule_id in mutant.rules:
            if rule_id not in coverage:
                errors.append(f"mutant {mutant.name}: declares {rule_id}, not a rule of {system}")
            else:
                coverage[rule_id].mutants.append(mutant.name)
    for entry in coverage.values():
        entry.problems = _problems(entry)
    return CoverageReport(system, list(coverage.values()), errors)


def _problems(entry: RuleCoverage) -> list[str]:
    rule = entry.rule
    problems: list[str] = []
    if rule.unchecked is not None:
        if entry.scenarios or entry.invariants:
            return [
                f"marked unchecked ({rule.unchecked}) but a scenario or invariant checks it: drop the mark"
            ]
        return []
    if rule.kind == "behaviour" and not (entry.scenarios or entry.invariants):
        problems.append(f"no scenario is tagged @{rule_tag(rule.id)} and no invariant declares it")
    if rule.kind == "static" and not rule.check:
        problems.append("a static rule with no static check named (check:)")
    if not entry.mutants and rule.no_mutant is None:
        problems.append("no mutant breaks it")
    return problems
