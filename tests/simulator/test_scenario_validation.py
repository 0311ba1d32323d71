"""Scenario files: malformed YAML and invalid fields are refused as ``file: field: reason``;
nothing on disk is touched; ``prepare_workdir`` refuses directories that are not runs."""

from __future__ import annotations

import errno
import io
import os
import re
import threading
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import AfterValidator, BaseModel, TypeAdapter, ValidationError

from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.features import blitz_oracle
from pi_continuity_harness.scenario import load_scenario, operations, parse_scenario
from pi_continuity_harness.scenario.document import MAX_SCENARIO_BYTES, dump_scenario, format_validation_error
from pi_continuity_harness.scenario.regex_check import regex_problem
from pi_continuity_harness.scenario.workspace import RUN_MARKER, WorkdirError, prepare_workdir

from .helpers import EXAMPLES, tree_snapshot


def refuse(tmp_path: Path, text: str, name: str = "bad.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    return str(raised.value).replace(str(path), "bad.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: bad\noperations:\n  - prompt: hi\n  - compact\n  - prompt: {text: x, chars: 0}\n",
            "bad.yaml: operations[2].prompt.chars: Input should be greater than or equal to 1",
        ),
        ("name: bad\nfoo: 1\n", "bad.yaml: foo: Extra inputs are not permitted"),
        (
            "name: bad\noperations: [{frobnicate: 1}]\n",
            "bad.yaml: operations[0]: an operation is a mapping with exactly one of: prompt, command, compact, abort, "
            "clear_queue, reload, restart, crash, set_model, set_auto_compaction, set_auto_retry, set_steering_mode, "
            "set_follow_up_mode, set_session_name, cycle_model, set_thinking_level, cycle_thinking_level, "
            "new_session, edit_file, fork, clone, switch_session, tree, bash",
        ),
        (
            "name: bad\noperations: [{set_model: fake/other}]\n",
            "bad.yaml: operations[0].set_model: 'fake/other' is not one of the models ['fake/fake-model']",
        ),
        (
            "name: bad\nmodels: [{id: fake/x, context_window: 0}]\n",
            "bad.yaml: models[0].context_window: Input should be greater than 0",
        ),
        (
            "name: bad\nmodel: {agent: [{text: a, error: {status: 400, message: m}}]}\n",
            "bad.yaml: model.agent[0]: an error reply has no text or tool calls",
        ),
        (
            "name: bad\noperations: [{command: {text: /x, answers: [{confirm: true, input: x}]}}]\n",
            "bad.yaml: operations[0].command.answers[0]: "
            "a dialog answer has exactly one of: select, input, confirm, cancel",
        ),
        (
            "name: bad\nmodel: {agent: [{text: a, during: [{prompt: {chars: -1}}]}]}\n",
            "bad.yaml: model.agent[0].during[0].prompt.chars: Input should be greater than or equal to 1",
        ),
        (
            "name: bad\nfaults: {fs: [{path: $PROJECT/x, errno: EFOO}]}\n",
            "bad.yaml: faults.fs[0].errno: Input should be 'EIO', 'ENOSPC', 'EACCES', 'EROFS' or 'ENOTDIR'",
        ),
        (
            "name: bad\nfiles: {../x: {text: a}}\n",
            "bad.yaml: files: '../x': '..' is refused; paths stay inside the run",
        ),
        (  # a key that looks like pydantic's own location steps is still named
            "name: bad\nfiles: {'src/function[1].py': {text: 3}}\n",
            "bad.yaml: files.src/function[1].py.text: Input should be a valid string",
        ),
        ("- 1\n- 2\n", "bad.yaml: (top level): a scenario is a mapping, got list"),
        (
            "name: bad\noperations: [\n",
            "bad.yaml: line 3, column 1: invalid YAML: expected the node content, but found '<stream end>'",
        ),
        (
            "name: bad\n\tx: 1\n",
            "bad.yaml: line 2, column 1: invalid YAML: found character '\\t' that cannot start any token",
        ),
    ],
)
def test_invalid_scenarios_name_file_field_and_reason(tmp_path: Path, text: str, message: str) -> None:
    assert refuse(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: d\nsettings:\n  global: {when: 2024-01-01}\noperations: [{prompt: hi}]\n",
            "bad.yaml: settings.global.when: a YAML timestamp (2024-01-01) is not JSON data: "
            "quote it to keep it as text",
        ),
        (
            "name: d\nfiles: {a.json: {json: {b: !!binary aGVsbG8=}}}\n",
            "bad.yaml: files.a.json.json.b: binary data (!!binary) is not JSON data: write it as a string",
        ),
        (
            "name: d\noperations: [{edit_file: {path: x.json, json: {s: !!set {a, b}}}}]\n",
            "bad.yaml: operations[0].edit_file.json.s: a set (!!set) is not JSON data: write it as a list",
        ),
        (
            "name: d\nsettings: {project: {compaction: {reserveTokens: .nan}}}\n",
            "bad.yaml: settings.project.compaction.reserveTokens: NaN is not JSON data "
            "(a JSON file holding it is refused by Pi's JSON.parse)",
        ),
        (
            "name: d\nmodel: {agent: [{tool_calls: [{name: x, arguments: {n: -.inf}}]}]}\n",
            "bad.yaml: model.agent[0].tool_calls[0].arguments.n: -Infinity is not JSON data "
            "(a JSON file holding it is refused by Pi's JSON.parse)",
        ),
        (
            "name: d\nsettings: {global: {1: one}}\n",
            "bad.yaml: settings.global: the key 1 is not a string (YAML reads it as int): "
            "JSON keys are strings, quote it",
        ),
        (
            "name: d\nfaults: {crash: [{after: {kind: op, name: x, where: {at: 2024-01-01 10:00:00}}}]}\n",
            "bad.yaml: faults.crash[0].after.where.at: a YAML timestamp (2024-01-01T10:00:00) is not JSON "
            "data: quote it to keep it as text",
        ),
    ],
)
def test_a_value_that_is_not_json_data_is_refused_at_load_naming_the_field_and_its_type(
    tmp_path: Path, text: str, message: str
) -> None:
    """Before: the value passed validation (settings, a file's json and tool arguments are any
    data) and the run ended in ``TypeError: Object of type date is not JSON serializable`` after
    its directory was made (NaN was written as ``NaN``, which Pi's JSON.parse refuses)."""
    assert refuse(tmp_path, text) == message


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "s.json",
            '{"name": "s", "operations": [{"prompt": "x \\ud800"}]}',
            "bad.yaml: operations[0].prompt: the text has a lone surrogate (U+D800) at character 3, "
            "which UTF-8 cannot encode",
        ),
        (
            "s.yaml",
            'name: s\nfiles: {a.txt: {text: "x\\udfff"}}\n',
            "bad.yaml: files.a.txt.text: the text has a lone surrogate (U+DFFF) at character 2, "
            "which UTF-8 cannot encode",
        ),
        (
            "s.yaml",
            'name: s\nmodel: {agent: [{text: "\\ud800"}]}\n',
            "bad.yaml: model.agent[0].text: the text has a lone surrogate (U+D800) at character 1, "
            "which UTF-8 cannot encode",
        ),
        (
            "s.yaml",
            'name: s\ndescription: "bad \\ud800"\n',
            "bad.yaml: description: the text has a lone surrogate (U+D800) at character 5, "
            "which UTF-8 cannot encode",
        ),
        (
            "s.yaml",
            'name: s\nsettings: {global: {"k\\ud800": 1}}\n',
            "bad.yaml: settings.global: the key 'k\\ud800': the text has a lone surrogate (U+D800) at "
            "character 2, which UTF-8 cannot encode",
        ),
    ],
)
def test_a_string_utf8_cannot_encode_is_refused_at_load_naming_the_field(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    """Before: a lone surrogate in a prompt, a file's text or a reply ended the run in a
    ``UnicodeEncodeError`` traceback (an empty trace left behind); in ``description`` the run
    passed and ``--html`` crashed leaving a 0-byte page. A pair (``\\ud83d\\ude00``) is text."""
    assert refuse(tmp_path, text, name) == message
    paired = tmp_path / f"paired-{name}"
    paired.write_text(re.sub(r"\\ud[89a-f]\w\w", r"\\ud83d\\ude00", text), encoding="utf-8")
    assert load_scenario(paired).name == "s"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: s\nseed: true\n", "bad.yaml: seed: true is a boolean, not a number"),
        (
            "name: s\nmodels: [{id: fake/m, context_window: true}]\n",
            "bad.yaml: models[0].context_window: true is a boolean, not a number",
        ),
        (
            "name: s\nmodels: [{id: fake/m, context_window: 9, max_tokens: false}]\n",
            "bad.yaml: models[0].max_tokens: false is a boolean, not a number",
        ),
        (
            "name: s\noperations: [{prompt: {text: x, chars: true}}]\n",
            "bad.yaml: operations[0].prompt.chars: true is a boolean, not a number",
        ),
        (
            "name: s\noperations: [{tree: {to: true}}]\n",
            "bad.yaml: operations[0].tree.to: true is a boolean, not a number",
        ),
        (
            "name: s\nmodel: {agent: [{text: x, usage: {input: true}}]}\n",
            "bad.yaml: model.agent[0].usage.input: true is a boolean, not a number",
        ),
        (
            "name: s\nmodel: {agent: [{text: x, latency_ms: true}]}\n",
            "bad.yaml: model.agent[0].latency_ms: true is a boolean, not a number",
        ),
        (
            "name: s\nmodel: {reasoning_tokens: {high: true}}\n",
            "bad.yaml: model.reasoning_tokens.high: true is a boolean, not a number",
        ),
        (
            "name: s\nfaults: {fs: [{path: $PROJECT/x, times: false}]}\n",
            "bad.yaml: faults.fs[0].times: false is a boolean, not a number",
        ),
        (
            "name: s\nfaults: {crash: [{after: {kind: op, name: x, occurrence: true}}]}\n",
            "bad.yaml: faults.crash[0].after.occurrence: true is a boolean, not a number",
        ),
        (
            "name: s\nbudget: {virtual_seconds: true}\n",
            "bad.yaml: budget.virtual_seconds: true is a boolean, not a number",
        ),
    ],
)
def test_a_boolean_is_no_number(tmp_path: Path, text: str, message: str) -> None:
    """Python's bool is an int, so pydantic read ``seed: true`` as seed 1 and
    ``context_window: true`` as a one-token window, and the run went on silently; a number
    written as a whole float still reads (``context_window: 2000.0``)."""
    assert refuse(tmp_path, text) == message
    assert (
        load_scenario_text(tmp_path, "name: s\nmodels: [{id: fake/m, context_window: 2000.0}]\n")
        .models[0]
        .context_window
        == 2000
    )


