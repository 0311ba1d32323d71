"""Notification steps look for words in what a message says, not in the paths it shows.

Each scenario's work directory is named after the scenario, so a scenario about a
"mismatch" shows that word in every path of every message; a step that looks for "match"
must still fail when the implementation never reports the mismatch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.steps import then
from pi_continuity_harness.features.world import World
from pi_continuity_harness.targets.target import Observation


class _Fixed:
    """A target that has already run: it only shows one observation."""

    name = "fixed"
    implementation = "fixed"

    def __init__(self, observation: Observation) -> None:
        self._observation = observation

    def start(self, scenario: object) -> None:
        pass

    def observe(self) -> Observation:
        return self._observation

    def project_dir(self) -> Path:
        return self._observation.project_dir


def _world(workdir: Path, *messages: str) -> World:
    observation = Observation(
        target="fixed",
        project_dir=workdir / "project",
        agent_dir=workdir / "agent",
        session_dir=workdir / "sessions",
        notifications=[(message, "info") for message in messages],
    )
    world = World("scenario", make_target=lambda: _Fixed(observation))  # type: ignore[arg-type,return-value]
    world.start()
    return world


def test_a_word_of_the_work_directory_does_not_report_a_mismatch(tmp_path: Path) -> None:
    workdir = tmp_path / "test_mismatch_stays_pending_when_another_extension_replaces_the_result"
    saved = f"Pi Session Continuity: Continuity Brief saved to {workdir}/project/.pi/x/pending/a.md."
    with pytest.raises(AssertionError, match="no notification matches"):
        then._mismatch_reported(_world(workdir, saved))
    reported = (
        "Pi Session Continuity failed: the committed compaction does not match the prepared Continuity Brief."
    )
    then._mismatch_reported(_world(workdir, saved, reported))


def test_a_word_of_the_work_directory_does_not_say_native_compaction_is_disabled(tmp_path: Path) -> None:
    workdir = tmp_path / "test_native_autocompaction_disabled_is_a_refused_state"
    refusal = (
        "Pi Session Continuity refused: native compaction settings are invalid for the current model. "
        "Run /continuity settings and restart Pi.\nenabled: {}, reserveTokens: 200000\n"
        f"Project settings: {workdir}/project/.pi/settings.json"
    )
    with pytest.raises(AssertionError, match="no notification matches"):
        then._refused_disabled(_world(workdir, refusal.format("true")))
    then._refused_disabled(_world(workdir, refusal.format("false")))


def test_a_step_about_a_path_still_sees_the_path(tmp_path: Path) -> None:
    workdir = tmp_path / "test_settings"
    path = workdir / "project" / ".pi" / "settings.json"
    then._saved_notification(
        _world(workdir, f"Pi Session Continuity: settings saved to {path}; restart Pi to activate them.")
    )
