"""Starting a simulated host does less file work than before, with the same outcome (issue 16).

Each test pins down what the cheaper code must still do exactly as the code it replaced did:
the laid-out files ``os.walk`` would list, ``Path.exists``'s rule for a trust-requiring
resource, the trust store's decision for a symbolically linked project, and ``os.makedirs``'s
errors for a scenario file whose directory is a file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.workspace import HostPaths, prepare_files, write_file
from pi_continuity_harness.simulator.settings import has_trust_requiring_resources, resolve_project_trust

from .helpers import base


def _walked(top: str) -> list[str]:
    return [os.path.join(root, name) for root, _dirs, files in os.walk(top) for name in files]


def test_the_layout_names_every_file_of_the_fresh_machine(tmp_path: Path) -> None:
    """``prepare_files`` returns what it wrote, and in a fresh machine that is every file
    ``os.walk`` finds there (``SimHost.stamp_laid_out_files`` stamps that list instead of
    walking): settings, the trust store, nested text, bytes and JSON files; directories alone
    are no files."""
    paths = HostPaths.under(str(tmp_path / "machine"))
    scenario = parse_scenario(
        base(
            saved_trust=True,
            files={
                "deep/er/t.txt": {"text": "t\n"},
                "$AGENT/x/y.json": {"json": [1]},
                "$SESSIONS/raw.bin": {"base64": "AP8="},
                "empty-dir": {"directory": True},
                "$PROJECT/top.md": {"text": ""},
            },
        )
    )
    written = prepare_files(paths, scenario)
    assert sorted(written) == sorted(_walked(paths.workdir))
    assert len(written) == 7


def test_a_link_to_nothing_is_no_trust_requiring_resource(tmp_path: Path) -> None:
    """``Path.exists``'s rule, kept by the string paths: a link to nothing is not there."""
    config = tmp_path / CONFIG_DIR_NAME
    config.mkdir()
    (config / "settings.json").symlink_to(tmp_path / "nowhere.json")
    assert has_trust_requiring_resources(str(tmp_path)) is False
    (tmp_path / "skills-target").mkdir()
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "skills").symlink_to(tmp_path / "skills-target", target_is_directory=True)
    assert has_trust_requiring_resources(str(tmp_path)) is True


def test_a_saved_decision_applies_to_a_project_reached_through_a_link(tmp_path: Path) -> None:
    """The project path is resolved only once there is a saved decision, and then as before:
    a decision saved for the real directory applies to the linked one (and a longer saved key
    inside it wins)."""
    real = tmp_path / "real"
    (real / CONFIG_DIR_NAME).mkdir(parents=True)
    (real / CONFIG_DIR_NAME / "settings.json").write_text("{}", encoding="utf-8")
    linked = tmp_path / "linked"
    linked.symlink_to(real, target_is_directory=True)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "trust.json").write_text(f'{{"{tmp_path}": true, "{real}": false}}', encoding="utf-8")
    decision = resolve_project_trust(str(linked), str(agent), approve=None)
    assert (decision.trusted, decision.reason) == (False, "trust.json decision")
    (agent / "trust.json").write_text('{"/elsewhere": false}', encoding="utf-8")
    decision = resolve_project_trust(str(linked), str(agent), approve=None)
    assert (decision.trusted, decision.reason) == (
        False,
        "defaultProjectTrust ask without an interactive prompt",
    )


def test_a_scenario_file_below_a_file_is_refused_as_before(tmp_path: Path) -> None:
    """The layout writes first and makes the directory only when the write finds none; a file
    where the directory should be (on disk already: the scenario itself cannot say so) still
    ends in ``makedirs``'s ``FileExistsError`` and is left as it was."""
    paths = HostPaths.under(str(tmp_path / "machine"))
    Path(paths.project_dir).mkdir(parents=True)
    (Path(paths.project_dir) / "a").write_text("file\n", encoding="utf-8")
    scenario = parse_scenario(base(files={"a/b.txt": {"text": "below\n"}}))
    with pytest.raises(FileExistsError):
        prepare_files(paths, scenario)
    assert (Path(paths.project_dir) / "a").read_text(encoding="utf-8") == "file\n"


