"""The blitz explorer compares a session's texts with the trace's like with like.

The trace writes every path under the run's work directory as ``$WORK/...``
(:class:`~pi_continuity_harness.scenario.trace.Trace`); the session files hold the real paths.
The explorer tells the extension's user messages from the user's by the trace's ``input`` events
(``source: "extension"``), so it compared a session file's text with a trace text: a message that
names a path was never the extension's. The receiver's bootstrap (Transfer sequence 6: "Short
first prompt: absolute path, startup/cleanup") names the dossier, so it was read as the user's,
and left out of the Call/reminder/emergency reading only by that accident; a reminder sent as a
user message that names the dossier was missed the same way (H49a: one reminder per request).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.blitz import PLUGIN
from pi_continuity_harness.explore.blitz.generate import GET
from pi_continuity_harness.explore.blitz.invariants import _Run, _template_responses, one_active_request
from pi_continuity_harness.explore.blitz.invariants import _settings as _explored_settings
from pi_continuity_harness.mutants.blitz.base import Mutant
from pi_continuity_harness.reference.blitz.constants import REMINDER_TEXT
from pi_continuity_harness.simulator.simulation import Simulation

STEPS = 40
#: Explored seeds whose runs (the reference) hand off five times, and send one reminder.
HANDOFFS_SEED = 2
REMINDER_SEED = 15
_DOSSIER = re.compile(r"/\.pi/handoff_[^\s`'\"]+\.md")


class _ReminderNamingTheDossier(Mutant):
    """The reference, except that its reminder is a user message that names the dossier file (an
    implementation may word and send its reminder as it likes; only when it comes is fixed)."""

    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        if request is None or not request.reminder_due(self.now(), self.settings.readiness_retry_seconds):
            return
        request.reminded = True
        text = f"{REMINDER_TEXT} The file is {request.dossier}."
        self.pi.send_user_message(text, deliver_as=None if ctx.is_idle() else "steer")


@contextmanager
def _explored(seed: int, workdir: Path, implementation: Any) -> Iterator[_Run]:
    case = PLUGIN.case(seed, STEPS)
    scenario = case.scenario(operations=case.operations)
    simulation = Simulation(scenario, workdir=workdir, implementation=implementation)
    try:
        simulation.start()
        for op in case.operations:
            simulation.perform(op)
        yield _Run(simulation, _explored_settings(scenario))
    finally:
        simulation.finish(requests=False, trace=False)


def test_the_receivers_bootstrap_is_the_extensions_and_no_call_reminder_or_emergency(tmp_path: Path) -> None:
    """Each receiver's first prompt names the dossier's absolute path: it is read as the
    extension's message (its text as the trace writes it is the ``input`` the extension sent),
    and set aside by its producer (sent through the ``withSession`` context), not counted as a
    Call, a reminder or an emergency of any request."""
    with _explored(HANDOFFS_SEED, tmp_path / "m", "pi_continuity_harness.reference.blitz:extension") as run:
        bootstraps = [
            (seq, item)
            for seq, item in run.transcript()
            if item.kind in ("user", "extension") and _DOSSIER.search(item.text)
        ]
        assert len(bootstraps) == 5, [(seq, item.text[:60]) for seq, item in bootstraps]
        assert all(run.host.paths.workdir in item.text for _seq, item in bootstraps), "no real path"
        assert [item.kind for _seq, item in bootstraps] == ["extension"] * 5, (
            "a bootstrap naming the dossier was read as the user's"
        )
        classified = {seq for seq, _epoch, _message in run.handoff_messages()}
        assert not classified & {seq for seq, _item in bootstraps}, "a bootstrap was classified"


def test_h49a_a_reminder_that_names_the_dossier_is_counted(tmp_path: Path) -> None:
    """H49a: a reminder sent as a user message naming the dossier is the extension's reminder,
    so ``one_reminder_per_request`` sees it (before, it was the user's: a second one would have
    passed)."""
    with _explored(REMINDER_SEED, tmp_path / "m", _ReminderNamingTheDossier.extension) as run:
        sent = [
            (seq, item)
            for seq, item in run.transcript()
            if item.text.startswith(REMINDER_TEXT) and _DOSSIER.search(item.text)
        ]
        assert len(sent) == 1, [(seq, item.kind) for seq, item in sent]
        seq, item = sent[0]
        assert item.kind == "extension", "the reminder naming the dossier was read as the user's"
        kinds = {at: message.kind for at, _epoch, message in run.handoff_messages()}
        assert kinds.get(seq) == "reminder", kinds


#: An explored seed whose run (the reference) resumes an earlier session after a handoff and
#: retrieves templates in both sessions.
RESUME_SEED = 10


def test_template_results_pair_with_their_retrievals_after_a_resume(tmp_path: Path) -> None:
    """Each template retrieval the trace executed is paired with its own result, in the order the
    trace recorded the results' entries: after the user resumes an earlier session, that
    session's file holds results later than another file's, and pairing the files' results in
    file order gave a failed retrieval ("No active Session Handoff request") the Finish ID of an
    earlier one, and ``one_active_request`` a second request that never was."""
    with _explored(RESUME_SEED, tmp_path / "m", "pi_continuity_harness.reference.blitz:extension") as run:
        resumed = [r for r in run.records if r["kind"] == "event" and r["name"] == "session_start"]
        assert any(r.get("reason") == "resume" for r in resumed), "the seed no longer resumes"
        executions = {
            int(r["seq"]): r
            for r in run.records
            if r.get("toolName") == GET and r["name"] == "tool_execution_end"
        }
        pairs = _template_responses(run)
        assert len(pairs) == len(executions) >= 3
        assert [bool(executions[seq].get("isError")) for seq, _result in pairs] == [
            result.error for _seq, result in pairs
        ]
        assert any(result.error for _seq, result in pairs) and not all(result.error for _seq, result in pairs)
        assert list(one_active_request(run, [])) == []
