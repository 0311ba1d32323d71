"""``json.loads(json.dumps(value))`` without the text in between, for plain data.

The simulated host keeps every session event as Pi's RPC mode writes it: a JSON line made
when the event happens (``dist/modes/rpc/rpc-mode.js:240-241``, ``JSON.stringify`` in
``dist/modes/rpc/jsonl.js:8-9``), so what the objects it names become later does not reach it
(``SimHost.record_rpc``). Encoding and parsing every event, each streamed ``message_update``
and each ``agent_end`` with all the run's messages, was ~7 % of the suite's CPU time on the
simulator (issue 16), most of it spent writing long texts out and reading them back.

:func:`json_copy` makes the same value by copying the containers and keeping the leaves:
strings, numbers, booleans and ``None`` cannot change, and JSON gives back equal ones (a float
is written as its shortest ``repr``, which reads back as the same float; ``NaN`` and the
infinities as ``NaN``/``Infinity``, which read back as such; a lone surrogate as an escape that
reads back as itself). Only data of exactly these types is copied here (dicts with string keys,
lists, tuples); anything else (another key type, a subclass, a set, a cycle) is handed to
``json.loads(json.dumps(value))`` whole, so it gives what it always gave, errors included.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_copy", "json_copy_or_same"]

_LEAVES = frozenset({str, int, float, bool, type(None)})


class _NotPlainError(Exception):
    """The value holds something :func:`_copy` does not copy as JSON would."""


def json_copy(value: Any) -> Any:
    """``json.loads(json.dumps(value))``: an equal value, tuples as lists, sharing nothing
    mutable with ``value``."""
    try:
        return _copy(value)
    except (_NotPlainError, RecursionError):  # a cycle, or nesting too deep: as JSON does it
        return json.loads(json.dumps(value))


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlainError
            out[key] = item if type(item) in _LEAVES else _copy(item)
        return out
    if kind is list or kind is tuple:
        return [item if type(item) in _LEAVES else _copy(item) for item in value]
    if kind in _LEAVES:
        return value
    raise _NotPlainError


def json_copy_or_same(value: Any) -> Any:
    """:func:`json_copy` of ``value``, or ``value`` itself when JSON cannot copy it (a set, an
    object): what an extension hands Pi through the bridge, where that is plain data."""
    try:
        return json_copy(value)
    except (TypeError, ValueError):
        return value
