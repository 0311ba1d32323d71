"""How a Python value crosses the bridge to real Pi as JSON: one encoding for both targets.

A Python extension inside real Pi talks to Pi in JSON lines (``targets/realpi/wire.py``
``Connection.send``, read by ``targets/realpi/bridge.ts`` ``onData`` with ``JSON.parse``).
Whatever the extension hands Pi (``append_entry``'s data, ``send_message``'s message, a
handler's result) is what :func:`wire_dumps` writes and Pi parses; the simulator reads the
same line as Pi does (``simulator/json_copy.py`` ``bridge_copy``). So the encoding lives
here, under both, and what it does with data JSON cannot take as it is holds on both targets:

* a tuple, a set or a frozenset is a list (a set in its iteration order);
* a dict key that is an int, a float, ``True``/``False`` or ``None`` is its JSON text
  (``"1"``, ``"2.5"``, ``"true"``, ``"null"``); another key type (a tuple) raises ``TypeError``
  at the call, as does a cycle (``ValueError``);
* an object with ``to_json()`` is what that returns, a dataclass its fields
  (:func:`dataclasses.asdict`), a handler result (:class:`.events.InputResult`, ...) Pi's shape
  (:func:`result_to_wire`), anything else its ``str()`` (bytes ``b'ab'`` as ``"b'ab'"``);
* a NaN or an infinity is written as ``NaN``/``Infinity``, which is not JSON: ``JSON.parse``
  throws, and ``bridge.ts`` drops the whole line ("unparsable line from Python",
  ``onData``), so Pi never sees the call; in a *reply* (a handler's or a tool's result,
  :func:`reply_line`) it crosses as ``{"$nonfinite": "NaN"}`` and ``bridge.ts`` gives Pi the
  number, as a JavaScript extension's handler would (Pi waited for the dropped reply forever);
  a reply JSON cannot carry at all (a tuple key, a cycle) is answered as the handler's error
  (``bridge_runtime._serve``: Pi's handler throws, as if the Python handler had raised);
* a number is what JavaScript makes of its text: a double (``1.0`` the integer 1, ``2**64``
  rounded, an int beyond the doubles' range infinite, which ``JSON.stringify`` writes as
  ``null``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    BeforeSwitchResult,
    CompactionResult,
    InputResult,
)
from pi_continuity_harness.api.extension_api import ToolResult

__all__ = ["NONFINITE_KEY", "json_default", "reply_line", "result_to_wire", "wire_dumps", "wire_line"]


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default`` of the bridge's lines: what a value JSON has no form for
    becomes on the wire."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, BeforeCompactResult | BeforeSwitchResult | InputResult):
        return result_to_wire(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def wire_line(message: Any) -> bytes:
    """The line ``Connection.send`` writes: :func:`wire_dumps` in UTF-8, or, when the text holds
    a lone surrogate (a ``str`` Python allows and UTF-8 cannot encode), the same JSON with
    every non-ASCII character escaped: ``\\ud800`` reads back in ``JSON.parse`` as the lone
    surrogate a JavaScript extension could have handed Pi itself, and ``JSON.stringify``
    writes it escaped again."""
    try:
        return wire_dumps(message).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), default=json_default)
        return text.encode("ascii") + b"\n"


#: The one key of the object that stands for a non-finite number in a reply line, and the flag
#: of such a line (``bridge.ts`` ``reviveNonFinite``).
NONFINITE_KEY = "$nonfinite"


def reply_line(message: dict[str, Any]) -> bytes:
    """The line of a reply to Pi (``{"type": "result", ...}``): :func:`wire_line`, unless the
    value holds a NaN or an infinity, which no JSON text can hold. Then each such number is
    ``{"$nonfinite": "NaN" | "Infinity" | "-Infinity"}`` and the line carries
    ``"$nonfinite": true``, so that ``bridge.ts`` revives them as the numbers: JavaScript's
    ``JSON.parse`` throws on ``NaN`` and the bridge used to drop the line, leaving Pi to wait
    for the reply forever. A cycle still raises ``ValueError``."""
    try:
        text = json.dumps(
            message, ensure_ascii=False, separators=(",", ":"), default=json_default, allow_nan=False
        )
    except ValueError:
        plain = json.loads(wire_dumps(message))  # a cycle raises here, as wire_line would
        return wire_line({**_mark_nonfinite(plain), NONFINITE_KEY: True})
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return wire_line(message)


def _mark_nonfinite(value: Any) -> Any:
    """``value`` (plain JSON data as ``json.loads`` makes it) with every NaN or infinity
    replaced by its ``{"$nonfinite": text}`` marker, and every key of the value's own made of
    ``$``s and ``nonfinite`` (``$nonfinite``, ``$$nonfinite``, ...) escaped with one more ``$``,
    which ``reviveNonFinite`` takes off: so no object of the user's is taken for a marker or
    for the line's flag (a user's ``{"$nonfinite": "Infinity"}`` was revived as the number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return {NONFINITE_KEY: "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, dict):
        return {_escape_key(key): _mark_nonfinite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mark_nonfinite(item) for item in value]
    return value


#: A key ``reviveNonFinite`` would read as a marker's or the flag's, or as an escaped one.
_MARKER_LIKE = re.compile(r"\$+nonfinite")


def _escape_key(key: str) -> str:
    return "$" + key if _MARKER_LIKE.fullmatch(key) else key


def wire_dumps(message: Any) -> str:
    """One line of the bridge's wire, as ``Connection.send`` writes it (``NaN`` allowed, which
    Pi cannot parse)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=json_default)


def result_to_wire(value: Any) -> Any:
    """A handler's return value in Pi's JSON shape (``None`` stays ``None``: undefined)."""
    if isinstance(value, BeforeCompactResult):
        out: dict[str, Any] = {}
        if value.cancel:
            out["cancel"] = True
        if value.compaction is not None:
            out["compaction"] = value.compaction.to_json()
        return out
    if isinstance(value, BeforeSwitchResult):
        return {"cancel": True} if value.cancel else {}
    if isinstance(value, InputResult):
        data: dict[str, Any] = {"action": value.action}
        if value.text is not None:
            data["text"] = value.text
        if value.images is not None:
            data["images"] = value.images
        return data
    if isinstance(value, CompactionResult):
        return value.to_json()
    if isinstance(value, ToolResult):
        return {
            "content": value.content,
            "details": value.details,
            "isError": value.is_error,
            "terminate": value.terminate,
        }
    return value
