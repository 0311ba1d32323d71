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

:func:`bridge_copy` is the copy of what a Python extension hands Pi itself (``append_entry``,
``send_message``, ``send_user_message``): the bridge's own encoding
(``api/wire_json.py``), read back as Pi reads it and writes it again, so a set is a list,
``1.0`` is ``1`` and a NaN loses the call, as on real Pi.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Final

from pi_continuity_harness.api.wire_json import wire_dumps

__all__ = [
    "NOT_FOR_PI",
    "EventCopies",
    "bridge_copy",
    "bridge_reply_copy",
    "js_json_number",
    "js_loads",
    "js_object",
    "js_ordered",
    "json_copy",
    "json_copy_or_same",
]

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
    """A dict is first copied whole (in C, its order kept) and only its containers are then
    replaced by their copies: building it key by key was twice as slow, and this copy was 6 %
    of a Pi Session Continuity exploration (each handler of an event gets its own, issue 16).
    A list is built by a loop, not a list comprehension, whose own function call cost more
    than its loop saved on the short lists here (a message's content, an event's messages):
    5 % fewer instructions for the copies of a suite run's handler events."""
    kind = type(value)
    if kind is dict:
        out = value.copy()
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlainError
            if type(item) not in _LEAVES:
                out[key] = _copy(item)
        return out
    if kind is list or kind is tuple:
        items = []
        for item in value:
            items.append(item if type(item) in _LEAVES else _copy(item))
        return items
    if kind in _LEAVES:
        return value
    raise _NotPlainError


class EventCopies:
    """:func:`json_copy` of each session event the host keeps (``SimHost.record_rpc``), where a
    message or a ``usage`` an earlier event named is, unchanged, the copy made then.

    The events of a run name the same objects again and again: each streamed ``message_update``
    the reply's ``usage`` (replaced when a chunk reports usage, never changed in place: pi-ai's
    ``output.usage = parseChunkUsage(...)``, ``openai-completions.js``, and
    ``provider_stream.StreamReader.feed`` here), the ``turn_end`` the assistant message of the
    ``message_end`` before it and that turn's tool results, the ``agent_end`` every message of
    the run, each also in its own ``message_end`` (and a user message in its
    ``message_start``). Copying each again was two thirds of this copying (issue 16). A copy
    is reused only for the very object it was made of (``is``; the object is held, so its
    ``id`` is not reused) and only while the object is still equal to it (``==``, compared in
    C: an object changed in place since, such as a ``toolResult`` message given
    ``nestedCalls``, is copied anew); what a record holds is therefore what
    ``json.loads(json.dumps(event))`` gave at the event (``==`` would take ``1`` for ``True``
    or ``1.0``, or two orders of the same keys, for the same: no code changes a message or a
    usage that way once it has been emitted). Records may share such a copy: their readers
    (``targets/comparison.py``, the tests) never change them. The memo is emptied at each
    ``agent_end`` and when it holds more than :attr:`LIMIT` objects. A message copied anew takes
    its ``usage``'s copy from the memo too (the deltas named it)."""

    #: Keys of an event whose value is a message or a usage (a dict), and of lists of them.
    OBJECTS: Final = frozenset({"message", "usage"})
    LISTS: Final = frozenset({"messages", "toolResults"})
    LIMIT: Final = 256

    __slots__ = ("_copies",)

    def __init__(self) -> None:
        self._copies: dict[int, tuple[Any, Any]] = {}

    def copy(self, event: dict[str, Any]) -> Any:
        """``json_copy(event)``, its messages and usage reused from earlier events."""
        if type(event) is not dict:
            return json_copy(event)
        out: dict[str, Any] = {}
        try:
            for key, value in event.items():
                if type(key) is not str:
                    raise _NotPlainError
                kind = type(value)
                if kind in _LEAVES:
                    out[key] = value
                elif kind is dict and key in self.OBJECTS:
                    out[key] = self._object(value)
                elif kind is list and key in self.LISTS:
                    out[key] = [self._object(item) if type(item) is dict else _copy(item) for item in value]
                else:
                    out[key] = _copy(value)
        except (_NotPlainError, RecursionError):
            return json_copy(event)  # as a whole, as json_copy would have
        if event.get("type") == "agent_end" or len(self._copies) > self.LIMIT:
            self._copies.clear()
        return out

    def update(self, usage: Any, delta: Any) -> Any:
        """:meth:`copy` of ``{"type": "message_update", "usage": usage, "assistantMessageEvent":
        delta}`` (RPC's form of a streamed delta, ``AgentSession._emit_public``) without making
        that event first: six RPC events in ten are these, and the loop over the three keys was
        a third of their copy (issue 16)."""
        try:
            usage_copy = self._object(usage) if type(usage) is dict else _copy(usage)
            out = {"type": "message_update", "usage": usage_copy, "assistantMessageEvent": _copy(delta)}
        except (_NotPlainError, RecursionError):  # as a whole, as copy would have
            return json_copy({"type": "message_update", "usage": usage, "assistantMessageEvent": delta})
        if len(self._copies) > self.LIMIT:
            self._copies.clear()
        return out

    def _object(self, value: dict[str, Any]) -> Any:
        known = self._copies.get(id(value))
        if known is not None and known[0] is value:
            try:
                same = value == known[1]
            except Exception:  # something that is not data now: copied as it is
                same = False
            if same:
                return known[1]
        usage = value.get("usage")
        if type(usage) is dict:  # a message: its usage as the deltas before named it (_object)
            copied = value.copy()
            for key, item in value.items():
                if type(key) is not str:
                    raise _NotPlainError
                if type(item) not in _LEAVES:
                    copied[key] = self._object(item) if item is usage else _copy(item)
        else:
            copied = _copy(value)
        self._copies[id(value)] = (value, copied)
        return copied