def test_the_layout_makes_missing_directories_and_writes_the_same_bytes(tmp_path: Path) -> None:
    """Nested scenario files, bytes and JSON, and the project settings in a new ``.pi``."""
    paths = HostPaths.under(str(tmp_path / "machine"))
    scenario = parse_scenario(
        base(
            files={
                "deep/er/t.txt": {"text": "caf\u00e9\n"},
                "$AGENT/x/y.json": {"json": {"k": [1, None]}},
                "$SESSIONS/raw.bin": {"base64": "AP8="},
            }
        )
    )
    prepare_files(paths, scenario)
    project = Path(paths.project_dir)
    assert (project / "deep" / "er" / "t.txt").read_bytes() == "caf\u00e9\n".encode()
    assert (Path(paths.agent_dir) / "x" / "y.json").read_bytes() == b'{\n  "k": [\n    1,\n    null\n  ]\n}\n'
    assert (Path(paths.session_dir) / "raw.bin").read_bytes() == b"\x00\xff"
    assert (project / CONFIG_DIR_NAME / "settings.json").read_text(encoding="utf-8").startswith("{\n  ")


def test_each_observation_names_the_current_session_file_and_the_hosts_directories(tmp_path: Path) -> None:
    """``SimTarget.observe`` keeps its ``Path`` objects (the directories once per simulation, the
    last session file): a new session's file is still the one observed, and a second start
    of the same target observes its own simulation."""
    from pi_continuity_harness.targets.sim import SimTarget  # noqa: PLC0415

    from .helpers import noop  # noqa: PLC0415

    scenario = parse_scenario(
        base(
            operations=[{"prompt": "one"}, "new_session", {"prompt": "two"}],
            model={"agent": [{"text": "a"}, {"text": "b"}]},
        )
    )
    target = SimTarget(noop, tmp_path / "run")
    seen = []
    for _ in range(2):
        target.start(scenario)
        files = []
        for op in scenario.operations:
            target.perform(op)
            observation = target.observe()
            host = target.simulation.host
            assert observation.project_dir == Path(host.paths.project_dir)
            assert observation.agent_dir == Path(host.paths.agent_dir)
            assert observation.session_dir == Path(host.paths.session_dir)
            assert observation.machine_dir == Path(host.disk.workdir)
            assert host.runtime is not None
            assert observation.session_file == Path(host.runtime.session_manager.get_session_file() or "-")
            files.append(observation.session_file)
        assert files[0] is not None and files[1] != files[0] and files[2] == files[1]
        seen.append(target.simulation)
        target.close()
    assert seen[0] is not seen[1]


def test_an_observed_payload_restores_paths_in_every_kind_of_value() -> None:
    """``sim_trace._payload`` keeps numbers, booleans and None as they are and replaces
    ``$WORK`` in strings right there; everything else still goes through ``restore_paths``
    (nested objects and arrays, a ``str`` subclass), as when every value did."""
    from pi_continuity_harness.targets.sim_trace import _payload, restore_paths  # noqa: PLC0415

    class Text(str):
        pass

    record = {
        "seq": 3,
        "t": 10,
        "kind": "fs",
        "name": "write",
        "path": "$WORK/project/a",
        "n": 2,
        "x": 1.5,
        "ok": True,
        "none": None,
        "nested": {"p": ["$WORK/q", {"r": "$WORK"}], "k": 1},
        "sub": Text("$WORK/s"),
        "items": ("$WORK/t",),
    }
    payload = _payload(record, {}, "/root")
    expected = {
        k: restore_paths(v, "/root") for k, v in record.items() if k not in {"seq", "t", "kind", "name"}
    }
    assert payload == expected
    assert payload["path"] == "/root/project/a" and payload["nested"] == {
        "p": ["/root/q", {"r": "/root"}],
        "k": 1,
    }
    assert payload["sub"] == "/root/s" and payload["items"] == ("$WORK/t",)
    assert [type(payload[k]) for k in ("n", "x", "ok", "none")] == [int, float, bool, type(None)]


def test_the_layouts_writes_are_the_files_open_writes(tmp_path: Path) -> None:
    """The layout writes through ``os.open`` (``workspace.write_file``, text and bytes):
    the same bytes and permissions as ``Path.write_text``/``write_bytes``, a longer file
    truncated, the same errors, and text that cannot be encoded leaves the same empty file."""
    from pi_continuity_harness.scenario import workspace  # noqa: PLC0415

    text = "caf\u00e9\n\u2603 line\r\n{}\n"
    (tmp_path / "old.txt").write_text(text, encoding="utf-8")
    workspace.write_file(str(tmp_path / "new.txt"), text)
    assert (tmp_path / "new.txt").read_bytes() == (tmp_path / "old.txt").read_bytes()
    assert (tmp_path / "new.txt").stat().st_mode == (tmp_path / "old.txt").stat().st_mode
    workspace.write_file(str(tmp_path / "new.txt"), b"\x00\xff")
    assert (tmp_path / "new.txt").read_bytes() == b"\x00\xff"
    for data in ("x", b"x"):
        for where, error in ((tmp_path, IsADirectoryError), (tmp_path / "no" / "f", FileNotFoundError)):
            with pytest.raises(error) as raised:
                workspace.write_file(str(where), data)
            with pytest.raises(error) as expected:
                Path(where).write_bytes(b"x")
            assert str(raised.value) == str(expected.value)
    with pytest.raises(UnicodeEncodeError):
        workspace.write_file(str(tmp_path / "bad.txt"), "\ud800")
    with pytest.raises(UnicodeEncodeError):
        (tmp_path / "bad-old.txt").write_text("\ud800", encoding="utf-8")
    assert (tmp_path / "bad.txt").read_bytes() == (tmp_path / "bad-old.txt").read_bytes() == b""


