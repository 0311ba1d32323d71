"""The YAML snippets of ``docs/scenario-format.md`` are valid scenario parts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from pi_continuity_harness.scenario import load_scenario, parse_scenario
from pi_continuity_harness.scenario.faults import FaultPlan
from pi_continuity_harness.scenario.operations import _OPERATION_KEYS
from pi_continuity_harness.simulator import simulate

from .helpers import EXAMPLES

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def as_scenario(block: str) -> dict[str, Any]:
    data = yaml.safe_load(block)
    base: dict[str, Any] = {
        "name": "doc",
        "models": [
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        ],
    }
    if isinstance(data, list):
        return {**base, "operations": data}
    return {**base, **data}


@pytest.mark.parametrize("block", [b for b in BLOCKS if "{...}" not in b and "[...]" not in b])
def test_doc_snippets_validate(block: str) -> None:
    parse_scenario(as_scenario(block), "docs/scenario-format.md")


def test_every_operation_has_an_example() -> None:
    operations = set()
    for block in BLOCKS:
        data = yaml.safe_load(block)
        if isinstance(data, list):
            for op in data:
                operations.add(op if isinstance(op, str) else next(iter(op)))
    assert operations >= set(_OPERATION_KEYS)  # every operation the scenario format knows


def test_the_documented_tamper_rule_matches_a_file(tmp_path: Path) -> None:
    """The ``faults`` example's tamper fires after the pending Brief's rename and changes it."""
    [faults] = [yaml.safe_load(b)["faults"] for b in BLOCKS if b.lstrip().startswith("faults:")]
    scenario = load_scenario(EXAMPLES / "threshold-compaction.yaml").model_copy(
        update={"faults": FaultPlan.model_validate({"tamper": faults["tamper"]})}
    )
    result = simulate(scenario, workdir=tmp_path / "run")
    [tamper] = [r for r in result.host.trace.records if r["kind"] == "fault" and r["name"] == "tamper"]
    assert tamper["after"] == "fs:replace" and len(tamper["paths"]) == 1
    [changed] = tamper["paths"]
    assert "/pending/" in changed and changed.endswith(".md")
    # The reference re-reads the Brief it renamed into place and sees the appended line.
    notes = [n.message for n in result.host.ui.notifications]
    where = changed.replace("$WORK", result.host.paths.workdir)
    assert any(f"re-read bytes of {where} differ from what was written" in n for n in notes)
