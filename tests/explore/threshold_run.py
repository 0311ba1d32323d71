"""One written Pi Session Continuity run for the invariant tests: two prompts, the second over the
threshold, checked by the explorer's checker after every operation (as ``explore`` checks a seed),
for the cases exploration does not draw (a given competitor order, a scripted synthesis reply)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.continuity.invariants import InvariantChecker
from pi_continuity_harness.mutants.pristine import changed_since, reference_snapshot, reset_reference
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import PromptOp
from pi_continuity_harness.simulator.simulation import Simulation

WINDOW, RESERVE, KEEP = 200_000, 50_000, 2_000
THRESHOLD = WINDOW - RESERVE


@dataclass(frozen=True)
class ThresholdRun:
    """What the run broke, showed and committed."""

    #: The invariants broken, in the order they broke.
    broken: list[str]
    #: Every notification: (message, level).
    notes: list[tuple[str, str]]
    check_points: int
    compactions: int


def threshold_run(
    workdir: Path,
    implementation: str | ExtensionFactory,
    *,
    extensions: list[dict[str, Any]] | None = None,
    mode: str = "rpc",
    synthesis: tuple[SynthesisReply, ...] = (),
    files: dict[str, str] | None = None,
) -> ThresholdRun:
    """Run the two prompts with ``extensions`` (default: the implementation alone) in ``mode``;
    ``synthesis`` scripts the synthesis replies and ``files`` plants files (project-relative
    path: text). A PSC mutant's changes to the reference's
    modules are put back after the run (``mutants.pristine``), and the test fails if any stays."""
    compaction = {"enabled": True, "reserveTokens": RESERVE, "keepRecentTokens": KEEP}
    scenario = Scenario.model_validate(
        {
            "name": "threshold-run",
            "mode": mode,
            "files": {path: {"text": text} for path, text in (files or {}).items()},
            "extensions": extensions or [{"implementation": True}],
            "models": [{"id": "fake/main", "context_window": WINDOW, "max_tokens": 16_384}],
            "settings": {"global": {"compaction": compaction}, "project": {"compaction": compaction}},
            "model": {
                "agent": [
                    Reply(text="w" * 1_500, context_tokens=THRESHOLD // 2),
                    Reply(text="w" * 1_500, context_tokens=THRESHOLD + 1),
                ]
                + [Reply(text="more", context_tokens=1_000)] * 8,
                "extension": list(synthesis),
            },
        }
    )
    simulation = Simulation(scenario, workdir=workdir, implementation=implementation)
    checker = InvariantChecker(simulation)
    snapshot = reference_snapshot()
    try:
        simulation.start()
        checker.after_operation()
        for step in range(2):
            op = PromptOp.model_validate({"prompt": {"text": f"step {step}", "chars": 4 * KEEP + 4_000}})
            checker.before_operation(op)
            simulation.perform(op)
            checker.after_operation()
        notes = [(n.message, n.notify_type) for n in simulation.host.ui.notifications]
        entries = simulation.host.runtime.session_manager.get_entries()
        compactions = sum(1 for e in entries if e.get("type") == "compaction")
    finally:
        simulation.finish()
        reset_reference()
    assert changed_since(snapshot) == []
    assert not checker.harness_errors, checker.harness_errors
    return ThresholdRun(
        [v.invariant for v in checker.violations], notes, len(checker.checkpoints), compactions
    )
