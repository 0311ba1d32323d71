"""Unit tests of the simulated SessionManager: lazy persistence, projection, branch, migration."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock
from pi_continuity_harness.simulator.messages import UNDEFINED
from pi_continuity_harness.simulator.session_manager import (
    SessionFileError,
    SessionManager,
    dumps_entry,
    load_entries,
)

from .loop_clock import ManualLoopClock


def manager(tmp_path: Path, **kwargs: Any) -> SessionManager:
    (tmp_path / "sessions").mkdir(exist_ok=True)
    return SessionManager.create(
        cwd=str(tmp_path / "project"),
        session_dir=str(tmp_path / "sessions"),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(1),
        **kwargs,
    )


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text: str, tokens: int = 10, ts: int = 2) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "fake",
        "model": "m",
        "usage": {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens},
        "stopReason": "stop",
        "timestamp": ts,
    }


def file_lines(sm: SessionManager) -> list[dict[str, Any]]:
    path = sm.get_session_file()
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_lazy_persistence_waits_for_a_user_or_assistant_message(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    path = Path(sm.get_session_file() or "")
    sm.append_model_change("fake", "m")
    sm.append_custom_entry("probe", {"a": 1})
    sm.append_custom_message_entry("note", "text", True)
    sm.append_session_info("name")
    assert not path.exists() and not sm.is_flushed()
    sm.append_message({"role": "system", "content": "sys", "timestamp": 0})
    assert not path.exists()
    sm.append_message(user("hi"))
    assert path.exists() and sm.is_flushed()
    lines = file_lines(sm)
    assert [e["type"] for e in lines] == [
        "session",
        "model_change",
        "custom",
        "custom_message",
        "session_info",
        "message",
        "message",
    ]
    sm.append_message(assistant("ok"))
    assert len(file_lines(sm)) == 8
    assert path.read_text(encoding="utf-8").endswith(dumps_entry(sm.get_entries()[-1]) + "\n")


def test_first_flush_is_exclusive_and_a_failed_write_rolls_back(tmp_path: Path) -> None:
    writes: list[tuple[str, str]] = []

    def failing(path: str, text: str, mode: str) -> None:
        writes.append((mode, text))
        raise OSError(5, "Input/output error")

    sm = SessionManager.create(
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(2),
        write_line=failing,
    )
    sm.append_model_change("fake", "m")
    leaf = sm.get_leaf_id()
    with pytest.raises(OSError):
        sm.append_message(user("hi"))
    assert writes[0][0] == "x"
    assert sm.get_leaf_id() == leaf and len(sm.get_entries()) == 1
    # The rolled-back message no longer counts as conversation (Pi derives it from the
    # entries): a later metadata entry stays in memory, with no write attempted.
    sm.append_custom_entry("probe")
    assert len(writes) == 1 and not sm.is_flushed()


def test_ids_parent_links_and_entry_shape(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    a = sm.append_message(user("a"))
    b = sm.append_message(assistant("b"))
    entries = sm.get_entries()
    assert [e["parentId"] for e in entries] == [None, a]
    assert sm.get_leaf_id() == b and sm.get_leaf_entry() == entries[-1]
    assert all(len(e["id"]) == 8 and int(e["id"], 16) >= 0 for e in entries)
    assert list(entries[0]) == ["type", "id", "parentId", "timestamp", "message"]
    assert sm.get_header()["version"] == 3  # type: ignore[index]


def test_entry_id_collision_is_redrawn() -> None:
    rng = SeededRandom(3)
    first = rng.entry_id(lambda c: False)
    again = SeededRandom(3).entry_id(lambda c: c == first)
    assert again != first and len(again) == 8
    assert len(SeededRandom(3).entry_id(lambda c: True)) == 36  # falls back to a full UUID


def test_compaction_entry_key_order_from_hook_and_missing_first_kept(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    sm.append_message({"role": "system", "content": "sys", "timestamp": 0})
    sm.append_message(user("a"))
    sid = sm.append_compaction("S", None, 7, UNDEFINED, False)
    entry = sm.get_entry(sid)
    assert entry is not None
    assert list(entry) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "fromHook",
        "systemMessage",
    ]
    assert entry["firstKeptEntryId"] == sid and entry["fromHook"] is False
    assert entry["systemMessage"]["content"] == "sys"
    other = sm.get_entry(sm.append_compaction("T", "deadbeef", 1, {"d": 1}, True, {"totalTokens": 3}))
    assert other is not None
    assert [other[k] for k in ("firstKeptEntryId", "details", "usage", "fromHook")] == [
        "deadbeef",
        {"d": 1},
        {"totalTokens": 3},
        True,
    ]


def test_projection_after_compaction_keeps_from_first_kept_and_drops_system_entries(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    first = sm.append_model_change("fake", "m")
    sm.append_message({"role": "system", "content": "sys", "timestamp": 0})
    u1 = sm.append_message(user("one"))
    sm.append_message(assistant("one"))
    sm.append_custom_entry("meta")
    u2 = sm.append_message(user("two"))
    sm.append_compaction("SUM", u2, 5, UNDEFINED, False)
    sm.append_message(user("three"))
    roles = [m["role"] for m in sm.build_session_projection().messages]
    assert roles == ["system", "compactionSummary", "user", "user"]
    # Keeping from the first entry keeps the system *entry* out of the kept range.
    sm.append_compaction("SUM2", first, 5, UNDEFINED, False)
    projection = sm.build_session_projection()
    assert [m["role"] for m in projection.messages] == [
        "system",
        "compactionSummary",
        "user",
        "assistant",
        "user",
        "user",
    ]
    assert projection.entries[0].source["summary"] == "SUM2"
    # The older compaction inside the kept range contributes nothing.
    older = [p for p in projection.entries if p.source.get("summary") == "SUM"]
    assert older and older[0].messages == []
    assert u1 in {p.source["id"] for p in projection.entries}


def test_unknown_first_kept_entry_keeps_nothing(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    sm.append_message(user("one"))
    sm.append_compaction("SUM", "deadbeef", 5, UNDEFINED, True)
    sm.append_message(user("two"))
    assert [m["role"] for m in sm.build_session_projection().messages] == ["compactionSummary", "user"]


def test_context_edits_omit_or_replace_and_are_validated(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    u = sm.append_message(user("one"))
    a = sm.append_message(assistant("reply"))
    meta = sm.append_custom_entry("meta")
    sm.append_context_edit(a, None)
    assert [m["role"] for m in sm.build_session_projection().messages] == ["user"]
    sm.append_context_edit(u, {"content": "rewritten"})
    [message] = sm.build_session_projection().messages
    assert message["content"] == "rewritten"
    sm.append_context_edit(a, {"content": "back"})
    assert sm.build_session_projection().messages[1]["content"] == [{"type": "text", "text": "back"}]
    with pytest.raises(ValueError, match="not found"):
        sm.append_context_edit("nothere", None)
    with pytest.raises(ValueError, match="editable"):
        sm.append_context_edit(meta, None)
    assert sm.latest_invalidating_position() == len(sm.get_entries()) - 1


def test_an_undefined_custom_message_field_is_no_key_in_the_entry_and_its_message(tmp_path: Path) -> None:
    """session-manager.js:968-981 and messages.js:57-66: ``customType``, ``content``, ``display``
    and ``details`` go into the entry as they are, so ``undefined`` (a boundary draft without the
    field) is no key in the session file and in the projected message; ``null`` stays ``null``."""
    sm = manager(tmp_path)
    sm.append_message(user("u"))
    first = sm.append_custom_message_entry("t", "a", UNDEFINED)
    second = sm.append_custom_message_entry(UNDEFINED, None, False)
    assert {
        k: v for k, v in (sm.get_entry(first) or {}).items() if k in ("customType", "content", "display")
    } == {
        "customType": "t",
        "content": "a",
    }
    entry = sm.get_entry(second) or {}
    assert "customType" not in entry and entry["content"] is None and entry["display"] is False
    lines = [json.loads(line) for line in Path(sm.get_session_file() or "").read_text().splitlines()]
    assert "display" not in lines[-2] and "customType" not in lines[-1]
    messages = sm.build_session_projection().messages
    assert "display" not in messages[1] and messages[1]["customType"] == "t"
    assert "customType" not in messages[2] and messages[2]["content"] == []


def test_null_details_or_data_is_null_and_undefined_is_no_key(tmp_path: Path) -> None:
    """session-manager.js:921-932, 968-981 write ``details`` and ``data`` as given: ``None``
    (a draft's ``null``) is ``null`` in the entry, the session file and the projected message;
    :data:`UNDEFINED` (the default, the simulator's own "no details") is no key."""
    sm = manager(tmp_path)
    sm.append_message(user("u"))
    null_details = sm.append_custom_message_entry("t", "a", True, None)
    no_details = sm.append_custom_message_entry("t", "b", True)
    null_data = sm.append_custom_entry("c", None)
    no_data = sm.append_custom_entry("c")
    entries = [sm.get_entry(i) or {} for i in (null_details, no_details, null_data, no_data)]
    assert entries[0]["details"] is None and "details" not in entries[1]
    assert entries[2]["data"] is None and "data" not in entries[3]
    lines = [json.loads(line) for line in Path(sm.get_session_file() or "").read_text().splitlines()]
    assert lines[-4]["details"] is None and "details" not in lines[-3]
    assert lines[-2]["data"] is None and "data" not in lines[-1]
    messages = sm.build_session_projection().messages
    assert messages[1]["details"] is None and "details" not in messages[2]


def test_branch_moves_the_leaf_and_the_path(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    a = sm.append_message(user("a"))
    b = sm.append_message(assistant("b"))
    sm.append_message(user("c"))
    sm.branch(a)
    d = sm.append_message(user("d"))
    assert [e["id"] for e in sm.get_branch()] == [a, d]
    assert [e["id"] for e in sm.get_branch(b)] == [a, b]
    assert sm.branch_position(b) == -1
    assert [m["content"][0]["text"] for m in sm.build_session_projection().messages] == ["a", "d"]
    assert len(sm.get_entries()) == 4
    with pytest.raises(ValueError):
        sm.branch("missing")


def test_projection_is_cached_until_the_next_append(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    sm.append_message(user("a"))
    first = sm.build_session_projection()
    assert sm.build_session_projection() is first
    sm.append_message(assistant("b"))
    assert sm.build_session_projection() is not first


def test_open_resumes_a_file_and_appends(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    sm.append_message(user("a"))
    sm.append_message(assistant("b"))
    path = sm.get_session_file()
    assert path is not None
    again = SessionManager.open(
        path, cwd="/p", session_dir=str(tmp_path), clock=VirtualClock(ManualLoopClock()), rng=SeededRandom(9)
    )
    assert again.get_session_id() == sm.get_session_id()
    assert again.get_leaf_id() == sm.get_leaf_id()
    again.append_message(user("c"))
    assert len(file_lines(again)) == 4


def test_open_skips_malformed_lines_and_refuses_non_sessions(tmp_path: Path) -> None:
    sm = manager(tmp_path)
    sm.append_message(user("a"))
    path = Path(sm.get_session_file() or "")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n\n")
    assert len(load_entries(str(path))) == 2
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text("garbage\n", encoding="utf-8")
    with pytest.raises(SessionFileError):
        SessionManager.open(
            str(bogus),
            cwd="/p",
            session_dir=str(tmp_path),
            clock=VirtualClock(ManualLoopClock()),
            rng=SeededRandom(1),
        )
    missing = tmp_path / "new.jsonl"
    fresh = SessionManager.open(
        str(missing),
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(1),
    )
    assert fresh.get_session_file() == str(missing) and not missing.exists()


def test_v1_files_are_migrated_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = [
        {"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
        {"type": "message", "timestamp": "2026-01-01T00:00:00.001Z", "message": user("a")},
        {
            "type": "message",
            "timestamp": "2026-01-01T00:00:00.002Z",
            "message": {"role": "hookMessage", "content": "x", "timestamp": 3},
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    sm = SessionManager.open(
        str(path),
        cwd="/p",
        session_dir=str(tmp_path),
        clock=VirtualClock(ManualLoopClock()),
        rng=SeededRandom(1),
    )
    rewritten = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rewritten[0]["version"] == 3
    assert [(e["id"], e["parentId"]) for e in rewritten[1:]] == [("00000001", None), ("00000002", "00000001")]
    assert rewritten[2]["message"]["role"] == "custom"
    assert sm.get_leaf_id() == "00000002"


def test_session_name_and_in_memory_sessions(tmp_path: Path) -> None:
    sm = manager(tmp_path, persist=False)
    assert sm.get_session_file() is None
    sm.append_session_info("  first\nline  ")
    assert sm.get_session_name() == "first line"
    sm.append_message(user("a"))
    assert not list((tmp_path / "sessions").glob("*")) if (tmp_path / "sessions").exists() else True


def test_incremental_projection_equals_a_rebuild(tmp_path: Path) -> None:
    """The projection is extended entry by entry; it must always equal one built from scratch."""
    rng = random.Random(7)
    sm = manager(tmp_path, persist=False)
    ids: list[str] = []
    for step in range(400):
        roll = rng.random()
        if roll < 0.35:
            ids.append(sm.append_message(user("u" * rng.randint(1, 50), step)))
        elif roll < 0.7:
            ids.append(sm.append_message(assistant("a" * rng.randint(1, 50), rng.randint(0, 100), step)))
        elif roll < 0.8:
            sm.append_custom_entry("meta", {"step": step})
        elif roll < 0.86:
            ids.append(sm.append_custom_message_entry("note", f"n{step}", True))
        elif roll < 0.93 and ids:
            target = rng.choice(ids)
            if sm.branch_position(target) >= 0:
                sm.append_context_edit(target, None if rng.random() < 0.5 else {"content": f"edit {step}"})
        elif ids:
            sm.append_compaction(f"S{step}", rng.choice(ids), step, UNDEFINED, False)
        incremental = sm.build_session_projection()
        saved = sm._projection_cache
        sm._projection_cache = None
        rebuilt = sm.build_session_projection()
        sm._projection_cache = saved  # keep extending the incremental one
        assert incremental.messages == rebuilt.messages, step
        assert [(e.source["id"], e.messages) for e in incremental.entries] == [
            (e.source["id"], e.messages) for e in rebuilt.entries
        ], step
        assert (incremental.thinking_level, incremental.model) == (rebuilt.thinking_level, rebuilt.model)


def test_a_number_that_is_not_finite_is_written_as_json_stringify_writes_it() -> None:
    """``JSON.stringify`` writes ``NaN`` and the infinities as ``null`` (ECMA-262
    SerializeJSONProperty), so a compaction's ``NaN`` ``tokensBefore`` (a kept user text that is a
    number) is ``null`` in Pi's session file; ``json.dumps`` alone wrote ``NaN``, which
    ``JSON.parse`` refuses (Pi would skip the line on reading it back)."""
    nan, inf = float("nan"), float("inf")
    entry = {"type": "compaction", "tokensBefore": nan, "details": {"x": [inf, -inf, 1.5, 2]}, "t": (nan,)}
    line = dumps_entry(entry)
    assert line == '{"type":"compaction","tokensBefore":null,"details":{"x":[null,null,1.5,2]},"t":[null]}'
    assert json.loads(line)["tokensBefore"] is None
    assert entry["tokensBefore"] != entry["tokensBefore"]  # the entry itself keeps its NaN
    # Finite numbers, strings and a lone surrogate are written as before.
    assert dumps_entry({"a": 1.5, "b": "é", "c": "\ud800"}) == '{"a":1.5,"b":"é","c":"\\ud800"}'
    with pytest.raises(ValueError, match="Circular reference"):
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        dumps_entry(cyclic)


def test_the_hosts_session_writes_behave_as_a_text_file_opened_with_the_mode(tmp_path: Path) -> None:
    """``SimHost._write_session`` (``os.open``/``os.write``) does what ``open(path, mode,
    encoding="utf-8")`` and a ``write`` did: ``x`` creates and refuses an existing file, ``a``
    appends, ``w`` replaces, a missing directory is made, and a text UTF-8 cannot encode leaves
    the file opened (created) and raises the same ``UnicodeEncodeError``."""
    from pi_continuity_harness.scenario.document import parse_scenario  # noqa: PLC0415
    from pi_continuity_harness.simulator.simulation import Simulation  # noqa: PLC0415

    from .helpers import base  # noqa: PLC0415

    simulation = Simulation(parse_scenario(base()), workdir=tmp_path / "run")
    host = simulation.host
    path = str(tmp_path / "sessions" / "deeper" / "s.jsonl")  # the directories are missing
    host._write_session(path, "one ✓\n", "x")
    with pytest.raises(FileExistsError):
        host._write_session(path, "again\n", "x")
    host._write_session(path, "two\n", "a")
    assert Path(path).read_bytes() == "one ✓\ntwo\n".encode()
    host._write_session(path, "three\n", "w")
    assert Path(path).read_bytes() == b"three\n"
    fresh = str(tmp_path / "sessions" / "fresh.jsonl")
    with pytest.raises(UnicodeEncodeError):
        host._write_session(fresh, "lone \ud800\n", "x")
    assert Path(fresh).read_bytes() == b""
    with pytest.raises(UnicodeEncodeError):
        host._write_session(path, "lone \ud800\n", "w")
    assert Path(path).read_bytes() == b""  # truncated, as the text file was when opened
    assert oct(Path(path).stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    simulation.finish()


def _umask() -> int:
    import os  # noqa: PLC0415

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_context_edit_replacement_must_be_null_or_have_content_and_a_string_becomes_a_text_block(
    tmp_path: Path,
) -> None:
    """session-manager.js:985-1019 (``appendContextEdit``, which an ``agent_before_settle``
    draft reaches): the replacement is checked first; a string replacing an assistant's
    content is a text block, a user's stays a string."""
    sm = manager(tmp_path)
    user_id = sm.append_message(user("one"))
    assistant_id = sm.append_message(assistant("reply"))
    for bad in ({}, {"content": 5}, "text", ["x"]):
        with pytest.raises(ValueError, match="Context edit replacement must be null or contain string/array"):
            sm.append_context_edit("unknown", bad)
    edit = sm.get_entry(sm.append_context_edit(assistant_id, {"content": "short"}))
    assert edit is not None and edit["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    edit = sm.get_entry(sm.append_context_edit(user_id, {"content": "short"}))
    assert edit is not None and edit["replacement"] == {"content": "short"}


@pytest.mark.parametrize(
    "directory", ["", ".", "/", "//", "///", "a", "a/", "./a", "a/./b//", "/x/y/", "a/..", "../b"]
)
def test_a_session_file_is_named_as_pathlib_joins_it(directory: str) -> None:
    """The session file's path is ``str(Path(session_dir) / name)`` (``session_manager._file_in``
    joins the texts, the directory normalised as ``pathlib`` does), for any spelling of the
    directory."""
    from pi_continuity_harness.simulator.session_manager import _file_in  # noqa: PLC0415

    name = "2026-01-01T00-00-00-000Z_019b76da-a800-7d07-acd8-be6f9f6209c2.jsonl"
    assert _file_in(directory, name) == str(Path(directory) / name)
