"""The Pi version matrix: the same suite against several real Pi releases, per implementation.

:func:`run_matrix` installs each release (beside the others, reusing what is cached), runs the
suite with :func:`~.suite.run_suite` on ``--target pi`` once per implementation and release, and
returns a :class:`MatrixRun`: one row per scenario (with its named assertion), one cell per
release (passed, failed, skipped with the reason), the seconds each release took, and per
implementation the lowest release on which everything that can run passes.

"Everything that can run passes" on a release when none of its scenarios failed (or errored);
scenarios skipped for a capability the release lacks (``@needs-<capability>``, see
``targets/realpi/versions.py``) do not count against it. The *lowest passing version* is the
oldest release from which on every tested release passes, so it is a minimum that holds for
every newer release tested (None when the newest tested release fails).

The *minimum supported version* is stricter: the oldest release from which on every tested
release passes **and** runs all of the implementation's own scenarios, i.e. skips none for a
host capability the release lacks. Scenarios tagged ``@host`` do not count there: they measure
Pi itself (an implementation that does nothing passes them), not what the implementation needs.
Skips for what no real Pi can do (simulator-only capabilities) never count.

The JSON (:meth:`MatrixRun.to_json`) and the validation record (:meth:`MatrixRun.write_report`)
carry the same matrix; the record adds the environment, the install command of each release,
and each run's own validation record (spec §20) under ``<dir>/<implementation>/<version>/``.
"""

from __future__ import annotations

import json
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness import PI_VERSION, __version__
from pi_continuity_harness.features.suite import ScenarioResult, SuiteRun, run_suite
from pi_continuity_harness.scenario import implementations as registry
from pi_continuity_harness.scenario.implementations import SESSION_CONTINUITY, ImplementationError
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
from pi_continuity_harness.targets.realpi.versions import HOST_CAPABILITIES

__all__ = [
    "FAILING",
    "MatrixCell",
    "MatrixRow",
    "MatrixRun",
    "PiVersionMatrix",
    "run_matrix",
    "version_key",
]

#: Scenario statuses that make a release fail.
FAILING = frozenset({"failed", "error"})
#: The start of a skip reason for a capability (``pytest_plugin``): ``needs <capability> (...``.
_NEEDS = re.compile(r"^needs (?P<capability>[a-z0-9.-]+) \(")


def version_key(version: str) -> tuple[int, ...]:
    """``"1.5.2"`` -> ``(1, 5, 2)``: releases compare numerically, oldest first."""
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class MatrixCell:
    """One scenario on one Pi release."""

    status: str  # passed | failed | skipped | error | missing
    reason: str = ""
    duration_s: float = 0.0
    #: The host capability the release lacks, when that is why the scenario was skipped.
    capability: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "capability": self.capability,
        }


@dataclass
class MatrixRow:
    """One scenario (an Examples row counts as one) across the releases."""

    assertion: str
    scenario: str
    cells: dict[str, MatrixCell] = field(default_factory=dict)
    #: Tagged ``@host``: it measures Pi's own behaviour, not the implementation.
    host: bool = False

    def to_json(self, versions: Sequence[str]) -> dict[str, Any]:
        return {
            "assertion": self.assertion,
            "scenario": self.scenario,
            "host": self.host,
            "cells": {v: self.cells.get(v, MatrixCell("missing")).to_json() for v in versions},
        }


def _reason(result: ScenarioResult) -> str:
    if result.status == "passed":
        return ""
    lines = result.detail.strip().splitlines()
    return lines[0][:400] if lines else result.status


def _host_capability(result: ScenarioResult) -> str | None:
    """The host capability a skip names (``needs <capability> (...)``), if it is one."""
    match = _NEEDS.match(result.detail) if result.status == "skipped" else None
    if match is None or match.group("capability") not in HOST_CAPABILITIES:
        return None
    return match.group("capability")


def _cell(result: ScenarioResult) -> MatrixCell:
    return MatrixCell(result.status, _reason(result), result.duration_s, _host_capability(result))


