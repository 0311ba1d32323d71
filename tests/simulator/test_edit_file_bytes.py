"""``edit_file`` with ``base64``: a scenario writes a file's exact bytes, which need not be UTF-8.

Why the field exists: pi-blitz-handoff's ``/sh recover`` must report an unreadable recovery file
and keep it (H86, "unreadable reported/retained"), and Inspect must show the "entire unchanged
contents" (H82; ``shared/seeds/pi-blitz-handoff-reference.md``, Status, cancellation and
recovery). An Inspect that decoded a file that is not UTF-8 with replacement characters passed
the suite, since ``text`` is written as UTF-8 and no scenario could plant such a file
(``docs/pi-blitz-handoff.md``, the third independent round).

``base64`` is checked at load like every field (strict decoding; ``kind: file`` only; not with
``text`` or ``json``), each refusal one line naming the file and the field (exit status 2 from
the CLI), and applied by the same :func:`~pi_continuity_harness.scenario.workspace.apply_edit`
on both targets, with the same confinement checks as ``text``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.document import dump_scenario
from pi_continuity_harness.scenario.workspace import RUN_MARKER
from pi_continuity_harness.simulator.simulation import Simulation, simulate

from .helpers import tree_snapshot, victim_beside

#: Not UTF-8: a Latin-1 "é" (0xE9 before a space), a lone 0xFF, and a NUL and CR LF kept as they are.
NOT_UTF8 = b"--- Deferred Prompt 1 of 1 ---\r\ncaf\xe9 \xff\x00 end\r\n"


def _null_extension(pi: ExtensionAPI) -> None:
    """Registers nothing."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _op(edit: dict[str, Any]) -> Any:
    return parse_scenario({"name": "x", "operations": [{"edit_file": edit}]}).operations[0]


def test_base64_writes_the_exact_bytes_and_the_trace_records_them_deterministically(tmp_path: Path) -> None:
    """The file holds the decoded bytes exactly (no newline translation, no encoding), it
    replaces a text file or a directory that was there, an empty ``base64`` makes an empty
    file, and the trace's ``op`` record names the size and SHA-256 of the bytes, the same in
    any run directory."""
    scenario = parse_scenario(
        {
            "name": "bytes",
            "files": {"notes.md": {"text": "was text\n"}, "was-a-dir/f": {"text": "y"}},
            "operations": [
                {"edit_file": {"path": "$AGENT/pi-blitz-handoff/recovery/r.md", "base64": _b64(NOT_UTF8)}},
                {"edit_file": {"path": "notes.md", "base64": _b64(b"\xfe\xff")}},
                {"edit_file": {"path": "was-a-dir", "base64": _b64(b"a\r\nb")}},
                {"edit_file": {"path": "empty.bin", "base64": ""}},
            ],
        }
    )
    traces = []
    for run in ("run", "a-much-longer-run-directory-name"):
        result = simulate(scenario, workdir=tmp_path / run, implementation=_null_extension)
        assert [o.ok for o in result.operations] == [True] * 4, [o.error for o in result.operations]
        project, agent = Path(result.host.disk.project_dir), Path(result.host.disk.agent_dir)
        assert (agent / "pi-blitz-handoff" / "recovery" / "r.md").read_bytes() == NOT_UTF8
        assert (project / "notes.md").read_bytes() == b"\xfe\xff"
        assert (project / "was-a-dir").read_bytes() == b"a\r\nb"
        assert (project / "empty.bin").read_bytes() == b""
        traces.append(result.trace_text())
    assert traces[0] == traces[1]
    ops = [json.loads(line) for line in traces[0].splitlines() if '"op"' in line and "edit_file" in line]
    first = next(r for r in ops if r.get("path", "").endswith("r.md"))
    assert first["bytes"] == len(NOT_UTF8)
    assert first["sha256"] == hashlib.sha256(NOT_UTF8).hexdigest()


