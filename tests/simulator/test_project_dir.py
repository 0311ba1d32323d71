"""``Target.project_dir()``: the project directory as ``observe()`` names it, without a whole
observation (``World.start`` reads the project's settings and files through it; issue 16).

On the simulator every run's paths are one fixed virtual root (``simulator/virtual_root.py``)
that leads to the run whose view is active, so ``project_dir()`` must make its own run's view
active, as ``observe()`` does. Real Pi's answer is checked against its ``observe()`` in
``tests/realpi/test_pi_target.py`` (``run``)."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.targets.sim import SimTarget

from .helpers import base


def _started(where: Path, text: str) -> SimTarget:
    target = SimTarget("reference", where)
    target.start(parse_scenario(base(files={"$PROJECT/marker.txt": {"text": text}})))
    return target


def test_the_project_directory_is_the_one_observe_names(tmp_path: Path) -> None:
    target = _started(tmp_path / "a", "a\n")
    try:
        assert target.project_dir() == target.observe().project_dir
        assert (target.project_dir() / "marker.txt").read_text(encoding="utf-8") == "a\n"
    finally:
        target.close()


def test_the_project_directory_leads_to_its_own_run_after_another_started(tmp_path: Path) -> None:
    """Two simulations in one process: the first one's project directory, asked for after the
    second started, reads the first one's files (its view is made active again)."""
    first = _started(tmp_path / "a", "first\n")
    second = _started(tmp_path / "b", "second\n")
    try:
        assert (first.project_dir() / "marker.txt").read_text(encoding="utf-8") == "first\n"
        assert (second.project_dir() / "marker.txt").read_text(encoding="utf-8") == "second\n"
        assert (first.project_dir() / "marker.txt").read_text(encoding="utf-8") == "first\n"
    finally:
        first.close()
        second.close()