def load_scenario_text(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "good.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: s\nmodel: {agent: [{text: x, during: [abort, {set_model: fake/nope}]}]}\n",
            "bad.yaml: model.agent[0].during[1].set_model: 'fake/nope' is not one of the models ['fake/fake-model']",
        ),
        (
            "name: s\nmodel: {extension: [{kind: valid, during: [{set_model: fake/nope}]}]}\n",
            "bad.yaml: model.extension[0].during[0].set_model: 'fake/nope' is not one of the models "
            "['fake/fake-model']",
        ),
        (
            "name: s\nmodel: {default_agent: {text: x, during: [{set_model: fake/nope}]}}\n",
            "bad.yaml: model.default_agent.during[0].set_model: 'fake/nope' is not one of the models "
            "['fake/fake-model']",
        ),
        (
            "name: s\nfaults: {inject: [{after: {kind: op, name: x}, operations: [{set_model: fake/nope}]}]}\n",
            "bad.yaml: faults.inject[0].operations[0].set_model: 'fake/nope' is not one of the models "
            "['fake/fake-model']",
        ),
    ],
)
def test_a_set_model_anywhere_names_a_declared_model(tmp_path: Path, text: str, message: str) -> None:
    """Only a top-level ``set_model`` was checked: in a held reply's ``during`` or a fault's injected
    operations an undeclared model loaded, and the run went on with that operation failing
    ``Model not found``, seen in the trace alone."""
    assert refuse(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'name: s\nmodel: {agent: [{tool_calls: [{name: bash, arguments: {command: "echo {{match:([}}"}}]}]}\n',
            "bad.yaml: model.agent[0].tool_calls[0].arguments: command: '{{match:([}}' is not a regular "
            "expression: unterminated character set at position 1",
        ),
        (
            "name: s\nmodel: {summary: [{tool_calls: [{name: write, arguments: "
            '{path: x, content: {a: [1, "{{match:a(b}}"]}}}]}]}\n',
            "bad.yaml: model.summary[0].tool_calls[0].arguments: content.a[1]: '{{match:a(b}}' is not a "
            "regular expression: missing ), unterminated subpattern at position 1",
        ),
    ],
)
def test_a_match_placeholder_holds_a_regular_expression(tmp_path: Path, text: str, message: str) -> None:
    """Before: it loaded, and the reply that used it failed with the ``re.error`` as a provider
    error Pi retried, so the run played a reply the script did not write."""
    assert refuse(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: s\nsettings: {global: {x: " + "1" * 4301 + "}}\n",
            "bad.yaml: line 2, column 24: invalid YAML: an integer of 4,301 characters: more than the 4,300 "
            "digits Python reads and writes as a number",
        ),
        (
            '{"name": "s", "seed": ' + "9" * 5000 + "}",
            "bad.yaml: line 1, column 23: invalid YAML: an integer of 5,000 characters: more than the 4,300 "
            "digits Python reads and writes as a number",
        ),
        (
            "name: s\nfiles: {a.json: {json: {x: 0x" + "f" * 4000 + "}}}\n",
            "bad.yaml: files.a.json.json.x: an integer of 16,000 bits: more than the 4,300 digits Python "
            "reads and writes as a number",
        ),
    ],
)
def test_an_integer_longer_than_python_converts_is_refused_naming_where(
    tmp_path: Path, text: str, message: str
) -> None:
    """Before: ``ValueError: Exceeds the limit (4300 digits) for integer string conversion`` in a
    traceback, exit 1: while reading a decimal one, or (a hexadecimal one, which Python reads past
    the limit) while writing the settings file when the run had begun. 4,300 digits still read."""
    assert refuse(tmp_path, text) == message
    path = tmp_path / "long.yaml"
    path.write_text("name: s\nsettings: {global: {x: " + "1" * 4300 + "}}\n", encoding="utf-8")
    assert load_scenario(path).settings.global_["x"] == int("1" * 4300)


