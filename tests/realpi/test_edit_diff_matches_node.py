"""The simulator's ``edit`` tool and its jsdiff port compute what Pi's own code computes in Node 22.

``simulator/edit_tool.py`` ports pi-coding-agent ``dist/core/tools/edit-diff.js`` (matching, the
fuzzy match, CRLF and the errors, the display diff and the patch), and ``simulator/js_diff.py``
ports jsdiff 8.0.4's ``diffLines``, ``structuredPatch`` and ``formatPatch``. A port that aligned
repeated lines differently from Myers's algorithm as jsdiff runs it (Python's ``difflib`` does)
would write a diff no real Pi writes. Here both run on generated files and edits: the installed
package's ``edit-diff.js`` and the ``diff`` package Pi resolves, against the Python functions.

Lines come from a small set, so files repeat lines (where diff alignments are ambiguous), with
CRLF, trailing spaces and curly quotes (the fuzzy match), and edits take text from the file (or
text it lacks): 1,000 seeded cases per Node process.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from realpi.node_json import node_json

from pi_continuity_harness.simulator.edit_tool import (
    EditError,
    apply_edits_to_normalized_content,
    apply_replacements_to_original,
    generate_edit_diff,
    normalize_to_lf,
)
from pi_continuity_harness.simulator.js_diff import diff_lines, format_patch, structured_patch
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi

_NODE = """
const { createRequire } = require("module");
const { pathToFileURL } = require("url");
const pkg = process.argv[1];
(async () => {
  const Diff = createRequire(pkg + "/package.json")("diff");
  const E = await import(pathToFileURL(pkg + "/dist/core/tools/edit-diff.js").href);
  const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const out = cases.map(({ content, edits, old, neu }) => {
    const parts = Diff.diffLines(old, neu).map((p) => [p.value, !!p.added, !!p.removed]);
    const patch = Diff.createTwoFilesPatch("f", "f", old, neu, undefined, undefined,
      { context: 4, headerOptions: Diff.FILE_HEADERS_ONLY });
    let edit;
    try {
      const normalized = E.normalizeToLF(content);
      const r = E.applyEditsToNormalizedContent(normalized, edits, "f.txt");
      const d = E.generateEditDiff("f.txt", r.baseContent, r.newContent, r.replacements);
      const written = content === normalized ? r.newContent : E.applyReplacementsToOriginal(content, r.replacements);
      edit = { written, ...d };
    } catch (e) {
      edit = { error: e.message };
    }
    return { parts, patch, edit };
  });
  process.stdout.write(JSON.stringify(out));
})();
"""

_LINES = ["a", "b", "a b", "", "  x", "it\u2019s", "say \u201chi\u201d", "end  ", "a", "b"]
_ENDINGS = ["\n", "\n", "\n", "\r\n"]


def _text(rng: random.Random) -> str:
    lines = [rng.choice(_LINES) for _ in range(rng.randint(0, 14))]
    ending = rng.choice(_ENDINGS)
    text = ending.join(lines)
    return text + ending if lines and rng.random() < 0.5 else text


def _case(rng: random.Random) -> dict[str, Any]:
    content = _text(rng)
    edits = []
    for _ in range(rng.randint(1, 3)):
        if content and rng.random() < 0.8:
            start = rng.randint(0, len(content) - 1)
            old = content[start : rng.randint(start + 1, min(len(content), start + 12))]
            if rng.random() < 0.5:  # ASCII quotes for the file's curly ones: only the fuzzy match finds it
                old = old.replace("\u2019", "'").replace("\u201c", '"')
        else:
            old = rng.choice(["zz", "a\nb", "it's", 'say "hi"'])
        edits.append({"oldText": old, "newText": rng.choice(["", "N", "a", "N\nM", "b\n"])})
    return {"content": content, "edits": edits, "old": _text(rng), "neu": _text(rng)}


def _python(case: dict[str, Any]) -> dict[str, Any]:
    old, neu = case["old"], case["neu"]
    parts = [[p.value, p.added, p.removed] for p in diff_lines(old, neu)]
    patch = format_patch("f", "f", structured_patch(old, neu, 4))
    content = case["content"]
    normalized = normalize_to_lf(content)
    try:
        base, new_content, replacements = apply_edits_to_normalized_content(
            normalized, case["edits"], "f.txt"
        )
    except EditError as error:
        return {"parts": parts, "patch": patch, "edit": {"error": str(error)}}
    details = generate_edit_diff("f.txt", base, new_content, replacements)
    written = new_content if content == normalized else apply_replacements_to_original(content, replacements)
    return {"parts": parts, "patch": patch, "edit": {"written": written, **details}}


def _node(installation: PiInstallation, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(node_json(installation, _NODE, cases, str(installation.pi_package_dir)))


@pytest.mark.parametrize("seed", [0, 1])
def test_edits_diffs_and_patches_are_what_pis_code_computes(
    pi_installation: PiInstallation, seed: int
) -> None:
    rng = random.Random(seed)
    cases = [_case(rng) for _ in range(1_000)]
    expected = _node(pi_installation, cases)
    differ = [(c, _python(c), e) for c, e in zip(cases, expected, strict=True) if _python(c) != e]
    assert not differ, f"{len(differ)} of {len(cases)} differ; first (case, python, node): {differ[:2]}"
    errors = sum("error" in e["edit"] for e in expected)
    assert 0 < errors < len(cases)  # both outcomes are compared, not only one


def test_the_cases_that_exercise_each_branch(pi_installation: PiInstallation) -> None:
    """Named cases: repeated lines, a far second edit (two diff windows), CRLF, fuzzy match."""
    rows = "".join(f"row {i}\n" for i in range(1, 120))
    cases = [
        {
            "content": "x\nx\ny\n",
            "edits": [{"oldText": "y", "newText": "x"}],
            "old": "a\na\nb\n",
            "neu": "a\nb\na\n",
        },
        {
            "content": rows,
            "edits": [{"oldText": "row 3\n", "newText": ""}, {"oldText": "row 100", "newText": "C\nD"}],
            "old": rows,
            "neu": rows.replace("row 50\n", ""),
        },
        {
            "content": "a\r\nb\r\nc",
            "edits": [{"oldText": "b\nc", "newText": "B\nC\nD"}],
            "old": "a",
            "neu": "a\n",
        },
        {
            "content": "it\u2019s  \nok\n",
            "edits": [{"oldText": "it's\nok", "newText": "fine"}],
            "old": "",
            "neu": "x",
        },
    ]
    assert [_python(c) for c in cases] == _node(pi_installation, cases)
