"""The blitz handoff invariants as real Pi lets them be observed (``explore --target pi``).

The invariants of ``blitz.invariants`` that read only what a real Pi process shows of any
implementation (the session files and entries, and the files under the handoff directory) run
unchanged on an observed run; the others read the simulator's trace (tool executions in order,
the implementation's file operations, runtime creation) and stay with the simulator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pi_continuity_harness.explore.blitz.invariants import (
    BLITZ_INVARIANTS,
    RunReading,
    ToolExchange,
    _header_id,
    _lines,
    _Run,
    _settings,
    _tool_exchanges,
    dossier_named_after_source_session,
    dossier_retained_when_deletion_off,
    finish_only_with_returned_id,
    recovery_files_named_as_specified,
    settings_file_valid,
)
from pi_continuity_harness.explore.observed import ObservedInvariant, ObservedRun
from pi_continuity_harness.scenario.document import Scenario

__all__ = ["OBSERVED_INVARIANTS"]

T = TypeVar("T")

#: A blitz invariant that needs no trace (:class:`~.invariants.RunReading`).
ObservableInvariant = Callable[[RunReading, list[dict[str, Any]]], Iterator[str]]


class _Observed:
    """An observed run read as ``blitz.invariants`` reads a simulated one
    (:class:`~.invariants.RunReading`): the session entries (the other session files, then the
    live session), the handoff directory, the settings the scenario writes; no trace. One is made
    per check, so :meth:`once` keeps what it made for that check only, as ``_Run.once`` does."""

    def __init__(self, run: ObservedRun) -> None:
        self._run = run
        self._made: dict[str, Any] = {}
        self.settings = _settings(run.scenario)

    @property
    def scenario(self) -> Scenario:
        return self._run.scenario

    def trace_reading(self) -> _Run | None:
        """None: real Pi shows no trace (the implementation's file operations, the order of
        tool executions and commands)."""
        return None

    def once(self, name: str, make: Callable[[], T]) -> T:
        if name not in self._made:
            self._made[name] = make()
        made: T = self._made[name]
        return made

    def _other_session_files(self) -> tuple[list[Path], Path | None]:
        """Every session file but the live session's, sorted by name as ``_Run.session_files``
        lists them, and the live session's file (None: in memory)."""
        observation = self._run.observation
        live = Path(observation.session_file) if observation.session_file else None
        others = [p for p in sorted(Path(observation.session_dir).glob("*.jsonl")) if p != live]
        return others, live

    def session_entries(self) -> list[list[dict[str, Any]]]:
        """Entries per session: every other session file's (its header line dropped), then the
        live session's (Pi's ``get_entries``). A file is read as the simulator's run reads one
        (``invariants._lines``): one that is unreadable or has a line that is no JSON (Pi stopped
        mid-write) holds no entries, rather than failing the check with a harness error."""
        others, _live = self._other_session_files()
        return [_lines(path)[1:] for path in others] + [list(self._run.observation.entries)]

    def session_exchanges(self) -> list[list[ToolExchange]]:
        return self.once(
            "session_exchanges",
            lambda: [list(_tool_exchanges(entries)) for entries in self.session_entries()],
        )

    def session_ids(self) -> list[str | None]:
        """The header id of each session of :meth:`session_entries`, in the same order: the
        other session files', then the live session's file's (None without a file: an in-memory
        session, or one Pi has not written yet)."""
        others, live = self._other_session_files()
        return [_header_id(_lines(path)) for path in others] + [_header_id(_lines(live)) if live else None]

    def project_dir(self) -> str:
        return str(self._run.project_dir)

    def managed(self, *parts: str) -> Path:
        return Path(self._run.agent_dir, "pi-blitz-handoff", *parts)


def _observed(function: ObservableInvariant) -> ObservedInvariant:
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
        recovery_files_named_as_specified,
        dossier_named_after_source_session,
    )
)
