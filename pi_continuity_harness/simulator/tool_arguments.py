"""Pi 1.6's check of a tool's arguments (a built-in's or an extension's) before the tool runs.

``prepareToolCall`` (pi-agent-core ``agent-loop.js:478-538``) runs the tool's
``prepareArguments`` (``edit`` has one: :func:`.edit_tool.prepare_edit_arguments`), then
``validateToolArguments`` (pi-ai ``dist/utils/validation.js:49-61``): pi-schema coerces the
arguments, checks them against the tool's JSON Schema, and a failure becomes the error result
``Validation failed for tool "<name>":`` with one ``  - <path>: <message>`` line per problem and
the arguments received, as ``JSON.stringify(arguments, null, 2)`` writes them. The simulator ran
the built-in tools on whatever arguments came (an ``edit`` without ``edits`` overwrote the file).

This is pi-schema's coercion and check (``@earendil-works/pi-schema`` ``dist/coerce.js``,
``dist/explain.js``), keyword by keyword in pi-schema's order:

* types (``string``, ``number``, ``integer``, ``boolean``, ``null``, ``array``, ``object``, or a
  list of them), ``enum`` and ``const`` (objects compared by ``deepEqual``), boolean schemas;
* strings: ``minLength``/``maxLength`` (code points), ``pattern`` (read as JavaScript's ``RegExp``
  with the ``u`` flag reads it, :mod:`.js_regex`; a source it cannot read is left unchecked),
  ``format`` (the 14 formats :mod:`.json_formats` ports; the others are left unchecked);
* numbers: ``minimum``/``maximum``, their exclusive forms, ``multipleOf``;
* objects: ``required``, ``properties``, ``patternProperties``, ``additionalProperties`` (``false``
  or a schema), ``propertyNames``, ``minProperties``/``maxProperties``, ``dependentRequired``
  (and draft-7 ``dependencies``), ``dependentSchemas``;
* arrays: ``items``, tuples (``prefixItems``; a draft-7 ``items`` array with ``additionalItems``),
  ``minItems``/``maxItems``, ``uniqueItems``, ``contains`` with ``minContains``/``maxContains``;
* the combinators TypeBox writes for ``Type.Union``, ``Type.Intersect`` and ``Type.Not``:
  ``anyOf``, ``oneOf``, ``allOf``, ``not``, ``if``/``then``/``else``;
* ``$ref`` into the schema itself (``#/$defs/...``, what pydantic and ``Type.Ref`` write; see
  :class:`_Root`).

The coercion is its three passes: an optional ``null`` is dropped, values are converted to the
declared type (TypeBox's ``Value.Convert``: ``"5"`` to 5, ``5`` to ``"5"``, ``null`` to ``"null"`` or
0, one value to a one-item array, an enum's value from another type, a union's value to the first
branch whose conversion the union accepts), then primitives once more (``coercePrimitive``, for a
list of types; a union's first branch that accepts the coerced value). A failed union is
explained as pi-schema explains it (``walkUnion``, explain.js:263-301): a tagged union by the
branch its tag names, else by the branch that declares most of the object's keys, then the one
whose first error lies deepest. Until 6 December 2026 only the types, ``enum``, ``const``, the
bounds, ``properties``, ``required``, ``additionalProperties: false`` and ``items`` were checked.
Not checked (an argument is taken as given, where Pi may refuse it): ``unevaluatedProperties``,
``unevaluatedItems``, ``$dynamicRef``, and references in a schema with ``$id`` or anchors.
"""

from __future__ import annotations

import json
import math
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote

from pi_continuity_harness.scenario.transcript import js_number
from pi_continuity_harness.simulator.js_regex import js_pattern_test
from pi_continuity_harness.simulator.json_copy import json_copy
from pi_continuity_harness.simulator.json_formats import format_check

__all__ = ["validate_arguments"]


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _js_number_of(text: str) -> float | None:
    """JavaScript's ``+text`` for a string: None where it is NaN or infinite."""
    stripped = text.strip(" \t\n\v\f\r\u00a0\u2028\u2029\ufeff")
    if stripped == "":
        return 0.0
    try:
        if stripped.lower().startswith(("0x", "0o", "0b")):
            return float(int(stripped, 0))
        if stripped.lower() in ("infinity", "+infinity", "-infinity", "nan", "inf", "+inf", "-inf"):
            return None
        number = float(stripped)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _try_string(value: Any) -> tuple[bool, Any]:
    """``tryString`` (coerce.js:441-452)."""
    if isinstance(value, bool):
        return True, "true" if value else "false"
    if _is_finite_number(value):
        return True, js_number(value)
    if value is None:
        return True, "null"
    if isinstance(value, str):
        return True, value
    return False, value


