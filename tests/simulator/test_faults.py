"""Filesystem faults through audit hooks (error, crash, corrupt, unexpected) and the crash/inject trace rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import CONFIG_DIR_NAME, ExtensionAPI
from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.fs_monitor import FilesystemMonitor
from pi_continuity_harness.scenario.operations import PromptOp
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.targets import make_target

from .helpers import base, event_records, long_text, noop, run, session_records


def writer(log: list[Any]) -> Any:
    """``/save TEXT``: mkdir, write a temp file, replace it into place, read it back, remove the temp copy."""

    def factory(pi: ExtensionAPI) -> None:
        async def save(args: str, ctx: Any) -> None:
            directory = os.path.join(ctx.cwd, CONFIG_DIR_NAME, "x")
            target = os.path.join(directory, "a.txt")
            try:
                os.makedirs(directory, exist_ok=True)
                with open(target + ".tmp", "w", encoding="utf-8") as handle:
                    handle.write(args)
                os.replace(target + ".tmp", target)
                with open(target, encoding="utf-8") as handle:
                    log.append(("read", handle.read()))
                with open(target + ".bak", "w", encoding="utf-8") as handle:
                    handle.write("b")
                os.remove(target + ".bak")
            except OSError as error:
                log.append(("error", error.errno, error.strerror))
                ctx.ui.notify(f"save failed: {error.strerror}", "error")

        pi.register_command("save", save)

    return factory


def fs_records(result: Any) -> list[tuple[Any, ...]]:
    """``(name, path)``, or ``(name, from, to)`` for a rename, of every ``fs`` record."""
    return [
        (r["name"], r["from"], r["to"]) if "to" in r else (r["name"], r["path"])
        for r in result.host.trace.records
        if r["kind"] == "fs"
    ]


def test_extension_file_effects_are_traced_after_they_happen_with_symbolic_paths(tmp_path: Path) -> None:
    log: list[Any] = []
    ops = [{"command": "/save hello"}, {"command": "/save again"}, {"prompt": "hi"}]
    result = run(tmp_path, base(operations=ops), writer(log))
    assert log == [("read", "hello"), ("read", "again")]
    x = "$WORK/project/.pi/x"
    one_save = [
        ("write", f"{x}/a.txt.tmp"),
        ("replace_before", f"{x}/a.txt.tmp", f"{x}/a.txt"),  # both files still on disk
        ("replace", f"{x}/a.txt.tmp", f"{x}/a.txt"),  # the rename happened
        ("read", f"{x}/a.txt"),
        ("write", f"{x}/a.txt.bak"),
        ("remove", f"{x}/a.txt.bak"),
    ]
    # The second save's mkdir finds the directory: the call failed, and says why.
    assert fs_records(result) == [("mkdir", x), *one_save, ("mkdir_failed", x), *one_save]
    failed = next(r for r in result.host.trace.records if r["name"] == "mkdir_failed")
    assert failed["error"] == "EEXIST"
    # The host's own I/O (settings, session files) is neither traced nor faultable.
    assert all("/sessions/" not in r[-1] and "settings.json" not in r[-1] for r in fs_records(result))


@pytest.mark.parametrize(
    ("after", "renamed"),
    [({"kind": "fs", "name": "replace"}, True), ({"kind": "fs", "name": "replace_before"}, False)],
)
def test_a_crash_after_replace_means_the_rename_happened(
    tmp_path: Path, after: dict[str, str], renamed: bool
) -> None:
    log: list[Any] = []
    faults = {"crash": [{"after": {**after, "glob": {"to": "$WORK/project/*/a.txt"}}}]}
    result = run(tmp_path, base(faults=faults, operations=[{"command": "/save data"}]), writer(log))
    directory = result.machine_dir / "project" / CONFIG_DIR_NAME / "x"
    assert (directory / "a.txt").exists() is renamed
    assert (directory / "a.txt.tmp").exists() is not renamed
    assert log == [] and result.host.crashed


def test_an_injected_fault_ends_the_operation_as_failed(tmp_path: Path) -> None:
    log: list[Any] = []
    faults = {"fs": [{"op": "write", "path": "$PROJECT/.pi/x/*.tmp", "errno": "ENOSPC"}]}
    result = run(tmp_path, base(faults=faults, operations=[{"command": "/save one"}]), writer(log))
    names = [r[0] for r in fs_records(result)]
    assert names == ["mkdir", "write_failed"]
    failed = next(r for r in result.host.trace.records if r["name"] == "write_failed")
    assert failed["error"] == "ENOSPC"


def test_error_fault_fails_the_matching_operation_with_the_errno(tmp_path: Path) -> None:
    log: list[Any] = []
    faults = {"fs": [{"op": "write", "path": "$PROJECT/.pi/x/*.tmp", "errno": "ENOSPC"}]}
    result = run(
        tmp_path,
        base(faults=faults, operations=[{"command": "/save one"}, {"command": "/save two"}]),
        writer(log),
    )
    assert log == [("error", 28, "No space left on device (injected fault)"), ("read", "two")]
    [fault] = [r for r in result.host.trace.records if r["kind"] == "fault"]
    assert (fault["name"], fault["op"], fault["effect"]) == ("fs", "write", "error")
    assert result.host.ui.notifications[0].message == "save failed: No space left on device (injected fault)"


def test_unexpected_fault_raises_an_exception_that_is_no_oserror(tmp_path: Path) -> None:
    """``effect: unexpected``: what an implementation catching only ``OSError`` lets through
    (spec §3/§5: even such an error inside the hook must not reach Pi)."""
    log: list[Any] = []
    faults = {"fs": [{"op": "write", "path": "$PROJECT/.pi/x/*.tmp", "effect": "unexpected"}]}
    result = run(tmp_path, base(faults=faults, operations=[{"command": "/save one"}]), writer(log))
    assert log == []  # the writer's ``except OSError`` did not catch it
    [fault] = [r for r in result.host.trace.records if r["kind"] == "fault"]
    assert (fault["name"], fault["op"], fault["effect"]) == ("fs", "write", "unexpected")
    failed = next(r for r in result.host.trace.records if r["name"] == "write_failed")
    assert failed["error"] == "RuntimeError"
    [error] = session_records(result, "extension_error")
    assert "unexpected internal error (injected fault) at write $PROJECT/.pi/x/a.txt.tmp" in error["error"]


def test_occurrence_and_times_select_which_matches_fail(tmp_path: Path) -> None:
    log: list[Any] = []
    faults = {"fs": [{"op": "any", "path": "$PROJECT/.pi/x/a.txt", "occurrence": 2, "times": 0}]}
    ops = [{"command": "/save one"}, {"command": "/save two"}, {"command": "/save three"}]
    run(tmp_path, base(faults=faults, operations=ops), writer(log))
    # Per save: replace (match 1..), read (match 2..): every match from the second on fails.
    assert [entry[0] for entry in log] == ["error", "error", "error"]


def test_corrupt_fault_truncates_the_file_before_it_is_read(tmp_path: Path) -> None:
    log: list[Any] = []
    faults = {"fs": [{"op": "read", "path": "$PROJECT/.pi/x/a.txt", "effect": "corrupt"}]}
    result = run(tmp_path, base(faults=faults, operations=[{"command": "/save 12345678"}]), writer(log))
    assert log == [("read", "1234")]
    assert (Path(result.host.paths.project_dir) / ".pi" / "x" / "a.txt").read_text() == "1234"


def test_crash_fault_kills_the_process_before_the_operation(tmp_path: Path) -> None:
    log: list[Any] = []
    faults = {"fs": [{"op": "replace", "path": "$PROJECT/.pi/x/a.txt", "effect": "crash"}]}
    ops = [
        {"prompt": "hello"},
        {"command": "/save data"},
        {"prompt": "ignored"},
        {"restart": None},
        {"prompt": "after"},
    ]
    result = run(tmp_path, base(faults=faults, operations=ops), writer(log))
    assert log == []
    outcomes = [(o.name, o.ok, o.error) for o in result.operations]
    assert outcomes == [
        ("prompt", True, None),
        ("command", False, "Pi crashed"),
        ("prompt", False, "Pi is not running"),
        ("restart", True, None),
        ("prompt", True, None),
    ]
    project = Path(result.host.paths.project_dir) / ".pi" / "x"
    assert (project / "a.txt.tmp").exists() and not (project / "a.txt").exists()
    kinds = [(r["kind"], r["name"]) for r in result.host.trace.records]
    crash = kinds.index(("host", "crash"))
    assert kinds[crash - 1] == ("fault", "fs")
    assert kinds[crash + 1] == ("op", "restart")  # nothing from the dead process in between
    assert [r["reason"] for r in event_records(result, "session_start")] == ["startup", "startup"]
    # The resumed session continues the same file.
    assert len(result.session_files()) == 1


def test_crash_rule_fires_after_the_matching_record(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}, {"prompt": "three"}],
        faults={"crash": [{"after": {"kind": "session", "name": "agent_settled", "occurrence": 2}}]},
    )
    result = run(tmp_path, scenario)
    assert [o.ok for o in result.operations] == [True, False, False]
    tail = [(r["kind"], r["name"]) for r in result.host.trace.records][-3:]
    assert tail == [("session", "agent_settled"), ("fault", "crash"), ("host", "crash")]
    assert result.host.crashed


def test_a_where_field_of_a_boolean_matches_only_a_boolean(tmp_path: Path) -> None:
    """``where: {turnIndex: false}`` fired on ``turnIndex: 0`` (Python's ``False == 0``): a rule
    written to match no record crashed the run at the first turn. ``0`` does match it."""
    never = base(
        operations=[{"prompt": "one"}],
        faults={"crash": [{"after": {"kind": "event", "name": "turn_start", "where": {"turnIndex": False}}}]},
    )
    result = run(tmp_path / "never", never)
    assert [o.ok for o in result.operations] == [True]
    assert not result.host.crashed
    zero = base(
        operations=[{"prompt": "one"}],
        faults={"crash": [{"after": {"kind": "event", "name": "turn_start", "where": {"turnIndex": 0}}}]},
    )
    assert run(tmp_path / "zero", zero).host.crashed


def test_crash_between_effects_leaves_the_files_as_they_were(tmp_path: Path) -> None:
    """Crash right after the compaction entry is written: the file has it, ``session_compact`` never runs."""
    seen: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_compact", lambda e, c: seen.append("compact"))

    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={"agent": [{"text": long_text("a1")}, {"text": long_text("a2"), "context_tokens": 17010}]},
        faults={"crash": [{"after": {"kind": "entry", "name": "compaction"}}]},
    )
    result = run(tmp_path, scenario, ext)
    assert seen == []
    lines = result.session_files()[0].read_text().splitlines()
    assert '"type":"compaction"' in lines[-1]
    assert not any(r["name"] == "session_shutdown" for r in result.host.trace.records)


def test_inject_runs_its_operations_right_after_the_record(tmp_path: Path) -> None:
    """Issue 12: an abort injected after the synthesis reply ran 24 records late, after the
    compaction had committed. Now the abort is the next record, and the compaction is aborted."""

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            reply = await ctx.model_registry.complete(ctx.model, {"messages": []}, signal=event.signal)
            if event.signal.aborted:
                return {"cancel": True}
            return {
                "compaction": {
                    "summary": reply["content"][0]["text"],
                    "firstKeptEntryId": event.preparation.first_kept_entry_id,
                    "tokensBefore": 1,
                }
            }

        pi.on("session_before_compact", before)

    after = {"kind": "model", "name": "reply", "where": {"caller": "extension"}}
    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={
            "agent": [{"text": long_text("a1")}, {"text": long_text("a2"), "context_tokens": 17010}],
            "extension": [{"kind": "raw", "text": "summary"}],
        },
        faults={"inject": [{"after": after, "operations": ["abort"]}]},
    )
    result = run(tmp_path, scenario, ext)
    names = [(r["kind"], r["name"]) for r in result.host.trace.records]
    inject = names.index(("fault", "inject"))
    assert names[inject - 1] == ("model", "reply") and names[inject + 1] == ("op", "abort")
    assert ("entry", "compaction") not in names
    assert session_records(result, "compaction_end")[0]["aborted"] is True


def test_inject_rule_runs_operations_at_an_awaited_point(tmp_path: Path) -> None:
    """Abort injected right after ``session_before_compact`` is dispatched → the compaction is aborted."""
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def before(event: Any, ctx: Any) -> Any:
            reply = await ctx.model_registry.complete(ctx.model, {"messages": []}, signal=event.signal)
            seen.append(reply["stopReason"])
            return {"cancel": True} if reply["stopReason"] != "stop" else None

        pi.on("session_before_compact", before)

    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={
            "agent": [{"text": long_text("a1")}, {"text": long_text("a2"), "context_tokens": 17010}],
            "extension": [{"kind": "valid", "latency_ms": 100}],
        },
        faults={
            "inject": [
                {"after": {"kind": "event", "name": "session_before_compact"}, "operations": ["abort"]}
            ]
        },
    )
    result = run(tmp_path, scenario, ext)
    assert seen == ["aborted"]
    inject = next(r for r in result.host.trace.records if r["kind"] == "fault" and r["name"] == "inject")
    assert (inject["after"], inject["operations"]) == ("event:session_before_compact", 1)
    assert session_records(result, "compaction_end")[0]["aborted"] is True
    assert session_records(result, "agent_settled")[-1]["aborted"] is True


def test_only_the_run_directory_is_observed_not_a_sibling_with_the_same_prefix(tmp_path: Path) -> None:
    workdir = str(tmp_path / "run-7")
    trace = Trace(lambda: 0, workdir)
    monitor = FilesystemMonitor(workdir=workdir, placeholders={}, trace=trace)
    monitor.observe("read", str(tmp_path / "run-70" / "a.txt"))
    monitor.observe("write", str(tmp_path / "run-7" / "a.txt"))
    monitor.flush()  # no wrapper saw the write end: recorded from the disk (no file: failed)
    assert [(r["name"], r["path"]) for r in trace.records] == [("write_failed", "$WORK/a.txt")]


def test_a_write_to_a_sibling_with_the_same_prefix_is_refused_as_outside_the_run(tmp_path: Path) -> None:
    workdir = str(tmp_path / "run-7")
    trace = Trace(lambda: 0, workdir)
    monitor = FilesystemMonitor(workdir=workdir, placeholders={}, trace=trace)
    with pytest.raises(PermissionError, match="outside the run"):
        monitor.observe("write", str(tmp_path / "run-70" / "a.txt"))
    assert [(r["name"], r["op"]) for r in trace.records] == [("refused", "write")]


def test_trace_paths_replace_the_run_directory_but_not_a_sibling_with_the_same_prefix() -> None:
    trace = Trace(lambda: 0, "/w/run-7")
    trace.emit("fs", "write", path="/w/run-7/a.txt", target="/w/run-70/b.txt", text="in /w/run-7.")
    record = trace.records[0]
    assert (record["path"], record["target"], record["text"]) == (
        "$WORK/a.txt",
        "/w/run-70/b.txt",
        "in $WORK.",
    )


#: Bound when this module was imported, before any monitor wrapped ``os.replace``.
_UNWRAPPED_REPLACE = os.replace


def test_an_operation_no_wrapper_saw_end_is_recorded_from_the_disk(tmp_path: Path) -> None:
    def ext(pi: ExtensionAPI) -> None:
        async def move(args: str, ctx: Any) -> None:
            Path(ctx.cwd, "a.tmp").write_text("x", encoding="utf-8")
            _UNWRAPPED_REPLACE(os.path.join(ctx.cwd, "a.tmp"), os.path.join(ctx.cwd, "a.txt"))
            ctx.ui.notify("moved", "info")

        pi.register_command("move", move)

    result = run(tmp_path, base(operations=[{"command": "/move"}]), ext)
    names = [(r["kind"], r["name"]) for r in result.host.trace.records]
    moved = names.index(("fs", "replace"))
    assert names[moved - 1] == ("fs", "replace_before") and names[moved + 1] == ("ui", "notify")


def test_a_crashed_pi_writes_no_more_rpc_events(tmp_path: Path) -> None:
    """Real Pi's RPC stream ends with its process; the simulated code that was running still
    unwinds after a crash (the run's ``finally`` emits ``agent_settled``), which must not reach
    the observation (found by ``compare``: four crash scenarios differed from real Pi)."""
    crash_at_reply = {"crash": [{"after": {"kind": "model", "name": "reply"}}]}
    scenario = parse_scenario(base(faults=crash_at_reply))
    target = make_target("sim", noop, tmp_path / "machine")
    target.start(scenario)
    target.perform(PromptOp(prompt="hello"))
    observation = target.observe()
    types = [e["type"] for e in observation.rpc_events]
    assert observation.operations[-1].error == "Pi crashed" or target.simulation.host.crashed
    assert "agent_start" in types
    assert "agent_settled" not in types and "agent_end" not in types, types
