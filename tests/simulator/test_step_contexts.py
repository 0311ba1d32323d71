"""The contexts every step of a simulation enters (``Simulation._run``) restore what they
replaced, on the way out of an error too, and enter the project only when it is a directory."""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

import pytest

from pi_continuity_harness.api.extension_api import AGENT_DIR_ENV
from pi_continuity_harness.scenario.confine import confined_tempdir
from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock, deterministic_environment
from pi_continuity_harness.simulator.simulation import agent_dir_environment, project_cwd
from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop


def test_project_cwd_enters_a_directory_and_leaves_anything_else_alone(tmp_path: Path) -> None:
    before = os.getcwd()
    with project_cwd(str(tmp_path)):
        assert os.getcwd() == str(tmp_path)
    assert os.getcwd() == before
    (tmp_path / "file").write_text("x")
    for not_a_directory in (tmp_path / "missing", tmp_path / "file", tmp_path / "file" / "below"):
        with project_cwd(str(not_a_directory)):
            assert os.getcwd() == before
        assert os.getcwd() == before
    with pytest.raises(RuntimeError), project_cwd(str(tmp_path)):
        raise RuntimeError
    assert os.getcwd() == before


def test_agent_dir_and_tempdir_are_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AGENT_DIR_ENV, raising=False)
    with agent_dir_environment("/a"), confined_tempdir(str(tmp_path)):
        assert os.environ[AGENT_DIR_ENV] == "/a"
        assert tempfile.gettempdir() == str(tmp_path)
    assert AGENT_DIR_ENV not in os.environ
    monkeypatch.setenv(AGENT_DIR_ENV, "/before")
    with pytest.raises(RuntimeError), agent_dir_environment("/b"):
        raise RuntimeError
    assert os.environ[AGENT_DIR_ENV] == "/before"


def test_deterministic_environment_swaps_the_streams_and_restores_the_process(tmp_path: Path) -> None:
    loop = VirtualTimeEventLoop()
    try:
        clock, rng = VirtualClock(loop), SeededRandom(7)
        real_time, real_urandom, names = time.time, os.urandom, tempfile._name_sequence  # type: ignore[attr-defined]
        random.seed(1)
        expected_process = random.Random(1).random()
        with deterministic_environment(clock, rng):
            first = random.random()
            assert time.time() == clock.peek_ms() / 1000.0  # the virtual clock's timestamp
        with pytest.raises(RuntimeError), deterministic_environment(clock, rng):
            second = random.random()
            raise RuntimeError
        assert (time.time, os.urandom) == (real_time, real_urandom)
        assert tempfile._name_sequence is names  # type: ignore[attr-defined]
        assert random.random() == expected_process  # the process's stream went on where it was
        stream = random.Random("7:random")
        assert (first, second) == (stream.random(), stream.random())  # the run's stream too
    finally:
        loop.close()
