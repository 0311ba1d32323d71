"""``import-session`` keeps a recorded session's tool calls inside the replay's run.

A session file records the agent's tool calls with the paths of the machine it was recorded on
(Pi resolves a tool's ``path`` against the header's ``cwd``: ``resolveToCwd``, Pi 1.6
``dist/core/tools/path-utils.js``). Before, the import scripted them as they were, and the
replay check (or any replay) wrote, read and removed those paths on the developer's machine: a
recorded ``write /tmp/r/IMPORT_ESCAPE.txt`` made ``import-session`` create that file. A path
under the recorded cwd now becomes the same path relative to the project; one outside it is
replayed under ``outside-project/`` in the project, and the command says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario import import_session
from pi_continuity_harness.simulator.simulation import simulate


def _session(tmp_path: Path, calls: list[dict[str, Any]], *, cwd: Any = "/x", results: bool = True) -> Path:
    """A Pi 1.6 session: a prompt, one reply making ``calls``, their results (``results``), a stop."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": "abc",
        "timestamp": "2026-01-01T00:00:00.000Z",
    }
    if cwd is not None:
        header["cwd"] = cwd
    entries: list[dict[str, Any]] = [
        header,
        {"type": "model_change", "id": "e1", "parentId": None, "provider": "fake", "modelId": "fake-model"},
        {"type": "message", "id": "e2", "parentId": "e1", "message": {"role": "user", "content": "go"}},
    ]
    blocks = [{"type": "toolCall", "id": f"c{n}", **call} for n, call in enumerate(calls)]
    assistant = {"role": "assistant", "content": blocks, "stopReason": "toolUse"}
    entries.append({"type": "message", "id": "e3", "parentId": "e2", "message": assistant})
    parent = "e3"
    if results:
        for n in range(len(calls)):
            result = {"role": "toolResult", "toolCallId": f"c{n}", "content": [{"type": "text", "text": ""}]}
            entries.append({"type": "message", "id": f"r{n}", "parentId": parent, "message": result})
            parent = f"r{n}"
    done = {"role": "assistant", "content": [{"type": "text", "text": "done"}], "stopReason": "stop"}
    entries.append({"type": "message", "id": "e4", "parentId": parent, "message": done})
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def _arguments(session: Path) -> list[dict[str, Any]]:
    scenario = import_session(session)
    return [dict(call.arguments) for reply in scenario.model.agent for call in reply.tool_calls]


