"""Issue 16: YAML is read through libyaml, and reads exactly as PyYAML's pure parser reads it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario, yaml_text
from pi_continuity_harness.scenario.yaml_text import (
    FAST_LOADER,
    PURE_LOADER,
    expansion_problem,
    json_data_problem,
    safe_load,
)

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
    assert issubclass(FAST_LOADER, yaml.CSafeLoader)


def _pure(text: str) -> Any:
    """PyYAML's pure parser with the same constructors (duplicate keys refused)."""
    return yaml.load(text, Loader=PURE_LOADER)


@settings(max_examples=2000, suppress_health_check=list(HealthCheck), deadline=None)
@given(YAMLISH)
@example("{\\?}")  # a ``?`` in a flow collection: libyaml read data, the pure parser refused it
@example("[a?b]")
def test_safe_load_gives_what_the_pure_parser_gives(text: str) -> None:
    """Same data for a valid text, the same error (PyYAML's message, the line quoted) for an
    invalid one, whatever libyaml makes of it."""
    assert _outcome(safe_load, text) == _outcome(_pure, text)


@pytest.mark.parametrize("text", ["a: !", "\ufeff\ufeff", "a: >#\n", "\\\t", "a: [1,\nb: 2"])
def test_texts_the_two_parsers_read_differently_read_as_the_pure_parser_does(text: str) -> None:
    assert _outcome(safe_load, text) == _outcome(_pure, text)


def _pyyaml(text: str) -> tuple[str, str]:
    """PyYAML's own safe loader's outcome, a ``ValueError`` its integer constructor raises too."""
    try:
        return _outcome(lambda t: yaml.load(t, Loader=yaml.SafeLoader), text)
    except ValueError as exc:
        return ("ValueError", str(exc))


@settings(max_examples=500, suppress_health_check=list(HealthCheck), deadline=None)
@given(YAMLISH)
@example("0x_")  # found by this test on 7 December 2026: PyYAML's int('', 16) raised ValueError
def test_the_pure_loader_reads_what_pyyaml_reads_unless_a_key_is_there_twice(text: str) -> None:
    """Refusing duplicate keys changes nothing else: a text PyYAML's safe loader reads, the
    loader :func:`safe_load` falls back to reads the same, or refuses it for a duplicate key.
    Where PyYAML's integer constructor raises a ``ValueError`` (a traceback, not a YAML error),
    ours gives a YAML error at the number."""
    ours, theirs = _outcome(_pure, text), _pyyaml(text)
    if theirs[0] == "ValueError":
        assert ours[0] == "error" and "integer" in ours[1], (ours, theirs)
        return
    assert ours == theirs or ours[1].startswith("found duplicate key")


@pytest.mark.parametrize("number", ["0x_", "0b__", "-0x_"])
def test_an_integer_with_no_digit_after_its_prefix_is_one_yaml_error_naming_it(number: str) -> None:
    """PyYAML's resolver reads ``0x_`` as an integer and its constructor drops the underscores,
    then ``int('', 16)`` raises ``ValueError``, which ``_construct_int`` read as the 4,300-digit
    limit: a scenario holding ``seed: 0x_`` was told its 3-character integer had more than
    4,300 digits."""
    with pytest.raises(
        yaml.YAMLError, match=rf"{re.escape(repr(number))} reads as an integer but has no digit"
    ):
        safe_load(f"seed: {number}\n")


# --------------------------------------------------------------------------- duplicate keys


@pytest.mark.parametrize(
    ("text", "where", "key", "first"),
    [
        (
            "name: dup\noperations:\n  - prompt: first\n  - compact\noperations:\n  - prompt: second\n",
            "line 5, column 1",
            "'operations'",
            2,
        ),
        ('{"name": "dup", "seed": 1, "seed": 2}', "line 1, column 28", "'seed'", 1),
        ("name: dup\nfiles:\n  a.json: {json: {k: 1, k: 2}}\n", "line 3, column 25", "'k'", 3),
    ],
)
def test_a_scenario_that_names_a_key_twice_is_refused_naming_the_key_and_both_lines(
    tmp_path: Path, text: str, where: str, key: str, first: int
) -> None:
    """Before: the last value won without a word (only ``prompt: second`` ran; the JSON file ran
    with seed 2)."""
    path = tmp_path / "dup.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == (
        f"{path}: {where}: invalid YAML: found duplicate key {key} (first on line {first})"
    )