@dataclass
class PiVersionMatrix:
    """One implementation across the Pi releases."""

    implementation: str
    system: str
    pi_versions: list[str]
    runs: dict[str, SuiteRun] = field(default_factory=dict)

    @property
    def rows(self) -> list[MatrixRow]:
        """One row per scenario, in the suite's reading order (as the first release ran them)."""
        rows: dict[str, MatrixRow] = {}
        for version in self.pi_versions:
            run = self.runs.get(version)
            for result in run.results if run is not None else []:
                key = result.nodeid or result.name
                row = rows.setdefault(
                    key, MatrixRow(result.assertion, result.name, host="host" in result.tags)
                )
                row.cells[version] = _cell(result)
        return list(rows.values())

    def counts(self, version: str) -> dict[str, int]:
        run = self.runs.get(version)
        return run.counts() if run is not None else {}

    def passes(self, version: str) -> bool:
        """Everything that could run on ``version`` passed (something ran, and every scenario
        another release ran was run here too)."""
        run = self.runs.get(version)
        if run is None or not run.results or run.exit_code not in (0, 1, 5):
            return False
        return all(
            row.cells.get(version, MatrixCell("missing")).status not in (*FAILING, "missing")
            for row in self.rows
        )

    def capability_skips(self, version: str, *, own_only: bool = False) -> list[str]:
        """The host capabilities ``version`` lacks that made scenarios skip (``own_only``: of the
        implementation's own scenarios, not ``@host`` ones)."""
        found = {
            cell.capability
            for row in self.rows
            if not (own_only and row.host)
            for cell in [row.cells.get(version)]
            if cell is not None and cell.capability is not None
        }
        return sorted(c for c in found if c is not None)

    def _lowest(self, good: Callable[[str], bool]) -> str | None:
        lowest: str | None = None
        for version in sorted(self.pi_versions, key=version_key, reverse=True):
            if not good(version):
                break
            lowest = version
        return lowest

    @property
    def lowest_passing_version(self) -> str | None:
        """The oldest release from which on every tested release passes."""
        return self._lowest(self.passes)

    @property
    def minimum_supported_version(self) -> str | None:
        """The oldest release from which on every tested release passes and skips none of the
        implementation's own scenarios for a host capability it lacks."""
        return self._lowest(lambda v: self.passes(v) and not self.capability_skips(v, own_only=True))

    @property
    def seconds_per_version(self) -> dict[str, float]:
        return {v: round(self.runs[v].seconds, 1) for v in self.pi_versions if v in self.runs}

    def to_json(self) -> dict[str, Any]:
        return {
            "implementation": self.implementation,
            "system": self.system,
            "pi_versions": list(self.pi_versions),
            "rows": [row.to_json(self.pi_versions) for row in self.rows],
            "lowest_passing_version": self.lowest_passing_version,
            "minimum_supported_version": self.minimum_supported_version,
            "seconds_per_version": self.seconds_per_version,
            "counts": {v: self.counts(v) for v in self.pi_versions},
            "capability_skips": {v: self.capability_skips(v) for v in self.pi_versions},
        }


@dataclass
class MatrixRun:
    """Every implementation across the Pi releases."""

    implementations: list[PiVersionMatrix]
    #: Per release: ``installed`` or ``reused`` and the seconds the install (or check) took.
    installs: dict[str, dict[str, Any]] = field(default_factory=dict)
    workdir: Path | None = None

    @property
    def ok(self) -> bool:
        """Nothing failed on any release, for any implementation."""
        return all(m.passes(v) for m in self.implementations for v in m.pi_versions)

    def to_json(self) -> dict[str, Any]:
        return {
            "implementations": [m.to_json() for m in self.implementations],
            "simulator_models": PI_VERSION,
        }

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    def environment(self) -> dict[str, str]:
        from pi_continuity_harness.targets.realpi.install import NODE_VERSION  # noqa: PLC0415  (real Pi's modules load only when needed)

        return {
            "harness": __version__,
            "host": "Pi (real, RPC mode), one release per column",
            "simulator_models": f"Pi {PI_VERSION}",
            "node": NODE_VERSION,
            "python": platform.python_version(),
            "os": platform.platform(),
        }

    def write_report(self, directory: Path) -> tuple[Path, Path]:
        """The validation record of the matrix (Markdown and JSON), plus each run's own record
        under ``<directory>/<implementation>/<version>/``."""
        directory.mkdir(parents=True, exist_ok=True)
        record = {
            **self.to_json(),
            "environment": self.environment(),
            "install_commands": {v: _install_command(v) for m in self.implementations for v in m.pi_versions},
            "installs": self.installs,
        }
        json_path = directory / "validation-record.json"
        json_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        md_path = directory / "validation-record.md"
        md_path.write_text(markdown(self, record), encoding="utf-8")
        for matrix in self.implementations:
            for version, run in matrix.runs.items():
                run.write_report(directory / _slug(matrix.implementation) / version)
        return md_path, json_path


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text).strip("-") or "implementation"


