"""P111b, spec §13: "If another custom-compaction handler replaces the result, the unmatched
``session_compact`` also clears the gate and reports the incompatibility".

The invariant ``mismatch_reported`` owes a product-prefixed warning or error after a
``session_compact`` that did not commit the verified disk Brief, where a competing extension loads
after the implementation (Pi keeps the last truthy ``session_before_compact`` result, runner.js:826-853;
pi-host-1.6.md "Multiple extensions"). Before it, the do-nothing implementation passed the four
of the first 40 seeds that load such a competitor (3, 8, 10, 15) and ``mismatch_not_reported`` was
judged by the features alone. Each test below shows one way the reading can fail, or one place
where nothing is owed, against a run where the same scenario makes the obligation arise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import ExtensionAPI, ExtensionFactory
from pi_continuity_harness.explore.continuity.invariants import INVARIANTS, competitor_may_replace
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.features.oracle import MESSAGE_PREFIX
from pi_continuity_harness.mutants.catalogue import MUTANTS, Handler, _call, _reference
from pi_continuity_harness.mutants.continuity_rules import _CtxUI
from pi_continuity_harness.scenario.document import parse_scenario

from .threshold_run import threshold_run

INCOMPATIBLE = "does not match the prepared Continuity Brief"


def _run(
    tmp_path: Path,
    implementation: str | ExtensionFactory,
    *,
    competitor: str = "own_compaction",
    competitor_first: bool = False,
    mode: str = "rpc",
) -> tuple[set[str], list[tuple[str, str]]]:
    """The threshold run with ``competitor`` loaded after (or before) the implementation: the
    invariants broken, and the notifications (message, level)."""
    extensions: list[dict[str, Any]] = [{"implementation": True}, {"competitor": competitor}]
    run = threshold_run(
        tmp_path / "run",
        implementation,
        extensions=extensions[::-1] if competitor_first else extensions,
        mode=mode,
    )
    assert run.compactions == 1, "the scenario must commit one compaction"
    return set(run.broken), run.notes


class _InfoUI:
    """A ``ctx.ui`` that says everything at ``info`` level."""

    def __init__(self, ui: Any) -> None:
        self._ui = ui

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ui, name)

    def notify(self, message: str, level: Any = "info") -> None:
        self._ui.notify(message, "info")


def _reported_as_info(pi: ExtensionAPI) -> None:
    """The reference, whose ``session_compact`` handler says everything at ``info`` level."""

    def downgrade(handler: Handler) -> Handler:
        async def wrapped(event: Any, ctx: Any) -> Any:
            return await _call(handler, event, _CtxUI(ctx, _InfoUI))

        return wrapped

    _reference(pi, on={"session_compact": downgrade})


@pytest.mark.parametrize("competitor", ["own_compaction", "empty"])
def test_the_reference_reports_a_replaced_result(tmp_path: Path, competitor: str) -> None:
    broken, notes = _run(tmp_path, "reference", competitor=competitor)
    assert broken == set()
    assert [level for message, level in notes if INCOMPATIBLE in message] == ["warning"]


@pytest.mark.parametrize("competitor", ["own_compaction", "empty"])
def test_an_unreported_replacement_breaks_the_rule(tmp_path: Path, competitor: str) -> None:
    broken, notes = _run(tmp_path, MUTANTS["mismatch_not_reported"].spec, competitor=competitor)
    assert broken == {"mismatch_reported"}
    assert not any(INCOMPATIBLE in message for message, _level in notes)


def test_the_do_nothing_implementation_breaks_the_rule(tmp_path: Path) -> None:
    broken, _notes = _run(tmp_path, "null")
    assert "mismatch_reported" in broken


def test_a_report_at_info_level_is_not_a_report_of_a_failure(tmp_path: Path) -> None:
    broken, notes = _run(tmp_path, _reported_as_info)
    assert [level for message, level in notes if INCOMPATIBLE in message] == ["info"]
    # The reference's report begins "Pi Session Continuity failed: ", so an info one breaks
    # notification_levels (P92b) too.
    assert broken == {"mismatch_reported", "notification_levels"}


def test_nothing_is_owed_where_pi_shows_no_notification(tmp_path: Path) -> None:
    """In ``print`` mode Pi drops every notification (``noOpUIContext``, runner.js:132-163)."""
    broken, notes = _run(tmp_path, MUTANTS["mismatch_not_reported"].spec, mode="print")
    assert notes == [] and "mismatch_reported" not in broken


def test_nothing_is_owed_when_the_competitor_loads_first(tmp_path: Path) -> None:
    """The implementation's result is the last truthy one, so its Brief commits: no mismatch."""
    broken, notes = _run(tmp_path, MUTANTS["mismatch_not_reported"].spec, competitor_first=True)
    assert broken == set()
    assert any(message.startswith(MESSAGE_PREFIX) and "committed" in message for message, _level in notes)


def command_only(pi: ExtensionAPI) -> None:
    """A do-nothing implementation that registers its command (``one_command``, P93a, fails the
    plain ``null`` at its first start, before any compaction): it handles no event."""

    async def continuity(args: str, ctx: Any) -> None:
        return None

    pi.register_command("continuity", continuity, description="does nothing")


@pytest.mark.parametrize("seed", [15, 65])
def test_exploration_fails_the_do_nothing_implementation_first_by_it(tmp_path: Path, seed: int) -> None:
    """Seed 15 loads a competitor returning ``{}``, seed 65 one returning its own compaction (the
    mutant's row is ``REQUIRED`` in test_psc_rules_judged_by_exploration.py). At seeds 3, 8 and
    10, which it failed first before, it now fails another of the thirty-second session's
    invariants first: it does not refuse the invalid native settings of 3 and 8 aloud, and its
    status at seed 10 says nothing of a restart."""
    case = case_for_seed(seed, 40)
    result = run_case(PLUGIN, case, implementation=command_only, workdir=tmp_path / "m", requests=False)
    assert [v.invariant for v in result.violations][:1] == ["mismatch_reported"], result.violations
    reference = run_case(PLUGIN, case, implementation="reference", workdir=tmp_path / "r", requests=False)
    assert reference.violations == [] and reference.harness_errors == []


def test_the_invariant_declares_the_rule() -> None:
    assert INVARIANTS["mismatch_reported"].rules == ("P111b",)
    assert MUTANTS["mismatch_not_reported"].explorable


@pytest.mark.parametrize(
    ("competitor", "replaces"),
    [
        ("reissue_brief", True),
        ("reissue_brief_but_sha256", True),
        ("reissue_brief_but_sessionId", True),
        ("own_compaction", True),
        ("empty", True),
        ("cancel", False),
        ("throw", False),
    ],
)
def test_a_competitor_that_returns_a_compaction_after_the_implementation_owes_a_mismatch_notice(
    competitor: str, replaces: bool
) -> None:
    """``competitor_may_replace``: the competitors that return a compaction of their own (the
    Brief under details of their own, one detail wrong included: P70d) or ``{}``, loaded after
    the implementation, make ``mismatch_reported`` judge the run; one loaded before it does not."""

    def scenario(extensions: list[dict[str, Any]]) -> Any:
        return parse_scenario({"name": "replace", "extensions": extensions})

    after = scenario([{"implementation": True}, {"competitor": competitor}])
    before = scenario([{"competitor": competitor}, {"implementation": True}])
    assert competitor_may_replace(after) is replaces
    assert competitor_may_replace(before) is False
