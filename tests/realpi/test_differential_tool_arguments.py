"""Differential: how Pi 1.6 coerces and checks a tool's arguments, real Pi against the simulator.

pi-ai validates every tool call against the tool's JSON Schema with pi-schema, coercing first
(``validateToolArguments``, ``dist/utils/validation.js:49-61``; ``@earendil-works/pi-schema``
``coerce.js``, ``explain.js``): an optional ``null`` is dropped, ``"5"`` becomes 5 for a number,
``5`` becomes ``"5"`` for a string, ``"true"`` true, one value a one-item array, ``"B"`` an enum's
``"B"``; what still fails is listed one problem a line (``expected integer, got number``,
``expected one of ["fast","slow"]``, ``expected >= 1``, ``unknown field``); ``2.5`` for an
integer is truncated to 2. The simulator checked only
required fields and turned numeric strings into numbers (``session_tools._coerce_arguments``);
now both the built-ins and a Python extension's tools go through ``simulator/tool_arguments.py``.
The probe tool answers with the arguments it received, so a coercion shows in its result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario
from simulator.tool_argument_schemas import MORE_SCHEMA, REFS_SCHEMA, UNIONS_SCHEMA

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult

SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 8},
        "count": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "flag": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "level": {"enum": [1, 2, 3]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "note": {"type": ["string", "null"]},
        "kind": {"const": "probe"},
        "share": {"type": "number", "maximum": 1, "exclusiveMaximum": 0.5},
        "pair": {"type": "array", "minItems": 2},
        "nothing": {"type": "null"},
        "inner": {
            "type": "object",
            "required": ["x"],
            "properties": {"x": {"type": "number"}},
            "additionalProperties": False,
        },
    },
}


async def execute(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": json.dumps(params, sort_keys=True)}])


def extension(pi):
    pi.register_tool(
        ToolDefinition(name="probe", label="probe", description="A probe tool.", parameters=SCHEMA, execute=execute)
    )
"""

CALLS: list[dict[str, Any]] = [
    {"name": "ok"},
    {"name": "ok", "count": "3", "ratio": "0.5", "flag": "true", "tags": "one", "note": None},
    {"name": 12, "count": 2.0, "flag": 1, "level": "2", "mode": "fast"},
    {"name": "ok", "count": 2.5},
    {"name": "x", "count": 0, "ratio": 0, "mode": "medium", "level": 4},
    {"name": "toolongname", "tags": ["a", "b", "c"], "flag": "maybe"},
    {"name": "ok", "inner": {"x": "1", "y": 2}},
    {"name": "ok", "inner": {}},
    {"count": "many", "inner": 5},
    {"name": None},
    {"name": "ok", "note": 5, "tags": [1, True]},
    {"name": "ok", "kind": "probe", "share": "0.25", "pair": [1, 2], "nothing": ""},
    {"name": "ok", "kind": "other", "share": 2, "pair": [1], "nothing": "x"},
]


def _results(observation: Observation) -> list[tuple[bool, str]]:
    messages = [e["message"] for e in observation.entries if e.get("message", {}).get("role") == "toolResult"]
    return [(bool(m.get("isError")), m["content"][0]["text"]) for m in messages]


def _call_each(
    targets: Targets, path: str, tool: str, calls: list[dict[str, Any]], prefix: str
) -> list[tuple[bool, str]]:
    """Each of ``calls`` as the arguments of one model turn's call of ``tool``, played on both
    targets with the extension at ``path``: real Pi's tool results (error flag, text), once the
    simulator's were found the same, flags and texts, and the observations equivalent."""
    replies = [
        {"text": "calling", "tool_calls": [{"name": tool, "arguments": args, "id": f"{prefix}{i}"}]}
        for i, args in enumerate(calls)
    ] + [{"text": "DONE"}]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "go"}], path)
    results = _results(real)
    assert len(results) == len(calls)
    assert _results(sim) == results
    assert_equivalent(real, sim)
    return results


