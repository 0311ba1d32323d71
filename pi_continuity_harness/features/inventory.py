"""Every scenario of the suite with its tags, read from the feature files without running them.

The rule coverage (``pi-continuity-harness rules``) needs to know which scenario is tagged with
which rule; the kill matrix needs to know which scenarios prove a mutant's rules. Both read the
feature files with pytest-bdd's own parser, so the scenarios and their names are exactly those a
run reports: one per scenario, and one per Examples row of an outline, named
``<scenario> [<row values joined by ->]`` as pytest-bdd names the row's test (its tags are the
feature's, the scenario's and the Examples block's).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pytest_bdd.parser import FeatureParser

from pi_continuity_harness.features import SUITE_DIR
from pi_continuity_harness.rules import ScenarioRef
from pi_continuity_harness.scenario.implementations import SYSTEMS

__all__ = ["feature_files", "scenarios"]


def feature_files(system: str | None = None) -> list[Path]:
    """The feature files of ``system`` (every system's when None), sorted."""
    directories = [s.features for s in SYSTEMS.values() if system is None or s.name == system]
    return sorted(path for directory in directories for path in (SUITE_DIR / directory).rglob("*.feature"))


def scenarios(system: str | None = None) -> tuple[ScenarioRef, ...]:
    """Every scenario (and Examples row) of ``system``'s features, in file order."""
    return tuple(ref for path in feature_files(system) for ref in _scenarios_of(path))


@cache
def _scenarios_of(path: Path) -> tuple[ScenarioRef, ...]:
    relative = path.relative_to(SUITE_DIR).as_posix()
    system = next(s.name for s in SYSTEMS.values() if relative.startswith(f"{s.features}/"))
    feature = FeatureParser(str(SUITE_DIR), relative).parse()
    out: list[ScenarioRef] = []
    for template in feature.scenarios.values():
        rule_tags = set() if template.rule is None else set(template.rule.tags)
        tags = frozenset(feature.tags | template.tags | rule_tags)
        blocks = [block for block in template.examples if block]
        if not blocks:
            out.append(ScenarioRef(system, relative, template.name, tags))
            continue
        for block in blocks:
            for context in block.as_contexts():
                row = "-".join(context.values())
                out.append(ScenarioRef(system, relative, f"{template.name} [{row}]", tags | set(block.tags)))
    return tuple(out)
