"""``import-session`` (issue 12 item 9): a real Pi 1.6 session file becomes a scenario that replays it.

The fixture ``tests/fixtures/sessions/recorded-on-pi-1.6.jsonl`` was recorded on real Pi 1.6 by
playing ``record.yaml`` with the null implementation (the procedure of
``tests/realpi/test_differential_fidelity.py::test_a_session_recorded_on_real_pi_replays_after_import``,
which re-records it live); ``settings.json`` there holds the project settings it ran with. Imported
and simulated, it must give the same entry sequence: types, order, parent links, compaction
entries, assistant stop reasons and usage (:func:`session_shape`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_continuity_harness.cli import main
from pi_continuity_harness.commands import import_session as command
from pi_continuity_harness.commands.import_session import checked_import
from pi_continuity_harness.scenario import dump_scenario, import_session, load_scenario, session_shape
from pi_continuity_harness.scenario.budget import Budget
from pi_continuity_harness.scenario.session_import import SessionImportError, import_session_lines
from pi_continuity_harness.scenario.trace import first_difference
from pi_continuity_harness.simulator.simulation import simulate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
RECORDED = FIXTURES / "recorded-on-pi-1.6.jsonl"
#: Recorded from ``record-automatic.yaml``: a threshold compaction after a run.
AUTOMATIC = FIXTURES / "recorded-automatic-on-pi-1.6.jsonl"
#: Recorded from ``record-mid-run.yaml``: a compaction inside a run that the tool result (not the
#: last reply's usage) pushes over the threshold, so the importer's guess is wrong.
MID_RUN = FIXTURES / "recorded-mid-run-on-pi-1.6.jsonl"
SETTINGS = json.loads((FIXTURES / "settings.json").read_text(encoding="utf-8"))


def _imported() -> object:
    return import_session(RECORDED, context_window=20000, max_tokens=1000, settings=SETTINGS)


def test_the_imported_session_replays_the_same_entry_sequence(tmp_path: Path) -> None:
    scenario = import_session(RECORDED, context_window=20000, max_tokens=1000, settings=SETTINGS)
    result = simulate(scenario, workdir=tmp_path / "run", implementation="null")
    [replayed] = result.session_files()
    recorded = session_shape(RECORDED)
    assert [item[0] for item in recorded].count("compaction") == 2
    assert session_shape(replayed) == recorded
    header = json.loads(replayed.read_text(encoding="utf-8").splitlines()[0])
    assert header["id"] == json.loads(RECORDED.read_text(encoding="utf-8").splitlines()[0])["id"]


def test_the_replay_check_fails_when_a_compaction_is_left_out(tmp_path: Path) -> None:
    """Evidence that the round trip can fail: the same scenario without its compactions differs."""
    scenario = import_session(RECORDED, context_window=20000, max_tokens=1000, settings=SETTINGS)
    without = scenario.model_copy(
        update={"operations": tuple(op for op in scenario.operations if type(op).__name__ != "CompactOp")}
    )
    result = simulate(without, workdir=tmp_path / "run", implementation="null")
    [replayed] = result.session_files()
    assert session_shape(replayed) != session_shape(RECORDED)


def test_the_scenario_holds_prompts_replies_usage_stop_reasons_tools_models_and_compactions() -> None:
    scenario = import_session(RECORDED, context_window=20000, max_tokens=1000, settings=SETTINGS)
    ops = [next(iter(type(op).model_fields)) for op in scenario.operations]
    assert ops == ["prompt", "prompt", "set_model", "prompt", "compact", "prompt", "prompt", "compact"]
    replies = scenario.model.agent
    assert replies[1].thinking == "I should run it and write the notes."
    assert [c.name for c in replies[1].tool_calls] == ["bash", "write"]
    assert replies[1].tool_calls[0].result == "hi\n"
    assert replies[1].usage is not None and replies[1].usage.cache_read == 5
    assert replies[3].error is not None and replies[3].error.status == 400
    assert replies[4].finish == "length"
    assert scenario.active_model == "fake/fake-model"
    assert scenario.settings.global_ == SETTINGS
    # Two summaries for the split turn, then the second compaction's two (Pi's own defaults).
    assert [r.text for r in scenario.model.summary] == [
        "S1 summary of the start",
        "S2 updated summary",
        "SUMMARY-3",
        "SUMMARY-4",
    ]


def test_the_scenario_runs_with_any_implementation(tmp_path: Path) -> None:
    """Pi Session Continuity's reference, with the default windows (its synthesis budget does not
    fit the recording's 1,000-token output limit, which it reports and cancels: its own rule)."""
    scenario = import_session(RECORDED, settings=SETTINGS)
    result = simulate(scenario, workdir=tmp_path / "run", implementation="reference")
    notes = [r["message"] for r in result.host.trace.records if r["name"] == "notify"]
    assert sum("native compaction committed with disk-backed Brief" in n for n in notes) == 2
    [replayed] = result.session_files()
    # Its compactions carry its own Briefs (fromHook). The default output limit (16,384) makes the
    # recorded 1,000-token ``length`` stop a recoverable one, so Pi asks once more there (§9.4).
    compactions = [item for item in session_shape(replayed) if item[0] == "compaction"]
    assert [item[6] for item in compactions] == [True, True]