@pytest.mark.parametrize("op", ["write", "replace", "mkdir", "remove"])
def test_a_corrupt_fault_is_on_a_read(tmp_path: Path, op: str) -> None:
    """``corrupt`` halves the file right before a read. On any other operation the fault was traced
    as fired and changed nothing (the operation then writes, replaces or removes the file, and a
    file not there yet was left alone), so the scenario did not test what it said."""
    text = f"name: s\nfaults: {{fs: [{{op: {op}, path: $PROJECT/*, effect: corrupt}}]}}\n"
    assert refuse(tmp_path, text) == (
        f"bad.yaml: faults.fs[0]: effect corrupt halves a file right before it is read: op {op} would "
        "change nothing (give op: read, or any)"
    )


@pytest.mark.parametrize(
    ("rules", "field"),
    [
        ("crash: [{after: {kind: entri, name: compaction}}]", "faults.crash[0].after.kind"),
        ("inject: [{after: {kind: Event, name: x}, operations: [abort]}]", "faults.inject[0].after.kind"),
        ("tamper: [{after: {kind: '', name: x}, path: $PROJECT/x}]", "faults.tamper[0].after.kind"),
    ],
)
def test_a_fault_rule_matches_a_kind_of_record_the_trace_writes(
    tmp_path: Path, rules: str, field: str
) -> None:
    """Any ``kind`` loaded: a misspelt one made a rule that never fired, and the run went on as if
    the scenario had no such fault."""
    message = refuse(tmp_path, f"name: s\nfaults: {{{rules}}}\n")
    assert message.startswith(f"bad.yaml: {field}: ")
    assert message.endswith(
        "is no kind of trace record (one of: op, host, event, session, call, ui, model, entry, fs, fault)"
    )


