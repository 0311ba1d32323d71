"""What :meth:`SimTarget.observe <pi_continuity_harness.targets.sim.SimTarget.observe>` reads
from the simulated host's trace, each record read once.

An observation's events (session, extension, dialog, file and command output) are the trace's
records turned into what real Pi's RPC stream and observer extension show. Rebuilding them
from the whole trace at every ``observe()`` made a scenario's cost grow with the square of its
length: the steps observe before and after every action (``steps/common.py``'s marks), and it
was about 4 % of the suite's time on the simulator (issue 16, stop 28). The trace only grows
(``scenario/trace.py``: ``Trace.emit`` appends and no record changes after it), so the
records read so far stay read; each ``observe()`` reads the new ones and hands out new lists.

The events are the same dicts in every observation of a run (built once, from records that do
not change); the lists holding them are each observation's own.
"""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.scenario.fs_monitor import fs_event
from pi_continuity_harness.scenario.observed import OBSERVABLE_EVENTS

__all__ = ["TraceReading", "restore_paths"]

_DIALOGS = frozenset({"select", "confirm", "input", "editor"})
_NOT_PAYLOAD = frozenset({"seq", "t", "kind", "name"})
#: Values :func:`restore_paths` returns unchanged, by exact type (a subclass takes its way).
_PLAIN = frozenset({int, float, bool, type(None)})


def restore_paths(value: Any, workdir: str) -> Any:
    """Trace values carry ``$WORK``; observations carry real paths, like real Pi's do."""
    kind = type(value)
    if kind is str:
        return value.replace("$WORK", workdir)
    if kind in _PLAIN:
        return value
    if isinstance(value, str):
        return value.replace("$WORK", workdir)
    if isinstance(value, dict):
        return {k: restore_paths(v, workdir) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_paths(v, workdir) for v in value]
    return value


class TraceReading:
    """The observation's trace-derived parts of one simulation, up to the last record read."""

    def __init__(self, workdir: str) -> None:
        self._workdir = workdir
        self._read = 0
        self.session_events: list[dict[str, Any]] = []
        self.extension_events: list[dict[str, Any]] = []
        self.dialogs: list[dict[str, Any]] = []
        self.fs_events: list[dict[str, Any]] = []
        self.command_output: list[str] = []
        #: ``(caller, index)`` of every model reply that ended ``aborted``.
        self.aborted: set[tuple[Any, Any]] = set()

    def catch_up(self, records: list[dict[str, Any]]) -> None:
        """Read the records written since the last call."""
        workdir = self._workdir
        for record in records[self._read :]:
            kind, name = record["kind"], record["name"]
            if kind == "session":
                if name == "session_info_changed":
                    # Pi's field (``name`` is reserved in traces); a cleared name is ``undefined``
                    # in Pi's event (agent-session.js:3350-3354), so it has no key at all.
                    named = _payload(record, {}, workdir).get("sessionName")
                    self.session_events.append(
                        {"type": name} if named is None else {"type": name, "name": named}
                    )
                else:
                    self.session_events.append(_payload(record, {"type": name}, workdir))
            elif kind == "event":
                if name in OBSERVABLE_EVENTS:
                    # Only what the real-Pi observer extension logs (not ``command``, ``tool_call``...).
                    self.extension_events.append(_payload(record, {"type": name}, workdir))
            elif kind == "ui":
                if name in _DIALOGS:
                    self.dialogs.append(_payload(record, {"method": name}, workdir))
                elif name == "output":
                    self.command_output.append(str(_payload(record, {}, workdir).get("text") or ""))
            elif kind == "fs":
                # ``fs_event`` reads the kind, the name and the path (a rename's ``to``) only:
                # the path is restored in the event, not every field in a payload first.
                if event := fs_event(record):
                    event["path"] = restore_paths(event["path"], workdir)
                    self.fs_events.append(event)
            elif kind == "model" and (
                (name == "reply" and record.get("stopReason") == "aborted") or name == "dropped"
            ):
                # An aborted reply, or a request whose process died before its answer (a crash).
                self.aborted.add((record.get("caller"), record.get("index")))
        self._read = len(records)


def _payload(record: dict[str, Any], event: dict[str, Any], workdir: str) -> dict[str, Any]:
    """``event`` with the record's fields but ``seq``, ``t``, ``kind`` and ``name`` added, through
    :func:`restore_paths`: a string's ``$WORK`` replaced and a number, a boolean or None kept
    right here, a call of :func:`restore_paths` only for the rest (most values are strings and
    numbers; the call per value was a fifth of each ``observe()``). The event's own key
    (``type``, ``method``) is given first, so it leads the event; a payload field of that name
    would replace its value there, as ``{"type": name, **payload}`` did. Filled in place: that
    merge made the payload's dict and then the event's (every event a reading makes)."""
    for k, v in record.items():
        if k not in _NOT_PAYLOAD:
            kind = type(v)
            event[k] = (
                v.replace("$WORK", workdir)
                if kind is str
                else v
                if kind in _PLAIN
                else restore_paths(v, workdir)
            )
    return event