def test_a_compaction_above_the_threshold_is_left_to_pi(tmp_path: Path) -> None:
    scenario = import_session(AUTOMATIC, context_window=20000, max_tokens=1000, settings=SETTINGS)
    assert [next(iter(type(op).model_fields)) for op in scenario.operations] == ["prompt"] * 3
    assert (
        "line 9: an automatic compaction (last usage 16010, threshold 20000 - 4000)" in scenario.description
    )
    result = simulate(scenario, workdir=tmp_path / "run", implementation="null")
    [replayed] = result.session_files()
    assert session_shape(replayed) == session_shape(AUTOMATIC)
    reasons = [r["reason"] for r in result.host.trace.records if r["name"] == "compaction_start"]
    assert reasons == ["threshold"]


def test_with_a_larger_window_the_same_compaction_is_replayed_manually(tmp_path: Path) -> None:
    scenario = import_session(AUTOMATIC, settings=SETTINGS)
    ops = [next(iter(type(op).model_fields)) for op in scenario.operations]
    assert ops == ["prompt", "prompt", "compact", "prompt"]
    result = simulate(scenario, workdir=tmp_path / "run", implementation="null")
    [replayed] = result.session_files()
    assert session_shape(replayed) == session_shape(AUTOMATIC)


def test_the_replay_check_inverts_a_wrong_guess(tmp_path: Path) -> None:
    options = {"context_window": 20000, "max_tokens": 1000, "settings": SETTINGS}
    guessed = import_session(MID_RUN, **options)  # type: ignore[arg-type]
    assert [next(iter(type(op).model_fields)) for op in guessed.operations] == ["prompt", "prompt", "compact"]
    assert "line 10: a compaction inside a run (after a tool result)" in guessed.description
    result = simulate(guessed, workdir=tmp_path / "guessed", implementation="null")
    [replayed] = result.session_files()
    assert session_shape(replayed) != session_shape(MID_RUN)  # Pi compacts by itself, then again

    scenario, verdict = checked_import(str(MID_RUN), **options)
    assert verdict == "replay check: the simulator reproduces all 10 entries"
    assert [next(iter(type(op).model_fields)) for op in scenario.operations] == ["prompt", "prompt"]
    assert "line 10: replayed as an automatic compaction" in scenario.description


