"""``explore --target pi``: differential exploration of a Python implementation, and exploration
of a TypeScript implementation on real Pi with the invariants its observations allow."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.explore.differential.runner import run_differential, system_case
from pi_continuity_harness.simulator import provider
from pi_continuity_harness.targets.realpi import PiInstallation
from pi_continuity_harness.targets.sim import SimTarget

pytestmark = [pytest.mark.realpi, pytest.mark.slow]

EXTENSIONS = Path(__file__).parent / "extensions"
PLANTED_MANUAL = EXTENSIONS / "planted_manual_bug.ts"
PLANTED_BLITZ = EXTENSIONS / "planted_blitz_bug.ts"


def _explore(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "explore.json"
    code = cli(
        ["explore", "--target", "pi", "--out", str(tmp_path / "out"), "--json", str(report), "--quiet", *args]
    )
    return code, json.loads(report.read_text(encoding="utf-8"))


def test_differential_exploration_finds_the_simulator_and_real_pi_alike(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    code, report = _explore(tmp_path, "--seeds", "2", "--seed-start", "20", "--steps", "5")
    assert code == 0, report["seeds"]
    summary = report["summary"]
    # Each seed: its host case with and without the extension, then its system case.
    assert summary["failingSeeds"] == [] and summary["runsPerTarget"] == 6
    assert [seed["cost"]["runs"] for seed in report["seeds"]] == [3, 3]
    assert summary["systemCasesNotPlayed"] == {}
    assert summary["medianTimeRatio"] > 1


@pytest.mark.parametrize("seed", [18, 28])
def test_the_system_cases_that_found_differences_play_alike_on_both_targets(
    pi_installation: PiInstallation, tmp_path: Path, seed: int
) -> None:
    """The first differential runs of the continuity cases (7 December 2026) found the
    simulator apart from real Pi in these two seeds' cases (40 operations each): seed 18, an
    in-memory session whose compaction entry's all-digit id only an extension event named and
    whose crash the simulator's observation outlived; seed 28, an extension's ``complete``
    with reasoning whose ``max_tokens`` real Pi fits into the window (``streamSimple``). Both
    play alike now."""
    case = system_case("pi-session-continuity", seed, 40)
    run = run_differential(
        case, implementation="reference", system="pi-session-continuity", workdir=tmp_path / "r"
    )
    assert run.runs.records and run.channel is None, run.message()


def test_differential_exploration_of_the_system_case_fails_when_a_crashed_simulator_remembers(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system case's comparison can fail: a simulator whose observation after a crash reads
    the dead process's memory (as it did until the first differential runs of the continuity
    cases, seed 18) shows entries of an in-memory session real Pi cannot show. Seed 1018's case
    (an in-memory session: a prompt, a crash, prompts Pi cannot take) is found, shrunk with the
    plug-in's plan, and written as a feature that replays on both targets."""
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    original = SimTarget.observe

    def remembering(self: SimTarget) -> Any:
        host = self.simulation.host
        crashed, host.crashed = host.crashed, False
        try:
            return original(self)
        finally:
            host.crashed = crashed

    monkeypatch.setattr(SimTarget, "observe", remembering)
    code, report = _explore(tmp_path, "--seeds", "1", "--seed-start", "1018", "--steps", "5")
    assert code == 1
    [failing] = report["seeds"]
    assert failing["cost"]["runs"] == 3  # the host cases agreed; the system case did not
    assert failing["violation"]["invariant"] == "targets_agree"
    assert failing["violation"]["message"].startswith("entries differs")
    minimised = failing["minimised"]
    assert minimised["runs"] >= 1
    assert minimised["operationsAfter"] < minimised["operationsBefore"] == 5
    scenario = Path(minimised["yaml"]).read_text(encoding="utf-8")
    assert "session: memory" in scenario and "crash" in scenario
    feature = Path(minimised["feature"]).read_text(encoding="utf-8")
    assert feature.count("Then both targets observe the same") == 1