def test_a_file_opened_by_another_spelling_is_the_same_file_and_fails_as_its_own(tmp_path: Path) -> None:
    """``write_file(..., on_disk=...)`` writes through the other spelling of the path (here a
    linked directory) when it opens, and raises what the path itself raises when it does not."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    path, spelt = str(tmp_path / "link" / "a.txt"), str(real / "a.txt")
    write_file(path, "one\n", "x", on_disk=spelt)
    write_file(path, "two\n", "a", on_disk=spelt)
    assert (real / "a.txt").read_text(encoding="utf-8") == "one\ntwo\n"
    with pytest.raises(FileExistsError) as raised:
        write_file(path, "three\n", "x", on_disk=spelt)
    assert raised.value.filename == path
    missing = str(tmp_path / "link" / "none" / "b.txt")
    with pytest.raises(FileNotFoundError) as absent:
        write_file(missing, "x", "w", on_disk=str(real / "none" / "b.txt"))
    assert absent.value.filename == missing


def test_a_layout_written_by_another_spelling_is_the_same_and_names_the_paths(tmp_path: Path) -> None:
    """``prepare_files(..., on_disk=...)`` (the simulator's disk spelling of its virtual root)
    lays out the same files with the same bytes as without it, and returns the paths it was
    given, not their other spelling."""
    scenario = parse_scenario(
        base(
            saved_trust=True,
            files={
                "deep/er/t.txt": {"text": "t\n"},
                "$AGENT/x/y.json": {"json": [1]},
                "d": {"directory": True},
            },
        )
    )
    plain = HostPaths.under(str(tmp_path / "plain"))
    expected = prepare_files(plain, scenario, canonical=lambda p: "/root")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = HostPaths.under(str(tmp_path / "link"))
    spelt: list[str] = []

    def on_disk(path: str) -> str:
        spelt.append(path)
        return path.replace(str(tmp_path / "link"), str(tmp_path / "real"), 1)

    written = prepare_files(linked, scenario, canonical=lambda p: "/root", on_disk=on_disk)
    assert written == [p.replace(plain.workdir, linked.workdir, 1) for p in expected]
    assert spelt, "the other spelling was used"

    def files(top: Path) -> dict[str, bytes]:
        return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}

    assert files(tmp_path / "real") == files(tmp_path / "plain")


def test_host_paths_of_a_relative_directory_follow_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HostPaths.under`` keeps what it made for an absolute path (a function of the string,
    ``workspace._host_paths_under``), never for a relative one, which names another directory
    from another current directory."""
    absolute = str(tmp_path / "machine")
    assert HostPaths.under(absolute) == HostPaths.under(absolute)
    assert HostPaths.under(absolute).agent_dir == os.path.join(absolute, "agent")
    for here in ("one", "two"):
        (tmp_path / here).mkdir()
        monkeypatch.chdir(tmp_path / here)
        paths = HostPaths.under("machine")
        assert paths.workdir == str(tmp_path / here / "machine")
        assert paths.session_dir == str(tmp_path / here / "machine" / "sessions")


def test_laid_out_json_is_json_dumps_text_for_every_value_in_turn() -> None:
    """``workspace._json_text`` keeps texts by the value's compact JSON: each value, in turn,
    still gets ``json.dumps(value, indent=2, ensure_ascii=False)``, whether an equal-looking one
    came before (1 and 1.0 and True, key order, a key 1 and "1") or not, and a value the C
    encoder refuses raises json's error."""
    import json  # noqa: PLC0415

    from pi_continuity_harness.scenario.workspace import _json_text  # noqa: PLC0415

    values: list[object] = [
        {"a": 1},
        {"a": 1.0},
        {"a": True},
        {"a": 1},
        {"b": 2, "a": 1},
        {"a": 1, "b": 2},
        {1: "x"},
        {"1": "x"},
        {"é": ["ü", {"nested": [None, -0.0, 1e300]}]},
        {"é": ["ü", {"nested": [None, 0.0, 1e300]}]},
        [],
        {},
    ]
    for value in values * 2:
        assert _json_text(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n", value
    with pytest.raises(TypeError, match="not JSON serializable"):
        _json_text({"when": object()})