def test_the_thinking_level_and_its_model_are_replayed(tmp_path: Path) -> None:
    """The recording, edited to start at thinking level medium on its reasoning model. Its later
    switch to a model that does not reason is where Pi clamps the level to off and writes a
    thinking_level_change (agent-session.js:2119-2136; the recording, made at off, has none):
    the replay has exactly that entry more."""
    lines = RECORDED.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[2])
    assert entry["type"] == "thinking_level_change"
    lines[2] = json.dumps({**entry, "thinkingLevel": "medium"})
    session = tmp_path / "thinking.jsonl"
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scenario = import_session(session, context_window=20000, max_tokens=1000, settings=SETTINGS)
    assert scenario.thinking_level == "medium"
    assert [(m.id, m.reasoning) for m in scenario.models] == [
        ("fake/fake-model", True),
        ("fake/fake-big", False),
    ]
    result = simulate(scenario, workdir=tmp_path / "run", implementation="null")
    [replayed] = result.session_files()
    entries = [json.loads(line) for line in replayed.read_text(encoding="utf-8").splitlines()]
    assert entries[2]["thinkingLevel"] == "medium"
    switch = next(i for i, e in enumerate(entries) if e.get("modelId") == "fake-big")
    clamp = entries[switch + 1]
    assert (clamp["type"], clamp["thinkingLevel"]) == ("thinking_level_change", "off")
    at = switch - 1  # session_shape leaves out the session header
    shape, recorded = session_shape(replayed), session_shape(session)
    assert shape[: at + 1] == recorded[: at + 1]
    assert [s[0] for s in shape[at + 2 :]] == [s[0] for s in recorded[at + 1 :]]


# ====================================================================== the command
def test_the_command_writes_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.yaml"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    args = ["--context-window", "20000", "--max-tokens", "1000", "--settings", str(settings)]
    assert main(["import-session", str(RECORDED), "--output", str(out), *args]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"wrote {out}: 8 operations, 6 model replies")
    assert printed[1] == "replay check: the simulator reproduces all 19 entries"
    assert load_scenario(out) == load_scenario(out)
    assert dump_scenario(load_scenario(out)) == out.read_text(encoding="utf-8")
    assert main(["import-session", str(RECORDED), *args]) == 0
    assert capsys.readouterr().out == out.read_text(encoding="utf-8")


def test_the_replay_check_names_the_first_entry_that_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the user's settings (Pi's default keepRecentTokens 20,000), the replay has nothing
    to compact where the recording compacted: the check says so, and the scenario is still written."""
    out = tmp_path / "s.yaml"
    assert main(["import-session", str(RECORDED), "--output", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1].startswith(
        "replay check: entry 14 (line 15) differs: recorded ('compaction', None, 12), "
        "replayed ('message', 'user', 12)"
    )
    assert out.is_file()


def test_help_lists_import_session(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "import-session" in capsys.readouterr().out


_HEADER = '{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'
_MODEL = '{"type":"model_change","id":"m1","parentId":null,"timestamp":"t","provider":"fake","modelId":"x"}'
_USER = (
    '{"type":"message","id":"u1","parentId":"m1","timestamp":"t","message":{"role":"user","content":"hi"}}'
)
_DANGLING = _MODEL.replace("null", '"zz"')
_SIBLING = _USER.replace('"u1"', '"u2"')

MALFORMED = {
    "empty file": ("", "line 1: empty file"),
    "not JSON": ("{nope", "line 1: not JSON"),
    "no header": (_MODEL, 'line 1: the first line is the session header {"type":"session",...}'),
    "old version": (_HEADER.replace('"version":3', '"version":2'), "line 1: session version 2"),
    "bad entry JSON": (f"{_HEADER}\n{_MODEL}\n{{broken", "line 3: not JSON"),
    # json's C decoder recurses per level: before, a RecursionError traceback and exit 1.
    "nested too deeply": (
        f"{_HEADER}\n{'[' * 100_000}{']' * 100_000}",
        "line 2: not JSON: nested too deeply",
    ),
    "unknown type": (
        f'{_HEADER}\n{{"type":"weird","id":"w","parentId":null}}',
        "line 2: unknown entry type 'weird'",
    ),
    "no id": (f'{_HEADER}\n{{"type":"model_change","parentId":null}}', "line 2: an entry needs a string id"),
    "dangling parent": (f"{_HEADER}\n{_DANGLING}", "line 2: parentId 'zz' names no earlier entry"),
    "branch": (
        f"{_HEADER}\n{_MODEL}\n{_USER}\n{_SIBLING}",
        "line 4: parentId 'm1' is not the previous entry 'u1'",
    ),
    "duplicate id": (f"{_HEADER}\n{_MODEL}\n{_MODEL}", "line 3: duplicate entry id 'm1'"),
    "message without role": (
        f'{_HEADER}\n{_MODEL}\n{{"type":"message","id":"u","parentId":"m1","message":{{}}}}',
        "line 3: a message entry needs a message with a role",
    ),
    "blank line": (f"{_HEADER}\n\n{_MODEL}", "line 2: an empty line"),
    "bad stop reason": (
        f"{_HEADER}\n{_MODEL}\n{_USER}\n"
        '{"type":"message","id":"a","parentId":"u1","message":{"role":"assistant","content":[],"stopReason":"odd"}}',
        "line 4: unknown stopReason 'odd'",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_session_file_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, reason = MALFORMED[case]
    session = tmp_path / "bad.jsonl"
    session.write_text(text + ("\n" if text else ""), encoding="utf-8")
    out = tmp_path / "s.yaml"
    out.write_text("kept\n", encoding="utf-8")
    assert main(["import-session", str(session), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pi-continuity-harness import-session: {session}: {reason}"), err
    assert len(err.splitlines()) == 1
    assert out.read_text(encoding="utf-8") == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "s.yaml"]
    with pytest.raises(SessionImportError):
        import_session(session)


def test_a_session_path_that_is_no_readable_file_exits_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: OSError tracebacks (a loop of links, a path through a file), and a device or
    FIFO read as a session file (a FIFO waited for a writer)."""
    (tmp_path / "loop.jsonl").symlink_to("loop.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    for path, reason in [
        (tmp_path / "loop.jsonl", "cannot open it: Too many levels of symbolic links"),
        (RECORDED / "x", "cannot open it: Not a directory"),
        (tmp_path / "fifo.jsonl", "not a regular file (a device, FIFO or socket), not a session file"),
        (Path(os.devnull), "not a regular file (a device, FIFO or socket), not a session file"),
    ]:
        assert main(["import-session", str(path), "--output", str(tmp_path / "s.yaml")]) == 2
        assert capsys.readouterr().err == f"pi-continuity-harness import-session: {path}: {reason}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.jsonl", "loop.jsonl"]


