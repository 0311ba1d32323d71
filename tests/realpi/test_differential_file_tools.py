"""Differential: Pi 1.6's built-in ``read``, ``write`` and ``edit`` tools, real Pi against the simulator.

Until this test the simulator's ``edit`` wrote ``newText`` over the whole file and answered
``Successfully wrote to <path>``, its ``read`` returned the whole file whatever ``offset`` and
``limit`` said, and neither checked its arguments. On real Pi (the first run of this test):

* ``edit`` replaces each ``edits[].oldText`` found exactly once and answers ``Successfully
  replaced N block(s) in <path>.`` with ``details: {diff, patch, firstChangedLine}`` (edit.js:83-137,
  edit-diff.js); a missing, repeated, empty or overlapping ``oldText`` and an edit that changes
  nothing fail with Pi's messages; a curly quote or trailing space in the file still matches
  (the fuzzy match); CRLF line ends and a BOM are kept; ``edits`` may come as a JSON string, one
  object, or the legacy top-level ``oldText``/``newText`` (``prepareEditArguments``).
* ``read`` returns the lines from ``offset`` (1-based), at most ``limit`` of them and at most 2,000
  lines or 50 KB, with a notice naming the offset to continue from, and fails an offset past the
  end (read.js:230-270, truncate.js).
* Every built-in's arguments are coerced and checked against its schema first (pi-ai
  validation.js:49-61): ``"2"`` is the number 2, and a missing field is ``Validation failed for
  tool "edit": - edits: missing``.

Each call is alone in its turn: Pi runs a reply's calls in parallel, and their order of ending is
the real processes' (``test_differential_tool_details_none.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_LONG_FILE = "".join(f"line {i}\n" for i in range(1, 2101))  # 2,100 lines: over the line cap
_WIDE_FILE = "".join(f"{i:04d} " + "x" * 95 + "\n" for i in range(600))  # ~60 KB: over the byte cap
_MIDDLE = "".join(f"row {i}\n" for i in range(1, 201))


def _edits(path: str, *pairs: tuple[str, str]) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in pairs]}


CALLS: list[tuple[str, dict[str, Any]]] = [
    # write
    ("write", {"path": "sub/dir/a.txt", "content": "one\ntwo\nthree\n"}),
    ("write", {"path": "./sub/../b.txt", "content": "b"}),
    ("write", {"path": "@at.txt", "content": 5}),
    ("write", {"path": "nocontent.txt"}),
    # read
    ("read", {"path": "sub/dir/a.txt"}),
    ("read", {"path": "sub/dir/a.txt", "offset": 2, "limit": 1}),
    ("read", {"path": "sub/dir/a.txt", "offset": "2"}),
    ("read", {"path": "sub/dir/a.txt", "limit": 0}),
    ("read", {"path": "sub/dir/a.txt", "offset": 50}),
    ("read", {"path": "sub/dir/a.txt", "offset": "many"}),
    ("read", {"path": "sub/dir/a.txt", "offset": None}),
    ("read", {"path": "missing.txt"}),
    ("read", {"path": "sub"}),
    ("read", {}),
    ("read", {"path": "at.txt"}),
    ("write", {"path": "long.txt", "content": _LONG_FILE}),
    ("read", {"path": "long.txt"}),
    ("read", {"path": "long.txt", "offset": 2050}),
    ("write", {"path": "wide.txt", "content": _WIDE_FILE}),
    ("read", {"path": "wide.txt", "offset": 3}),
    ("write", {"path": "oneline.txt", "content": "y" * 60_000}),
    ("read", {"path": "oneline.txt"}),
    # edit
    ("edit", _edits("sub/dir/a.txt", ("two", "TWO"))),
    ("edit", {"path": "sub/dir/a.txt", "oldText": "three", "newText": "3"}),
    ("edit", _edits("sub/dir/a.txt", ("nope", "x"))),
    ("edit", _edits("sub/dir/a.txt", ("one", "one"))),
    ("edit", _edits("sub/dir/a.txt", ("", "x"))),
    ("edit", {"path": "sub/dir/a.txt", "newText": "x"}),
    ("edit", {"path": "sub/dir/a.txt", "edits": [{"oldText": "one"}]}),
    ("edit", {"path": "sub/dir/a.txt", "edits": '[{"oldText": "TWO", "newText": "two"}]'}),
    ("edit", {"path": "sub/dir/a.txt", "edits": {"oldText": "two\n3", "newText": "2\n3\nfour"}}),
    ("edit", _edits("missing.txt", ("a", "b"))),
    ("write", {"path": "dup.txt", "content": "x\nx\n"}),
    ("edit", _edits("dup.txt", ("x", "y"))),
    ("edit", _edits("sub/dir/a.txt", ("one", "1"), ("x", "y"))),
    ("edit", _edits("sub/dir/a.txt", ("one\n2", "a"), ("2\n3", "b"))),
    ("edit", _edits("sub/dir/a.txt", ("one", "1"), ("four", "4"))),
    ("write", {"path": "fuzzy.txt", "content": "say \u201chello\u201d   \nit\u2019s \u2014 done\n"}),
    (
        "edit",
        {"path": "fuzzy.txt", "edits": [{"oldText": 'say "hello"\nit\'s - done', "newText": "said it"}]},
    ),
    ("write", {"path": "crlf.txt", "content": "alpha\r\nbeta\r\ngamma\r\n"}),
    ("edit", _edits("crlf.txt", ("beta\ngamma", "B\nG\nextra"))),
    ("read", {"path": "crlf.txt"}),
    ("write", {"path": "bom.txt", "content": "\ufefffirst\nsecond\n"}),
    ("edit", _edits("bom.txt", ("first", "1st"))),
    ("read", {"path": "bom.txt"}),
    ("write", {"path": "middle.txt", "content": _MIDDLE}),
    ("edit", _edits("middle.txt", ("row 20\n", ""), ("row 150\nrow 151", "x\ny\nz"))),
    ("edit", _edits("middle.txt", ("row 1\n", "first\n"), ("row 10\n", "tenth\n"))),
    ("edit", _edits("middle.txt", ("row 200\n", "row 200"))),
    ("read", {"path": "middle.txt", "offset": 195}),
    # a directory where a file should be
    ("write", {"path": "sub", "content": "x"}),
    ("edit", _edits("sub", ("a", "b"))),
]


def _results(observation: Observation) -> list[dict[str, Any]]:
    return [e["message"] for e in observation.entries if e.get("message", {}).get("role") == "toolResult"]


def test_read_write_and_edit_results_are_pis(targets: Targets) -> None:
    replies = [
        {"text": "calling", "tool_calls": [{"name": name, "arguments": args, "id": f"c{i}"}]}
        for i, (name, args) in enumerate(CALLS)
    ] + [{"text": "DONE"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "hello"}])
    texts = [m["content"][0]["text"] for m in _results(real)]
    assert len(texts) == len(CALLS)
    # The behaviours themselves, on real Pi (a mistake both targets shared would pass the comparison):
    assert texts[5] == "two\n\n[2 more lines in file. Use offset=3 to continue.]"
    assert texts[8] == "Offset 50 is beyond end of file (4 lines total)"
    assert texts[22] == "Successfully replaced 1 block(s) in sub/dir/a.txt."
    assert _results(real)[22]["details"]["diff"] == " 1 one\n-2 two\n+2 TWO\n 3 three"
    assert texts[27].startswith('Validation failed for tool "edit":\n  - edits: missing')
    assert texts[24].startswith("Could not find the exact text in sub/dir/a.txt.")
    assert_equivalent(real, sim)
