"""A manual compaction while a synthesis is held (seeds 40 modulo 60; the thirty-fifth session).

Spec §13: one in-memory active operation per session. A native compaction that arrives while a
``/continuity checkpoint`` is being synthesized is cancelled (P107b). No explored seed ever ran
``/compact`` during a checkpoint's synthesis, so ``native_compaction_during_checkpoint`` (the
checkpoint no longer holds the gate against a native compaction) survived the kill matrix's 60
seeds, judged by the features alone. A seed 40 modulo 60 now holds every other synthesis its
draws left valid while the user runs ``/compact`` (``SynthesisReply.during``); where the held
synthesis is a checkpoint's, the mutant prepares a second Brief beside it and
``single_flight_synthesis`` (now P107a and P107b) sees two synthesis calls in flight, at seed 40
(``test_psc_rules_judged_by_exploration.REQUIRED``). Where it is a native handoff's, Pi's
``compact()`` aborts that compaction and compacts again, a path the features and the failure
catalogue already cover (``earendil-pi-7086``).

The first version of this class found a bug in the invariants' operation stack: a ``phase: end``
record popped the latest operation begun, but the manual compaction outlives the prompt whose
synthesis it interrupted (Pi's ``compact()`` aborts the run, which ends, then compacts), so the
prompt's end popped the compaction, and ``no_extension_compaction`` took the user's compaction for
one the extension started: the reference failed seeds 31, 51 and 91 of the first trial class (11
modulo 20). An end now removes the operation it names.
"""

from __future__ import annotations

import json
from pathlib import Path

from pi_continuity_harness.explore.continuity.generate import generate_case
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.scenario.model_script import SynthesisReply
from pi_continuity_harness.scenario.operations import CompactOp

HELD = SynthesisReply(during=(CompactOp(),))


def test_a_seed_40_modulo_60_holds_every_other_valid_synthesis_for_a_manual_compaction() -> None:
    for seed in range(300):
        replies = generate_case(seed, 40).synthesis
        if seed % 60 != 40:
            assert HELD not in replies, seed
            continue
        assert HELD in replies, seed
        for index, reply in enumerate(replies):
            assert reply != SynthesisReply() or index % 2 == 0, (seed, index)
            assert reply != HELD or index % 2 == 1, (seed, index)


def test_the_reference_passes_a_seed_whose_manual_compaction_outlives_the_prompt_it_interrupted(
    tmp_path: Path,
) -> None:
    """Seed 40: a ``/compact`` runs while a synthesis is held, and a manual compaction starts
    after an operation ended that began before it; the reference breaks nothing."""
    result = run_case(
        PLUGIN, case_for_seed(40, 40), implementation="reference", workdir=tmp_path, requests=False
    )
    assert result.violations == [] and result.harness_errors == []
    records = [json.loads(line) for line in result.trace.splitlines()]
    during = [
        r["seq"] for r in records if r.get("kind") == "op" and r.get("name") == "compact" and r.get("during")
    ]
    assert during
    manual = [
        r["seq"] for r in records if r.get("name") == "compaction_start" and r.get("reason") == "manual"
    ]
    ended = [
        r["seq"]
        for r in records
        if r.get("kind") == "op" and r.get("phase") == "end" and r.get("name") != "compact"
    ]
    assert any(d < e < m for d in during for e in ended for m in manual), (
        "no compaction outlived its host operation"
    )
