"""Bad input never ends a run in a traceback: every scenario made by changing a few values of
the examples (extreme numbers, empty, long and odd strings, lists grown or reversed, fields
dropped) is either refused when it loads (a :class:`ScenarioError` naming the file and the
field, exit 2 from the command line) or simulated to the end (a harness error, such as a budget
running out, is an end too).

Each of these once escaped as another exception (issue 16's eighth pass, found by this test's
first form): a prompt padded to 10**11 characters (``MemoryError``), a 300-byte file name
(``ENAMETOOLONG``), a file with a path below it (``FileExistsError``), an empty list of
models (``IndexError``).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.yaml_text import safe_load
from pi_continuity_harness.simulator.simulation import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BASES = [(p.name, safe_load(p.read_text(encoding="utf-8"))) for p in sorted(EXAMPLES.glob("*.yaml"))]
NUMBERS = [0, 1, -1, 3, 1000, 10**6, 2**31, 10**11]
TEXTS = ["", "x", "é" * 10, "a" * 300, "$PROJECT/x", "a.txt/b", "fake/fake-model", "0"]


def _places(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if at:
        yield at
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _places(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _places(value, (*at, index))


def _changed(value: Any, draw: st.DrawFn) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return draw(st.sampled_from(NUMBERS))
    if isinstance(value, str):
        return draw(st.sampled_from([*TEXTS, value * 2]))
    if isinstance(value, list) and value:
        return draw(st.sampled_from([[*value, copy.deepcopy(value[0])], value[::-1], []]))
    if isinstance(value, dict) and value:
        dropped = draw(st.sampled_from(sorted(value, key=str)))
        return {k: v for k, v in value.items() if k != dropped}
    return value


@st.composite
def _scenarios(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name, base = draw(st.sampled_from(BASES))
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        places = list(_places(data))
        where = draw(st.sampled_from(places))
        parent = data
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = _changed(parent[where[-1]], draw)
    return name, data


@pytest.mark.slow(seconds=4)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_scenarios())
def test_a_changed_example_is_refused_at_load_or_simulated_to_the_end(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, dict[str, Any]]
) -> None:
    name, data = case
    try:
        scenario = parse_scenario(data, name)
    except HarnessError as refused:
        assert str(refused).startswith(f"{name}: "), str(refused)
        return
    # A budget that ran out, a confinement refusal: the run ended as the harness says.
    with contextlib.suppress(HarnessError):
        simulate(scenario, workdir=tmp_path_factory.mktemp("fuzz") / "run")


def test_an_empty_list_of_models_is_refused_at_load() -> None:
    """Found by the test above: ``models: []`` ended the run in an ``IndexError``."""
    with pytest.raises(HarnessError) as refused:
        parse_scenario({"name": "m", "models": []}, "m.yaml")
    assert str(refused.value) == "m.yaml: models: at least one model is needed (the first is the default)"