def _try_number(value: Any) -> tuple[bool, Any]:
    """``tryNumber`` (coerce.js:454-475), without bigints (JSON has none)."""
    if isinstance(value, bool):
        return True, 1 if value else 0
    if _is_finite_number(value):
        return True, value
    if value is None:
        return True, 0
    if not isinstance(value, str):
        return False, value
    number = _js_number_of(value)
    if number is not None:
        return True, int(number) if number.is_integer() and abs(number) < 2**53 else number
    lowered = value.lower()
    if lowered in ("false", "true"):
        return True, 1 if lowered == "true" else 0
    return False, value


def _try_boolean(value: Any) -> tuple[bool, Any]:
    """``tryBoolean`` (coerce.js:515-532)."""
    if isinstance(value, bool):
        return True, value
    if _is_finite_number(value):
        return (True, value == 1) if value in (0, 1) else (False, value)
    if value is None:
        return True, False
    if not isinstance(value, str):
        return False, value
    if value.lower() == "false" or value == "0":
        return True, False
    if value.lower() == "true" or value == "1":
        return True, True
    return False, value


def _try_null(value: Any) -> tuple[bool, Any]:
    """``tryNull`` (coerce.js:533-547)."""
    if value is None or value is False or (_is_finite_number(value) and value == 0):
        return True, None
    if isinstance(value, str) and (value.lower() in ("undefined", "null") or value in ("", "0")):
        return True, None
    return False, value


def _same(a: Any, b: Any) -> bool:
    """JavaScript's ``===`` for JSON primitives (``1 === 1.0``, but ``1 === true`` and
    ``"1" === 1`` are false), and pi-schema's ``deepEqual`` (checks.js:550-578) for objects and
    arrays, as its ``enum``, ``const`` and ``uniqueItems`` checks compare: the same keys (in any
    order) and items, each the same by these rules (``{"a": 1}`` is not ``{"a": true}``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if _is_finite_number(a) and _is_finite_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(key in b and _same(item, b[key]) for key, item in a.items())
    return type(a) is type(b) and bool(a == b)


def _is_multiple(value: float, divisor: float) -> bool:
    """``isMultiple`` (checks.js:276-291): the quotient an integer, or else (a finite quotient)
    exactly so in the two numbers' shortest decimal forms (``0.3`` is a multiple of ``0.1``)."""
    if divisor == 0:
        return False  # JavaScript: v / 0 is not finite, and v % 0 is NaN
    quotient = value / divisor
    if math.isfinite(quotient) and float(quotient).is_integer():
        return True
    if not math.isfinite(quotient):
        return math.fmod(value, divisor) == 0
    v_digits, v_exponent = _decimal(value)
    d_digits, d_exponent = _decimal(divisor)
    if v_exponent >= d_exponent:
        return bool((v_digits * 10 ** (v_exponent - d_exponent)) % d_digits == 0)
    return bool(v_digits % (d_digits * 10 ** (d_exponent - v_exponent)) == 0)


def _decimal(number: float) -> tuple[int, int]:
    """``decimal`` (checks.js:292-297): the digits and exponent of ``Math.abs(x).toString()``."""
    mantissa, _, exponent = js_number(abs(number)).partition("e")
    point = mantissa.find(".")
    fraction = 0 if point < 0 else len(mantissa) - point - 1
    return int(mantissa.replace(".", "")), int(exponent or "0") - fraction


def _convert_literal(literal: Any, value: Any) -> Any:
    """``convertLiteral`` (coerce.js:427-440): a value of another type that converts to exactly the literal."""
    if _same(literal, value):
        return value
    if isinstance(literal, bool):
        ok, out = _try_boolean(value)
    elif isinstance(literal, str):
        ok, out = _try_string(value)
    elif _is_finite_number(literal):
        ok, out = _try_number(value)
    else:
        return value
    return out if ok and _same(out, literal) else value


#: A keyword that is not there (JavaScript ``undefined``).
_ABSENT: Any = object()


def _item_schema_at(schema: dict[str, Any], index: int) -> Any:
    """``itemSchemaAt`` (coerce.js:401-412): a tuple's item schema (``prefixItems``, or a draft-7
    ``items`` array) for its prefix, ``items`` after ``prefixItems`` or for every item;
    :data:`_ABSENT` when nothing applies."""
    items = schema.get("items", _ABSENT)
    if isinstance(items, list):
        return items[index] if index < len(items) else _ABSENT
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return items


