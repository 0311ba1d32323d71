"""Schema-v2 frontmatter of a Continuity Brief (spec §8): model, bytes, parsing, schema.

The serialized Brief is hashed and handed to Pi verbatim as the compaction summary, so
its bytes must be a pure function of (frontmatter, body): fixed key order, every string
double-quoted with JSON escapes, plain integers, ``null``. Parsing is strict and names the
offending field, because a Brief that cannot be trusted must be refused, not repaired.
"""

from __future__ import annotations

import functools
import json
import math
import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from pi_continuity_harness.reference.psc.constants import (
    ARTIFACT_KIND,
    ARTIFACT_NAME,
    LEGACY_ARTIFACT_KIND,
    OPERATION_NAME,
    PRODUCT_NAME,
    SCHEMA_VERSION,
)

__all__ = [
    "FRONTMATTER_KEYS",
    "BriefParseError",
    "BriefStatus",
    "ContinuityBriefFrontmatter",
    "HandoffReason",
    "LegacyBriefError",
    "ParsedBrief",
    "RecordedEffort",
    "build_frontmatter",
    "frontmatter_json_schema",
    "normalize_body",
    "parse_brief",
    "render_frontmatter_json_schema",
    "serialize_brief",
    "with_status",
]

BriefStatus = Literal["pending", "archived", "failed"]
HandoffReason = Literal["checkpoint", "threshold", "overflow", "manual-compaction"]
#: Config effort labels plus the Pi thinking levels "off"/"max" an "inherit" can resolve to.
#: ``synthesisEffort`` as recorded: the configured label, one of the spec's six (§6).
RecordedEffort = Literal["inherit", "minimal", "low", "medium", "high", "xhigh"]

_Count = Annotated[int, Field(ge=0)]
_Percent = Annotated[float, Field(allow_inf_nan=False)]
_Id = Annotated[str, Field(min_length=1)]


