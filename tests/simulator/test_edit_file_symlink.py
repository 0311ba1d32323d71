"""``edit_file`` with ``kind: symlink``: a scenario plants a symbolic link, and stays in its run.

Why the kind exists: pi-blitz-handoff's Finish must refuse a dossier path that is a symbolic
link (H34b: "nonempty-regular-file check"), and its managed directories may be "deliberate
directory symlinks" (H109; ``shared/seeds/pi-blitz-handoff-reference.md``, Managed paths). No
scenario could plant a link before, so a Finish that follows one and a load that replaces one
both passed the suite (``docs/pi-blitz-handoff.md``, the independent round).

Confinement (``docs/scenario-format.md``, "Confinement: nothing a scenario says leaves its
run"): a link's ``target`` is a scenario path, checked at load like ``path`` (absolute and
``..`` refused, naming the file and the field, exit status 2), and checked again when the link
is planted with every link on the way followed; a link an extension planted pointing out of the
run lets neither a new link nor a later edit through it leave the run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.operations import EditFileSpec
from pi_continuity_harness.scenario.workspace import HostPaths, apply_edit
from pi_continuity_harness.simulator.simulation import Simulation, simulate

from .helpers import tree_snapshot, victim_beside


def _null_extension(pi: ExtensionAPI) -> None:
    """Registers nothing."""


def _op(edit: dict[str, Any]) -> Any:
    return parse_scenario({"name": "x", "operations": [{"edit_file": edit}]}).operations[0]


@pytest.mark.parametrize(
    ("edit", "field", "reason"),
    [
        ({"path": "a", "kind": "symlink"}, "target", "kind symlink needs a target"),
        ({"path": "a", "kind": "symlink", "target": "b", "text": "x"}, "text", "takes a target, not file"),
        ({"path": "a", "kind": "symlink", "target": "b", "json": {"k": 1}}, "json", "takes a target"),
        ({"path": "a", "kind": "symlink", "target": "b", "merge_json": True}, "merge_json", "takes a target"),
        ({"path": "a", "kind": "file", "target": "b", "text": "x"}, "target", "is for kind symlink"),
        ({"path": "a", "kind": "absent", "target": "b"}, "target", "is for kind symlink, not kind absent"),
        ({"path": "a", "kind": "symlink", "target": "$PROJECT/a"}, "target", "a link to itself is a loop"),
        ({"path": "a", "kind": "symlink", "target": ""}, "target", "must not be empty"),
        ({"path": "a", "kind": "symlink", "target": "$HOME/x"}, "target", "unknown placeholder"),
        ({"path": "a", "kind": "symlink", "target": "b/./c"}, "target", "without '.'"),
    ],
)
def test_a_malformed_symlink_edit_is_refused_at_load_naming_the_field(
    edit: dict[str, Any], field: str, reason: str
) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario({"name": "bad", "operations": [{"edit_file": edit}]}, "bad.yaml")
    message = str(raised.value)
    assert message.startswith(f"bad.yaml: operations[0].edit_file.{field}: "), message
    assert reason in message, message
    assert "\n" not in message, message


#: Link targets that name something outside the run: absolute, ``..`` (through a placeholder,
#: a directory or at once), ``~`` and a backslash that would be ``..`` on another system.
HOSTILE_TARGETS = [
    "/etc/passwd",
    "/tmp",
    "..",
    "../victim",
    "$AGENT/../../victim",
    "$SESSIONS/../../victim/keep.txt",
    "$PROJECT/..",
    "a/../../victim",
    "~/victim",
    "a\\..\\..\\victim",
]


@pytest.mark.parametrize("target", HOSTILE_TARGETS)
def test_a_link_target_leaving_the_run_is_refused_at_load_naming_the_field(target: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(
            {
                "name": "hostile",
                "operations": [{"edit_file": {"path": "l", "kind": "symlink", "target": target}}],
            },
            "hostile.yaml",
        )
    assert str(raised.value).startswith("hostile.yaml: operations[0].edit_file.target: "), str(raised.value)


def test_a_link_target_leaving_the_run_is_refused_in_a_held_reply_and_in_an_injected_operation() -> None:
    """The operations a held reply runs (``during``) and those a fault injects are loaded by the
    same model, so their link targets are checked too, each under its own field."""
    link = {"edit_file": {"path": "l", "kind": "symlink", "target": "../../victim"}}
    cases = [
        (
            {"model": {"agent": [{"text": "held", "during": [link]}]}},
            "model.agent[0].during[0].edit_file.target",
        ),
        (
            {
                "faults": {
                    "inject": [{"after": {"kind": "entry", "name": "compaction"}, "operations": [link]}]
                }
            },
            "faults.inject[0].operations[0].edit_file.target",
        ),
    ]
    for data, field in cases:
        with pytest.raises(ScenarioError) as raised:
            parse_scenario({"name": "hostile", **data}, "hostile.yaml")
        assert str(raised.value).startswith(f"hostile.yaml: {field}: '../../victim': '..' is refused"), str(
            raised.value
        )


def test_simulate_exits_2_on_a_link_out_of_the_run_naming_the_file_and_field_and_makes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.yaml").write_text(
        "name: link\noperations:\n  - edit_file: {path: .pi/x.md, kind: symlink, target: /etc/passwd}\n",
        encoding="utf-8",
    )
    assert main(["simulate", "link.yaml", "--workdir", "run"]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness simulate: link.yaml: operations[0].edit_file.target: '/etc/passwd': absolute "
        "paths are refused; name it relative to the project or under $PROJECT/, $AGENT/ or $SESSIONS/\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml"]


def test_a_link_planted_pointing_outside_lets_no_new_link_and_no_later_edit_leave_the_run(
    tmp_path: Path,
) -> None:
    """An extension (here: the test) planted ``out -> <victim>`` in the project. A scenario link
    through it, a link to it, a link inside it and a file edit through a scenario link to it
    are each refused when applied (``... leads outside the run's directory``) and change
    nothing outside; a scenario link into the run that is later turned to point out does not
    let a write through it out either."""
    victim = victim_beside(tmp_path)
    before = tree_snapshot(victim)
    simulation = Simulation(parse_scenario({"name": "links", "extensions": []}), workdir=tmp_path / "run")
    simulation.start()
    project = Path(simulation.host.disk.project_dir)
    (project / "out").symlink_to(victim, target_is_directory=True)
    refused = [
        simulation.perform(_op(edit))
        for edit in (
            {"path": "to-keep", "kind": "symlink", "target": "out/keep.txt"},  # target through the link
            {"path": "to-out", "kind": "symlink", "target": "out"},  # target is the link
            {"path": "out/new-link", "kind": "symlink", "target": "notes.md"},  # the link's place
            {"path": "out/nested", "kind": "symlink", "target": "notes.md"},  # would replace a victim dir
        )
    ]
    # A link the scenario made to a directory of the run, then re-pointed out by the extension.
    made = simulation.perform(_op({"path": "shared", "kind": "directory"}))
    linked = simulation.perform(_op({"path": "via", "kind": "symlink", "target": "shared"}))
    (project / "shared").rmdir()
    (project / "shared").symlink_to(victim, target_is_directory=True)
    write = simulation.perform(_op({"path": "via/keep.txt", "text": "overwritten"}))
    mkdir = simulation.perform(_op({"path": "via/nested/deeper", "kind": "directory"}))
    simulation.finish()
    assert [r.ok for r in refused] == [False] * 4
    assert all("outside the run" in (r.error or "") for r in refused), [r.error for r in refused]
    assert made.ok and linked.ok
    assert not write.ok and "outside the run" in (write.error or "")
    assert not mkdir.ok and "outside the run" in (mkdir.error or "")
    assert not (project / "to-keep").is_symlink() and not (project / "to-out").is_symlink()
    assert tree_snapshot(victim) == before


def test_a_symlink_edit_plants_a_relative_link_that_later_edits_use_on_the_simulator(tmp_path: Path) -> None:
    """The link goes where ``path`` says, points to ``target`` relative to its own directory
    (the same bytes in any run directory, on either target), replaces a file or a directory
    that was there, may dangle until its target exists, and a later ``kind: file`` edit writes
    through it while ``kind: absent`` removes the link alone."""
    scenario = parse_scenario(
        {
            "name": "links",
            "files": {
                "notes.md": {"text": "notes\n"},
                ".pi/was-a-file.md": {"text": "x"},
                "was-a-dir/f": {"text": "y"},
            },
            "operations": [
                {"edit_file": {"path": ".pi/to-notes.md", "kind": "symlink", "target": "notes.md"}},
                {
                    "edit_file": {
                        "path": ".pi/was-a-file.md",
                        "kind": "symlink",
                        "target": "$PROJECT/notes.md",
                    }
                },
                {"edit_file": {"path": "was-a-dir", "kind": "symlink", "target": "$AGENT/store"}},
                {"edit_file": {"path": "$AGENT/store/made.md", "text": "made later\n"}},
                {
                    "edit_file": {
                        "path": "$AGENT/deep/er/recovery",
                        "kind": "symlink",
                        "target": "$SESSIONS/kept",
                    }
                },
                {"edit_file": {"path": ".pi/to-notes.md", "text": "through the link\n"}},
                {"edit_file": {"path": ".pi/was-a-file.md", "kind": "absent"}},
            ],
        }
    )
    texts = []
    for run in ("run", "a-much-longer-run-directory-name"):
        result = simulate(scenario, workdir=tmp_path / run, implementation=_null_extension)
        assert [o.ok for o in result.operations] == [True] * 7, [o.error for o in result.operations]
        disk = result.host.disk
        project, agent = Path(disk.project_dir), Path(disk.agent_dir)
        assert os.readlink(project / ".pi" / "to-notes.md") == "../notes.md"
        assert (project / "notes.md").read_text(encoding="utf-8") == "through the link\n"
        assert not os.path.lexists(project / ".pi" / "was-a-file.md")
        assert os.readlink(project / "was-a-dir") == "../agent/store"
        assert (project / "was-a-dir" / "made.md").read_text(encoding="utf-8") == "made later\n"
        assert os.readlink(agent / "deep" / "er" / "recovery") == "../../../sessions/kept"
        assert (agent / "deep" / "er" / "recovery").resolve() == (Path(disk.session_dir) / "kept").resolve()
        texts.append(result.trace_text())
    assert texts[0] == texts[1]
    assert '"fileKind":"symlink"' in texts[0] and '"target":"notes.md"' in texts[0]


def test_a_link_is_written_relative_to_the_real_directory_it_lands_in(tmp_path: Path) -> None:
    """A link placed below a directory that is itself a link (inside the run) still resolves to
    the target the scenario named: the relative text is computed between real directories."""
    paths = HostPaths.under(str(tmp_path))
    for directory in (paths.agent_dir, paths.project_dir, paths.session_dir):
        os.makedirs(directory)
    Path(paths.project_dir, "notes.md").write_text("n", encoding="utf-8")
    os.makedirs(os.path.join(paths.agent_dir, "real", "sub"))
    os.symlink(os.path.join("..", "agent", "real", "sub"), os.path.join(paths.project_dir, "alias"))
    apply_edit(
        paths, EditFileSpec.model_validate({"path": "alias/l", "kind": "symlink", "target": "notes.md"})
    )
    link = Path(paths.agent_dir, "real", "sub", "l")
    assert os.readlink(link) == "../../../project/notes.md"
    assert link.read_text(encoding="utf-8") == "n"
