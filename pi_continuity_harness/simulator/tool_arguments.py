"""Pi 1.6's check of a built-in tool's arguments before the tool runs.

``prepareToolCall`` (pi-agent-core ``agent-loop.js:478-538``) runs the tool's
``prepareArguments`` (``edit`` has one: :func:`.edit_tool.prepare_edit_arguments`), then
``validateToolArguments`` (pi-ai ``dist/utils/validation.js:49-61``): pi-schema coerces the
arguments, checks them against the tool's JSON Schema, and a failure becomes the error result
``Validation failed for tool "<name>":`` with one ``  - <path>: <message>`` line per problem and
the arguments received, as ``JSON.stringify(arguments, null, 2)`` writes them. The simulator ran
the built-in tools on whatever arguments came (an ``edit`` without ``edits`` overwrote the file).

This is pi-schema's coercion and check (``@earendil-works/pi-schema`` ``dist/coerce.js``,
``dist/explain.js``) for the keywords the built-in tools' schemas use: ``type`` (``string``,
``number``, ``array``, ``object``), ``properties``, ``required`` and ``items``. The coercion is
its three passes: an optional ``null`` is dropped, values are converted to the declared type
(TypeBox's ``Value.Convert``: ``"5"`` to 5, ``5`` to ``"5"``, ``null`` to ``"null"`` or 0, one
value to a one-item array), then primitives once more (``coercePrimitive``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pi_continuity_harness.scenario.transcript import js_number

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


def _convert(schema: dict[str, Any], value: Any) -> Any:
    """Pass 2, ``convertNode`` (coerce.js:168-212) for the ``type`` keyword."""
    kind = schema.get("type")
    if kind == "string":
        return _try_string(value)[1]
    if kind == "number":
        return _try_number(value)[1]
    if kind == "array":
        items = schema.get("items")
        if isinstance(value, list):
            return value if not isinstance(items, dict) else [_convert(items, v) for v in value]
        return [_convert(items, value) if isinstance(items, dict) else value]
    if kind == "object" or (kind is None and "properties" in schema):
        if not isinstance(value, dict):
            return value
        properties = schema.get("properties") or {}
        return {k: _convert(properties[k], v) if k in properties else v for k, v in value.items()}
    return value


def _drop_optional_nulls(schema: dict[str, Any], value: Any) -> Any:
    """Pass 1, ``dropOptionalNulls`` (coerce.js:103-150): a ``null`` in an optional property
    whose schema refuses ``null`` is dropped, as if the model had left it out."""
    if isinstance(value, list):
        items = schema.get("items")
        return [_drop_optional_nulls(items, v) for v in value] if isinstance(items, dict) else value
    if not isinstance(value, dict) or not isinstance(schema.get("properties"), dict):
        return value
    required = set(schema.get("required") or [])
    out = dict(value)
    for key, prop in schema["properties"].items():
        if key not in out:
            continue
        if out[key] is None and key not in required and prop.get("type") != "null":
            del out[key]
            continue
        out[key] = _drop_optional_nulls(prop, out[key])
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
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _explain(schema: dict[str, Any], value: Any, path: str, out: list[tuple[str, str]]) -> None:
    """``walk`` (explain.js:36-100): a type error ends the node; an object lists its missing
    required fields, then its properties' problems in the schema's order."""
    kind = schema.get("type")
    if isinstance(kind, str) and not _matches(kind, value):
        out.append((path, f"expected {kind}, got {_type_name(value)}"))
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key in schema.get("required") or []:
            if key not in value:
                out.append((f"{path}/{key}", "missing"))
        for key, prop in properties.items():
            if key in value:
                _explain(prop, value[key], f"{path}/{key}", out)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _explain(schema["items"], item, f"{path}/{i}", out)


def _dotted(pointer: str) -> str:
    """``formatValidationPath`` (validation.js:17-25)."""
    if pointer == "":
        return "root"
    return ".".join(part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/"))


def validate_arguments(name: str, schema: dict[str, Any], args: Any) -> tuple[Any, str | None]:
    """The coerced arguments, and None; or the arguments and Pi's error text when they fail."""
    coerced = _convert(schema, _drop_optional_nulls(schema, json.loads(json.dumps(args))))
    problems: list[tuple[str, str]] = []
    _explain(schema, coerced, "", problems)
    if not problems:
        return coerced, None
    lines = "\n".join(f"  - {_dotted(path)}: {message}" for path, message in problems)
    received = json.dumps(args, indent=2, ensure_ascii=False)
    return args, f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{received}'
