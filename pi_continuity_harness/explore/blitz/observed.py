"""The blitz handoff invariants as real Pi lets them be observed (``explore --target pi``).

The invariants of ``blitz.invariants`` that read only what a real Pi process shows of any
implementation (the session files and entries, and the files under the handoff directory) run
unchanged on an observed run; the others read the simulator's trace (tool executions in order,
the implementation's file operations, runtime creation) and stay with the simulator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pi_continuity_harness.explore.blitz.invariants import (
    BLITZ_INVARIANTS,
    dossier_retained_when_deletion_off,
    finish_only_with_returned_id,
    settings_file_valid,
)
from pi_continuity_harness.explore.observed import ObservedInvariant, ObservedRun
from pi_continuity_harness.scenario.operations import EditFileOp
from pi_continuity_harness.scenario.trace import jsonl_lines

__all__ = ["OBSERVED_INVARIANTS"]

_MANAGED = "$AGENT/pi-blitz-handoff"


class _Observed:
    """What ``blitz.invariants`` reads of a run (``_Run``), from an observed run: the session
    entries (the live session and the other session files), the handoff directory, the settings."""

    def __init__(self, run: ObservedRun) -> None:
        self._run = run
        self.records: list[dict[str, Any]] = []
        self.settings = _settings(run)
        self.scenario = run.scenario

    def session_entries(self) -> list[list[dict[str, Any]]]:
        observation = self._run.observation
        live = str(observation.session_file) if observation.session_file else None
        out = []
        for path in sorted(Path(observation.session_dir).glob("*.jsonl")):
            if str(path) == live:
                continue
            lines = [
                json.loads(line) for line in jsonl_lines(path.read_text(encoding="utf-8")) if line.strip()
            ]
            out.append(lines[1:])
        out.append(list(observation.entries))
        return out

    def managed(self, *parts: str) -> Path:
        return Path(self._run.agent_dir, "pi-blitz-handoff", *parts)


def _settings(run: ObservedRun) -> dict[str, Any]:
    for op in run.scenario.operations:
        edit = op.edit_file if isinstance(op, EditFileOp) else None
        if edit is not None and edit.path == f"{_MANAGED}/config.json" and isinstance(edit.json_value, dict):
            return dict(edit.json_value)
    return {}


def _observed(function: Any) -> ObservedInvariant:
    rules = next(r for f, r in BLITZ_INVARIANTS if f is function)

    def check(run: ObservedRun) -> Iterator[str]:
        yield from function(_Observed(run), [])

    doc = " ".join((function.__doc__ or "").split())
    needs = frozenset({"entries", "files"})
    return ObservedInvariant(function.__name__, doc, rules, needs, check)


#: The blitz handoff invariants that read only observations. ``automatic_initiation_budget``
#: is not one of them since it reads the messages per request from the simulator's trace
#: (``handoff_messages``, the request epochs), which an observed real-Pi run does not have.
OBSERVED_INVARIANTS: tuple[ObservedInvariant, ...] = tuple(
    _observed(f)
    for f in (
        finish_only_with_returned_id,
        settings_file_valid,
        dossier_retained_when_deletion_off,
    )
)
