"""The blitz checks after every operation read on from where the last check stopped (issue 16),
and read again from the start where what they read was not only appended to.

``BlitzChecker`` keeps, across the checks of one run (``_Memo``), the scanners of the trace
(``_Run.fold``), the parsed session files, each session's entries by id, the entries, transcript
and producers found so far. Each test below makes one way such a reading goes stale (the trace
list replaced or cut, a session file rewritten rather than appended, a session's entries no
longer the objects read before, an entry found in a session only after its record was read, an
extension input that makes an earlier message the extension's) and shows the checks then read
what a fresh reading reads; each fails if the check that catches it is removed. The last one
compares the incremental checks with fresh readings after every operation of explored runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pi_continuity_harness.explore.blitz import BLITZ_INVARIANTS, PLUGIN
from pi_continuity_harness.explore.blitz.invariants import (
    CHECKED_WHEN,
    PREFIX,
    BlitzChecker,
    _Memo,
    _Operations,
    _Pairing,
    _Run,
    _Scanner,
)
from pi_continuity_harness.simulator.simulation import Simulation


class _Seen(_Scanner):
    """Every record's seq, in the order fed."""

    def __init__(self) -> None:
        self.seqs: list[int] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        self.seqs += [int(r["seq"]) for r in records]


def _record(records: list[dict[str, Any]], kind: str, name: str, **fields: Any) -> None:
    records.append({"seq": len(records), "kind": kind, "name": name, **fields})


def _run(tmp_path: Path, records: list[dict[str, Any]], memo: _Memo | None) -> _Run:
    """A ``_Run`` of a simulation that has only a trace (``records``) and a session directory."""
    trace = SimpleNamespace(records=records, normalise=lambda text: text)
    paths = SimpleNamespace(
        session_dir=str(tmp_path / "sessions"),
        workdir=str(tmp_path),
        agent_dir=str(tmp_path / "agent"),
        project_dir=str(tmp_path / "project"),
    )
    simulation: Any = SimpleNamespace(host=SimpleNamespace(trace=trace, paths=paths, runtime=None))
    return _Run(simulation, {}, over=False, memo=memo)


def _write_session(path: Path, *entries: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "id": path.stem}, *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _user(entry_id: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "message": {"role": "user", "content": text}}


def test_a_scanner_goes_on_where_it_stopped_and_starts_again_when_the_trace_is_replaced_or_cut(
    tmp_path: Path,
) -> None:
    memo = _Memo()
    records: list[dict[str, Any]] = []
    for _ in range(3):
        _record(records, "op", "prompt")
    first = _run(tmp_path, records, memo).fold("seen", _Seen)
    _record(records, "op", "prompt")
    again = _run(tmp_path, records, memo).fold("seen", _Seen)
    assert again is first and again.seqs == [0, 1, 2, 3]  # only the new record was read
    replaced = [dict(r) for r in records[:2]]
    assert _run(tmp_path, replaced, memo).fold("seen", _Seen).seqs == [0, 1]
    del replaced[1:]
    assert _run(tmp_path, replaced, memo).fold("seen", _Seen).seqs == [0]


def test_a_scanner_starts_again_when_what_it_read_besides_the_records_changed(tmp_path: Path) -> None:
    memo = _Memo()
    records: list[dict[str, Any]] = []
    for _ in range(3):
        _record(records, "op", "prompt")
    first = _run(tmp_path, records, memo).fold("seen", _Seen, lambda count: "before")
    _record(records, "op", "prompt")
    later = _run(tmp_path, records, memo).fold(
        "seen", _Seen, lambda count: "after" if count >= 3 else "before"
    )
    assert later is not first and later.seqs == [0, 1, 2, 3]


def test_a_session_file_appended_to_is_read_on_and_one_rewritten_is_read_again(tmp_path: Path) -> None:
    memo = _Memo()
    path = tmp_path / "s.jsonl"
    _write_session(path, _user("a", "one"))
    before = memo.lines(path)
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(_user("b", "two")) + "\n")
    appended = memo.lines(path)
    assert [line["id"] for line in appended] == ["s", "a", "b"]
    assert appended[1] is before[1]  # the lines read before were not parsed again
    _write_session(path, _user("a", "one, rewritten"), _user("b", "two"), _user("c", "three"))
    rewritten = memo.lines(path)
    assert [line["message"]["content"] for line in rewritten[1:]] == ["one, rewritten", "two", "three"]


def test_a_sessions_tool_exchanges_are_paired_on_and_again_when_its_entries_are_other_objects() -> None:
    memo = _Memo()
    call = {
        "type": "message",
        "id": "c",
        "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "read"}]},
    }
    result = {
        "type": "message",
        "id": "r",
        "message": {"role": "toolResult", "toolCallId": "t", "content": "x"},
    }
    first = memo.extended("s", [call], _Pairing)
    assert memo.extended("s", [call, result], _Pairing) is first and len(first.paired) == 1
    other = dict(result, message=dict(result["message"], content="y"))
    paired = memo.extended("s", [dict(call), other], _Pairing).paired
    assert [(name, message["content"]) for _tag, name, _arguments, message in paired] == [("read", "y")]


