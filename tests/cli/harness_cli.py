"""Running the installed ``pi-continuity-harness`` script the way a user does, for CLI tests.

The script, not ``python -c``: ``python -c`` puts the current directory on ``sys.path`` and
would hide the difference the module-resolution rule is about.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("pi-continuity-harness")
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Ran:
    """What one command printed and its exit status."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def harness(*args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 600) -> Ran:
    """Run ``pi-continuity-harness ARGS`` in ``cwd`` (environment: this one plus ``env``)."""
    assert SCRIPT.exists(), f"{SCRIPT} is missing: install the package (pip install -e .)"
    environment = {**os.environ, **(env or {})}
    if "PYTHONPATH" not in (env or {}):
        environment.pop("PYTHONPATH", None)  # the user's shell has none
    done = subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def pytest_in(*args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 600) -> Ran:
    """Run the installed ``pytest`` script in ``cwd``, as a user of another project would."""
    script = Path(sys.executable).with_name("pytest")
    environment = {**os.environ, **(env or {})}
    environment.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(script), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)
