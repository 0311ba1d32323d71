"""What a transcript's messages say, in pi-ai's and Pi's own words, as both targets show it.

Steps and invariants read message texts the way Pi writes them: pi-ai's ``contentText``
(:func:`content_text`) and the wrapper Pi's ``convertToLlm`` puts around a compaction summary
before a request reaches the model (``messages.js``), which a step looks for in the requests
the model received, on the simulator and on real Pi alike. The simulated host's port of
``messages.js`` (``simulator/messages.py``) uses these same definitions.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

__all__ = ["COMPACTION_SUMMARY_PREFIX", "COMPACTION_SUMMARY_SUFFIX", "content_text", "js_number", "js_string"]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"


def content_text(content: Any, separator: str = "") -> str:
    """pi-ai ``contentText``: the text blocks of a content value, joined (utils/text.js:2-9:
    ``.map((block) => block.text).join(separator)``, so a block without a text or with
    ``null`` adds ``""`` and a number its JavaScript string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        _joined(block.get("text"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _joined(value: Any) -> str:
    """An element as ``Array.prototype.join`` writes it: ``undefined``/``null`` as ``""``, any
    other value as ``String(value)`` (ECMA-262 ``Array.prototype.join``)."""
    return "" if value is None else js_string(value)


def js_string(value: Any) -> str:
    """``String(value)`` of a JSON value, as JavaScript writes it (a template literal's
    ``${value}`` too): ``null``, ``true``/``false``, a number as ``Number.prototype.toString``
    writes it (:func:`js_number`), an array as its elements joined with ``,``
    (``Array.prototype.toString``), an object as ``[object Object]``. Pi names an invalid
    setting's value so (``settings-manager.js:658-667``), and pi-ai's ``contentText`` joins texts
    so (:func:`content_text`)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, int):
        # JSON.parse reads every number as a double: beyond 2**53 the integer is rounded.
        if abs(value) < 2**53:
            return str(value)
        try:
            return js_number(float(value))
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, list | tuple):
        return ",".join(_joined(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_number(value: float) -> str:
    """``Number.prototype.toString()`` (ECMA-262 Number::toString): the shortest digits that
    read back as ``value`` (Python's ``repr`` finds the same ones), written in decimal from
    1e-6 to below 1e21 and with an exponent (``1e+21``, ``1.5e-7``) outside; ``-0`` is ``0``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    sign, digit_tuple, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int) and not sign
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
