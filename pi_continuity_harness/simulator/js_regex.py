"""A JSON Schema ``pattern`` as pi-schema tests it: an ECMAScript regular expression, in Python.

pi-schema compiles a ``pattern`` with the ``u`` flag (``new RegExp(source, "u")``, falling back to
no flag when the source is invalid with it: ``@earendil-works/pi-schema`` ``dist/shared.js``) and
tests a string with ``RegExp.prototype.test`` (a match anywhere). Python's ``re`` reads most such
sources alike; where it reads them otherwise, :func:`js_pattern` rewrites them:

* ``\\d``, ``\\w`` and ``\\b`` are ASCII in JavaScript (without ``i``): compiled with ``re.ASCII``;
* ``\\s`` is JavaScript's white space and line terminators (with U+FEFF, without U+001C-U+001F,
  which Python counts): an explicit class, ``\\S`` its complement;
* ``.`` leaves out every line terminator (``\\n``, ``\\r``, U+2028, U+2029), not ``\\n`` alone;
* ``$`` is the end of the string only (Python's also matches before a final ``\\n``): ``\\Z``;
* ``[]`` matches nothing and ``[^]`` any character (Python reads a ``]`` first in a class as a
  literal);
* ``\\u{...}`` (a code point, ``u`` flag), ``(?<name>...)`` and ``\\k<name>`` are spelled as Python
  spells them; ``\\/`` is a ``/``.

A source this does not read with certainty gives None, and the pattern is left unchecked, as the
whole keyword was before 6 December 2026: ``\\p{...}`` and ``\\P{...}`` (Unicode properties),
``\\c`` control escapes, ``\\D``/``\\W``/``\\S`` inside a class, an identity escape of a letter or
digit the ``u`` flag refuses (JavaScript then compiles without the flag, with other rules), a
lookbehind Python refuses (variable width), and anything Python fails to compile.
"""

from __future__ import annotations

import functools
import re
import warnings

__all__ = ["js_pattern", "js_pattern_test"]

#: ECMAScript's WhiteSpace and LineTerminator code points (``\s``), as class contents.
_JS_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
#: ``.`` without the ``s`` flag: anything but a line terminator.
_JS_DOT = "[^\\n\\r\\u2028\\u2029]"
#: Escapes both languages read alike outside a class (with ``re.ASCII``).
_SAME_ESCAPES = frozenset("dDwWbBtnrvf0")
#: Syntax characters an identity escape may name with the ``u`` flag (ECMA-262 SyntaxCharacter, ``/``).
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
#: Escapes both languages read alike inside a class.
_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_", "s": _JS_SPACE}


class _UnsupportedError(Exception):
    """The source uses something :func:`js_pattern` does not translate with certainty."""


@functools.lru_cache(maxsize=256)
def js_pattern(source: str) -> re.Pattern[str] | None:
    """The compiled Python equivalent of ``new RegExp(source, "u")``, or None (see the module)."""
    try:
        translated = _translate(source)
    except _UnsupportedError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" (Python 3.7+): read as JavaScript does
        try:
            return re.compile(translated, re.ASCII)
        except (re.error, OverflowError, RecursionError):
            return None


def js_pattern_test(source: str, value: str) -> bool | None:
    """``sharedRegex(source).test(value)``; None when the source is not translated."""
    compiled = js_pattern(source)
    return None if compiled is None else compiled.search(value) is not None


def _translate(source: str) -> str:
    out: list[str] = []
    i, n = 0, len(source)
    quantified = False  # the token before ends in a quantifier
    while i < n:
        char = source[i]
        if quantified and char == "+":
            raise _UnsupportedError  # possessive in Python 3.11, "nothing to repeat" in JavaScript
        quantified = char in "*+?}" and not (char == "?" and out and out[-1] in ("*", "+", "?", "}"))
        if char == "{" and source.startswith("{,", i):
            raise _UnsupportedError  # a quantifier {,n} in Python 3.11, not in JavaScript
        if (
            char == "("
            and source.startswith("(?", i)
            and not source.startswith(("(?:", "(?=", "(?!", "(?<"), i)
        ):
            raise _UnsupportedError  # Python's inline flags, atomic groups and (?P...) forms
        if char == "\\":
            text, i = _escape(source, i, in_class=False)
            out.append(text)
        elif char == "[":
            text, i = _char_class(source, i)
            out.append(text)
        elif char == ".":
            out.append(_JS_DOT)
            i += 1
        elif char == "$":
            out.append("\\Z")
            i += 1
        elif source.startswith("(?<", i) and i + 3 < n and source[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _escape(source: str, i: int, *, in_class: bool) -> tuple[str, int]:
    """The escape at ``source[i]`` (a backslash) and the index after it."""
    if i + 1 >= len(source):
        raise _UnsupportedError  # a trailing backslash: a SyntaxError in JavaScript
    char = source[i + 1]
    if char == "s":
        return (_JS_SPACE if in_class else f"[{_JS_SPACE}]"), i + 2
    if char == "S":
        if in_class:
            raise _UnsupportedError
        return f"[^{_JS_SPACE}]", i + 2
    if in_class and char in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[char], i + 2
    if in_class and char in "DW":
        raise _UnsupportedError
    if char == "u" and source.startswith("{", i + 2):
        end = source.find("}", i + 3)
        digits = source[i + 3 : end] if end > 0 else ""
        if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits) or int(digits, 16) > 0x10FFFF:
            raise _UnsupportedError
        return f"\\U{int(digits, 16):08x}", end + 1
    if char == "u":
        digits = source[i + 2 : i + 6]
        if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise _UnsupportedError
        return f"\\u{digits}", i + 6
    if char == "x":
        digits = source[i + 2 : i + 4]
        if len(digits) != 2 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise _UnsupportedError
        return f"\\x{digits}", i + 4
    if char == "k" and source.startswith("<", i + 2) and not in_class:
        end = source.find(">", i + 3)
        if end < 0:
            raise _UnsupportedError
        return f"(?P={source[i + 3 : end]})", end + 1
    if char in "123456789" and not in_class:
        j = i + 1
        while j < len(source) and source[j].isdigit():
            j += 1
        return source[i:j], j  # a back reference: Python refuses one to no group, as unchecked
    if char == "0" and i + 2 < len(source) and source[i + 2].isdigit():
        raise _UnsupportedError  # a legacy octal escape: a SyntaxError with the u flag
    if char == "b" and in_class:
        return "\\x08", i + 2
    if char == "-" and in_class:
        return "\\-", i + 2
    if char in _SAME_ESCAPES:
        return source[i : i + 2], i + 2
    if char in _SYNTAX:
        return "\\" + char, i + 2
    raise _UnsupportedError  # \p, \P, \c and identity escapes the u flag refuses


def _char_class(source: str, i: int) -> tuple[str, int]:
    """The class at ``source[i]`` (``[``) and the index after it."""
    j = i + 1
    negated = source.startswith("^", j)
    if negated:
        j += 1
    if source.startswith("]", j):
        return ("(?s:.)" if negated else "(?!)"), j + 1
    parts = ["[^" if negated else "["]
    while j < len(source) and source[j] != "]":
        if source[j] == "\\":
            text, j = _escape(source, j, in_class=True)
            parts.append(text)
        elif source[j] == "[":
            parts.append("\\[")  # a literal in JavaScript's class (without the v flag)
            j += 1
        else:
            parts.append(source[j])
            j += 1
    if j >= len(source):
        raise _UnsupportedError  # an unterminated class: a SyntaxError
    parts.append("]")
    return "".join(parts), j + 1
