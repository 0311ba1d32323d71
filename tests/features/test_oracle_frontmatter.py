"""The oracle reads a Brief written by the implementation under test, so its frontmatter is
input the suite does not control. A frontmatter of a few lines whose YAML aliases stand for a
billion values, or that contains itself, or that nests too deeply for the parser, is no Brief
to the oracle: it names the reason and every step and invariant that reads Briefs goes on,
instead of the suite hanging in the first assertion message that prints a field (found in
stop 28: ``brief_problems`` on the bomb below ran until killed)."""

from __future__ import annotations

import pytest

from pi_continuity_harness.features.oracle import (
    MAX_FRONTMATTER_VALUES,
    brief_problems,
    parse_brief,
    read_frontmatter,
)


def _brief(header: str) -> str:
    return f"---\n{header}\n---\n# Continuity Brief\n"


def _alias_bomb() -> str:
    """Nine lines of aliases standing for 10**9 values, in the fields the oracle prints."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines += ["kind: *a8", "version: *a8", "status: *a8", "eventId: *a8"]
    return "\n".join(lines)


def test_a_frontmatter_whose_aliases_stand_for_too_many_values_is_no_brief() -> None:
    text = _brief(_alias_bomb())
    assert parse_brief(text) is None  # before: a Brief whose fields are the bomb
    assert brief_problems(text) == [
        f"frontmatter a3.9: stands for more than {MAX_FRONTMATTER_VALUES:,} values once its YAML "
        "aliases are expanded"
    ]


def test_a_frontmatter_that_contains_itself_is_no_brief() -> None:
    data, reason = read_frontmatter(_brief("kind: &k [*k]"))
    assert data is None
    assert reason == "frontmatter kind.0: the value contains itself (a YAML alias of an enclosing node)"


def test_a_frontmatter_nested_too_deeply_to_read_is_no_brief() -> None:
    text = _brief("kind: " + "[" * 20_000 + "]" * 20_000)
    assert parse_brief(text) is None
    assert brief_problems(text) == ["the frontmatter is nested too deeply to read"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# no frontmatter\n", "no YAML frontmatter between '---' lines"),
        (_brief("- a list"), "the frontmatter is not a mapping of fields"),
        (_brief("kind: [unclosed"), "the frontmatter is not valid YAML (while parsing a flow sequence)"),
        (
            _brief("status: pending\nkind: x\nstatus: archived"),
            "the frontmatter is not valid YAML (found duplicate key 'status' (first on line 1))",
        ),
    ],
)
def test_a_text_without_a_frontmatter_mapping_is_no_brief_and_the_oracle_says_why(
    text: str, reason: str
) -> None:
    assert parse_brief(text) is None
    assert brief_problems(text) == [reason]


def test_a_frontmatter_that_names_a_field_twice_is_no_brief() -> None:
    """Before: the oracle read the last value (``status: archived``) while the reference
    product refuses such a Brief (``'status' appears twice``): which status the Brief has is
    not in the text, so the oracle reports it instead of judging one of the two."""
    data, reason = read_frontmatter(_brief("status: pending\nkind: x\nstatus: archived"))
    assert data is None
    assert reason.startswith("the frontmatter is not valid YAML (found duplicate key 'status'")


def test_aliases_that_stay_within_the_bound_are_read_as_written() -> None:
    """An alias is YAML, not a fault: a frontmatter that repeats a value through one is read."""
    data, reason = read_frontmatter(_brief("a: &a [x, y]\nkind: *a"))
    assert reason == ""
    assert data == {"a": ["x", "y"], "kind": ["x", "y"]}


def test_each_reading_of_the_same_brief_gets_fields_of_its_own() -> None:
    """The oracle remembers the Briefs it read (a step reads one several times); a step that
    changes the fields it was given changes nothing another step reads."""
    text = _brief("kind: pi-session-continuity/v2\nfiles: [a.txt]")
    first = parse_brief(text)
    assert first is not None
    first.frontmatter["kind"] = "changed"
    first.frontmatter["files"].append("b.txt")
    second = parse_brief(text)
    assert second is not None
    assert second.frontmatter == {"kind": "pi-session-continuity/v2", "files": ["a.txt"]}
    assert read_frontmatter(text)[0] == second.frontmatter


@pytest.mark.parametrize(
    "header",
    [
        "kind: brief\nstatus: pending\nversion: 2\npercent: 62.5\nfresh: true\nleaf: null",
        "kind: brief\nlist: [a, b]\nnested: {x: 1}",
        "kind: brief\nshared: &s [a]\nagain: *s\ncreatedAt: 2026-12-05T00:00:00Z",
    ],
)
def test_each_reader_of_a_remembered_brief_gets_fields_of_its_own(header: str) -> None:
    """The oracle remembers the Briefs it read; a reader that changes the fields it got (at
    any depth) changes neither the next reader's fields nor the Brief's, and the fields are
    what ``copy.deepcopy`` of the first reading gives (shared aliases stay shared)."""
    text = _brief(header)
    first, _ = read_frontmatter(text)
    assert first is not None
    second, _ = read_frontmatter(text)
    assert second == first and second is not first
    for key, value in first.items():
        if isinstance(value, list | dict):
            assert second[key] is not value
    if "again" in first:
        assert second["again"] is second["shared"]
    first["kind"] = "changed"
    first.setdefault("list", []).append("changed")
    assert read_frontmatter(text)[0] == second
    brief = parse_brief(text)
    assert brief is not None and brief.frontmatter["kind"] == "brief"
