"""Spec §8: schema-v2 frontmatter, deterministic bytes, strict parsing, legacy artifacts."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from pi_continuity_harness.reference.psc import frontmatter as module
from pi_continuity_harness.reference.psc.brief import insert_event_freshness_rule
from pi_continuity_harness.reference.psc.frontmatter import (
    FRONTMATTER_KEYS,
    BriefParseError,
    ContinuityBriefFrontmatter,
    LegacyBriefError,
    build_frontmatter,
    normalize_body,
    parse_brief,
    render_frontmatter_json_schema,
    serialize_brief,
    with_status,
)
from pi_continuity_harness.reference.psc.paths import iso_timestamp

from .builders import frontmatter_kwargs, make_body

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "docs" / "schema" / "continuity-brief-frontmatter.schema.json"

SPEC_KEY_ORDER = [
    "kind",
    "product",
    "artifact",
    "operation",
    "status",
    "version",
    "eventId",
    "sessionId",
    "sessionFile",
    "createdAt",
    "updatedAt",
    "modelId",
    "synthesisModel",
    "synthesisEffort",
    "tokenCountAtTrigger",
    "contextWindow",
    "reserveTokens",
    "keepRecentTokens",
    "effectiveTriggerPercent",
    "effectiveKeepRecentPercent",
    "handoffReason",
    "branchLeafBefore",
]


def fm(**changes: Any) -> ContinuityBriefFrontmatter:
    return build_frontmatter(**frontmatter_kwargs(**changes))


def brief_text(**changes: Any) -> str:
    return serialize_brief(fm(**changes), make_body())


def replace_line(text: str, key: str, new_line: str | None) -> str:
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    if new_line is None:
        del lines[index]
    else:
        lines[index] = new_line
    return "\n".join(lines)


# ------------------------------------------------------------------ serialization


def test_serialized_keys_follow_the_spec_order() -> None:
    header = brief_text().split("---\n")[1]
    assert [line.split(":", 1)[0] for line in header.splitlines()] == SPEC_KEY_ORDER
    assert list(FRONTMATTER_KEYS) == SPEC_KEY_ORDER


def test_serialized_brief_is_byte_exact(snapshot: SnapshotAssertion) -> None:
    assert serialize_brief(fm(), insert_event_freshness_rule(make_body())) == snapshot


def test_strings_are_double_quoted_with_json_escapes_and_ints_are_plain() -> None:
    text = serialize_brief(fm(model_id='we"ird\\model\nx', branch_leaf_before=None), "# Continuity Brief\n")
    assert 'modelId: "we\\"ird\\\\model\\nx"\n' in text
    assert "reserveTokens: 93000\n" in text
    assert "effectiveTriggerPercent: 75\n" in text
    assert "branchLeafBefore: null\n" in text


def test_yaml_line_break_characters_are_escaped_not_written_raw() -> None:
    text = serialize_brief(fm(model_id="a\u2028b\x85c\x7f"), "# Continuity Brief\n")
    assert 'modelId: "a\\u2028b\\u0085c\\u007f"' in text
    assert parse_brief(text).frontmatter.model_id == "a\u2028b\x85c\x7f"


def test_fractional_percent_is_written_positionally() -> None:
    text = serialize_brief(fm(effective_trigger_percent=74.8, effective_keep_recent_percent=1e-05), "x\n")
    assert "effectiveTriggerPercent: 74.8\n" in text
    assert "effectiveKeepRecentPercent: 0.00001\n" in text
    assert parse_brief(text).frontmatter.effective_keep_recent_percent == 1e-05


def test_body_ends_with_exactly_one_newline() -> None:
    assert serialize_brief(fm(), "# Continuity Brief\n\n\n").endswith("---\n# Continuity Brief\n")
    assert serialize_brief(fm(), "# Continuity Brief").endswith("---\n# Continuity Brief\n")


def test_serialization_is_deterministic() -> None:
    assert brief_text() == brief_text()
    assert brief_text(event_id="other") != brief_text()


# ------------------------------------------------------------------ parsing


def test_parse_returns_the_serialized_frontmatter_and_body() -> None:
    body = make_body()
    assert parse_brief(serialize_brief(fm(), body)) == (fm(), body)


def test_body_may_contain_dash_lines_after_the_frontmatter() -> None:
    body = "# Continuity Brief\n\n---\n\nkind: fake\n---\n"
    assert parse_brief(serialize_brief(fm(), body)).body == body


def test_spec_example_style_with_unquoted_scalars_parses() -> None:
    text = (
        "---\nkind: pi-session-continuity/v2\nproduct: Pi Session Continuity\nartifact: Continuity Brief\n"
        'operation: Continuity Handoff\nstatus: pending\nversion: 2\neventId: "uuid"\n'
        'sessionId: "pi-session-id"\nsessionFile: "/path/to/session.jsonl"\n'
        'createdAt: "2026-11-30T00:00:00Z"\nupdatedAt: "2026-11-30T00:00:00Z"\n'
        'modelId: "active-provider/model"\nsynthesisModel: "resolved-provider/model"\n'
        'synthesisEffort: "medium"\ntokenCountAtTrigger: 0\ncontextWindow: 0\nreserveTokens: 93000\n'
        "keepRecentTokens: 55800\neffectiveTriggerPercent: 75\neffectiveKeepRecentPercent: 15\n"
        'handoffReason: threshold\nbranchLeafBefore: "entry-id-or-null"\n---\n# Continuity Brief\n'
    )
    parsed = parse_brief(text)
    assert parsed.frontmatter.event_id == "uuid"
    assert parsed.frontmatter.effective_trigger_percent == 75


def test_branch_leaf_before_is_optional() -> None:
    parsed = parse_brief(replace_line(brief_text(), "branchLeafBefore", None))
    assert parsed.frontmatter.branch_leaf_before is None


REQUIRED = [key for key in SPEC_KEY_ORDER if key != "branchLeafBefore"]


@pytest.mark.parametrize("key", REQUIRED)
def test_every_required_field_is_enforced_by_name(key: str) -> None:
    with pytest.raises(BriefParseError) as caught:
        parse_brief(replace_line(brief_text(), key, None))
    assert caught.value.field == key
    assert f"field {key!r} is missing" in str(caught.value)
    assert not caught.value.legacy


@pytest.mark.parametrize(
    ("key", "line"),
    [
        ("kind", 'kind: "something-else/v2"'),
        ("product", 'product: "Pi Continuity"'),
        ("artifact", 'artifact: "Brief"'),
        ("operation", 'operation: "Handoff"'),
        ("status", 'status: "done"'),
        ("version", "version: 3"),
        ("version", 'version: "2"'),
        ("eventId", 'eventId: ""'),
        ("sessionId", "sessionId: 42"),
        ("createdAt", 'createdAt: "yesterday"'),
        ("updatedAt", 'updatedAt: "2026-11-30T00:00:00"'),
        ("synthesisEffort", 'synthesisEffort: "extreme"'),
        ("tokenCountAtTrigger", "tokenCountAtTrigger: -1"),
        ("contextWindow", "contextWindow: true"),
        ("reserveTokens", "reserveTokens: 93000.5"),
        ("effectiveTriggerPercent", 'effectiveTriggerPercent: "75"'),
        ("effectiveTriggerPercent", "effectiveTriggerPercent: .nan"),
        ("handoffReason", 'handoffReason: "manual"'),
        ("branchLeafBefore", "branchLeafBefore: 7"),
    ],
)
def test_invalid_field_values_are_refused_by_name(key: str, line: str) -> None:
    with pytest.raises(BriefParseError) as caught:
        parse_brief(replace_line(brief_text(), key, line))
    assert caught.value.field == key
    assert "is invalid" in caught.value.reason


def test_unknown_frontmatter_fields_are_refused() -> None:
    text = brief_text().replace("version: 2\n", "version: 2\nloopIndex: 3\n".replace("loop", "run"))
    with pytest.raises(BriefParseError) as caught:
        parse_brief(text)
    assert caught.value.field == "runIndex"


def test_duplicate_frontmatter_keys_are_refused() -> None:
    text = brief_text().replace('status: "pending"\n', 'status: "pending"\nstatus: "failed"\n')
    with pytest.raises(BriefParseError, match="'status' appears twice"):
        parse_brief(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Continuity Brief\n", "must start with a '---' frontmatter line"),
        ("---\nkind: x\n# Continuity Brief\n", "no closing '---' line"),
        ("---\n- a\n- b\n---\nbody\n", "must be a mapping"),
        ("---\nkind: [unclosed\n---\nbody\n", "not valid YAML"),
        ("\ufeff---\nkind: x\n---\n", "must start with"),
        ("---\r\nkind: x\r\n---\r\n", "must start with"),
    ],
)
def test_malformed_briefs_are_refused(text: str, message: str) -> None:
    with pytest.raises(BriefParseError, match=message):
        parse_brief(text)


def test_legacy_v1_kind_is_recognised_as_legacy() -> None:
    text = replace_line(brief_text(), "kind", 'kind: "pi-session-continuity/v1"')
    with pytest.raises(LegacyBriefError) as caught:
        parse_brief(text)
    assert caught.value.legacy and "legacy v1" in str(caught.value)


def test_legacy_version_1_is_recognised_as_legacy_even_with_a_plausible_body() -> None:
    text = replace_line(brief_text(), "version", "version: 1")
    with pytest.raises(LegacyBriefError):
        parse_brief(text)


def test_unknown_future_kind_is_refused_but_not_as_legacy() -> None:
    with pytest.raises(BriefParseError) as caught:
        parse_brief(replace_line(brief_text(), "kind", 'kind: "pi-session-continuity/v3"'))
    assert not caught.value.legacy and caught.value.field == "kind"


def test_failed_artifacts_parse_as_failed_status() -> None:
    parsed = parse_brief(
        serialize_brief(fm(status="failed"), "# Continuity Brief Failure\n\n- Phase: synthesis\n")
    )
    assert parsed.frontmatter.status == "failed"


def test_archived_status_is_valid() -> None:
    assert parse_brief(brief_text(status="archived")).frontmatter.status == "archived"


def test_with_status_changes_only_status_and_updated_at() -> None:
    pending = fm()
    archived = with_status(pending, "archived", "2026-11-30T00:05:00.000Z")
    assert archived.status == "archived" and archived.updated_at == "2026-11-30T00:05:00.000Z"
    assert archived.model_dump(exclude={"status", "updated_at"}) == pending.model_dump(
        exclude={"status", "updated_at"}
    )
    with pytest.raises(ValueError, match="status"):
        with_status(pending, "done", "2026-11-30T00:05:00.000Z")  # type: ignore[arg-type]


def test_strings_that_cannot_be_written_as_utf8_are_refused() -> None:
    with pytest.raises(ValueError, match="eventId"):
        fm(event_id="\ud800")


def test_build_frontmatter_fills_the_fixed_identity_fields() -> None:
    data = fm().model_dump()
    assert data["kind"] == "pi-session-continuity/v2"
    assert data["product"] == "Pi Session Continuity"
    assert data["artifact"] == "Continuity Brief"
    assert data["operation"] == "Continuity Handoff"
    assert data["version"] == 2


# ------------------------------------------------------------------ property: round trip

_text = st.text(max_size=40)
_timestamps = st.datetimes(timezones=st.just(UTC)).map(iso_timestamp)
_counts = st.integers(min_value=0, max_value=2**63)
_percents = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def frontmatters(draw: st.DrawFn) -> ContinuityBriefFrontmatter:
    return build_frontmatter(
        status=draw(st.sampled_from(["pending", "archived", "failed"])),
        event_id=draw(st.text(min_size=1, max_size=40)),
        session_id=draw(st.text(min_size=1, max_size=40)),
        session_file=draw(st.none() | _text),
        created_at=draw(_timestamps),
        updated_at=draw(_timestamps),
        model_id=draw(_text),
        synthesis_model=draw(_text),
        synthesis_effort=draw(st.sampled_from(["inherit", "minimal", "low", "medium", "high", "xhigh"])),
        token_count_at_trigger=draw(_counts),
        context_window=draw(_counts),
        reserve_tokens=draw(_counts),
        keep_recent_tokens=draw(_counts),
        effective_trigger_percent=draw(_percents),
        effective_keep_recent_percent=draw(_percents),
        handoff_reason=draw(st.sampled_from(["checkpoint", "threshold", "overflow", "manual-compaction"])),
        branch_leaf_before=draw(st.none() | _text),
    )


@settings(max_examples=300)
@given(frontmatters(), st.text(max_size=200))
def test_frontmatter_round_trip_preserves_every_value(
    frontmatter: ContinuityBriefFrontmatter, raw: str
) -> None:
    body = normalize_body(raw)
    text = serialize_brief(frontmatter, body)
    assert parse_brief(text) == (frontmatter, body)
    assert serialize_brief(*parse_brief(text)) == text
    text.encode("utf-8")  # always writable as UTF-8


# ------------------------------------------------------------------ JSON schema


def test_committed_json_schema_matches_the_generated_schema() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_frontmatter_json_schema()


def test_json_schema_requires_every_spec_required_field() -> None:
    schema = json.loads(render_frontmatter_json_schema())
    assert schema["required"] == REQUIRED
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == SPEC_KEY_ORDER
    assert schema["properties"]["kind"]["const"] == "pi-session-continuity/v2"
    assert schema["properties"]["status"]["enum"] == ["pending", "archived", "failed"]


# ------------------------------------------------------------------ parsing fast (issue 16)


_YAMLISH = st.lists(st.sampled_from([*" \n\t:-?[]{},#&*!|>'\"%@`\\ab1.0x+~/\u0085\u2028\ufeff", "null"]))


@settings(max_examples=300)
@given(frontmatters(), _YAMLISH.map("".join))
def test_libyaml_reads_every_header_as_the_pure_parser_does(
    frontmatter: ContinuityBriefFrontmatter, noise: str
) -> None:
    """The header is parsed by libyaml for speed; what parse_brief gets must be what PyYAML's
    pure-Python parser gives, for every header the reference writes, with arbitrary YAML added
    to it, and for arbitrary YAML alone (data, or the same error)."""

    def outcome(load: Any, text: str) -> tuple[str, Any]:
        try:
            return ("data", load(text))
        except (yaml.YAMLError, BriefParseError) as exc:
            return ("error", str(exc))

    header = module._split(serialize_brief(frontmatter, "body\n"))[0]
    for text in (header, header + noise + "\n", noise):
        pure = outcome(lambda t: yaml.load(t, Loader=module._PureUniqueKeyLoader), text)
        assert outcome(module._load_header, text) == pure


def test_invalid_yaml_is_reported_with_the_pure_parsers_message() -> None:
    """libyaml refuses, then PyYAML's own parser names the problem with the line quoted."""
    with pytest.raises(BriefParseError) as caught:
        parse_brief("---\nkind: [unclosed\n---\nbody\n")
    assert "expected ',' or ']', but got '<stream end>'" in str(caught.value)
    assert "kind: [unclosed" in str(caught.value)


def test_the_same_text_is_parsed_once_and_its_errors_raised_afresh() -> None:
    text = brief_text()
    assert parse_brief(text) is parse_brief(text)
    bad = text.replace('status: "pending"\n', 'status: "pending"\nstatus: "failed"\n')
    errors = []
    for _ in range(2):
        with pytest.raises(BriefParseError) as caught:
            parse_brief(bad)
        errors.append(caught.value)
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1]) and errors[1].field == "status"
    for index in range(module._PARSED_MAX + 5):
        parse_brief(text.replace("# Continuity Brief", f"# Continuity Brief {index}", 1))
    assert len(module._PARSED) <= module._PARSED_MAX