def _install_command(version: str) -> str:
    option = "" if version == PI_VERSION else f" --pi-version {version}"
    return f"python -m pip install pi-continuity-harness && pi-continuity-harness install-pi{option}"


def assertion_cell(rows: Sequence[MatrixRow], version: str) -> tuple[str, str]:
    """The status of a named assertion on one release, from its scenarios: ``failed`` when any
    failed, ``skipped`` when all were skipped, else ``passed``; and ``passed/total`` (with the
    number skipped)."""
    cells = [row.cells.get(version, MatrixCell("missing")) for row in rows]
    statuses = [c.status for c in cells]
    passed = statuses.count("passed")
    skipped = statuses.count("skipped")
    failed = sum(1 for s in statuses if s in FAILING)
    missing = statuses.count("missing")
    if failed or missing:
        status = "failed"
    elif skipped == len(cells):
        status = "skipped"
    else:
        status = "passed"
    text = f"{passed}/{len(cells)}"
    if failed:
        text += f", {failed} failed"
    if skipped:
        text += f", {skipped} skipped"
    if missing:
        text += f", {missing} not run"
    return status, text


def group_by_assertion(rows: Sequence[MatrixRow]) -> dict[str, list[MatrixRow]]:
    groups: dict[str, list[MatrixRow]] = {}
    for row in rows:
        groups.setdefault(row.assertion, []).append(row)
    return groups


def notes(matrix: PiVersionMatrix) -> list[str]:
    """Every scenario that did not pass somewhere: ``<versions>: <status> <scenario>: <reason>``,
    one line per (scenario, status, reason), the releases joined."""
    lines: list[str] = []
    for row in matrix.rows:
        seen: dict[tuple[str, str], list[str]] = {}
        for version in matrix.pi_versions:
            cell = row.cells.get(version, MatrixCell("missing"))
            if cell.status != "passed":
                # A skip names the release ("target pi 1.3.0 lacks it"): the same reason across
                # releases. A host capability is the release's; any other (trace-faults,
                # print-mode) the real-Pi target's, whatever the release.
                who = "the release lacks" if cell.capability else "the real-Pi target lacks"
                reason = cell.reason.replace(f"target pi {version} lacks", who)
                seen.setdefault((cell.status, reason), []).append(version)
        for (status, reason), versions in seen.items():
            where = "every version" if len(versions) == len(matrix.pi_versions) else ", ".join(versions)
            lines.append(f"{where}: {status} {row.assertion} :: {row.scenario}: {reason}")
    return lines


def markdown(run: MatrixRun, record: dict[str, Any]) -> str:
    lines = ["# Pi Continuity Harness validation record: Pi version matrix", ""]
    lines += [f"- {key}: {value}" for key, value in record["environment"].items()]
    lines += [f"- Install Pi {v}: `{cmd}`" for v, cmd in record["install_commands"].items()]
    for matrix in run.implementations:
        versions = matrix.pi_versions
        lines += [
            "",
            f"## {matrix.implementation} ({matrix.system})",
            "",
            f"Lowest Pi version on which everything that can run passes: "
            f"**{matrix.lowest_passing_version or 'none'}**",
            "",
            "Minimum supported Pi version (passes, and none of its own scenarios skipped for a "
            f"host capability Pi lacks): **{matrix.minimum_supported_version or 'none'}**",
            "",
            "| assertion | " + " | ".join(versions) + " |",
            "|---|" + "---|" * len(versions),
        ]
        for assertion, rows in group_by_assertion(matrix.rows).items():
            cells = []
            for version in versions:
                status, text = assertion_cell(rows, version)
                cells.append(f"{status} {text}" if status != "passed" else text)
            lines.append(f"| {assertion} | " + " | ".join(cells) + " |")
        totals = []
        for version in versions:
            counts = matrix.counts(version)
            seconds = matrix.seconds_per_version.get(version, 0.0)
            totals.append(
                f"{counts.get('passed', 0)} passed, {counts.get('failed', 0) + counts.get('error', 0)} "
                f"failed, {counts.get('skipped', 0)} skipped; {seconds:.0f} s"
            )
        lines.append("| **total** | " + " | ".join(totals) + " |")
        skips = [(v, matrix.capability_skips(v)) for v in versions]
        if any(caps for _v, caps in skips):
            lines += ["", "Host capabilities missing (scenarios skipped):", ""]
            lines += [f"- {v}: {', '.join(caps)}" for v, caps in skips if caps]
        extra = notes(matrix)
        if extra:
            lines += ["", "Not passed:", ""] + [f"- {line}" for line in extra]
    return "\n".join(lines) + "\n"