def test_scenario_data_from_python_must_be_json_data_too() -> None:
    """An imported session (Python's json reads ``NaN``) or a feature builds the data itself."""
    with pytest.raises(ScenarioError, match=r"^s: settings\.global\.x: Infinity is not JSON data"):
        parse_scenario({"name": "s", "settings": {"global": {"x": float("inf")}}}, "s")


def test_pydantic_union_member_steps_are_left_out_of_the_field_path() -> None:
    class Model(BaseModel):
        x: Annotated[int, AfterValidator(lambda v: v)] | list[int]

    with pytest.raises(ValidationError) as raised:
        Model.model_validate({"x": "a"})
    assert format_validation_error("s.yaml", raised.value).splitlines() == [
        "s.yaml: x: Input should be a valid integer, unable to parse string as an integer",
        "s.yaml: x: Input should be a valid list",
    ]


_BOTH = "json and text both give the file's content: give one"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: bad\noperations:\n  - edit_file: {path: a.json, text: x, json: {k: 1}}\n",
            f"bad.yaml: operations[0].edit_file.json: {_BOTH}",
        ),
        (  # merge_json merges json: the text beside it was silently dropped
            "name: bad\noperations:\n"
            "  - edit_file: {path: .pi/settings.json, text: x, json: {k: 1}, merge_json: true}\n",
            f"bad.yaml: operations[0].edit_file.json: {_BOTH}",
        ),
        (  # a scalar json is content too
            "name: bad\noperations:\n  - edit_file: {path: a.json, text: '', json: 0}\n",
            f"bad.yaml: operations[0].edit_file.json: {_BOTH}",
        ),
        (  # one mistake, one line, with base64 given as well
            "name: bad\noperations:\n  - edit_file: {path: a, text: x, json: 1, base64: AA==}\n",
            f"bad.yaml: operations[0].edit_file.json: {_BOTH}",
        ),
        (
            "name: bad\nmodel: {agent: [{text: a, during: [{edit_file: {path: a, text: x, json: [1]}}]}]}\n",
            f"bad.yaml: model.agent[0].during[0].edit_file.json: {_BOTH}",
        ),
        (
            "name: bad\nfaults: {inject: [{after: {kind: op, name: prompt},\n"
            "  operations: [{edit_file: {path: a, text: x, json: 1}}]}]}\n",
            f"bad.yaml: faults.inject[0].operations[0].edit_file.json: {_BOTH}",
        ),
    ],
    ids=["object", "merge_json", "scalar", "and-base64", "during", "inject"],
)
def test_rule_an_edit_file_gives_one_content_field_text_and_json_together_are_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    """``text`` and ``json`` together: the file was written from ``json`` and the ``text``
    silently dropped. One of them is the mistake, so the scenario is refused at load naming the
    file and the field, one line, and nothing is written (``refuse``)."""
    assert refuse(tmp_path, text) == message


