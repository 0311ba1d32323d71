"""Indented JSON, byte for byte what :func:`json.dumps` writes, several times faster.

``json.dumps(value, indent=N)`` never uses CPython's C encoder (3.11 ``json/encoder.py``:
``c_make_encoder`` only when ``indent is None``); its pure-Python generator chain was the
largest single cost of a simulated run (every model request's ``requests/<kind>-<index>.json``)
and of a scenario's observation record. :func:`dumps_indented` writes the same text with one
recursive function and the C string encoder, and hands anything it does not know (a type that
would need ``default``, a key that is not str, int, float, bool or None, a cycle) to
:func:`json.dumps` itself, so the result or the error is always json's own.

A :class:`TextMemo` handed to several calls writes a dict that is an item of a list (a
message of a request, a content block) once per nesting level: every model request of a run
carries the whole conversation so far, the same message objects again
(``ScriptedModelService._shared``), and encoding each again in every later
``requests/<kind>-<index>.json`` made writing a run's requests grow with the square of its
length (a 2,000-turn session of ``bench/bench_simulator.py``: half its time).
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from pi_continuity_harness.scenario.identity_memo import identity

__all__ = ["TextMemo", "dumps_indented"]

_INFINITY = float("inf")


class TextMemo:
    """The text :func:`dumps_indented` wrote for each dict that was an item of a list, by the
    dict's identity and its nesting level (the text's indentation), for the calls of one
    ``indent`` and ``ensure_ascii`` that share it.

    A text is reused only for the very object it was written for (``is``: the object is held
    here, so its identity is not another's while the memo lives), so the memo may be shared only
    while the objects it has seen do not change: one writing of data that nothing changes
    meanwhile, such as a finished run's requests (:func:`~pi_continuity_harness.simulator.
    simulation.write_exchanges`)."""

    __slots__ = ("ensure_ascii", "indent", "texts")

    def __init__(self, *, indent: int, ensure_ascii: bool) -> None:
        self.indent = indent
        self.ensure_ascii = ensure_ascii
        self.texts: dict[tuple[int, int], tuple[Any, str]] = {}


class _UnsupportedError(Exception):
    """Something only :func:`json.dumps` knows how to write (or how to refuse)."""


def _float(value: float) -> str:
    # json.encoder's ``floatstr`` (allow_nan=True).
    if math.isnan(value):
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def dumps_indented(
    value: Any, *, indent: int, ensure_ascii: bool = True, memo: TextMemo | None = None
) -> str:
    """``json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)``, the same bytes; ``memo``
    (made for the same ``indent`` and ``ensure_ascii``) keeps and reuses the texts of dicts in
    lists across calls (:class:`TextMemo`)."""
    if memo is not None and (memo.indent != indent or memo.ensure_ascii != ensure_ascii):
        raise ValueError("the memo was made for another indent or ensure_ascii")
    texts = memo.texts if memo is not None else None
    encode = encode_basestring_ascii if ensure_ascii else encode_basestring
    pads = ["\n"]

    def pad(level: int) -> str:
        while len(pads) <= level:
            pads.append("\n" + " " * (indent * len(pads)))
        return pads[level]

    def key_text(key: Any) -> str:
        # json.encoder ``_iterencode_dict``: the same conversions, in the same order.
        if isinstance(key, str):
            return encode(key)
        if isinstance(key, float):
            return encode(_float(key))
        if key is True:
            return '"true"'
        if key is False:
            return '"false"'
        if key is None:
            return '"null"'
        if isinstance(key, int):
            return encode(int.__repr__(key))
        raise _UnsupportedError

    def text(item: Any, level: int) -> str:
        # json.encoder ``_iterencode``: the same type tests, in the same order.
        if isinstance(item, str):
            return encode(item)
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, int):
            return int.__repr__(item)
        if isinstance(item, float):
            return _float(item)
        if isinstance(item, list | tuple):
            if not item:
                return "[]"
            inner = pad(level + 1)
            if texts is None:
                parts = [text(v, level + 1) for v in item]
            else:
                parts = [remembered(v, level + 1) if type(v) is dict else text(v, level + 1) for v in item]
            return "[" + inner + ("," + inner).join(parts) + pad(level) + "]"
        if isinstance(item, dict):
            if not item:
                return "{}"
            inner = pad(level + 1)
            return (
                "{"
                + inner
                + ("," + inner).join([key_text(k) + ": " + text(v, level + 1) for k, v in item.items()])
                + pad(level)
                + "}"
            )
        raise _UnsupportedError

    def remembered(item: dict[Any, Any], level: int) -> str:
        # Only a text written whole is kept: a subtree json.dumps must write (or refuse), or a
        # cycle, raises before anything is stored.
        assert texts is not None
        key = (identity(item), level)  # not id(): no audit event (identity_memo.identity)
        known = texts.get(key)
        if known is not None and known[0] is item:
            return known[1]
        written = text(item, level)
        texts[key] = (item, written)
        return written

    try:
        return text(value, 0)
    except (_UnsupportedError, RecursionError):
        return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
