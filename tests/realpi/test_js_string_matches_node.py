"""``scenario.transcript.js_string`` is JavaScript's ``String(value)``: checked against Node 22
(the one the harness runs Pi with) on generated JSON values.

The simulator names an invalid compaction setting's value as Pi does
(``settings-manager.js:658-667``: ``${String(ordinary)}``) and joins content texts as pi-ai's
``contentText`` does (``Array.prototype.join``); both go through ``js_string``. Python's own
``str`` differs on arrays (``[1, 2]`` for ``1,2``), small and large floats (``1e-07`` for
``1e-7``, ``1e+16`` for ``10000000000000000``), integers beyond 2**53 and ``None``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from realpi.node_json import node_json

from pi_continuity_harness.scenario.transcript import js_string
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=1e-12, max_value=1e-3)  # where JavaScript turns to an exponent (1e-7)
    | st.floats(min_value=1e15, max_value=1e25)  # and where it turns back (1e21)
    | st.sampled_from([1e21, 1e-7, 1.5e-7, 1e-6, 0.000001234, 123456789012345680000.0, 5e-324, -0.0, 1e300])
    | st.text(alphabet="ab ,[]{}", max_size=4)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("xyz", max_size=2), inner, max_size=2)
    ),
    max_leaves=8,
)

_NODE = (
    "const values = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    " process.stdout.write(JSON.stringify(values.map(String)));"
)


def _node_strings(installation: PiInstallation, values: list[Any]) -> list[str]:
    return list(node_json(installation, _NODE, values))


# No shrinking: each shrink step would start Node again (minutes); the assertion names the values
# that differ instead.
@settings(max_examples=3, deadline=None, database=None, phases=[Phase.explicit, Phase.generate])
@given(st.lists(_VALUES, min_size=300, max_size=300))
def test_js_string_is_what_node_writes(pi_installation: PiInstallation, values: list[Any]) -> None:
    # One Node process for the whole batch; Python's json writes each value as JSON.parse reads it.
    expected = _node_strings(pi_installation, values)
    differ = [(v, js_string(v), e) for v, e in zip(values, expected, strict=True) if js_string(v) != e]
    assert not differ, f"(value, js_string, Node's String) that differ: {differ[:10]}"


def test_js_string_of_the_values_that_differ_from_pythons_str(pi_installation: PiInstallation) -> None:
    values: list[Any] = [
        [1, [2, None], "x"],
        [],
        None,
        True,
        1e21,
        1e-7,
        1e16,
        2**53 + 1,
        -0.0,
        {"a": 1},
        [{"a": 1}],
    ]
    assert [js_string(v) for v in values] == _node_strings(pi_installation, values)
    assert [js_string(v) for v in values] == [
        "1,2,,x",
        "",
        "null",
        "true",
        "1e+21",
        "1e-7",
        "10000000000000000",
        "9007199254740992",
        "0",
        "[object Object]",
        "[object Object]",
    ]