def test_rule_an_edit_file_gives_one_content_field_simulate_exits_2_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the CLI: exit status 2, one error line naming the file and the field, and nothing on
    disk changed, not even the run directory of an earlier run that ``--workdir`` names (a run
    directory is emptied before a run only once the scenario is valid)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "both.yaml").write_text(
        "name: both\noperations:\n  - edit_file: {path: a.json, text: x, json: {k: 1}}\n", encoding="utf-8"
    )
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_MARKER).write_text("", encoding="utf-8")
    (tmp_path / "run" / "trace.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree_snapshot(tmp_path)
    assert main(["simulate", "both.yaml", "--workdir", "run"]) == 2
    err = capsys.readouterr().err
    assert err == f"pi-continuity-harness simulate: both.yaml: operations[0].edit_file.json: {_BOTH}\n", err
    assert tree_snapshot(tmp_path) == before


_NOT_A_FILE = "is a file's content, for kind file, not kind"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            "{path: a, kind: directory, text: x}",
            f"operations[0].edit_file.text: text {_NOT_A_FILE} directory",
        ),
        ("{path: a, kind: absent, text: ''}", f"operations[0].edit_file.text: text {_NOT_A_FILE} absent"),
        (
            "{path: a, kind: directory, json: {k: 1}}",
            f"operations[0].edit_file.json: json {_NOT_A_FILE} directory",
        ),
        ("{path: a, kind: absent, json: 0}", f"operations[0].edit_file.json: json {_NOT_A_FILE} absent"),
        (  # one mistake, one line: text and json both dropped
            "{path: a, kind: directory, text: x, json: 1}",
            f"operations[0].edit_file.text: text {_NOT_A_FILE} directory",
        ),
        (  # base64 was refused already: one line, not two
            "{path: a, kind: absent, text: x, base64: AA==}",
            f"operations[0].edit_file.text: text {_NOT_A_FILE} absent",
        ),
    ],
    ids=["dir-text", "absent-text", "dir-json", "absent-scalar-json", "dir-both", "absent-and-base64"],
)
def test_rule_edit_file_content_is_for_kind_file_text_and_json_with_a_directory_or_absent_are_refused(
    tmp_path: Path, edit: str, message: str
) -> None:
    """``kind: directory`` and ``kind: absent`` write no file, so a ``text`` or ``json`` beside
    them was silently dropped (``base64`` was refused already): refused at load like ``base64``,
    naming the file and the field, one line, nothing written."""
    assert refuse(tmp_path, f"name: bad\noperations:\n  - edit_file: {edit}\n") == f"bad.yaml: {message}"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ("{path: a, kind: symlink, target: b, text: x, json: {k: 1}}", "text"),
        ("{path: a, kind: symlink, target: b, text: x, json: 1, merge_json: true}", "text"),
        ("{path: a, kind: symlink, target: b, text: x, base64: AA==}", "text"),
        ("{path: a, kind: symlink, target: b, json: false}", "json"),  # false == False passed
        ("{path: a, kind: symlink, target: b, json: 0}", "json"),  # and so did 0
    ],
    ids=["text-json", "text-json-merge", "text-base64", "false", "zero"],
)
def test_rule_edit_file_a_link_takes_no_content_one_line_per_mistake(
    tmp_path: Path, edit: str, field: str
) -> None:
    """A link has no content: ``text`` and ``json`` together gave one line per field, and
    ``json: false`` or ``0`` passed (they equal ``False``, which stood for "not given")."""
    assert refuse(tmp_path, f"name: bad\noperations:\n  - edit_file: {edit}\n") == (
        f"bad.yaml: operations[0].edit_file.{field}: kind symlink takes a target, not file content"
    )


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("{text: x, json: {k: 1}}", f"files.r.md.json: {_BOTH}"),
        ("{text: '', json: 0}", f"files.r.md.json: {_BOTH}"),
        ("{text: x, json: 1, base64: AA==}", f"files.r.md.json: {_BOTH}"),  # one line, not two
        ("{text: x, json: 1, directory: true}", f"files.r.md.json: {_BOTH}"),
        ("{}", "files.r.md: a file has exactly one of: text, json, base64, directory: true"),  # kept
    ],
    ids=["object", "scalar", "and-base64", "and-directory", "none"],
)
def test_rule_files_a_file_gives_one_content_field_text_and_json_together_name_the_field(
    tmp_path: Path, file: str, message: str
) -> None:
    """``text`` and ``json`` together were refused as ``files.<path>: a file has exactly one
    of: ...``, naming no field: now as ``edit_file``'s are, naming ``json``. A file given no
    content at all keeps the "exactly one of" error (no field is the mistake there)."""
    assert refuse(tmp_path, f"name: bad\nfiles:\n  r.md: {file}\n") == f"bad.yaml: {message}"