def test_an_entry_found_in_a_session_after_its_record_was_read_is_placed_at_its_record(
    tmp_path: Path,
) -> None:
    """Pi writes a session file from its first assistant message on: an entry's record can come
    before any session holds the entry."""
    memo = _Memo()
    session = tmp_path / "sessions" / "s.jsonl"
    records: list[dict[str, Any]] = []
    _record(records, "host", "runtime", sessionFile=str(session))
    _record(records, "entry", "message", id="a")
    assert _run(tmp_path, records, memo).entries() == []
    _record(records, "op", "prompt")
    _write_session(session, _user("a", "hello"))
    found = _run(tmp_path, records, memo).entries()
    assert [(seq, entry["id"]) for seq, _session, entry in found] == [(1, "a")]
    assert found == _run(tmp_path, records, None).entries()


def test_a_session_whose_entries_are_no_longer_those_read_before_is_read_again(tmp_path: Path) -> None:
    """A session read from other objects than before (its file rewritten, the live session now
    read from its file) is indexed again, and the entries found by id are read again too."""
    memo = _Memo()
    session = tmp_path / "sessions" / "s.jsonl"
    records: list[dict[str, Any]] = []
    _record(records, "host", "runtime", sessionFile=str(session))
    _record(records, "entry", "message", id="a")
    _write_session(session, _user("a", "first"))
    assert [entry["message"]["content"] for _s, _f, entry in _run(tmp_path, records, memo).entries()] == [
        "first"
    ]
    _write_session(session, _user("a", "other text, same id"))
    _record(records, "op", "prompt")
    entries = _run(tmp_path, records, memo).entries()
    assert [entry["message"]["content"] for _s, _f, entry in entries] == ["other text, same id"]
    assert entries == _run(tmp_path, records, None).entries()


def test_a_session_read_from_other_objects_holding_the_same_data_is_not_indexed_again() -> None:
    """Entries that are other objects holding the same data as those read before (the live
    session read from its file after a switch) keep the index and its generation: nothing found
    by id can be found otherwise. Data a reader can tell apart (``True`` for ``1``, ``1.0`` for
    ``1``, a tuple for a list, keys in another order) is a change, read again."""
    memo = _Memo()
    live = [_user("a", "first"), {"type": "custom", "id": "b", "data": {"n": 1, "m": [1, 2]}}]
    index, generation = memo.index({"s": live})
    read_from_file = json.loads(json.dumps(live))
    assert read_from_file == live and read_from_file[0] is not live[0]
    again, same = memo.index({"s": [*read_from_file, _user("c", "later")]})
    assert same == generation
    assert again["s"]["a"] is index["s"]["a"] and again["s"]["c"]["id"] == "c"
    for changed in (
        {"n": True, "m": [1, 2]},
        {"n": 1.0, "m": [1, 2]},
        {"n": 1, "m": (1, 2)},
        {"m": [1, 2], "n": 1},
    ):
        before = memo.generation
        memo.index({"s": [_user("a", "first"), {"type": "custom", "id": "b", "data": changed}]})
        assert memo.generation == before + 1, changed
        memo.index({"s": live})  # back to the data read first (another change)


def test_an_extension_input_makes_an_earlier_message_with_its_text_the_extensions(tmp_path: Path) -> None:
    """The extension's texts are a set (``_Run.transcript``): a later send of the text of a message
    read as the user's makes it the extension's, as a fresh reading finds."""
    memo = _Memo()
    session = tmp_path / "sessions" / "s.jsonl"
    records: list[dict[str, Any]] = []
    _record(records, "host", "runtime", sessionFile=str(session))
    _record(records, "entry", "message", id="a")
    _write_session(session, _user("a", "hand this off"))
    assert [item.kind for _seq, item in _run(tmp_path, records, memo).transcript()] == ["user"]
    _record(records, "event", "input", source="extension", text="hand this off")
    kinds = [item.kind for _seq, item in _run(tmp_path, records, memo).transcript()]
    assert kinds == [item.kind for _seq, item in _run(tmp_path, records, None).transcript()] == ["extension"]


def _readings(run: _Run, planted: list[tuple[str, str]]) -> dict[str, Any]:
    """What the invariants read of the run, and what each ``prefix`` invariant finds."""
    ops = run.fold("operations", lambda: _Operations(planted)).ops
    out: dict[str, Any] = {
        "entries": run.entries(),
        "transcript": run.transcript(),
        "producers": run.producers(),
        "messages": [(seq, epoch, m.kind, m.item.text) for seq, epoch, m in run.handoff_messages()],
        "exchanges": run.session_exchanges(),
    }
    for invariant, _rules in BLITZ_INVARIANTS:
        if CHECKED_WHEN[invariant.__name__][0] == PREFIX:
            out[invariant.__name__] = list(invariant(run, ops))
    return out


#: Seeds (40 steps) whose runs switch sessions several times (each switch reads the session that
#: was live from its file: its entries read again) and submit dossiers.
SEEDS = [2, 7]


@pytest.mark.parametrize("seed", SEEDS)
def test_after_every_operation_the_incremental_checks_read_what_a_fresh_reading_reads(
    tmp_path: Path, seed: int
) -> None:
    case = PLUGIN.case(seed, 40)
    simulation = Simulation(
        case.scenario(operations=case.operations), workdir=tmp_path / "w", implementation="blitz"
    )
    checker = BlitzChecker(simulation)
    memo = _Memo()
    try:
        simulation.start()
        for op in case.operations:
            checker.before_operation(op)
            simulation.perform(op)
            checker.after_operation()
            incremental = _readings(
                _Run(simulation, checker.settings, over=False, memo=memo), checker.planted
            )
            assert incremental == _readings(
                _Run(simulation, checker.settings, over=False), checker.planted
            ), op
        assert checker.ok, checker.violations
    finally:
        simulation.finish(requests=False, trace=False)