def test_a_missing_file_and_a_bad_output_directory_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import-session", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl: no such file" in capsys.readouterr().err
    assert main(["import-session", str(RECORDED), "--output", str(tmp_path / "no" / "s.yaml")]) == 2
    assert "--output" in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"compaction": {"reserveTokens": 1e400}}', "compaction.reserveTokens: Infinity is not JSON data"),
        ('{"a": [1, NaN]}', "a[1]: NaN is not JSON data"),
    ],
)
def test_a_settings_file_that_is_no_json_data_is_refused_naming_it_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    """Python's json reads ``NaN`` and ``1e400`` (as inf), Pi's ``JSON.parse`` does not. Before, the
    error named the session file's "(imported scenario)" and ``settings.global...``: a field of a
    file the user did not write, not the settings file that holds it."""
    settings = tmp_path / "settings.json"
    settings.write_text(text, encoding="utf-8")
    output = tmp_path / "s.yaml"
    assert main(["import-session", str(RECORDED), "--settings", str(settings), "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pi-continuity-harness import-session: --settings {settings}: {message}"), err
    assert err.count("\n") == 1
    assert not output.exists()


# ====================================================================== any damage: refused, never a crash
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _damage(entry: Any, path: list[Any], value: Any) -> Any:
    """``entry`` with the value at ``path`` (keys and indexes, as far as they lead) replaced."""
    if not path or not isinstance(entry, (dict, list)) or not entry:
        return value
    key = path[0]
    if isinstance(entry, dict):
        name = sorted(entry)[key % len(entry)] if isinstance(key, int) else key
        return {**entry, name: _damage(entry[name], path[1:], value)}
    index = key % len(entry) if isinstance(key, int) else 0
    return [*entry[:index], _damage(entry[index], path[1:], value), *entry[index + 1 :]]


@settings(max_examples=150, deadline=None)
@given(
    line=st.integers(0, 200),
    path=st.lists(st.integers(0, 20), min_size=1, max_size=4),
    value=_VALUES,
    drop=st.booleans(),
)
# Found by a run: a message whose content is ``true`` raised TypeError in the text extraction.
@example(line=168, path=[1, 0], value=True, drop=False)
# Found by a mutation of every field (the replay check's reading of the recording, session_shape):
# a usage that is no object raised AttributeError, a listed firstKeptEntryId TypeError.
@example(line=5, path=[1, 11], value="lots", drop=False)
@example(line=14, path=[1], value=[1], drop=False)
def test_a_damaged_session_is_imported_and_checked_or_refused_naming_its_line(
    line: int, path: list[int], value: Any, drop: bool
) -> None:
    lines = RECORDED.read_text(encoding="utf-8").splitlines()
    index = line % len(lines)
    if drop:
        del lines[index]
    else:
        lines[index] = json.dumps(_damage(json.loads(lines[index]), path, value))
    try:
        import_session_lines(lines, source="s.jsonl", name="damaged")
    except SessionImportError as error:
        assert re.match(r"s\.jsonl: line \d+: \S", str(error)), str(error)
        return
    with tempfile.TemporaryDirectory() as tmp:  # what the replay check compares the replay with
        session = Path(tmp) / "s.jsonl"
        session.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert len(session_shape(session)) == len(lines) - 1


def _compacted_session(path: Path, compactions: int) -> Path:
    """A session of ``compactions`` prompt, reply and (manual) compaction triples, written without
    the system message Pi persists with the first request: its replay parts at entry 3, before
    every compaction."""
    entries: list[dict[str, Any]] = [
        {"type": "model_change", "provider": "fake", "modelId": "fake-model"},
        {"type": "thinking_level_change", "thinkingLevel": "off"},
    ]
    usage = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12}
    for n in range(compactions):
        entries.append({"type": "message", "message": {"role": "user", "content": f"q{n}"}})
        entries.append(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"a{n}"}],
                    "provider": "fake",
                    "model": "fake-model",
                    "usage": usage,
                    "stopReason": "stop",
                },
            }
        )
        entries.append({"type": "compaction", "summary": f"S{n}", "tokensBefore": 12})
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    ]
    for number, entry in enumerate(entries):
        lines.append({"id": f"e{number}", "parentId": f"e{number - 1}" if number else None, **entry})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every scenario the replay check replays (``_replayed_shape`` counted), in order."""
    seen: list[object] = []
    replayed_shape = command._replayed_shape

    def counted(scenario: Any) -> Any:
        seen.append(scenario)
        return replayed_shape(scenario)

    monkeypatch.setattr(command, "_replayed_shape", counted)
    return seen


def test_the_replay_check_stops_after_flips_that_do_not_move_the_difference(
    tmp_path: Path, replays: list[object]
) -> None:
    """Before: every compaction was tried the other way, one replay of the whole session each, so
    a session of a few hundred compactions whose replay parts early took hours (80 took 22 s)."""
    session = _compacted_session(tmp_path / "long.jsonl", 20)
    _, verdict = checked_import(str(session), context_window=200_000, max_tokens=1000, settings=None)
    assert len(replays) == 1 + 8  # not 1 + 20: eight flips in a row that did not help end it
    assert verdict.startswith("replay check: entry 3 (line 4) differs")
    assert verdict.endswith(
        f"; {20 - command.MAX_FRUITLESS_FLIPS} compactions farther from it were not tried the other way"
    )


def test_a_replay_its_budget_stops_is_said_to_have_stopped_not_to_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replays: list[object]
) -> None:
    """A long session's replay runs out of the simulator's budget (50,000 host operations: about
    1,900 prompts). Before, the verdict said the replay parted from the recording there
    (``replayed (no entry)``) and blamed --context-window, --max-tokens and --settings, and every
    compaction was then replayed the other way, each replay running to the budget again."""
    lines = RECORDED.read_text(encoding="utf-8").split("\n")[:-1]
    small = Budget(operations=100)
    imported = command.import_session

    def with_small_budget(*args: Any, **kwargs: Any) -> Any:
        return imported(*args, **kwargs).model_copy(update={"budget": small})

    monkeypatch.setattr(command, "import_session", with_small_budget)
    _, verdict = checked_import(str(RECORDED), context_window=20000, max_tokens=1000, settings=SETTINGS)
    assert re.fullmatch(
        rf"replay check: the replay stopped after entry (\d+) of {len(lines) - 1} \(line \d+\): the budget of "
        r"100 host operations \(trace records and event-loop steps\) ran out at virtual time .*; the scenario "
        r"is still written whole, and runs further with a larger budget \(simulate --budget-ops N, or "
        r"budget.operations in the scenario\)",
        verdict,
    ), verdict
    assert len(replays) == 1


# ====================================================================== the replay check reads as Pi reads
def _edited(tmp_path: Path, line: int, edit: Any) -> Path:
    """The recording with line ``line`` (1-based) replaced by ``edit(entry)``, written as Pi
    writes a session (``JSON.stringify``: non-ASCII, U+2028 too, written raw)."""
    lines = RECORDED.read_text(encoding="utf-8").split("\n")[:-1]
    lines[line - 1] = json.dumps(edit(json.loads(lines[line - 1])), ensure_ascii=False)
    session = tmp_path / "edited.jsonl"
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return session


def _check(tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]) -> str:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
    args = ["--context-window", "20000", "--max-tokens", "1000", "--settings", str(settings)]
    assert main(["import-session", str(session), "--output", str(tmp_path / "s.yaml"), *args]) == 0
    return capsys.readouterr().out.splitlines()[-1]


def test_a_prompt_holding_a_line_separator_replays_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw U+2028 is valid inside a JSON string and Pi writes it so; Pi splits session lines on
    "\\n" only. Before, the check split the recording with str.splitlines (which splits at U+2028
    too): a JSONDecodeError traceback, exit 1, nothing written."""

    def separated(entry: dict[str, Any]) -> dict[str, Any]:
        entry["message"]["content"][0]["text"] += "\u2028and\u2029more"
        return entry

    session = _edited(tmp_path, 7, separated)
    assert "\u2028" in session.read_text(encoding="utf-8")
    assert _check(tmp_path, session, capsys) == "replay check: the simulator reproduces all 19 entries"