def test_tool_arguments_are_coerced_and_checked_as_pi_does(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    path = python_extension("arguments_probe", _EXTENSION)
    results = _call_each(targets, path, "probe", CALLS, "c")
    # Real Pi, the first coercions: "3" is 3, "0.5" is 0.5, "true" is true, one tag a list; the null
    # stays, since the note's schema takes null (only a null the schema refuses is dropped).
    assert results[1] == (
        False,
        '{"count": 3, "flag": true, "name": "ok", "note": null, "ratio": 0.5, "tags": ["one"]}',
    )
    assert results[3] == (False, '{"count": 2, "name": "ok"}')  # 2.5 for an integer: truncated
    assert results[8][1].startswith(
        'Validation failed for tool "probe":\n  - name: missing\n  - count: expected integer, got string\n'
        "  - inner: expected object, got integer\n"
    )
    # const, maximum and exclusiveMaximum, minItems, a null type ("" is null after coercion).
    assert results[11] == (
        False,
        '{"kind": "probe", "name": "ok", "nothing": null, "pair": [1, 2], "share": 0.25}',
    )


UNION_CALLS: list[dict[str, Any]] = [
    {"choice": "a", "size": 3, "maybe": None, "shape": {"kind": "circle", "r": 1}},
    {"choice": "c"},
    {"size": "3", "maybe": "2.5", "both": 12345},
    {"size": "medium"},
    {"shape": {"kind": "square", "r": 1}},
    {"shape": {"kind": "hexagon"}},
    {"shape": {"kind": "circle", "r": "2"}},
    {"either": 5},
    {"either": -1.5},
    {"both": "ab", "nonempty": ""},
    {"both": 12},
    {"cond": {"unit": "px"}},
    {"cond": {"unit": "em"}},
    {"untagged": {"a": 1}},
    {"untagged": {"c": 5}},
    {"untagged": {"z": 1}},
    {"untagged": {"c": [1]}},
    {"multi": "5"},
    {
        "step": 0.3,
        "few": {"a": 1},
        "set": [1, "1", True, {"a": 1}, {"a": True}, [1], [True]],
        "obj_enum": {"a": 1},
    },
    {"step": 0.35, "few": {}, "set": [{"a": 1, "b": 2}, {"b": 2, "a": 1}], "obj_enum": {"a": True}},
    {"step": 3, "few": {"a": 1, "b": 2, "c": 3}, "obj_enum": [1, 2.0]},
    {"code": "abc-12", "line": "ab"},
    {"code": "ABC-1", "line": "a\n"},
    {"code": "abc-12\n", "line": "a\r"},
    {"when": "2024-02-29T23:59:60Z", "site": "https://example.com/a?b#c", "host": "example.com"},
    {"when": "2023-02-29T10:00:00Z", "site": "not a uri"},
    {"extra": {"x": "7", "y": "z"}},
    {"never": 1, "odd~key/x": "x"},
]


def test_union_intersection_and_conditional_arguments_are_coerced_and_explained_as_pi_does(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """TypeBox's ``Type.Union`` (``anyOf``), a tagged ``oneOf``, ``Type.Intersect`` (``allOf``),
    ``not``, ``if``/``then``/``else``, an ``additionalProperties`` schema and a ``false`` schema
    (pi-schema ``coerce.js`` convertUnion/coerceUnion, ``explain.js`` walkUnion): until 6
    December 2026 the simulator took every such argument as given."""
    path = python_extension("unions_probe", _probe("unions", UNIONS_SCHEMA))
    results = _call_each(targets, path, "unions", UNION_CALLS, "u")
    assert not results[0][0]
    assert results[2] == (False, '{"both": "12345", "maybe": 2.5, "size": 3}')
    assert results[5][1].startswith(
        'Validation failed for tool "unions":\n  - shape.kind: expected one of ["circle","square"]\n'
    )
    assert results[7][1].startswith('Validation failed for tool "unions":\n  - either: matches more than one')
    assert sum(1 for error, _ in results if error) >= 12


_KEY_ORDER = """\
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult


async def execute(call_id, params, signal, ctx):
    details = {"b": 1, "5": {"y": 0, "0": 1}}
    return ToolResult(content=[{"type": "text", "text": json.dumps(params)}], details=details)


async def note(args, ctx):
    pi.append_entry("order", {"b": 1, "3": 0, "1": {"y": 0, "0": 1}, "07": 2})
    entries = [e for e in ctx.session_manager.get_entries() if e["type"] in ("custom", "message")]
    seen = [list(e["data"]) for e in entries if e["type"] == "custom"]
    seen += [list(e["message"]["details"]) for e in entries if e["type"] == "message" and e["message"].get("details")]
    ctx.ui.notify(json.dumps(seen), "info")


def extension(api):
    global pi
    pi = api
    api.register_tool(
        ToolDefinition(name="echo", label="echo", description="Echoes.", parameters={"type": "object"}, execute=execute)
    )
    api.register_command("note", note)
"""


def test_keys_that_are_array_indexes_come_first_wherever_pi_parses_json(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """A JavaScript object enumerates its array-index keys first, ascending (ECMA-262
    OrdinaryOwnPropertyKeys): the model's tool-call arguments (``JSON.parse`` in pi-ai), a Python
    extension's entry data and a tool's details (``JSON.parse`` in the bridge) come out so in
    the tool's parameters, Pi's entries and the next request. The simulator kept Python's
    insertion order until 6 December 2026."""
    path = python_extension("key_order_probe", _KEY_ORDER)
    arguments = {"b": 1, "10": 2, "2": {"z": 0, "1": 1}, "-1": 3}
    replies = [
        {"text": "calling", "tool_calls": [{"name": "echo", "arguments": arguments, "id": "k1"}]},
        {"text": "DONE"},
    ]
    real, sim = play(targets, scenario({"agent": replies}), [{"prompt": "go"}, {"command": "/note"}], path)
    assert _results(real) == [(False, '{"2": {"1": 1, "z": 0}, "10": 2, "b": 1, "-1": 3}')]
    assert real.notifications[-1] == ('[["1", "3", "b", "07"], ["5", "b"]]', "info")
    assert _results(sim) == _results(real) and sim.notifications == real.notifications
    second = [json.dumps(r.request.messages) for r in real.requests("agent")][1]
    assert second == [json.dumps(r.request.messages) for r in sim.requests("agent")][1]
    assert_equivalent(real, sim)


#: A probe tool: its parameters are ``SCHEMA_JSON`` and it answers with the arguments it received.
_PROBE = """\
import json

from pi_continuity_harness.api import ToolDefinition, ToolResult

SCHEMA = json.loads(r'''SCHEMA_JSON''')


async def execute(call_id, params, signal, ctx):
    return ToolResult(content=[{"type": "text", "text": json.dumps(params, sort_keys=True)}])


def extension(pi):
    pi.register_tool(
        ToolDefinition(name="TOOL", label="TOOL", description="A probe tool.", parameters=SCHEMA, execute=execute)
    )
"""


def _probe(tool: str, schema: dict[str, Any]) -> str:
    return _PROBE.replace("SCHEMA_JSON", json.dumps(schema)).replace("TOOL", tool)


REF_CALLS: list[dict[str, Any]] = [
    {"at": {"x": "1", "y": 2}, "maybe": None},
    {"at": {"x": 1}},
    {"shape": {"kind": "square", "r": 1}},
    {"shape": {"kind": "hex"}},
    {"maybe": {"x": 1}},
    {"tree": {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}},
    {"tree": {"children": [{}]}},
    {"dangling": 1, "anchor": 1},
    {"self": {"x": 1, "y": "q"}},
    {"at": None},
]


def test_references_into_the_schemas_own_defs_are_followed_as_pi_schema_follows_them(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """pydantic's and TypeBox's ``#/$defs/...`` references (pi-schema ``resolver.js``): converted
    and explained through the target, a tagged union of references by its tag, a recursive
    definition to any depth, and a reference that names nothing refused only where a value is
    (``unresolvedRefs: "reject"``)."""
    path = python_extension("refs_probe", _probe("refs", REFS_SCHEMA))
    results = _call_each(targets, path, "refs", REF_CALLS, "r")
    assert results[0] == (False, '{"at": {"x": 1, "y": 2}, "maybe": null}')
    assert "dangling: unresolved reference #/$defs/Missing" in results[7][1]


MORE_CALLS: list[dict[str, Any]] = [
    {"pair": ["1", 2], "old": ["3", "4"], "bag": [10, 11], "some": ["x"]},
    {"old": [3, 4]},  # an additionalItems schema is checked, never converted (itemSchemaAt)
    {"pair": [1, "a", "extra"]},
    {"bag": [10]},
    {"bag": [10, 11, 12, 13], "some": ["y"]},
    {"env": {"PATH": "x", "home": "y", "TOOLONG": "z", "N": 5, "LIST": [1]}},
    {"one": ["1"]},  # a tuple item converts to its const
    {"one": 1},  # a tuple never wraps a single value
    {"card": {"number": "4"}},
    {"card": {"cvc": "1"}},
]


def test_tuples_contains_pattern_properties_and_dependencies_as_pi_schema_checks_them(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    path = python_extension("more_probe", _probe("refs", MORE_SCHEMA))
    results = _call_each(targets, path, "refs", MORE_CALLS, "m")
    assert results[0] == (False, '{"bag": [10, 11], "old": [3, "4"], "pair": [1, "2"], "some": ["x"]}')
    assert sum(1 for error, _ in results if error) == len(MORE_CALLS) - 2
