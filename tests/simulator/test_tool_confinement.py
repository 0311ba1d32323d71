"""Confinement of the model's built-in tools: a scripted ``read``/``write``/``edit`` or ``bash``
call may not touch a file outside the run (found in stop 28: a scenario's ``write`` to
``/tmp/x``, ``edit`` of its own scenario file, ``rm -f`` of a file beside the run and ``read``
of ``/etc/passwd`` all did, exit 0). A literal path is refused when the scenario loads, for
both targets (real Pi runs the tools for real); a path the model takes from the run
(``{{match:...}}``) is refused by the simulated host when the tool runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.tool_confinement import real_pi_command_problem, served_call_problem
from pi_continuity_harness.simulator.simulation import simulate


def _scenario(*calls: dict[str, Any], prompt: str = "go") -> dict[str, Any]:
    return {
        "name": "tools",
        "model": {"agent": [{"tool_calls": list(calls)}, {"text": "done"}]},
        "operations": [{"prompt": prompt}],
    }


@pytest.mark.parametrize(
    ("call", "why"),
    [
        (
            {"name": "write", "arguments": {"path": "/tmp/x.txt", "content": "x"}},
            "the write tool's path '/tmp/x.txt'",
        ),
        (
            {"name": "write", "arguments": {"path": "../../x.txt", "content": "x"}},
            "the write tool's path '../../x.txt'",
        ),
        (
            {"name": "edit", "arguments": {"path": "a/../../x", "newText": "x"}},
            "the edit tool's path 'a/../../x'",
        ),
        ({"name": "read", "arguments": {"path": "~/.ssh/id_rsa"}}, "the read tool's path '~/.ssh/id_rsa'"),
        ({"name": "bash", "arguments": {"command": "rm -f /tmp/victim"}}, "names '/tmp/victim'"),
        ({"name": "bash", "arguments": {"command": "rm -rf ../sibling"}}, "goes up with '..'"),
        ({"name": "bash", "arguments": {"command": "rm -rf ~"}}, "names the home directory ('~')"),
        ({"name": "bash", "arguments": {"command": "rm -rf $HOME/x"}}, "computes a path ('$' or '`')"),
        ({"name": "bash", "arguments": {"command": "rm -rf `pwd`/.."}}, "goes up with '..'"),
    ],
    ids=lambda v: v if isinstance(v, str) else json.dumps(v)[:40],
)
def test_a_scripted_tool_call_naming_a_path_outside_the_project_is_refused_at_load(
    call: dict[str, Any], why: str
) -> None:
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(_scenario(call), "t.yaml")
    message = str(refused.value)
    assert message.startswith("t.yaml: model.agent[0].tool_calls[0]: "), message
    assert why in message


@pytest.mark.parametrize(
    "call",
    [
        {"name": "write", "arguments": {"path": "notes/a.txt", "content": "x"}},
        {"name": "edit", "arguments": {"path": "./a/../b.txt", "newText": "x"}},
        {"name": "read", "arguments": {"path": "{{match:(/\\S+)}}"}},
        {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"},
        {"name": "bash", "arguments": {"command": "head -c 20 /dev/zero | tr '\\0' x > out.txt"}},
        {"name": "bash", "arguments": {"command": "rm -f {{match:(/\\S+\\.md)}}"}},
        {"name": "custom_tool", "arguments": {"path": "/anything"}},
    ],
    ids=lambda v: json.dumps(v)[:50],
)
def test_a_scripted_tool_call_inside_the_project_or_taken_from_the_run_loads(call: dict[str, Any]) -> None:
    parse_scenario(_scenario(call), "t.yaml")


def test_a_tool_path_the_model_takes_from_the_run_is_refused_when_it_leads_outside(tmp_path: Path) -> None:
    """The model copies a path out of the prompt (``{{match:...}}``); the simulated host
    refuses each tool's file outside the run as the OS refuses an unwritable path: the tool
    fails, the trace records ``fs:refused``, and nothing outside changes."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    (victim / "secret.txt").write_text("TOP-SECRET-CONTENT\n", encoding="utf-8")
    scenario = parse_scenario(
        _scenario(
            {"name": "write", "arguments": {"path": "{{match:write (\\S+)}}", "content": "pwned"}},
            {
                "name": "edit",
                "arguments": {
                    "path": "{{match:edit (\\S+)}}",
                    "edits": [{"oldText": "precious", "newText": "pwned"}],
                },
            },
            {"name": "read", "arguments": {"path": "{{match:read (\\S+)}}"}},
            {"name": "bash", "arguments": {"command": "rm -f {{match:remove (\\S+)}}"}},
            prompt=(
                f"write {victim / 'new.txt'} edit {victim / 'keep.txt'} read {victim / 'secret.txt'} "
                f"remove {victim / 'keep.txt'}"
            ),
        )
    )
    simulate(scenario, workdir=tmp_path / "run")
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt", "secret.txt"]
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    records = [json.loads(line) for line in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    refused = [(r["op"], r["path"]) for r in records if r["kind"] == "fs" and r["name"] == "refused"]
    assert refused == [
        ("tool_write", str(victim / "new.txt")),
        ("tool_write", str(victim / "keep.txt")),
        ("tool_read", str(victim / "secret.txt")),
        ("tool_remove", str(victim / "keep.txt")),
    ]
    (session_file,) = (tmp_path / "run").rglob("sessions/*.jsonl")
    entries = [json.loads(line) for line in session_file.read_text(encoding="utf-8").splitlines()]
    results = [e for e in entries if e.get("type") == "message" and e["message"]["role"] == "toolResult"]
    assert [r["message"]["isError"] for r in results] == [True, True, True, True]
    assert "TOP-SECRET-CONTENT" not in json.dumps(entries)


def test_a_tool_path_inside_the_run_is_written_as_before(tmp_path: Path) -> None:
    scenario = parse_scenario(
        _scenario({"name": "write", "arguments": {"path": "notes/a.txt", "content": "kept"}})
    )
    result = simulate(scenario, workdir=tmp_path / "run")
    assert Path(result.host.disk.project_dir, "notes", "a.txt").read_text(encoding="utf-8") == "kept"


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("python -c 'import os'", "python"),
        ("ls && sh run.sh", "sh"),
        ("cat notes.txt | bash", "bash"),
        ("echo hi; node x.js", "node"),
        ("env rm x", "env"),
        ("FOO=1 ls", "FOO=1"),
        ("sed -i s/a/b/ x", "sed"),
        ("(cd sub; make)", "make"),
    ],
)
def test_real_pi_runs_only_programs_that_act_on_the_paths_they_are_given(command: str, program: str) -> None:
    """A scenario is shared data: a shell, an interpreter or a program that runs others would
    run whatever it says on the machine that replays it on real Pi (the simulator runs no
    command but ``rm`` and ``echo``, so such a scenario still loads)."""
    parse_scenario(_scenario({"name": "bash", "arguments": {"command": command}}))
    problem = real_pi_command_problem(command)
    assert problem is not None and f"runs {program!r}" in problem


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo x >/tmp/out", "names '/tmp/out'"),
        ("cat '/etc/passwd'", "names '/etc/passwd'"),
        ("ls ../..", "goes up with '..'"),
        ("cat ~/.ssh/id_rsa", "names the home directory ('~')"),
        ("echo $HOME", "computes a path ('$' or '`')"),
        ("cat {/etc/passwd,x}", "names '/etc/passwd,x}'"),
    ],
)
def test_a_command_the_simulator_only_prints_loads_but_real_pi_refuses_its_paths(
    command: str, why: str
) -> None:
    """The simulated ``bash`` runs no command but ``rm`` (it prints the scripted result), so such
    a scenario plays there (an imported session's commands, say); real Pi would run it."""
    parse_scenario(_scenario({"name": "bash", "arguments": {"command": command}}))
    problem = real_pi_command_problem(command)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    "command",
    [
        "echo hi",
        "rm -f notes/a.txt",
        "head -c 20 /dev/zero | tr '\\0' x > out.txt",
        "ls -la && wc -l a.txt",
        "rm -f {{match:(\\S+)}}",
    ],
)
def test_real_pi_runs_a_command_of_those_programs_inside_the_project(command: str) -> None:
    assert real_pi_command_problem(command) is None