class ContinuityBriefFrontmatter(BaseModel):
    """Every field of spec §8, in the spec's order (which is also the serialized order)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        title="Continuity Brief frontmatter (pi-session-continuity/v2)",
        field_title_generator=lambda name, _info: to_camel(name),
    )

    kind: Literal["pi-session-continuity/v2"]
    product: Literal["Pi Session Continuity"]
    artifact: Literal["Continuity Brief"]
    operation: Literal["Continuity Handoff"]
    status: BriefStatus
    version: Literal[2]
    event_id: _Id
    session_id: _Id
    session_file: str | None
    created_at: str
    updated_at: str
    model_id: str
    synthesis_model: str
    synthesis_effort: RecordedEffort
    token_count_at_trigger: _Count
    context_window: _Count
    reserve_tokens: _Count
    keep_recent_tokens: _Count
    effective_trigger_percent: _Percent
    effective_keep_recent_percent: _Percent
    handoff_reason: HandoffReason
    branch_leaf_before: str | None = None

    @field_validator("created_at", "updated_at")
    @classmethod
    def _iso_timestamp(cls, value: str) -> str:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("must be an ISO-8601 timestamp") from None
        if parsed.tzinfo is None:
            raise ValueError("must be an ISO-8601 timestamp with a time zone")
        return value


#: Spec §8 key order.
FRONTMATTER_KEYS: tuple[str, ...] = tuple(
    field.alias or name for name, field in ContinuityBriefFrontmatter.model_fields.items()
)


def build_frontmatter(
    *,
    status: BriefStatus,
    event_id: str,
    session_id: str,
    session_file: str | None,
    created_at: str,
    updated_at: str,
    model_id: str,
    synthesis_model: str,
    synthesis_effort: str,
    token_count_at_trigger: int,
    context_window: int,
    reserve_tokens: int,
    keep_recent_tokens: int,
    effective_trigger_percent: float,
    effective_keep_recent_percent: float,
    handoff_reason: str,
    branch_leaf_before: str | None = None,
) -> ContinuityBriefFrontmatter:
    """A validated frontmatter with the fixed identity fields filled in."""
    return ContinuityBriefFrontmatter.model_validate(
        {
            "kind": ARTIFACT_KIND,
            "product": PRODUCT_NAME,
            "artifact": ARTIFACT_NAME,
            "operation": OPERATION_NAME,
            "status": status,
            "version": SCHEMA_VERSION,
            "eventId": event_id,
            "sessionId": session_id,
            "sessionFile": session_file,
            "createdAt": created_at,
            "updatedAt": updated_at,
            "modelId": model_id,
            "synthesisModel": synthesis_model,
            "synthesisEffort": synthesis_effort,
            "tokenCountAtTrigger": token_count_at_trigger,
            "contextWindow": context_window,
            "reserveTokens": reserve_tokens,
            "keepRecentTokens": keep_recent_tokens,
            "effectiveTriggerPercent": effective_trigger_percent,
            "effectiveKeepRecentPercent": effective_keep_recent_percent,
            "handoffReason": handoff_reason,
            "branchLeafBefore": branch_leaf_before,
        }
    )


def with_status(
    frontmatter: ContinuityBriefFrontmatter, status: BriefStatus, updated_at: str
) -> ContinuityBriefFrontmatter:
    """A re-validated copy with a new status (pending → archived/failed) and updatedAt."""
    data = frontmatter.model_dump()
    data["status"] = status
    data["updatedAt"] = updated_at
    return ContinuityBriefFrontmatter.model_validate(data)


# Characters YAML would fold, refuse or strip inside a double-quoted scalar; JSON leaves
# them raw, so they get a \uXXXX escape (valid in both languages).
_YAML_UNSAFE = {0x7F, 0x85, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF, *range(0x80, 0xA0)}
#: Any character of :data:`_YAML_UNSAFE` (the same set: 0x85 is inside 0x7F-0x9F).
_YAML_UNSAFE_RE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


#: ``json.dumps(value, ensure_ascii=False)`` of a string, without the encoder ``json.dumps``
#: builds for its arguments at every call: for a ``str`` it returns exactly this function's
#: answer (``JSONEncoder.encode``'s first case). Most of :func:`_quote`'s time was that encoder,
#: 22 times for every Brief written (issue 16).
_json_string = json.encoder.encode_basestring


def _quote(value: str) -> str:
    """``value`` as a JSON string with :data:`_YAML_UNSAFE` characters escaped. The JSON text
    is kept whole when it holds none of them (almost always): the per-character rewrite of
    every field of every Brief written was 2.5 % of a Pi Session Continuity exploration
    (issue 16). An ASCII text without DEL (U+007F, the only ASCII character of the set) holds
    none, which two string methods tell faster than the pattern (every field is such a text)."""
    encoded = _json_string(value)
    if (encoded.isascii() and "\x7f" not in encoded) or _YAML_UNSAFE_RE.search(encoded) is None:
        return encoded
    return "".join(f"\\u{ord(ch):04x}" if ord(ch) in _YAML_UNSAFE else ch for ch in encoded)


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("frontmatter numbers must be finite")
    if value.is_integer():
        return str(int(value))
    return _positional(value)


@functools.lru_cache(maxsize=256, typed=True)
def _positional(value: float) -> str:
    """``value`` (finite, not an integer) in positional notation: YAML 1.1 floats need a ".".
    Remembered: a pure function of the float (equal floats that are not integers have one
    ``repr``), and the two percentages of every Brief are among a few one-decimal values."""
    return format(Decimal(repr(value)), "f")


def _scalar(value: Any) -> str:
    if type(value) is str:  # most fields; a subclass takes the checks below, as before
        return _quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _quote(value)
    raise TypeError(f"unsupported frontmatter value {value!r}")


def normalize_body(body: str) -> str:
    """The body as stored: trailing newlines collapsed to exactly one."""
    return body.rstrip("\n") + "\n"


def serialize_brief(frontmatter: ContinuityBriefFrontmatter, body: str) -> str:
    """Deterministic Brief text: ``---``, one ``key: value`` line per field, ``---``, body."""
    lines = ["---"]
    for key, value in frontmatter.model_dump(by_alias=True).items():
        lines.append(f"{key}: {_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + normalize_body(body)


class BriefParseError(ValueError):
    """A text is not a valid schema-v2 Continuity Brief. ``field`` names the culprit."""

    legacy = False

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        self.field = field
        self.reason = reason
        prefix = f"Continuity Brief frontmatter field {field!r} " if field else "Continuity Brief "
        super().__init__(prefix + reason)


class LegacyBriefError(BriefParseError):
    """A v1 artifact: historical evidence only, never compaction or resume input."""

    legacy = True


class ParsedBrief(NamedTuple):
    frontmatter: ContinuityBriefFrontmatter
    body: str


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loader (libyaml's parser when PyYAML has it) that refuses duplicate keys instead
    of silently keeping the last."""