def test_a_usage_that_is_no_object_is_read_as_no_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pi reads ``"lots".input`` as undefined: the recorded reply has no usage, the replayed one
    has, so the check names that entry. Before: an AttributeError traceback, exit 1."""

    def lots(entry: dict[str, Any]) -> dict[str, Any]:
        entry["message"]["usage"] = "lots"
        return entry

    verdict = _check(tmp_path, _edited(tmp_path, 6, lots), capsys)
    assert verdict.startswith("replay check: entry 5 (line 6) differs: recorded ('message', 'assistant', 3)")


def test_a_usage_of_booleans_is_read_as_no_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``true`` is no token count (Python's ``True == 1``): read as a usage of the wrong type, as
    ``"lots"`` is, and the check names the entry. Before: the import took ``input: true`` as one
    token and the scenario refused it, exit 2 with ``(imported scenario): model.agent[1].usage.input:
    ...`` and no line of the session file."""

    def booleans(entry: dict[str, Any]) -> dict[str, Any]:
        entry["message"]["usage"]["input"] = True
        return entry

    verdict = _check(tmp_path, _edited(tmp_path, 6, booleans), capsys)
    assert verdict.startswith("replay check: entry 5 (line 6) differs: recorded ('message', 'assistant', 3)")
    assert load_scenario(tmp_path / "s.yaml").model.agent[0].usage is None


