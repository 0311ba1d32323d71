"""A minimised differential feature replays with the command ``explore --target pi`` prints.

Found on 6 December 2026: the printed command (``pytest <feature> (with --extension ...)``)
collected nothing, as pytest collects a ``.feature`` file only with ``--target``; and with it,
the feature's real-Pi half failed under the default work directory, as the machine directory
of its long test name left ``<machine>/both/rpi`` longer than the 126 characters the real-Pi
layout allows (``_SLUG_LENGTH`` was 80; both tests failed).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.explore.differential.runner import differential_feature, replay_command
from pi_continuity_harness.scenario.document import dump_scenario, parse_scenario
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi

#: As long as the explorer's names get (``differential-seed-<n>-<kind>-<channel>``).
_NAME = "differential-seed-9132-no-extension-session-events"


@pytest.mark.parametrize("target", ["pi", "sim"])
def test_a_differential_feature_replays_with_the_printed_command(
    pi_installation: PiInstallation, tmp_path: Path, target: str
) -> None:
    scenario = parse_scenario(
        {
            "name": _NAME,
            "extensions": [],
            "model": {"agent": [{"text": "hello back"}]},
            "operations": [{"prompt": "hello"}],
        }
    )
    (tmp_path / f"{_NAME}.yaml").write_text(dump_scenario(scenario), encoding="utf-8")
    feature = tmp_path / f"{_NAME}.feature"
    feature.write_text(differential_feature(_NAME, f"{_NAME}.yaml", "(none)", "reference"), encoding="utf-8")

    words = shlex.split(replay_command(feature, "reference"))
    assert words[0] == "pytest" and "--target" in words
    words[words.index("--target") + 1] = target  # either target plays both
    done = subprocess.run(
        [sys.executable, "-m", *words[:1], "-p", "no:cacheprovider", "-q", *words[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
