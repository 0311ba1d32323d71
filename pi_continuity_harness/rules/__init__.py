"""The rule catalogue of both systems and its coverage (issue 10; docs/rules.md).

:mod:`.catalogue` loads and validates ``psc.yaml`` and ``blitz.yaml`` (every atomic rule of Pi
Session Continuity v0.2.0 and of pi-blitz-handoff 2.0); :mod:`.coverage` computes, from what the
caller found (tagged scenarios, invariants, mutants), which check proves each rule and which
mutant breaks it. The package imports nothing of the harness but :mod:`~pi_continuity_harness.errors`,
so the features, the explorer, the mutants and the commands can all ask it.
"""

from pi_continuity_harness.rules.catalogue import (
    CATALOGUE_FILES,
    Catalogue,
    Rule,
    RuleCatalogueError,
    catalogue_for_rule,
    load_catalogue,
    parse_catalogue,
    systems,
)
from pi_continuity_harness.rules.coverage import (
    HOST_TAG,
    RULE_TAG_PREFIX,
    CoverageReport,
    InvariantRef,
    MutantRef,
    RuleCoverage,
    ScenarioRef,
    compute_coverage,
    rule_tag,
    rules_in_tags,
)

__all__ = [
    "CATALOGUE_FILES",
    "HOST_TAG",
    "RULE_TAG_PREFIX",
    "Catalogue",
    "CoverageReport",
    "InvariantRef",
    "MutantRef",
    "Rule",
    "RuleCatalogueError",
    "RuleCoverage",
    "ScenarioRef",
    "catalogue_for_rule",
    "compute_coverage",
    "load_catalogue",
    "parse_catalogue",
    "rule_tag",
    "rules_in_tags",
    "systems",
]
