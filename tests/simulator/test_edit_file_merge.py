"""``edit_file`` with ``merge_json`` deep-merges a JSON object into the object in the file. A file
that holds something else by then (text, a JSON list, bytes that are not UTF-8: an extension or
an earlier operation may have written it) fails that operation with the reason, as a refused
path does, and changes nothing; merging anything but an object is refused at load. Before stop
28 each ended the run with a traceback (found by an audit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.simulation import simulate


def _merge_into(laid_out: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "merge",
        "files": {"x.json": laid_out},
        "operations": [{"edit_file": {"path": "x.json", "json": {"a": {"b": 1}}, "merge_json": True}}],
    }


@pytest.mark.parametrize(
    ("laid_out", "reason"),
    [
        (
            {"text": "not json"},
            "merge_json: the file is not JSON (Expecting value: line 1 column 1 (char 0))",
        ),
        ({"json": [1, 2]}, "merge_json: the file holds a JSON list, not an object"),
        ({"text": '"text"'}, "merge_json: the file holds a JSON str, not an object"),
        ({"text": "[" * 100_000 + "]" * 100_000}, "merge_json: the file's JSON is nested too deeply to read"),
    ],
    ids=["text", "list", "string", "deep"],
)
def test_merging_into_a_file_that_holds_no_json_object_fails_the_operation_and_changes_nothing(
    tmp_path: Path, laid_out: dict[str, Any], reason: str
) -> None:
    result = simulate(parse_scenario(_merge_into(laid_out)), workdir=tmp_path / "run")
    (outcome,) = result.operations
    assert not outcome.ok
    assert outcome.error == f"edit_file 'x.json': {reason}"
    before = simulate(
        parse_scenario({"name": "laid", "files": {"x.json": laid_out}}), workdir=tmp_path / "r2"
    )
    assert (
        Path(result.host.disk.project_dir, "x.json").read_bytes()
        == Path(before.host.disk.project_dir, "x.json").read_bytes()
    )


def test_merging_into_a_json_object_merges_deeply(tmp_path: Path) -> None:
    result = simulate(
        parse_scenario(_merge_into({"json": {"a": {"c": 2}, "d": 3}})), workdir=tmp_path / "run"
    )
    assert [o.ok for o in result.operations] == [True]
    text = Path(result.host.disk.project_dir, "x.json").read_text(encoding="utf-8")
    assert text == '{\n  "a": {\n    "c": 2,\n    "b": 1\n  },\n  "d": 3\n}\n'


@pytest.mark.parametrize("value", [[1, 2], "text", None], ids=["list", "string", "nothing"])
def test_merging_anything_but_an_object_is_refused_at_load(value: Any) -> None:
    spec: dict[str, Any] = {"path": "x.json", "merge_json": True}
    if value is not None:
        spec["json"] = value
    with pytest.raises(ScenarioError) as refused:
        parse_scenario({"name": "m", "operations": [{"edit_file": spec}]}, "m.yaml")
    assert "m.yaml: operations[0].edit_file: " in str(refused.value)
    assert "merge_json merges a JSON object into the file's object, but " in str(refused.value)
