"""Every step line of every feature matches exactly one step definition.

A generic pattern can silently swallow a more specific step (pytest-bdd issue #449), and a
step that matches nothing fails only when its scenario runs; this test catches both for
every scenario and every Examples row, without running anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_bdd.feature import get_features
from pytest_bdd.steps import step_function_context_registry

import pi_continuity_harness.features.steps.blitz
import pi_continuity_harness.features.steps.blitz_then
import pi_continuity_harness.features.steps.failures
import pi_continuity_harness.features.steps.given
import pi_continuity_harness.features.steps.host
import pi_continuity_harness.features.steps.streams
import pi_continuity_harness.features.steps.then
import pi_continuity_harness.features.steps.when  # noqa: F401  (registers the definitions)
from pi_continuity_harness.features import SUITE_DIR


def _feature_files() -> list[Path]:
    return sorted(SUITE_DIR.rglob("*.feature"))


def _rendered_steps() -> list[tuple[str, str, str]]:
    out = []
    for feature in get_features([str(p) for p in _feature_files()]):
        for template in feature.scenarios.values():
            contexts = [row for examples in template.examples for row in examples.as_contexts()] or [{}]
            for context in contexts:
                scenario = template.render(context)
                for step in scenario.steps:
                    out.append((f"{feature.rel_filename}: {scenario.name}", step.type, step.name))
    return out


def test_the_suite_has_features() -> None:
    assert len(_feature_files()) >= 13


@pytest.mark.parametrize("where,kind,text", _rendered_steps())
def test_step_line_matches_exactly_one_definition(where: str, kind: str, text: str) -> None:
    matches = [
        ctx.step_func.__name__
        for ctx in {id(c): c for c in step_function_context_registry.values()}.values()
        if (ctx.type is None or ctx.type == kind) and ctx.parser.is_matching(text)
    ]
    assert len(matches) == 1, f"{where}: {kind} {text!r} matches {len(matches)} definitions: {matches}"