def test_the_real_pi_targets_model_server_sends_no_call_that_leads_outside_the_run(tmp_path: Path) -> None:
    """``served_call_problem``: the call as the model server would send it, ``{{match:...}}``
    replaced by what the run said; symbolic links are followed."""
    run = tmp_path / "run"
    project = run / "machine" / "project"
    project.mkdir(parents=True)
    (project / "out").symlink_to(tmp_path)
    inside = str(project / "dossier.md")
    assert served_call_problem("bash", {"command": f"rm -f {inside}"}, str(project), str(run)) is None
    assert served_call_problem("write", {"path": "notes/a.txt"}, str(project), str(run)) is None
    assert served_call_problem("write", {"path": str(tmp_path / "x")}, str(project), str(run)) == (
        f"the write tool call names {str(tmp_path / 'x')!r}, outside the run"
    )
    assert served_call_problem("read", {"path": "out/secret"}, str(project), str(run)) == (
        "the read tool call names 'out/secret', outside the run"
    )
    assert served_call_problem("edit", {"path": "~/x"}, str(project), str(run)) is not None
    assert served_call_problem("bash", {"command": "rm -f /etc/passwd"}, str(project), str(run)) == (
        "the bash tool call names '/etc/passwd', outside the run"
    )
    refused = served_call_problem("bash", {"command": f"python {inside}"}, str(project), str(run))
    assert refused is not None and "runs 'python'" in refused


