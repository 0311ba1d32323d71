"""What ``run`` and ``compare`` check before the first scenario, and what they say after.

:meth:`SuiteSetup.checked` checks, in this order and before anything is written: every output
path (:mod:`._paths`), no two of them naming the same path (``--json x --html x`` replaced the
JSON with the page), the run directory's lock (a second process on it is refused), every
feature file parses, each target runs here (``--target pi``: Pi installed), and the
implementation loads on each target (:mod:`~pi_continuity_harness.features.preflight`). A
mistake is one line and exit status 2 (the command line's :data:`USAGE_ERRORS`), and nothing
has been written.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._paths import (
    check_directory,
    check_distinct,
    check_file,
    typescript_inputs,
)
from pi_continuity_harness.features import SUITE_DIR
from pi_continuity_harness.features.preflight import check_features, check_implementation, check_target
from pi_continuity_harness.features.suite import RECORD_FILES, SuiteRun
from pi_continuity_harness.scenario.run_lock import hold_run_directory

__all__ = ["SuiteSetup", "internal_error_message", "no_scenario_error", "print_kept"]


@dataclass
class SuiteSetup:
    """The setup of a suite command: its targets, implementation, features and paths."""

    targets: tuple[str, ...]
    extension: str
    system: str | None = None
    features: Path | None = None
    workdir: Path | None = None
    #: The real Pi release ``pi`` drives (None: the pinned one).
    pi_version: str | None = None
    #: Output files by option (None: not asked for).
    files: dict[str, Path | None] = field(default_factory=dict)
    #: Output directories by option (None: not asked for).
    directories: dict[str, Path | None] = field(default_factory=dict)
    #: ``--html`` (checked by :func:`~._report.check_html`; here only compared with the others).
    html: Path | None = None

    def _feature_inputs(self, outputs: dict[str, Path | None]) -> list[tuple[str, Path]]:
        """Every output that is an existing file of ``--features`` (a feature file, a step module,
        a scenario a feature names) as an input: ``run --features f --json f/a.feature`` replaced
        the feature with the results (found by an audit in stop 28)."""
        if self.features is None:
            return []
        label = f"a file of --features {self.features}:"
        return [(label, path) for path in _existing_below(self.features, (p for p in outputs.values() if p))]

    @contextlib.contextmanager
    def checked(self) -> Iterator[None]:
        """Check everything, hold the run directory, and run the ``with`` block."""
        for option, path in self.files.items():
            check_file(option, path)
        for option, path in self.directories.items():
            check_directory(option, path)
        check_directory("--workdir", self.workdir)
        outputs = {**self.files, "--html": self.html, **self.directories, "--workdir": self.workdir}
        inputs = [*self._feature_inputs(outputs), *typescript_inputs([self.extension])]
        check_distinct(outputs, inputs=inputs, writes={"--report": RECORD_FILES})
        with contextlib.ExitStack() as stack:
            if self.workdir is not None:
                stack.enter_context(hold_run_directory(self.workdir))
            check_features([self.features] if self.features is not None else [SUITE_DIR])
            for target in self.targets:
                check_target(target, self.pi_version)
            for target in self.targets:
                check_implementation(target, self.extension, system=self.system, pi_version=self.pi_version)
            yield


def _existing_below(root: Path, paths: Iterator[Path]) -> list[Path]:
    """The paths that are existing files at or below ``root`` (links resolved)."""
    resolved = root.resolve()
    return [p for p in paths if p.is_file() and p.resolve().is_relative_to(resolved)]


def no_scenario_error(tags: str | None, keyword: str | None, features: Path | None) -> UsageError:
    """The error for a selection that left no scenario to run."""
    selection = " and ".join(
        part for part in (f"--tags {tags!r}" if tags else "", f"-k {keyword!r}" if keyword else "") if part
    )
    where = f"the feature files under {features}" if features is not None else "the suite"
    if selection:
        return UsageError(f"{selection} selects no scenario of {where}")
    return UsageError(f"no scenario of {where} runs for this implementation")


def internal_error_message(command: str, reported: int) -> str:
    """The line for a suite run pytest ended with an internal error: not a usage error (the
    arguments were checked), and not "no scenario runs" (some may have, unreported)."""
    return (
        f"pi-continuity-harness {command}: pytest stopped with an internal error (the INTERNALERROR "
        f"lines above), after {reported} scenario result(s); the run is incomplete and failed"
    )


def print_kept(console: Console, run: SuiteRun, *, quiet: bool, prefix: str = "") -> None:
    """Where the failing scenarios' machines are (each one under ``--quiet``, where the progress
    lines did not say), and whether the run directory was kept."""
    failing = [r for r in run.failed if r.machine]
    if quiet:
        for result in failing:
            what = f"{result.status.upper()} {result.assertion} :: {result.name}"
            console.print(
                f"{prefix}{what}: machine kept in {result.machine}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    if run.workdir is None or not run.kept or not run.failed:
        return
    console.print(
        f"{prefix}the machines of the {len(run.failed)} failing scenario(s) are kept in {run.workdir}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def add_workers_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``-n N``: ``what`` in N pytest-xdist processes (``run``, ``matrix``); check it with
    :func:`check_workers`."""
    parser.add_argument(
        "-n",
        dest="workers",
        type=int,
        default=0,
        metavar="N",
        help=f"run {what} in N parallel processes (pytest-xdist); same results and reports",
    )


#: The most pytest-xdist workers (``-n``): each runs scenarios in a process of its own (on real
#: Pi, with a Pi process beside it), and a count above the machine's cores only waits. Before the
#: bound, ``-n 100000`` tried to start as many.
MAX_WORKERS = 64


def check_workers(workers: int) -> None:
    if workers < 0:
        raise UsageError(f"-n must not be negative (got {workers})")
    if workers > MAX_WORKERS:
        raise UsageError(f"-n must be at most {MAX_WORKERS} (got {workers})")