def test_a_first_kept_entry_id_that_is_no_string_names_no_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pi compares ``firstKeptEntryId`` with ``===`` (buildContextEntries): a list names no entry.
    Before: ``TypeError: unhashable type: 'list'``, exit 1."""

    def listed(entry: dict[str, Any]) -> dict[str, Any]:
        entry["firstKeptEntryId"] = [entry["firstKeptEntryId"]]
        return entry

    verdict = _check(tmp_path, _edited(tmp_path, 15, listed), capsys)
    assert verdict.startswith("replay check: entry 14 (line 15) differs: recorded ('compaction', None, 12)")


#: A 1x1 PNG (the scenario format's own example).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC"


def test_the_images_of_a_user_message_are_replayed_or_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prompt's PNG goes into the scenario's ``prompt.images``; an image the scenario format cannot
    send (a JPEG) is named, in the description and on the output. Before: every image was left out
    without a word, and the replay sent the prompt's text alone."""

    def pictured(entry: dict[str, Any]) -> dict[str, Any]:
        entry["message"]["content"] += [
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "image", "data": "/9j/4AAQSkZJRgABAQ", "mimeType": "image/jpeg"},
        ]
        return entry

    verdict = _check(tmp_path, _edited(tmp_path, 5, pictured), capsys)
    assert verdict == "replay check: the simulator reproduces all 19 entries"
    scenario = load_scenario(tmp_path / "s.yaml")
    first = scenario.operations[0].prompt  # type: ignore[union-attr]
    assert [(image.mime_type, image.data) for image in first.images] == [("image/png", PNG)]
    note = (
        "line 5: an image (image/jpeg) of the user message is not replayed: a scenario's prompt takes "
        "PNG images only (Pi converts any other, which is not modelled)"
    )
    assert note in scenario.description.split("\n")
    main(["import-session", str(tmp_path / "edited.jsonl"), "--no-check"])
    assert capsys.readouterr().err.splitlines() == [note]


