"""Running the installed ``pi-continuity-harness`` script the way a user does, for CLI tests.

The script, not ``python -c``: ``python -c`` puts the current directory on ``sys.path`` and
would hide the difference the module-resolution rule is about.
"""

from __future__ import annotations

import contextlib
import io
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


def harness_here(*args: str, cwd: Path) -> Ran:
    """:func:`harness`, called in this process (``cli.main``) instead of a process of its own,
    for a mistake the command refuses before anything runs: what it prints and its exit status
    are the same, and the process's start-up was most of such a test's cost (0.4-1 CPU-s of
    each in ``test_setup_errors.py``, issue 16). What depends on being a process (the script's
    ``sys.path``, the environment, workers) stays with :func:`harness`.

    The user's modules the command imports from ``cwd`` are forgotten afterwards, so a later
    test's module of the same name is imported from that test's directory, as its own process
    would; ``cli.main`` puts ``sys.path`` back itself."""
    from pi_continuity_harness.cli import main  # noqa: PLC0415 (only the tests that call it)

    out, err = io.StringIO(), io.StringIO()
    before = set(sys.modules)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(here)
        for name in set(sys.modules) - before:
            source = getattr(sys.modules[name], "__file__", None)
            if source and Path(source).resolve().is_relative_to(cwd.resolve()):
                del sys.modules[name]
    return Ran(code, out.getvalue(), err.getvalue())


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