def implementation_system(extension: str, system: str | None) -> str:
    """The system an implementation implements (``system`` for a TypeScript file, else what its
    factory declares)."""
    if extension.endswith((".ts", ".js", ".mts", ".mjs")):
        return system or SESSION_CONTINUITY.name
    try:
        return registry.implementation_system(extension).name
    except ImplementationError:
        return system or SESSION_CONTINUITY.name  # the run reports the unloadable implementation


def run_matrix(
    *,
    pi_versions: Sequence[str],
    extensions: Sequence[str] = ("reference",),
    tags: str | None = None,
    keyword: str | None = None,
    seed: int = 0,
    system: str | None = None,
    workdir: Path | None = None,
    install: Callable[[str], dict[str, Any]] | None = None,
    on_version: Callable[[PiVersionMatrix, str, SuiteRun], None] | None = None,
    on_result: Callable[[str, str, ScenarioResult, int, int], None] | None = None,
    suite: Callable[..., SuiteRun] | None = None,
    workers: int = 0,
) -> MatrixRun:
    """Run the suite for every implementation on every release of ``pi_versions`` (checked by
    the caller), oldest first. ``install(version)`` installs or reuses a release before its runs
    (what it returns is kept in :attr:`MatrixRun.installs`); ``on_version`` hears of each
    finished (implementation, release) run. Scenario work directories go under ``workdir``
    (kept), else under a temporary directory removed at the end unless something failed.
    ``suite`` runs one suite (default :func:`~.suite.run_suite`); ``workers`` > 0 runs each
    suite's scenarios in that many pytest-xdist processes (``matrix -n N``: every scenario
    drives its own Pi process in its own machine directory, so they are independent, and the
    results are reported in reading order as in a serial run)."""
    run_one = suite or run_suite
    versions = sorted(dict.fromkeys(pi_versions), key=version_key)
    matrices = [
        PiVersionMatrix(ext, implementation_system(ext, system), list(versions)) for ext in extensions
    ]
    root = workdir.resolve() if workdir is not None else make_owned_directory("pi-matrix-")
    run = MatrixRun(matrices, workdir=root)
    try:
        for version in versions:
            if install is not None:
                started = time.perf_counter()
                run.installs[version] = {
                    **install(version),
                    "seconds": round(time.perf_counter() - started, 1),
                }
            for matrix in matrices:

                def progress(
                    result: ScenarioResult,
                    index: int,
                    total: int,
                    impl: str = matrix.implementation,
                    version: str = version,
                ) -> None:
                    if on_result is not None:
                        on_result(impl, version, result, index, total)

                extension = matrix.implementation
                extra = ["--system", system] if system and extension.endswith(".ts") else None
                suite_run = run_one(
                    target="pi",
                    extension=extension,
                    tags=tags,
                    keyword=keyword,
                    seed=seed,
                    workdir=root / _slug(extension) / version,
                    extra_args=extra,
                    on_result=progress,
                    pi_version=version,
                    workers=workers,
                )
                matrix.runs[version] = suite_run
                if on_version is not None:
                    on_version(matrix, version, suite_run)
                if suite_run.exit_code == int(pytest.ExitCode.INTERRUPTED):
                    raise KeyboardInterrupt  # pytest caught the interrupt; the matrix stops too
    except KeyboardInterrupt:
        # Stopped (Ctrl-C, SIGTERM): a temporary root goes unless a finished run failed, as
        # run_suite does for its own; then it stays, and stderr says where.
        if workdir is None:
            if any(r.failed for m in matrices for r in m.runs.values()):
                print(f"scenario machines kept for inspection in {root}", file=sys.stderr)
            else:
                remove_owned(root)
        raise
    if workdir is None and run.ok:
        remove_owned(root)
        run.workdir = None
    return run