def json_copy_or_same(value: Any) -> Any:
    """:func:`json_copy` of ``value``, or ``value`` itself when JSON cannot copy it (a set, an
    object): what an extension hands Pi through the bridge, where that is plain data."""
    try:
        return json_copy(value)
    except (TypeError, ValueError):
        return value


class _NotForPi:
    """The type of :data:`NOT_FOR_PI`."""

    def __repr__(self) -> str:
        return "NOT_FOR_PI"


#: What :func:`bridge_copy` returns for data whose bridge line Pi cannot parse (a NaN, an
#: infinity): on real Pi that call never reaches Pi.
NOT_FOR_PI: Final = _NotForPi()


class _NotJsonError(Exception):
    """The line holds ``NaN``, ``Infinity`` or ``-Infinity``: ``JSON.parse`` throws on it."""


def bridge_copy(value: Any) -> Any:
    """``value`` as Pi has it after a Python extension handed it over, and as Python reads it
    back (an entry of ``get_entries()``, an event): encoded as the bridge's
    ``Connection.send`` encodes it (:func:`~pi_continuity_harness.api.wire_json.wire_dumps`:
    a set, a frozenset or a tuple a list, an int, float, bool or ``None`` key its JSON text,
    bytes or another object its ``str()``, a dataclass its fields), parsed as ``JSON.parse``
    parses it and written again as ``JSON.stringify`` writes it (:func:`js_json_number`), sharing
    nothing with ``value``. A tuple key raises ``TypeError`` and a cycle ``ValueError``, as the
    bridge's ``json.dumps`` does at the call. A NaN or an infinity gives :data:`NOT_FOR_PI`:
    the bridge writes ``NaN``/``Infinity``, ``JSON.parse`` throws, and ``bridge.ts`` ``onData``
    drops the line ("[harness bridge] unparsable line from Python" on Pi's stderr), so the
    call is lost without an error in the extension."""
    try:
        return js_loads(wire_dumps(value), parse_constant=_not_json)
    except _NotJsonError:
        return NOT_FOR_PI