class _PureUniqueKeyLoader(yaml.SafeLoader):
    """The same in pure Python: it parses a header libyaml refused, for PyYAML's own message
    (which quotes the line) and so that nothing the pure parser accepts is refused."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        if key in mapping:
            raise BriefParseError("appears twice", field=str(key))
        mapping[key] = loader.construct_object(value_node)
    return mapping


for _loader in (_UniqueKeyLoader, _PureUniqueKeyLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


#: What libyaml reads differently from the pure parser (an empty ``!`` tag, tabs, byte order
#: marks, ``>#``); the reference writes none of it (the harness's ``scenario/yaml_text.py`` has
#: the same rule and the property test that found it).
_EXOTIC = re.compile(r"[!\t\ufeff]|[|>][-+0-9]*#")


def _load_header(header: str) -> Any:
    """The header's data as PyYAML's pure parser reads it, through libyaml where they agree."""
    if _EXOTIC.search(header) is None:
        try:
            return yaml.load(header, Loader=_UniqueKeyLoader)
        except BriefParseError:
            raise
        except yaml.YAMLError:
            pass
    return yaml.load(header, Loader=_PureUniqueKeyLoader)


def _split(text: str) -> tuple[str, str]:
    if not text.startswith("---\n"):
        raise BriefParseError("must start with a '---' frontmatter line")
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            return text[4 : len(text) - 4], ""
        raise BriefParseError("frontmatter has no closing '---' line")
    return text[4 : end + 1], text[end + 5 :]


def _describe_error(err: Any) -> tuple[str | None, str]:
    loc = err.get("loc", ())
    field = str(loc[0]) if loc else None
    kind = err.get("type")
    if kind == "missing":
        return field, "is missing"
    if kind == "extra_forbidden":
        return field, "is not part of schema v2"
    message = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
    return field, f"is invalid: {message} (got {err.get('input')!r})"


#: Texts parsed lately and what parsing them gave (a ParsedBrief, or the error's class, reason
#: and field). The same Brief is parsed many times in one process (written, re-read, checked
#: before it becomes the summary, on every session start), and parsing is a pure function of
#: the text whose result is immutable (a frozen model and a string).
_PARSED: dict[str, ParsedBrief | tuple[type[BriefParseError], str, str | None]] = {}
_PARSED_MAX = 64


def parse_brief(text: str) -> ParsedBrief:
    """Parse and validate a Brief; raise :class:`BriefParseError` (or the legacy subclass)."""
    known = _PARSED.get(text)
    if known is None:
        try:
            known = _parse_brief(text)
        except BriefParseError as exc:
            known = (type(exc), exc.reason, exc.field)
        if len(_PARSED) >= _PARSED_MAX:
            del _PARSED[next(iter(_PARSED))]
        _PARSED[text] = known
    if isinstance(known, ParsedBrief):
        return known
    error, reason, field = known
    raise error(reason, field=field)


def _parse_brief(text: str) -> ParsedBrief:
    header, body = _split(text)
    try:
        data = _load_header(header)
    except BriefParseError:
        raise
    except yaml.YAMLError as exc:
        raise BriefParseError(f"frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise BriefParseError("frontmatter must be a mapping of fields")
    kind, version = data.get("kind"), data.get("version")
    if kind == LEGACY_ARTIFACT_KIND or (version == 1 and not isinstance(version, bool)):
        raise LegacyBriefError(
            f"is a legacy v1 artifact (kind {kind!r}, version {version!r}); it is historical and inert"
        )
    if isinstance(kind, str) and kind.startswith("pi-session-continuity/") and kind != ARTIFACT_KIND:
        raise BriefParseError(f"is not supported: {kind!r} (expected {ARTIFACT_KIND!r})", field="kind")
    try:
        frontmatter = ContinuityBriefFrontmatter.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        field, reason = _describe_error(exc.errors()[0])
        raise BriefParseError(reason, field=field) from None
    return ParsedBrief(frontmatter, body)


_SCHEMA_ID = "https://pi-continuity-harness.invalid/schema/continuity-brief-frontmatter.schema.json"


_FIELD_DESCRIPTIONS: dict[str, str] = {
    "status": "pending until session_compact confirms the matching CompactionEntry; then archived, or failed",
    "eventId": "Unique id of this handoff; makes every Brief's bytes unique",
    "sessionId": "Pi session id (ctx.session_manager.get_session_id()) the Brief belongs to",
    "sessionFile": "Pi session file path, or null when the session has no file",
    "createdAt": "ISO-8601 timestamp with a time zone",
    "updatedAt": "ISO-8601 timestamp with a time zone; changes when the status changes",
    "modelId": "Active Pi model, provider/model",
    "synthesisModel": "Model that wrote the Brief, provider/model",
    "synthesisEffort": "Reasoning effort requested for synthesis",
    "tokenCountAtTrigger": "Pi's tokensBefore (or context usage for a checkpoint)",
    "contextWindow": "Context window of the active model",
    "reserveTokens": "Effective native compaction.reserveTokens",
    "keepRecentTokens": "Effective native compaction.keepRecentTokens",
    "effectiveTriggerPercent": (
        "(contextWindow - reserveTokens) / contextWindow x 100, one decimal; display only"
    ),
    "effectiveKeepRecentPercent": "keepRecentTokens / contextWindow x 100, one decimal; display only",
    "handoffReason": "Why the Brief was written",
    "branchLeafBefore": "Pi branch leaf entry id before the handoff started, when available",
}


def frontmatter_json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of the frontmatter, generated from the model (never by hand)."""
    schema = ContinuityBriefFrontmatter.model_json_schema(by_alias=True, mode="validation")
    for key, text in _FIELD_DESCRIPTIONS.items():
        schema["properties"][key]["description"] = text
    schema["description"] = (
        "YAML frontmatter of a Pi Session Continuity Continuity Brief, artifact schema v2 "
        "(spec §8). Generated by "
        "pi_continuity_harness.reference.psc.frontmatter.frontmatter_json_schema; do not edit."
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _SCHEMA_ID,
        **schema,
    }


def render_frontmatter_json_schema() -> str:
    """The committed file's exact text (``docs/schema/continuity-brief-frontmatter.schema.json``)."""
    return json.dumps(frontmatter_json_schema(), indent=2, ensure_ascii=False) + "\n"
