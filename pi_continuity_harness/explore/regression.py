"""A failure, written out: the healed scenario, its trace, and a Gherkin regression.

Under the output directory, for a failure named ``<case>-<invariant>``:

* ``<name>.yaml``: the healed (and usually minimised) scenario, which
  ``pi-continuity-harness replay`` runs;
* ``<name>.trace.jsonl``: its trace, which ``replay --expect-trace`` reproduces byte for byte
  when run in the same work directory (paths inside artifacts are absolute, so their hashes
  are);
* ``<name>.feature``: a regression that replays the file through the Target seam
  (``Target.run_checked``) and asserts the violated invariant, for the system's features
  directory.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.plugin import LIVENESS, ExplorerPlugin, Violation
from pi_continuity_harness.explore.runner import CaseResult
from pi_continuity_harness.scenario.document import Scenario, dump_scenario
from pi_continuity_harness.scenario.trace import first_difference
from pi_continuity_harness.simulator.simulation import simulate

__all__ = ["feature_text", "replay_command", "write_failure"]


def _name(case_name: str, violation: Violation) -> str:
    return f"{case_name}-{violation.invariant.replace('_', '-')}"


def write_failure(
    plugin: ExplorerPlugin[Any],
    out_dir: Path,
    case: Any,
    result: CaseResult,
    *,
    extension: str,
    original: int,
) -> dict[str, Any]:
    """Write the scenario, its trace and a regression feature; return their paths."""
    violation = result.first
    assert violation is not None
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    name = _name(case.name, violation)
    boundary = result.first_healed_operation if violation.invariant == LIVENESS else None
    description = (
        f"Found by pi-continuity-harness explore against {extension} (seed {case.seed}), minimised from "
        f"{original} to {len(case.operations)} fault-phase operations. First violation: {violation}."
        + (
            f" Faults healed before operation {boundary} (the liveness phase)."
            if boundary is not None
            else ""
        )
    )
    scenario = result.healed.model_copy(update={"name": name, "description": description})
    yaml_path = out_dir / f"{name}.yaml"
    yaml_path.write_text(dump_scenario(scenario), encoding="utf-8")
    workdir = out_dir / "runs" / name
    trace_path = out_dir / f"{name}.trace.jsonl"
    first = simulate(scenario, workdir=workdir, implementation=extension).trace_text()
    trace_path.write_text(first, encoding="utf-8")
    second = simulate(scenario, workdir=workdir, implementation=extension).trace_text()
    feature_path = out_dir / f"{name}.feature"
    feature_path.write_text(
        feature_text(plugin, name, scenario, violation, yaml_path.name, boundary), encoding="utf-8"
    )
    command = replay_command(yaml_path, workdir, trace_path, extension)
    return {
        "name": name,
        "invariant": violation.invariant,
        "message": violation.message,
        "operationsBefore": original,
        "operationsAfter": len(scenario.operations),
        "yaml": str(yaml_path),
        "feature": str(feature_path),
        "trace": str(trace_path),
        "replay": command,
        "replayReproduces": first_difference(first, second) is None,
    }


def replay_command(yaml_path: Path, workdir: Path, trace_path: Path, extension: str) -> str:
    """The ``replay`` command that reproduces a failure, each argument quoted for a POSIX shell:
    it is printed and written to ``--json`` to be pasted, and a path with a space (or an
    extension spec with a shell character) split into other arguments unquoted."""
    return shlex.join(
        [
            "pi-continuity-harness",
            "replay",
            str(yaml_path),
            "--workdir",
            str(workdir),
            "--expect-trace",
            str(trace_path),
            "--extension",
            extension,
        ]
    )


def feature_text(
    plugin: ExplorerPlugin[Any],
    name: str,
    scenario: Scenario,
    violation: Violation,
    file_name: str,
    boundary: int | None,
) -> str:
    """A regression feature that replays ``file_name`` and asserts the violated invariant."""
    spec = plugin.invariant(violation.invariant)
    doc = spec.doc if spec is not None else ""
    lines = [
        " ".join(f"@{tag}" for tag in plugin.feature_tags),
        f"Feature: {name}",
        f"  Found by pi-continuity-harness explore and minimised to {len(scenario.operations)} operations.",
        f"  Invariant {violation.invariant}: {doc}",
        f"  First violation seen: {json.dumps(violation.message)[1:-1]}",
        "",
        f"  Scenario: {name} keeps {violation.invariant}",
        f'    Given the scenario file "{file_name}"',
        "    When its operations run",
    ]
    if boundary is not None:
        lines.append(f'    Then invariant "{LIVENESS}" holds from operation {boundary}')
    else:
        lines.append(f'    Then invariant "{violation.invariant}" holds')
    lines.append("    And every invariant holds")
    return "\n".join(lines) + "\n"
