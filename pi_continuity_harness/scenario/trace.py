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
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pi_continuity_harness.scenario.numbers import Int

__all__ = [
    "RECORD_KINDS",
    "SimulatedCrash",
    "Trace",
    "TraceMatch",
    "TraceTrigger",
    "dumps_record",
    "first_difference",
    "jsonl_lines",
]


class SimulatedCrash(BaseException):
    """The simulated Pi process died. A ``BaseException`` so ``except Exception`` cannot eat it."""


#: Every ``kind`` of trace record (docs/scenario-format.md, "The trace").
RECORD_KINDS = ("op", "host", "event", "session", "call", "ui", "model", "entry", "fs", "fault")


class TraceMatch(BaseModel):
    """Selects trace records: ``kind`` and ``name`` equal, and every ``where`` field equal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    name: str
    where: dict[str, Any] = Field(default_factory=dict, description="Fields that must be equal")
    glob: dict[str, str] = Field(
        default_factory=dict, description="String fields that must match a glob ('*' crosses '/')"
    )
    occurrence: Int = Field(default=1, ge=1, description="Fire at the N-th matching record")

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        """A kind the trace writes. Any string loaded, so a misspelt one (``entri``) made a rule that
        never fired and a run that went on as if the scenario had no such fault."""
        if value not in RECORD_KINDS:
            raise ValueError(f"{value!r} is no kind of trace record (one of: {', '.join(RECORD_KINDS)})")
        return value

    def matches(self, record: dict[str, Any]) -> bool:
        if record.get("kind") != self.kind or record.get("name") != self.name:
            return False
        if not all(same_json(record.get(k), v) for k, v in self.where.items()):
            return False
        return all(
            isinstance(record.get(k), str) and fnmatch.fnmatchcase(record[k], pattern)
            for k, pattern in self.glob.items()
        )


def same_json(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same JSON value: as ``==``, except that ``true``/``false`` equal only
    a boolean (Python's ``True == 1`` and ``False == 0`` made ``where: {turnIndex: false}`` fire on
    ``turnIndex: 0``), a list only a list and a mapping only a mapping, compared the same way inside.
    A list of the trace may be a tuple before it is written."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        return (
            isinstance(a, list | tuple)
            and isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(same_json(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_json(a[k], b[k]) for k in a)
        )
    return bool(a == b)


_RESERVED = frozenset({"seq", "t", "kind", "name"})
#: The exact types :meth:`Trace._normalise` returns unchanged, checked first by :meth:`Trace.emit`.
_UNCHANGED = frozenset({int, float, bool})


def dumps_record(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if hasattr(value, "to_json"):
        return value.to_json()
    return repr(value)


@functools.lru_cache(maxsize=64)
def _root_pattern(root: str) -> re.Pattern[str]:
    """``root`` where it is the whole path component (compiled once per root, not per string)."""
    return re.compile(re.escape(root) + r"(?![\w-])")


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
    #: Other spellings of the work directory (the simulator's run directory on disk, behind its
    #: virtual root), also written ``$WORK``.
    aliases: tuple[str, ...] = ()
    #: Called before each record is written (the filesystem monitor records a file operation
    #: that has ended before whatever comes next).
    before_emit: list[Callable[[], None]] = field(default_factory=list)
    frozen: bool = False
    _triggers: list[TraceTrigger] = field(default_factory=list)
    sinks: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)
    #: ``to_jsonl``'s text of ``records[:_text_count]`` (of the list ``_text_of``).
    _text: str = field(default="", repr=False, compare=False)
    _text_count: int = field(default=0, repr=False, compare=False)
    _text_of: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    #: ``_normalise`` of each string found to hold a root (the work directory or an alias, which
    #: never change once the trace is made): most come again and again (the paths of the files
    #: and directories a run reads, makes and replaces; 4,416 of the 4,773 of a PSC suite run),
    #: and each was matched and rewritten by a regular expression anew.
    _normalised: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

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
        for hook in self.before_emit:
            hook()
        if self.frozen:
            return None
        if not _RESERVED.isdisjoint(data):
            raise ValueError(f"trace fields {sorted(_RESERVED.intersection(data))} are reserved")
        record: dict[str, Any] = {"seq": len(self.records), "t": self.loop_ms(), "kind": kind, "name": name}
        workdir, aliases = self.workdir, self.aliases
        for key, value in data.items():
            kind_of_value = type(value)
            if kind_of_value is str:
                # A string (half the fields of a record) is handed to ``_normalise`` only when
                # it holds a root: four in five name none, and ``_normalise`` gives those back
                # unchanged after the same two tests.
                text = value
                if workdir and workdir in text:
                    text = self._normalise(text)
                else:
                    for root in aliases:  # (a loop, not ``any()`` of a generator made per string)
                        if root and root in text:
                            text = self._normalise(text)
                            break
                record[key] = text
            elif value is not None:
                # A number or a boolean is what ``_normalise`` gives back unchanged (it changes
                # strings, dicts, lists and tuples only): not handed to it (a third of the
                # fields of a record; every record of a run is emitted here).
                record[key] = value if kind_of_value in _UNCHANGED else self._normalise(value)
        self.records.append(record)
        # Most traces have neither sinks nor triggers: a loop over an empty list still makes
        # and ends an iterator, at every record.
        if self.sinks:
            for sink in self.sinks:
                sink(record)
        if self._triggers:
            for trigger in self._triggers:
                if trigger.fired or not trigger.match.matches(record):
                    continue
                trigger.seen += 1
                if trigger.seen >= trigger.match.occurrence:
                    trigger.fired = True
                    trigger.action(record)
        return record

    def normalise(self, value: Any) -> Any:
        """``value`` as a record holds it (the work directory, and its aliases, written ``$WORK``):
        what a reader compares with a record's text, which it cannot turn back (``$WORK`` stands
        for more than one spelling)."""
        return self._normalise(value)

    def _normalise(self, value: Any) -> Any:
        if isinstance(value, str):
            known = self._normalised.get(value)
            if known is not None:
                return known
            # The work directory, then each alias (without making the tuple of them all for
            # every string of every record).
            text, rooted = value, False
            workdir = self.workdir
            if workdir and workdir in text:
                # Only the run directory itself: a sibling such as ``run-70`` next to ``run-7`` stays.
                text, rooted = _root_pattern(workdir).sub("$WORK", text), True
            for root in self.aliases:
                if root and root in text:
                    text, rooted = _root_pattern(root).sub("$WORK", text), True
            if rooted:
                self._normalised[value] = text
            return text
        if isinstance(value, dict):
            return {k: self._normalise(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._normalise(v) for v in value]
        return value

    def to_jsonl(self) -> str:
        """The records as JSON lines. Encoded once: a finished run writes ``trace.jsonl`` and
        its caller reads the same text (``trace_text``); records are never changed once
        emitted, so only the records emitted since the last call are encoded (one string is
        kept, not a line per record: the peak memory of a long run stays where it was)."""
        records = self.records
        if self._text_of is not records or self._text_count > len(records):  # replaced or cut
            self._text, self._text_count, self._text_of = "", 0, records
        if self._text_count < len(records):
            self._text += "".join(dumps_record(r) + "\n" for r in records[self._text_count :])
            self._text_count = len(records)
        return self._text


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text (a trace, a session file) as their writers end them: at
    ``"\\n"`` only. A record is written with non-ASCII kept (:func:`dumps_record`, and Pi's
    ``JSON.stringify`` for a session), so a raw U+2028 or U+2029 (valid inside a JSON string)
    can be part of one; ``str.splitlines`` would cut the record there. A ``"\\r"`` before the
    ``"\\n"`` is dropped (JSON never holds a raw one), as is the empty rest after the last."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def first_difference(expected: str, actual: str) -> str | None:
    """Where two traces (JSON lines) first differ, as one readable line; None when byte-identical.

    It names the first differing record (its index, ``seq``, with its line number and
    ``kind:name``) and the first differing field in it, as a JSON path with the two values:
    ``first difference at record 18 (line 19, model:request): $.maxTokens: expected 14395, actual 14392``.
    """
    if expected == actual:
        return None
    old, new = jsonl_lines(expected), jsonl_lines(actual)
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"first difference at {_where(number, a, b)}: {_field_difference(a, b)}"
    if len(old) != len(new):
        number = min(len(old), len(new)) + 1
        longer, label = (old, "expected") if len(old) > len(new) else (new, "actual")
        line = longer[number - 1]
        return (
            f"first difference at {_where(number, line, line)}: only the {label} trace has it: "
            f"{_short(_record(line))}"
        )
    return "the traces differ only in line endings or a trailing newline"


_MISSING = object()


def _where(number: int, a: str, b: str) -> str:
    """``record <seq> (line <n>, kind:name)`` for the record on line ``number``."""
    parsed = _parse(a)
    if not isinstance(parsed, dict):
        parsed = _parse(b)
    if isinstance(parsed, dict):
        index = parsed.get("seq", number - 1)
        return f"record {index} (line {number}, {parsed.get('kind')}:{parsed.get('name')})"
    return f"record {number - 1} (line {number}, not JSON)"


def _field_difference(a: str, b: str) -> str:
    left, right = _parse(a), _parse(b)
    if left is _MISSING or right is _MISSING:
        return f"expected {_short(a)}, actual {_short(b)}"
    found = _first_field(left, right, "$")
    if found is None:  # equal values, different bytes (spacing, escapes)
        return f"same values written differently: expected {_short(a)}, actual {_short(b)}"
    path, x, y = found
    return f"{path}: expected {_value(x)}, actual {_value(y)}"


def _first_field(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place (JSON path) where ``a`` and ``b`` differ, with both values there."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if a.get(key, _MISSING) is _MISSING or b.get(key, _MISSING) is _MISSING:
                return f"{path}.{key}", a.get(key, _MISSING), b.get(key, _MISSING)
            found = _first_field(a[key], b[key], f"{path}.{key}")
            if found is not None:
                return found
        if list(a) != list(b):
            return f"{path} (key order)", list(a), list(b)
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_field(x, y, f"{path}[{index}]")
            if found is not None:
                return found
        if len(a) != len(b):
            index = min(len(a), len(b))
            return (
                f"{path}[{index}]",
                a[index] if index < len(a) else _MISSING,
                b[index] if index < len(b) else _MISSING,
            )
        return None
    if a == b and type(a) is type(b):
        return None
    return path, a, b


def _parse(line: str) -> Any:
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):  # nested too deeply: not a record either
        return _MISSING


def _value(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    return _short(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _record(line: str) -> str:
    try:
        return json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"))
    except (json.JSONDecodeError, RecursionError):
        return line
