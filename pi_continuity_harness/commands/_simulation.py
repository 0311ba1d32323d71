"""What the ``simulate`` and ``replay`` subcommands share: loading, running, summarising."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._paths import check_distinct
from pi_continuity_harness.features.preflight import check_implementation
from pi_continuity_harness.scenario.document import Scenario, ScenarioError, load_scenario
from pi_continuity_harness.scenario.implementations import (
    DEFAULT_IMPLEMENTATION,
    ImplementationError,
    resolve_implementation,
)
from pi_continuity_harness.scenario.run_lock import hold_run_directory
from pi_continuity_harness.scenario.trace import first_difference
from pi_continuity_harness.scenario.workspace import WorkdirError
from pi_continuity_harness.simulator.simulation import RUN_ENTRIES, SimulationResult, simulate

__all__ = [
    "DEFAULT_IMPLEMENTATION",
    "check_paths",
    "default_workdir",
    "first_difference",
    "load",
    "prepared",
    "run",
    "summary",
]


def load(path: str) -> Scenario:
    """The scenario at ``path``; a malformed one is a usage error (``file: field: reason``)."""
    try:
        return load_scenario(path)
    except ScenarioError as error:
        raise UsageError(str(error)) from None


def check_paths(
    workdir: Path, *, outputs: dict[str, Path | None], inputs: list[tuple[str, Path | None]]
) -> None:
    """Before the run, the paths a run of ``simulate`` or ``replay`` reads and writes keep out of
    each other's way (a :class:`UsageError` naming the option and the path):

    * no output is an input or another output (``simulate s.yaml --trace s.yaml`` replaced the
      scenario with its trace, exit 0);
    * no output is the run directory or one of the files the run writes there
      (``--trace w/trace.jsonl --workdir w`` ran in full, then failed on copying the trace onto
      itself, with two ``PosixPath(...)`` reprs for a message);
    * no input is inside the run directory, which the run empties first (a scenario there was
      deleted by its own run)."""
    check_distinct({**outputs, "--workdir": workdir}, inputs=inputs)
    root = workdir.resolve()
    for option, path in outputs.items():
        entry = _run_entry(root, path)
        if entry is not None:
            raise UsageError(f"{option} {path}: the run itself writes {entry} in its run directory {workdir}")
    for label, source in inputs:
        if source is not None and source.resolve().is_relative_to(root):
            raise UsageError(
                f"{label} {source}: inside the run directory {workdir}, which the run empties first"
            )


def _run_entry(root: Path, path: Path | None) -> str | None:
    """The entry of the run directory ``root`` that ``path`` is or is inside of (None: neither)."""
    if path is None:
        return None
    resolved = path.resolve()
    if not resolved.is_relative_to(root) or resolved == root:
        return None
    entry = resolved.relative_to(root).parts[0]
    return entry if entry in RUN_ENTRIES else None


@contextlib.contextmanager
def prepared(scenario: Scenario, source: str, workdir: Path, extension: str) -> Iterator[None]:
    """Before the run: the scenario's own extension modules resolve (an error names the file and
    field), the implementation loads (a factory that raises is one setup error, not a run whose
    every operation fails with exit 0), then the run directory is held for the whole command (a
    second process on it is refused), so its files are ours while we read them."""
    for index, ref in enumerate(scenario.extensions):
        if ref.module is not None:
            try:
                resolve_implementation(ref.module, where=f"extensions[{index}].module")
            except ImplementationError as error:
                raise UsageError(f"{source}: {error}") from None
    check_implementation("sim", extension)
    with hold_run_directory(workdir):
        yield


def run(
    scenario: Scenario, *, source: str, workdir: str | Path, seed: int | None, extension: str
) -> SimulationResult:
    """Run the scenario read from ``source``; what stops it from starting is a usage error
    (call it inside :func:`prepared`)."""
    try:
        return simulate(scenario, workdir=workdir, seed=seed, implementation=extension)
    except (ImplementationError, WorkdirError) as error:
        raise UsageError(str(error)) from None
    except ScenarioError as error:  # a field found unusable only now (an extension module)
        raise UsageError(f"{source}: {error}") from None


def summary(result: SimulationResult) -> str:
    """A short, human summary: operations and outcomes, compactions, notifications, files."""
    records = result.host.trace.records
    lines = [
        f"scenario {result.scenario.name}  seed {result.seed}  extension {result.implementation}",
        f"workdir  {result.workdir}",
        f"machine  {result.machine_dir} (the host's $WORK: {result.host.paths.workdir})",
        *(
            [
                f"note     the host saw the real directory ({result.note}): this run replays "
                "byte for byte only in the same directory"
            ]
            if result.note
            else []
        ),
        "operations:",
    ]
    for index, outcome in enumerate(result.operations):
        status = "ok" if outcome.ok else "FAILED"
        extra = f" ({outcome.disposition})" if outcome.disposition else ""
        failure = f": {outcome.error}" if outcome.error else ""
        lines.append(f"  {index:>2} {outcome.name:<12} {status}{extra}{failure}")
    ends = [r for r in records if r["kind"] == "session" and r["name"] == "compaction_end"]
    counts: Counter[str] = Counter()
    for end in ends:
        if end.get("aborted"):
            verdict = "aborted"
        elif end.get("errorMessage"):
            verdict = "failed"
        else:
            verdict = "ok"
        counts[f"{end.get('reason')} {verdict}"] += 1
    described = ", ".join(f"{n}× {what}" for what, n in sorted(counts.items())) or "none"
    lines.append(f"compactions: {described}")
    notes = [r for r in records if r["kind"] == "ui" and r["name"] == "notify"]
    lines.append(f"notifications: {len(notes)}")
    for note in notes:
        lines.append(f"  [{note.get('notifyType', 'info')}] {_one_line(str(note.get('message', '')))}")
    errors = [r for r in records if r["kind"] == "session" and r["name"] == "extension_error"]
    if errors:
        lines.append(f"extension errors: {len(errors)}")
        for record in errors:
            lines.append(f"  {record.get('event')}: {_one_line(str(record.get('error', '')))}")
    if result.host.crashed or any(r["kind"] == "host" and r["name"] == "crash" for r in records):
        lines.append("crashed: yes")
    lines.append("files:")
    for name, data in result.output_files().items():
        lines.append(f"  {name} ({len(data)} bytes)")
    return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def default_workdir(prefix: str, scenario: Scenario, seed: int | None) -> Path:
    return Path("sim-out") / f"{prefix}{scenario.name}-{scenario.seed if seed is None else seed}"