# ====================================================================== --output
def test_an_output_that_is_the_session_file_is_refused_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, ``--no-check --output s.jsonl`` replaced the session file with the scenario (exit 0)."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(RECORDED.read_bytes())
    (tmp_path / "link.jsonl").symlink_to(session)
    for output in (session, tmp_path / "." / "s.jsonl", tmp_path / "link.jsonl"):
        assert main(["import-session", str(session), "--no-check", "--output", str(output)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"pi-continuity-harness import-session: --output {output}: is the session file {session}; "
            "the scenario would replace it\n"
        )
    assert session.read_bytes() == RECORDED.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "s.jsonl"]


# ====================================================================== its trace, replayed
def test_the_trace_of_an_imported_prompt_with_a_line_separator_is_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trace keeps the prompt's U+2028 raw, as the session does; ``replay --expect-trace``
    (docs/reproducing-a-session.md, step 4) split it with str.splitlines and refused the run's
    own trace: ``line 10: not JSON (Unterminated string ...)``, exit 2."""

    def separated(entry: dict[str, Any]) -> dict[str, Any]:
        entry["message"]["content"][0]["text"] += "\u2028and"
        return entry

    scenario = tmp_path / "s.yaml"
    assert (
        main(
            ["import-session", str(_edited(tmp_path, 7, separated)), "--no-check", "--output", str(scenario)]
        )
        == 0
    )
    assert main(["simulate", str(scenario), "--workdir", str(tmp_path / "one")]) == 0
    trace = tmp_path / "one" / "trace.jsonl"
    assert "\u2028" in trace.read_text(encoding="utf-8")
    capsys.readouterr()
    args = [
        "replay",
        str(scenario),
        "--expect-trace",
        str(trace),
        "--quiet",
        "--workdir",
        str(tmp_path / "two"),
    ]
    assert main(args) == 0
    assert "byte-identical" in capsys.readouterr().out


def test_a_trace_difference_after_a_line_separator_names_its_own_line() -> None:
    first = json.dumps({"seq": 0, "kind": "k", "name": "a\u2028b"}, ensure_ascii=False)
    expected = f"{first}\n" + '{"seq":1,"kind":"k","name":"n","v":1}\n'
    actual = f"{first}\n" + '{"seq":1,"kind":"k","name":"n","v":2}\n'
    assert (
        first_difference(expected, actual)
        == "first difference at record 1 (line 2, k:n): $.v: expected 1, actual 2"
    )