def test_a_quoted_or_escaped_path_with_a_space_is_read_whole_as_bash_reads_it(tmp_path: Path) -> None:
    """``_absolute_paths`` reads the words bash makes (quote removal): a receiver's ``rm -f
    '<dossier>'`` under a run directory with a space names the dossier, inside the run. Read at
    every space, it named ``<tmp>/my`` and the real-Pi target refused the call."""
    run = tmp_path / "my runs" / "run"
    project = run / "machine" / "project"
    project.mkdir(parents=True)
    dossier = str(project / ".pi" / "handoff_s.md")
    assert served_call_problem("bash", {"command": f"rm -f '{dossier}'"}, str(project), str(run)) is None
    escaped = dossier.replace(" ", "\\ ")
    assert served_call_problem("bash", {"command": f"rm -f {escaped}"}, str(project), str(run)) is None
    # Unquoted, bash reads two words, and the first is outside the run.
    assert served_call_problem("bash", {"command": f"rm -f {dossier}"}, str(project), str(run)) == (
        f"the bash tool call names {str(tmp_path / 'my')!r}, outside the run"
    )


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("rm -f {run}/.\\./x", id="an escaped dot"),
        pytest.param("rm -f '{run}/.'./x", id="a quoted dot"),
        pytest.param('rm -f "{run}/."./x', id="a double-quoted dot"),
    ],
)
def test_a_parent_bash_reads_as_dot_dot_is_outside_the_run(tmp_path: Path, command: str) -> None:
    """``<run>/.\\./x`` is ``<run>/../x`` to bash. Read as written, the path named a directory
    ``.\\.`` inside the run, and the model server sent an ``rm`` of a file beside the run."""
    run = tmp_path / "run"
    project = run / "machine" / "project"
    project.mkdir(parents=True)
    command = command.format(run=run)
    assert served_call_problem("bash", {"command": command}, str(project), str(run)) == (
        f"the bash command {command!r} goes up with '..': a scripted command may name only paths "
        "relative to the project, below it"
    )


@pytest.mark.parametrize("command", ["cat .\\./x", "cat '.'./x", 'cat "."./x', "cat ./'..'/x"])
def test_a_relative_parent_bash_reads_as_dot_dot_is_refused_at_load(command: str) -> None:
    assert real_pi_command_problem(command) == (
        f"the bash command {command!r} goes up with '..': a scripted command may name only paths "
        "relative to the project, below it"
    )


def test_a_match_the_run_did_not_resolve_is_the_scenarios_own_text(tmp_path: Path) -> None:
    """A ``{{match:...}}`` no message of the run matched stays in the call as the scenario wrote
    it (``model_script._resolve_value``), and bash reads it as one quoted relative word: the
    simulated host runs the ``rm`` (nothing to remove). Its pattern's ``/`` after a ``)`` read
    as an absolute path, and the real-Pi target refused the call (differential exploration of
    the handoff cases, seed 0). A resolved path outside the run is still refused."""
    run = tmp_path / "run"
    project = run / "machine" / "project"
    project.mkdir(parents=True)
    template = r"{{match:(?im)(?:delete|remove|rm)\b[^\n]{0,160}?((?#root)/[^\s`\x27\x22<>()]+\.md)}}"
    assert served_call_problem("bash", {"command": f"rm -f '{template}'"}, str(project), str(run)) is None
    assert served_call_problem("bash", {"command": f"rm -f '{template}' /etc/x"}, str(project), str(run)) == (
        "the bash tool call names '/etc/x', outside the run"
    )