def _not_json(name: str) -> Any:
    raise _NotJsonError(name)


def js_json_number(text: str) -> int | float | None:
    """A JSON number as Python reads it after ``JSON.parse`` and ``JSON.stringify``: the
    nearest double, written as an integer when it is one below 1e21 (``1.0`` is ``1``, ``-0.0``
    is ``0``, ``2**64`` is ``18446744073709552000``: ECMA-262 Number::toString), an infinity
    (an int beyond the doubles) as ``null``."""
    if len(text) <= 15 and "." not in text and "e" not in text and "E" not in text:
        return int(text)  # below 10**15 < 2**53: the double is the same integer
    number = float(text)
    if math.isinf(number):
        return None
    if number.is_integer() and abs(number) < 1e21:
        # repr is the shortest text that reads back as the double, as Number::toString's.
        return int(Decimal(repr(number)))
    return number


def bridge_reply_copy(value: Any) -> Any:
    """What Python's reply to Pi (a handler's result, a tool's content and details) carries:
    :func:`bridge_copy` (a set a list, bytes their ``str()``, ``2.0`` the integer 2). A NaN or an
    infinity crosses as a marker that ``bridge.ts`` revives as the number (``api/wire_json.py``
    ``reply_line``); Pi keeps it, and every JSON view of it (an RPC event, ``get_entries``, the
    session file, the next handler's event) shows ``null``, which is what it is here: the
    simulator's one object cannot be both (a difference only where Pi would compute with it)."""
    return js_loads(wire_dumps(value), parse_constant=_as_null)


def _as_null(name: str) -> None:
    """``NaN``, ``Infinity`` or ``-Infinity`` in a reply: ``null`` in every JSON view of it."""
    return None


#: A key that may be an array index (:func:`js_ordered`): a quoted run of digits before a colon.
#: Inside a JSON string a quote is escaped, so only a key matches (a false match costs time only).
_INDEX_KEY = re.compile(r'"[0-9]+"\s*:')


def js_loads(text: str, **options: Any) -> Any:
    """``JSON.parse(text)`` as Python reads the value back: numbers by :func:`js_json_number`,
    each object's keys in JavaScript's order (:func:`js_object`; looked for only when the text
    has a key of digits, since the hook makes ``json.loads`` build every object in Python)."""
    if _INDEX_KEY.search(text):
        options["object_pairs_hook"] = js_object
    return json.loads(text, parse_int=js_json_number, parse_float=js_json_number, **options)


#: The largest array index (ECMA-262 §6.1.7: an integer index below 2**32 - 1).
_MAX_ARRAY_INDEX = 2**32 - 2


def _is_array_index(key: str) -> bool:
    """``key`` is an array index: the canonical decimal form of an integer 0 .. 2**32 - 2
    (``"7"``, not ``"07"``, ``"-1"`` or ``"7.0"``)."""
    return (
        key.isdecimal() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX
    )


def js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object as ``JSON.parse`` makes it (``object_pairs_hook``): a repeated key keeps its
    first place and its last value (as ``dict``), the keys in JavaScript's order
    (:func:`js_ordered`)."""
    return js_ordered(dict(pairs))


def js_ordered(value: dict[str, Any]) -> dict[str, Any]:
    """``value``'s keys as JavaScript enumerates an ordinary object's (``OrdinaryOwnPropertyKeys``,
    ECMA-262 §10.1.11.1): the array indexes first, ascending, then the other keys in the order
    they were added. ``JSON.stringify`` writes them so: a model's tool call ``{"b": 1, "7": 2}``
    is ``{"7": 2, "b": 1}`` in Pi's session file and every later request. ``value`` itself when no
    key is an index."""
    indexes = [key for key in value if _is_array_index(key)]
    if not indexes:
        return value
    ordered = {key: value[key] for key in sorted(indexes, key=int)}
    ordered.update((key, item) for key, item in value.items() if key not in ordered)
    return ordered
