"""A JSON Schema ``pattern`` read as JavaScript reads it (``simulator/js_regex.py``).

The expected answers are Node 22's (``new RegExp(source, "u").test(value)``, recorded on 6
December 2026; ``tests/realpi/test_js_regex_matches_node.py`` asks Node again, on a corpus and on
generated patterns): each pair is one place where Python's ``re`` reads the source otherwise.
"""

from __future__ import annotations

import pytest

from pi_continuity_harness.simulator.js_regex import js_pattern, js_pattern_test

NODE_ANSWERS: list[tuple[str, str, bool]] = [
    ("^[a-z0-9-]+$", "abc-1", True),
    ("^[a-z0-9-]+$", "abc\n", False),  # $ is the end only
    ("a$", "a\n", False),
    ("a.c", "a\rc", False),  # . leaves out every line terminator
    ("a.c", "a\u2028c", False),
    ("a.c", "abc", True),
    ("^\\s+$", "\ufeff", True),  # JavaScript's white space
    ("^\\s+$", "\x1c", False),
    ("^\\S$", "\x1c", True),
    ("^\\w+$", "é", False),  # ASCII \w, \d, \b
    ("^\\d$", "\u0663", False),
    ("\\bé", "é", False),
    ("[]", "x", False),  # the empty class
    ("[^]", "\n", True),
    ("^\\u{1F600}$", "\U0001f600", True),  # a code point escape, and . a code point (u flag)
    ("^.$", "\U0001f600", True),
    ("(?<y>\\d+)-\\k<y>", "12-12", True),  # named groups and back references
    ("(?<y>\\d+)-\\k<y>", "12-13", False),
    ("^[\\w.-]+$", "a.b-c", True),
    ("^[\\[\\]]+$", "[]", True),
    ("^\\/p$", "/p", True),
]


@pytest.mark.parametrize(("source", "value", "node"), NODE_ANSWERS)
def test_a_pattern_matches_as_javascript_matches_it(source: str, value: str, node: bool) -> None:
    assert js_pattern_test(source, value) is node


@pytest.mark.parametrize(
    "source",
    [
        "\\p{L}",  # Unicode properties
        "\\cJ",  # control escapes
        "[\\D]",  # a complement inside a class
        "\\a",  # an identity escape the u flag refuses (JavaScript then drops the flag)
        "(?i)a",  # Python's inline flags
        "a*+",  # Python's possessive quantifier, JavaScript's "nothing to repeat"
        "x{,2}",  # a quantifier to Python only
        "(?<=a+)b",  # a lookbehind of variable width (Python refuses it)
        "[a-",  # unterminated
    ],
)
def test_a_source_it_cannot_read_with_certainty_is_left_unchecked(source: str) -> None:
    assert js_pattern(source) is None
    assert js_pattern_test(source, "a") is None