@pytest.mark.parametrize("loader", [FAST_LOADER, PURE_LOADER])
def test_a_key_a_merge_brings_in_may_be_overridden(loader: Any) -> None:
    """YAML merge keys mean "these unless given here": only the keys the mapping itself names
    count as duplicates, so both loaders read a merge overridden as PyYAML always did."""
    text = "base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  a: 3\n"
    assert (
        yaml.load(text, Loader=loader)
        == yaml.safe_load(text)
        == {"base": {"a": 1, "b": 2}, "x": {"a": 3, "b": 2}}
    )
    with pytest.raises(yaml.YAMLError, match="found duplicate key 'a' \\(first on line 4\\)"):
        yaml.load(text + "  a: 4\n", Loader=loader)


def test_an_invalid_scenario_still_names_the_line_and_column(tmp_path: Any) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\noperations: [\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad\.yaml: line 3, column 1: invalid YAML: expected"):
        load_scenario(path)


# --------------------------------------------------------------------------- alias expansion

#: Nine lines of aliases standing for 9**9 (387 million) strings.
ALIAS_BOMB = "\n".join(
    ["name: bomb", "files:", "  big.json:", "    json:", '      a: &a ["x","x","x","x","x","x","x","x","x"]']
    + [f"      {n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
)


def test_a_scenario_whose_aliases_stand_for_millions_of_values_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    """Before: ``simulate`` on these lines ran until it was killed (validating, then writing a
    file of gigabytes); now it is refused at load, naming the field that grows too large."""
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB, encoding="utf-8")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == (
        f"{path}: files.big.json.json.g[3]: stands for more than 2,000,000 values once its YAML "
        "aliases are expanded"
    )


def test_a_scenario_that_contains_itself_through_an_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("name: loop\nfiles:\n  a.json:\n    json: &a [1, *a]\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"files\.a\.json\.json\[1\]: the value contains itself"):
        load_scenario(path)


def test_a_scenario_that_reuses_a_value_through_aliases_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "reuse.yaml"
    path.write_text(
        "name: reuse\nfiles:\n  a.json: {json: &shared {k: [1, 2, 3]}}\n  b.json: {json: *shared}\n",
        encoding="utf-8",
    )
    scenario = load_scenario(path)
    assert scenario.files["a.json"].json_value == scenario.files["b.json"].json_value == {"k": [1, 2, 3]}


JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=30,
)


def _values(node: Any) -> int:
    if isinstance(node, dict):
        return 1 + sum(_values(v) for v in node.values())
    if isinstance(node, list):
        return 1 + sum(_values(v) for v in node)
    return 1


@given(tree=JSON_TREES, copies=st.integers(1, 4))
def test_the_expanded_size_counts_every_value_as_often_as_aliases_repeat_it(tree: Any, copies: int) -> None:
    """``[tree, tree, ...]`` (the same object, as an alias gives it) stands for exactly
    ``1 + copies * values(tree)`` values: refused one below that, accepted at it."""
    data = [tree] * copies
    count = 1 + copies * _values(tree)
    assert expansion_problem(data, limit=count) is None
    assert expansion_problem(data, limit=count - 1) is not None


def test_a_scenario_nested_too_deeply_to_read_is_refused(tmp_path: Path) -> None:
    """libyaml stops at 1,000 levels and PyYAML's pure parser, tried next, recursed until a
    RecursionError ended ``simulate`` with a traceback (exit 1)."""
    path = tmp_path / "deep.yaml"
    path.write_text(
        "name: deep\nfiles:\n  a.json:\n    json: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8"
    )
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == f"{path}: (top level): invalid YAML: nested too deeply to read"


#: Values json_data_problem looks at: JSON data and each kind of value that is not.
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([1.5, float("nan"), float("inf"), -float("inf")]),
    st.text(max_size=4),
    st.sampled_from(["\ud800", "a\udfffb", "é", b"bytes", frozenset({1}), {2}]),
    st.dates(),
    st.datetimes(),
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(
            st.one_of(st.text(max_size=3), st.sampled_from(["\udc80", 1, None, 2.5])), inner, max_size=3
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_DATA)
@example({"a": [1, {"b": "\ud800"}]})
@example([{"x": 1}, 5.0, {1: 2}])
def test_json_data_problem_finds_a_problem_exactly_when_the_walk_with_paths_does(data: Any) -> None:
    """The walk without paths answers "all JSON data" exactly when the walk with paths finds
    nothing; the first problem is then named by the latter (issue 16)."""
    assert yaml_text._is_json_data(data) == (yaml_text._first_problem(data) is None)
    assert yaml_text.json_data_problem(data) == yaml_text._first_problem(data)


def test_json_data_problem_walks_a_value_that_contains_itself_once() -> None:
    looped: list[Any] = ["a"]
    looped.append(looped)
    assert json_data_problem({"x": looped, "y": looped}) is None
    looped.append(float("nan"))
    assert json_data_problem({"x": looped})[0] == ("x", 2)  # type: ignore[index]
    huge = {"a": [1, 2**20000]}  # past the digits repr allows: not in the property test
    assert not yaml_text._is_json_data(huge)
    assert json_data_problem(huge)[0] == ("a", 1)  # type: ignore[index]


#: Keys and scalars around what ``safe_load`` reads without a YAML loader (``_flat_mapping``).
_FLAT_KEYS = st.sampled_from(["kind", "a", "B2", "on", "Off", "yes", "NULL", "y", "n", "x_y", "2a", "e1"])
_FLAT_VALUES = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12).map(
        lambda t: '"' + t.replace('"', "").replace("\\", "") + '"'
    ),
    st.sampled_from(
        [
            "0",
            "-0",
            "7",
            "-12",
            "007",
            "010",
            "-010",
            "1_000",
            "0.5",
            "-0.0",
            "-1.25",
            "1.",
            ".5",
            "1e3",
            "null",
            "true",
            "false",
        ]
    ),
    st.sampled_from(["True", "~", "yes", "0x1F", "0o7", "1:30", '"a\\tb"', '"é"', "'q'", "plain", ""]),
    st.integers(min_value=-(10**19), max_value=10**19).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_FLAT_TEXTS = st.lists(
    st.tuples(_FLAT_KEYS, _FLAT_VALUES, st.sampled_from([": ", ":  ", ":", " : "])), min_size=1, max_size=6
).map(lambda lines: "\n".join(f"{k}{sep}{v}" for k, v, sep in lines))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_FLAT_TEXTS)
@example('kind: "pi-session-continuity/v2"\nversion: 2\nratio: 0.75\nname: null\nok: true')
@example("on: 1")
@example("a: 010")
@example('a: "x"\na: "y"')
def test_a_flat_mapping_reads_as_the_loaders_read_it(text: str) -> None:
    """``safe_load`` reads a text of ``key: scalar`` lines itself (a Brief's frontmatter): what it
    gives, or the error it raises, is what the pure parser gives (and libyaml, where both read
    the text), with keys YAML reads as bools or null, octal or ``_`` numbers, escapes, a key
    named twice and any other line left to them."""
    assert _outcome(safe_load, text) == _outcome(_pure, text)
    flat = yaml_text._flat_mapping(text)
    if flat is not None:
        assert repr(flat) == repr(yaml.load(text, Loader=FAST_LOADER))
        assert all(type(k) is str for k in flat)
