"""Hypothesis stateful testing of the reference over the explorer's operations and invariants.

A :class:`~hypothesis.stateful.RuleBasedStateMachine` drives one simulated Pi: every rule is
one host operation (a turn below, at or above the threshold, a tool turn, an overflow, a
manual compaction, a checkpoint, the settings menu, reload, restart, crash, a model change)
or one scripted fault for the next synthesis; the explorer's
:class:`~pi_continuity_harness.explore.continuity.invariants.InvariantChecker` runs on every trace
record, and an ``@invariant`` asserts it saw nothing wrong after every step. The
``heal_and_cross_the_threshold`` rule clears every pending fault and demands liveness.

Faults are plain data whose simplest value is "no fault" (the machine's filesystem faults are
a list drawn empty-first; a synthesis reply is ``valid`` unless a fault rule scripted one), so
shrinking moves towards fewer faults (simulation-anchors.md, "Hypothesis stateful testing").

Profiles: ``ci`` (the default, as for every Hypothesis test: ``tests/conftest.py``) is
derandomised and small enough for CI; ``dev`` explores more (``HYPOTHESIS_PROFILE=dev``).
Regressions found here are kept as explicit example features (``pi_session_continuity/failures``
or ``rules``), never as ``@reproduce_failure`` blobs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from pi_continuity_harness.api.extension_api import ExtensionFactory
from pi_continuity_harness.explore.continuity.invariants import InvariantChecker
from pi_continuity_harness.features.world import settings_answers
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.faults import FaultPlan, FsFault
from pi_continuity_harness.scenario.model_script import (
    HttpError,
    Reply,
    ScriptedToolCall,
    SynthesisReply,
    Usage,
)
from pi_continuity_harness.scenario.operations import (
    CommandOp,
    CompactOp,
    CrashOp,
    EditFileOp,
    PromptOp,
    ReloadOp,
    RestartOp,
    SetModelOp,
)
from pi_continuity_harness.simulator.simulation import Simulation

#: This machine's own example and step counts for the run-wide profiles of ``tests/conftest.py``
#: (``_pin_hypothesis``): ``ci`` when the loaded profile is derandomised (the default), ``dev``
#: under ``HYPOTHESIS_PROFILE=dev`` or ``--hypothesis-profile dev``.
PROFILES = {
    "ci": settings(
        derandomize=True,
        database=None,
        max_examples=60,
        stateful_step_count=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    ),
    "dev": settings(
        max_examples=200,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    ),
}
PROFILE = PROFILES["ci" if settings.default.derandomize else "dev"]

WINDOW = 200_000
RESERVE = 50_000
KEEP = 2_000
THRESHOLD = WINDOW - RESERVE
MODELS = ("fake/main", "fake/small", "fake/large")

#: Filesystem faults as data; the strategy's simplest value is the empty list (no fault).
FS_FAULTS = st.lists(
    st.sampled_from(
        (
            FsFault.model_validate({"op": "write", "path": "$PROJECT/*/pending/*", "errno": "ENOSPC"}),
            FsFault(op="read", path="$PROJECT/*/pending/*.md", effect="corrupt"),
            FsFault.model_validate({"op": "write", "path": "$PROJECT/*/archive/*", "errno": "EIO"}),
            FsFault.model_validate({"op": "write", "path": "$PROJECT/*/failed/*", "errno": "ENOSPC"}),
        )
    ),
    max_size=2,
)
SYNTHESIS_FAULTS = st.sampled_from(("error", "empty", "missing_heading", "reasoning_only", "length", "abort"))


def _synthesis_fault(kind: str) -> SynthesisReply:
    if kind == "error":
        return SynthesisReply(kind="error", error=HttpError(status=500, message="boom", type="server_error"))
    if kind == "missing_heading":
        return SynthesisReply(kind="missing_heading", heading="## Next Actions")
    return SynthesisReply.model_validate({"kind": kind})


def _scenario(fs: list[FsFault]) -> Scenario:
    compaction = {"enabled": True, "reserveTokens": RESERVE, "keepRecentTokens": KEEP}
    return Scenario.model_validate(
        {
            "name": "state-machine",
            "models": [
                {"id": "fake/main", "context_window": WINDOW, "max_tokens": 16_384},
                {"id": "fake/small", "context_window": 80_000, "max_tokens": 16_384},
                {"id": "fake/large", "context_window": 1_000_000, "max_tokens": 16_384},
            ],
            "settings": {
                "global": {"compaction": compaction},
                "project": {"theme": "dark", "compaction": compaction},
            },
            "faults": FaultPlan(fs=tuple(fs)),
        }
    )


class ContinuityMachine(RuleBasedStateMachine):
    """One simulated Pi with the implementation under test; invariants after every step."""

    implementation: ClassVar[str | ExtensionFactory] = "reference"

    def __init__(self) -> None:
        super().__init__()
        self.directory = tempfile.mkdtemp(prefix="pch-state-machine-")
        self.simulation: Simulation | None = None
        self.checker: InvariantChecker | None = None
        self.turns_taken = 0

    # ----------------------------------------------------------------- plumbing
    @initialize(fs=FS_FAULTS)
    def start(self, fs: list[FsFault]) -> None:
        self.simulation = Simulation(
            _scenario(fs), workdir=Path(self.directory) / "run", implementation=type(self).implementation
        )
        self.checker = InvariantChecker(self.simulation)
        self.simulation.start()
        self.checker.after_operation()

    def perform(self, op: Any) -> None:
        assert self.simulation is not None and self.checker is not None
        self.checker.before_operation(op)
        self.simulation.perform(op)
        self.checker.after_operation()

    def script(self, kind: str, *replies: Reply | SynthesisReply) -> None:
        assert self.simulation is not None
        self.simulation.host.service.extend(kind, list(replies))  # type: ignore[arg-type]

    def prompt(self, *replies: Reply, chars: int = 6_000) -> None:
        self.turns_taken += 1
        self.script("agent", *replies)
        self.perform(
            PromptOp.model_validate({"prompt": {"text": f"step {self.turns_taken}", "chars": chars}})
        )

    # ----------------------------------------------------------------- operations
    @rule(level=st.sampled_from(("below", "at", "above")), chars=st.integers(2_000, 9_000))
    def turn(self, level: str, chars: int) -> None:
        tokens = {"below": THRESHOLD // 2, "at": THRESHOLD, "above": THRESHOLD + 1}[level]
        self.prompt(Reply(text="w" * 1_500, context_tokens=tokens), chars=chars)

    @rule(above=st.booleans())
    def tool_turn(self, above: bool) -> None:
        call = ScriptedToolCall(
            name="bash", arguments={"command": "echo hi"}, id=f"call_{self.turns_taken}", result="hi\n"
        )
        tokens = THRESHOLD + 1 if above else THRESHOLD // 2
        self.prompt(
            Reply(text="tool", tool_calls=(call,), context_tokens=tokens),
            Reply(text="done", context_tokens=9_000),
        )

    @rule(kind=st.sampled_from(("error", "length", "silent")))
    def overflow(self, kind: str) -> None:
        if kind == "error":
            error = HttpError(
                status=400, message="input exceeds the context window", code="context_length_exceeded"
            )
            self.prompt(Reply(error=error), Reply(text="retried", context_tokens=9_000))
        elif kind == "length":
            cut = Reply(text="cut", finish="length", usage=Usage(input=THRESHOLD + 5_000, output=100))
            self.prompt(cut, Reply(text="retried", context_tokens=9_000))
        else:
            self.prompt(Reply(text="done", usage=Usage(input=WINDOW + 1_000, output=10)))

    @rule()
    def compact(self) -> None:
        self.perform(CompactOp())

    @rule()
    def checkpoint(self) -> None:
        self.perform(CommandOp.model_validate({"command": "/continuity checkpoint"}))

    @rule(trigger=st.integers(50, 90), keep=st.integers(1, 5), confirm=st.booleans())
    def change_settings(self, trigger: int, keep: int, confirm: bool) -> None:
        answers = settings_answers(str(trigger), str(keep), confirm)
        self.perform(
            CommandOp.model_validate({"command": {"text": "/continuity settings", "answers": answers}})
        )

    @rule()
    def reload(self) -> None:
        self.perform(ReloadOp())

    @rule(crash_first=st.booleans())
    def restart(self, crash_first: bool) -> None:
        if crash_first:
            self.perform(CrashOp())
        self.perform(RestartOp())

    @rule(model=st.sampled_from(MODELS))
    def set_model(self, model: str) -> None:
        self.perform(SetModelOp(set_model=model))

    # ----------------------------------------------------------------- faults
    @rule(kind=SYNTHESIS_FAULTS)
    def fail_next_synthesis(self, kind: str) -> None:
        self.script("extension", _synthesis_fault(kind))

    @rule()
    def checkpoint_during_next_synthesis(self) -> None:
        self.script(
            "extension",
            SynthesisReply(during=(CommandOp.model_validate({"command": "/continuity checkpoint"}),)),
        )

    # ----------------------------------------------------------------- liveness
    @rule()
    def heal_and_cross_the_threshold(self) -> None:
        """Faults heal; valid settings; then the next threshold compaction must commit."""
        assert self.simulation is not None and self.checker is not None
        host = self.simulation.host
        service = host.service
        for kind in ("agent", "extension"):
            service._queues[kind] = service._queues[kind][: service._cursors[kind]]
        host.monitor._counters = []
        self.perform(
            # Restore the case's settings (a settings rule may have written others) and restart.
            EditFileOp.model_validate(
                {
                    "edit_file": {
                        "path": ".pi/settings.json",
                        "json": {
                            "compaction": {
                                "enabled": True,
                                "reserveTokens": RESERVE,
                                "keepRecentTokens": KEEP,
                            }
                        },
                        "merge_json": True,
                    }
                }
            )
        )
        self.perform(RestartOp())
        self.perform(SetModelOp(set_model="fake/main"))
        boundary = len(self.simulation.result.operations)
        self.prompt(Reply(text="w" * 1_500, context_tokens=THRESHOLD // 3), chars=4 * KEEP + 4_000)
        self.prompt(Reply(text="w" * 1_500, context_tokens=THRESHOLD + 1_000), chars=4 * KEEP + 4_000)
        violation = self.checker.check_liveness(boundary)
        assert violation is None, str(violation)

    # ----------------------------------------------------------------- checks
    @invariant()
    def every_invariant_holds(self) -> None:
        if self.checker is None:
            return
        problems = [str(v) for v in self.checker.violations] + self.checker.harness_errors
        assert not problems, "\n".join(problems)

    def teardown(self) -> None:
        try:
            if self.simulation is not None:
                self.simulation.finish()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


ContinuityMachine.TestCase.settings = PROFILE
TestReferenceStateMachine = ContinuityMachine.TestCase


def test_the_machine_catches_a_mutant_that_steers_its_continuation() -> None:
    """The same machine fails on a proxy-only mutant (safe in-process: it patches nothing)."""
    from pi_continuity_harness.mutants.catalogue import continuation_as_steer  # noqa: PLC0415

    class SteeringMachine(ContinuityMachine):
        implementation: ClassVar[str | ExtensionFactory] = continuation_as_steer

    with pytest.raises(AssertionError, match="continuation_is_follow_up"):
        run_state_machine_as_test(
            SteeringMachine,
            # Detection only: no shrinking phase (shrinking a found bug is what the CI profile does).
            settings=settings(
                PROFILE,
                max_examples=40,
                report_multiple_bugs=False,
                database=None,
                phases=(Phase.explicit, Phase.generate),
            ),
        )