@pytest.mark.parametrize(
    ("file", "field"),
    [
        ("{directory: true, text: x}", "text"),
        ("{directory: true, json: {k: 1}}", "json"),
        ("{directory: true, json: false}", "json"),
        ("{directory: true, text: x, base64: AA==}", "text"),  # one line, not two
    ],
    ids=["text", "json", "false", "and-base64"],
)
def test_rule_files_a_directory_takes_no_content_naming_the_field(
    tmp_path: Path, file: str, field: str
) -> None:
    """``directory: true`` beside ``text`` or ``json`` was the same unnamed "exactly one of"
    error: now it names ``directory`` (``base64`` there names itself already)."""
    assert refuse(tmp_path, f"name: bad\nfiles:\n  r.md: {file}\n") == (
        f"bad.yaml: files.r.md.directory: directory: true and {field} both given: "
        "a directory has no content, give one"
    )


@pytest.mark.parametrize(
    ("scenario", "where"),
    [
        (
            "name: dropped\noperations:\n  - edit_file: {path: a.json, kind: directory, json: {k: 1}}\n",
            f"operations[0].edit_file.json: json {_NOT_A_FILE} directory",
        ),
        ("name: dropped\nfiles:\n  a.json: {text: x, json: {k: 1}}\n", f"files.a.json.json: {_BOTH}"),
        (
            "name: dropped\noperations:\n  - edit_file: {path: a.json, text: x, json: null}\n",
            f"operations[0].edit_file.json: {_BOTH}",
        ),
    ],
    ids=["edit-file-directory-json", "files-text-json", "edit-file-text-json-null"],
)
def test_rule_file_content_refusals_simulate_exits_2_one_line_and_change_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    scenario: str,
    where: str,
) -> None:
    """From the CLI: exit status 2, one stderr line naming the file and the field, and nothing
    on disk changed, not even the earlier run directory ``--workdir`` names."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dropped.yaml").write_text(scenario, encoding="utf-8")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_MARKER).write_text("", encoding="utf-8")
    (tmp_path / "run" / "trace.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree_snapshot(tmp_path)
    assert main(["simulate", "dropped.yaml", "--workdir", "run"]) == 2
    err = capsys.readouterr().err
    assert err == f"pi-continuity-harness simulate: dropped.yaml: {where}\n", err
    assert tree_snapshot(tmp_path) == before


def test_every_problem_is_listed_one_per_line(tmp_path: Path) -> None:
    message = refuse(tmp_path, "name: 'bad name'\nmode: web\nseed: x\n")
    lines = message.splitlines()
    assert [line.split(": ")[1] for line in lines] == ["name", "seed", "mode"]
    assert all(line.startswith("bad.yaml: ") for line in lines)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "missing.yaml")
    with pytest.raises(ScenarioError, match="is a directory"):
        load_scenario(tmp_path)
    (tmp_path / "latin.yaml").write_bytes(b"name: \xff\n")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(tmp_path / "latin.yaml")


def _unreadable(tmp_path: Path, kind: str) -> Path:
    """A path ``load_scenario`` cannot read as a scenario, of the ``kind`` the audit found."""
    (tmp_path / "ok.yaml").write_text("name: ok\n", encoding="utf-8")
    if kind == "loop":
        (tmp_path / "loop").symlink_to("loop")
        return tmp_path / "loop"
    if kind == "through-a-file":
        return tmp_path / "ok.yaml" / "x"
    if kind == "name-too-long":
        return tmp_path / ("a" * 300)
    if kind == "too-large":  # sparse: no disk is used
        with (tmp_path / "big.yaml").open("wb") as big:
            big.truncate(MAX_SCENARIO_BYTES + 1)
        return tmp_path / "big.yaml"
    assert kind == "device"
    return Path(os.devnull)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("loop", "cannot open it: Too many levels of symbolic links"),
        ("through-a-file", "cannot open it: Not a directory"),
        ("name-too-long", "cannot open it: File name too long"),
        ("too-large", "larger than 64 MiB, the most a scenario file may be"),
        ("device", "not a regular file (a device, FIFO or socket), not a scenario file"),
    ],
)
def test_a_path_that_is_no_readable_scenario_file_is_refused_with_the_reason(
    tmp_path: Path, kind: str, reason: str
) -> None:
    """Before: an ``OSError`` traceback (ELOOP, ENOTDIR, ENAMETOOLONG), a file of any size read
    whole (``/dev/zero`` until ``MemoryError``), a device read as if it were a file."""
    path = _unreadable(tmp_path, kind)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == f"{path}: {reason}"


def test_a_file_the_user_may_not_read_is_refused_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES (made by hand: the tests may run as root, who reads any file). Before: a
    ``PermissionError`` traceback."""
    path = tmp_path / "secret.yaml"
    path.write_text("name: secret\n", encoding="utf-8")

    def refuse_open(name: Any, *args: Any, **kwargs: Any) -> int:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(name))

    monkeypatch.setattr(os, "open", refuse_open)
    monkeypatch.setattr(io, "open", refuse_open)  # the old reader's way in
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == f"{path}: cannot open it: Permission denied"


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    """Before: opening a FIFO waited for a writer, forever. The load runs in a thread here so
    that the old behaviour fails the test (and a writer then releases the thread)."""
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_scenario(fifo)
            outcome.append(None)
        except BaseException as error:  # reported below
            outcome.append(error)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # release the old reader: a writer that closes at once
        os.close(os.open(fifo, os.O_WRONLY))
        reader.join(timeout=10)
        pytest.fail("load_scenario waited on the FIFO")
    assert isinstance(outcome[0], ScenarioError)
    assert str(outcome[0]) == f"{fifo}: not a regular file (a device, FIFO or socket), not a scenario file"