def _key_patterns(schema: dict[str, Any], key: str) -> tuple[list[Any], bool]:
    """The ``patternProperties`` schemas whose pattern matches ``key`` (JavaScript's reading,
    :mod:`.js_regex`), and whether every pattern could be read (False: the key's fate is unknown
    here, and what depends on it is left unchecked)."""
    patterns = schema.get("patternProperties")
    if not isinstance(patterns, dict):
        return [], True
    matching: list[Any] = []
    known = True
    for source, item in patterns.items():
        found = js_pattern_test(source, key)
        if found is None:
            known = False
        elif found:
            matching.append(item)
    return matching, known


def _convert(schema: Any, value: Any) -> Any:
    """Pass 2, ``convertNode`` (coerce.js:181-230): ``const``, ``enum``, the unions, ``allOf``,
    then ``type``."""
    if not isinstance(schema, dict):
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        # coerce.js:168-179: the target's conversion alone (the node's other keywords are not
        # converted), re-entered at most once with the same value (``reenter``).
        target = _ref_target(ref)
        return _reenter(target, value) if isinstance(target, dict) else value
    if "const" in schema:
        return _convert_literal(schema["const"], value)
    if isinstance(schema.get("enum"), list):
        members = schema["enum"]
        if any(_same(m, value) for m in members):
            return value
        for member in members:
            candidate = _convert_literal(member, value)
            if candidate is not value and not _problems(schema, candidate):
                return candidate
        return value
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            return _convert_union(schema, schema[union], value)
    if isinstance(schema.get("allOf"), list):
        for member in schema["allOf"]:
            value = _convert(member, value)
        return _convert_members(schema, value)
    kind = schema.get("type")
    if kind == "string":
        return _try_string(value)[1]
    if kind == "number":
        return _try_number(value)[1]
    if kind == "integer":
        ok, number = _try_number(value)
        return math.trunc(number) if ok else value
    if kind == "boolean":
        return _try_boolean(value)[1]
    if kind == "null":
        return _try_null(value)[1]
    if kind == "array" or (kind is None and ("items" in schema or "prefixItems" in schema)):
        return _convert_array(schema, value)
    if kind == "object" or (kind is None and ("properties" in schema or "patternProperties" in schema)):
        return _convert_object(schema, value)
    return value


def _convert_array(schema: dict[str, Any], value: Any) -> Any:
    """``convertArray`` (coerce.js:265-286): a tuple (``prefixItems``, an ``items`` array)
    converts its items and never wraps a single value; otherwise each item by ``items``, and a
    single value becomes a one-item array."""
    items = schema.get("items", _ABSENT)
    if isinstance(items, list) or isinstance(schema.get("prefixItems"), list):
        if not isinstance(value, list):
            return value
        converted = []
        for index, item in enumerate(value):
            item_schema = _item_schema_at(schema, index)
            converted.append(item if item_schema is _ABSENT else _convert(item_schema, item))
        return converted
    if isinstance(value, list):
        return value if items is _ABSENT else [_convert(items, v) for v in value]
    return [_convert(items, value) if isinstance(items, dict) else value]


def _convert_object(schema: dict[str, Any], value: Any) -> Any:
    """``convertObject`` (coerce.js:287-319): each key by its ``properties`` schema, then every
    ``patternProperties`` schema whose pattern matches it, else an ``additionalProperties``
    schema."""
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    out = {}
    for key, item in value.items():
        matched = key in properties
        converted = _convert(properties[key], item) if matched else item
        for pattern_schema in _key_patterns(schema, key)[0]:
            matched = True
            converted = _convert(pattern_schema, converted)
        if not matched and isinstance(additional, dict):
            converted = _convert(additional, converted)
        out[key] = converted
    return out


def _convert_members(schema: dict[str, Any], value: Any) -> Any:
    """``convertMembers`` (coerce.js:258-264): the object members a union or intersection node
    declares beside its branches (plain JSON Schema; TypeBox's never do)."""
    declares = "properties" in schema or "patternProperties" in schema or "additionalProperties" in schema
    return _convert_object(schema, value) if declares else value


def _convert_union(schema: dict[str, Any], branches: list[Any], value: Any) -> Any:
    """``convertUnion`` (coerce.js:242-257): a value a branch accepts stays; else the first
    branch's conversion the whole union accepts; else the value as it was."""
    if any(_ok(branch, value) for branch in branches):
        return _convert_members(schema, value)
    for branch in branches:
        candidate = _convert_members(schema, _convert(branch, value))
        if _ok(schema, candidate):
            return candidate
    return _convert_members(schema, value)


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []


