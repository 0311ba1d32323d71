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
  ``onData``), so Pi never sees the call;
* a number is what JavaScript makes of its text: a double (``1.0`` the integer 1, ``2**64``
  rounded, an int beyond the doubles' range infinite, which ``JSON.stringify`` writes as
  ``null``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pi_continuity_harness.api.events import (
    BeforeCompactResult,
    BeforeSwitchResult,
    CompactionResult,
    InputResult,
)
from pi_continuity_harness.api.extension_api import ToolResult

__all__ = ["json_default", "result_to_wire", "wire_dumps", "wire_line"]


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
