"""The README's test command draws the same Hypothesis examples on every run
(``tests/conftest.py``, ``_pin_hypothesis``): a release gate's verdict on a tree does not
change from one run to the next."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import settings

_DRAWS = """
import json, sys
from hypothesis import given, settings, strategies as st
sys.path.insert(0, sys.argv[1])
import conftest  # noqa: F401  (loads the run-wide profile, as pytest does)
seen = []

@given(st.text(max_size=40), st.integers())
def draws(text, number):
    seen.append([text, number])

draws()
print(json.dumps(seen))
"""


def test_the_default_profile_is_derandomised_and_keeps_no_example_database() -> None:
    assert settings.default.derandomize is True
    assert settings.default.database is None


def _draws(profile: str | None, cwd: Path) -> str:
    env = {"PATH": "/usr/bin:/bin"} | ({"HYPOTHESIS_PROFILE": profile} if profile else {})
    done = subprocess.run(
        [sys.executable, "-c", _DRAWS, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_two_runs_draw_the_same_examples_and_the_dev_profile_draws_others(tmp_path: Path) -> None:
    """Two fresh interpreters draw identical examples under the default profile; under ``dev``
    (random draws) two runs differ, which shows the comparison can fail."""
    assert _draws(None, tmp_path) == _draws(None, tmp_path)
    assert _draws("dev", tmp_path) != _draws("dev", tmp_path)