def test_a_text_edit_records_no_bytes_in_the_trace(tmp_path: Path) -> None:
    """``bytes`` and ``sha256`` are the exact-bytes edit's alone: a ``text`` edit's record is as
    it was before the field existed (no trace of another scenario changes)."""
    scenario = parse_scenario({"name": "text", "operations": [{"edit_file": {"path": "n.md", "text": "x"}}]})
    trace = simulate(scenario, workdir=tmp_path / "run", implementation=_null_extension).trace_text()
    record = next(json.loads(line) for line in trace.splitlines() if "edit_file" in line and '"op"' in line)
    assert "bytes" not in record and "sha256" not in record, record


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        ({"path": "a", "base64": "not base64!"}, "not valid base64"),
        ({"path": "a", "base64": "//79/"}, "not valid base64"),  # bad padding
        ({"path": "a", "base64": "//79\n"}, "not valid base64"),  # whitespace is refused, not skipped
        ({"path": "a", "base64": "é"}, "not valid base64"),
        ({"path": "a", "base64": "AA==", "text": "x"}, "base64 and text both give the file's content"),
        ({"path": "a", "base64": "AA==", "json": {"k": 1}}, "base64 and json both give the file's content"),
        ({"path": "a", "kind": "directory", "base64": "AA=="}, "for kind file, not kind directory"),
        ({"path": "a", "kind": "absent", "base64": "AA=="}, "for kind file, not kind absent"),
        (
            {"path": "a", "kind": "symlink", "target": "b", "base64": "AA=="},
            "for kind file, not kind symlink",
        ),
    ],
)
def test_bad_base64_is_refused_at_load_naming_the_file_and_the_field(
    edit: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({"name": "bad", "operations": [{"edit_file": edit}]}, "bad.yaml")
    message = str(raised.value)
    assert message.startswith("bad.yaml: operations[0].edit_file.base64: "), message
    assert reason in message, message
    assert "\n" not in message, message


def test_simulate_exits_2_on_bad_base64_naming_the_file_and_field_and_makes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bytes.yaml").write_text(
        "name: bytes\noperations:\n  - edit_file: {path: r.md, base64: 'caf\\xe9'}\n", encoding="utf-8"
    )
    assert main(["simulate", "bytes.yaml", "--workdir", "run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "pi-continuity-harness simulate: bytes.yaml: operations[0].edit_file.base64: not valid base64 ("
    ), err
    assert err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bytes.yaml"]


def test_a_bytes_edit_through_a_link_out_of_the_run_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    """The same apply-time confinement as ``text``: a link an extension planted pointing out of
    the run lets no exact-bytes write through it."""
    victim = victim_beside(tmp_path)
    before = tree_snapshot(victim)
    simulation = Simulation(parse_scenario({"name": "links", "extensions": []}), workdir=tmp_path / "run")
    simulation.start()
    project = Path(simulation.host.disk.project_dir)
    (project / "out").symlink_to(victim, target_is_directory=True)
    refused = simulation.perform(_op({"path": "out/keep.txt", "base64": _b64(NOT_UTF8)}))
    simulation.finish()
    assert not refused.ok and "outside the run" in (refused.error or ""), refused.error
    assert tree_snapshot(victim) == before


def test_a_bytes_path_leaving_the_run_is_refused_at_load() -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(
            {"name": "hostile", "operations": [{"edit_file": {"path": "../victim", "base64": "AA=="}}]},
            "hostile.yaml",
        )
    assert str(raised.value).startswith("hostile.yaml: operations[0].edit_file.path: '../victim': '..'"), str(
        raised.value
    )


# ``files:`` with ``base64``: a file that is not UTF-8 planted before the run, decoded and
# checked by the same code as ``edit_file``'s (``scenario/file_content.py``) and written by
# ``prepare_files``, which both targets call.


def test_rule_files_base64_plants_the_exact_bytes_before_the_run(tmp_path: Path) -> None:
    """The planted file holds the decoded bytes exactly, in the project or under ``$AGENT/``,
    with its directories made; an empty ``base64`` plants an empty file; the scenario dumps and
    loads back the same (``import-session`` and the explorer's minimiser write scenarios)."""
    scenario = parse_scenario(
        {
            "name": "planted",
            "files": {
                "$AGENT/pi-blitz-handoff/recovery/r.md": {"base64": _b64(NOT_UTF8)},
                "deep/er/x.bin": {"base64": _b64(b"\xfe\xff\r\n")},
                "empty.bin": {"base64": ""},
                "notes.md": {"text": "text still works\n"},
            },
        }
    )
    assert parse_scenario(yaml.safe_load(dump_scenario(scenario))) == scenario
    result = simulate(scenario, workdir=tmp_path / "run", implementation=_null_extension)
    project, agent = Path(result.host.disk.project_dir), Path(result.host.disk.agent_dir)
    assert (agent / "pi-blitz-handoff" / "recovery" / "r.md").read_bytes() == NOT_UTF8
    assert (project / "deep" / "er" / "x.bin").read_bytes() == b"\xfe\xff\r\n"
    assert (project / "empty.bin").read_bytes() == b""
    assert (project / "notes.md").read_bytes() == b"text still works\n"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"base64": "not base64!"}, "not valid base64"),
        ({"base64": "//79/"}, "not valid base64"),  # bad padding
        ({"base64": "//79\n"}, "not valid base64"),  # whitespace is refused, not skipped
        ({"base64": "AA==", "text": "x"}, "base64 and text both give the file's content: give one"),
        ({"base64": "AA==", "json": {"k": 1}}, "base64 and json both give the file's content: give one"),
        ({"base64": "AA==", "json": 0}, "base64 and json both give the file's content: give one"),
        ({"base64": "AA==", "directory": True}, "base64 is a file's content, not for directory: true"),
        # three content fields: one line, ``files.r.md.json`` as edit_file's (test_scenario_validation)
    ],
    ids=[
        "alphabet",
        "padding",
        "whitespace",
        "and-text",
        "and-json",
        "and-scalar-json",
        "and-dir",
    ],
)
def test_rule_files_base64_is_refused_at_load_naming_the_file_and_the_field(
    spec: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({"name": "bad", "files": {"r.md": spec}}, "bad.yaml")
    message = str(raised.value)
    assert message.startswith("bad.yaml: files.r.md.base64: "), message
    assert reason in message, message
    assert "\n" not in message, message


def test_rule_files_base64_simulate_exits_2_naming_the_file_and_field_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the CLI: exit status 2, one line naming the file and the field, and nothing on disk
    changed, not even the earlier run directory ``--workdir`` names."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "planted.yaml").write_text(
        "name: planted\nfiles:\n  r.md: {base64: 'caf\\xe9'}\n", encoding="utf-8"
    )
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_MARKER).write_text("", encoding="utf-8")
    (tmp_path / "run" / "trace.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree_snapshot(tmp_path)
    assert main(["simulate", "planted.yaml", "--workdir", "run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "pi-continuity-harness simulate: planted.yaml: files.r.md.base64: not valid base64 ("
    ), err
    assert err.count("\n") == 1, err
    assert tree_snapshot(tmp_path) == before


def test_rule_files_base64_path_leaving_the_run_is_refused_at_load() -> None:
    """The same load-time confinement as every planted file: no ``..``, no absolute path."""
    for path in ("../victim", "/tmp/victim"):
        with pytest.raises(ScenarioError) as raised:
            parse_scenario({"name": "hostile", "files": {path: {"base64": "AA=="}}}, "hostile.yaml")
        assert str(raised.value).startswith(f"hostile.yaml: files: {path!r}: "), str(raised.value)
        assert "\n" not in str(raised.value)


# ``json: null``: a file holding the JSON null (``files:`` and ``edit_file``), not "no json".


def test_rule_json_null_is_a_file_holding_null_written_and_dumped_by_both_specs(tmp_path: Path) -> None:
    """``json: null`` writes ``null`` (``write_json``, as any JSON value): planted by
    ``prepare_files`` and written by ``apply_edit``, which both targets call. Before, ``files:``
    refused it (a file has exactly one of ...) and ``edit_file`` wrote an empty file. The dump
    keeps it (``import-session`` and the explorer's minimiser write scenarios), and a spec with
    ``json: null`` is not equal to one without ``json``."""
    data = {
        "name": "null",
        "files": {"planted.json": {"json": None}, "$AGENT/a.json": {"json": None}},
        "operations": [{"edit_file": {"path": "edited.json", "json": None}}],
    }
    scenario = parse_scenario(data)
    dumped = dump_scenario(scenario)
    assert yaml.safe_load(dumped) == data, dumped
    again = parse_scenario(yaml.safe_load(dumped))
    assert again == scenario
    assert again.files["planted.json"].json_given and again.operations[0].edit_file.json_given
    assert (
        scenario.operations[0]
        != parse_scenario({"name": "x", "operations": [{"edit_file": {"path": "edited.json"}}]}).operations[0]
    )
    result = simulate(scenario, workdir=tmp_path / "run", implementation=_null_extension)
    project, agent = Path(result.host.disk.project_dir), Path(result.host.disk.agent_dir)
    assert (project / "planted.json").read_bytes() == b"null\n"
    assert (agent / "a.json").read_bytes() == b"null\n"
    assert (project / "edited.json").read_bytes() == b"null\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"files": {"r.md": {"text": "x", "json": None}}},
            "files.r.md.json: json and text both give the file's content: give one",
        ),
        (
            {"files": {"r.md": {"json": None, "base64": "AA=="}}},
            "files.r.md.base64: base64 and json both give the file's content: give one",
        ),
        (
            {"files": {"r.md": {"json": None, "directory": True}}},
            "files.r.md.directory: directory: true and json both given: a directory has no content, give one",
        ),
        (
            {"operations": [{"edit_file": {"path": "a", "text": "x", "json": None}}]},
            "operations[0].edit_file.json: json and text both give the file's content: give one",
        ),
        (
            {"operations": [{"edit_file": {"path": "a", "json": None, "base64": "AA=="}}]},
            "operations[0].edit_file.base64: base64 and json both give the file's content: give one",
        ),
        (
            {"operations": [{"edit_file": {"path": "a", "kind": "absent", "json": None}}]},
            "operations[0].edit_file.json: json is a file's content, for kind file, not kind absent",
        ),
        (
            {"operations": [{"edit_file": {"path": "a", "kind": "symlink", "target": "b", "json": None}}]},
            "operations[0].edit_file.json: kind symlink takes a target, not file content",
        ),
        (
            {"operations": [{"edit_file": {"path": "a", "json": None, "merge_json": True}}]},
            "operations[0].edit_file: merge_json merges a JSON object into the file's object, but json is null",
        ),
    ],
    ids=[
        "files-text",
        "files-base64",
        "files-dir",
        "edit-text",
        "edit-base64",
        "edit-absent",
        "edit-link",
        "merge",
    ],
)
def test_rule_json_null_is_content_refused_beside_other_content(data: dict[str, Any], message: str) -> None:
    """Being content, a given ``json: null`` is refused where other content is, one line naming
    the file and the field. Before, it counted as not given and the other content won silently."""
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({"name": "bad", **data}, "bad.yaml")
    assert str(raised.value) == f"bad.yaml: {message}"
