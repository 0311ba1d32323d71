"""``dumps_indented`` writes exactly what ``json.dumps(..., indent=N)`` writes (issue 16: the
requests files and observation records are written with it, and must stay byte-identical)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_continuity_harness.scenario.identity_memo import identity
from pi_continuity_harness.scenario.json_text import TextMemo, dumps_indented
from pi_continuity_harness.simulator.model_service import exchange_file
from pi_continuity_harness.simulator.simulation import read_exchanges, write_exchanges

_KEYS = st.one_of(st.text(max_size=8), st.integers(), st.floats(), st.booleans(), st.none())
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text()
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)
@given(value=_VALUES, indent=st.sampled_from([0, 1, 2, 4]), ensure_ascii=st.booleans())
def test_dumps_indented_is_byte_identical_to_json_dumps(value: Any, indent: int, ensure_ascii: bool) -> None:
    assert dumps_indented(value, indent=indent, ensure_ascii=ensure_ascii) == json.dumps(
        value, indent=indent, ensure_ascii=ensure_ascii
    )


def test_dumps_indented_writes_unicode_escapes_and_special_floats_as_json_does() -> None:
    value = {"é\u2028\x00": ["ü", math.nan, -math.inf, 1e300, -0.0, True, 2**70], 3: {}, None: []}
    for ensure_ascii in (True, False):
        assert dumps_indented(value, indent=1, ensure_ascii=ensure_ascii) == json.dumps(
            value, indent=1, ensure_ascii=ensure_ascii
        )


def test_dumps_indented_leaves_what_json_refuses_to_json() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(cyclic, indent=1)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented({"a": {1, 2}}, indent=1)
    with pytest.raises(TypeError, match="keys must be"):
        dumps_indented({(1, 2): 1}, indent=1)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(_VALUES, min_size=1, max_size=5),
    picks=st.lists(st.lists(st.integers(min_value=0, max_value=4), max_size=6), min_size=1, max_size=4),
    indent=st.sampled_from([0, 1, 2]),
    ensure_ascii=st.booleans(),
)
def test_a_shared_memo_writes_every_document_as_json_dumps_does(
    parts: list[Any], picks: list[list[int]], indent: int, ensure_ascii: bool
) -> None:
    """Documents that hold the same dicts again, at one nesting level and at others (as every
    request of a run holds the conversation's earlier messages), written with one memo: each
    is what ``json.dumps`` writes of it, the first and every later one."""
    shared = [{"part": part, "index": i} for i, part in enumerate(parts)]
    memo = TextMemo(indent=indent, ensure_ascii=ensure_ascii)
    for pick in picks:
        chosen = [shared[i % len(shared)] for i in pick]
        document = {"messages": chosen, "nested": [chosen, [chosen[:1]]], "last": chosen[-1:] or None}
        expected = json.dumps(document, indent=indent, ensure_ascii=ensure_ascii)
        assert dumps_indented(document, indent=indent, ensure_ascii=ensure_ascii, memo=memo) == expected


def test_a_memo_keeps_no_text_of_a_refused_document_and_serves_one_indent_only() -> None:
    inner = {"a": [{"b": 1}]}
    refused = {"x": [inner, {"s": {1, 2}}]}
    memo = TextMemo(indent=1, ensure_ascii=True)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented(refused, indent=1, memo=memo)
    assert not any(item is refused["x"][1] for item, _ in memo.texts.values())
    document = [inner, [inner]]
    assert dumps_indented(document, indent=1, memo=memo) == json.dumps(document, indent=1)
    with pytest.raises(ValueError, match="another indent"):
        dumps_indented(document, indent=2, memo=memo)
    with pytest.raises(ValueError, match="another indent"):
        dumps_indented(document, indent=1, ensure_ascii=False, memo=memo)


def test_a_memo_reuses_a_text_only_for_the_object_it_was_written_for() -> None:
    """The memo answers by identity: a text kept for ``first`` is not given for ``second``,
    even under ``second``'s key (as when ``first`` is gone and ``second`` got its ``id``)."""
    first = {"role": "user", "content": "a"}
    memo = TextMemo(indent=1, ensure_ascii=False)
    dumps_indented([first], indent=1, ensure_ascii=False, memo=memo)
    key = (identity(first), 1)
    assert memo.texts[key][0] is first
    second = {"role": "user", "content": "b"}
    memo.texts[(identity(second), 1)] = (first, memo.texts[key][1])  # a stale entry under another id
    assert dumps_indented([second], indent=1, ensure_ascii=False, memo=memo) == json.dumps(
        [second], indent=1, ensure_ascii=False
    )


def test_write_exchanges_writes_each_request_file_as_json_dumps_does(tmp_path: Path) -> None:
    """The request files of a run whose requests re-send the same message objects (and a reply
    that a later request holds): each file is ``json.dumps`` of its exchange, indented by one."""
    user = {"role": "user", "content": [{"type": "text", "text": "é\u2028 hi"}]}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"totalTokens": 3}}
    exchanges = [
        {"kind": "agent", "index": 0, "request": {"messages": [user]}, "reply": reply},
        {"kind": "agent", "index": 1, "request": {"messages": [user, reply, user]}, "reply": None},
        {"kind": "summary", "index": 0, "request": {"messages": [[user], reply]}, "reply": reply},
    ]
    write_exchanges(tmp_path, exchanges)
    for exchange in exchanges:
        path = tmp_path / exchange_file(str(exchange["kind"]), int(str(exchange["index"])))
        assert path.read_text(encoding="utf-8") == json.dumps(exchange, indent=1, ensure_ascii=False) + "\n"
    assert read_exchanges(tmp_path) == {(str(e["kind"]), int(str(e["index"]))): e for e in exchanges}
