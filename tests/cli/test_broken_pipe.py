"""A command whose output's reader leaves (``pi-continuity-harness run | head``) stops quietly.

Python ignores SIGPIPE, so the next write raised ``BrokenPipeError``: a traceback (two, with the
interpreter's flush at exit) for a plain ``print``, and for a command printing through rich
inside the suite's pytest hooks an 80-line ``INTERNALERROR`` dump. Now each ends as a program
that SIGPIPE ended: status 141 (128 + 13), nothing on stderr, its temporary directories gone.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from pi_continuity_harness import cli
from pi_continuity_harness.commands import rules as rules_command
from pi_continuity_harness.features import suite
from pi_continuity_harness.features.suite import ScenarioResult

from .harness_cli import SCRIPT

#: The smallest pipe Linux makes (one page): a command's output fills it long before it ends.
_PIPE_BYTES = 4096


def _head_one_line(*args: str, cwd: Path) -> tuple[int, str, bytes]:
    """Run the command into a one-page pipe, read its first line, close the pipe; the exit
    status, that line and what it wrote to stderr."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    env = {**os.environ, "TMPDIR": str(cwd), "PCH_SCRATCH": str(cwd)}  # /dev/shm otherwise
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [str(SCRIPT), *args], cwd=cwd, stdout=write_end, stderr=subprocess.PIPE, env=env
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        first = reader.readline().decode()
    _, err = process.communicate(timeout=300)
    return process.returncode, first, err


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("run",), id="run: progress lines printed from the suite's pytest hooks"),
        pytest.param(("run", "-n", "2"), id="run -n 2: the same under pytest-xdist"),
        pytest.param(("rules",), id="rules: a rich table"),
        pytest.param(("explore", "--seeds", "60", "--steps", "5"), id="explore: plain print"),
    ],
)
def test_rule_a_command_whose_reader_leaves_ends_quietly_with_sigpipes_status(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    code, first, err = _head_one_line(*args, cwd=tmp_path)
    assert first, "the command printed nothing"
    assert err == b"", err.decode()[-3000:]
    assert code == 128 + signal.SIGPIPE
    # Its run's temporary directories (TMPDIR and PCH_SCRATCH: this test's own) are removed; pytest-xdist's
    # workers keep pytest's own ``pytest-of-<user>``, as in any run.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("pytest-of-")) == []


def test_a_broken_pipe_that_is_not_the_output_is_still_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a reader leaving the output is a quiet exit: a broken pipe to a Pi process or a
    worker is a defect, and keeps its traceback."""

    def command(_args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe (to a worker)")

    monkeypatch.setattr(rules_command, "main", command)  # registered as the subcommand's func
    with pytest.raises(BrokenPipeError, match="to a worker"):
        cli.main(["rules"])


def test_a_closed_output_stops_the_pytest_xdist_controller_too() -> None:
    """Under ``-n N`` the controller's loop (pytest-xdist's ``DSession``) reads its own
    ``shouldstop``, not the session's: when only the session's was set, the workers were handed
    every scenario after the reader had left, and ``run -n 2 | head -1`` cost what the whole run
    costs (10.4 against 5.8 CPU-s). Both are set at the first write to a closed output."""

    def closed(_result: ScenarioResult, _done: int, _total: int) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    dsession = SimpleNamespace(shouldstop=False)
    plugins = SimpleNamespace(getplugin=lambda name: dsession if name == "dsession" else None)
    session = SimpleNamespace(shouldstop=False, config=SimpleNamespace(pluginmanager=plugins))
    collector = suite._Collector(closed)
    collector.pytest_sessionstart(session)  # type: ignore[arg-type]
    collector._store(ScenarioResult("s", "a", "pi-session-continuity", "passed", 0.0, nodeid="f::s"))
    assert collector.output_closed is not None
    assert session.shouldstop == dsession.shouldstop == "the reader of the output closed it"
