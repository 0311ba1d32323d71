"""``dumps_indented`` writes exactly what ``json.dumps(..., indent=N)`` writes (issue 16: the
requests files and observation records are written with it, and must stay byte-identical)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_continuity_harness.scenario.json_text import dumps_indented

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
