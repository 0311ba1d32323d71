"""The ``switch_session`` and ``clone`` operations on the simulator.

``switch_session: previous`` is RPC ``switch_session`` (``AgentSessionRuntime.switchSession``,
agent-session-runtime.js:147-165) to the file the last ``session_start`` of the process named as
``previousSessionFile``; ``clone`` is RPC ``clone`` (rpc-mode.js:505-512, ``fork(leafId,
{position: "at"})``). Both targets are compared in
``tests/realpi/test_differential_switch_session.py``; these tests pin the same behaviour without
Node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.scenario.operations import NO_PREVIOUS_SESSION, no_such_session_message

from .helpers import base, op_ends, run, session_lines


def _events(result: Any, *names: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "event" and r["name"] in names]


def test_switch_session_with_no_previous_session_is_the_operations_error_and_sends_nothing(
    tmp_path: Path,
) -> None:
    result = run(tmp_path, base(operations=["switch_session"], model={"agent": []}))
    assert op_ends(result) == [("switch_session", False, NO_PREVIOUS_SESSION)]
    assert [e["name"] for e in _events(result, "session_before_switch", "session_shutdown")] == [
        "session_shutdown"  # the quit at the end only
    ]


def test_switch_session_to_n_resumes_the_runs_nth_session_file_across_a_restart(tmp_path: Path) -> None:
    """``to: N`` counts the run's session files in the order a runtime first started in each,
    restarts included (the restart resumes B: no new file); beyond them it is refused."""
    scenario = base(
        operations=[
            {"prompt": "in A"},
            "new_session",
            {"prompt": "in B"},
            "restart",
            {"switch_session": {"to": 3}},
            {"switch_session": {"to": 1}},
            {"prompt": "A again"},
            {"switch_session": {"to": 1}},  # the session it is in: resumed anew
        ],
        model={"agent": [{"text": "a"}, {"text": "b"}, {"text": "a2"}]},
    )
    result = run(tmp_path, scenario)
    ends = op_ends(result)
    assert ends[4] == ("switch_session", False, no_such_session_message(3, 2))
    assert all(ok for _, ok, _ in ends[5:])
    starts = _events(result, "session_start")
    assert [e["reason"] for e in starts] == ["startup", "new", "startup", "resume", "resume"]
    a_file, b_file = (Path(file).name for file in result.host.session_files)
    # From A to B (new), from B (the restarted process's) to A, then from A to A.
    previous = [Path(e["previousSessionFile"]).name for e in starts[1:2] + starts[3:]]
    assert previous == [a_file, b_file, a_file] and a_file != b_file


def test_switch_session_resumes_the_previous_session_with_pis_events_in_order(tmp_path: Path) -> None:
    scenario = base(
        operations=[
            {"prompt": "in A"},
            "new_session",
            {"prompt": "in B"},
            "switch_session",
            {"prompt": "A again"},
        ],
        model={"agent": [{"text": "a"}, {"text": "b"}, {"text": "a2"}]},
    )
    result = run(tmp_path, scenario)
    assert all(ok for _, ok, _ in op_ends(result))
    events = _events(result, "session_before_switch", "session_shutdown", "session_start")
    resumed = [e for e in events if e.get("reason") == "resume"]
    assert [e["name"] for e in resumed] == ["session_before_switch", "session_shutdown", "session_start"]
    a_file, b_file = resumed[0]["targetSessionFile"], resumed[2]["previousSessionFile"]
    assert resumed[1]["targetSessionFile"] == a_file != b_file
    files = sorted(result.session_files())
    assert len(files) == 2
    a = session_lines(files[0])
    users = [
        e["message"]["content"][0]["text"]
        for e in a
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert users == ["in A", "A again"]


def test_a_restart_forgets_the_previous_session(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "a"}, "new_session", {"prompt": "b"}, "restart", "switch_session"],
        model={"agent": [{"text": "1"}, {"text": "2"}]},
    )
    assert op_ends(run(tmp_path, scenario))[-1] == ("switch_session", False, NO_PREVIOUS_SESSION)


def test_an_extension_cancels_the_resume(tmp_path: Path) -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before_switch(event: Any, _ctx: Any) -> Any:
            seen.append((event.reason, event.target_session_file is not None))
            return {"cancel": event.reason == "resume"}

        pi.on("session_before_switch", before_switch)

    scenario = base(
        operations=[{"prompt": "a"}, "new_session", "switch_session"], model={"agent": [{"text": "1"}]}
    )
    result = run(tmp_path, scenario, ext)
    assert seen == [("new", False), ("resume", True)]
    assert op_ends(result)[-1] == ("switch_session", False, "cancelled")


def test_clone_copies_the_whole_branch_into_a_session_linked_to_the_source(tmp_path: Path) -> None:
    positions: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        pi.on("session_before_fork", lambda event, _ctx: positions.append(event.position))

    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}, "clone"],
        model={"agent": [{"text": "first"}, {"text": "second"}]},
    )
    result = run(tmp_path, scenario, ext)
    assert op_ends(result)[-1] == ("clone", True, None)
    assert positions == ["at"]
    source, cloned = (session_lines(f) for f in sorted(result.session_files()))
    assert str(cloned[0]["parentSession"]).endswith(sorted(result.session_files())[0].name)
    assert [e["id"] for e in cloned[1:]] == [e["id"] for e in source[1:]]
    assert _events(result, "session_start")[-1]["reason"] == "fork"


def test_clone_before_the_session_file_is_written_is_pis_error(tmp_path: Path) -> None:
    """A new session has a leaf (its model and thinking level entries) but no file until its
    first assistant message: Pi refuses to clone it (agent-session-runtime.js:234-236)."""
    result = run(tmp_path, base(operations=["clone"], model={"agent": []}))
    assert op_ends(result) == [
        ("clone", False, "This session has not been saved yet. Send a message before cloning or forking it.")
    ]
