"""A command an extension sends with ``sendUserMessage`` during a run does not hold the run.

``pi.sendUserMessage("/cmd ...", {deliverAs: "steer"})`` is fire-and-forget on real Pi: the
command starts at once and nothing waits for it to end. The simulator let the dispatch that sent
it wait until the command was done, so a command that waits for Pi to be idle
(``ctx.newSession()`` aborts the run and waits for it) waited for the run that waited for it, and
the simulation stalled. ``blitz_switch_before_idle`` (H33a: it sends its cutover command at the
accepted Finish, without waiting for the source to be idle) was then "killed" by a stall in the
When step, never judged by the Then step that states its rule; on real Pi 1.6.0 it runs through
and fails that step.
"""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS

SCENARIO = "sh-start-transfers-to-a-parent-linked-session"
THEN = "the writer's last reply ended normally before the switch"


def test_a_switch_before_idle_is_judged_by_the_step_that_states_h33a(tmp_path: Path) -> None:
    spec = BLITZ_MUTANTS["blitz_switch_before_idle"].spec
    run = run_suite(extension=spec, tags="rule-H33a", keyword=SCENARIO, workdir=tmp_path / "mutant")
    [result] = run.results
    assert result.status == "failed", result.detail
    assert result.failed_step is not None and result.failed_step["step"] == THEN, result.detail
    reference = run_suite(extension="blitz", tags="rule-H33a", keyword=SCENARIO, workdir=tmp_path / "ref")
    assert [r.status for r in reference.results] == ["passed"], [r.detail for r in reference.results]