def _coerce_primitive(value: Any, kind: str) -> Any:
    """``coercePrimitive`` (coerce.js:586-620)."""
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, str) and value.strip():
            number = _js_number_of(value)
            if number is not None and (kind == "number" or number.is_integer()):
                return int(number) if number.is_integer() and abs(number) < 2**53 else number
        if isinstance(value, bool):
            return 1 if value else 0
        return value
    if kind == "boolean":
        if value is None:
            return False
        if value == "true" or (value == 1 and not isinstance(value, bool)):
            return True
        if value == "false" or (value == 0 and not isinstance(value, bool)):
            return False
        return value
    if kind == "string":
        if value is None:
            return ""
        if isinstance(value, bool) or _is_finite_number(value):
            return _try_string(value)[1]
        return value
    if kind == "null":
        return None if (value in ("", 0) and not isinstance(value, bool)) or value is False else value
    return value


def _coerce_types(schema: Any, value: Any) -> Any:
    """Pass 3, ``coerceTypes`` (coerce.js:323-351): ``allOf``'s members and a union's first
    branch that accepts the coerced value (``coerceUnion``, :352-362), then the first of the
    declared types a primitive converts to (unless it already is one of several), then the
    members."""
    if not isinstance(schema, dict):
        return value
    if isinstance(schema.get("allOf"), list):
        for member in schema["allOf"]:
            value = _coerce_types(member, value)
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            value = _coerce_union(schema[union], value)
    types = _types(schema)
    if types and not (len(types) > 1 and any(_matches(k, value) for k in types)):
        for kind in types:
            candidate = _coerce_primitive(value, kind)
            if candidate is not value:  # (``_coerce_primitive`` hands back what it leaves)
                value = candidate
                break
    if "object" in types and isinstance(value, dict):
        value = _coerce_properties(schema, value)
    if "array" in types and isinstance(value, list):
        coerced = []
        for index, item in enumerate(value):
            item_schema = _item_schema_at(schema, index)
            coerced.append(_coerce_types(item_schema, item) if isinstance(item_schema, dict) else item)
        value = coerced
    return value


