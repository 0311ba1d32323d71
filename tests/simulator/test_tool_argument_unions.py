"""pi-schema's unions, intersections and conditionals in a tool's arguments, on the simulator.

The expected texts are real Pi 1.6's (``tests/realpi/test_differential_tool_arguments.py``
compares the two targets call by call); these pin them without Node: the coercion
(``coerce.js`` convertUnion/coerceUnion) and the explanation of a failure (``explain.js``
walkUnion: the tag, the declared keys, the deepest first error).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_continuity_harness.simulator.tool_arguments import validate_arguments

from .tool_argument_schemas import MORE_SCHEMA, REFS_SCHEMA, UNIONS_SCHEMA

#: (arguments, what Pi 1.6 hands the tool, or the problem lines of its refusal).
CASES: list[tuple[dict[str, Any], dict[str, Any] | list[str]]] = [
    (
        {"choice": "a", "size": 3, "maybe": None, "shape": {"kind": "circle", "r": 1}},
        {"choice": "a", "size": 3, "maybe": None, "shape": {"kind": "circle", "r": 1}},
    ),
    ({"choice": "c"}, ['choice: expected "a"']),
    ({"size": "3", "maybe": "2.5", "both": 12345}, {"size": 3, "maybe": 2.5, "both": "12345"}),
    ({"size": "medium"}, ["size: expected integer, got string"]),
    ({"shape": {"kind": "square", "r": 1}}, ["shape.w: missing"]),
    ({"shape": {"kind": "hexagon"}}, ['shape.kind: expected one of ["circle","square"]']),
    ({"shape": {"kind": "circle", "r": "2"}}, {"shape": {"kind": "circle", "r": 2}}),
    ({"either": 5}, ["either: matches more than one alternative"]),
    ({"either": -1.5}, {"either": -1}),
    (
        {"both": "ab", "nonempty": ""},
        ["both: expected at least 3 characters", "nonempty: must not match the schema in not"],
    ),
    ({"both": 12}, ["both: expected at least 3 characters"]),
    ({"cond": {"unit": "px"}}, ["cond.value: missing"]),
    ({"cond": {"unit": "em"}}, ["cond.name: missing"]),
    ({"untagged": {"a": 1}}, ["untagged.b: missing"]),
    ({"untagged": {"c": 5}}, {"untagged": {"c": "5"}}),
    ({"untagged": {"z": 1}}, ["untagged.a: missing", "untagged.b: missing"]),
    ({"untagged": {"c": [1]}}, ["untagged.c: expected string, got array"]),
    ({"multi": "5"}, {"multi": 5}),
    (
        {
            "step": 0.3,
            "few": {"a": 1},
            "set": [1, "1", True, {"a": 1}, {"a": True}, [1], [True]],
            "obj_enum": {"a": 1},
        },
        {
            "step": 0.3,
            "few": {"a": 1},
            "set": [1, "1", True, {"a": 1}, {"a": True}, [1], [True]],
            "obj_enum": {"a": 1},
        },
    ),
    (
        {"step": 0.35, "few": {}, "set": [{"a": 1, "b": 2}, {"b": 2, "a": 1}], "obj_enum": {"a": True}},
        [
            "step: expected a multiple of 0.1",
            "few: expected at least 1 properties",
            "set: expected unique items",
            'obj_enum: expected one of [{"a":1},[1,2]]',
        ],
    ),
    (
        {"step": 3, "few": {"a": 1, "b": 2, "c": 3}, "obj_enum": [1, 2.0]},
        ["few: expected at most 2 properties"],
    ),
    ({"code": "abc-12", "line": "ab"}, {"code": "abc-12", "line": "ab"}),
    (
        {"code": "ABC-1", "line": "a\n"},
        ["code: expected to match ^[a-z]+-\\d+$", "line: expected to match ^a.$"],
    ),
    (
        {"code": "abc-12\n", "line": "a\r"},
        ["code: expected to match ^[a-z]+-\\d+$", "line: expected to match ^a.$"],
    ),
    (
        {"when": "2024-02-29T23:59:60Z", "site": "https://example.com/a?b#c", "host": "example.com"},
        {"when": "2024-02-29T23:59:60Z", "site": "https://example.com/a?b#c", "host": "example.com"},
    ),
    (
        {"when": "2023-02-29T10:00:00Z", "site": "not a uri"},
        ["when: expected format date-time", "site: expected format uri"],
    ),
    ({"extra": {"x": "7", "y": "z"}}, ["extra.y: expected integer, got string"]),
    (
        {"never": 1, "odd~key/x": "x"},
        ["never: no value is allowed here", "odd~key/x: expected integer, got string"],
    ),
]


def _assert_pis_answer(
    tool: str, schema: dict[str, Any], args: dict[str, Any], expected: dict[str, Any] | list[str]
) -> None:
    """What Pi hands the tool (``expected`` a dict), or Pi's refusal: its problem lines, the
    arguments kept as received and written back whole."""
    coerced, problem = validate_arguments(tool, schema, args)
    if isinstance(expected, dict):
        assert problem is None and coerced == expected
        return
    assert problem is not None and coerced == args
    head, received = problem.split("\n\nReceived arguments:\n")
    assert head.split("\n") == [
        f'Validation failed for tool "{tool}":',
        *(f"  - {line}" for line in expected),
    ]
    assert json.loads(received) == args


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[json.dumps(args) for args, _ in CASES])
def test_union_intersection_and_conditional_arguments_as_pi_coerces_and_explains_them(
    args: dict[str, Any], expected: dict[str, Any] | list[str]
) -> None:
    _assert_pis_answer("unions", UNIONS_SCHEMA, args, expected)


#: Real Pi 1.6's answers (tests/realpi/test_differential_tool_arguments.py compares them call by call).
REF_CASES: list[tuple[dict[str, Any], dict[str, Any] | list[str]]] = [
    ({"at": {"x": "1", "y": 2}, "maybe": None}, {"at": {"x": 1, "y": 2}, "maybe": None}),
    ({"at": {"x": 1}}, ["at.y: missing"]),
    ({"shape": {"kind": "square", "r": 1}}, ["shape.w: missing"]),
    ({"shape": {"kind": "hex"}}, ['shape.kind: expected one of ["circle","square"]']),
    ({"maybe": {"x": 1}}, ["maybe.y: missing"]),
    (
        {"tree": {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}},
        {"tree": {"name": "a", "children": [{"name": "b", "children": [{"name": "3"}]}]}},
    ),
    ({"tree": {"children": [{}]}}, ["tree.name: missing", "tree.children.0.name: missing"]),
    (
        {"dangling": 1, "anchor": 1},
        ["dangling: unresolved reference #/$defs/Missing", "anchor: unresolved reference #nowhere"],
    ),
    ({"self": {"x": 1, "y": "q"}}, ["self.y: expected integer, got string"]),
    ({"at": None}, ["at: expected object, got null"]),  # a null is never dropped under a $ref
]


@pytest.mark.parametrize(("args", "expected"), REF_CASES, ids=[json.dumps(args) for args, _ in REF_CASES])
def test_references_into_the_schemas_own_defs_are_followed_as_pi_schema_follows_them(
    args: dict[str, Any], expected: dict[str, Any] | list[str]
) -> None:
    _assert_pis_answer("refs", REFS_SCHEMA, args, expected)


def test_a_schema_with_identifiers_leaves_its_references_unchecked() -> None:
    """``$id`` and anchors change what a reference names (pi-schema ``resolver.js``); such a schema's
    references are not resolved here, so nothing under them is refused."""
    schema = {"$id": "https://example.com/s.json", **REFS_SCHEMA}
    assert validate_arguments("refs", schema, {"at": {"x": 1}, "dangling": 1})[1] is None


MORE_CASES: list[tuple[dict[str, Any], dict[str, Any] | list[str]]] = [
    (
        {"pair": ["1", 2], "old": ["3", "4"], "bag": [10, 11], "some": ["x"]},
        {"pair": [1, "2"], "old": [3, "4"], "bag": [10, 11], "some": ["x"]},
    ),
    ({"old": [3, 4]}, ["old.1: expected string, got integer"]),
    ({"pair": [1, "a", "extra"]}, ["pair.2: no value is allowed here"]),
    ({"bag": [10]}, ["bag: expected between 2 and 3 matching items"]),
    (
        {"bag": [10, 11, 12, 13], "some": ["y"]},
        ["bag: expected between 2 and 3 matching items", "some: expected at least 1 matching item"],
    ),
    (
        {"env": {"PATH": "x", "home": "y", "TOOLONG": "z", "N": 5, "LIST": [1]}},
        [
            "env.home: unknown field",
            "env.TOOLONG: invalid property name",
            "env.LIST: expected string, got array",
        ],
    ),
    ({"one": ["1"]}, {"one": [1]}),
    ({"one": 1}, ["one: expected array, got integer"]),
    ({"card": {"number": "4"}}, ["card.cvc: required when number is present"]),
    ({"card": {"cvc": "1"}}, ["card.number: missing"]),
]


@pytest.mark.parametrize(("args", "expected"), MORE_CASES, ids=[json.dumps(args) for args, _ in MORE_CASES])
def test_tuples_contains_pattern_properties_and_dependencies_as_pi_schema_checks_them(
    args: dict[str, Any], expected: dict[str, Any] | list[str]
) -> None:
    _assert_pis_answer("more", MORE_SCHEMA, args, expected)
