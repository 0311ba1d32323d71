"""One scenario on the simulator and on real Pi, compared with no tolerance.

:func:`play_both` starts each target from the scenario, performs its operations, observes,
normalises (:func:`~.comparison.normalise_observation`, with the files the run left in the
project directory as artifacts) and diffs the two records (:func:`~.comparison.diff_records`).
The differential explorer runs every seed through it, and the regression features it writes
replay a scenario file through it (``When it runs on the simulator and on real Pi``).

The two work directories are siblings of the same length (``sim`` and ``rpi``), so every path
that enters a text or an estimate has the same length on both targets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.targets.comparison import Difference, diff_records, normalise_observation
from pi_continuity_harness.targets.known_differences import neutralisers
from pi_continuity_harness.targets.target import Observation, Target, TargetStartError

__all__ = ["TARGET_DIRS", "BothRuns", "play_both", "project_files"]

#: The work directory of each target under a run's root (equal lengths, see the docstring).
TARGET_DIRS: dict[str, str] = {"sim": "sim", "pi": "rpi"}
#: Directories of the project that hold no implementation artifact.
_SKIPPED = ("node_modules",)


@dataclass
class BothRuns:
    """The two records of one scenario, their differences, and the time each target took."""

    records: dict[str, dict[str, Any]]
    differences: list[Difference]
    seconds: dict[str, float] = field(default_factory=dict)
    #: A target that refused to start: its reason (the other's start is compared with it).
    start_errors: dict[str, str] = field(default_factory=dict)

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if not d.explained]

    @property
    def identical(self) -> bool:
        """No difference (two start failures with the same reason count as the same)."""
        return not self.differences


def project_files(observation: Observation) -> dict[str, bytes]:
    """Every file under the project directory (the implementation's artifacts and settings),
    by path relative to it."""
    root = observation.project_dir
    if not root.is_dir():
        return {}
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not any(part in _SKIPPED for part in relative.parts):
            out[str(relative)] = path.read_bytes()
    return out


def play_both(
    scenario: Scenario,
    root: Path,
    *,
    make: Callable[[str, Path], Target],
    on_operation: Callable[[str, Target, int], None] | None = None,
) -> BothRuns:
    """Play ``scenario`` on the simulator, then on real Pi (``make(name, workdir)`` builds each
    target), and compare what each observed. ``on_operation(target, t, index)`` runs after
    every operation (the explorer checks invariants there)."""
    records: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    for name in ("sim", "pi"):
        started = time.perf_counter()
        target = make(name, root / TARGET_DIRS[name])
        try:
            try:
                target.start(scenario)
            except TargetStartError as error:
                errors[name] = str(error).splitlines()[0]
                continue
            for index, op in enumerate(scenario.operations):
                target.perform(op)
                if on_operation is not None:
                    on_operation(name, target, index)
            observation = target.observe()
            records[name] = normalise_observation(
                observation, artifacts=project_files(observation), scenario=scenario.name
            )
        finally:
            target.close()
            seconds[name] = time.perf_counter() - started
    if errors:
        sim_error, pi_error = errors.get("sim"), errors.get("pi")
        detail = [] if sim_error == pi_error else [f"- sim: {sim_error}", f"+ pi: {pi_error}"]
        differences = [Difference("started", detail)] if detail else []
        return BothRuns(records, differences, seconds, errors)
    return BothRuns(records, diff_records(records["sim"], records["pi"], neutralisers()), seconds)