def test_bare_word_operations_and_short_forms() -> None:
    scenario = parse_scenario(
        {
            "name": "short",
            "operations": [
                "abort",
                "reload",
                "restart",
                "crash",
                "compact",
                "new_session",
                {"prompt": "hi"},
                {"command": "/x"},
            ],
        }
    )
    assert [type(op).__name__ for op in scenario.operations] == [
        "AbortOp",
        "ReloadOp",
        "RestartOp",
        "CrashOp",
        "CompactOp",
        "NewSessionOp",
        "PromptOp",
        "CommandOp",
    ]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_examples_load_and_round_trip(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert parse_scenario(__import__("yaml").safe_load(dump_scenario(scenario))) == scenario


def test_prepare_workdir_refuses_a_non_empty_directory_that_is_not_a_run(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(WorkdirError, match="not a harness run directory"):
        prepare_workdir(precious)
    assert (precious / "notes.txt").read_text(encoding="utf-8") == "keep me"
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(WorkdirError, match="not a directory"):
        prepare_workdir(a_file)


def test_prepare_workdir_creates_and_empties_run_directories(tmp_path: Path) -> None:
    root = prepare_workdir(tmp_path / "run")
    assert (root / RUN_MARKER).exists()
    (root / "sub").mkdir()
    (root / "sub" / "old.txt").write_text("old", encoding="utf-8")
    (root / "trace.jsonl").write_text("old", encoding="utf-8")
    prepare_workdir(root)
    assert sorted(p.name for p in root.iterdir()) == [RUN_MARKER]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert prepare_workdir(empty) == empty.resolve()


def test_emptying_a_run_directory_removes_links_not_what_they_point_at(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me", encoding="utf-8")
    root = prepare_workdir(tmp_path / "run")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    (root / "linked-file").symlink_to(outside / "keep.txt")
    prepare_workdir(root)
    assert sorted(p.name for p in root.iterdir()) == [RUN_MARKER]
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            'name: s\nmodel: {agent: [{tool_calls: [{name: bash, arguments: {command: "echo {{match:(a|a)*b}}"}}]}]}\n',
            "model.agent[0].tool_calls[0].arguments: command: '{{match:(a|a)*b}}' is",
        ),
        (
            "name: s\noperations:\n  - command: {text: /x, answers: [{select: 'y', when: '(\\w+\\s?)*$'}]}\n",
            "when: '(\\\\w+\\\\s?)*$' is",
        ),
        (
            "name: s\noperations:\n  - command: {text: /x, answers: [{select: '/(a+)+z/'}]}\n",
            "select: '/(a+)+z/' is",
        ),
    ],
)
def test_rule_a_scenario_regular_expression_cannot_backtrack_for_ever(
    tmp_path: Path, text: str, field: str
) -> None:
    """``{{match:(a|a)*b}}`` against a prompt of 110 ``a``s ran past a 60 s timeout: Python's
    ``re`` backtracks exponentially on a repeat of something that matches in more than one way,
    and no budget of the simulator counts a search's time. Such a pattern (in a tool argument's
    placeholder, a dialog answer's ``when`` or ``select: /.../``) is refused at load, naming it."""
    message = refuse(tmp_path, text)
    assert field in message, message
    assert "a pattern that may backtrack for ever" in message, message


