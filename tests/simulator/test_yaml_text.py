"""Issue 16: YAML is read through libyaml, and reads exactly as PyYAML's pure parser reads it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.scenario.yaml_text import FAST_LOADER, safe_load

#: Characters and pieces that matter to a YAML scanner, so random texts hit its corners.
YAMLISH = st.lists(
    st.sampled_from(
        [*" \n\t:-?[]{},#&*!|>'\"%@`\\ab1.0x+~_\r/<=\u0085\u2028\ufeff", "null", "key: ", "\n- ", '"x"']
    ),
    max_size=14,
).map("".join)


def _outcome(load: Any, text: str) -> tuple[str, str]:
    try:
        return ("data", repr(load(text)))
    except yaml.YAMLError as exc:
        return ("error", str(exc))


def test_pyyaml_has_libyaml() -> None:
    assert FAST_LOADER is yaml.CSafeLoader


@settings(max_examples=2000, suppress_health_check=list(HealthCheck), deadline=None)
@given(YAMLISH)
@example("{\\?}")  # a ``?`` in a flow collection: libyaml read data, the pure parser refused it
@example("[a?b]")
def test_safe_load_gives_what_the_pure_parser_gives(text: str) -> None:
    """Same data for a valid text, the same error (PyYAML's message, the line quoted) for an
    invalid one, whatever libyaml makes of it."""
    assert _outcome(safe_load, text) == _outcome(lambda t: yaml.load(t, Loader=yaml.SafeLoader), text)


@pytest.mark.parametrize("text", ["a: !", "\ufeff\ufeff", "a: >#\n", "\\\t", "a: [1,\nb: 2"])
def test_texts_the_two_parsers_read_differently_read_as_the_pure_parser_does(text: str) -> None:
    assert _outcome(safe_load, text) == _outcome(lambda t: yaml.load(t, Loader=yaml.SafeLoader), text)


def test_an_invalid_scenario_still_names_the_line_and_column(tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\noperations: [\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad\.yaml: line 3, column 1: invalid YAML: expected"):
        load_scenario(path)
