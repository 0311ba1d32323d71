"""The tool schemas whose arguments both targets check (pi-schema's keywords), shared by the
simulator's Node-free test (``test_tool_argument_unions.py``, real Pi's answers pinned) and the
real-Pi differential test (``tests/realpi/test_differential_tool_arguments.py``)."""

from __future__ import annotations

from typing import Any

CIRCLE = {
    "type": "object",
    "required": ["kind", "r"],
    "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
}
SQUARE = {
    "type": "object",
    "required": ["kind", "w"],
    "properties": {"kind": {"const": "square"}, "w": {"type": "number"}},
}
PAIR = {
    "type": "object",
    "required": ["a", "b"],
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
}
UNIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "choice": {"anyOf": [{"const": "a"}, {"const": "b"}]},
        "size": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["small", "large"]}]},
        "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "shape": {"oneOf": [CIRCLE, SQUARE]},
        "either": {"oneOf": [{"type": "number", "minimum": 0}, {"type": "integer"}]},
        "both": {"allOf": [{"type": "string"}, {"minLength": 3}]},
        "nonempty": {"type": "string", "not": {"const": ""}},
        "cond": {
            "type": "object",
            "if": {"properties": {"unit": {"const": "px"}}, "required": ["unit"]},
            "then": {"required": ["value"]},
            "else": {"required": ["name"]},
        },
        "untagged": {
            "anyOf": [PAIR, {"type": "object", "properties": {"c": {"type": "string"}}, "required": ["c"]}]
        },
        "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        "multi": {"anyOf": [{"type": ["integer", "boolean"]}, {"type": "null"}]},
        "step": {"type": "number", "multipleOf": 0.1},
        "few": {"type": "object", "minProperties": 1, "maxProperties": 2},
        "set": {"type": "array", "uniqueItems": True},
        "obj_enum": {"enum": [{"a": 1}, [1, 2]]},
        "code": {"type": "string", "pattern": "^[a-z]+-\\d+$"},
        "line": {"type": "string", "pattern": "^a.$"},
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string", "format": "uri"},
        "host": {"type": "string", "format": "hostname"},
        "never": False,
        "odd~key/x": {"type": "integer"},
    },
}


#: A schema as pydantic's ``model_json_schema()`` writes one.
REFS_SCHEMA: dict[str, Any] = {
    "$defs": {
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        },
        "Circle": CIRCLE,
        "Square": SQUARE,
        "Tree": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            },
            "required": ["name"],
        },
    },
    "type": "object",
    "properties": {
        "at": {"$ref": "#/$defs/Point"},
        "shape": {"oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]},
        "maybe": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "default": None},
        "tree": {"$ref": "#/$defs/Tree"},
        "dangling": {"$ref": "#/$defs/Missing"},
        "anchor": {"$ref": "#nowhere"},
        "self": {"$ref": "#/properties/at"},
    },
}


#: Tuples, ``contains``, ``patternProperties``, ``propertyNames`` and the dependencies
MORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        "old": {"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        "bag": {
            "type": "array",
            "contains": {"type": "integer", "minimum": 10},
            "minContains": 2,
            "maxContains": 3,
        },
        "some": {"type": "array", "contains": {"const": "x"}},
        "one": {"type": "array", "prefixItems": [{"const": 1}]},
        "env": {
            "type": "object",
            "patternProperties": {"^[A-Z_]+$": {"type": "string"}},
            "additionalProperties": False,
            "propertyNames": {"maxLength": 5},
        },
        "card": {
            "type": "object",
            "properties": {"number": {"type": "string"}, "cvc": {"type": "string"}},
            "dependentRequired": {"number": ["cvc"]},
            "dependentSchemas": {"cvc": {"required": ["number"]}},
        },
    },
}
