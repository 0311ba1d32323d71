"""The trace: JSON lines of every host event, extension call, model call and effect.

A trace is the simulator's primary output. It is deterministic (virtual time, seeded ids,
paths under the run's work directory written as ``$WORK``), so two runs of the same
scenario and seed produce identical bytes, and a diff of two traces is the first place to
look when behaviour changes. Each record has ``seq`` (position), ``t`` (virtual ms since
start), ``kind`` and ``name``; the rest depends on the kind:

=========  ==========================================================================
kind       what
=========  ==========================================================================
op         a scenario operation starting (``name`` = op) or ending (``phase: end``)
host       process lifecycle: start, shutdown, reload, restart, crash
event      an extension event dispatched to handlers (``session_before_compact``, ...)
session    a session event Pi streams over RPC (``compaction_start``, ``agent_settled``)
call       an extension's call into the API (``send_user_message``, ``complete``)
ui         ``ctx.ui`` traffic: notify, set_status, dialogs and their answers
model      a model request and its reply
entry      a session entry appended (``id``, ``type``, persisted or held in memory)
fs         an extension's filesystem effect (open for write, replace, mkdir, remove)
fault      a fault that fired
=========  ==========================================================================

Records can also *trigger* things: a crash rule raises :class:`SimulatedCrash` right after
the matching record is written, and an injection rule schedules operations (an abort, a
command) at that point. That is how "crash between any two effects" and "abort at any
awaited point" are expressed as data.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SimulatedCrash",
    "Trace",
    "TraceMatch",
    "TraceTrigger",
    "dumps_record",
    "first_difference",
]


class SimulatedCrash(BaseException):
    """The simulated Pi process died. A ``BaseException`` so ``except Exception`` cannot eat it."""


class TraceMatch(BaseModel):
    """Selects trace records: ``kind`` and ``name`` equal, and every ``where`` field equal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    name: str
    where: dict[str, Any] = Field(default_factory=dict, description="Fields that must be equal")
    glob: dict[str, str] = Field(
        default_factory=dict, description="String fields that must match a glob ('*' crosses '/')"
    )
    occurrence: int = Field(default=1, ge=1, description="Fire at the N-th matching record")

    def matches(self, record: dict[str, Any]) -> bool:
        if record.get("kind") != self.kind or record.get("name") != self.name:
            return False
        if not all(record.get(k) == v for k, v in self.where.items()):
            return False
        return all(
            isinstance(record.get(k), str) and fnmatch.fnmatchcase(record[k], pattern)
            for k, pattern in self.glob.items()
        )


_RESERVED = frozenset({"seq", "t", "kind", "name"})


def dumps_record(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "to_json"):
        return value.to_json()
    return repr(value)


@dataclass
class TraceTrigger:
    """One ``on`` registration: fires its action once, after the N-th matching record."""

    match: TraceMatch
    action: Callable[[dict[str, Any]], None]
    seen: int = 0
    fired: bool = False


@dataclass
class Trace:
    """An append-only list of records with path normalisation and triggers."""

    loop_ms: Callable[[], int]
    workdir: str
    records: list[dict[str, Any]] = field(default_factory=list)
    frozen: bool = False
    _triggers: list[TraceTrigger] = field(default_factory=list)
    sinks: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)

    def on(self, match: TraceMatch, action: Callable[[dict[str, Any]], None]) -> TraceTrigger:
        """Run ``action(record)`` once, after the ``match.occurrence``-th matching record; the
        returned trigger tells whether it has fired."""
        trigger = TraceTrigger(match, action)
        self._triggers.append(trigger)
        return trigger

    def disarm(self) -> None:
        """No trigger fires any more (the faults they carry have healed)."""
        for trigger in self._triggers:
            trigger.fired = True

    def emit(self, kind: str, name: str, /, **data: Any) -> dict[str, Any] | None:
        if self.frozen:
            return None
        if _RESERVED.intersection(data):
            raise ValueError(f"trace fields {sorted(_RESERVED.intersection(data))} are reserved")
        record: dict[str, Any] = {"seq": len(self.records), "t": self.loop_ms(), "kind": kind, "name": name}
        for key, value in data.items():
            if value is not None:
                record[key] = self._normalise(value)
        self.records.append(record)
        for sink in self.sinks:
            sink(record)
        for trigger in self._triggers:
            if trigger.fired or not trigger.match.matches(record):
                continue
            trigger.seen += 1
            if trigger.seen >= trigger.match.occurrence:
                trigger.fired = True
                trigger.action(record)
        return record

    def _normalise(self, value: Any) -> Any:
        if isinstance(value, str):
            if not self.workdir or self.workdir not in value:
                return value
            # Only the run directory itself: a sibling such as ``run-70`` next to ``run-7`` stays.
            return re.sub(re.escape(self.workdir) + r"(?![\w-])", "$WORK", value)
        if isinstance(value, dict):
            return {k: self._normalise(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._normalise(v) for v in value]
        return value

    def to_jsonl(self) -> str:
        return "".join(dumps_record(r) + "\n" for r in self.records)


def first_difference(expected: str, actual: str) -> str | None:
    """Where two traces (JSON lines) first differ, as a readable report; None when byte-identical."""
    if expected == actual:
        return None
    old, new = expected.splitlines(), actual.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"first difference at record {number}:\n  expected: {_record(a)}\n  actual:   {_record(b)}"
    if len(old) != len(new):
        number = min(len(old), len(new)) + 1
        longer, label = (old, "expected") if len(old) > len(new) else (new, "actual")
        return f"first difference at record {number}: only the {label} trace has it:\n  {_record(longer[number - 1])}"
    return "the traces differ only in line endings or a trailing newline"


def _record(line: str) -> str:
    try:
        return json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))
    except json.JSONDecodeError:
        return line
