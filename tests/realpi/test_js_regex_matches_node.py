"""``simulator.js_regex`` tests a JSON Schema ``pattern`` as pi-schema does: checked against Node 22
(the one the harness runs Pi with), ``sharedRegex(source).test(value)`` (``new RegExp(source, "u")``,
without the flag when that throws; ``@earendil-works/pi-schema`` ``dist/shared.js``), on a corpus
of patterns a tool schema uses and on patterns built from fragments where Python's ``re`` reads
JavaScript's sources otherwise (``$``, ``.``, ``\\s``, ``\\w``, ``[]``, ``\\u{...}``, named groups).
A source it leaves untranslated (None) is skipped; the test also requires that most are translated.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from realpi.node_json import node_json

from pi_continuity_harness.simulator.js_regex import js_pattern, js_pattern_test
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi

_NODE = (
    "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    "const compile = (s) => { try { return new RegExp(s, 'u'); } catch { return new RegExp(s); } };"
    "process.stdout.write(JSON.stringify(cases.map(([p, v]) => { try { return compile(p).test(v); }"
    " catch { return null; } })));"
)

_CORPUS = [
    "^[a-z0-9-]+$",
    "^\\d{4}-\\d{2}-\\d{2}$",
    "^[A-Z][a-z]+$",
    "^\\S+@\\S+\\.\\S+$",
    "^https?://",
    "\\.(ts|js)$",
    "^[^\\s]+$",
    "^\\w+(\\.\\w+)*$",
    "^(?<major>\\d+)\\.(?<minor>\\d+)$",
    "^(a|b)\\1$",
    "^.{2,5}$",
    "[]",
    "[^]",
    "^\\u{1F600}$",
    "^\\u00e9$",
    "^\\x41",
    "\\bword\\b",
    "^[\\w.-]+$",
    "^[\\s\\d]+$",
    "a$",
    "^$",
    "(?=a)a",
    "(?<=a)b",
    "^[\\[\\]]+$",
    "^[a\\-z]$",
    "^a{2}$",
    "x*?y",
    "^\\/path$",
]
_VALUES = [
    "",
    "a",
    "b",
    "ab",
    "aa",
    "abc-1",
    "abc\n",
    "a\n",
    "a\rb",
    "2024-05-06",
    "é",
    "😀",
    "😀😀",
    "x y",
    "\ufeff",
    "\x1c",
    "\u2028",
    "a@b.c",
    "https://x",
    "f.ts",
    "1.2",
    "Word",
    "a word here",
    "[]",
    "-",
    "/path",
    "xxy",
    "a.b-c_d",
    " \t",
    "12",
]
_FRAGMENTS = st.sampled_from(
    [
        "a",
        "b",
        ".",
        "$",
        "^",
        "\\s",
        "\\S",
        "\\w",
        "\\d",
        "\\b",
        "[a-c]",
        "[^a]",
        "[\\s]",
        "[\\w-]",
        "*",
        "+",
        "?",
        "{1,2}",
        "(",
        ")",
        "|",
        "\\u{e9}",
        "\\.",
        "é",
        "😀",
        "\\n",
        "[]",
        "[^]",
    ]
)


def _node(installation: PiInstallation, cases: list[tuple[str, str]]) -> list[bool | None]:
    return list(node_json(installation, _NODE, cases))


def test_a_corpus_of_tool_schema_patterns_matches_as_node_matches(pi_installation: PiInstallation) -> None:
    cases = [(p, v) for p in _CORPUS for v in _VALUES]
    expected = _node(pi_installation, cases)
    ours = [js_pattern_test(p, v) for p, v in cases]
    translated = [p for p in _CORPUS if js_pattern(p) is not None]
    assert len(translated) >= len(_CORPUS) - 1  # only the lookbehind (?<=a) may be left
    mismatches = [
        (p, v, e, o) for (p, v), e, o in zip(cases, expected, ours, strict=True) if o is not None and o != e
    ]
    assert not mismatches, mismatches[:10]


@settings(max_examples=60, deadline=None, phases=[Phase.generate])
@given(st.lists(st.lists(_FRAGMENTS, min_size=1, max_size=6).map("".join), min_size=20, max_size=20))
def test_patterns_built_from_fragments_match_as_node_matches(
    pi_installation: PiInstallation, patterns: list[str]
) -> None:
    cases = [(p, v) for p in patterns for v in _VALUES if js_pattern(p) is not None]
    if not cases:
        return
    expected = _node(pi_installation, cases)
    mismatches = [
        (p, v, e)
        for (p, v), e in zip(cases, expected, strict=True)
        if e is not None and js_pattern_test(p, v) != e
    ]
    assert not mismatches, mismatches[:10]