def _coerce_properties(schema: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """``coerceProperties`` (coerce.js:363-390): the declared properties first, then each key's
    matching ``patternProperties`` schemas, else an ``additionalProperties`` schema."""
    declared = schema.get("properties")
    properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
    additional = schema.get("additionalProperties")
    out = dict(value)
    for key, prop in properties.items():
        if key in value:
            out[key] = _coerce_types(prop, value[key])
    for key, item in value.items():
        matched = key in properties
        for pattern_schema in _key_patterns(schema, key)[0]:
            matched = True
            out[key] = _coerce_types(pattern_schema, out[key])
        if not matched and isinstance(additional, dict):
            out[key] = _coerce_types(additional, item)
    return out


def _coerce_union(branches: list[Any], value: Any) -> Any:
    if any(_ok(branch, value) for branch in branches):
        return value
    for branch in branches:
        coerced = _coerce_types(branch, value)
        if _ok(branch, coerced):
            return coerced
    return value


def _drop_optional_nulls(schema: Any, value: Any) -> Any:
    """Pass 1, ``dropOptionalNulls`` (coerce.js:103-150): a ``null`` in an optional property
    whose schema refuses ``null`` is dropped, as if the model had left it out."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, list):
        dropped = []
        for index, item in enumerate(value):
            item_schema = _item_schema_at(schema, index)
            dropped.append(item if item_schema is _ABSENT else _drop_optional_nulls(item_schema, item))
        return dropped
    properties = schema.get("properties")
    patterns = schema.get("patternProperties")
    additional = schema.get("additionalProperties")
    if not isinstance(value, dict) or not (
        isinstance(properties, dict) or isinstance(patterns, dict) or isinstance(additional, dict)
    ):
        return value
    properties = properties if isinstance(properties, dict) else {}
    required = set(schema.get("required") or [])
    out = dict(value)
    for key, prop in properties.items():
        if key not in out:
            continue
        is_ref = isinstance(prop, dict) and isinstance(prop.get("$ref"), str)
        if out[key] is None and key not in required and not is_ref and _problems(prop, None):
            del out[key]
            continue
        out[key] = _drop_optional_nulls(prop, out[key])
    # Values of pattern and additional properties are walked for their own optional nulls; the
    # keys themselves are not optional properties, so they stay (coerce.js:140-149).
    if isinstance(patterns, dict) or isinstance(additional, dict):
        for key in value:
            matched = key in properties
            if key not in out:
                continue  # a declared property dropped above
            for pattern_schema in _key_patterns(schema, key)[0]:
                matched = True
                out[key] = _drop_optional_nulls(pattern_schema, out[key])
            if not matched and isinstance(additional, dict):
                out[key] = _drop_optional_nulls(additional, value[key])
    return out


def _type_name(value: Any) -> str:
    """``typeName`` (explain.js:377-391)."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _matches(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return _is_finite_number(value)
    if kind == "integer":
        return _is_finite_number(value) and float(value).is_integer()
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _bound(value: Any) -> bool:
    return _is_finite_number(value)


def _explain(schema: Any, value: Any, path: str, out: list[tuple[str, str]]) -> None:
    """``walk`` (explain.js:36-102): a boolean schema; a type error ends the node; then ``enum``,
    ``const``, the string, number, object (missing required fields, then each property's
    problems in the schema's order, then unknown fields) and array checks, ``allOf``'s members,
    the unions (:func:`_explain_union`), ``not`` and ``if``/``then``/``else``."""
    if schema is True:
        return
    if schema is False:
        out.append((path, "no value is allowed here"))
        return
    if not isinstance(schema, dict):
        return
    types = _types(schema)
    if types and not any(_matches(k, value) for k in types):
        out.append((path, f"expected {' or '.join(types)}, got {_type_name(value)}"))
        return
    if isinstance(schema.get("enum"), list) and not any(_same(m, value) for m in schema["enum"]):
        out.append((path, f"expected one of {_list_values(schema['enum'])}"))
    if "const" in schema and not _same(schema["const"], value):
        out.append((path, f"expected {_js_json(schema['const'])}"))
    if isinstance(value, str):
        length = len(value)
        if _bound(schema.get("minLength")) and length < schema["minLength"]:
            out.append((path, f"expected at least {js_number(schema['minLength'])} characters"))
        if _bound(schema.get("maxLength")) and length > schema["maxLength"]:
            out.append((path, f"expected at most {js_number(schema['maxLength'])} characters"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and js_pattern_test(pattern, value) is False:
            out.append((path, f"expected to match {pattern}"))
        name = schema.get("format")
        if isinstance(name, str) and format_check(name, value) is False:
            out.append((path, f"expected format {name}"))
    if _is_finite_number(value):
        # walkNumber (explain.js:150-161), in its order.
        bounds: list[Any] = [
            schema.get(k) for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        ]
        failed = [
            _bound(bounds[0]) and value < bounds[0],
            _bound(bounds[1]) and value > bounds[1],
            _bound(bounds[2]) and value <= bounds[2],
            _bound(bounds[3]) and value >= bounds[3],
        ]
        for bound, word, fails in zip(bounds, (">=", "<=", ">", "<"), failed, strict=True):
            if fails:
                out.append((path, f"expected {word} {js_number(bound)}"))
        multiple: Any = schema.get("multipleOf")
        if _bound(multiple) and not _is_multiple(value, multiple):
            out.append((path, f"expected a multiple of {js_number(multiple)}"))
    if isinstance(value, dict):
        _explain_object(schema, value, path, out)
    if isinstance(value, list):
        # walkArray (explain.js:230-262): a tuple's prefix, then the rest.
        items = schema.get("items", _ABSENT)
        if isinstance(items, list):
            prefix, rest = items, schema.get("additionalItems", _ABSENT)
        else:
            prefix_items = schema.get("prefixItems")
            prefix, rest = (prefix_items if isinstance(prefix_items, list) else []), items
        for i, item in enumerate(value):
            item_schema = prefix[i] if i < len(prefix) else rest
            if item_schema is not _ABSENT:
                _explain(item_schema, item, f"{path}/{i}", out)
        if _bound(schema.get("minItems")) and len(value) < schema["minItems"]:
            out.append((path, f"expected at least {js_number(schema['minItems'])} items"))
        if _bound(schema.get("maxItems")) and len(value) > schema["maxItems"]:
            out.append((path, f"expected at most {js_number(schema['maxItems'])} items"))
        if schema.get("uniqueItems") is True and any(
            _same(value[i], value[j]) for i in range(1, len(value)) for j in range(i)
        ):
            out.append((path, "expected unique items"))
        if "contains" in schema:
            least: Any = schema["minContains"] if _bound(schema.get("minContains")) else 1
            most: Any = schema["maxContains"] if _bound(schema.get("maxContains")) else math.inf
            count = sum(1 for item in value if _ok(schema["contains"], item))
            if not least <= count <= most:
                out.append((path, _contains_message(least, most)))
    if isinstance(schema.get("allOf"), list):
        for member in schema["allOf"]:
            _explain(member, value, path, out)
    if isinstance(schema.get("anyOf"), list):
        _explain_union(schema["anyOf"], value, path, out, exactly_one=False)
    if isinstance(schema.get("oneOf"), list):
        _explain_union(schema["oneOf"], value, path, out, exactly_one=True)
    if "not" in schema and _ok(schema["not"], value):
        out.append((path, "must not match the schema in not"))
    if "if" in schema:
        branch = schema.get("then") if _ok(schema["if"], value) else schema.get("else")
        if branch is not None:
            _explain(branch, value, path, out)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        _explain_ref(ref, value, path, out)


def _explain_object(
    schema: dict[str, Any], value: dict[str, Any], path: str, out: list[tuple[str, str]]
) -> None:
    """``walkObject`` (explain.js:169-229): missing required keys, each declared property, then
    per key its ``patternProperties`` schemas, else ``additionalProperties`` (``false``: unknown
    field), and ``propertyNames``; the counts; ``dependentRequired``/``dependencies`` and
    ``dependentSchemas``. A key whose fate a pattern cannot tell here (:func:`_key_patterns`) is
    not judged by ``additionalProperties``."""
    declared = schema.get("properties")
    properties: dict[str, Any] = declared if isinstance(declared, dict) else {}
    for key in schema.get("required") or []:
        if isinstance(key, str) and key not in value:
            out.append((_pointer(path, key), "missing"))
    for key, prop in properties.items():
        if key in value:
            _explain(prop, value[key], _pointer(path, key), out)
    additional = schema.get("additionalProperties", _ABSENT)
    names = schema.get("propertyNames", _ABSENT)
    for key, item in value.items():
        matched = key in properties
        patterns, known = _key_patterns(schema, key)
        for pattern_schema in patterns:
            matched = True
            _explain(pattern_schema, item, _pointer(path, key), out)
        if not matched and known and additional is not _ABSENT:
            if additional is False:
                out.append((_pointer(path, key), "unknown field"))
            else:
                _explain(additional, item, _pointer(path, key), out)
        if names is not _ABSENT and not _ok(names, key):
            out.append((_pointer(path, key), "invalid property name"))
    if _bound(schema.get("minProperties")) and len(value) < schema["minProperties"]:
        out.append((path, f"expected at least {js_number(schema['minProperties'])} properties"))
    if _bound(schema.get("maxProperties")) and len(value) > schema["maxProperties"]:
        out.append((path, f"expected at most {js_number(schema['maxProperties'])} properties"))
    dependencies: dict[str, Any] = {}
    for keyword in ("dependentRequired", "dependencies"):
        if isinstance(schema.get(keyword), dict):
            dependencies.update(schema[keyword])
    for key, dependency in dependencies.items():
        if key not in value:
            continue
        if not isinstance(dependency, list):
            _explain(dependency, value, path, out)
            continue
        for required in dependency:
            if isinstance(required, str) and required not in value:
                out.append((_pointer(path, required), f"required when {key} is present"))
    if isinstance(schema.get("dependentSchemas"), dict):
        for key, dependent in schema["dependentSchemas"].items():
            if key in value:
                _explain(dependent, value, path, out)


def _contains_message(least: Any, most: Any) -> str:
    """``containsMessage`` (explain.js:364-370)."""
    if most == math.inf:
        return f"expected at least {js_number(least)} matching {'item' if least == 1 else 'items'}"
    if least == 0:
        return f"expected at most {js_number(most)} matching {'item' if most == 1 else 'items'}"
    return f"expected between {js_number(least)} and {js_number(most)} matching items"


#: A ``const`` that is not there (JavaScript ``undefined``), as opposed to a JSON ``null``.
_NO_CONST: Any = object()


def _explain_union(
    branches: list[Any], value: Any, path: str, out: list[tuple[str, str]], *, exactly_one: bool
) -> None:
    """``walkUnion`` (explain.js:263-301): nothing when the union holds; ``oneOf`` matched twice
    says so; a tagged union (:func:`_tag_of`) is explained by the branch its tag names (or the
    tag's values when it names none); otherwise by the branch that declares most of an object's
    keys, then the branch whose first error's path is longest (JavaScript string length), the
    first among equals; ``matches no alternative`` when no branch explains itself."""
    matches = sum(1 for branch in branches if _ok(branch, value))
    if matches == 1 or (not exactly_one and matches > 0):
        return
    if matches > 1:
        out.append((path, "matches more than one alternative"))
        return
    tag = _tag_of(branches)
    if tag is not None and isinstance(value, dict):
        key, values = tag
        index = next(
            (i for i, v in enumerate(values) if key in value and _same(v, value[key])),
            -1,
        )
        if index < 0:
            out.append((_pointer(path, key), f"expected one of {_list_values(values)}"))
        else:
            _explain(branches[index], value, path, out)
        return
    best: tuple[list[tuple[str, str]], int] | None = None
    for branch in branches:
        errors: list[tuple[str, str]] = []
        _explain(branch, value, path, errors)
        if not errors:
            continue
        declared = _declared_keys(branch, value) if isinstance(value, dict) else 0
        if (
            best is None
            or declared > best[1]
            or (declared == best[1] and _js_length(errors[0][0]) > _js_length(best[0][0][0]))
        ):
            best = (errors, declared)
    out.extend(best[0] if best is not None else [(path, "matches no alternative")])


def _tag_of(branches: list[Any]) -> tuple[str, list[Any]] | None:
    """``tagOf`` (explain.js:309-323): the first property of the first branch whose ``const`` is,
    in every branch, a distinct primitive (JSON ``null`` included)."""
    branches = [_deref(branch) for branch in branches]
    first = branches[0] if branches else None
    if not isinstance(first, dict) or not isinstance(first.get("properties"), dict):
        return None
    for key in first["properties"]:
        values = []
        for branch in branches:
            properties = branch.get("properties") if isinstance(branch, dict) else None
            tag = properties.get(key) if isinstance(properties, dict) else None
            values.append(tag.get("const", _NO_CONST) if isinstance(tag, dict) else _NO_CONST)
        primitive = all(v is not _NO_CONST and not isinstance(v, (dict, list)) for v in values)
        distinct = all(not _same(a, b) for i, a in enumerate(values) for b in values[i + 1 :])
        if primitive and distinct:
            return key, values
    return None


def _declared_keys(branch: Any, value: dict[str, Any]) -> int:
    """``declaredKeys`` (explain.js:303-308): how many of the object's keys the branch declares
    (through a ``$ref``)."""
    branch = _deref(branch)
    properties = branch.get("properties") if isinstance(branch, dict) else None
    return sum(1 for key in value if key in properties) if isinstance(properties, dict) else 0


class _Root:
    """The schema a validation started from: what ``#`` and ``#/...`` references name.

    Only a schema without identifiers is resolved (no ``$id``, ``$anchor``, ``$dynamicAnchor``,
    ``$dynamicRef`` or ``$recursiveRef`` anywhere: what TypeBox's ``Type.Ref``/``Type.Module`` and
    pydantic's ``model_json_schema()`` write, ``#/$defs/Name``). There every reference resolves
    against the root document (pi-schema ``resolver.js``: the base ``root.json`` with no ``$id``),
    ``#`` and ``#/pointer`` by the pointer, and any other ``#name`` names nothing (no anchors).
    Other schemas, and references with a document part, are not resolved: left unchecked."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.plain = _plain(schema)
        #: The (node, value) pairs a conversion is inside (``reenter``), and an explanation.
        self.converting: list[tuple[Any, Any]] = []
        self.explaining: list[tuple[Any, Any]] = []


_ROOT: ContextVar[_Root | None] = ContextVar("tool_arguments_root", default=None)
#: What :func:`_ref_target` gives for a reference it does not resolve (left unchecked).
_UNCHECKED: Any = object()
#: What it gives for one that names nothing: pi-ai compiles with ``unresolvedRefs: "reject"``, so
#: only values at its place fail (``unresolved reference <ref>``, explain.js:103-108).
_UNRESOLVED: Any = object()
_IDENTIFIERS = frozenset(
    {"$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor"}
)


#: :func:`_has_identifiers` of the schemas validated lately, by identity (each entry holds its
#: schema, so an id is not reused while it is here): a tool's schema lives as long as the tool,
#: and scanning it at every call was a fifth of validating a blitz handoff tool call. pi-ai keeps
#: its compiled validator per schema object the same way (``validation.js:3-15``, a WeakMap).
_PLAIN: dict[int, tuple[Any, bool]] = {}
_PLAIN_LIMIT = 64


def _plain(schema: Any) -> bool:
    known = _PLAIN.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    if len(_PLAIN) >= _PLAIN_LIMIT:
        _PLAIN.clear()
    plain = not _has_identifiers(schema)
    _PLAIN[id(schema)] = (schema, plain)
    return plain


def _has_identifiers(node: Any) -> bool:
    if isinstance(node, dict):
        return any(key in _IDENTIFIERS for key in node) or any(_has_identifiers(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_identifiers(v) for v in node)
    return False


def _ref_target(ref: str) -> Any:
    """``Resolver.resolve`` (resolver.js:69-81, :158-173) for a plain root (:class:`_Root`): the
    node, :data:`_UNRESOLVED`, or :data:`_UNCHECKED`."""
    root = _ROOT.get()
    if root is None or not root.plain or not (ref == "" or ref.startswith("#")):
        return _UNCHECKED
    fragment = unquote(ref[1:])
    if fragment == "":
        return root.schema
    if not fragment.startswith("/"):
        return _UNRESOLVED  # an anchor, and the schema has none
    node = root.schema
    for raw in fragment.split("/")[1:]:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif (
            isinstance(node, list)
            and key.isdecimal()
            and key.isascii()
            and str(int(key)) == key
            and int(key) < len(node)
        ):
            node = node[int(key)]
        else:
            return _UNRESOLVED
    return node


def _deref(schema: Any) -> Any:
    """A union branch through its ``$ref`` (explain.js:303-323): the target, ``False`` when it
    names nothing, the branch itself when it is not resolved here."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        target = _ref_target(schema["$ref"])
        return False if target is _UNRESOLVED else schema if target is _UNCHECKED else target
    return schema


def _entered(entered: list[tuple[Any, Any]], node: Any, value: Any) -> bool:
    return any(n is node and (v is value or _same(v, value)) for n, v in entered)


def _reenter(node: dict[str, Any], value: Any) -> Any:
    """``reenter`` (coerce.js:61-92): a node's conversion, cut where it re-enters itself with
    the same value (a reference cycle)."""
    root = _ROOT.get()
    if root is None or _entered(root.converting, node, value):
        return value
    root.converting.append((node, value))
    try:
        return _convert(node, value)
    finally:
        root.converting.pop()


def _explain_ref(ref: str, value: Any, path: str, out: list[tuple[str, str]]) -> None:
    """``walkRef`` (explain.js:103-128): the target's problems; ``unresolved reference`` for a
    reference that names nothing; nothing where it is not resolved here, or re-entered with the
    same value (a cycle that consumes nothing)."""
    target = _ref_target(ref)
    if target is _UNRESOLVED:
        out.append((path, f"unresolved reference {ref}"))
        return
    root = _ROOT.get()
    if target is _UNCHECKED or root is None or _entered(root.explaining, target, value):
        return
    root.explaining.append((target, value))
    try:
        _explain(target, value, path, out)
    finally:
        root.explaining.pop()


def _js_length(text: str) -> int:
    """``text.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _pointer(path: str, key: str) -> str:
    """``pointer`` (explain.js:374-376): a JSON Pointer step, ``~`` and ``/`` escaped."""
    return f"{path}/{key.replace('~', '~0').replace('/', '~1')}"


def _ok(schema: Any, value: Any) -> bool:
    """pi-schema's check of ``value`` (the compiled ``check``): here, that it has no problems."""
    return not _problems(schema, value)


def _problems(schema: Any, value: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    _explain(schema, value, "", out)
    return out


def _js_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _list_values(values: list[Any]) -> str:
    """``listValues`` (explain.js:356-363): JSON, the first 20 and a count of the rest."""
    if len(values) <= 20:
        return _js_json(values)
    return f"{_js_json(values[:20])[:-1]}, ... and {len(values) - 20} more]"


def _dotted(pointer: str) -> str:
    """``formatValidationPath`` (validation.js:17-25)."""
    if pointer == "":
        return "root"
    return ".".join(part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/"))


def validate_arguments(name: str, schema: dict[str, Any], args: Any) -> tuple[Any, str | None]:
    """The coerced arguments, and None; or the arguments and Pi's error text when they fail."""
    token = _ROOT.set(_Root(schema))
    try:
        coerced = _coerce_types(schema, _convert(schema, _drop_optional_nulls(schema, json_copy(args))))
        problems = _problems(schema, coerced)
    finally:
        _ROOT.reset(token)
    if not problems:
        return coerced, None
    lines = "\n".join(f"  - {_dotted(path)}: {message}" for path, message in problems)
    received = json.dumps(args, indent=2, ensure_ascii=False)
    return args, f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{received}'