@pytest.mark.parametrize(
    "pattern",
    [r"remove (\S+)", r"(/\S+\.md)", r"(dossier-\d+\.md)", r"(\d{4}-\d{2})+", r"(a|b)?", r"x*y*"],
)
def test_a_regular_expression_without_nested_repeats_loads(tmp_path: Path, pattern: str) -> None:
    assert regex_problem(pattern) is None
    assert regex_problem(blitz_oracle.DOSSIER_MATCH) is None
    assert regex_problem(blitz_oracle.DELETION_MATCH) is None


def _uncached_key(value: Any) -> str | None:
    """``_operation_key`` of a model as it was before it kept an answer per class."""
    return next((k for k in operations._OPERATION_KEYS if hasattr(value, k)), None)


def test_every_operation_is_named_by_its_key_and_a_model_without_it_as_before() -> None:
    """``operation_name`` keeps each operation class's key (its first answer): every operation
    of every kind is named by its own key, asked again and again, and an instance made without
    its field (``model_construct``) gets what it got before, after its class's key is kept."""
    values = {
        "prompt": {"text": "go"},
        "command": {"text": "/continuity status"},
        "set_model": "fake/other",
        "set_auto_compaction": False,
        "set_auto_retry": True,
        "set_steering_mode": "all",
        "set_follow_up_mode": "one-at-a-time",
        "set_thinking_level": "low",
        "set_session_name": "a name",
        "edit_file": {"path": "notes.md", "text": "x"},
        "bash": {"command": "true"},
    }
    for key in operations._OPERATION_KEYS:
        parsed = TypeAdapter(operations.Operation).validate_python({key: values.get(key)})
        for _ in range(3):
            assert operations.operation_name(parsed) == key == _uncached_key(parsed)
        assert type(parsed) in operations._KEY_OF_CLASS
        bare = type(parsed).model_construct()
        assert operations._operation_key(bare) == _uncached_key(bare)
        if _uncached_key(bare) is None:
            with pytest.raises(ValueError, match="not an operation"):
                operations.operation_name(bare)
    assert set(operations._KEY_OF_CLASS) <= operations._OPERATION_CLASSES

    class Other(BaseModel):
        reload: int = 0

    assert operations._operation_key(Other()) == "reload"
    assert Other not in operations._KEY_OF_CLASS