def test_a_recorded_write_outside_its_project_is_replayed_inside_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported escape: importing (with its replay check) created the recorded file."""
    escape = tmp_path / "elsewhere" / "IMPORT_ESCAPE.txt"
    calls = [{"name": "write", "arguments": {"path": str(escape), "content": "x"}}]
    session = _session(tmp_path, calls, cwd=str(tmp_path / "project"))
    out = tmp_path / "s.yaml"
    assert main(["import-session", str(session), "--output", str(out)]) == 0
    assert not escape.parent.exists()
    placed = f"outside-project{escape}"
    assert _arguments(session) == [{"path": placed, "content": "x"}]
    printed = capsys.readouterr().out
    assert f"line 4: the write call's path {str(escape)!r} is outside the recorded project" in printed
    assert f"replayed as {placed!r}, inside the run's project" in printed
    assert "outside the recorded project" in import_session(session).description


def test_the_replay_writes_the_recorded_projects_files_in_its_own_project(tmp_path: Path) -> None:
    """A path under the recorded cwd (absolute, relative, ``./``, Pi's ``@`` prefix) names the
    same file relative to the scenario's project, so the replay writes where the recording did."""
    calls = [
        {"name": "write", "arguments": {"path": "/x/sub/notes.md", "content": "one"}},
        {"name": "write", "arguments": {"path": "@/x/at.md", "content": "two"}},
        {"name": "write", "arguments": {"path": "edited.md", "content": "draft"}},
        {
            "name": "edit",
            "arguments": {"path": "./sub/../edited.md", "edits": [{"oldText": "draft", "newText": "3"}]},
        },
        {"name": "read", "arguments": {"path": "/x/sub/notes.md"}},
        {"name": "write", "arguments": {"path": "plain.md", "content": "four"}},
    ]
    session = _session(tmp_path, calls)
    assert [a["path"] for a in _arguments(session)] == [
        "sub/notes.md",
        "at.md",
        "edited.md",
        "edited.md",
        "sub/notes.md",
        "plain.md",
    ]
    result = simulate(import_session(session), workdir=tmp_path / "run", implementation="null")
    project = Path(result.host.paths.project_dir)
    assert (project / "sub" / "notes.md").read_text(encoding="utf-8") == "one"
    assert (project / "at.md").read_text(encoding="utf-8") == "two"
    assert (project / "edited.md").read_text(encoding="utf-8") == "3"


def test_paths_that_leave_the_recorded_project_are_placed_under_outside_project(tmp_path: Path) -> None:
    calls = [
        {"name": "write", "arguments": {"path": "../../etc/x", "content": "c"}},
        {"name": "read", "arguments": {"path": "~/.ssh/id_rsa"}},
        {"name": "read", "arguments": {"path": "file:///etc/passwd"}},
        {"name": "edit", "arguments": {"path": "/home/u/x/../y/z", "newText": "n"}},
        {"name": "write", "arguments": {"path": "//tmp//a", "content": "c"}},
    ]
    session = _session(tmp_path, calls, cwd="/home/u/x")
    assert [a["path"] for a in _arguments(session)] == [
        "outside-project/home/etc/x",
        "outside-project/~/.ssh/id_rsa",
        "outside-project/etc/passwd",
        "outside-project/home/u/y/z",
        "outside-project/tmp/a",
    ]
    description = import_session(session).description
    assert description.count("is outside the recorded project '/home/u/x'") == 5


def test_a_recorded_rm_removes_only_inside_the_run(tmp_path: Path) -> None:
    """The simulated bash really runs ``rm`` (any other command prints its recorded output and
    is kept as recorded); a call without a recorded result (the session ended before the tool
    finished) is run on replay. Its paths are placed like a tool's."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    calls = [
        {"name": "bash", "arguments": {"command": f"rm -f {victim} /x/old.md ~/.bashrc"}},
        {"name": "bash", "arguments": {"command": "cat /etc/hostname > /tmp/x"}},
    ]
    session = _session(tmp_path, calls, results=False)
    assert _arguments(session) == [
        {"command": f"rm -f outside-project{victim} old.md outside-project/~/.bashrc"},
        {"command": "cat /etc/hostname > /tmp/x"},
    ]
    assert main(["import-session", str(session), "--output", str(tmp_path / "s.yaml")]) == 0
    assert victim.read_text(encoding="utf-8") == "keep me\n"


REFUSED = {
    "rm with quoting": (
        [{"name": "bash", "arguments": {"command": "rm '/tmp/a b'"}}],
        "/x",
        "line 4: the bash command \"rm '/tmp/a b'\" removes files the import cannot place inside the run",
    ),
    "a match placeholder": (
        [{"name": "write", "arguments": {"path": "{{match:(/tmp/\\S+)}}", "content": "c"}}],
        "/x",
        "line 4: the write call's arguments hold '{{match:'",
    ),
    "no cwd in the header": (
        [{"name": "write", "arguments": {"path": "/tmp/a", "content": "c"}}],
        None,
        "line 4: the write call's path '/tmp/a': the header's cwd None is not an absolute path",
    ),
    "the project itself": (
        [{"name": "write", "arguments": {"path": "/x/.", "content": "c"}}],
        "/x",
        "line 4: the write call's path '/x/.' names the recorded project directory itself, not a file in it",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_tool_path_that_cannot_be_placed_in_the_run_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    calls, cwd, reason = REFUSED[case]
    session = _session(tmp_path, calls, cwd=cwd)
    out = tmp_path / "s.yaml"
    assert main(["import-session", str(session), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pi-continuity-harness import-session: {session}: {reason}"), err
    assert len(err.splitlines()) == 1
    assert not out.exists()
