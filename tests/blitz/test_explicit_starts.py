"""An explicit start is answered: ``explicit_start_makes_request`` (H11a, H12) requires the Call
of a start nothing may refuse, ``refused_start_said_aloud`` (H1a, H13, H106) a notification for
one that sends no Call.

Each way of breaking them is shown to fail at a named explored seed where the reference passes,
each refusal seed shown to be the refusal its rule names (by what the reference says there), and
what the reference document lets an implementation refuse shown to be left alone: a do-nothing
implementation passes a seed whose starts all meet a file at the dossier path, and one where Pi's
mode shows no notifications.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.explore.blitz import PLUGIN
from pi_continuity_harness.explore.blitz.invariants import _picked
from pi_continuity_harness.explore.runner import CaseResult, run_case
from pi_continuity_harness.mutants.blitz import BLITZ_MUTANTS
from pi_continuity_harness.mutants.blitz.base import Mutant, patched
from pi_continuity_harness.reference.blitz import commands

STEPS = 40
MAKES = "explicit_start_makes_request"
ALOUD = "refused_start_said_aloud"


class _MenuStartDoesNothing(Mutant):
    """Start picked in the ``/sh`` menu does nothing (``/sh start`` still works)."""

    async def run(self, args: str, ctx: Any) -> None:
        if args.strip():
            await super().run(args, ctx)
            return

        async def ignore(_handoff: Any, _ctx: Any) -> None:
            return None

        with patched(commands, "start", ignore):
            await super().run(args, ctx)


def _run(implementation: Any, seed: int, workdir: Path) -> CaseResult:
    return run_case(
        PLUGIN, PLUGIN.case(seed, STEPS), implementation=implementation, workdir=workdir, requests=False
    )


def _records(result: CaseResult) -> list[dict[str, Any]]:
    source = result.trace_source
    text = source() if callable(source) else source
    return [json.loads(line) for line in text.splitlines() if line.strip()]


#: (rule, the implementation, a seed where it breaks the invariant, the invariant, what it says).
BREAKS = [
    ("H11a", BLITZ_MUTANTS["blitz_start_opens_menu"].spec, 2, MAKES, "/sh start (trace seq"),
    ("H11a", _MenuStartDoesNothing.extension, 2, MAKES, "Start in the /sh menu (trace seq"),
    ("H11a", "null-blitz", 2, MAKES, "/sh start (trace seq"),
    ("H12", BLITZ_MUTANTS["blitz_explicit_starts_gated"].spec, 1, MAKES, "sent no Call instruction"),
    ("H1a", BLITZ_MUTANTS["blitz_refusal_silent"].spec, 0, ALOUD, "no notification saying why"),
    ("H13", BLITZ_MUTANTS["blitz_refusal_silent"].spec, 4, ALOUD, "no notification saying why"),
    ("H106", BLITZ_MUTANTS["blitz_refusal_silent"].spec, 5, ALOUD, "no notification saying why"),
]


@pytest.mark.parametrize(
    ("rule", "implementation", "seed", "invariant", "said"),
    BREAKS,
    ids=[
        "H11a-command-opens-menu",
        "H11a-menu-start-ignored",
        "H11a-null",
        "H12-gated",
        "H1a",
        "H13",
        "H106",
    ],
)
def test_an_unanswered_start_fails_at_its_seed_where_the_reference_passes(
    tmp_path: Path, rule: str, implementation: Any, seed: int, invariant: str, said: str
) -> None:
    result = _run(implementation, seed, tmp_path / "m")
    messages = [v.message for v in result.violations if v.invariant == invariant]
    assert messages and said in messages[0], result.violations
    assert _run("blitz", seed, tmp_path / "r").violations == []


#: (rule, seed, what the reference's notification at the silenced start says: the refusal the
#: seed shows is the one its rule names).
REFUSALS = [
    ("H1a", 0, "not persisted"),
    ("H13", 4, "already active"),
    ("H106", 5, "settings are invalid"),
]


@pytest.mark.parametrize(("rule", "seed", "reason"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_the_silenced_refusal_is_the_one_its_rule_names(
    tmp_path: Path, rule: str, seed: int, reason: str
) -> None:
    silent = _run(BLITZ_MUTANTS["blitz_refusal_silent"].spec, seed, tmp_path / "m")
    start = int(
        next(v.message for v in silent.violations if v.invariant == ALOUD)
        .split("trace seq ")[1]
        .split(")")[0]
    )
    records = _records(_run("blitz", seed, tmp_path / "r"))
    said = next(
        r["message"] for r in records if r["seq"] > start and r["kind"] == "ui" and r["name"] == "notify"
    )
    assert reason in said, said


def test_starts_that_meet_a_file_at_the_dossier_path_are_not_owed(tmp_path: Path) -> None:
    """Seed 89 (``json`` mode, no notifications) plants a file at the first session's dossier
    path while a writer works: the reference refuses every later start of that session ("a
    leftover dossier blocks this session's reservation", reference §5), so the do-nothing
    implementation owes none of them either."""
    result = _run("null-blitz", 89, tmp_path / "n")
    records = _records(result)
    starts = [
        r for r in records if r["kind"] == "op" and r["name"] == "command" and r.get("text") == "/sh start"
    ]
    assert len(starts) >= 3
    assert {v.invariant for v in result.violations} & {MAKES, ALOUD} == set(), result.violations


def test_without_notifications_a_refusal_is_not_judged(tmp_path: Path) -> None:
    """Seed 8 runs in ``print`` mode, where Pi shows no notification: the silenced refusals the
    mutant makes in ``rpc`` mode pass there."""
    assert PLUGIN.case(8, STEPS).scenario().mode == "print"
    result = _run(BLITZ_MUTANTS["blitz_refusal_silent"].spec, 8, tmp_path / "m")
    assert ALOUD not in {v.invariant for v in result.violations}, result.violations


@pytest.mark.parametrize(
    ("answer", "picked"),
    [
        ({"select": "/^(Start|Recovery)/"}, "Start Session Handoff"),
        ({"select": "Recovery"}, "Recovery"),
        ({"select": "/^Nothing/"}, ""),
        ({"cancel": True}, ""),
        (None, ""),
    ],
)
def test_the_menu_entry_a_traced_select_picked(answer: Any, picked: str) -> None:
    options = ["Start Session Handoff", "Recovery", "Settings", "Project templates", "Help"]
    assert _picked({"options": options, "answer": answer}) == picked