def test_differential_exploration_fails_when_the_simulator_sends_an_aborted_reply(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check can fail: a simulator that forgets pi-ai's filter of failed and aborted replies
    (transform-messages.js:169-180) differs from real Pi in the request bodies, found and shrunk."""
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    original = provider.transform_messages

    def forgetful(messages: list[dict[str, Any]], model: Any, **options: Any) -> list[dict[str, Any]]:
        # ``options``: the provider's wire memo (``memo=``) passes through unchanged.
        kept = [
            {**m, "stopReason": "stop"} if m.get("stopReason") in ("error", "aborted") else m
            for m in messages
        ]
        return original(kept, model, **options)

    monkeypatch.setattr(provider, "transform_messages", forgetful)
    # The first action: one before it may leave a reply for the abort's prompt (seed 5 of the
    # explorer with session-tree actions aborted nothing a later request carried).
    seed = next(s for s in range(500) if _first_action(s, 4) == "partial_abort_then_prompt")
    code, report = _explore(tmp_path, "--seeds", "1", "--seed-start", str(seed), "--steps", "4")
    assert code == 1
    [failing] = report["seeds"]
    assert failing["violation"]["invariant"] == "targets_agree"
    assert (
        "model_requests" in failing["violation"]["message"]
        or "session_events" in failing["violation"]["message"]
    )
    minimised = failing["minimised"]
    assert minimised["operationsAfter"] <= minimised["operationsBefore"]
    assert (
        Path(minimised["feature"]).read_text(encoding="utf-8").count("Then both targets observe the same")
        == 1
    )
    # What the summary prints: the minimisation's real-Pi runs took time (it printed "(0 s)"),
    # and the replay command collects the feature (``test_differential_feature_replay.py``).
    assert minimised["runs"] >= 1 and minimised["seconds"] > 0
    assert shlex.split(minimised["replay"]) == [
        "pytest",
        minimised["feature"],
        "--target",
        "pi",
        "--extension",
        "reference",
    ]


def _first_action(seed: int, steps: int) -> str:
    from pi_continuity_harness.explore.differential import differential_case  # noqa: PLC0415

    return differential_case(seed, steps, with_extension=False).actions[0].name


def test_a_planted_bug_in_a_typescript_implementation_is_found_shrunk_and_replayed(
    pi_installation: PiInstallation,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    replay_feature: Any,
) -> None:
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    code, report = _explore(
        tmp_path, "--extension", str(PLANTED_MANUAL), "--seeds", "1", "--seed-start", "11", "--steps", "8"
    )
    assert code == 1
    [failing] = report["seeds"]
    assert failing["violation"]["invariant"] == "commit_is_valid_brief"
    minimised = failing["minimised"]
    assert minimised["operationsAfter"] < minimised["operationsBefore"] and minimised["operationsAfter"] <= 3
    feature = Path(minimised["feature"])
    replayed = replay_feature(feature, str(PLANTED_MANUAL), "--target", "pi")
    assert replayed.returncode == 1, replayed.stdout[-2000:]
    assert "commit_is_valid_brief" in replayed.stdout


def test_a_planted_bug_in_a_typescript_blitz_implementation_is_found(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every agent run breaks the planted settings: found, and shrunk to one prompt."""
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    code, report = _explore(
        tmp_path,
        "--extension",
        str(PLANTED_BLITZ),
        "--system",
        "pi-blitz-handoff",
        "--seeds",
        "1",
        "--seed-start",
        "3",
        "--steps",
        "6",
    )
    assert code == 1
    [failing] = report["seeds"]
    assert failing["violation"]["invariant"] == "settings_file_valid"
    minimised = failing["minimised"]
    assert minimised["operationsAfter"] < minimised["operationsBefore"]


def test_pis_own_custom_compaction_example_keeps_the_blitz_invariants(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = pi_installation.pi_package_dir / "examples" / "extensions" / "custom-compaction.ts"
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    code, report = _explore(
        tmp_path, "--extension", str(example), "--system", "pi-blitz-handoff", "--seeds", "2", "--steps", "6"
    )
    assert code == 0, report["seeds"]
    assert all(seed["ok"] for seed in report["seeds"])


def test_the_observed_blitz_invariants_read_a_real_run_with_deletion_off(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 7 writes a config with ``deleteHandoffAfterReading`` false: the observed
    ``dossier_retained_when_deletion_off`` reads the run (it raised ``AttributeError`` after every
    operation, a harness error per check, before ``_Observed`` offered what the invariants read:
    ``blitz.invariants.RunReading``)."""
    example = pi_installation.pi_package_dir / "examples" / "extensions" / "custom-compaction.ts"
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    code, report = _explore(
        tmp_path,
        "--extension",
        str(example),
        "--system",
        "pi-blitz-handoff",
        "--seeds",
        "1",
        "--seed-start",
        "7",
        "--steps",
        "6",
    )
    [seed] = report["seeds"]
    assert seed["swarm"]["settings"]["deleteHandoffAfterReading"] is False
    assert seed["harness_errors"] == []
    assert code == 0 and seed["ok"], seed


def test_a_seeds_planted_same_session_artifacts_lie_in_the_session_real_pi_runs(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seed that plants artifacts for its first session names that session's id in its
    scenario, so real Pi (``--session-id``) runs the session whose directory holds them. Before
    (until the thirty-fifth session), real Pi made up its own id and the planted stale Brief lay
    in another session's directory there: ``cleanup_subcommand``, which deletes the session's
    pending Briefs at seed 56, broke nothing on real Pi. It now breaks the observed form of
    ``others_artifacts_untouched`` there, at the ``/continuity cleanup`` (operation 5)."""
    from pi_continuity_harness.explore.differential.onpi import real_pi_case, run_on_pi  # noqa: PLC0415
    from pi_continuity_harness.explore.plugins import plugin_named  # noqa: PLC0415
    from pi_continuity_harness.mutants.catalogue import MUTANTS  # noqa: PLC0415
    from pi_continuity_harness.mutants.pristine import reset_reference  # noqa: PLC0415

    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))
    case = real_pi_case(plugin_named("pi-session-continuity").case(56, 40))
    try:
        result = run_on_pi(
            case,
            implementation=MUTANTS["cleanup_subcommand"].spec,
            system="pi-session-continuity",
            workdir=tmp_path / "run",
        )
    finally:
        reset_reference()
    assert result.first is not None and result.first.invariant == "others_artifacts_untouched", result.first
    assert "/pending/" in result.first.message and "was removed" in result.first.message
